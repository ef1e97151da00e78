"""`tracker --server URL ...`: send the command line to a league server and print what it
answers, with its exit status. The token comes from TRACKER_TOKEN or the config file
(`config.toml` in the user's config folder, `~/.config/twtea-naval-tracker/` on Linux, or
TRACKER_CONFIG): `token = "..."` at the top, or per server under
`[servers."http://host:8000"]`. Also the check that every argument is UTF-8
text, which the server and the local command line make too.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

from domain.errors import InputError, TrackerError

TIMEOUT = 300


class ServerError(TrackerError):
    """The server could not be reached or answered something that is not the tracker's API."""


def config_path() -> Path:
    """The config file: TRACKER_CONFIG, or config.toml in the user's config folder."""
    from tracker.cli.places import config_file

    return config_file()


def read_config(path: Path) -> dict[str, Any]:
    import tomllib

    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a config file (TRACKER_CONFIG names the file)")
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not a valid TOML file ({e})") from None


def token_for(server: str) -> str | None:
    """TRACKER_TOKEN, else the config file's token for this server, else its top-level one."""
    token = os.environ.get("TRACKER_TOKEN")
    if token:
        return _checked_token(token.strip(), "TRACKER_TOKEN")
    path = config_path()
    config = read_config(path)
    servers = config.get("servers", {})
    entry = servers.get(server.rstrip("/"), {}) if isinstance(servers, dict) else {}
    value = entry.get("token") if isinstance(entry, dict) else None
    value = value if value is not None else config.get("token")
    if value is not None and not isinstance(value, str):
        raise InputError(f"{path}: token must be a string")
    return None if value is None else _checked_token(value, f"{path}: token")


def _checked_token(token: str, source: str) -> str:
    """A token goes in an HTTP header: printable ASCII (a token `players add` printed is);
    anything else is a paste gone wrong, named by where it came from (exit 2)."""
    if not (token.isascii() and token.isprintable()):
        # Not echoed: it may be most of a real token.
        raise InputError(
            f"{source} is not a token: it holds characters other than printable ASCII (a token is trk_...)"
        )
    return token


def check_utf8_args(args: list[str], label: str | None = None) -> None:
    """InputError (bad usage, exit 2) naming the first argument that is not UTF-8 text (as
    `label`, or by its position): Python hands such bytes on as lone surrogates ("\\udcff"),
    which no database, file or answer can hold."""
    for number, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"{label or f'argument {number}'} is not UTF-8 text: '{shown_bytes(arg)}' "
                "(set the terminal, or the file it came from, to UTF-8)"
            ) from None


def shown_bytes(arg: str) -> str:
    """An argument as the bytes that were typed, those that are not UTF-8 as \\xNN."""
    try:
        raw = arg.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # A surrogate no byte makes (sent as JSON "\\ud800"): shown as such.
        return arg.encode("ascii", "backslashreplace").decode("ascii")[:80]
    return raw.decode("utf-8", "backslashreplace")[:80]


def check_server_url(server: str) -> str:
    """The server's URL as requests are made to it, or bad usage naming what is wrong with it:
    not http(s), no host, or a port that is not one (said here, not "connection refused")."""
    from urllib.parse import urlsplit

    if not server.startswith(("http://", "https://")) or len(server) > 2000:
        raise InputError(f"--server needs an http:// or https:// URL, got {server[:100]!r}")
    from tracker.cli.suggest import shown_url

    shown = repr(shown_url(server)[:100])
    bad_port = InputError(f"--server {shown}: the port must be a number from 1 to 65535")
    try:
        parts = urlsplit(server)
        host, port = parts.hostname, parts.port
    except ValueError as e:
        # urllib says "Port out of range" or "Port could not be cast": the port, as above.
        raise (bad_port if "port" in str(e).lower() else InputError(f"--server {shown} is not a URL ({e})")) from None
    if not host:
        raise InputError(f"--server {shown} names no host")
    if port is not None and not 1 <= port <= 65535:
        raise bad_port
    return server.rstrip("/")


