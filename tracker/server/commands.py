"""`tracker --server URL ...`: the command line run by the server on its own database, for the
player whose token came with it, so its output, exit status and `--json` are the local CLI's
by construction. Only the commands a player may run remotely are accepted: nothing that names
a file or a database on the server, nothing that needs the server's terminal.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from domain.errors import InputError
from tracker.cli.client import check_utf8_args
from tracker.cli.common import Context
from tracker.server.odds_bounds import OddsTooLarge, check_odds, time_budget
from tracker.server.served import NEEDS_TOKEN, ServedTracker
from tracker.service.players import Player, Unauthenticated

# Top-level commands a player may run through the server.
REMOTE = frozenset(
    {
        "new", "players", "campaign",
        "state", "pending", "log", "explain", "verify", "report", "stats", "map", "units", "show",
        "campaigns", "scenarios", "rulesets", "odds", "luck", "inbox",
        "next", "move", "ntr", "research", "buy", "place", "adjust", "convoy", "intercept", "asw", "battle",
        "undo", "redo", "dice", "approve", "overrides", "notify",
    }
)  # fmt: skip
# Commands that record an action (through `tracker.cli.common.perform`): without a token they
# are refused before the campaign is looked up, as POST .../actions refuses them, so the answer
# is 401 for every name (a stranger learns nothing of which campaigns exist).
ACTING = frozenset(
    {"adjust", "asw", "battle", "buy", "convoy", "dice", "intercept", "move", "next", "ntr", "place", "redo",
     "research", "undo"}
)  # fmt: skip
# Options that would name a file on the server or another database.
REFUSED_OPTIONS = ("-o", "--output", "--db")
# The fields of a POSTed command's body: the command line, the campaign and the terminal.
COMMAND_FIELDS = ("args", "campaign", "columns", "color_system", "no_color", "tty")
MAX_ARGS = 100
MAX_ARG = 2000


class ServedContext(Context):
    """The command's context: the server's tracker, never closed by the command."""

    def __init__(self, tracker: ServedTracker, campaign: str | None) -> None:
        super().__init__(None, campaign)
        self._tracker = tracker

    def close(self) -> None:
        pass

    def write(self, path: str, text: str | Iterable[bytes]) -> int:
        raise InputError("over --server, output goes to the terminal: redirect it (> FILE) instead of -o")


def check_args(args: Any) -> list[str]:
    """The arguments of a remote command, or InputError naming what is not allowed."""
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InputError("args must be a list of strings")
    if not args or len(args) > MAX_ARGS or any(len(a) > MAX_ARG for a in args):
        raise InputError(f"give 1 to {MAX_ARGS} arguments of at most {MAX_ARG} characters")
    check_utf8_args(args)
    if args[0] not in REMOTE:
        allowed = ", ".join(sorted(REMOTE))
        raise InputError(f"{args[0][:60]!r} cannot be run through a server (commands: {allowed})")
    for a in args:
        if a == "--max-positions" or a.startswith("--max-positions="):
            # One command must not hold a server's thread and memory for minutes.
            raise InputError("--max-positions cannot be given through a server: it keeps exact odds to its default")
        if a in REFUSED_OPTIONS or any(a.startswith(o + "=") for o in REFUSED_OPTIONS if o.startswith("--")):
            raise InputError(f"{a.split('=')[0]} cannot be given through a server: output goes to the terminal")
    if args[0] == "verify" and "--all" in args:
        # Every campaign of the server's database, one after another: an operator's check, run
        # on the database's own machine, not a request holding a server's thread that long.
        raise InputError("verify --all cannot be run through a server: verify each campaign with --campaign NAME")
    check_rulesets(args)
    return args


def check_rulesets(args: Sequence[str]) -> None:
    """InputError for a `--ruleset` that is not a built-in: a path would name a file on the
    server, and its error (missing, not TOML, at line L) would tell what the server holds."""
    from domain.ruleset import builtin_names

    for i, a in enumerate(args):
        if a == "--ruleset" and i + 1 < len(args):
            given = args[i + 1]
        elif a.startswith("--ruleset="):
            given = a.partition("=")[2]
        else:
            continue
        known = builtin_names("rulesets")
        if given not in known:
            raise InputError(
                f"--ruleset {given[:60]!r}: through a server, one of the built-ins ({', '.join(known)}); "
                "a file on your machine is not sent"
            )


def refused_without_token(args: Sequence[str]) -> dict[str, Any] | None:
    """The answer to an action's command line sent without a token (401, as the API's action
    route answers it), or None for anything else; `--help` is read without one."""
    if args[0] not in ACTING or any(a in ("--help", "-h") for a in args):
        return None
    refusal = Unauthenticated(NEEDS_TOKEN)
    return {"exit": refusal.exit_code, "stdout": "", "stderr": f"Error: {refusal}\n", "refused": refusal}


COLOR_SYSTEMS = (None, "standard", "256", "truecolor", "windows")


def check_terminal(body: dict[str, Any]) -> dict[str, Any]:
    """The client's terminal from a request: {columns, color_system, no_color, tty}; InputError
    naming what is wrong. A client that says nothing gets 80 columns without colour."""
    columns = body.get("columns", 80)
    color_system = body.get("color_system")
    no_color = body.get("no_color", False)
    tty = body.get("tty", color_system is not None)
    if not isinstance(columns, int) or isinstance(columns, bool) or not 20 <= columns <= 1000:
        raise InputError("columns must be a whole number from 20 to 1000")
    if color_system not in COLOR_SYSTEMS:
        raise InputError(f"color_system must be one of {', '.join(str(c) for c in COLOR_SYSTEMS if c)} or null")
    if not isinstance(no_color, bool) or not isinstance(tty, bool):
        raise InputError("no_color and tty must be true or false")
    return {"columns": columns, "color_system": color_system, "no_color": no_color, "tty": tty}


def run_command(
    tracker: ServedTracker,
    player: Player | None,
    campaign: str | None,
    args: Sequence[str],
    columns: int = 80,
    approved: tuple[str, ...] = (),
    approving: int | None = None,
    terminal: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one command line as `player` would locally: {exit, stdout, stderr, refused}, where
    `refused` is the error that stopped an action for want of a token, right or approval.
    The output is rendered for the client's `terminal` (its width and colours, see
    `check_terminal`); it is captured per thread, so commands may run side by side."""
    from tracker.cli.common import CLIENT_TERMINAL
    from tracker.cli.main import cli
    from tracker.server.streams import captured

    client = {**(terminal or {"color_system": None, "no_color": False, "tty": False}), "columns": columns}
    refusal: list[Exception] = []
    asked = {"args": list(args), "columns": columns, "campaign": campaign}

    def invoke() -> int:
        ctx = ServedContext(tracker, campaign)
        odds = args[0] == "odds"
        try:
            if odds:
                # Big battles are refused before they take the server's time (see odds_bounds).
                check_odds(ctx, args[1:])
            with time_budget() if odds else contextlib.nullcontext():
                cli.main(list(args), prog_name="tracker", obj=ctx, terminal_width=columns, standalone_mode=True)
        except OddsTooLarge as e:
            print(f"Error: {e}", file=sys.stderr)
            return e.exit_code
        except SystemExit as e:
            code = e.code
            return code if isinstance(code, int) else (0 if code is None else 1)
        return 0

    tracker.refusals = refusal
    token = CLIENT_TERMINAL.set(client)
    try:
        with captured(client["tty"]) as streams:
            exit_code = tracker.acting_as(player, invoke, asked, approved, approving)
    finally:
        CLIENT_TERMINAL.reset(token)
        tracker.refusals = None
    return {
        "exit": exit_code,
        "stdout": streams["stdout"].getvalue(),
        "stderr": streams["stderr"].getvalue(),
        "refused": refusal[0] if refusal else None,
    }
