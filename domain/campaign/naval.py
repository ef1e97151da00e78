"""Naval battles (NC1-NC6): start with opening fire, decisions at the end of a round (submerge,
retreat), the end of a round."""

from __future__ import annotations

from domain.board import Unit
from domain.campaign.base import CampaignBase
from domain.campaign.battle_events import (
    AttackerRetreated,
    NavalBattleStarted,
    OpeningFire,
    RoundStarted,
    SubmarinesSubmerged,
)
from domain.campaign.procedure import Procedure, Side
from domain.campaign.record import command
from domain.errors import RuleViolation
from domain.rules import combat, interception, turn


class NavalBattles(CampaignBase):
    """NC1-NC6: naval battles."""

    @command
    def naval_start(self, nation: str, zone: str) -> int:
        """NC1, NC2: the phasing nation attacks the enemy units in a zone with all its units there;
        the first round opens with the submarines' opening fire."""
        board = self.board()
        turn.require_turn(board, nation, ("naval_combat",), "a naval battle")
        self._require_no_procedure()
        attackers, defenders = combat.check_start(board, nation, zone, self.fought, self._committed)
        number = self.battle_count + 1
        self._record(
            NavalBattleStarted,
            battle=number,
            nation=nation,
            defender=interception.deciding_nation(board, defenders),
            zone=zone,
            attackers=[u.id for u in attackers],
            defenders=[u.id for u in defenders],
            rule="NC1",
        )
        b = self.battles[str(number)]
        self._record(RoundStarted, battle=number, round=1, rule="NC2")
        sides: tuple[tuple[Side, list[Unit], list[Unit]], ...] = (
            ("attacker", attackers, defenders),
            ("defender", defenders, attackers),
        )
        for side, own, other in sides:
            subs = [u for u in own if board.unit_type(u).is_submarine]
            if not subs:
                continue
            escorts = combat.escorts(board, other)
            firing, cancelled = combat.opening_fire(board, subs, escorts)
            self._record(
                OpeningFire,
                battle=number,
                side=side,
                nation=b[side],
                firing=firing,
                cancelled=cancelled,
                escorts=[e.id for e in escorts],
                rule="NC2",
            )
        self._to_targets(b, "opening" if b["opening"] else "main")
        return number

    @command
    def naval_decide(self, battle: int, nation: str, submerge: list[str] | None, retreat_to: str | None) -> None:
        """NC4, NC1: at the end of a round a side's submarines may submerge and the attacker may
        retreat; None for both: fight on."""
        b = self._procedure(battle, "naval")
        self._require_steps(b, ("decide",), "NC4")
        self._require_waiting(b, nation)
        board = self.board()
        side = "attacker" if nation == b["attacker"] else "defender"
        subs = [u.id for u in self._active(b, side) if board.unit_type(u).is_submarine]
        diving = list(submerge or [])
        combat.check_submerge(nation, subs, diving)
        if retreat_to is not None:
            if side != "attacker":
                raise RuleViolation("NC1", f"only the attacker, {b['attacker']}, may retreat from battle {battle}")
            combat.check_retreat(board, nation, b["zone"], retreat_to)
        if diving:
            self._record(
                SubmarinesSubmerged,
                battle=battle,
                nation=nation,
                units=diving,
                default=False,
                rule="NC4",
            )
        if retreat_to is not None:
            leaving = [u.id for u in self._active(b, "attacker")]
            if leaving:
                self._record(
                    AttackerRetreated,
                    battle=battle,
                    nation=nation,
                    units=leaving,
                    zone=retreat_to,
                    rule="NC1",
                )
            self._close_fight(b)
            return
        waiting = [n for n in b["waiting"] if n != nation]
        if waiting:
            self._advance_battle(b, "decide", waiting, "NC4")
        elif self._active(b, "attacker") and self._active(b, "defender") and self._fight_goes_on(b):
            self._next_round(b)
        else:
            self._close_fight(b)

    def _naval_after_round(self, b: Procedure) -> None:
        """NC1, NC4: the battle ends when a side is gone or nobody can hit; otherwise the sides
        with submarines (and the attacker, who may retreat) decide."""
        board = self.board()
        attackers, defenders = self._active(b, "attacker"), self._active(b, "defender")
        if not attackers or not defenders or not self._fight_goes_on(b):
            self._close_fight(b)
            return
        waiting = []
        if combat.retreat_zones(board, b["attacker"], b["zone"]) or any(
            board.unit_type(u).is_submarine for u in attackers
        ):
            waiting.append(b["attacker"])
        if any(board.unit_type(u).is_submarine for u in defenders):
            waiting.append(b["defender"])
        if waiting:
            self._advance_battle(b, "decide", waiting, "NC4")
        else:
            self._next_round(b)
