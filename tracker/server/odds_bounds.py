"""What `tracker odds` may weigh on the server: a command line runs in one of the server's
threads, so a battle that takes a minute of CPU holds that thread (and the interpreter's lock)
from every other request. Big battles are weighed on the player's own machine instead.

Two bounds, both refused in one line (exit 1, HTTP 409) naming `tracker odds` run locally:

- Before anything is enumerated, the units a side of a position given by hand (`odds naval`,
  `convoy`, `intercept`, `asw`: read with the unit types of the ruleset the command weighs by,
  the campaign's the request names unless --ruleset names a built-in) or of a battle in
  progress (`odds BATTLE`), as the viewer's zone page bounds its own (PAGE_UNITS): a mixed 10 v
  10 naval battle takes a few seconds, 20 v 20 (the command line's most) a minute, 20 seconds
  of it expanding the first position alone, where no check between positions could stop it.
  `--exact` sums fractions after the enumeration, where no budget reaches either: fewer units
  then.
- While it runs, every `odds` command (also `need`, `escorts` and `buy`, whose searches are
  bounded by budgets of positions, not of time) is stopped once it has taken ODDS_SECONDS,
  checked at each position the engines expand.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from domain.errors import TrackerError
from tracker.cli.common import Context
from tracker.server.zone_odds import PAGE_UNITS

# The most units a side the server weighs, and with --exact, whose sums of fractions take some
# three to five times the enumeration before them (a mixed 8 v 8 naval battle: 1.5 s, then 5).
SERVER_UNITS = PAGE_UNITS
SERVER_EXACT_UNITS = 6
# The server's time an odds command may take (wall clock, which bounds its CPU too).
ODDS_SECONDS = 10.0
LOCALLY = "run `tracker odds` on your own machine for big battles"


class OddsTooLarge(TrackerError):
    """Odds the server does not weigh (HTTP 409): too many units, or too long."""


def check_odds(ctx: Context, args: Sequence[str]) -> None:
    """OddsTooLarge when `tracker odds ARGS` asks for a position over the server's bounds; any
    other problem (a malformed force, no such battle) is left to the command to report."""
    from tracker.cli.commands.odds import odds

    if any(a in ("--help", "-h") for a in args):
        return
    try:
        parsed = odds.make_context("odds", list(args), resilient_parsing=True)
    except click.ClickException:
        return
    params = parsed.params
    if parsed.command is not odds or not params.get("what"):
        return  # need, escorts, buy: bounded by their budgets of positions, and by time
    try:
        sides = _sides(ctx, params)
    except TrackerError:
        return
    limit = SERVER_EXACT_UNITS if params["exact"] else SERVER_UNITS
    largest = max(sides.values(), default=0)
    if largest > limit:
        exact = " with --exact" if params["exact"] else ""
        raise OddsTooLarge(
            f"the server weighs odds of at most {limit} units a side{exact}, this battle has {largest} "
            f"on one side: {LOCALLY}"
        )


def _sides(ctx: Context, params: dict[str, Any]) -> Counter[str]:
    """The units of each side of the position `tracker odds` would weigh (as it builds it)."""
    from domain.procedures.canon import pieces_in
    from domain.ruleset import builtin_names
    from tracker.analysis import odds as view
    from tracker.cli.commands.odds import hand_nations, hand_ruleset

    what = str(params["what"])
    if what.isascii() and what.isdigit():
        from domain.procedures.position import from_battle

        c = ctx.load()
        battle = c.battles.get(what)
        if battle is None:
            return Counter()
        state, pctx, _rounds = from_battle(c.board(), battle, frozenset(c.committed))
    elif what in view.PROCEDURES:
        ruleset = params["ruleset"]
        if ruleset and ruleset not in builtin_names("rulesets"):
            return Counter()  # not a built-in: the command says what it makes of it
        # Weighed by the ruleset the command weighs by: --ruleset's, else that of the campaign
        # the request names (a league on house rules counts its own unit types), else twtea-3e.
        rs = hand_ruleset(ctx, ruleset)
        given = (params["attacker"], params["defender"], params["tech"], params["ntr"], params["stops_here"])
        # The forces read as the command reads them: a nation it refuses is refused as such,
        # not counted as a side of its own.
        state, pctx, _rounds = view.hypothetical(what, rs, *given, hand_nations(ctx))
    else:
        return Counter()
    nations = pctx.scenario.nations
    return Counter(nations[p.nation].side if p.nation in nations else p.nation for p in pieces_in(state).values())


@contextmanager
def time_budget(seconds: float | None = None) -> Iterator[None]:
    """Stop the odds engines (OddsTooLarge) at the first position they expand once `seconds`
    (default ODDS_SECONDS) have passed since the block began; whoever counted positions before
    still does."""
    from domain.procedures.engine import EXPANDED

    seconds = ODDS_SECONDS if seconds is None else seconds
    outer = EXPANDED.get()
    deadline = time.monotonic() + seconds

    def expanded() -> None:
        if outer is not None:
            outer()
        if time.monotonic() > deadline:
            raise OddsTooLarge(f"the odds took over {seconds:g} s of the server's time and were stopped: {LOCALLY}")

    token = EXPANDED.set(expanded)
    try:
        yield
    finally:
        EXPANDED.reset(token)
