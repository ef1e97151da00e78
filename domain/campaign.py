"""The Campaign aggregate: the whole board as one consistency boundary, and its events.

Commands check legality with the rule functions, then record events; each event carries
the hash of the one before it (tamper evidence) and its own hash. Dice are rolled in the
command and recorded as data, so replaying the log never rolls again.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.board import Board, Unit
from domain.chain import GENESIS, UPCAST_ADDED, event_content, event_hash, recorded_fields
from domain.dice import SCHEME, DiceSource, ManualDice, NoDice, Override, PromptDice, clamp_target
from domain.errors import DiceError, InputError, RuleViolation
from domain.rules import asw, combat, convoy, economy, interception, movement, record, tech, trade, turn
from domain.rules import hits as hits_rules
from domain.ruleset import AppliedModifier, Ruleset, ruleset_from_recorded
from domain.scenario import Scenario, scenario_from_dict
from domain.text import plural

_scenarios: dict[tuple[str, str], Scenario] = {}


_recent_scenarios: OrderedDict[int, tuple[dict[str, Any], Ruleset, Scenario]] = OrderedDict()


def scenario_from_recorded(data: dict[str, Any], ruleset: Ruleset) -> Scenario:
    """The scenario a campaign recorded, parsed once per process (by content), and found again
    by identity while the same aggregate is in use, without hashing it on every access."""
    from domain.ruleset import content_hash

    hit = _recent_scenarios.get(id(data))
    if hit is not None and hit[0] is data and hit[1] is ruleset:
        return hit[2]
    key = (content_hash(data), ruleset.content_hash)
    if key not in _scenarios:
        _scenarios[key] = scenario_from_dict(data, "recorded scenario", ruleset)
    _recent_scenarios[id(data)] = (data, ruleset, _scenarios[key])
    if len(_recent_scenarios) > 256:
        _recent_scenarios.popitem(last=False)
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


def _new_procedure(battle: int, kind: str, zone: str, attacker: str, defender: str) -> dict[str, Any]:
    """The state every non-convoy procedure keeps: whose move it is, the volley in progress
    (targets and screens), hits waiting to be taken, submerged submarines."""
    return {
        "id": battle,
        "kind": kind,
        "zone": zone,
        "attacker": attacker,
        "defender": defender,
        "step": "started",
        "waiting": [],
        "rule": "",
        "round": 0,
        "hits": {},
        "chosen": {},
        "shots": {},
        "pending_hits": [],
        "groups": [],
        "submerged": [],
        "retreated": [],
    }


_F = TypeVar("_F", bound=Callable[..., Any])

# What undo restores (RK3); everything else on the aggregate only moves forward.
UNDOABLE_STATE = (
    "dice_mode",
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
    "fought",
    "owners",
    "unplaced",
    "unit_numbers",
    "ended",
    "convoy_passed",
    "movement_ended",
    "attack_zones",
    "committed",
    "lost",
)


def _note_number(numbers: dict[str, int], uid: str) -> None:
    """PU2: remember the highest number used for the unit's nation-and-type prefix."""
    parsed = economy.unit_prefix(uid)
    if parsed is not None:
        numbers[parsed[0]] = max(numbers.get(parsed[0], 0), parsed[1])


def _unit_numbers(units: dict[str, dict[str, Any]]) -> dict[str, int]:
    """PU2: the highest number used so far for every nation-and-type prefix (DE-SS -> 5)."""
    numbers: dict[str, int] = {}
    for uid in units:
        _note_number(numbers, uid)
    return numbers


# State added after campaigns were first recorded: what an older snapshot lacks starts so.
_LATER_STATE: dict[str, Callable[[Any], Any]] = {
    "fought": lambda agg: [],
    "owners": lambda agg: dict(agg.scenario.game_map.land),
    "unplaced": lambda agg: {},
    "unit_numbers": lambda agg: _unit_numbers(agg.units),
    "ended": lambda agg: {},
    "convoy_passed": lambda agg: [],
    "movement_ended": lambda agg: {},
    "attack_zones": lambda agg: [],
    "committed": lambda agg: [],
    "lost": lambda agg: {},
}

# Lists in a battle's state that name units: a sunk unit leaves them all.
_UNIT_LISTS = (
    "subs",
    "detecting",
    "searchers",
    "found_by",
    "hunters",
    "detected",
    "undetected",
    "attackers",
    "defenders",
    "opening",
)

# Recorded once at creation and never mutated: not worth copying for a rollback.
_IMMUTABLE_STATE = frozenset({"ruleset_data", "scenario_data"})


def _plain_copy(value: Any) -> Any:
    """A deep copy of the aggregate's plain state (dicts, lists, scalars), several times faster
    than copy.deepcopy, which every command would otherwise pay for."""
    if isinstance(value, dict):
        return {k: _plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_copy(v) for v in value]
    return value


@contextlib.contextmanager
def one_action(campaign: Campaign) -> Iterator[None]:
    """Every command run inside is one action, all or nothing (RK2, RK3): if anything raises
    part-way, the aggregate is put back as it was, and every event recorded carries the
    version of the first one, the unit undo takes back. A CLI command that starts a battle
    and plays it out (`--auto`) is one action, not two."""
    if campaign.__dict__.get("_in_command"):
        yield
        return
    saved = _savepoint(campaign)
    campaign.__dict__["_in_command"] = True
    campaign.__dict__["_action"] = campaign.version + 1
    try:
        yield
    except BaseException:
        _restore(campaign, saved)
        raise
    finally:
        campaign.__dict__.pop("_in_command", None)
        campaign.__dict__.pop("_action", None)


def _savepoint(campaign: Campaign) -> dict[str, Any]:
    """The aggregate's state, copied so that `_restore` can put it back exactly."""
    return {
        k: (list(v) if k == "_pending_events" else v if k in _IMMUTABLE_STATE else _plain_copy(v))
        for k, v in campaign.__dict__.items()
    }


def _restore(campaign: Campaign, saved: dict[str, Any]) -> None:
    campaign.__dict__.clear()
    campaign.__dict__.update(saved)


