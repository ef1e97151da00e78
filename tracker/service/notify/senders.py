"""The transports that send a message to a channel: webhooks over HTTP, e-mail through an SMTP
server, and `Senders`, which picks one by the channel's kind. Tests swap them for fakes."""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class Sender(Protocol):
    """Sends one message to one channel; raises `SendFailed` when it was not accepted."""

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str: ...


class SendFailed(Exception):
    """A channel did not accept a message (its status, or the error's first line)."""


# Which addresses a webhook may be posted to (`tracker serve --webhook-hosts`): "public" ones
# only; also "private" networks and this machine (a group's bot on its own network), the
# default; or "any", link-local addresses too (where clouds answer with their machines'
# credentials). A local command posts where its own user asks: "any" until a server sets it.
WEBHOOK_HOSTS = ("public", "private", "any")
webhook_hosts = "any"


# What http.client passes for "no timeout given" (the socket module's own default).
_NO_TIMEOUT: Any = getattr(socket, "_GLOBAL_DEFAULT_TIMEOUT", None)


class AddressRefused(OSError):
    """A webhook's host is at an address the server does not post to (`webhook_hosts`)."""


def address_refused(address: str, allowed: str) -> str | None:
    """Why a webhook may not be posted to this IP address where `allowed` (see WEBHOOK_HOSTS)
    holds, or None when it may."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if allowed == "any":
        return None
    if ip.is_link_local:
        return "link-local"
    if ip.is_loopback:  # before "reserved", which ::1 is too
        return None if allowed == "private" else "this machine's"
    if ip.is_unspecified or ip.is_multicast or ip.is_reserved:
        return "not a single host's"
    if allowed == "private" or ip.is_global:
        return None
    return "a private network's"


def _checked_connection(allowed: str) -> Callable[..., socket.socket]:
    """`socket.create_connection` connecting only to addresses `allowed` takes: every address
    the host resolves to is checked, and the connection made to those checked (not to what a
    second lookup might answer)."""

    def create(address: tuple[str, int], timeout: Any = _NO_TIMEOUT, source: Any = None) -> socket.socket:
        host, port = address
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        for *_, sockaddr in found:
            why = address_refused(str(sockaddr[0]), allowed)
            if why is not None:
                wider = "private" if allowed == "public" and why != "link-local" and "host" not in why else "any"
                raise AddressRefused(
                    f"{host} is at {sockaddr[0]}, {why} address, where this server posts no webhook "
                    f"(tracker serve --webhook-hosts {wider} would)"
                )
        error: OSError = OSError(f"{host} has no address")
        for family, kind, proto, _name, sockaddr in found:
            sock = socket.socket(family, kind, proto)
            try:
                if timeout is not _NO_TIMEOUT:
                    sock.settimeout(timeout)
                if source:
                    sock.bind(source)
                sock.connect(sockaddr)
                return sock
            except OSError as e:
                sock.close()
                error = e
        raise error

    return create


class HttpSender:
    """Posts webhooks with the standard library, to the addresses `allowed` takes (default:
    `webhook_hosts` when the message is sent), never following a redirect (which would post, or
    get, somewhere the channel does not name)."""

    def __init__(self, timeout: float = 10.0, allowed: str | None = None) -> None:
        self.timeout = timeout
        self.allowed = allowed

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str:
        # Imported when a message is sent: recording an action never needs them.
        import http.client
        import urllib.error
        import urllib.request

        connect = _checked_connection(self.allowed or webhook_hosts)

        def connection(kind: type[http.client.HTTPConnection]) -> Callable[..., http.client.HTTPConnection]:
            def make(host: str, **kwargs: Any) -> http.client.HTTPConnection:
                made = kind(host, **kwargs)
                made._create_connection = connect  # type: ignore[attr-defined]
                return made

            return make

        class Plain(urllib.request.HTTPHandler):
            def http_open(self, req: Any) -> Any:
                return self.do_open(connection(http.client.HTTPConnection), req)

        class Tls(urllib.request.HTTPSHandler):
            def https_open(self, req: Any) -> Any:
                return self.do_open(connection(http.client.HTTPSConnection), req, context=self._context)  # type: ignore[attr-defined]

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any) -> None:
                return None

        opener = urllib.request.build_opener(Plain, Tls, NoRedirect)
        url, headers = _without_userinfo(channel["target"])
        request = urllib.request.Request(
            url,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "User-Agent": "twtea-naval-tracker", **headers},
            method="POST",
        )
        try:
            with opener.open(request, timeout=self.timeout) as response:
                return f"HTTP {response.status}"
        except urllib.error.HTTPError as e:
            moved = " (a redirect, not followed)" if 300 <= e.code < 400 else ""
            raise SendFailed(f"HTTP {e.code}{moved}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, AddressRefused):
                raise SendFailed(f"refused: {reason}") from None
            raise SendFailed(f"unreachable: {type(reason).__name__}") from None


def _without_userinfo(url: str) -> tuple[str, dict[str, str]]:
    """A webhook URL that names a user (`https://bot:secret@host/hook`, a group's own receiver
    behind basic authentication) as the URL without them and the Authorization header: urllib
    would take `bot:secret@host` for the host name and fail to look it up."""
    import base64
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    credentials = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return parts._replace(netloc=host).geturl(), {"Authorization": f"Basic {credentials}"}


@dataclass(frozen=True)
class SmtpSettings:
    """An SMTP server to send e-mail through (`tracker serve --smtp-host ...`)."""

    host: str
    port: int
    sender: str
    starttls: bool = False
    user: str | None = None
    password: str | None = None
    timeout: float = 30.0


class SmtpSender:
    """Sends e-mail channels' messages through an SMTP server, with the standard library."""

    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str:
        import smtplib
        from email.message import EmailMessage
        from email.utils import formatdate

        s = self.settings
        message = EmailMessage()
        message["Subject"] = body["subject"]
        message["From"] = s.sender
        message["To"] = ascii_domain(channel["target"])
        # Neither is added by smtplib, and a message without them breaks RFC 5322 (Date is
        # required): some mail systems refuse it (Gmail: "missing a valid Message-ID header").
        message["Date"] = formatdate(usegmt=True)
        message["Message-ID"] = message_id(body.get("key"), s.sender)
        message.set_content(body["text"])
        message.add_alternative(body["html"], subtype="html")
        if body.get("attachment"):
            filename, data = body["attachment"]
            message.add_attachment(data, maintype="application", subtype="jsonl", filename=filename)
        try:
            with smtplib.SMTP(s.host, s.port, timeout=s.timeout) as smtp:
                if s.starttls:
                    smtp.starttls()
                if s.user:
                    smtp.login(s.user, s.password or "")
                smtp.send_message(message)
        except smtplib.SMTPResponseException as e:
            raise SendFailed(f"SMTP {e.smtp_code}") from None
        except (smtplib.SMTPException, OSError) as e:
            raise SendFailed(f"SMTP: {type(e).__name__}") from None
        return "SMTP 250"


