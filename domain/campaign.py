"""The Campaign aggregate: the whole board as one consistency boundary, and its events.

Commands check legality with the rule functions, then record events; each event carries
the hash of the one before it (tamper evidence) and its own hash. Dice are rolled in the
command and recorded as data, so replaying the log never rolls again.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.board import Board, Unit
from domain.chain import GENESIS, event_content, event_hash
from domain.dice import SCHEME, DiceSource, clamp_target
from domain.errors import InputError, RuleViolation
from domain.rules import convoy, movement, tech, trade, turn
from domain.rules import hits as hits_rules
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


_F = TypeVar("_F", bound=Callable[..., Any])

# What undo restores (RK3); everything else on the aggregate only moves forward.
UNDOABLE_STATE = (
    "round",
    "nation",
    "phase",
    "units",
    "ntr",
    "ntr_lost",
    "tech",
    "balances",
    "research_rolls",
    "battles",
    "convoy_declared",
    "ntr_lost_phase",
)

# Recorded once at creation and never mutated: not worth copying for a rollback.
_IMMUTABLE_STATE = frozenset({"ruleset_data", "scenario_data"})


def command(method: _F) -> _F:
    """Make a command all-or-nothing on the aggregate (RK2): if it raises part-way, after
    recording some of its events, the aggregate is put back as it was before the call."""

    @functools.wraps(method)
    def wrapper(self: Campaign, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get("_in_command"):
            return method(self, *args, **kwargs)
        saved = {k: (v if k in _IMMUTABLE_STATE else copy.deepcopy(v)) for k, v in self.__dict__.items()}
        self.__dict__["_in_command"] = True
        # Every event of one command carries the version of its first event: an action,
        # the unit that undo (RK3) takes back.
        self.__dict__["_action"] = self.version + 1
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        finally:
            self.__dict__.pop("_in_command", None)
            self.__dict__.pop("_action", None)

    return cast(_F, wrapper)


class Campaign(Aggregate):
    """One campaign: scenario, ruleset, turn position, units, NTR, resources, tech, dice."""

    class Event(Aggregate.Event):
        prev_hash: str
        hash: str
        action: int

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
            agg.battles = {}
            agg.battle_count = 0
            agg.convoy_declared = []
            agg.ntr_lost_phase = {}

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
            agg.convoy_declared = []
            agg.ntr_lost_phase = {}
            agg.round, agg.nation, agg.phase = self.round, self.nation, self.phase

    class UnitsMoved(Event):
        nation: str
        units: list[str]
        path: list[str]
        hostile_passed: list[str]
        carried: list[str]

        def apply(self, agg: Campaign) -> None:
            steps = len(self.path) - 1
            for uid in self.units:
                agg.units[uid]["at"] = self.path[-1]
                agg.units[uid]["moved"] += steps
            for uid in self.carried:
                # Cargo: the aircraft travel aboard and keep their own range for the turn.
                agg.units[uid]["at"] = self.path[-1]

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
        battle: int | None
        unit: str | None

        def apply(self, agg: Campaign) -> None:
            agg.roll_count = self.roll

    class ConvoyAttackDeclared(Event):
        battle: int
        attacker: str
        defender: str
        zone: str
        submarines: list[str]
        ntr: int

        def apply(self, agg: Campaign) -> None:
            agg.battle_count = self.battle
            agg.convoy_declared.append([self.attacker, self.zone])
            agg.battles[str(self.battle)] = {
                "id": self.battle,
                "kind": "convoy",
                "zone": self.zone,
                "attacker": self.attacker,
                "defender": self.defender,
                "subs": list(self.submarines),
                "step": "declared",
                "waiting": [],
                "rule": "CV1",
                "detecting": [],
                "hits": {},
                "chosen": {},
            }

    class BattleAdvanced(Event):
        battle: int
        step: str
        waiting: list[str]
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            if self.step not in ("casualties", "merchant_casualty"):
                # Hits and choices belong to the casualty step just closed.
                b["hits"], b["chosen"] = {}, {}
            b["step"], b["waiting"], b["rule"] = self.step, list(self.waiting), self.rule

    class SearchersChosen(Event):
        battle: int
        units: list[str]

        def apply(self, agg: Campaign) -> None:
            agg.battles[str(self.battle)]["searchers"] = list(self.units)

    class DetectionsRecorded(Event):
        battle: int
        detected: list[str]
        failed: list[str]

        def apply(self, agg: Campaign) -> None:
            agg.battles[str(self.battle)]["detecting"] = list(self.detected)

    class HitsScored(Event):
        battle: int
        side: str
        nation: str
        hits: int
        candidates: list[str]
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            b["hits"][self.side] = {
                "hits": self.hits,
                "candidates": list(self.candidates),
                "nation": self.nation,
            }

    class CasualtiesChosen(Event):
        battle: int
        side: str
        nation: str
        units: list[str]
        default: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            agg.battles[str(self.battle)]["chosen"][self.side] = list(self.units)

    class UnitHit(Event):
        battle: int | None
        unit: str
        sunk: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            if self.sunk:
                del agg.units[self.unit]
                for b in agg.battles.values():
                    for key in ("subs", "detecting"):
                        if self.unit in b.get(key, []):
                            b[key].remove(self.unit)
            else:
                agg.units[self.unit]["damage"] += 1

    class NtrDestroyed(Event):
        battle: int
        nation: str
        zone: str
        count: int
        rolled: int

        def apply(self, agg: Campaign) -> None:
            agg.ntr[self.nation][self.zone] -= self.count
            agg.ntr_lost[self.nation] = agg.ntr_lost.get(self.nation, 0) + self.count
            agg.ntr_lost_phase[self.nation] = agg.ntr_lost_phase.get(self.nation, 0) + self.count

    class BattleEnded(Event):
        battle: int
        rule: str
        survivors: list[str]

        def apply(self, agg: Campaign) -> None:
            del agg.battles[str(self.battle)]

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

    class ActionUndone(Event):
        undone_from: int
        undone_to: int
        actions: list[int]
        restored: dict[str, Any]
        override: bool
        reason: str
        rolls: list[int]

        def apply(self, agg: Campaign) -> None:
            agg.__dict__.update(copy.deepcopy(self.restored))

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
        battles: dict[str, dict[str, Any]]
        battle_count: int
        convoy_declared: list[list[str]]
        ntr_lost_phase: dict[str, int]
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
            "action": cls.INITIAL_VERSION,
        }
        timestamp = cls.Created.create_timestamp()
        digest = event_hash(GENESIS, "Created", cls.INITIAL_VERSION, timestamp, fields)
        return cls._create(
            cls.Created, id=campaign_id, timestamp=timestamp, prev_hash=GENESIS, hash=digest, **fields
        )

    def _record(self, event_class: type[Campaign.Event], **fields: Any) -> None:
        version = self.version + 1
        fields["action"] = self.__dict__.get("_action", version)
        timestamp = event_class.create_timestamp()
        digest = event_hash(self.last_hash, event_class.__name__, version, timestamp, event_content(fields))
        self.trigger_event(event_class, timestamp=timestamp, prev_hash=self.last_hash, hash=digest, **fields)

    # ----- undo (RK3) -----

    def game_state(self) -> dict[str, Any]:
        """The part of the state an undo restores. Dice counters, commitments, battle numbers
        and the hash chain only ever move forward, so undo can never be used to reroll."""
        return copy.deepcopy({k: self.__dict__[k] for k in UNDOABLE_STATE})

    @command
    def undo(
        self,
        undone_from: int,
        actions: list[int],
        restored: dict[str, Any],
        rolls: list[int],
        override: bool = False,
        reason: str = "",
    ) -> None:
        """RK3: append a compensating event that puts the board back as it was before
        `undone_from`; actions that rolled dice are locked unless overridden with a reason."""
        if undone_from <= 1 or undone_from > self.version:
            raise RuleViolation("RK3", f"nothing to undo at event {undone_from}")
        if rolls and not override:
            raise RuleViolation(
                "RK3",
                f"events {undone_from}-{self.version} include dice (roll {', '.join(map(str, rolls))}); "
                "undo them only with --override --reason TEXT",
            )
        if override and not reason.strip():
            raise InputError("an override undo needs --reason TEXT, shown in reports")
        self._record(
            Campaign.ActionUndone,
            undone_from=undone_from,
            undone_to=self.version,
            actions=actions,
            restored=restored,
            override=override,
            reason=reason.strip(),
            rolls=rolls,
        )

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
        battle: int | None = None,
        unit: str | None = None,
        describe: Callable[[list[int]], str] | None = None,
    ) -> list[int]:
        """Roll through the dice service and record one DiceRolled event (D1-D3)."""
        faces = self.ruleset.faces_for(kind)
        number = self.roll_count + 1
        result = dice.roll(number, count, faces, purpose)
        if target is None and base_target is not None:
            target = base_target
        if target is not None:
            target = clamp_target(target, faces)
        outcome = describe(list(result.values)) if describe is not None else ""
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
            battle=battle,
            unit=unit,
        )
        return list(result.values)

    @command
    def reveal_seed(self, seed_hex: str, next_commitment: str) -> None:
        """Publish the current dice seed (checked against its commitment) and commit to the next."""
        from domain.dice import commitment

        if commitment(seed_hex) != self.commitments[-1]:
            raise RuleViolation("D3", "the seed does not match the commitment recorded for it")
        self._record(
            Campaign.SeedRevealed, epoch=self.dice_epoch, seed=seed_hex, next_commitment=next_commitment
        )

    # ----- turn sequence -----

    @command
    def advance(self) -> None:
        """T1, T2: close the current phase and open the next; collect resources when due."""
        board = self.board()
        if self.battles:
            b = min(self.battles.values(), key=lambda b: b["id"])
            raise RuleViolation(
                b["rule"],
                f"battle {b['id']} in {b['zone']} is not finished: {self.describe_waiting(b)}",
            )
        if self.phase == "collect_resources":
            ntr_value, income = trade.collection(board, self.nation)
            collected = ntr_value + income
            self._record(
                Campaign.ResourcesCollected,
                nation=self.nation,
                ntr_value=ntr_value,
                income=income,
                lost=self.ntr_lost_phase.get(self.nation, 0),
                collected=collected,
                balance=self.balances[self.nation] + collected,
            )
        rnd, nation, phase = turn.next_position(
            self.scenario.turn_order, self.ruleset.phases, self.round, self.nation, self.phase
        )
        self._record(Campaign.PhaseAdvanced, round=rnd, nation=nation, phase=phase)

    # ----- movement -----

    @command
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
            carried=list(plan.carried),
        )
        return plan

    # ----- trade -----

    @command
    def place_ntr(self, nation: str, zone: str, count: int) -> None:
        board = self.board()
        turn.require_turn(board, nation, ("placement",), "NTR placement")
        trade.check_ntr_placement(board, nation, zone, count)
        self._record(Campaign.NtrPlaced, nation=nation, zone=zone, count=count)

    # ----- technology -----

    @command
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

    # ----- convoy battles (CV1-CV7) -----

    def describe_waiting(self, b: dict[str, Any]) -> str:
        who = " and ".join(b["waiting"]) or "nobody"
        what = {
            "merchant_defence": "to roll merchant defence (2D10; 20 sinks one submarine)",
            "merchant_casualty": "to choose the submarine sunk by merchant defence",
            "search": "to choose which ships and aircraft search",
            "round": "to roll the combat round",
            "casualties": "to choose casualties",
            "convoy_table": "to roll the convoy table for each taking-part submarine",
        }.get(b["step"], b["step"])
        return f"waiting for {who} {what} [{b['rule']}]"

    def pending(self) -> list[dict[str, Any]]:
        """What the game waits for: one entry per unfinished procedure."""
        return [
            {
                "battle": b["id"],
                "kind": b["kind"],
                "zone": b["zone"],
                "step": b["step"],
                "waiting": list(b["waiting"]),
                "rule": b["rule"],
                "text": f"battle {b['id']} ({b['kind']}, {b['zone']}): {self.describe_waiting(b)}",
            }
            for b in sorted(self.battles.values(), key=lambda b: b["id"])
        ]

    def _battle(self, battle: int, kind: str = "convoy") -> dict[str, Any]:
        b = self.battles.get(str(battle))
        if b is None or b["kind"] != kind:
            active = ", ".join(str(x["id"]) for x in self.battles.values()) or "none"
            raise InputError(f"no {kind} battle {battle} in progress (active: {active})")
        return b

    def _require_step(self, b: dict[str, Any], step: str, rule: str) -> None:
        if b["step"] != step:
            raise RuleViolation(rule, f"battle {b['id']} is {self.describe_waiting(b)}")

    def _advance_battle(self, b: dict[str, Any], step: str, waiting: list[str], rule: str) -> None:
        self._record(Campaign.BattleAdvanced, battle=b["id"], step=step, waiting=waiting, rule=rule)

    @command
    def declare_convoy_attack(self, attacker: str, zone: str, submarines: list[str] | None = None) -> int:
        """CV1: an enemy with submarines in a zone holding the phasing nation's NTR attacks."""
        board = self.board()
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
            Campaign.ConvoyAttackDeclared,
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
                Campaign.HitsScored,
                battle=battle,
                side="attacker",
                nation=b["attacker"],
                hits=1,
                candidates=list(b["subs"]),
                rule="CV2",
            )
            self._advance_battle(b, "merchant_casualty", [b["attacker"]], "CV2")
        else:
            self._advance_battle(b, "search", [b["defender"]], "CV3")
        return total

    @command
    def convoy_choose_casualties(self, battle: int, nation: str, units: list[str] | None) -> list[str]:
        """CV2, CV4, HA7: the owner of the units hit chooses; None takes the cheapest legal choice."""
        b = self._battle(battle)
        if b["step"] not in ("merchant_casualty", "casualties"):
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
            Campaign.CasualtiesChosen,
            battle=battle,
            side=side,
            nation=nation,
            units=chosen,
            default=units is None,
            rule=rule,
        )
        if b["step"] == "merchant_casualty":
            self._remove_casualties(b, {"attacker": chosen}, rule)
            self._advance_battle(b, "search", [b["defender"]], "CV3")
            return chosen
        waiting = [n for n in b["waiting"] if n != hits["nation"]]
        if waiting:
            self._advance_battle(b, "casualties", waiting, "HA7")
        else:
            chosen_all = dict(b["chosen"])
            self._remove_casualties(b, chosen_all, "CV4")
            self._advance_battle(b, "convoy_table", [b["attacker"]], "CV5")
        return chosen

    def _remove_casualties(self, b: dict[str, Any], chosen: dict[str, list[str]], rule: str) -> None:
        """HA7, CV4: casualties are removed together after the round."""
        board = self.board()
        taken: dict[str, int] = {}
        for units in chosen.values():
            for uid in units:
                taken[uid] = taken.get(uid, 0) + 1
        for uid, n in taken.items():
            left = hits_rules.hits_to_sink(board, board.units[uid])
            for i in range(n):
                self._record(Campaign.UnitHit, battle=b["id"], unit=uid, sunk=i + 1 >= left, rule=rule)

    @command
    def convoy_search(self, battle: int, units: list[str] | None, dice: DiceSource) -> list[str]:
        """CV3: the owner (and allies) choose searchers; each rolls; failures take no part."""
        b = self._battle(battle)
        self._require_step(b, "search", "CV3")
        board = self.board()
        if units is None:
            chosen = convoy.eligible_searchers(board, b["defender"], b["zone"])
        else:
            chosen = convoy.check_searchers(board, b["defender"], b["zone"], units)
        self._record(Campaign.SearchersChosen, battle=battle, units=[u.id for u in chosen])
        detected: list[str] = []
        failed: list[str] = []
        for unit in chosen:
            spec = convoy.search_roll(board, unit, b["attacker"])
            (value,) = self.roll(
                dice,
                roller=unit.nation,
                rule="CV3",
                purpose=f"{unit.id} ({unit.type}) convoy search in {b['zone']}",
                kind="convoy_search",
                base_target=spec.base,
                target=spec.target,
                modifiers=spec.modifiers,
                battle=battle,
                unit=unit.id,
            )
            (
                detected
                if value <= clamp_target(spec.target, self.ruleset.faces_for("convoy_search"))
                else failed
            ).append(unit.id)
        self._record(Campaign.DetectionsRecorded, battle=battle, detected=detected, failed=failed)
        if detected:
            self._advance_battle(b, "round", [b["defender"], b["attacker"]], "CV4")
        else:
            self._advance_battle(b, "convoy_table", [b["attacker"]], "CV5")
        return detected

    @command
    def convoy_fire(self, battle: int, dice: DiceSource) -> tuple[int, int]:
        """CV4: one round: detecting units fire at all the attacker's submarines in the zone;
        the submarines fire back at detecting ships only (HA2: never aircraft)."""
        b = self._battle(battle)
        self._require_step(b, "round", "CV4")
        board = self.board()
        subs = convoy.submarines_of(board, b["attacker"], b["zone"])
        detecting = [board.units[u] for u in b["detecting"] if u in board.units]
        faces = self.ruleset.faces_for("convoy_combat")
        hits_on_subs = 0
        for unit in detecting:
            spec = convoy.attack_roll(board, unit, b["attacker"])
            (value,) = self.roll(
                dice,
                roller=unit.nation,
                rule="CV4",
                purpose=f"{unit.id} ({unit.type}) attacks the submarines",
                kind="convoy_combat",
                base_target=spec.base,
                target=spec.target,
                modifiers=spec.modifiers,
                battle=battle,
                unit=unit.id,
            )
            hits_on_subs += value <= clamp_target(spec.target, faces)
        ships = convoy.ship_targets(board, b["detecting"])
        hits_on_ships = 0
        if ships:
            for sub in subs:
                spec = convoy.return_fire_roll(board, sub)
                (value,) = self.roll(
                    dice,
                    roller=sub.nation,
                    rule="CV4",
                    purpose=f"{sub.id} fires back at the detecting ships",
                    kind="convoy_combat",
                    base_target=spec.base,
                    target=spec.target,
                    modifiers=spec.modifiers,
                    battle=battle,
                    unit=sub.id,
                )
                hits_on_ships += value <= clamp_target(spec.target, faces)
        waiting = []
        sub_capacity = hits_rules.capacity(board, subs)
        ship_capacity = hits_rules.capacity(board, ships)
        if hits_on_subs and sub_capacity:
            self._record(
                Campaign.HitsScored,
                battle=battle,
                side="attacker",
                nation=b["attacker"],
                hits=min(hits_on_subs, sub_capacity),
                candidates=[u.id for u in subs],
                rule="CV4",
            )
            waiting.append(b["attacker"])
        if hits_on_ships and ship_capacity:
            self._record(
                Campaign.HitsScored,
                battle=battle,
                side="defender",
                nation=b["defender"],
                hits=min(hits_on_ships, ship_capacity),
                candidates=[u.id for u in ships],
                rule="HA2",
            )
            waiting.append(b["defender"])
        if waiting:
            self._advance_battle(b, "casualties", waiting, "HA7")
        else:
            self._advance_battle(b, "convoy_table", [b["attacker"]], "CV5")
        return hits_on_subs, hits_on_ships

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
                shown = (
                    f"{values[0]}"
                    if adjusted == values[0]
                    else f"{values[0]}{adjusted - values[0]:+d}={adjusted}"
                )
                return f"{shown}: {destroyed} NTR"

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
                Campaign.NtrDestroyed,
                battle=battle,
                nation=b["defender"],
                zone=b["zone"],
                count=count,
                rolled=total,
            )
        self._record(
            Campaign.BattleEnded,
            battle=battle,
            rule="CV7",
            survivors=[u.id for u in survivors if u.id in self.units],
        )
        return count

    @command
    def convoy_auto(self, battle: int, dice: DiceSource) -> None:
        """Resolve the remaining steps with the defaults: every eligible unit searches, the
        cheapest legal casualties are taken."""
        self._battle(battle)
        while str(battle) in self.battles:
            b = self.battles[str(battle)]
            step = b["step"]
            if step == "merchant_defence":
                self.convoy_merchant_defence(battle, dice)
            elif step in ("merchant_casualty", "casualties"):
                self.convoy_choose_casualties(battle, b["waiting"][0], None)
            elif step == "search":
                self.convoy_search(battle, None, dice)
            elif step == "round":
                self.convoy_fire(battle, dice)
            elif step == "convoy_table":
                self.convoy_table(battle, dice)
            else:  # pragma: no cover - every step is handled above
                raise AssertionError(step)

    @command
    def convoy_roll(self, battle: int, dice: DiceSource) -> str:
        """Roll whatever the battle waits for: merchant defence, the round, or the convoy table."""
        b = self._battle(battle)
        step = b["step"]
        if step == "merchant_defence":
            self.convoy_merchant_defence(battle, dice)
        elif step == "round":
            self.convoy_fire(battle, dice)
        elif step == "convoy_table":
            self.convoy_table(battle, dice)
        else:
            raise RuleViolation(b["rule"], f"battle {battle} is {self.describe_waiting(b)}, not a roll")
        return step
