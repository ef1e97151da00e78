"""Convoy battles (CV1-CV7): declaration and passes, merchant defence, the search, the round (with
the shared volley machinery) and the convoy table."""

from __future__ import annotations

from domain.board import Unit
from domain.campaign.base import CampaignBase
from domain.campaign.battle_events import (
    BattleEnded,
    CasualtiesChosen,
    ConvoyAttackDeclared,
    DetectionsRecorded,
    HitsScored,
    NtrDestroyed,
    RoundStarted,
    SearchersChosen,
    UnitHit,
)
from domain.campaign.events import ConvoyPassed
from domain.campaign.procedure import Procedure
from domain.campaign.record import command
from domain.dice import DiceSource, NoDice
from domain.errors import InputError, RuleViolation
from domain.rules import convoy
from domain.rules import hits as hits_rules


class ConvoyBattles(CampaignBase):
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
        self._advance_battle(self.battles[str(number)], "merchant_defence", [defender], "CV2")
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
                f"convoy attacks (and passes) belong to a collect_resources phase; it is {self.nation}'s {self.phase}",
            )
        if nation in self.convoy_passed:
            raise RuleViolation("CV1", f"{nation} has already passed in this phase")
        zones = self.convoy_attacks_open().get(nation)
        if not zones:
            raise RuleViolation(
                "CV1", f"{nation} has no convoy attack to declare or pass on {self.nation}'s NTR in this phase"
            )
        self._record(ConvoyPassed, nation=nation, defender=self.nation, zones=zones)
        return zones

    @command
    def convoy_merchant_defence(self, battle: int, dice: DiceSource) -> int:
        """CV2: the NTR owner rolls 2D10 whether or not it has ships there."""
        b = self._battle(battle)
        self._require_step(b, "merchant_defence", "CV2")
        rs = self.ruleset
        values = self.roll(
            dice,
            roller=b["defender"],
            rule="CV2",
            purpose=f"{b['defender']} merchant defence in {b['zone']}",
            kind="merchant_defence",
            count=rs.merchant_defence_dice,
            success_when="total",
            battle=battle,
            describe=lambda v: (
                f"total {sum(v)}: "
                + ("sinks one submarine" if sum(v) >= rs.merchant_defence_sinks_on_total else "no effect")
            ),
        )
        total = sum(values)
        sinks = total >= rs.merchant_defence_sinks_on_total
        if sinks and b["subs"]:
            self._record(
                HitsScored,
                battle=battle,
                side="attacker",
                nation=b["attacker"],
                hits=1,
                candidates=list(b["subs"]),
                rule="CV2",
            )
            self._advance_battle(b, "merchant_casualty", [b["attacker"]], "CV2")
            if len(b["subs"]) == 1:
                # A single taking-part submarine: nothing to choose (the loss is recorded as a default).
                self.convoy_choose_casualties(battle, b["attacker"], None)
        else:
            self._to_convoy_search(b)
        return total

    @command
    def convoy_choose_casualties(self, battle: int, nation: str, units: list[str] | None) -> list[str]:
        """CV2, CV4, HA7: the owner of the units hit chooses; None takes the cheapest legal choice."""
        b = self._battle(battle)
        if b["step"] == "casualties":
            return self.choose_casualties(battle, nation, units)
        if b["step"] != "merchant_casualty":
            raise RuleViolation("HA7", f"battle {battle} is {self.describe_waiting(b)}")
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
        candidates = [board.units[u] for u in hits["candidates"] if u in board.units]
        rule = "CV2" if b["step"] == "merchant_casualty" else "HA7"
        if units is None:
            chosen = hits_rules.default_casualties(board, candidates, hits["hits"])
        else:
            chosen = hits_rules.check_casualties(board, rule, nation, candidates, hits["hits"], units)
        self._record(
            CasualtiesChosen,
            battle=battle,
            side=side,
            nation=nation,
            units=chosen,
            default=units is None,
            rule=rule,
        )
        if b["step"] == "merchant_casualty":
            self._remove_casualties(b, {"attacker": chosen}, rule)
            if any(u in self.units for u in b["subs"]):
                self._to_convoy_search(b)
            else:
                # CV7: merchant defence left no taking-part submarine: no search, round or table.
                self._record(BattleEnded, battle=battle, rule="CV7", survivors=[])
            return chosen
        raise AssertionError(b["step"])  # pragma: no cover - both steps are handled above

    def _remove_casualties(self, b: Procedure, chosen: dict[str, list[str]], rule: str) -> None:
        """HA7, CV4: casualties are removed together after the round."""
        board = self.board()
        taken: dict[str, int] = {}
        for units in chosen.values():
            for uid in units:
                taken[uid] = taken.get(uid, 0) + 1
        for uid, n in taken.items():
            left = hits_rules.hits_to_sink(board, board.units[uid])
            for i in range(n):
                self._record(UnitHit, battle=b["id"], unit=uid, sunk=i + 1 >= left, rule=rule)

    @command
    def convoy_search(self, battle: int, units: list[str] | None, dice: DiceSource) -> list[str]:
        """CV3: the owner (and allies) choose searchers; each rolls; failures take no part."""
        b = self._battle(battle)
        self._require_step(b, "search", "CV3")
        board = self.board()
        if units is None:
            chosen = convoy.eligible_searchers(board, b["defender"], b["zone"], self._committed)
        else:
            chosen = convoy.check_searchers(board, b["defender"], b["zone"], units, self._committed)
        self._record(SearchersChosen, battle=battle, units=[u.id for u in chosen])
        detected: list[str] = []
        failed: list[str] = []
        for unit in chosen:
            spec = convoy.search_roll(board, unit, b["attacker"])
            hit = self._roll_at(
                dice,
                unit,
                spec,
                rule="CV3",
                purpose=f"{unit.id} ({unit.type}) convoy search in {b['zone']}",
                kind="convoy_search",
                battle=battle,
            )
            (detected if hit else failed).append(unit.id)
        self._record(DetectionsRecorded, battle=battle, detected=detected, failed=failed)
        if detected:
            self._record(RoundStarted, battle=battle, round=1, rule="CV4")
            self._to_targets(b, "main")
        else:
            self._to_convoy_table(b)
        return detected

    def _to_convoy_search(self, b: Procedure) -> None:
        """CV3: the NTR owner chooses its searchers; with none eligible there is nothing to
        choose, and the empty search is recorded for it."""
        self._advance_battle(b, "search", [b["defender"]], "CV3")
        if not convoy.eligible_searchers(self.board(), b["defender"], b["zone"], self._committed):
            self.convoy_search(b["id"], None, NoDice())

    def _to_convoy_table(self, b: Procedure) -> None:
        """CV5, CV7: the taking-part submarines still afloat roll the convoy table; with none
        left the battle ends there."""
        if any(u in self.units for u in b["subs"]):
            self._advance_battle(b, "convoy_table", [b["attacker"]], "CV5")
        else:
            self._record(BattleEnded, battle=b["id"], rule="CV7", survivors=[])

    @command
    def convoy_table(self, battle: int, dice: DiceSource) -> int:
        """CV5-CV7: surviving taking-part submarines roll the convoy table; the total destroyed
        is capped at the NTR in the zone; the battle ends after this one round."""
        b = self._battle(battle)
        self._require_step(b, "convoy_table", "CV5")
        board = self.board()
        total = 0
        survivors = [board.units[u] for u in b["subs"] if u in board.units]
        for sub in survivors:

            def describe(values: list[int], sub: Unit = sub) -> str:
                adjusted, destroyed, _ = convoy.convoy_table(board, sub, values[0])
                if adjusted == values[0]:
                    return f"{destroyed} NTR"
                return f"{values[0]}{adjusted - values[0]:+d}={adjusted}: {destroyed} NTR"

            (value,) = self.roll(
                dice,
                roller=sub.nation,
                rule="CV5",
                purpose=f"{sub.id} attacks the convoy in {b['zone']}",
                kind="convoy_table",
                modifiers=convoy.convoy_table(board, sub, 1)[2],
                battle=battle,
                unit=sub.id,
                describe=describe,
            )
            total += convoy.convoy_table(board, sub, value)[1]
        present = self.ntr[b["defender"]].get(b["zone"], 0)
        count = min(total, present)
        if count:
            self._record(
                NtrDestroyed,
                battle=battle,
                nation=b["defender"],
                zone=b["zone"],
                count=count,
                rolled=total,
            )
        self._record(
            BattleEnded,
            battle=battle,
            rule="CV7",
            survivors=[u.id for u in survivors if u.id in self.units],
        )
        return count

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
            raise RuleViolation(b["rule"], f"battle {battle} is {self.describe_waiting(b)}, not a roll")
        return step