def terminal() -> dict[str, Any]:
    """This terminal as the local command's rich Console sees it (width, colours, NO_COLOR,
    FORCE_COLOR, whether stdout is a terminal), for the server to render the output as the
    local command would."""
    from rich.console import Console

    out = Console()
    return {
        "columns": max(20, min(out.width, 1000)),
        "color_system": out.color_system,
        "no_color": out.no_color,
        "tty": sys.stdout.isatty(),
    }


def run_remote(server: str, campaign: str | None, args: list[str]) -> int:
    """Run `args` on the server; print its output; return its exit status."""
    # Imported here: the main group checks its arguments with this module on every command.
    import json
    import urllib.request

    base = check_server_url(server)
    if not args:
        raise InputError("give a command to run on the server, e.g. tracker --server URL state")
    check_utf8_args(args)
    check_utf8_args([campaign] if campaign is not None else [], "--campaign")
    body = {"args": args, "campaign": campaign, **terminal()}
    # One key per command: if the answer is lost on the way back, the retry with the same key
    # is answered what the server answered first, and the action is not recorded twice.
    headers = {"Content-Type": "application/json", "Idempotency-Key": str(uuid.uuid4())}
    token = token_for(base)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        base + "/api/command", data=json.dumps(body).encode(), method="POST", headers=headers
    )
    status, text = send(request, base)
    try:
        answer = json.loads(text)
    except ValueError:
        raise ServerError(f"the server at {base} did not answer as a tracker server") from None
    if not isinstance(answer, dict):
        raise ServerError(f"the server at {base} did not answer as a tracker server")
    if "exit" not in answer:
        # Refused before any command ran: a bad request is bad usage (exit 2), as locally; a
        # bad token, a body too large or too many failed tokens are refusals (exit 1).
        error = str(answer.get("error", "refused by the server"))
        raise InputError(error) if status in (400, 404) else TrackerError(error)
    from tracker.cli.suggest import from_server

    stderr = str(answer.get("stderr") or "")
    if status == 404 and not token and str(answer.get("error", "")).startswith("no such campaign"):
        # The server says the same of a campaign that exists but is private (PL2): that the
        # request carried no token is the client's to tell, and tells nothing of the server's.
        stderr = stderr.rstrip("\n") + (
            " (no token was sent: set TRACKER_TOKEN to the token `tracker players add` gave you,"
            f' or write it as token = "trk_..." in {config_path()})\n'
        )
    sys.stdout.write(from_server(str(answer.get("stdout") or "")))
    sys.stderr.write(from_server(stderr, err=True))
    sys.stdout.flush()
    return int(answer["exit"])


# How long to wait before the one retry of a command whose connection failed.
RETRY_SECONDS = 1.0


def send(request: Any, base: str, reading: bool = False) -> tuple[int, bytes]:
    """POST `request`: the status and body of the answer. A connection that fails (refused,
    reset, closed before the answer) is tried once more with the same request, idempotency key
    included; ServerError when that fails too, saying, unless the request is only `reading`,
    whether the command had been sent (the server may then have recorded it). Something that
    answers, but not in HTTP, is no tracker server."""
    import http.client
    import time
    import urllib.error
    import urllib.request

    from tracker.cli.suggest import shown_url

    sent = False
    for attempt in (1, 2):
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            if isinstance(e, http.client.BadStatusLine) and not isinstance(e, http.client.RemoteDisconnected):
                # A mail server's or another service's port: its greeting is no answer to quote.
                raise ServerError(f"the server at {shown_url(base)} did not answer as a tracker server") from None
            reason = getattr(e, "reason", None) or e
            # urllib wraps in URLError what fails before the request is sent (connecting): any
            # other failure came after, and the server may have run the command.
            sent = sent or not (reading or isinstance(e, urllib.error.URLError))
            # A timeout is not retried: the server may still be working on the first request.
            if attempt == 2 or isinstance(reason, TimeoutError):
                lost = (
                    "; the command was sent before the connection was lost, so it may have been "
                    "recorded: `tracker log --tail 5` says, once the server answers"
                    if sent
                    else ""
                )
                raise ServerError(f"cannot reach the server at {shown_url(base)}: {reason}{lost}") from None
            time.sleep(RETRY_SECONDS)
    raise AssertionError("unreachable")  # pragma: no cover
