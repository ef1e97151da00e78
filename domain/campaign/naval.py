"""Naval battles (NC1-NC6): who may start one and decide after a round (the guards); opening
fire, the rounds and the decisions run on the pure procedure (`domain.procedures.naval`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.campaign.battle_events import AttackerRetreated, FireWithheld, NavalBattleStarted, OpeningFire
from domain.campaign.procedure import Procedure
from domain.campaign.record import command
from domain.campaign.referee import Referee, context_for
from domain.errors import RuleViolation
from domain.rules import combat, interception, turn

if TYPE_CHECKING:
    from domain.procedures.base import Fact, Facts, Side


class NavalBattles(Referee):
    """NC1-NC6: naval battles."""

    @command
    def naval_start(self, nation: str, zone: str) -> int:
        """NC1, NC2: the phasing nation attacks the enemy units in a zone with all its units there;
        the first round opens with the submarines' opening fire."""
        board = self.board()
        turn.require_turn(board, nation, ("naval_combat",), "a naval battle")
        self._require_no_procedure()
        attackers, defenders = combat.check_start(board, nation, zone, self.fought, self._committed)
        combat.check_not_submarines_alone(
            board, nation, zone, defenders, zone in self.attack_zones, self.fought, self._committed
        )
        number = self.battle_count + 1
        defender = interception.deciding_nation(board, defenders)
        self._record(
            NavalBattleStarted,
            battle=number,
            nation=nation,
            defender=defender,
            zone=zone,
            attackers=[u.id for u in attackers],
            defenders=[u.id for u in defenders],
            rule="NC1",
        )
        # The procedure is imported with the first battle (see `domain.campaign.referee`).
        from domain.procedures import naval
        from domain.procedures.base import Piece

        ctx = context_for(board)
        state, facts = naval.start(
            ctx,
            nation,
            defender,
            tuple(Piece(u.id, u.type, u.nation, u.damage) for u in attackers),
            tuple(Piece(u.id, u.type, u.nation, u.damage) for u in defenders),
            tuple(combat.retreat_zones(board, nation, zone)),
        )
        self._record_facts(self.battles[str(number)], state, ctx, facts)
        return number

    @command
    def naval_decide(self, battle: int, nation: str, submerge: list[str] | None, retreat_to: str | None) -> None:
        """NC4, NC1: at the end of a round a side's submarines may submerge and the attacker may
        retreat; None for both: fight on."""
        b = self._procedure(battle, "naval")
        self._require_steps(b, ("decide",), "NC4")
        self._require_waiting(b, nation)
        board = self.board()
        side: Side = "attacker" if nation == b["attacker"] else "defender"
        subs = [u.id for u in self._active(b, side) if board.unit_type(u).is_submarine]
        diving = list(submerge or [])
        combat.check_submerge(nation, subs, diving)
        if retreat_to is not None:
            if side != "attacker":
                raise RuleViolation("NC1", f"only the attacker, {b['attacker']}, may retreat from battle {battle}")
            combat.check_retreat(board, nation, b["zone"], retreat_to)
        from domain.procedures.naval import NavalDecision

        self._decided(b, NavalDecision(tuple(diving), retreat_to), side)

    def _record_fact(self, b: Procedure, fact: Fact, state: Any) -> None:
        """NC2, NC6, NC1: the naval battle's own facts."""
        if b["kind"] != "naval":
            super()._record_fact(b, fact, state)
            return
        battle = b["id"]
        lists = dict(fact.lists)
        if fact.kind == "opening_fire":
            assert fact.side is not None
            self._record(
                OpeningFire,
                battle=battle,
                side=fact.side,
                nation=self._nation(b, fact.side),
                firing=list(fact.units),
                cancelled=list(lists["cancelled"]),
                escorts=list(lists["escorts"]),
                rule=fact.rule,
            )
        elif fact.kind == "fire_withheld":
            self._record(FireWithheld, battle=battle, units=list(fact.units), rule=fact.rule)
        elif fact.kind == "retreated":
            if fact.units:
                (zone,) = lists["to"]
                units = list(fact.units)
                self._record(
                    AttackerRetreated, battle=battle, nation=b["attacker"], units=units, zone=zone, rule=fact.rule
                )
        else:
            super()._record_fact(b, fact, state)

    def _survivors(self, b: Procedure, facts: Facts) -> list[str]:
        """NC1: a naval battle's units left in it, and its submerged submarines."""
        if b["kind"] != "naval":
            return super()._survivors(b, facts)
        left = [u for u in b["attackers"] + b["defenders"] if u in self.units]
        return sorted(left + [u for u in b["submerged"] if u in self.units])
