"""F8: the national turns of neutral nations that `next` passed over. They have no events of
their own (the TurnPassedOver of each is recorded in the turn played before it), so a command
that reads such a turn says that, not that it is still to be played."""

from __future__ import annotations

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


def passed_over(c: Campaign, turn: int) -> PassedOver | None:
    """F8: national turn `turn` if the campaign went past it while its nation was neutral;
    None for any other turn (played, or still to come)."""
    order = c.scenario.turn_order

    def neutral(k: int) -> bool:
        round_, nation = turn_position(order, k)
        return not c.scenario.at_war(nation, round_)

    if not (1 <= turn < turn_number(order, c.round, c.nation) and neutral(turn)):
        return None
    played = turn - 1
    while played > 1 and neutral(played):
        played -= 1
    round_, nation = turn_position(order, turn)
    return PassedOver(turn, round_, nation, played)
