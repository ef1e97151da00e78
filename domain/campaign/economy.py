"""Movement (F4, F7, SM1), NTR placement, purchases and placement (PU1-PU3), adjustments (AD1)
and research (TE1, TE2)."""

from __future__ import annotations

from domain.campaign.base import CampaignBase
from domain.campaign.events import (
    Adjusted,
    NtrPlaced,
    ResearchPaid,
    TechnologyAdvanced,
    UnitsMoved,
    UnitsPlaced,
    UnitsPurchased,
)
from domain.campaign.record import command
from domain.campaign.state import note_number
from domain.dice import DiceSource
from domain.errors import RuleViolation
from domain.rules import economy, interception, movement, tech, trade, turn


class Economy(CampaignBase):
    """Moves, NTR, purchases, placement, adjustments and research."""

    @command
    def move(self, nation: str, unit_ids: list[str], path: list[str]) -> movement.PlannedMove:
        """F4, F7, SM1; SM2: a submarine group stops at the first hostile zone on its path where
        the enemy may search, and goes on only when that interception is resolved."""
        board = self.board()
        turn.require_turn(board, nation, movement.MOVE_PHASES, "movement")
        self._require_no_procedure()
        for uid in unit_ids:
            if uid in self.movement_ended:
                rule = self.movement_ended[uid]
                how = "submerged or retreated" if rule == "SM4" else "stopped to attack"
                raise RuleViolation(rule, f"{uid} {how} in {self.units[uid]['at']}: its movement has ended this turn")
        plan = movement.plan_move(board, nation, unit_ids, path)
        subs_only = all(board.unit_type(board.units[u]).is_submarine for u in plan.unit_ids)
        if subs_only and interception.pause_index(board, nation, list(plan.path), 0) is not None:
            self._submarine_leg(nation, list(plan.unit_ids), list(plan.path), 0)
            return plan
        self._record(
            UnitsMoved,
            nation=nation,
            units=list(plan.unit_ids),
            path=list(plan.path),
            hostile_passed=list(plan.hostile_passed),
            carried=list(plan.carried),
        )
        return plan

    @command
    def place_ntr(self, nation: str, zone: str, count: int) -> None:
        board = self.board()
        turn.require_turn(board, nation, ("placement",), "NTR placement")
        trade.check_ntr_placement(board, nation, zone, count)
        self._record(NtrPlaced, nation=nation, zone=zone, count=count)

    @command
    def buy(self, nation: str, unit_type: str, count: int = 1) -> int:
        """PU1, PU3: buy units in the purchase phase; returns what they cost."""
        board = self.board()
        turn.require_turn(board, nation, ("purchase",), "buying units")
        cost = economy.check_purchase(board, nation, unit_type, count, self.unplaced.get(nation, {}))
        self._record(UnitsPurchased, nation=nation, unit_type=unit_type, count=count, cost=cost)
        return cost

    @command
    def place(self, nation: str, unit_type: str, zone: str, count: int = 1) -> list[str]:
        """PU2: place units bought this turn; they get the next unused IDs of their type."""
        board = self.board()
        turn.require_turn(board, nation, ("placement",), "placing new units")
        economy.check_placement(board, nation, unit_type, zone, count, self.unplaced.get(nation, {}))
        ids = economy.new_unit_ids(board, self.unit_numbers, nation, unit_type, count)
        self._record(UnitsPlaced, nation=nation, unit_type=unit_type, zone=zone, units=ids)
        return ids

    @command
    def adjust(self, adjustment: economy.Adjustment, reason: str) -> None:
        """AD1: record what the tracker does not model (land combat, territory changes,
        agreed events) as one explicit adjustment with its reason; F8: it may bring a neutral
        nation's entry into the war forward."""
        self._require_no_procedure()
        board = self.board()
        economy.check_adjustment(board, adjustment, reason)
        numbers = dict(self.unit_numbers)
        added = []
        for nation, unit_type, zone, count in adjustment.add:
            for uid in economy.new_unit_ids(board, numbers, nation, unit_type, count):
                note_number(numbers, uid)
                added.append({"id": uid, "type": unit_type, "nation": nation, "at": zone})
        self._record(
            Adjusted,
            added=added,
            removed=list(adjustment.remove),
            resources=dict(adjustment.resources),
            ntr=[{"nation": n, "zone": z, "change": c} for n, z, c in adjustment.ntr],
            owners=dict(adjustment.owners),
            tech=[{"nation": n, "technology": t, "level": lvl} for n, t, lvl in adjustment.tech],
            reason=reason.strip(),
            enter=list(adjustment.enter),
        )

    @command
    def research(self, nation: str, technology: str, dice: DiceSource) -> tuple[int, bool]:
        """TE1: pay for one research roll; on success the technology advances a level (TE2)."""
        board = self.board()
        turn.require_turn(board, nation, ("research",), "research")
        tech.check_research(board, nation, technology, self.research_rolls.get(technology, 0))
        rs = self.ruleset
        self._record(ResearchPaid, nation=nation, technology=technology, cost=rs.research_cost)
        # D3, TE1: the technology by its name ("Advanced ASW", `purposes_in_words`); recorded
        # before the key, by its ID, which `verify` compares exactly.
        named = tech.technology_name(technology) if rs.purposes_in_words else technology
        (value,) = self.roll(
            dice,
            roller=nation,
            rule="TE1",
            purpose=f"{nation} research roll for {named}",
            kind="research",
            target=rs.research_success_min,
            success_when="at_least",
        )
        success = tech.research_succeeds(board, value)
        if success:
            level = self.tech[nation][technology] + 1
            self._record(
                TechnologyAdvanced,
                nation=nation,
                technology=technology,
                level=level,
                acquired=level >= rs.research_levels,
            )
        return value, success
