"""`tracker shell`: an interactive session on one campaign.

Every line is split like a shell command line and run by the same click group as `tracker`,
in the same process, on one database kept open: the same output and the same one-line
errors, without a new process (and a new database connection) per command. The prompt shows
the campaign's round, nation and phase; tab completes commands, options, units, zones,
nations, technologies and battle numbers from the campaign (the same completers as the
shell's own completion); history is kept in a file.

prompt_toolkit is imported only here and in `tracker.cli.shell_prompt` (the prompt, its
completion and key bindings), and only when a shell runs: a copy installed without it runs
every other command, and `tracker shell` says what to install (exit 2).
"""

from __future__ import annotations

import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from domain.errors import InputError, TrackerError
from tracker.cli.common import Context, echo_prose
from tracker.cli.params import FilePath
from tracker.cli.shell_lines import EXIT_WORDS, Leave, leave, split_line
from tracker.cli.shell_prompt import NOT_IN_SHELL, fit_prompt, help_width, prompt_session, terminal_columns
from tracker.cli.shell_prompt import REFRESH as PROMPT_REFRESH

FALLBACK_PROMPT = "tracker> "
HELP = (
    "Type any tracker command without `tracker` (e.g. `state`, `pending`, `move de-ss1 --to skagerrak`); "
    "TAB completes, `help` lists the commands, `exit` or Ctrl-D leaves."
)


def history_file(db_url: str) -> Path:
    """The history file: one per database, under the user's data folder."""
    import hashlib

    from tracker.cli.places import data_dir

    digest = hashlib.sha256(db_url.encode()).hexdigest()[:16]
    return data_dir() / f"shell-history-{digest}"


def check_history(history: str, database: Path | None = None) -> Path:
    """A --history file the shell may append its lines to: refused (exit 2) as any output file
    is (the database or its side files, a directory, a device, a folder that does not exist),
    and, when it has something in it, unless it reads as a history file (prompt_toolkit's
    `# time` and `+line` lines): a file of another kind (an export, a picture, a database) is
    never appended to."""
    from tracker.cli.output import check_output

    target = check_output(history, [database] if database is not None else [])
    if target.is_file():
        with target.open("rb") as f:
            head = f.read(4096)
        first = next((line.strip() for line in head.splitlines() if line.strip()), b"#")
        if not first.startswith((b"#", b"+")):
            raise InputError(f"{history}: not a shell history file; give another --history, or --no-history")
    return target


# The most events another writer recorded that the shell lists one by one (`news`).
NEWS = 8


