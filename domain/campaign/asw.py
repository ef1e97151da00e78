"""ASW combat on one's own turn (AS1-AS5): who may start it and search (the guards), and each
step run on the pure procedure (`domain.procedures.asw`)."""

from __future__ import annotations

from domain.campaign.battle_events import AswCombatStarted
from domain.campaign.record import command
from domain.campaign.referee import Referee
from domain.dice import DiceSource
from domain.rules import asw, interception, turn


class AswCombat(Referee):
    """AS1-AS5: ASW combat."""

    @command
    def asw_start(self, nation: str, zone: str) -> int:
        """AS1: in its naval_combat phase a nation with escorts there, or aircraft in reach,
        starts ASW combat against the enemy submarines in a zone (once per zone and phase)."""
        board = self.board()
        turn.require_turn(board, nation, ("naval_combat",), "ASW combat")
        self._require_no_procedure()
        subs = asw.check_start(board, nation, zone, self.fought, self._committed)
        number = self.battle_count + 1
        self._record(
            AswCombatStarted,
            battle=number,
            nation=nation,
            defender=interception.deciding_nation(board, subs),
            zone=zone,
            submarines=[u.id for u in subs],
            rule="AS1",
        )
        self._opened(number)
        return number

    @command
    def asw_search(self, battle: int, units: list[str] | None, dice: DiceSource) -> list[str]:
        """AS2: each unit taking part (None: every eligible one) rolls once against each enemy
        submarine; a submarine is detected if any search against it succeeds."""
        b = self._procedure(battle, "asw")
        self._require_steps(b, ("search",), "AS2")
        chosen = None
        if units is not None:
            found = asw.check_searchers(self.board(), b["attacker"], b["zone"], units, self._committed)
            chosen = [u.id for u in found]
        subs = list(b["subs"])
        _, facts = self._searched(b, chosen, dice)
        detected = next(f.units for f in facts if f.kind == "detected")
        return [u for u in subs if u in detected]

    @command
    def asw_submerge(self, battle: int, units: list[str] | None) -> None:
        """AS5: after a round the submarines' owner submerges any of them (None: all); the
        rest fight another round."""
        b = self._procedure(battle, "asw")
        self._require_steps(b, ("decide",), "AS5")
        self._decided(b, None if units is None else list(units))