def command(method: _F) -> _F:
    """Make a command one action on the aggregate (see `one_action`)."""

    @functools.wraps(method)
    def wrapper(self: Campaign, *args: Any, **kwargs: Any) -> Any:
        with one_action(self):
            return method(self, *args, **kwargs)

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
            agg.fought = []
            agg.owners = dict(sc.game_map.land)
            agg.unplaced = {}
            agg.unit_numbers = _unit_numbers(agg.units)
            agg.ended = {}
            agg.convoy_passed = []
            agg.movement_ended = {}
            agg.attack_zones = []
            agg.committed = []
            agg.lost = {}

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
                agg.movement_ended = {}
                agg.attack_zones = []
            agg.convoy_declared = []
            agg.ntr_lost_phase = {}
            agg.fought = []
            agg.convoy_passed = []
            agg.committed = []
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

    class UnitsPurchased(Event):
        """PU1: units bought in the purchase phase, paid for, waiting to be placed."""

        nation: str
        unit_type: str
        count: int
        cost: int

        def apply(self, agg: Campaign) -> None:
            agg.balances[self.nation] -= self.cost
            bought = agg.unplaced.setdefault(self.nation, {})
            bought[self.unit_type] = bought.get(self.unit_type, 0) + self.count

    class UnitsPlaced(Event):
        """PU2: units bought this turn enter the board with new IDs."""

        nation: str
        unit_type: str
        zone: str
        units: list[str]

        def apply(self, agg: Campaign) -> None:
            bought = agg.unplaced[self.nation]
            bought[self.unit_type] -= len(self.units)
            if not bought[self.unit_type]:
                del bought[self.unit_type]
            if not bought:
                del agg.unplaced[self.nation]
            for uid in self.units:
                agg.units[uid] = {
                    "type": self.unit_type,
                    "nation": self.nation,
                    "at": self.zone,
                    "damage": 0,
                    "moved": 0,
                }
                _note_number(agg.unit_numbers, uid)

    class Adjusted(Event):
        """AD1: what the tracker does not model enters the record, with a reason."""

        added: list[dict[str, Any]]
        removed: list[str]
        resources: dict[str, int]
        ntr: list[dict[str, Any]]
        owners: dict[str, str]
        tech: list[dict[str, Any]]
        reason: str

        def apply(self, agg: Campaign) -> None:
            for u in self.added:
                agg.units[u["id"]] = {"type": u["type"], "nation": u["nation"], "at": u["at"], "damage": 0, "moved": 0}
                _note_number(agg.unit_numbers, u["id"])
            for uid in self.removed:
                del agg.units[uid]
                agg.lost[uid] = "removed by an adjustment (AD1)"
            for nation, change in self.resources.items():
                agg.balances[nation] += change
            for n in self.ntr:
                zones = agg.ntr.setdefault(n["nation"], {})
                zones[n["zone"]] = zones.get(n["zone"], 0) + n["change"]
            agg.owners.update(self.owners)
            for t in self.tech:
                agg.tech[t["nation"]][t["technology"]] = t["level"]

    class ConvoyPassed(Event):
        """CV1: an enemy that could attack convoys in this collect_resources phase passes."""

        nation: str
        defender: str
        zones: list[str]

        def apply(self, agg: Campaign) -> None:
            agg.convoy_passed.append(self.nation)

    class AircraftLost(Event):
        """F7: air units that could not land when noncombat_movement ended."""

        nation: str
        units: list[str]
        rule: str

        def apply(self, agg: Campaign) -> None:
            for uid in self.units:
                del agg.units[uid]
                agg.lost[uid] = "lost when it could not land (F7)"

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
            # A redo (RK4) re-records a roll with its original number: the count never rewinds.
            agg.roll_count = max(agg.roll_count, self.roll)

    class ConvoyAttackDeclared(Event):
        battle: int
        attacker: str
        defender: str
        zone: str
        submarines: list[str]
        ntr: int

        def apply(self, agg: Campaign) -> None:
            # A redo re-records a battle's start with its number: the count never goes back.
            agg.battle_count = max(agg.battle_count, self.battle)
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
                # CV4: the round is fought with the selective volley of the other procedures.
                "round": 0,
                "shots": {},
                "pending_hits": [],
                "groups": [],
                "submerged": [],
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
                if "pending_hits" in b:
                    b["pending_hits"], b["groups"] = [], []
            if self.step in ("targets", "opening_targets") and b["step"] != self.step and "shots" in b:
                # A new volley: the targets of the last one are spent.
                b["shots"] = {}
            b["step"], b["waiting"], b["rule"] = self.step, list(self.waiting), self.rule

    class SearchersChosen(Event):
        battle: int
        units: list[str]

        def apply(self, agg: Campaign) -> None:
            agg.battles[str(self.battle)]["searchers"] = list(self.units)
            agg.committed += self.units

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
                agg.lost[self.unit] = f"sunk in battle {self.battle}" if self.battle else "sunk"
                for b in agg.battles.values():
                    for key in _UNIT_LISTS:
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
        class_version = 2

        battle: int
        rule: str
        survivors: list[str]
        reason: str  # why it ended, in words (version 2; empty in older logs)

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["reason"] = ""
            state[UPCAST_ADDED] = ["reason"]

        def apply(self, agg: Campaign) -> None:
            b = agg.battles.pop(str(self.battle))
            agg.ended[str(self.battle)] = [b["kind"], self.rule]

    # ----- submarine movement, ASW combat and naval battles (SM, AS, NC, HA) -----

    class InterceptionStarted(Event):
        """SM2: a submarine group pauses in a hostile zone where the enemy may search."""

        battle: int
        nation: str
        defender: str
        zone: str
        submarines: list[str]
        route: list[str]
        index: int
        retreat: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            agg.battle_count = max(agg.battle_count, self.battle)
            agg.battles[str(self.battle)] = {
                **_new_procedure(self.battle, "interception", self.zone, self.nation, self.defender),
                "subs": list(self.submarines),
                "route": list(self.route),
                "index": self.index,
                "retreat": self.retreat,
                "searchers": [],
                "found": 0,
                "found_by": [],
                "hunters": [],
                "detected": [],
                "undetected": list(self.submarines),
                "retreated": [],
            }

    class AswCombatStarted(Event):
        """AS1: a nation starts ASW combat against the enemy submarines in a zone."""

        battle: int
        nation: str
        defender: str
        zone: str
        submarines: list[str]
        rule: str

        def apply(self, agg: Campaign) -> None:
            agg.battle_count = max(agg.battle_count, self.battle)
            agg.fought.append(["asw", self.zone])
            agg.battles[str(self.battle)] = {
                **_new_procedure(self.battle, "asw", self.zone, self.nation, self.defender),
                "subs": list(self.submarines),
                "searchers": [],
                "hunters": [],
                "detected": [],
                "undetected": list(self.submarines),
            }

    class NavalBattleStarted(Event):
        """NC1: the moving nation attacks the enemy naval units in a zone."""

        battle: int
        nation: str
        defender: str
        zone: str
        attackers: list[str]
        defenders: list[str]
        rule: str

        def apply(self, agg: Campaign) -> None:
            agg.battle_count = max(agg.battle_count, self.battle)
            agg.fought.append(["naval", self.zone])
            agg.committed += self.attackers + self.defenders
            agg.battles[str(self.battle)] = {
                **_new_procedure(self.battle, "naval", self.zone, self.nation, self.defender),
                "attackers": list(self.attackers),
                "defenders": list(self.defenders),
                "opening": [],
                "cancelled": [],
            }

    class HuntersChosen(Event):
        """SM2, AS2: the units the searching side sends to search."""

        battle: int
        nation: str
        units: list[str]
        default: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            b["searchers"] = list(self.units)
            agg.committed += self.units
            if b["kind"] == "asw":
                # AS3: every unit taking part fights, whether or not its own search succeeded.
                b["hunters"] = list(self.units)

    class SearchesResolved(Event):
        """SM3: the successful interception searches; each finds one submarine of the group."""

        battle: int
        found_by: list[str]
        failed: list[str]
        found: int
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            b["found_by"], b["hunters"], b["found"] = list(self.found_by), list(self.found_by), self.found

    class SubmarinesDetected(Event):
        """SM3, AS2: which submarines are detected (they fight) and which are not."""

        battle: int
        detected: list[str]
        undetected: list[str]
        default: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            b["detected"], b["undetected"] = list(self.detected), list(self.undetected)

    class RoundStarted(Event):
        battle: int
        round: int
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            b["round"] = self.round
            if self.round > 1 and "opening" in b:
                b["opening"] = []  # NC2: opening fire is for the first round only

    class OpeningFire(Event):
        """NC2: which submarines of a side fire first, and whose opening fire enemy escorts cancel."""

        battle: int
        side: str
        nation: str
        firing: list[str]
        cancelled: list[str]
        escorts: list[str]
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            b["opening"] += self.firing
            b["cancelled"] += self.cancelled

    class TargetsChosen(Event):
        """HA1, HA3, AS3, SM4: targets picked before any die of the volley is rolled."""

        battle: int
        nation: str
        targets: dict[str, str]
        default: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            shots = agg.battles[str(self.battle)]["shots"]
            for firer, target in self.targets.items():
                shots[firer] = {"target": target, "screen": None}

    class ScreeningChosen(Event):
        """HA1, HA3: escorts that take a shot's hit instead of the ship it targets."""

        battle: int
        nation: str
        screens: dict[str, str]
        default: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            shots = agg.battles[str(self.battle)]["shots"]
            for firer, escort in self.screens.items():
                shots[firer]["screen"] = escort

    class TargetHit(Event):
        """A selective shot hits: the hit falls on `unit` (the target, or the escort screening
        it) and is taken with the round's other casualties."""

        battle: int
        firer: str
        target: str
        unit: str
        rule: str

        def apply(self, agg: Campaign) -> None:
            agg.battles[str(self.battle)]["pending_hits"].append(self.unit)

    class NavalHitsScored(Event):
        """HA4-HA6: hits from non-selective fire of one class, for the owner to allocate."""

        battle: int
        side: str
        nation: str
        firing_class: str
        hits: int
        rule: str

        def apply(self, agg: Campaign) -> None:
            agg.battles[str(self.battle)]["groups"].append(
                {"side": self.side, "nation": self.nation, "class": self.firing_class, "hits": self.hits}
            )

    class FireWithheld(Event):
        """NC6: units that could fire but have nothing their hits may fall on roll no die."""

        battle: int
        units: list[str]
        rule: str

        def apply(self, agg: Campaign) -> None:
            pass

    class HitsLost(Event):
        """NC6, HA4-HA6: hits scored that no unit in the battle may take."""

        battle: int
        side: str
        nation: str
        hits: int
        rule: str

        def apply(self, agg: Campaign) -> None:
            pass

    class SubmarinesSubmerged(Event):
        """SM4, AS5, NC4: the submarines leave the fight and stay in the zone."""

        battle: int
        nation: str
        units: list[str]
        default: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            for key in ("detected", "attackers", "defenders"):
                if key in b:
                    b[key] = [u for u in b[key] if u not in self.units]
            b["submerged"] += self.units
            if b["kind"] == "interception":
                # SM4: a submarine that submerged stays there; its movement ends for the turn.
                agg.movement_ended.update(dict.fromkeys(self.units, "SM4"))

    class SubmarinesRetreated(Event):
        """SM4: detected submarines go back to the zone they came from."""

        battle: int
        nation: str
        units: list[str]
        zone: str
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            for uid in self.units:
                agg.units[uid]["at"] = self.zone
                agg.units[uid]["moved"] += 1
            b["detected"] = [u for u in b["detected"] if u not in self.units]
            b["retreated"] += self.units
            agg.movement_ended.update(dict.fromkeys(self.units, "SM4"))

    class SubmarinesContinued(Event):
        """SM5: the free submarines that go on to their destination, and those that stop here."""

        battle: int
        nation: str
        continuing: list[str]
        stopping: list[str]
        default: bool
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            b["detected"], b["undetected"] = [], []
            if self.stopping:
                # SM5: submarines that stop to attack end their move; a naval battle is due.
                agg.movement_ended.update(dict.fromkeys(self.stopping, "SM5"))
                if b["zone"] not in agg.attack_zones:
                    agg.attack_zones.append(b["zone"])

    class AttackerRetreated(Event):
        """NC1: the attacker leaves the battle, all its remaining units together."""

        battle: int
        nation: str
        units: list[str]
        zone: str
        rule: str

        def apply(self, agg: Campaign) -> None:
            b = agg.battles[str(self.battle)]
            for uid in self.units:
                agg.units[uid]["at"] = self.zone
                agg.units[uid]["moved"] += 1
            b["attackers"] = [u for u in b["attackers"] if u not in self.units]
            b["retreated"] = list(self.units)

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
        """RK3: the board put back as it was before `undone_from`; an override names who agreed
        (`agreed_by`) and why, and lists the locks it lifted and the rolls it took back."""

        class_version = 2

        undone_from: int
        undone_to: int
        actions: list[int]
        restored: dict[str, Any]
        override: bool
        reason: str
        rolls: list[int]
        agreed_by: list[str]
        locks: list[dict[str, Any]]
        undone_rolls: list[dict[str, Any]]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state.update(agreed_by=[], locks=[], undone_rolls=[])
            state[UPCAST_ADDED] = ["agreed_by", "locks", "undone_rolls"]

        def apply(self, agg: Campaign) -> None:
            agg.__dict__.update(copy.deepcopy(self.restored))
            if self.override:
                # The same roll made again after this undo is a reroll (RK3): watch for it.
                watch = agg.__dict__.setdefault("reroll_watch", [])
                watch.extend({**r, "undo": self.originator_version} for r in self.undone_rolls)

    class ActionRedone(Event):
        """RK4: the events that follow (in the same action) re-record action `original`, taken
        back by undo event `undo`, as they were: its dice with their original roll numbers."""

        undo: int
        original: int
        events: list[int]
        rolls: list[int]

        def apply(self, agg: Campaign) -> None:
            watch = agg.__dict__.get("reroll_watch", [])
            watch[:] = [w for w in watch if w["roll"] not in self.rolls]

    class DiceRerolled(Event):
        """RK3: roll `roll` makes again, after override undo `undo`, the roll `rerolls` it took back."""

        roll: int
        rerolls: int
        undo: int
        roller: str
        rule: str

        def apply(self, agg: Campaign) -> None:
            watch = agg.__dict__.get("reroll_watch", [])
            watch[:] = [w for w in watch if w["roll"] != self.rerolls]

    class TypedDiceAccepted(Event):
        """D4, RK3: typed dice in an auto-dice campaign, for this action only, by agreement."""

        rule: str
        reason: str
        agreed_by: list[str]
        roll: int

        def apply(self, agg: Campaign) -> None:
            pass

    class DiceSourceSwitched(Event):
        """D4: the campaign's dice source changes, for a written reason."""

        mode: str
        previous: str
        reason: str

        def apply(self, agg: Campaign) -> None:
            agg.dice_mode = self.mode

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
        fought: list[list[str]]
        owners: dict[str, str]
        unplaced: dict[str, dict[str, int]]
        unit_numbers: dict[str, int]
        ended: dict[str, list[str]]
        convoy_passed: list[str]
        movement_ended: dict[str, str]
        attack_zones: list[str]
        committed: list[str]
        lost: dict[str, str]
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
        return cls._create(cls.Created, id=campaign_id, timestamp=timestamp, prev_hash=GENESIS, hash=digest, **fields)

    def _record(self, event_class: type[Campaign.Event], **fields: Any) -> None:
        if event_class is Campaign.BattleEnded and "reason" not in fields:
            fields["reason"] = self._ending_reason(self.battles[str(fields["battle"])], fields["rule"])
        version = self.version + 1
        fields["action"] = self.__dict__.get("_action", version)
        timestamp = event_class.create_timestamp()
        digest = event_hash(self.last_hash, event_class.__name__, version, timestamp, event_content(fields))
        self.trigger_event(event_class, timestamp=timestamp, prev_hash=self.last_hash, hash=digest, **fields)

    # ----- undo (RK3) and redo (RK4) -----

    def __getattr__(self, name: str) -> Any:
        # Only reached for a missing attribute: state added after an older snapshot was taken.
        make = _LATER_STATE.get(name)
        if make is None:
            raise AttributeError(name)
        value = make(self)
        self.__dict__[name] = value
        return value

    def game_state(self) -> dict[str, Any]:
        """The part of the state an undo restores. Dice counters, commitments, battle numbers
        and the hash chain only ever move forward: the dice sequence never rewinds, and a roll
        made again after an override undo is recorded as a reroll (RK3)."""
        return copy.deepcopy({k: getattr(self, k) for k in UNDOABLE_STATE})

    @command
    def undo(
        self,
        undone_from: int,
        events: Sequence[Campaign.Event],
        restored: dict[str, Any],
        override: Override | None = None,
        reason: str = "",
    ) -> record.UndoPlan:
        """RK3: append a compensating event that puts the board back as it was before
        `undone_from` (`restored`). `events` are every event from `undone_from` on, undone ones
        included. Locked actions (dice rolled, or the other side answered) need an override
        agreed by a nation of the other side, with a reason."""
        if undone_from <= 1 or undone_from > self.version:
            raise RuleViolation("RK3", f"nothing to undo at event {undone_from}")
        plan = record.plan_undo(events, restored, self.scenario)
        if not plan.actions:
            raise RuleViolation("RK3", f"nothing to undo after event {undone_from - 1}: it was all undone already")
        agreed: tuple[str, ...] = ()
        if override is None:
            if plan.locks:
                raise RuleViolation("RK3", record.locked_message(plan))
        else:
            agreed = record.check_override(
                self.scenario, [lock.nation for lock in plan.locks], override, "an override undo"
            )
        self._record(
            Campaign.ActionUndone,
            undone_from=undone_from,
            undone_to=self.version,
            actions=[a.start for a in plan.actions],
            restored=restored,
            override=override is not None,
            # A plain undo may say why too (RK3); an override must (checked above).
            reason=override.reason.strip() if override is not None else reason.strip(),
            rolls=plan.rolls,
            agreed_by=list(agreed),
            locks=[{"action": lock.action, "nation": lock.nation, "because": lock.because} for lock in plan.locks],
            undone_rolls=[dict(r) for r in plan.undone_rolls] if override is not None else [],
        )
        return plan

    @command
    def redo(self, undo: int, original: int, events: Sequence[Campaign.Event]) -> None:
        """RK4: re-record action `original` (its `events`), taken back by undo event `undo`, as
        it was. The caller checks that nothing new was recorded since that undo; the board is
        then exactly as it was before the action, so every event applies as it did."""
        copies = [e for e in events if type(e).__name__ != "ActionRedone"]
        if not copies or any(e.action != original for e in events):
            raise RuleViolation("RK4", f"action {original} cannot be redone: its events were not found")
        # Every action redone is an action again of its own, even when `redo --all` re-records
        # several in one command: undo and redo take them back and forth one by one.
        self.__dict__["_action"] = self.version + 1
        self._record(
            Campaign.ActionRedone,
            undo=undo,
            original=original,
            events=[e.originator_version for e in copies],
            rolls=[e.roll for e in copies if isinstance(e, Campaign.DiceRolled)],
        )
        for e in copies:
            try:
                self._record(type(e), **copy.deepcopy(recorded_fields(dict(vars(e)))))
            except (KeyError, IndexError, ValueError, TypeError) as problem:
                raise RuleViolation(
                    "RK4",
                    f"action {original} cannot be redone: the board is no longer as it was before it "
                    f"(event {e.originator_version}: {type(problem).__name__})",
                ) from None

    @command
    def switch_dice(self, mode: str, reason: str) -> None:
        """D4: change the campaign's dice source, only explicitly and for a written reason."""
        if mode not in ("auto", "manual"):
            raise InputError(f"dice mode must be auto or manual, got {mode!r}")
        if mode == self.dice_mode:
            raise RuleViolation("D4", f"this campaign already uses {mode} dice")
        if not reason.strip():
            raise InputError("a dice switch needs --reason TEXT, shown in verify and reports")
        self._record(Campaign.DiceSourceSwitched, mode=mode, previous=self.dice_mode, reason=reason.strip())

    # ----- reading -----

    @property
    def ruleset(self) -> Ruleset:
        return ruleset_from_recorded(self.ruleset_data)

    @property
    def scenario(self) -> Scenario:
        return scenario_from_recorded(self.scenario_data, self.ruleset)

    @property
    def _submarine_types(self) -> frozenset[str]:
        return frozenset(name for name, ut in self.ruleset.units.items() if ut.is_submarine)

    @property
    def _committed(self) -> frozenset[str]:
        """F7: the units that have taken part in a search or battle this phase."""
        return frozenset(self.committed)

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
            owners=self.owners,
            lost=self.lost,
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
        self._check_dice_source(dice, roller, number, purpose)
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
        self._flag_reroll(number, roller, rule, kind, unit)
        return list(result.values)

    def _check_dice_source(self, dice: DiceSource, roller: str, number: int, purpose: str) -> None:
        """D4: a campaign rolls with the source it was created with (or switched to); a typed roll
        in an auto-dice campaign needs the RK3 override, recorded once per action."""
        source = getattr(dice, "source", self.dice_mode)
        if source == self.dice_mode:
            return
        if self.dice_mode == "manual":
            raise RuleViolation("D4", f"this campaign uses manual dice: {purpose} needs dice typed in with --dice")
        override = getattr(dice, "override", None)
        if override is None:
            raise RuleViolation(
                "D4",
                f"this campaign uses auto dice, so the tracker rolls {purpose}; typed dice need "
                f"--override --reason TEXT --agreed-by NATION (a nation of another side than {roller}, RK3), "
                "or a recorded switch: tracker dice switch manual --reason TEXT",
            )
        agreed = record.check_override(self.scenario, [roller], override, "a typed-dice override")
        action = self.__dict__.get("_action", self.version + 1)
        if not any(isinstance(e, Campaign.TypedDiceAccepted) and e.action == action for e in self.pending_events):
            self._record(
                Campaign.TypedDiceAccepted,
                rule="D4",
                reason=override.reason.strip(),
                agreed_by=list(agreed),
                roll=number,
            )

    def _flag_reroll(self, number: int, roller: str, rule: str, kind: str, unit: str | None) -> None:
        """RK3: a roll made again, in the same position, by the same roller for the same rule
        and unit, after an override undo took the first one back, is recorded as a reroll."""
        key = (self.round, self.nation, self.phase, roller, rule, kind, unit)
        for w in self.__dict__.get("reroll_watch", []):
            if (w["round"], w["nation"], w["phase"], w["roller"], w["rule"], w["kind"], w["unit"]) == key:
                self._record(
                    Campaign.DiceRerolled, roll=number, rerolls=w["roll"], undo=w["undo"], roller=roller, rule=rule
                )
                return

    @command
    def _roll_at(
        self, dice: DiceSource, unit: Unit, spec: Any, *, rule: str, purpose: str, kind: str, battle: int
    ) -> bool:
        """One die for one unit against its (modified) target number; True on a success (D2)."""
        (value,) = self.roll(
            dice,
            roller=unit.nation,
            rule=rule,
            purpose=purpose,
            kind=kind,
            base_target=spec.base,
            target=spec.target,
            modifiers=spec.modifiers,
            battle=battle,
            unit=unit.id,
        )
        return value <= clamp_target(spec.target, self.ruleset.faces_for(kind))

    def reveal_seed(self, seed_hex: str, next_commitment: str) -> None:
        """Publish the current dice seed (checked against its commitment) and commit to the next."""
        from domain.dice import commitment

        if commitment(seed_hex) != self.commitments[-1]:
            raise RuleViolation("D3", "the seed does not match the commitment recorded for it")
        self._record(Campaign.SeedRevealed, epoch=self.dice_epoch, seed=seed_hex, next_commitment=next_commitment)

    # ----- turn sequence -----

    def convoy_attacks_open(self) -> dict[str, list[str]]:
        """CV1, T4: each enemy of the phasing nation that may still declare a convoy attack in
        its collect_resources phase (has not passed), with the zones where it may."""
        if self.phase != "collect_resources":
            return {}
        board = self.board()
        defender = self.nation
        open_: dict[str, list[str]] = {}
        for nation in self.scenario.turn_order:
            if not board.enemies(nation, defender) or nation in self.convoy_passed:
                continue
            zones = [
                zone
                for zone, count in sorted(self.ntr.get(defender, {}).items())
                if count > 0
                and [nation, zone] not in self.convoy_declared
                and convoy.submarines_of(board, nation, zone)
            ]
            if zones:
                open_[nation] = zones
        return open_

    def stranded_aircraft(self) -> list[str]:
        """F7: the phasing nation's air units that would end noncombat_movement with nowhere to
        land: at sea beyond its carriers' room, or in a territory now held by the enemy."""
        board = self.board()
        nation = self.nation
        stranded: list[str] = []
        places = sorted({u.at for u in board.units.values() if u.nation == nation and board.unit_type(u).is_air})
        for place in places:
            air = sorted(u.id for u in board.units_at(place) if u.nation == nation and board.unit_type(u).is_air)
            if board.scenario.game_map.is_land(place):
                if board.enemies(nation, board.owners[place]):
                    stranded += air
                continue
            room = sum(board.unit_type(u).carries for u in board.units_at(place) if u.nation == nation)
            stranded += air[room:]
        return stranded

    def open_items(self) -> list[dict[str, Any]]:
        """What the game waits for (T4): every unfinished procedure; then what the phase still
        requires before it may end (a naval battle due, an enemy that may still declare a
        convoy attack, units to place, air units to land), each with its rule, the nations
        it waits for and the command that closes it. `blocking` items stop `next`."""
        items: list[dict[str, Any]] = []
        for b in sorted(self.battles.values(), key=lambda b: b["id"]):
            items.append(
                {
                    "battle": b["id"],
                    "kind": b["kind"],
                    "zone": b["zone"],
                    "step": b["step"],
                    "waiting": list(b["waiting"]),
                    "rule": b["rule"],
                    "blocking": True,
                    "text": f"battle {b['id']} ({b['kind']}, {b['zone']}): {self.describe_waiting(b)}",
                    "eligible": self._eligible(b),
                    "dice": self._dice_needed(b),
                }
            )
        if items:
            return items

        def item(kind: str, rule: str, waiting: list[str], text: str, zone: str | None = None, **more: Any) -> None:
            items.append(
                {
                    "battle": None,
                    "kind": kind,
                    "zone": zone,
                    "step": "open",
                    "waiting": waiting,
                    "rule": rule,
                    "blocking": more.pop("blocking", True),
                    "text": f"{text} [{rule}]",
                    **more,
                }
            )

        board = self.board()
        for zone in self.due_naval_battles():
            item(
                "naval_due",
                "NC1",
                [self.nation],
                f"naval battle due in {zone}: {self.nation} moved units in or stopped submarines to attack "
                f"({board.describe_zone(zone)})",
                zone,
            )
        for nation, zones in self.convoy_attacks_open().items():
            item(
                "convoy_open",
                "CV1",
                [nation],
                f"{nation} may declare a convoy attack on {self.nation}'s NTR in {', '.join(zones)}, or pass",
                zones[0],
                zones=zones,
                nation=nation,
            )
        for unit_type, count in sorted(self.unplaced.get(self.nation, {}).items()):
            where = ", ".join(economy.placement_zones(board, self.nation, unit_type)) or "none"
            item(
                "unplaced",
                "PU2",
                [self.nation],
                f"{self.nation} has {plural(count, unit_type)} bought and not placed (legal: {where})",
                unit_type=unit_type,
                count=count,
                blocking=self.phase == "placement",
            )
        if self.phase == "noncombat_movement":
            stranded = self.stranded_aircraft()
            if stranded:
                item(
                    "air_landing",
                    "F7",
                    [self.nation],
                    f"{', '.join(stranded)} cannot land when noncombat_movement ends (no territory of its side "
                    "or carrier with room): move it, or confirm the loss",
                    units=stranded,
                )
        return items

    @command
    def advance(self, confirm_losses: bool = False) -> None:
        """T1, T2, T4: close the current phase, if nothing it requires is left open, and open the
        next; collect resources when due. Air units that cannot land are lost only when the
        player confirms it (F7)."""
        gates = [i for i in self.open_items() if i["blocking"]]
        if confirm_losses and gates and all(i["kind"] == "air_landing" for i in gates):
            self._record(Campaign.AircraftLost, nation=self.nation, units=self.stranded_aircraft(), rule="F7")
            gates = []
        if gates:
            more = f" (and {len(gates) - 1} more: see `tracker pending`)" if len(gates) > 1 else ""
            raise RuleViolation("T4", f"{self.phase} cannot end yet: {gates[0]['text']}{more}")
        board = self.board()
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
            Campaign.UnitsMoved,
            nation=nation,
            units=list(plan.unit_ids),
            path=list(plan.path),
            hostile_passed=list(plan.hostile_passed),
            carried=list(plan.carried),
        )
        return plan

    def _require_no_procedure(self) -> None:
        """One procedure at a time in a nation's turn: a move or a new battle waits until the
        game no longer waits for anyone (a paused submarine move included)."""
        if self.battles:
            b = min(self.battles.values(), key=lambda b: b["id"])
            raise RuleViolation(
                b["rule"], f"battle {b['id']} in {b['zone']} is not finished: {self.describe_waiting(b)}"
            )

    # ----- trade -----

    @command
    def place_ntr(self, nation: str, zone: str, count: int) -> None:
        board = self.board()
        turn.require_turn(board, nation, ("placement",), "NTR placement")
        trade.check_ntr_placement(board, nation, zone, count)
        self._record(Campaign.NtrPlaced, nation=nation, zone=zone, count=count)

    # ----- purchase and placement (PU1-PU3) -----

    @command
    def buy(self, nation: str, unit_type: str, count: int = 1) -> int:
        """PU1, PU3: buy units in the purchase phase; returns what they cost."""
        board = self.board()
        turn.require_turn(board, nation, ("purchase",), "buying units")
        cost = economy.check_purchase(board, nation, unit_type, count, self.unplaced.get(nation, {}))
        self._record(Campaign.UnitsPurchased, nation=nation, unit_type=unit_type, count=count, cost=cost)
        return cost

    @command
    def place(self, nation: str, unit_type: str, zone: str, count: int = 1) -> list[str]:
        """PU2: place units bought this turn; they get the next unused IDs of their type."""
        board = self.board()
        turn.require_turn(board, nation, ("placement",), "placing new units")
        economy.check_placement(board, nation, unit_type, zone, count, self.unplaced.get(nation, {}))
        ids = economy.new_unit_ids(board, self.unit_numbers, nation, unit_type, count)
        self._record(Campaign.UnitsPlaced, nation=nation, unit_type=unit_type, zone=zone, units=ids)
        return ids

    # ----- adjustments (AD1) -----

    @command
    def adjust(self, adjustment: economy.Adjustment, reason: str) -> None:
        """AD1: record what the tracker does not model (land combat, territory changes,
        agreed events) as one explicit adjustment with its reason."""
        self._require_no_procedure()
        board = self.board()
        economy.check_adjustment(board, adjustment, reason)
        numbers = dict(self.unit_numbers)
        added = []
        for nation, unit_type, zone, count in adjustment.add:
            for uid in economy.new_unit_ids(board, numbers, nation, unit_type, count):
                _note_number(numbers, uid)
                added.append({"id": uid, "type": unit_type, "nation": nation, "at": zone})
        self._record(
            Campaign.Adjusted,
            added=added,
            removed=list(adjustment.remove),
            resources=dict(adjustment.resources),
            ntr=[{"nation": n, "zone": z, "change": c} for n, z, c in adjustment.ntr],
            owners=dict(adjustment.owners),
            tech=[{"nation": n, "technology": t, "level": lvl} for n, t, lvl in adjustment.tech],
            reason=reason.strip(),
        )

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
        convoy_steps = ("merchant_defence", "merchant_casualty", "search", "convoy_table")
        if b["kind"] != "convoy" or b["step"] not in convoy_steps:
            return self._describe_procedure(b)
        who = " and ".join(b["waiting"]) or "nobody"
        rs = self.ruleset
        board = self.board()
        if b["step"] == "merchant_defence":
            dice = f"{rs.merchant_defence_dice}D{rs.faces_for('merchant_defence')}"
            sinks = rs.merchant_defence_sinks_on_total
            what = f"to roll merchant defence ({dice}; a total of {sinks} sinks one submarine)"
        elif b["step"] == "merchant_casualty":
            what = f"to choose the submarine sunk by merchant defence among {', '.join(b['subs'])}"
        elif b["step"] == "search":
            options = ", ".join(
                f"{u.id} at {convoy.search_roll(board, u, b['attacker']).target}"
                for u in convoy.eligible_searchers(board, b["defender"], b["zone"], self._committed)
            )
            what = f"to choose which ships and aircraft search (eligible: {options or 'none'}; default: all)"
        else:
            subs = [u for u in b["subs"] if u in self.units]
            what = (
                f"to roll the convoy table, 1D{rs.faces_for('convoy_table')} for each taking-part submarine "
                f"in this order: {', '.join(subs)}"
            )
        return f"waiting for {who} {what} [{b['rule']}]"

    def pending(self) -> list[dict[str, Any]]:
        """What the game waits for (see `open_items`)."""
        return self.open_items()

    def _eligible(self, b: dict[str, Any]) -> list[str] | None:
        """The units a search step may send (all of them is the default), for `pending --json`."""
        if b["step"] != "search":
            return None
        board = self.board()
        if b["kind"] == "convoy":
            units = convoy.eligible_searchers(board, b["defender"], b["zone"], self._committed)
        elif b["kind"] == "interception":
            units = interception.eligible_searchers(board, b["attacker"], b["zone"], self._committed)
        else:
            units = asw.eligible_units(board, b["attacker"], b["zone"], self._committed)
        return [u.id for u in units]

    def _dice_needed(self, b: dict[str, Any]) -> dict[str, Any] | None:
        """The dice the step waits for: how many, of how many faces, and in which order (what
        each die is for); searches with every eligible unit. None for a decision."""
        rs, step = self.ruleset, b["step"]
        order: list[str]
        if step == "merchant_defence":
            faces = rs.faces_for("merchant_defence")
            order = [f"merchant defence die {i + 1}" for i in range(rs.merchant_defence_dice)]
        elif step == "convoy_table":
            faces = rs.faces_for("convoy_table")
            order = [u for u in b["subs"] if u in self.units]
        elif step in ("fire", "opening_fire"):
            kind = {"naval": "naval_combat", "convoy": "convoy_combat"}.get(b["kind"], "asw_combat")
            faces = rs.faces_for(kind)
            stage = "opening" if step == "opening_fire" else "main"
            order = [u.id for u, _, legal in self._volley(b, stage) if legal is None or u.id in b.get("shots", {})]
        elif step == "search":
            eligible = self._eligible(b) or []
            if b["kind"] == "asw":
                faces = rs.faces_for("asw_search")
                subs = [u for u in b["subs"] if u in self.units]
                order = [f"{u} vs {s}" for u in eligible for s in subs]
            else:
                faces = rs.faces_for("convoy_search" if b["kind"] == "convoy" else "interception_search")
                order = list(eligible)
        else:
            return None
        return {"count": len(order), "faces": faces, "order": order}

    def _describe_procedure(self, b: dict[str, Any]) -> str:
        """What an interception, ASW combat or naval battle waits for, with what a player needs to
        answer: the eligible units and their target numbers, the legal choices, the dice order."""
        who = " and ".join(b["waiting"]) or "nobody"
        step, kind = b["step"], b["kind"]
        board = self.board()
        if step == "search" and kind == "interception":
            mover = b["attacker"]
            options = ", ".join(
                f"{u.id} at {interception.search_roll(board, u, mover).target}"
                for u in interception.eligible_searchers(board, mover, b["zone"], self._committed)
            )
            what = (
                f"to choose which units search for {mover}'s {', '.join(b['subs'])} passing through "
                f"(eligible: {options}; default: all; none may search)"
            )
        elif step == "search":
            subs = [board.units[u] for u in b["subs"] if u in board.units]
            searchers = asw.eligible_units(board, b["attacker"], b["zone"], self._committed)
            options = ", ".join(
                f"{u.id} at {asw.search_roll(board, u, subs[0]).target}" if subs else u.id for u in searchers
            )
            dice = plural(len(subs) * len(searchers), "die")
            what = (
                f"to choose the units searching for {', '.join(b['subs'])}, each rolling once per submarine "
                f"(eligible: {options}; default: all, {dice} in the order listed, each unit against each submarine)"
            )
        elif step == "detect":
            what = (
                f"to name the {plural(b['found'], 'submarine')} found among {', '.join(b['subs'])} "
                f"(default: {', '.join(b['subs'][: b['found']])})"
            )
        elif step in ("targets", "opening_targets"):
            stage = "opening" if step == "opening_targets" else "main"
            per: dict[str, list[str]] = {}
            for u, _, legal in self._volley(b, stage):
                if legal:
                    per.setdefault(self._chooser(b, u.id), []).append(f"{u.id} at {'/'.join(legal)}")
            what = "to choose targets: " + "; ".join(f"{n}: {', '.join(per[n])}" for n in b["waiting"] if n in per)
            what += " (default: spread, most valuable first)"
        elif step in ("screening", "opening_screening"):
            need = self._screen_choices(b)
            parts = [
                f"{firer}'s shot at {b['shots'][firer]['target']} may be taken by {'/'.join(options)}"
                for n in b["waiting"]
                for firer, options in need.get(n, {}).items()
            ]
            what = f"to choose screening escorts: {'; '.join(parts)} (default: the cheapest loss)"
        elif step in ("fire", "opening_fire"):
            order = [u.id for u, _, legal in self._volley(b, "opening" if step == "opening_fire" else "main")]
            what = f"to roll {plural(len(order), 'die')}, one per firing unit in this order: {', '.join(order)}"
        elif step == "casualties":
            parts = []
            for n in b["waiting"]:
                side = "attacker" if n == b["attacker"] else "defender"
                hits = sum(g["hits"] for g in b["groups"] if g["side"] == side)
                units = ", ".join(u.id for u in self._active(b, side))
                parts.append(f"{n} places {plural(hits, 'hit')} among {units}")
            what = f"to choose casualties: {'; '.join(parts)} (HA4-HA6 order; default: the cheapest legal choice)"
        elif step == "decide" and kind == "interception":
            back = b["route"][b["index"] - 1] if b["index"] > 0 else None
            retreat = f" or retreat to {back}" if back else ""
            what = f"to choose for {', '.join(b['detected'])}: fight on, submerge{retreat} (default: submerge)"
        elif step == "decide" and kind == "asw":
            what = f"to choose which of {', '.join(b['detected'])} submerge (default: all; the others fight on)"
        elif step == "decide":
            parts = []
            for n in b["waiting"]:
                side = "attacker" if n == b["attacker"] else "defender"
                diving = [u.id for u in self._active(b, side) if board.unit_type(u).is_submarine]
                choices = [f"submerge {'/'.join(diving)}"] if diving else []
                if side == "attacker":
                    zones = combat.retreat_zones(board, n, b["zone"])
                    if zones:
                        choices.append(f"retreat to {'/'.join(zones)}")
                parts.append(f"{n}: {' or '.join(choices)}")
            what = f"to decide: {'; '.join(parts)} (default: fight on)"
        elif step == "continue":
            free = [u for u in b["undetected"] + b["detected"] if u in self.units]
            what = (
                f"to choose whether {', '.join(free)} go on to {b['route'][-1]} or stop in {b['zone']} (default: go on)"
            )
        else:
            what = step.replace("_", " ")
        return f"waiting for {who} {what} [{b['rule']}]"

    def _ending_reason(self, b: dict[str, Any], rule: str) -> str:
        """Why a procedure ends, in the words a player would use (the summary of BattleEnded)."""
        kind = b["kind"]
        if kind == "convoy":
            if not any(u in self.units for u in b["subs"]):
                return "no taking-part submarine is left"
            return "it lasts one round; the surviving submarines stay"
        if kind == "naval":
            if b.get("retreated"):
                return f"{b['attacker']} retreated"
            attackers, defenders = self._active(b, "attacker"), self._active(b, "defender")
            if (
                not attackers
                and b["submerged"]
                and any(self.units.get(u, {}).get("nation") == b["attacker"] for u in b["submerged"])
            ):
                return f"every submarine of {b['attacker']} left in the battle submerged"
            if not attackers:
                return f"{b['attacker']} has no unit left in the battle"
            if not defenders:
                return f"{b['defender']} has no unit left in the battle"
            return "no unit left can hit an enemy (NC6)"
        if rule == "SM5":
            return "the submarines not detected went on or stayed; the interception is over"
        if rule == "AS2":
            return "no submarine was detected"
        hunting = "defender" if kind == "interception" else "attacker"
        if not self._active(b, hunting):
            return "no hunting unit is left"
        if not [u for u in b.get("detected", []) if u in self.units]:
            return "every detected submarine was sunk, submerged or went back"
        return "nobody left can attack"

    def require_not_ended(self, battle: int) -> None:
        """CV7 (and every procedure's ending rule): a command for a battle that has ended is
        refused, not taken for a typo."""
        ended = self.ended.get(str(battle))
        if ended is not None:
            kind, rule = ended
            raise RuleViolation(
                "CV7" if kind == "convoy" else rule,
                f"battle {battle} ({kind}) has ended; nothing more can be done in it",
            )

    def _battle(self, battle: int, kind: str = "convoy") -> dict[str, Any]:
        self.require_not_ended(battle)
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
        self._record(Campaign.ConvoyPassed, nation=nation, defender=self.nation, zones=zones)
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
                Campaign.HitsScored,
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
            if any(u in self.units for u in b["subs"]):
                self._to_convoy_search(b)
            else:
                # CV7: merchant defence left no taking-part submarine: no search, round or table.
                self._record(Campaign.BattleEnded, battle=battle, rule="CV7", survivors=[])
            return chosen
        raise AssertionError(b["step"])  # pragma: no cover - both steps are handled above

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
            chosen = convoy.eligible_searchers(board, b["defender"], b["zone"], self._committed)
        else:
            chosen = convoy.check_searchers(board, b["defender"], b["zone"], units, self._committed)
        self._record(Campaign.SearchersChosen, battle=battle, units=[u.id for u in chosen])
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
        self._record(Campaign.DetectionsRecorded, battle=battle, detected=detected, failed=failed)
        if detected:
            self._record(Campaign.RoundStarted, battle=battle, round=1, rule="CV4")
            self._to_targets(b, "main")
        else:
            self._to_convoy_table(b)
        return detected

    def _to_convoy_search(self, b: dict[str, Any]) -> None:
        """CV3: the NTR owner chooses its searchers; with none eligible there is nothing to
        choose, and the empty search is recorded for it."""
        self._advance_battle(b, "search", [b["defender"]], "CV3")
        if not convoy.eligible_searchers(self.board(), b["defender"], b["zone"], self._committed):
            self.convoy_search(b["id"], None, NoDice())

    def _to_convoy_table(self, b: dict[str, Any]) -> None:
        """CV5, CV7: the taking-part submarines still afloat roll the convoy table; with none
        left the battle ends there."""
        if any(u in self.units for u in b["subs"]):
            self._advance_battle(b, "convoy_table", [b["attacker"]], "CV5")
        else:
            self._record(Campaign.BattleEnded, battle=b["id"], rule="CV7", survivors=[])

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
            if not self._auto_step_if_dice_last(battle, dice):
                return

    def _convoy_step(self, battle: int, dice: DiceSource) -> None:
        """The default for the one step a convoy battle waits for."""
        b = self.battles[str(battle)]
        step = b["step"]
        if step == "merchant_defence":
            self.convoy_merchant_defence(battle, dice)
        elif step == "merchant_casualty":
            self.convoy_choose_casualties(battle, b["waiting"][0], None)
        elif step == "search":
            self.convoy_search(battle, None, dice)
        elif step == "convoy_table":
            self.convoy_table(battle, dice)
        else:
            self.auto_step(battle, dice)

    def _auto_step_if_dice_last(self, battle: int, dice: DiceSource) -> bool:
        """Take one default step; with typed dice that ran out exactly before a step that rolls,
        stop there instead (False), so `auto --dice` plays as far as the dice given go. Dice left
        over that cannot complete a step are refused, never dropped."""
        if not isinstance(dice, ManualDice) or isinstance(dice, PromptDice):
            self._one_step(battle, dice)
            return True
        saved, used = _savepoint(self), dice.used
        try:
            self._one_step(battle, dice)
        except DiceError:
            if used < len(dice.values):
                raise
            _restore(self, saved)
            dice.used = used
            return False
        return True

    def _one_step(self, battle: int, dice: DiceSource) -> None:
        if self.battles[str(battle)]["kind"] == "convoy":
            self._convoy_step(battle, dice)
        else:
            self.auto_step(battle, dice)

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

    # ----- submarine movement through hostile zones (SM1-SM5) -----

    def _procedure(self, battle: int, *kinds: str) -> dict[str, Any]:
        self.require_not_ended(battle)
        b = self.battles.get(str(battle))
        if b is None or b["kind"] not in kinds:
            active = (
                ", ".join(f"{x['id']} ({x['kind']})" for x in sorted(self.battles.values(), key=lambda x: x["id"]))
                or "none"
            )
            raise InputError(f"no {' or '.join(kinds)} battle {battle} in progress (active: {active})")
        return b

    def _require_steps(self, b: dict[str, Any], steps: tuple[str, ...], rule: str) -> None:
        if b["step"] not in steps:
            raise RuleViolation(b["rule"] or rule, f"battle {b['id']} is {self.describe_waiting(b)}")

    def _require_waiting(self, b: dict[str, Any], nation: str) -> None:
        if nation not in self.scenario.nations:
            raise InputError(f"unknown nation {nation!r}")
        if nation not in b["waiting"]:
            raise RuleViolation(b["rule"], f"battle {b['id']} is {self.describe_waiting(b)}, not for {nation}")

    def _submarine_leg(self, nation: str, subs: list[str], route: list[str], start: int) -> int | None:
        """SM2, SM5: move a submarine group on from route[start] to the next zone where it must
        pause (an interception starts there) or to its destination."""
        board = self.board()
        pause = interception.pause_index(board, nation, route, start)
        end = pause if pause is not None else len(route) - 1
        if end > start:
            # A group going on from a pause leaves a hostile zone, which SM1 allows: the zone is
            # listed as passed, as it would be for a move that was never stopped there.
            passed = [z for z in route[max(start, 1) : end] if board.is_hostile_for(nation, z)]
            self._record(
                Campaign.UnitsMoved,
                nation=nation,
                units=list(subs),
                path=route[start : end + 1],
                hostile_passed=passed,
                carried=[],
            )
        if pause is None:
            return None
        return self._start_interception(nation, subs, route, pause, retreat=False)

    def _start_interception(self, nation: str, subs: list[str], route: list[str], index: int, retreat: bool) -> int:
        board = self.board()
        zone = route[index]
        defender = interception.deciding_nation(
            board, interception.eligible_searchers(board, nation, zone, self._committed)
        )
        number = self.battle_count + 1
        self._record(
            Campaign.InterceptionStarted,
            battle=number,
            nation=nation,
            defender=defender,
            zone=zone,
            submarines=list(subs),
            route=list(route),
            index=index,
            retreat=retreat,
            rule="SM2",
        )
        self._advance_battle(self.battles[str(number)], "search", [defender], "SM2")
        return number

    @command
    def intercept_search(self, battle: int, units: list[str] | None, dice: DiceSource) -> list[str]:
        """SM2, SM3: the enemy picks which eligible units search (None: all; [] is allowed);
        each rolls one die and every success finds one submarine of the group."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("search",), "SM2")
        board = self.board()
        mover, zone = b["attacker"], b["zone"]
        if units is None:
            chosen = interception.eligible_searchers(board, mover, zone, self._committed)
        else:
            chosen = interception.check_searchers(board, mover, zone, units, self._committed)
        self._record(
            Campaign.HuntersChosen,
            battle=battle,
            nation=b["defender"],
            units=[u.id for u in chosen],
            default=units is None,
            rule="SM2",
        )
        found_by: list[str] = []
        failed: list[str] = []
        for unit in chosen:
            spec = interception.search_roll(board, unit, mover)
            hit = self._roll_at(
                dice,
                unit,
                spec,
                rule="SM3",
                purpose=f"{unit.id} ({unit.type}) interception search in {zone}",
                kind="interception_search",
                battle=battle,
            )
            (found_by if hit else failed).append(unit.id)
        subs = list(b["subs"])
        found = min(len(found_by), len(subs))
        self._record(
            Campaign.SearchesResolved,
            battle=battle,
            found_by=found_by,
            failed=failed,
            found=found,
            rule="SM3",
        )
        if found == 0:
            self._interception_over(b)
        elif found == len(subs):
            self._record(
                Campaign.SubmarinesDetected,
                battle=battle,
                detected=subs,
                undetected=[],
                default=True,
                rule="SM3",
            )
            self._next_round(b)
        else:
            self._advance_battle(b, "detect", [b["defender"]], "SM3")
        return found_by

    @command
    def intercept_detect(self, battle: int, submarines: list[str] | None) -> list[str]:
        """SM3: the searching side names the submarines its successes found (None: the first of
        the group, as they are alike)."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("detect",), "SM3")
        subs = list(b["subs"])
        found = b["found"]
        chosen = subs[:found] if submarines is None else interception.check_detected(subs, found, submarines)
        self._record(
            Campaign.SubmarinesDetected,
            battle=battle,
            detected=chosen,
            undetected=[s for s in subs if s not in chosen],
            default=submarines is None,
            rule="SM3",
        )
        self._next_round(b)
        return chosen

    @command
    def intercept_decide(self, battle: int, submerge: list[str] | None, retreat: list[str] | None) -> None:
        """SM4: after a round, per detected submarine: fight on (not named), submerge (stays,
        its move ends) or retreat to the zone it came from. None for both: all submerge."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("decide",), "SM4")
        nation, route, index = b["attacker"], b["route"], b["index"]
        detected = list(b["detected"])
        back = route[index - 1] if index > 0 else None
        default = submerge is None and retreat is None
        diving = detected if default else list(submerge or [])
        leaving = [] if default else list(retreat or [])
        interception.check_decisions(detected, diving, leaving, back)
        if diving:
            self._record(
                Campaign.SubmarinesSubmerged,
                battle=battle,
                nation=nation,
                units=diving,
                default=default,
                rule="SM4",
            )
        if leaving:
            assert back is not None
            self._record(
                Campaign.SubmarinesRetreated,
                battle=battle,
                nation=nation,
                units=leaving,
                zone=back,
                rule="SM4",
            )
            board = self.board()
            if board.is_hostile_for(nation, back) and interception.eligible_searchers(
                board, nation, back, self._committed
            ):
                # SM4: a retreat into a zone with ASW units may be intercepted there; the
                # group's move then ends there (its route is cut back to that zone).
                self._start_interception(nation, leaving, route[:index], index - 1, retreat=True)
        if b["detected"] and self._fight_goes_on(b):
            self._next_round(b)
        else:
            self._interception_over(b)

    def _interception_over(self, b: dict[str, Any]) -> None:
        """SM5: when nobody fights any more, free submarines go on or stop; otherwise the
        interception ends."""
        free = [u for u in b["undetected"] + b["detected"] if u in self.units]
        if free and b["index"] < len(b["route"]) - 1:
            self._advance_battle(b, "continue", [b["attacker"]], "SM5")
            return
        # SM5 when free submarines stay (their move ends here); SM4 when the fight took them all.
        rule = "SM5" if free else "SM4"
        self._record(Campaign.BattleEnded, battle=b["id"], rule=rule, survivors=self._in_zone(b))

    def _in_zone(self, b: dict[str, Any]) -> list[str]:
        return [u for u in b["subs"] if u in self.units and self.units[u]["at"] == b["zone"]]

    @command
    def intercept_continue(self, battle: int, stop: list[str] | None) -> int | None:
        """SM5: the free submarines continue to their destination (pausing again at a later
        hostile zone) or stop in the zone (None: all continue). Returns a new interception."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("continue",), "SM5")
        free = [u for u in b["undetected"] + b["detected"] if u in self.units]
        stopping = list(stop or [])
        interception.check_stops(free, stopping)
        going = [u for u in free if u not in stopping]
        nation, route, index = b["attacker"], b["route"], b["index"]
        self._record(
            Campaign.SubmarinesContinued,
            battle=battle,
            nation=nation,
            continuing=going,
            stopping=stopping,
            default=stop is None,
            rule="SM5",
        )
        staying = [u for u in self._in_zone(b) if u not in going]
        self._record(Campaign.BattleEnded, battle=battle, rule="SM5", survivors=staying)
        if going:
            return self._submarine_leg(nation, going, route, index)
        return None

    # ----- ASW combat on one's own turn (AS1-AS5) -----

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
            Campaign.AswCombatStarted,
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
            Campaign.HuntersChosen,
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
            Campaign.SubmarinesDetected,
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
            self._record(Campaign.BattleEnded, battle=battle, rule=rule, survivors=self._in_zone(b))
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
                Campaign.SubmarinesSubmerged,
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

    # ----- naval battles (NC1-NC5) -----

    def due_naval_battles(self) -> list[str]:
        """NC1: zones where a naval battle is due this naval_combat phase (T4: `next` waits)."""
        if self.phase != "naval_combat":
            return []
        return combat.due_zones(self.board(), self.nation, self.fought, self.attack_zones)

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
            Campaign.NavalBattleStarted,
            battle=number,
            nation=nation,
            defender=interception.deciding_nation(board, defenders),
            zone=zone,
            attackers=[u.id for u in attackers],
            defenders=[u.id for u in defenders],
            rule="NC1",
        )
        b = self.battles[str(number)]
        self._record(Campaign.RoundStarted, battle=number, round=1, rule="NC2")
        for side, own, other in (("attacker", attackers, defenders), ("defender", defenders, attackers)):
            subs = [u for u in own if board.unit_type(u).is_submarine]
            if not subs:
                continue
            escorts = combat.escorts(board, other)
            firing, cancelled = combat.opening_fire(board, subs, escorts)
            self._record(
                Campaign.OpeningFire,
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
                Campaign.SubmarinesSubmerged,
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
                    Campaign.AttackerRetreated,
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

    # ----- the rounds of ASW combat, interceptions and naval battles -----

    def _active(self, b: dict[str, Any], side: str) -> list[Unit]:
        """The units of a side still fighting: detected submarines and the units hunting them,
        or a naval battle's units not sunk, submerged or retreated."""
        if b["kind"] == "naval":
            ids = b["attackers" if side == "attacker" else "defenders"]
        elif b["kind"] == "convoy":
            # CV4: the detecting units fight all of the attacker's submarines in the zone.
            if side == "defender":
                return [self.board().units[u] for u in b["detecting"] if u in self.units]
            ids = [
                u
                for u, x in self.units.items()
                if x["nation"] == b["attacker"] and x["at"] == b["zone"] and x["type"] in self._submarine_types
            ]
        else:
            hunting = "defender" if b["kind"] == "interception" else "attacker"
            ids = b["hunters"] if side == hunting else b["detected"]
        board = self.board()
        return sorted((board.units[u] for u in ids if u in board.units), key=lambda u: u.id)

    def _side_of(self, b: dict[str, Any], uid: str) -> str:
        return "attacker" if self.units[uid]["nation"] == b["attacker"] else "defender"

    def _chooser(self, b: dict[str, Any], uid: str) -> str:
        """HA7: the nation the battle names for the unit's side makes its side's choices."""
        return str(b[self._side_of(b, uid)])

    def _volley(self, b: dict[str, Any], stage: str) -> list[tuple[Unit, bool, list[str] | None]]:
        """Who fires in this volley, in rolling order (attacker's side first, then by unit):
        (unit, on the attacking side, legal targets of a selective shot or None).

        Stages: "opening" (NC2: the submarines firing first in round one), "main" (the rest
        of the round: those that opened fire have fired), "next" (a whole round to come)."""
        board = self.board()
        fire: list[tuple[Unit, bool, list[str] | None]] = []
        if b["kind"] == "convoy":
            if stage == "next":
                return []  # CV7: one round only
            subs, detecting = self._active(b, "attacker"), self._active(b, "defender")
            ships = [u for u in detecting if board.unit_type(u).is_naval]
            for u in detecting if subs else []:
                # CV4, HA3: a detecting aircraft picks a submarine; a ship's hits are placed by
                # the submarines' owner (HA7).
                legal = [s.id for s in subs] if board.unit_type(u).is_air else None
                if convoy.attack_roll(board, u, b["attacker"]).target > 0:
                    fire.append((u, False, legal))
            for s in subs if ships else []:
                # CV4, HA1, HA2: each submarine picks a detecting ship, never an aircraft.
                fire.append((s, True, [t.id for t in hits_rules.selective_targets(board, s, ships)]))
            return fire
        if b["kind"] != "naval":
            hunting = "defender" if b["kind"] == "interception" else "attacker"
            hunters = self._active(b, hunting)
            detected = self._active(b, "attacker" if hunting == "defender" else "defender")
            for side in ("attacker", "defender"):
                if side == hunting:
                    for u in hunters:
                        if detected and asw.can_attack(board, u):
                            fire.append((u, side == "attacker", [s.id for s in detected]))
                else:
                    for s in detected:
                        legal = [t.id for t in hits_rules.selective_targets(board, s, hunters)]
                        if legal:
                            fire.append((s, side == "attacker", legal))
            return fire
        for side, other in (("attacker", "defender"), ("defender", "attacker")):
            enemies = self._active(b, other)
            for u in self._active(b, side):
                opened = u.id in b["opening"]
                if (stage == "opening" and not opened) or (stage == "main" and opened):
                    continue
                if not combat.can_hit(board, u, side == "attacker", enemies):
                    continue
                if hits_rules.is_selective(board, u):
                    legal = [t.id for t in hits_rules.naval_targets(board, u, enemies)]
                    fire.append((u, side == "attacker", legal))
                else:
                    fire.append((u, side == "attacker", None))
        return fire

    def _fight_goes_on(self, b: dict[str, Any]) -> bool:
        """Whether anyone would still have something to fire at in another round (otherwise
        the fight is over)."""
        return bool(self._volley(b, "next"))

    def _round_rule(self, b: dict[str, Any]) -> str:
        return {"interception": "SM4", "asw": "AS3"}.get(b["kind"], "NC3")

    def _next_round(self, b: dict[str, Any]) -> None:
        self._record(Campaign.RoundStarted, battle=b["id"], round=b["round"] + 1, rule=self._round_rule(b))
        self._to_targets(b, "main")

    def _close_fight(self, b: dict[str, Any]) -> None:
        if b["kind"] == "convoy":
            self._to_convoy_table(b)
            return
        if b["kind"] == "interception":
            self._interception_over(b)
            return
        if b["kind"] == "asw":
            self._record(Campaign.BattleEnded, battle=b["id"], rule="AS5", survivors=self._in_zone(b))
            return
        board = self.board()
        left = [u.id for side in ("attacker", "defender") for u in self._active(b, side)]
        submerged = [u for u in b["submerged"] if u in board.units]
        self._record(Campaign.BattleEnded, battle=b["id"], rule="NC1", survivors=sorted(left + submerged))

    def _withhold_fire(self, b: dict[str, Any], stage: str, volley: list[tuple[Unit, bool, list[str] | None]]) -> None:
        """NC6: a unit of this volley with a value to fire but nothing its hits may fall on rolls
        no die; that is recorded, so nobody wonders where its die went."""
        board = self.board()
        firing = {u.id for u, _, _ in volley}
        idle = [
            u.id
            for side in ("attacker", "defender")
            for u in self._active(b, side)
            if u.id not in firing
            and (u.id in b["opening"]) == (stage == "opening")
            and combat.fire_roll(board, u, side == "attacker").target > 0
        ]
        if idle:
            self._record(Campaign.FireWithheld, battle=b["id"], units=idle, rule="NC6")

    def _to_targets(self, b: dict[str, Any], stage: str) -> None:
        """HA1, HA3, AS3, SM4: the owners of selective shooters pick targets before any roll."""
        volley = self._volley(b, stage)
        if b["kind"] == "naval":
            self._withhold_fire(b, stage, volley)
        if not volley:
            if stage == "opening":
                self._to_targets(b, "main")
            elif b["kind"] == "naval":
                self._naval_after_round(b)
            else:
                self._close_fight(b)
            return
        waiting = list(dict.fromkeys(self._chooser(b, u.id) for u, _, legal in volley if legal))
        rule = {"interception": "SM4", "asw": "AS3", "convoy": "CV4"}.get(
            b["kind"], "NC2" if stage == "opening" else "HA1"
        )
        step = "opening_targets" if stage == "opening" else "targets"
        if not waiting:
            self._to_screening(b, stage)
            return
        # Opening the step clears the last volley's shots, before any target of this one.
        self._advance_battle(b, step, waiting, rule)
        left = list(waiting)
        for nation in waiting:
            # A nation whose every firer has a single legal target has nothing to choose: the
            # tracker records that choice for it (as a default) instead of waiting.
            own = {u.id: legal for u, _, legal in volley if legal and self._chooser(b, u.id) == nation}
            if all(len(legal) == 1 for legal in own.values()):
                targets = {firer: legal[0] for firer, legal in sorted(own.items())}
                self._record(
                    Campaign.TargetsChosen, battle=b["id"], nation=nation, targets=targets, default=True, rule=rule
                )
                left.remove(nation)
        if not left:
            self._to_screening(b, stage)
        elif left != waiting:
            self._advance_battle(b, step, left, rule)

    def _screen_choices(self, b: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
        """HA1, HA3: per deciding nation, the shots of this volley at its ships that an escort
        could take (a shot left from an earlier volley, by a unit not firing now, is none)."""
        board = self.board()
        stage = "opening" if b["step"].startswith("opening") else "main"
        firing = {u.id for u, _, legal in self._volley(b, stage) if legal}
        need: dict[str, dict[str, list[str]]] = {}
        for firer, shot in sorted(b["shots"].items()):
            if firer not in firing:
                continue
            target = board.units.get(shot["target"])
            if target is None:
                continue
            side = self._side_of(b, target.id)
            options = hits_rules.screen_options(board, target, self._active(b, side))
            if options:
                need.setdefault(str(b[side]), {})[firer] = [u.id for u in options]
        return need

    def _to_screening(self, b: dict[str, Any], stage: str) -> None:
        need = self._screen_choices(b)
        if need:
            step = "opening_screening" if stage == "opening" else "screening"
            waiting = [n for n in (b["attacker"], b["defender"]) if n in need]
            self._advance_battle(b, step, waiting, "HA1")
        else:
            self._to_fire(b, stage)

    def _to_fire(self, b: dict[str, Any], stage: str) -> None:
        volley = self._volley(b, stage)
        waiting = list(dict.fromkeys(self._chooser(b, u.id) for u, _, _ in volley))
        rule = {"interception": "SM4", "asw": "AS4", "convoy": "CV4"}.get(
            b["kind"], "NC2" if stage == "opening" else "NC3"
        )
        self._advance_battle(b, "opening_fire" if stage == "opening" else "fire", waiting, rule)

    @command
    def choose_targets(self, battle: int, nation: str, targets: dict[str, str] | None) -> dict[str, str]:
        """HA1-HA3, AS3, SM4: a nation picks the target of each of its selective shooters
        (None: spread over the legal targets, most valuable first)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        self._require_steps(b, ("targets", "opening_targets"), "HA1")
        self._require_waiting(b, nation)
        stage = "opening" if b["step"] == "opening_targets" else "main"
        board = self.board()
        plan: dict[str, list[str]] = {}
        enemies: dict[str, list[Unit]] = {}
        for u, _, legal in self._volley(b, stage):
            if legal and self._chooser(b, u.id) == nation:
                plan[u.id] = legal
                other = "defender" if self._side_of(b, u.id) == "attacker" else "attacker"
                enemies[u.id] = self._active(b, other)
        hunters = {"interception": "defender", "asw": "attacker"}.get(b["kind"])

        def why(firer: str, target: str) -> RuleViolation:
            if hunters is not None and self._side_of(b, firer) == hunters:
                return RuleViolation(
                    b["rule"],
                    f"{firer} must attack a detected submarine still fighting, not {target} "
                    f"(legal: {', '.join(plan[firer])})",
                )
            return hits_rules.why_not_target(board, board.units[firer], board.units[target], enemies[firer], b["rule"])

        if targets is None:
            chosen = hits_rules.default_targets(board, plan)
        else:
            chosen = hits_rules.check_targets(board, b["rule"], nation, plan, targets, why)
        self._record(
            Campaign.TargetsChosen,
            battle=battle,
            nation=nation,
            targets=chosen,
            default=targets is None,
            rule=b["rule"],
        )
        waiting = [n for n in b["waiting"] if n != nation]
        if waiting:
            self._advance_battle(b, b["step"], waiting, b["rule"])
        else:
            self._to_screening(b, stage)
        return chosen

    @command
    def choose_screens(self, battle: int, nation: str, screens: dict[str, str] | None) -> dict[str, str]:
        """HA1, HA3: the owner of targeted ships lets escorts take shots instead, firer -> escort
        (None: the cheapest loss; {} : no screening)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        if b["step"] in ("fire", "opening_fire"):
            raise RuleViolation(
                "HA1",
                f"too late to screen in battle {battle}: screens are chosen before the dice, and this volley's "
                f"targets and screens are set; it is {self.describe_waiting(b)}",
            )
        self._require_steps(b, ("screening", "opening_screening"), "HA1")
        self._require_waiting(b, nation)
        stage = "opening" if b["step"] == "opening_screening" else "main"
        board = self.board()
        side = "attacker" if nation == b["attacker"] else "defender"
        own = self._active(b, side)
        own_ids = {u.id for u in own}
        shots = {f: s["target"] for f, s in sorted(b["shots"].items()) if s["target"] in own_ids}
        air = all(board.unit_type(board.units[f]).is_air for f in shots) if shots else False
        rule = "HA3" if air else "HA1"
        if screens is None:
            chosen = hits_rules.default_screens(board, shots, own)
        else:
            chosen = hits_rules.check_screens(board, rule, nation, shots, own, screens)
        self._record(
            Campaign.ScreeningChosen,
            battle=battle,
            nation=nation,
            screens=chosen,
            default=screens is None,
            rule=rule,
        )
        waiting = [n for n in b["waiting"] if n != nation]
        if waiting:
            self._advance_battle(b, b["step"], waiting, "HA1")
        else:
            self._to_fire(b, stage)
        return chosen

    @command
    def fire(self, battle: int, dice: DiceSource) -> int:
        """SM4, AS4, NC2, NC3: roll one die per firing unit, in the order `pending` lists; the
        casualties of the volley are taken together. Returns the number of hits."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        self._require_steps(b, ("fire", "opening_fire"), "NC3")
        stage = "opening" if b["step"] == "opening_fire" else "main"
        board = self.board()
        naval = b["kind"] == "naval"
        kind = {"naval": "naval_combat", "convoy": "convoy_combat"}.get(b["kind"], "asw_combat")
        rule = b["rule"]
        hunting = {"interception": "defender", "asw": "attacker"}.get(b["kind"])
        groups: dict[tuple[str, str], int] = {}
        scored = 0
        volley = self._volley(b, stage)
        for unit, attacking, legal in volley:
            shot = b["shots"].get(unit.id)
            if legal is not None and shot is None:
                continue
            side = "attacker" if attacking else "defender"
            if b["kind"] == "convoy":
                spec = (
                    convoy.return_fire_roll(board, unit)
                    if attacking
                    else convoy.attack_roll(board, unit, b["attacker"])
                )
            elif naval:
                spec = combat.fire_roll(board, unit, attacking)
            elif side == hunting:
                spec = asw.attack_roll(board, unit, board.units[shot["target"]])
            else:
                spec = asw.return_fire_roll(board, unit, moving=b["kind"] == "interception")
            if shot is not None:
                screen = f", screened by {shot['screen']}" if shot["screen"] else ""
                purpose = f"{unit.id} ({unit.type}) fires at {shot['target']}{screen}"
            else:
                purpose = f"{unit.id} ({unit.type}) fires at {b['defender' if attacking else 'attacker']}'s units"
            hit = self._roll_at(dice, unit, spec, rule=rule, purpose=purpose, kind=kind, battle=battle)
            if not hit:
                continue
            scored += 1
            if shot is not None:
                ut = board.unit_type(unit)
                how = rule if side == hunting else "HA3" if ut.is_air else "HA1"
                self._record(
                    Campaign.TargetHit,
                    battle=battle,
                    firer=unit.id,
                    target=shot["target"],
                    unit=shot["screen"] or shot["target"],
                    rule=how,
                )
            else:
                other = "defender" if attacking else "attacker"
                key = (other, board.unit_type(unit).unit_class)
                groups[key] = groups.get(key, 0) + 1
        waiting: list[str] = []
        order = list(self.ruleset.hit_priority)

        def group_order(key: tuple[str, str]) -> tuple[bool, int, str]:
            # HA5/HA6 hits are placed in the ruleset's order of firing classes, then the rest.
            side, firing_class = key
            return (
                side != "attacker",
                order.index(firing_class) if firing_class in order else len(order),
                firing_class,
            )

        for (side, firing_class), n in sorted(groups.items(), key=lambda kv: group_order(kv[0])):
            self._record(
                Campaign.NavalHitsScored,
                battle=battle,
                side=side,
                nation=b[side],
                firing_class=firing_class,
                hits=n,
                rule=hits_rules.priority_rule(firing_class),
            )
        for side in ("attacker", "defender"):
            own = [g for g in b["groups"] if g["side"] == side]
            if not own:
                continue
            spec_groups = [(g["class"], g["hits"]) for g in own]
            units = self._active(b, side)
            taken = Counter(u for u in b["pending_hits"] if u in {x.id for x in units})
            nc6 = b["kind"] == "naval"
            placeable = hits_rules.allocate(board, b[side], spec_groups, units, taken, None, nc6)
            lost = sum(n for _, n in spec_groups) - len(placeable)
            if lost:
                # NC6, HA4-HA6: hits with no unit left that they may fall on are lost, and said so.
                if b["kind"] == "convoy":
                    rule = "CV4"
                else:
                    rule = "NC6" if any(board.unit_type(u).is_submarine for u in units) else "NC3"
                self._record(Campaign.HitsLost, battle=battle, side=side, nation=b[side], hits=lost, rule=rule)
            if hits_rules.allocation_is_forced(board, spec_groups, units, taken, nc6):
                chosen = placeable
                if not chosen:
                    continue  # every unit there is already lost to this volley: the hits are lost
                self._record(
                    Campaign.CasualtiesChosen,
                    battle=battle,
                    side=side,
                    nation=b[side],
                    units=chosen,
                    default=True,
                    rule=hits_rules.priority_rule(spec_groups[0][0]),
                )
            else:
                waiting.append(b[side])
        if waiting:
            self._advance_battle(b, "casualties", waiting, "HA7")
        else:
            self._end_volley(b, stage)
        return scored

    @command
    def choose_casualties(self, battle: int, nation: str, units: list[str] | None) -> list[str]:
        """HA4-HA7: the owner places the non-selective hits on its units, within the order the
        rules impose (None: the cheapest legal choice)."""
        b = self._procedure(battle, "naval", "convoy")
        self._require_steps(b, ("casualties",), "HA7")
        self._require_waiting(b, nation)
        board = self.board()
        side = "attacker" if nation == b["attacker"] else "defender"
        groups = [(g["class"], g["hits"]) for g in b["groups"] if g["side"] == side]
        own = self._active(b, side)
        taken = Counter(u for u in b["pending_hits"] if u in {x.id for x in own})
        chosen = hits_rules.allocate(board, nation, groups, own, taken, units, b["kind"] == "naval")
        self._record(
            Campaign.CasualtiesChosen,
            battle=battle,
            side=side,
            nation=nation,
            units=chosen,
            default=units is None,
            rule="HA7",
        )
        waiting = [n for n in b["waiting"] if n != nation]
        if waiting:
            self._advance_battle(b, "casualties", waiting, "HA7")
        else:
            self._end_volley(b, "main")
        return chosen

    def _take_hits(self, b: dict[str, Any], units: list[str], rule: str) -> None:
        """F3, NC5: every hit on a unit, together; a capital ship's first hit damages it. A hit
        on a unit already sunk this volley (two shots at one target) is lost."""
        board = self.board()
        for uid, n in Counter(units).items():
            if uid not in board.units:
                continue
            left = hits_rules.hits_to_sink(board, board.units[uid])
            for i in range(min(n, left)):
                self._record(Campaign.UnitHit, battle=b["id"], unit=uid, sunk=i + 1 >= left, rule=rule)

    def _end_volley(self, b: dict[str, Any], stage: str) -> None:
        """NC2: opening-fire casualties go before the other units fire; NC3, AS4, SM4: every other
        volley's casualties go together after it."""
        units = list(b["pending_hits"]) + [u for side in ("attacker", "defender") for u in b["chosen"].get(side, [])]
        rule = {"interception": "SM4", "asw": "AS4", "convoy": "CV4"}.get(
            b["kind"], "NC2" if stage == "opening" else "NC3"
        )
        self._take_hits(b, units, rule)
        if b["kind"] == "convoy":
            self._to_convoy_table(b)
        elif b["kind"] != "naval":
            if b["detected"] and self._fight_goes_on(b):
                nation = b["attacker"] if b["kind"] == "interception" else b["defender"]
                self._advance_battle(b, "decide", [nation], "SM4" if b["kind"] == "interception" else "AS5")
            else:
                self._close_fight(b)
        elif stage == "opening":
            if self._active(b, "attacker") and self._active(b, "defender"):
                self._to_targets(b, "main")
            else:
                self._close_fight(b)
        else:
            self._naval_after_round(b)

    def _naval_after_round(self, b: dict[str, Any]) -> None:
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

    @command
    def battle_auto(self, battle: int, dice: DiceSource) -> list[int]:
        """Resolve a procedure with the default choices, and the interceptions it leads to
        (a group going on or retreating); returns the battles resolved."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        if b["kind"] == "convoy":
            self.convoy_auto(battle, dice)
            return [battle]
        todo, done = [battle], []
        while todo:
            number = todo[0]
            if str(number) not in self.battles:
                done.append(todo.pop(0))
                continue
            before = self.battle_count
            if not self._auto_step_if_dice_last(number, dice):
                break  # the typed dice ran out: the battle waits for the next roll
            todo.extend(range(before + 1, self.battle_count + 1))
        return done

    @command
    def auto_step(self, battle: int, dice: DiceSource) -> None:
        """Take the default for the one step a procedure waits for (whoever's it is)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        step, kind, first = b["step"], b["kind"], (b["waiting"] or [""])[0]
        if step == "search":
            if kind == "interception":
                self.intercept_search(battle, None, dice)
            else:
                self.asw_search(battle, None, dice)
        elif step == "detect":
            self.intercept_detect(battle, None)
        elif step in ("targets", "opening_targets"):
            self.choose_targets(battle, first, None)
        elif step in ("screening", "opening_screening"):
            self.choose_screens(battle, first, None)
        elif step in ("fire", "opening_fire"):
            self.fire(battle, dice)
        elif step == "casualties":
            self.choose_casualties(battle, first, None)
        elif step == "decide":
            if kind == "interception":
                self.intercept_decide(battle, None, None)
            elif kind == "asw":
                self.asw_submerge(battle, None)
            else:
                self.naval_decide(battle, first, None, None)
        elif step == "continue":
            self.intercept_continue(battle, None)
        else:  # pragma: no cover - every step is handled above
            raise AssertionError(step)
