"""F8: the national turns of neutral nations that `next` passed over. They have no events of
their own (the TurnPassedOver of each is recorded in the turn played before it, or with the
campaign's creation in turn 1 when none was), so a command that reads such a turn says that,
not that it is still to be played."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from domain.campaign import Campaign
from projections.positions import turn_number, turn_position


@dataclass(frozen=True)
class PassedOver:
    """A national turn passed over, and the turn played last before it (whose log holds its
    TurnPassedOver and whose board stands after it), 0 when none was: the first nations in turn
    order neutral in round 1, passed over as the campaign was created (the board then is the one
    it opened with, and turn 1, the creation's, holds their TurnPassedOver)."""

    turn: int
    round: int
    nation: str
    played: int

    @property
    def logged(self) -> int:
        """The national turn whose log holds this turn's TurnPassedOver: the turn played last
        before it, else turn 1, whose events are the campaign's creation."""
        return self.played or 1

    def __str__(self) -> str:
        # Turn 1 holds the events `new` recorded (the creation, the TurnPassedOver), none its own.
        has = "has no events of its own" if self.turn == 1 else "has no events in this campaign"
        return (
            f"turn {self.turn} ({self.nation}, round {self.round}) {has}: a neutral nation's turn is passed over (F8)"
        )


def passed_over(c: Campaign, turn: int, forward: Mapping[str, int] | None = None) -> PassedOver | None:
    """F8: national turn `turn` if the campaign went past it while its nation was neutral, with
    the turn played last before it (0: none); None for any other turn (played, or still to come).

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
    # Down to 0: turn 1 is played unless its nation is neutral in round 1 (no adjustment can
    # bring an entry forward before the campaign is created).
    played = turn - 1
    while played >= 1 and neutral(played):
        played -= 1
    round_, nation = turn_position(order, turn)
    return PassedOver(turn, round_, nation, played)