class Session:
    """One campaign on one open database; `dispatch` runs one command line."""

    def __init__(self, group: click.Group, obj: Context) -> None:
        self.group = group
        self.obj = obj
        # The last event the player was shown, at a terminal (`run`): their own lines', and
        # another writer's on the same database, said as it comes (`news`). None in a script.
        self.seen: int | None = None

    def prompt_text(self) -> str:
        try:
            c = self.obj.load()
        except Exception:  # noqa: BLE001 - the prompt must always come back
            return FALLBACK_PROMPT
        return fit_prompt(self.obj.tracker.name_of(c), c, terminal_columns())

    def _version(self) -> int:
        """The campaign's last event in the database (another writer's too)."""
        t = self.obj.tracker
        return t.recorder.last_version(t.campaign_id(self.obj.campaign))

    def news(self) -> list[str]:
        """What another writer (a second shell, a server's player) recorded since the player last
        looked, a line per event as `log` says it (the last NEWS); `seen` moves past it. None in a script."""
        if self.seen is None:
            return []
        from projections.summary import rule_of, summary

        t = self.obj.tracker
        cid = t.campaign_id(self.obj.campaign)
        now = t.recorder.last_version(cid)
        if now <= self.seen:
            return []
        stored = t.recorder.select_events(cid, gt=self.seen, lte=now)
        self.seen = now
        events = [e for e in map(t.decode, stored) if type(e).__name__ != "ActionAsked"]
        # As `log` says them: a battle's side by its units' nations (NC1), a unit by its type in
        # the campaign's ruleset (F3).
        campaign = t.load(cid)
        scenario, ruleset = campaign.scenario, campaign.ruleset
        lines = [f"Meanwhile: {summary(e, scenario, ruleset)}   [{rule_of(e)}]" for e in events[-NEWS:]]
        if len(events) > NEWS:
            lines.insert(
                0, f"Meanwhile, {len(events)} events were recorded (tracker log --tail {len(events)}); the last:"
            )
        return lines

    def catch_up(self) -> None:
        """Drop the copy of the campaign the tracker kept from this shell's last action when
        another writer recorded since: the next action runs on the campaign as it stands. On
        the kept copy, `next`, `undo` and `redo` (whose meaning rests on the state seen) were
        refused as stale ("Germany recorded 4 events meanwhile") though the prompt already
        showed the other writer's phase."""
        t = self.obj.tracker
        t.forget_if_behind(t.campaign_id(self.obj.campaign))

    # How old the prompt may get, in seconds, while a line is being typed: as often as the
    # prompt session redraws it (`shell_prompt.REFRESH`).
    REFRESH = PROMPT_REFRESH

    def live_prompt(self) -> Callable[[], str]:
        """The prompt as a message prompt_toolkit asks for at each redraw: read again once it
        is REFRESH seconds old, so a second shell's (or player's) `next` on the same database
        shows while this one waits, instead of the round, nation and phase it had at the last
        line. A failed read keeps what was shown. It is first read at the first redraw, inside
        the prompt, which knows the terminal's width (`fit_prompt`)."""
        read_at, shown = time.monotonic(), ""

        def message() -> str:
            nonlocal read_at, shown
            if not shown:
                read_at, shown = time.monotonic(), self.prompt_text()
            elif time.monotonic() - read_at >= self.REFRESH:
                read_at, text = time.monotonic(), self.prompt_text()
                shown = shown if text == FALLBACK_PROMPT else text
                self.say_news()
            return shown

        return message

    def say_news(self) -> None:
        """`news`, printed above the prompt as it comes (the line being typed stays)."""
        try:
            lines = self.news()
        except Exception:  # noqa: BLE001 - said with the next line instead
            return
        if lines:
            from prompt_toolkit.application import get_app_or_none, run_in_terminal

            if get_app_or_none() is None:
                return

            def say() -> None:
                for line in lines:
                    echo_prose(line)

            run_in_terminal(say)

    # Global options a line may not give: the shell stays where it was started.
    STAYS: tuple[str, ...] = ("--db", "--campaign")
    STAYS_WHY = "a shell stays on one campaign: start another for another --db or --campaign"

    def dispatch(self, line: str) -> int:
        """Run one line; return its exit status. Errors are printed as `tracker` prints them.
        An `exit` or `quit` line raises `Leave` (`shell_lines.leave`)."""
        try:
            args = split_line(line)
        except InputError as e:
            click.echo(f"Error: {e}", err=True)
            return 2
        if not args:
            return 0
        if args in (["help"], ["--help"], ["-h"]):
            click.echo(self.help_text(), nl=False)
            return 0
        if args[0] == "help":
            args = [*args[1:], "--help"]
        if args[0] in EXIT_WORDS:
            return leave(args)  # raises Leave, but for `exit --help`
        if args[0] == "shell":
            click.echo("Error: already in a tracker shell", err=True)
            return 2
        if args[0] == "serve" and "--help" not in args and "-h" not in args:
            # A server runs until stopped: inside the shell it would hold the prompt for good.
            click.echo("Error: tracker serve runs on its own, in another terminal, not in the shell", err=True)
            return 2
        if args[:2] == ["--campaign", self.obj.campaign] and args[2:]:
            args = args[2:]  # a command `inbox` printed, naming this campaign
        if args[0].split("=")[0] in self.STAYS:
            click.echo(f"Error: {self.STAYS_WHY}", err=True)
            return 2
        return self.run_line(args)

    def help_text(self) -> str:
        """The shell's `help`: how lines are typed, then the commands it runs with their short
        help as wide as the terminal; not the global options a line may not give (STAYS), nor
        the commands it refuses (`shell_prompt.NOT_IN_SHELL`)."""
        width = help_width()
        ctx = click.Context(self.group, info_name="tracker", terminal_width=width - 2, max_content_width=width)
        formatter = ctx.make_formatter()
        for text in (HELP, "`help COMMAND` (or `COMMAND --help`) says what a command takes."):
            # Not at a hyphen: `move de-ss1` cut in two reads as two words.
            formatter.write(textwrap.fill(text, formatter.width, break_on_hyphens=False, break_long_words=False))
            formatter.write("\n")
        names = [n for n in self.group.list_commands(ctx) if n not in NOT_IN_SHELL]
        limit = formatter.width - 6 - max(map(len, names))
        listed = getattr(self.group, "listed_help", None)
        rows = [(n, listed(n, limit) if listed else "") for n in names]
        with formatter.section("Commands of the shell"):
            formatter.write_dl(rows)
        return formatter.getvalue()

    def run_line(self, args: list[str]) -> int:
        """Run one command line, checked by `dispatch`, in this process: on the campaign as it
        stands, another writer's events said first. `next`, `undo` and `redo` given just after
        events the player had not been shown are refused as stale (T2, RK3, RK4: they would end
        another phase, or undo another's action, than the one looked at); run again, they run."""
        seen = self.seen
        try:
            news = self.news()
            self.catch_up()
        except Exception:  # noqa: BLE001 - the line itself says what is wrong with the database
            news = []
        for line in news:
            echo_prose(line)
        if news and args[0] in ("next", "undo", "redo") and not any(a.split("=")[0] == "--seen" for a in args):
            args = [args[0], "--seen", str(seen), *args[1:]]
        before = self.seen
        status = self.run_command(args)
        if self.seen is not None and (status == 0 or self._recorded_since(before)):
            # The player saw what the line printed. A refusal records nothing, and the events
            # that caused it (another writer's step taken meanwhile) are still said; but a
            # `next --to` refused part way printed the phases it closed before the refusal,
            # which were said again as another writer's ("Meanwhile: round 2, France: ...").
            self.start_looking()
        return status

    def _recorded_since(self, version: int | None) -> bool:
        """Whether the campaign moved past `version` while the line ran: then the line itself
        recorded (and printed) those events before it was refused."""
        try:
            return version is not None and self._version() > version
        except Exception:  # noqa: BLE001 - the next line says what is wrong with the database
            return False

    def run_command(self, args: list[str]) -> int:
        """Run one command line as `tracker` would, its errors printed as `tracker` prints them."""
        self.obj.may_create = False
        try:
            # A command's --help as wide as the terminal (click's default stops at 80 columns);
            # click leaves two columns free, as it does on its own.
            width = help_width()
            result = self.group.main(
                args,
                prog_name="tracker",
                obj=self.obj,
                standalone_mode=False,
                terminal_width=width - 2,
                max_content_width=width,
            )
        except SystemExit as e:
            return e.code if isinstance(e.code, int) else 1
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            return 1
        except click.ClickException as e:
            e.show()
            return e.exit_code
        except click.exceptions.Exit as e:
            return e.exit_code
        return result if isinstance(result, int) else 0

    def run(self, read_line: Callable[[Callable[[], str]], str]) -> int | None:
        """Read and run lines until end of input or `exit`; Ctrl-C drops the line being typed.
        The status `exit` gives (`exit 3`), or None."""
        echo_prose(HELP)
        self.start_looking()
        while True:
            try:
                text = read_line(self.live_prompt())
            except KeyboardInterrupt:
                continue
            except EOFError:
                return None
            # Several lines pasted at once run one after another, as piped lines do: read as
            # one, they ran as a single command with the others' words as its arguments.
            try:
                for line in text.splitlines() or [""]:
                    self.dispatch(line)
            except Leave as e:
                return e.status

    def start_looking(self) -> None:
        """From now on, another writer's events are said (`news`)."""
        try:
            self.seen = self._version()
        except Exception:  # noqa: BLE001 - the lines' own errors say what is wrong
            self.seen = None


