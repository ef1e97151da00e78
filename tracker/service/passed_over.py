"""F8: the national turns of neutral nations that `next` passed over. They have no events of
their own (the TurnPassedOver of each is recorded in the turn played before it), so a command
that reads such a turn says that, not that it is still to be played."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from domain.campaign import Campaign
from projections.positions import turn_number, turn_position


@dataclass(frozen=True)
class PassedOver:
    """A national turn passed over, and the turn played last before it (whose log holds its
    TurnPassedOver and whose board stands after it)."""

    turn: int
    round: int
    nation: str
    played: int

    def __str__(self) -> str:
        return (
            f"turn {self.turn} ({self.nation}, round {self.round}) has no events in this campaign: "
            "a neutral nation's turn is passed over (F8)"
        )


def passed_over(c: Campaign, turn: int, forward: Mapping[str, int] | None = None) -> PassedOver | None:
    """F8: national turn `turn` if the campaign went past it while its nation was neutral, with
    the turn played last before it; None for any other turn (played, or still to come).

    `forward`: each nation whose entry an adjustment brought forward (AD1, `c.entered`), with
    the national turn that adjustment was recorded in (`read_models.entries_brought_forward`,
    `Tracker.passed_over`): its turns after that one were played, as `next` found it at war.
    The campaign alone says neither when, so without it a turn of such a nation is taken as
    its scenario has it: one the campaign played may be called passed over (the caller must
    then check that the turn has no events)."""
    order = c.scenario.turn_order
    entered_by = forward or {}

    def neutral(k: int) -> bool:
        round_, nation = turn_position(order, k)
        return not (c.scenario.at_war(nation, round_) or k > entered_by.get(nation, k))

    if not (1 <= turn < turn_number(order, c.round, c.nation) and neutral(turn)):
        return None
    played = turn - 1
    while played > 1 and neutral(played):
        played -= 1
    round_, nation = turn_position(order, turn)
    return PassedOver(turn, round_, nation, played)
