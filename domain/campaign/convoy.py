"""Convoy battles (CV1-CV7): declaration and passes, and the guards of each step; merchant
defence, the search, the round (the shared volley) and the convoy table run on the pure
procedure (`domain.procedures.convoy`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.campaign.battle_events import (
    ConvoyAttackDeclared,
    DetectionsRecorded,
    HitsScored,
    NtrDestroyed,
    SearchersChosen,
)
from domain.campaign.events import ConvoyPassed
from domain.campaign.procedure import Procedure
from domain.campaign.record import command
from domain.campaign.referee import Referee
from domain.dice import DiceSource
from domain.errors import InputError, RuleViolation
from domain.rules import convoy
from domain.text import phase_name, possessive

if TYPE_CHECKING:
    from domain.procedures.base import Fact


class ConvoyBattles(Referee):
    """CV1-CV7: convoy battles in the NTR owner's collect_resources phase."""

    @command
    def declare_convoy_attack(self, attacker: str, zone: str, submarines: list[str] | None = None) -> int:
        """CV1: an enemy with submarines in a zone holding the phasing nation's NTR attacks."""
        board = self.board()
        if attacker in self.convoy_passed:
            raise RuleViolation("CV1", f"{attacker} passed on convoy attacks in this phase and may not declare now")
        subs = submarines
        if subs is None:
            subs = (
                [u.id for u in convoy.submarines_of(board, attacker, zone)]
                if attacker in board.scenario.nations
                else []
            )
        defender = convoy.check_declaration(board, attacker, zone, list(subs), self.convoy_declared)
        number = self.battle_count + 1
        self._record(
            ConvoyAttackDeclared,
            battle=number,
            attacker=attacker,
            defender=defender,
            zone=zone,
            submarines=list(subs),
            ntr=board.ntr[defender][zone],
        )
        self._opened(number)
        return number

    @command
    def convoy_pass(self, nation: str) -> list[str]:
        """CV1, T4: an enemy that may attack convoys this collect_resources phase passes; the pass
        covers every zone, and it may not declare again in this phase."""
        board = self.board()
        if nation not in board.scenario.nations:
            raise InputError(f"unknown nation {nation!r} (known: {', '.join(board.scenario.turn_order)})")
        if self.phase != "collect_resources":
            raise RuleViolation(
                "CV1",
                "convoy attacks (and passes) belong to a collect resources phase; "
                f"it is {possessive(self.nation)} {phase_name(self.phase)}",
            )
        if nation in self.convoy_passed:
            raise RuleViolation("CV1", f"{nation} has already passed in this phase")
        zones: list[str] | None = self.convoy_attacks_open().get(nation)
        if not zones:
            raise RuleViolation(
                "CV1",
                f"{nation} has no convoy attack to declare or pass on {possessive(self.nation)} NTR in this phase",
            )
        self._record(ConvoyPassed, nation=nation, defender=self.nation, zones=zones)
        return zones

    @command
    def convoy_merchant_defence(self, battle: int, dice: DiceSource) -> int:
        """CV2: the NTR owner rolls 2D10 whether or not it has ships there."""
        b = self._battle(battle)
        self._require_step(b, "merchant_defence", "CV2")
        return sum(self._rolled(b, dice).values)

    @command
    def convoy_choose_casualties(self, battle: int, nation: str, units: list[str] | None) -> list[str]:
        """CV2, CV4, HA7: the owner of the units hit chooses; None takes the cheapest legal choice."""
        b = self._battle(battle)
        if b["step"] == "casualties":
            chosen: list[str] = self.choose_casualties(battle, nation, units)
            return chosen
        if b["step"] != "merchant_casualty":
            raise RuleViolation("HA7", self.step_refused(b, "HA7"))
        board = self.board()
        if nation not in board.scenario.nations:
            raise InputError(f"unknown nation {nation!r}")
        side = "attacker" if not board.enemies(nation, b["attacker"]) else "defender"
        hits = b["hits"].get(side)
        if hits is None or hits["nation"] not in b["waiting"]:
            raise RuleViolation("HA7", f"{nation} has no casualties to choose in battle {battle}")
        if nation != hits["nation"]:
            # HA7: the owner chooses. Where allied units share the hits, the nation the battle
            # names for that side (the attacker, or the NTR owner) assigns them.
            raise RuleViolation("HA7", f"{hits['nation']} chooses these casualties, not {nation}")
        return list(self._decided(b, units).facts[0].units)

    @command
    def convoy_search(self, battle: int, units: list[str] | None, dice: DiceSource) -> list[str]:
        """CV3: the owner (and allies) choose searchers; each rolls; failures take no part."""
        b = self._battle(battle)
        self._require_step(b, "search", "CV3")
        chosen = None
        if units is not None:
            found = convoy.check_searchers(self.board(), b["defender"], b["zone"], units, self._committed)
            chosen = [u.id for u in found]
        searchers, facts = self._searched(b, chosen, dice)
        detected = next((f.units for f in facts if f.kind == "detected"), ())
        return [u for u in searchers if u in detected]

    @command
    def convoy_table(self, battle: int, dice: DiceSource) -> int:
        """CV5-CV7: surviving taking-part submarines roll the convoy table; the total destroyed
        is capped at the NTR in the zone; the battle ends after this one round."""
        b = self._battle(battle)
        self._require_step(b, "convoy_table", "CV5")
        facts = self._rolled(b, dice).facts
        return next(f.count for f in facts if f.kind == "ntr_destroyed")

    def _record_fact(self, b: Procedure, fact: Fact, state: Any) -> None:
        """CV2, CV3, CV5: the convoy battle's own facts."""
        if b["kind"] != "convoy":
            super()._record_fact(b, fact, state)
            return
        battle = b["id"]
        if fact.kind == "merchant_defence":
            if fact.count:
                subs = list(b["subs"])
                self._record(
                    HitsScored,
                    battle=battle,
                    side="attacker",
                    nation=b["attacker"],
                    hits=1,
                    candidates=subs,
                    rule="CV2",
                )
                self._advance_battle(b, "merchant_casualty", [b["attacker"]], "CV2")
        elif fact.kind == "searchers":
            if b["step"] != "search":
                # CV3: the search step opens even when nobody is left to search (recorded empty).
                self._advance_battle(b, "search", [b["defender"]], "CV3")
            self._record(SearchersChosen, battle=battle, units=list(fact.units))
        elif fact.kind == "detected":
            found = set(fact.units)
            detected = [u for u in b["searchers"] if u in found]
            failed = [u for u in b["searchers"] if u not in found]
            self._record(DetectionsRecorded, battle=battle, detected=detected, failed=failed)
        elif fact.kind == "ntr_destroyed":
            if fact.count:
                self._record(
                    NtrDestroyed,
                    battle=battle,
                    nation=b["defender"],
                    zone=b["zone"],
                    count=fact.count,
                    rolled=fact.total,
                )
        else:
            super()._record_fact(b, fact, state)

    @command
    def convoy_roll(self, battle: int, dice: DiceSource) -> str:
        """Roll whatever the battle waits for: merchant defence, the round, or the convoy table."""
        b = self._battle(battle)
        step = b["step"]
        if step == "merchant_defence":
            self.convoy_merchant_defence(battle, dice)
        elif step == "fire":
            self.fire(battle, dice)
        elif step == "convoy_table":
            self.convoy_table(battle, dice)
        else:
            raise RuleViolation(b["rule"], self.step_refused(b, b["rule"], ", not a roll"))
        return step