def run_piped(session: Session) -> int:
    """Run the lines piped in (a script: no prompt, no editing, the same commands), each to
    the end as at the prompt, until an `exit`; the exit status of the last line that failed (1
    refused, 2 bad usage), or 0, so a script sees that something went wrong, or the status
    `exit` gives (`exit 3`)."""
    status = 0
    for line in sys.stdin:
        try:
            status = session.dispatch(line) or status
        except Leave as e:
            return status if e.status is None else e.status
    return status


# ----- the shell on a league server -----


def remote_json(base: str, campaign: str | None, args: list[str]) -> Any:
    """What `tracker --server URL ARGS --json` prints, read as JSON (a read: no key needed)."""
    import json
    import urllib.request

    from tracker.cli.client import ServerError, send, terminal, token_for

    body = {"args": [*args, "--json"], "campaign": campaign, **terminal()}
    headers = {"Content-Type": "application/json"}
    token = token_for(base)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        base + "/api/command", data=json.dumps(body).encode(), method="POST", headers=headers
    )
    status, text = send(request, base, reading=True)
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
    # NC1, AS1, CV1: the battles the phasing nation (or, a convoy attack, an enemy) may start,
    # as `pending` lists them (no board here).
    starts: list[dict[str, Any]] = field(default_factory=list)


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
        str(i["battle"]): {
            "id": i["battle"],
            "kind": i["kind"],
            "zone": i["zone"],
            "waiting": i["waiting"],
            "eligible": i.get("eligible"),
            "decisions": i.get("decisions"),
        }
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
        starts=[
            i
            for i in pending
            if i.get("battle") is None and i["kind"] in ("naval_due", "naval_may", "asw_may", "convoy_open")
        ],
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
            return FALLBACK_PROMPT
        return fit_prompt(c.name, c, terminal_columns())

    def start_looking(self) -> None:
        """Nothing: the server's campaign is read again after each line (`changed`)."""

    STAYS = ("--db", "--campaign", "--server")
    STAYS_WHY = "a shell stays on one campaign: start another for another --campaign"

    def run_line(self, args: list[str]) -> int:
        """Run one command line, checked by `dispatch`, on the server."""
        self.obj.changed()
        from tracker.cli.client import run_remote

        names = self.group.list_commands(click.Context(self.group))
        if not args[0].startswith("-") and args[0] not in names:
            # Said here, as at the local prompt: the server would call a typo a command it
            # does not run.
            from tracker.cli.main import no_such_command
            from tracker.cli.params import one_line

            one_line(no_such_command(click.Context(self.group, info_name="tracker"), args[0], names)).show()
            return 2

        try:
            return run_remote(self.obj.base, self.obj.campaign, args)
        except TrackerError as e:
            click.echo(f"Error: {e}", err=True)
            return e.exit_code


