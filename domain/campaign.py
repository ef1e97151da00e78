"""The Campaign aggregate: the whole board as one consistency boundary, and its events.

Commands check legality with the rule functions, then record events; each event carries
the hash of the one before it (tamper evidence) and its own hash. Dice are rolled in the
command and recorded as data, so replaying the log never rolls again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.board import Board, Unit
from domain.chain import GENESIS, event_content, event_hash
from domain.dice import SCHEME, DiceSource, clamp_target
from domain.errors import InputError, RuleViolation
from domain.rules import movement, tech, trade, turn
from domain.ruleset import AppliedModifier, Ruleset, ruleset_from_recorded
from domain.scenario import Scenario, scenario_from_dict

_scenarios: dict[tuple[str, str], Scenario] = {}


def scenario_from_recorded(data: dict[str, Any], ruleset: Ruleset) -> Scenario:
    from domain.ruleset import content_hash

    key = (content_hash(data), ruleset.content_hash)
    if key not in _scenarios:
        _scenarios[key] = scenario_from_dict(data, "recorded scenario", ruleset)
    return _scenarios[key]


def initial_units(scenario: Scenario, ruleset: Ruleset) -> dict[str, dict[str, Any]]:
    """Number every starting unit: nation code, type abbreviation, count (GB-DD3)."""
    units: dict[str, dict[str, Any]] = {}
    counters: dict[tuple[str, str], int] = {}
    for group in scenario.units:
        code = scenario.nations[group.nation].code
        abbr = ruleset.units[group.type].abbr
        for _ in range(group.count):
            n = counters[(code, abbr)] = counters.get((code, abbr), 0) + 1
            units[f"{code}-{abbr}{n}"] = {
                "type": group.type,
                "nation": group.nation,
                "at": group.at,
                "damage": 0,
                "moved": 0,
            }
    return units


class Campaign(Aggregate):
    """One campaign: scenario, ruleset, turn position, units, NTR, resources, tech, dice."""

    class Event(Aggregate.Event):
        prev_hash: str
        hash: str

        def mutate(self, aggregate: Any) -> Any:
            agg = super().mutate(aggregate)
            assert agg is not None
            agg.last_hash = self.hash
            return agg

    class Created(Event, Aggregate.Created):
        name: str
        scenario: dict[str, Any]
        ruleset: dict[str, Any]
        dice_mode: str
        dice_scheme: str
        seed_commitment: str

        def apply(self, agg: Campaign) -> None:
            rs = ruleset_from_recorded(self.ruleset)
            sc = scenario_from_recorded(self.scenario, rs)
            agg.name = self.name
            agg.scenario_data = self.scenario
            agg.ruleset_data = self.ruleset
            agg.dice_mode = self.dice_mode
            agg.dice_scheme = self.dice_scheme
            agg.commitments = [self.seed_commitment]
            agg.revealed_seeds = []
            agg.roll_count = 0
            agg.round = 1
            agg.nation = sc.turn_order[0]
            agg.phase = rs.phases[0]
            agg.units = initial_units(sc, rs)
            agg.ntr = {n: dict(nat.ntr) for n, nat in sc.nations.items()}
            agg.ntr_lost = {n: 0 for n in sc.nations}
            agg.tech = {n: {t: nat.tech.get(t, 0) for t in rs.technologies} for n, nat in sc.nations.items()}
            agg.balances = {n: nat.resources for n, nat in sc.nations.items()}
            agg.research_rolls = {}

    class PhaseAdvanced(Event):
        round: int
        nation: str
        phase: str

        def apply(self, agg: Campaign) -> None:
            if self.nation != agg.nation or self.round != agg.round:
                # A new national turn: its movement allowances and research rolls start afresh.
                for unit in agg.units.values():
                    if unit["nation"] == self.nation:
                        unit["moved"] = 0
                agg.research_rolls = {}
            agg.round, agg.nation, agg.phase = self.round, self.nation, self.phase

    class UnitsMoved(Event):
        nation: str
        units: list[str]
        path: list[str]
        hostile_passed: list[str]

        def apply(self, agg: Campaign) -> None:
            steps = len(self.path) - 1
            for uid in self.units:
                agg.units[uid]["at"] = self.path[-1]
                agg.units[uid]["moved"] += steps

    class NtrPlaced(Event):
        nation: str
        zone: str
        count: int

        def apply(self, agg: Campaign) -> None:
            zones = agg.ntr.setdefault(self.nation, {})
            zones[self.zone] = zones.get(self.zone, 0) + self.count

    class DiceRolled(Event):
        roll: int
        epoch: int
        roller: str
        rule: str
        purpose: str
        kind: str
        faces: int
        values: list[int]
        source: str
        reference: str | None
        base_target: int | None
        target: int | None
        modifiers: list[dict[str, Any]]
        success_when: str
        outcome: str

        def apply(self, agg: Campaign) -> None:
            agg.roll_count = self.roll

    class ResearchPaid(Event):
        nation: str
        technology: str
        cost: int

        def apply(self, agg: Campaign) -> None:
            agg.balances[self.nation] -= self.cost
            agg.research_rolls[self.technology] = agg.research_rolls.get(self.technology, 0) + 1

    class TechnologyAdvanced(Event):
        nation: str
        technology: str
        level: int
        acquired: bool

        def apply(self, agg: Campaign) -> None:
            agg.tech[self.nation][self.technology] = self.level

    class ResourcesCollected(Event):
        nation: str
        ntr_value: int
        income: int
        lost: int
        collected: int
        balance: int

        def apply(self, agg: Campaign) -> None:
            agg.balances[self.nation] = self.balance

    class SeedRevealed(Event):
        epoch: int
        seed: str
        next_commitment: str

        def apply(self, agg: Campaign) -> None:
            agg.revealed_seeds.append(self.seed)
            agg.commitments.append(self.next_commitment)

    # Attributes set by Created.apply, declared for type checkers only: at run time an
    # annotation here would become a constructor argument of the aggregate.
    if TYPE_CHECKING:
        name: str
        scenario_data: dict[str, Any]
        ruleset_data: dict[str, Any]
        dice_mode: str
        dice_scheme: str
        commitments: list[str]
        revealed_seeds: list[str]
        roll_count: int
        round: int
        nation: str
        phase: str
        units: dict[str, dict[str, Any]]
        ntr: dict[str, dict[str, int]]
        ntr_lost: dict[str, int]
        tech: dict[str, dict[str, int]]
        balances: dict[str, int]
        research_rolls: dict[str, int]
        last_hash: str

    @classmethod
    def create(
        cls,
        campaign_id: UUID,
        name: str,
        scenario: dict[str, Any],
        ruleset: dict[str, Any],
        dice_mode: str,
        seed_commitment: str,
    ) -> Campaign:
        if dice_mode not in ("auto", "manual"):
            raise InputError(f"dice mode must be auto or manual, got {dice_mode!r}")
        fields = {
            "name": name,
            "scenario": scenario,
            "ruleset": ruleset,
            "dice_mode": dice_mode,
            "dice_scheme": SCHEME,
            "seed_commitment": seed_commitment,
        }
        timestamp = cls.Created.create_timestamp()
        digest = event_hash(GENESIS, "Created", cls.INITIAL_VERSION, timestamp, fields)
        return cls._create(
            cls.Created, id=campaign_id, timestamp=timestamp, prev_hash=GENESIS, hash=digest, **fields
        )

    def _record(self, event_class: type[Campaign.Event], **fields: Any) -> None:
        version = self.version + 1
        timestamp = event_class.create_timestamp()
        digest = event_hash(self.last_hash, event_class.__name__, version, timestamp, event_content(fields))
        self.trigger_event(event_class, timestamp=timestamp, prev_hash=self.last_hash, hash=digest, **fields)

    # ----- reading -----

    @property
    def ruleset(self) -> Ruleset:
        return ruleset_from_recorded(self.ruleset_data)

    @property
    def scenario(self) -> Scenario:
        return scenario_from_recorded(self.scenario_data, self.ruleset)

    @property
    def dice_epoch(self) -> int:
        return len(self.revealed_seeds)

    def board(self) -> Board:
        return Board(
            scenario=self.scenario,
            ruleset=self.ruleset,
            units={uid: Unit(id=uid, **u) for uid, u in self.units.items()},
            ntr=self.ntr,
            tech=self.tech,
            balances=self.balances,
            round=self.round,
            nation=self.nation,
            phase=self.phase,
        )

    # ----- dice -----

    def roll(
        self,
        dice: DiceSource,
        *,
        roller: str,
        rule: str,
        purpose: str,
        kind: str,
        count: int = 1,
        base_target: int | None = None,
        modifiers: Sequence[AppliedModifier] = (),
        target: int | None = None,
        success_when: str = "at_most",
    ) -> list[int]:
        """Roll through the dice service and record one DiceRolled event (D1-D3)."""
        faces = self.ruleset.faces_for(kind)
        number = self.roll_count + 1
        result = dice.roll(number, count, faces, purpose)
        if target is None and base_target is not None:
            target = base_target
        if target is not None:
            target = clamp_target(target, faces)
        outcome = ""
        if target is not None:
            if success_when == "at_most":
                hits = sum(1 for v in result.values if v <= target)
            else:
                hits = sum(1 for v in result.values if v >= target)
            outcome = "success" if count == 1 and hits else "failure" if count == 1 else f"{hits} successes"
        self._record(
            Campaign.DiceRolled,
            roll=number,
            epoch=self.dice_epoch,
            roller=roller,
            rule=rule,
            purpose=purpose,
            kind=kind,
            faces=faces,
            values=list(result.values),
            source=result.source,
            reference=result.reference,
            base_target=base_target,
            target=target,
            modifiers=[m.as_dict() for m in modifiers],
            success_when=success_when,
            outcome=outcome,
        )
        return list(result.values)

    def reveal_seed(self, seed_hex: str, next_commitment: str) -> None:
        """Publish the current dice seed (checked against its commitment) and commit to the next."""
        from domain.dice import commitment

        if commitment(seed_hex) != self.commitments[-1]:
            raise RuleViolation("D3", "the seed does not match the commitment recorded for it")
        self._record(
            Campaign.SeedRevealed, epoch=self.dice_epoch, seed=seed_hex, next_commitment=next_commitment
        )

    # ----- turn sequence -----

    def advance(self) -> None:
        """T1, T2: close the current phase and open the next; collect resources when due."""
        board = self.board()
        if self.phase == "collect_resources":
            ntr_value, income = trade.collection(board, self.nation)
            collected = ntr_value + income
            self._record(
                Campaign.ResourcesCollected,
                nation=self.nation,
                ntr_value=ntr_value,
                income=income,
                lost=0,
                collected=collected,
                balance=self.balances[self.nation] + collected,
            )
        rnd, nation, phase = turn.next_position(
            self.scenario.turn_order, self.ruleset.phases, self.round, self.nation, self.phase
        )
        self._record(Campaign.PhaseAdvanced, round=rnd, nation=nation, phase=phase)

    # ----- movement -----

    def move(self, nation: str, unit_ids: list[str], path: list[str]) -> movement.PlannedMove:
        board = self.board()
        turn.require_turn(board, nation, movement.MOVE_PHASES, "movement")
        plan = movement.plan_move(board, nation, unit_ids, path)
        self._record(
            Campaign.UnitsMoved,
            nation=nation,
            units=list(plan.unit_ids),
            path=list(plan.path),
            hostile_passed=list(plan.hostile_passed),
        )
        return plan

    # ----- trade -----

    def place_ntr(self, nation: str, zone: str, count: int) -> None:
        board = self.board()
        turn.require_turn(board, nation, ("placement",), "NTR placement")
        trade.check_ntr_placement(board, nation, zone, count)
        self._record(Campaign.NtrPlaced, nation=nation, zone=zone, count=count)

    # ----- technology -----

    def research(self, nation: str, technology: str, dice: DiceSource) -> tuple[int, bool]:
        """TE1: pay for one research roll; on success the technology advances a level (TE2)."""
        board = self.board()
        turn.require_turn(board, nation, ("research",), "research")
        tech.check_research(board, nation, technology, self.research_rolls.get(technology, 0))
        rs = self.ruleset
        self._record(Campaign.ResearchPaid, nation=nation, technology=technology, cost=rs.research_cost)
        (value,) = self.roll(
            dice,
            roller=nation,
            rule="TE1",
            purpose=f"{nation} research roll for {technology}",
            kind="research",
            target=rs.research_success_min,
            success_when="at_least",
        )
        success = tech.research_succeeds(board, value)
        if success:
            level = self.tech[nation][technology] + 1
            self._record(
                Campaign.TechnologyAdvanced,
                nation=nation,
                technology=technology,
                level=level,
                acquired=level >= rs.research_levels,
            )
        return value, success
