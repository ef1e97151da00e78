"""`tracker --server URL ...`: send the command line to a league server and print what it
answers, with its exit status. The token comes from TRACKER_TOKEN or the config file
(`~/.config/tracker/config.toml`, or TRACKER_CONFIG): `token = "..."` at the top, or per
server under `[servers."http://host:8000"]`.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from domain.errors import InputError, TrackerError

TIMEOUT = 300


class ServerError(TrackerError):
    """The server could not be reached or answered something that is not the tracker's API."""


def config_path() -> Path:
    given = os.environ.get("TRACKER_CONFIG")
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tracker" / "config.toml"


def read_config(path: Path) -> dict[str, Any]:
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
        return token.strip()
    path = config_path()
    config = read_config(path)
    servers = config.get("servers", {})
    entry = servers.get(server.rstrip("/"), {}) if isinstance(servers, dict) else {}
    value = entry.get("token") if isinstance(entry, dict) else None
    value = value if value is not None else config.get("token")
    if value is not None and not isinstance(value, str):
        raise InputError(f"{path}: token must be a string")
    return value


def check_server_url(server: str) -> str:
    if not server.startswith(("http://", "https://")) or len(server) > 2000:
        raise InputError(f"--server needs an http:// or https:// URL, got {server[:100]!r}")
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
    base = check_server_url(server)
    if not args:
        raise InputError("give a command to run on the server, e.g. tracker --server URL state")
    body = {"args": args, "campaign": campaign, **terminal()}
    request = urllib.request.Request(
        base + "/api/command",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    token = token_for(base)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            text = response.read()
    except urllib.error.HTTPError as e:
        text = e.read()
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise ServerError(f"cannot reach the server at {base}: {reason}") from None
    try:
        answer = json.loads(text)
    except ValueError:
        raise ServerError(f"the server at {base} did not answer as a tracker server") from None
    if not isinstance(answer, dict):
        raise ServerError(f"the server at {base} did not answer as a tracker server")
    if "exit" not in answer:
        # Refused before any command ran (a bad token, a bad request).
        raise TrackerError(str(answer.get("error", "refused by the server")))
    sys.stdout.write(str(answer.get("stdout") or ""))
    sys.stderr.write(str(answer.get("stderr") or ""))
    sys.stdout.flush()
    return int(answer["exit"])