def message_id(key: str | None, sender: str) -> str:
    """A Message-ID at the sender's domain: `<KEY@domain>` for a message named by `key` (the
    same at every attempt, see `messages.message_key`), else a fresh one."""
    from email.utils import make_msgid, parseaddr

    domain = ascii_domain(parseaddr(sender)[1]).rpartition("@")[2]
    if not (domain.isascii() and domain.replace(".", "").replace("-", "").isalnum()):
        domain = "localhost"  # not a plain domain: not to be copied into a header
    return f"<{key}@{domain}>" if key else make_msgid(domain=domain)


def ascii_domain(address: str) -> str:
    """An address with its domain as the mail system carries it (IDNA, `münchen.example` as
    `xn--mnchen-3ya.example`): a server without SMTPUTF8 refuses any other character, every
    attempt. A name that is not ASCII still needs a server that takes it."""
    name, at, domain = address.rpartition("@")
    if not at or domain.isascii():
        return address
    try:
        return f"{name}@{domain.encode('idna').decode('ascii')}"
    except UnicodeError:
        return address  # not a domain IDNA writes: sent as typed, and the server answers


class Senders:
    """Each channel's message to the sender of its kind; e-mail only with an SMTP server."""

    def __init__(self, webhook: Sender | None = None, email: Sender | None = None) -> None:
        self.webhook = webhook or HttpSender()
        self.email = email

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str:
        if channel["kind"] == "email":
            if self.email is None:
                raise SendFailed("no SMTP server: tracker serve --smtp-host")
            return self.email.send(channel, body)
        return self.webhook.send(channel, body)


# The longest address an SMTP server takes (RFC 5321: a path of 256 with its angle brackets).
ADDRESS_MAX = 254


def is_address(target: str) -> bool:
    """One e-mail address: a name and a domain around one @, nothing that would make it several
    (a comma, angle brackets) or break a mail header (spaces, line breaks, control characters)."""
    name, at, domain = target.partition("@")
    if not (name and at and domain) or "@" in domain:
        return False
    if len(target) > ADDRESS_MAX or len(name) > 64:
        # Longer than SMTP carries (RFC 5321): every server refuses it, attempt after attempt.
        return False
    return target.isprintable() and not any(c in target for c in " <>,;")


def is_http(target: str) -> bool:
    """Whether `target` begins with the http:// or https:// scheme, in any case: a scheme is
    case-insensitive (RFC 3986 3.1), so `HTTPS://host/hook` is a webhook like any other."""
    return target[:8].lower().startswith(("http://", "https://"))


def normal_url(target: str) -> str:
    """An http(s) URL with its scheme in lower case (the canonical form, RFC 3986 3.1), as it
    is stored and shown; anything else as given."""
    if not is_http(target):
        return target
    scheme, sep, rest = target.partition("://")
    return f"{scheme.lower()}{sep}{rest}"


def url_problem(target: str) -> str | None:
    """Why `target` is no http(s) URL anyone could post to or follow (a webhook checked when it
    is added, a server's public URL at start): another scheme, no host, a port out of range,
    spaces or control characters; None when it is one."""
    from urllib.parse import urlsplit

    if not is_http(target):
        return "has another scheme"
    if not target.isprintable() or any(c.isspace() for c in target):
        return "holds a space or a control character"
    try:
        parts = urlsplit(target)
        parts.port  # noqa: B018 - read for its check: a port beyond 65535 raises ValueError
    except ValueError as e:
        return f"cannot be read ({e})"
    if not parts.hostname:
        return "names no host"
    if parts.port == 0:
        return "names port 0, where nothing answers"
    return None
