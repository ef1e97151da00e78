"""`tracker --server URL ...`: the command line run by the server on its own database, for the
player whose token came with it, so its output, exit status and `--json` are the local CLI's
by construction. Only the commands a player may run remotely are accepted: nothing that names
a file or a database on the server, nothing that needs the server's terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.errors import InputError
from tracker.cli_common import Context
from tracker.players import Player
from tracker.server.served import ServedTracker

# Top-level commands a player may run through the server.
REMOTE = frozenset(
    {
        "new", "players",
        "state", "pending", "log", "explain", "verify", "report", "stats", "map", "units", "show",
        "campaigns", "scenarios", "rulesets", "odds", "luck",
        "next", "move", "ntr", "research", "buy", "place", "adjust", "convoy", "intercept", "asw", "battle",
        "undo", "redo", "dice", "approve", "overrides",
    }
)  # fmt: skip
# Options that would name a file on the server or another database.
REFUSED_OPTIONS = ("-o", "--output", "--db")
MAX_ARGS = 100
MAX_ARG = 2000


class ServedContext(Context):
    """The command's context: the server's tracker, never closed by the command."""

    def __init__(self, tracker: ServedTracker, campaign: str | None) -> None:
        super().__init__(None, campaign)
        self._tracker = tracker

    def close(self) -> None:
        pass

    def write(self, path: str, text: str) -> int:
        raise InputError("over --server, output goes to the terminal: redirect it (> FILE) instead of -o")


def check_args(args: Any) -> list[str]:
    """The arguments of a remote command, or InputError naming what is not allowed."""
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InputError("args must be a list of strings")
    if not args or len(args) > MAX_ARGS or any(len(a) > MAX_ARG for a in args):
        raise InputError(f"give 1 to {MAX_ARGS} arguments of at most {MAX_ARG} characters")
    if args[0] not in REMOTE:
        allowed = ", ".join(sorted(REMOTE))
        raise InputError(f"{args[0][:60]!r} cannot be run through a server (commands: {allowed})")
    for a in args:
        if a in REFUSED_OPTIONS or any(a.startswith(o + "=") for o in REFUSED_OPTIONS if o.startswith("--")):
            raise InputError(f"{a.split('=')[0]} cannot be given through a server: output goes to the terminal")
    return args


def run_command(
    tracker: ServedTracker,
    player: Player | None,
    campaign: str | None,
    args: Sequence[str],
    columns: int = 80,
    approved: tuple[str, ...] = (),
    approving: int | None = None,
) -> dict[str, Any]:
    """Run one command line as `player` would locally: {exit, stdout, stderr, refused}, where
    `refused` is the error that stopped an action for want of a token, right or approval."""
    from click.testing import CliRunner

    from tracker.cli import cli

    refusal: list[Exception] = []
    asked = {"args": list(args), "columns": columns, "campaign": campaign}

    def invoke() -> Any:
        ctx = ServedContext(tracker, campaign)
        return CliRunner().invoke(cli, list(args), obj=ctx, env={"COLUMNS": str(columns), "TRACKER_DEBUG": None})

    tracker.refusals = refusal
    try:
        result = tracker.acting_as(player, invoke, asked, approved, approving)
    finally:
        tracker.refusals = None
    return {
        "exit": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "refused": refusal[0] if refusal else None,
    }
