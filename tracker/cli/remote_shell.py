"""`tracker --server URL shell`: the shell's loop at the player's end, every line run on the
league server as `tracker --server URL LINE` runs it (same output, exit status and token), in
one process; the prompt and Tab completion read the campaign from the server (its state, map,
unit types and open battles, fetched again after each line)."""

from __future__ import annotations

import json
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from domain.errors import InputError, TrackerError
from tracker.cli.client import ServerError, check_server_url, run_remote, send, terminal, token_for
from tracker.cli.context import Context
from tracker.cli.shell import EXIT_WORDS, Session, history_file, prompt_session, split_line


def remote_json(base: str, campaign: str | None, args: list[str]) -> Any:
    """What `tracker --server URL ARGS --json` prints, read as JSON (a read: no key needed)."""
    body = {"args": [*args, "--json"], "campaign": campaign, **terminal()}
    headers = {"Content-Type": "application/json"}
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
    if not isinstance(answer, dict) or answer.get("exit") != 0:
        error = answer.get("error") if isinstance(answer, dict) else None
        raise (InputError if status in (400, 404) else TrackerError)(str(error or "refused by the server"))
    return json.loads(answer.get("stdout") or "null")


@dataclass
class _Named:
    code: str = ""
    side: str = ""
    abbr: str = ""


@dataclass
class _Map:
    sea: list[str] = field(default_factory=list)
    land: dict[str, str] = field(default_factory=dict)


@dataclass
class _Scenario:
    turn_order: list[str]
    nations: dict[str, _Named]
    game_map: _Map


@dataclass
class _Ruleset:
    technologies: list[str]
    units: dict[str, _Named]


@dataclass
class RemoteCampaign:
    """What completion and the prompt read of a campaign, as the server's JSON gives it."""

    name: str
    round: int
    nation: str
    phase: str
    units: dict[str, dict[str, Any]]
    battles: dict[str, dict[str, Any]]
    scenario: _Scenario
    ruleset: _Ruleset


def fetch_campaign(base: str, campaign: str | None, static: dict[str, Any]) -> RemoteCampaign:
    """The campaign now: its state and open battles each time, its map and unit types once
    (`static` keeps them: they never change in a campaign)."""
    if not static:
        static["map"] = remote_json(base, campaign, ["map"])
        static["units"] = remote_json(base, campaign, ["units"])
    state = remote_json(base, campaign, ["state"])
    pending = remote_json(base, campaign, ["pending"])
    zones = static["map"]["zones"]
    nations = list(state["balances"])
    battles = {
        str(i["battle"]): {"id": i["battle"], "kind": i["kind"], "zone": i["zone"], "waiting": i["waiting"]}
        for i in pending
        if i.get("battle") is not None
    }
    return RemoteCampaign(
        name=state["campaign"],
        round=state["round"],
        nation=state["nation"],
        phase=state["phase"],
        units={u["id"]: u for u in state["units"]},
        battles=battles,
        scenario=_Scenario(
            nations,
            {n: _Named() for n in nations},
            _Map(
                [z["zone"] for z in zones if z["kind"] == "sea"],
                {z["zone"]: z.get("owner") or "" for z in zones if z["kind"] != "sea"},
            ),
        ),
        ruleset=_Ruleset(
            sorted({t for levels in state["tech"].values() for t in levels}),
            {u["type"]: _Named(abbr=u["abbr"]) for u in static["units"]["units"]},
        ),
    )


class RemoteContext(Context):
    """The shell's context: its campaign read from the server (for the prompt and completion)."""

    def __init__(self, base: str, campaign: str | None) -> None:
        super().__init__(None, campaign)
        self.base = base
        self._static: dict[str, Any] = {}
        self._now: RemoteCampaign | None = None

    @property
    def has_tracker(self) -> bool:
        return True  # completion reads `load()`, which asks the server

    def load(self, version: int | None = None) -> Any:
        if self._now is None:
            self._now = fetch_campaign(self.base, self.campaign, self._static)
        return self._now

    def changed(self) -> None:
        self._now = None


class RemoteSession(Session):
    """One campaign on a league server; `dispatch` runs one line there."""

    obj: RemoteContext

    def prompt_text(self) -> str:
        try:
            c = self.obj.load()
        except Exception:  # noqa: BLE001 - the prompt must always come back
            return "tracker> "
        return f"{c.name} · round {c.round} · {c.nation} · {c.phase}> "

    def dispatch(self, line: str) -> int:
        try:
            args = split_line(line)
        except InputError as e:
            click.echo(f"Error: {e}", err=True)
            return 2
        if not args:
            return 0
        if args[0] == "help":
            args = [*args[1:], "--help"] if len(args) > 1 else ["--help"]
        if args[0] == "shell":
            click.echo("Error: already in a tracker shell", err=True)
            return 2
        if args[0].split("=")[0] in ("--db", "--campaign", "--server"):
            click.echo("Error: a shell stays on one campaign: start another for another --campaign", err=True)
            return 2
        self.obj.changed()
        try:
            return run_remote(self.obj.base, self.obj.campaign, args)
        except TrackerError as e:
            click.echo(f"Error: {e}", err=True)
            return e.exit_code


def shell_remote(server: str, campaign: str | None, args: list[str]) -> int:
    """Run `tracker shell` against a server (see the module); its exit status."""
    from tracker.cli.main import cli

    base = check_server_url(server)
    command = click.Command(
        "shell",
        params=[
            click.Option(["--history"], type=click.Path(dir_okay=False), default=None),
            click.Option(["--no-history"], is_flag=True),
        ],
    )
    params = command.make_context("shell", list(args)).params
    obj = RemoteContext(base, campaign)
    obj.load()  # the campaign must be one the token may read: said once, before any prompt
    session = RemoteSession(cli, obj)
    if not sys.stdin.isatty():
        for line in sys.stdin:
            if line.strip() in EXIT_WORDS:
                break
            session.dispatch(line)
        return 0
    history = None if params["no_history"] else Path(params["history"]) if params["history"] else history_file(base)
    prompt = prompt_session(cli, obj, history)
    session.run(prompt.prompt)
    return 0
