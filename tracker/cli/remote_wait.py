"""`tracker --server URL wait`: the waiting is done here, at the player's end, so no server
thread is held for it: the server is asked what the player owes (`inbox --json`, a quick
command), and between two askings the client follows the campaign's event stream, asking
again only when something was recorded."""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING

import click

from domain.errors import InputError, TrackerError
from tracker.cli.client import ServerError, check_server_url, send, terminal, token_for

if TYPE_CHECKING:
    from tracker.service.shapes import OwedItem

# Without a campaign there is no one stream to follow: the server is asked this often.
ASK_EVERY = 10.0
# A stream is left and taken up again this often, so a dropped connection is noticed.
STREAM_SECONDS = 60.0
# While the server does not answer (it restarts), it is asked again this often.
UNREACHABLE_SECONDS = 3.0


def _headers(base: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    token = token_for(base)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _owed(base: str, campaign: str | None) -> list[OwedItem]:
    """What the token's player owes, as the server's `inbox --json` says."""
    body = {"args": ["inbox", "--json"], "campaign": campaign, **terminal()}
    request = urllib.request.Request(
        base + "/api/command", data=json.dumps(body).encode(), method="POST", headers=_headers(base)
    )
    status, text = send(request, base, reading=True)
    try:
        answer = json.loads(text)
    except ValueError:
        raise ServerError(f"the server at {base} did not answer as a tracker server") from None
    if not isinstance(answer, dict) or "exit" not in answer:
        error = str(answer.get("error", "refused by the server")) if isinstance(answer, dict) else "refused"
        raise InputError(error) if status in (400, 404) else TrackerError(error)
    if answer["exit"] != 0:
        raise TrackerError(str(answer.get("stderr") or "refused by the server").strip().removeprefix("Error: "))
    items = json.loads(answer.get("stdout") or "[]")
    return items if isinstance(items, list) else []


def _next_recorded(base: str, campaign: str, seen: int | None, seconds: float) -> int | None:
    """Follow the campaign's event stream until it reports a version other than `seen`, or for
    `seconds`; the version it reported last (None if none)."""
    url = f"{base}/api/campaigns/{urllib.parse.quote(campaign, safe='')}/events/stream"
    headers = _headers(base)
    headers["Accept"] = "text/event-stream"
    request = urllib.request.Request(url, headers=headers)
    end = time.monotonic() + seconds
    version = seen
    try:
        with urllib.request.urlopen(request, timeout=min(seconds, STREAM_SECONDS)) as stream:
            for raw in stream:
                line = raw.decode("utf-8", "replace").strip()
                if line.startswith("data:"):
                    version = int(json.loads(line[5:]).get("version", -1))
                    if version != seen:
                        return version
                if time.monotonic() >= end:
                    break
    except (OSError, ValueError):
        pass  # a timeout or a dropped stream: the caller asks the server again
    return version


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def _within(deadline: float | None, seconds: float) -> float:
    """`seconds`, or what is left before `deadline` when that is less."""
    return seconds if deadline is None else max(0.0, min(seconds, deadline - time.monotonic()))


def wait_remote(server: str, campaign: str | None, args: list[str]) -> int:
    """Run `tracker wait` against a server (see the module); its exit status."""
    from tracker.cli.commands.inbox import show
    from tracker.cli.commands.inbox import wait as command

    base = check_server_url(server)
    # The local command's options, read here (its callback does not run): its --help is the
    # command's own. Under the main group's context, so a usage error names `tracker wait` as a
    # local one does.
    params = command.make_context("wait", list(args), parent=click.get_current_context(silent=True)).params
    if params["player"] is not None:
        raise click.UsageError("through --server the token says who you are: leave out --player")
    timeout = params["timeout"]
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: int | None = None
    answered = lost = False
    while True:
        try:
            items = _owed(base, campaign)
        except ServerError:
            # The first answer shows the URL and the token are right; after it, a server that
            # restarts (a few seconds without an answer) ended every player's wait.
            if not answered or _past(deadline):
                raise
            if not lost:
                click.echo(f"tracker wait: the server at {base} does not answer; still waiting", err=True)
            lost = True
            time.sleep(_within(deadline, UNREACHABLE_SECONDS))
            continue
        if lost:
            click.echo(f"tracker wait: the server at {base} answers again", err=True)
        answered, lost = True, False
        if items:
            if params["as_json"]:
                click.echo(json.dumps(items, indent=2))
            else:
                show(items)
            return 0
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TrackerError(f"nothing waited for you within {timeout:g} s")
        span = STREAM_SECONDS if left is None else min(left, STREAM_SECONDS)
        if campaign is None:
            time.sleep(min(ASK_EVERY, span))
        else:
            began, before = time.monotonic(), seen
            seen = _next_recorded(base, campaign, seen, span)
            if seen == before and time.monotonic() - began < 1.0:
                # The stream ended at once with no news (a server shutting down, a proxy that
                # refuses it): not asked again at once, over and over.
                time.sleep(_within(deadline, 1.0))
