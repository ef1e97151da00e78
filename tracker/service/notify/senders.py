"""The transports that send a message to a channel: webhooks over HTTP, e-mail through an SMTP
server, and `Senders`, which picks one by the channel's kind. Tests swap them for fakes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class Sender(Protocol):
    """Sends one message to one channel; raises `SendFailed` when it was not accepted."""

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str: ...


class SendFailed(Exception):
    """A channel did not accept a message (its status, or the error's first line)."""


class HttpSender:
    """Posts webhooks with the standard library."""

    def __init__(self, timeout: float = 10.0) -> None:
        self.timeout = timeout

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str:
        # Imported when a message is sent: recording an action never needs them.
        import urllib.error
        import urllib.request

        request = urllib.request.Request(
            channel["target"],
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "User-Agent": "twtea-naval-tracker"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (the channel's URL)
                return f"HTTP {response.status}"
        except urllib.error.HTTPError as e:
            raise SendFailed(f"HTTP {e.code}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise SendFailed(f"unreachable: {type(reason).__name__}") from None


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

        s = self.settings
        message = EmailMessage()
        message["Subject"] = body["subject"]
        message["From"] = s.sender
        message["To"] = channel["target"]
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
