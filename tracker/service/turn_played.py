"""T1: whether a national turn (or one of its phases) asked for is still being played, so that
its board is the board now rather than the board at its end. `state --turn --json`, the league
server's `/state?turn=` and the viewer's board page all say it from here, alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

from projections.positions import turn_number

if TYPE_CHECKING:
    from domain.campaign import Campaign


def played_now(c: Campaign, turn: int, phase: str | None) -> tuple[bool, bool]:
    """Whether national turn `turn` is the one being played, and whether `phase` of it (if
    given) is the phase open now: what `state --turn` shows of them is then the board now,
    not the board at their end."""
    now = turn == turn_number(c.scenario.turn_order, c.round, c.nation)
    return now, now and phase == c.phase


def in_progress(c: Campaign, turn: int | None, phase: str | None) -> dict[str, bool]:
    """What a state answer adds to its board: `{"in_progress": …}` for a board asked for by
    turn (true when that turn, or with `phase` that phase, is still being played), nothing for
    the board now or after an event, where there is nothing to tell apart (docs/json.md)."""
    if not turn:
        return {}
    turn_now, phase_now = played_now(c, turn, phase)
    return {"in_progress": phase_now if phase else turn_now}
