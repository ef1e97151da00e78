"""ASW combat on one's own turn (AS1-AS5): start, search for each submarine, submerge."""

from __future__ import annotations

from domain.campaign.base import CampaignBase
from domain.campaign.battle_events import (
    AswCombatStarted,
    BattleEnded,
    HuntersChosen,
    SubmarinesDetected,
    SubmarinesSubmerged,
)
from domain.campaign.record import command
from domain.dice import DiceSource
from domain.rules import asw, interception, turn


class AswCombat(CampaignBase):
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
        self._advance_battle(self.battles[str(number)], "search", [nation], "AS2")
        return number

    @command
    def asw_search(self, battle: int, units: list[str] | None, dice: DiceSource) -> list[str]:
        """AS2: each unit taking part (None: every eligible one) rolls once against each enemy
        submarine; a submarine is detected if any search against it succeeds."""
        b = self._procedure(battle, "asw")
        self._require_steps(b, ("search",), "AS2")
        board = self.board()
        nation, zone = b["attacker"], b["zone"]
        if units is None:
            chosen = asw.eligible_units(board, nation, zone, self._committed)
        else:
            chosen = asw.check_searchers(board, nation, zone, units, self._committed)
        self._record(
            HuntersChosen,
            battle=battle,
            nation=nation,
            units=[u.id for u in chosen],
            default=units is None,
            rule="AS2",
        )
        subs = [board.units[u] for u in b["subs"] if u in board.units]
        found: set[str] = set()
        for unit in chosen:
            for sub in subs:
                spec = asw.search_roll(board, unit, sub)
                hit = self._roll_at(
                    dice,
                    unit,
                    spec,
                    rule="AS2",
                    purpose=f"{unit.id} ({unit.type}) searches for {sub.id} in {zone}",
                    kind="asw_search",
                    battle=battle,
                )
                if hit:
                    found.add(sub.id)
        detected = [s.id for s in subs if s.id in found]
        self._record(
            SubmarinesDetected,
            battle=battle,
            detected=detected,
            undetected=[s.id for s in subs if s.id not in found],
            default=True,
            rule="AS2",
        )
        if detected and self._fight_goes_on(b):
            self._next_round(b)
        else:
            rule = "AS2" if not detected else "AS3"
            self._record(BattleEnded, battle=battle, rule=rule, survivors=self._in_zone(b))
        return detected

    @command
    def asw_submerge(self, battle: int, units: list[str] | None) -> None:
        """AS5: after a round the submarines' owner submerges any of them (None: all); the
        rest fight another round."""
        b = self._procedure(battle, "asw")
        self._require_steps(b, ("decide",), "AS5")
        chosen = list(b["detected"]) if units is None else list(units)
        asw.check_submerge(b["detected"], chosen)
        if chosen:
            self._record(
                SubmarinesSubmerged,
                battle=battle,
                nation=b["defender"],
                units=chosen,
                default=units is None,
                rule="AS5",
            )
        if b["detected"] and self._fight_goes_on(b):
            self._next_round(b)
        else:
            self._close_fight(b)