def shell_remote(server: str, campaign: str | None, history: str | None, no_history: bool) -> None:
    """`tracker --server URL shell`: the shell's loop at the player's end, every line run on the
    league server as `tracker --server URL LINE` runs it (same output, exit status and token),
    in one process; the prompt and Tab completion read the campaign from the server (its state
    and open battles fetched again after each line, its map and unit types once)."""
    from tracker.cli.client import check_server_url
    from tracker.cli.main import cli

    base = check_server_url(server)
    obj = RemoteContext(base, campaign)
    # The campaign must be one the token may read: said once, before any prompt. The shell
    # then stays on it by name, even when a line makes another one the token reads (`new`).
    obj.campaign = obj.load().name
    session = RemoteSession(cli, obj)
    path = None if no_history else check_history(history) if history else history_file(base)
    if not sys.stdin.isatty():
        click.get_current_context().exit(run_piped(session))
    prompt = prompt_session(cli, obj, path)
    status = session.run(prompt.prompt)
    if status:
        click.get_current_context().exit(status)


@click.command(name="shell")
@click.option(
    "--history",
    "history",
    type=FilePath(dir_okay=False),
    help="History file (default: one per database in the user's data folder, twtea-naval-tracker).",
)
@click.option("--no-history", is_flag=True, help="Keep no history file.")
@click.pass_obj
def shell_command(ctx: Context, history: str | None, no_history: bool) -> None:
    """An interactive session on one campaign: every command without `tracker`, tab completion
    from the campaign, history, and a prompt showing round, nation and phase.

    With --server, every line runs on the league server as `tracker --server URL LINE` would,
    and the prompt and completion read the campaign from the server.

    Lines piped in (not a terminal) run one after another to the end, and the shell exits
    with the status of the last line that failed (1 refused, 2 bad usage), 0 if none did.

    Example: tracker --campaign autumn shell
    """
    try:
        import prompt_toolkit  # noqa: F401
    except ImportError:
        raise InputError('the shell needs prompt_toolkit: pip install "prompt_toolkit>=3.0.36,<4"') from None
    server = click.get_current_context().find_root().params.get("server")
    if server:
        shell_remote(server, ctx.campaign, history, no_history)
        return
    t = ctx.tracker
    # A shell opens on a campaign that exists, and stays on it by name: a line that makes
    # another one in this database (`new`, `import`) leaves the session where it was.
    ctx.campaign = t.name_of(t.load(t.campaign_id(ctx.campaign)))
    from tracker.cli.main import cli

    session = Session(cli, ctx)
    if history and not no_history:
        # Checked before any line runs, piped or typed: the shell appends to it as it goes.
        from tracker.storage.store import sqlite_file

        path: Path | None = check_history(history, sqlite_file(t.url))
    else:
        path = None if no_history else history_file(t.safe_url)
    if not sys.stdin.isatty():
        click.get_current_context().exit(run_piped(session))
    prompt = prompt_session(cli, ctx, path)
    status = session.run(prompt.prompt)
    if status:
        click.get_current_context().exit(status)
