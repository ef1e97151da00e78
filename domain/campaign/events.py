"""The events of the Campaign aggregate outside its procedures (creation, turn sequence, movement,
economy, dice, undo and redo) and how each folds into the state."""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar

from eventsourcing.domain import (
    Aggregate,
    EventsourcingType,
    MetaDomainEvent,
    OriginatorIDError,
    OriginatorVersionError,
)

from domain.campaign.state import initial_units, note_number, scenario_from_recorded, unit_numbers
from domain.chain import UPCAST_ADDED
from domain.ruleset import ruleset_from_recorded

if TYPE_CHECKING:
    from domain.campaign import Campaign


class LeanEventType(MetaDomainEvent):
    """eventsourcing's event metaclass without its per-class `dataclass(frozen=True)`.

    That decorator compiles six generated methods for each of the campaign's ~50 event classes,
    which was most of the CPU of loading the domain, and so of every command's cold start. The
    campaign's events get the same behaviour once, from `Event`'s methods over the field names
    this type collects: a keyword (or positional) `__init__` that refuses missing or unknown
    fields and runs `__post_init__`, frozen attributes, equality, hash and repr by fields. Events
    are still built, stored and decoded by eventsourcing as before (`__dict__` holds exactly the
    fields, in order)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        cls: Any = EventsourcingType.__new__(mcs, name, bases, namespace)
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            if "__dataclass_fields__" in klass.__dict__:
                own = [f.name for f in dataclasses.fields(klass)]
            else:
                own = list(klass.__dict__.get("__event_own_fields__", ()))
            names.extend(n for n in own if n not in names)
        annotations = namespace.get("__annotations__", {})
        own_fields = tuple(
            n for n, kind in annotations.items() if n not in names and not str(kind).startswith("ClassVar")
        )
        cls.__event_own_fields__ = own_fields
        cls.__event_fields__ = (*names, *own_fields)
        return cls


class Event(Aggregate.Event, metaclass=LeanEventType):
    __event_fields__: ClassVar[tuple[str, ...]]

    prev_hash: str
    hash: str
    action: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = type(self).__event_fields__
        if args:
            if len(args) > len(names):
                raise TypeError(f"{type(self).__name__}() takes {len(names)} fields, {len(args)} given")
            for n, value in zip(names, args, strict=False):
                if n in kwargs:
                    raise TypeError(f"{type(self).__name__}() got two values for {n!r}")
                kwargs[n] = value
        if len(kwargs) != len(names) or not all(n in kwargs for n in names):
            missing = [n for n in names if n not in kwargs]
            unknown = [n for n in kwargs if n not in names]
            raise TypeError(f"{type(self).__name__}() missing {missing}, unexpected {unknown}")
        object.__setattr__(self, "__dict__", {n: kwargs[n] for n in names})
        self.__post_init__()

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in self.__dict__.items())
        return f"{type(self).__qualname__}({fields})"

    def mutate(self, aggregate: Any) -> Any:
        if aggregate is None:
            # The first event makes the aggregate (eventsourcing's Created.mutate).
            agg = super().mutate(aggregate)
            assert agg is not None
        else:
            # eventsourcing's checks and updates of CanMutateAggregate.mutate, on the attributes
            # behind its properties (eventsourcing 9.5): folding the log is a tenth of a
            # projection rebuild, and of loading and verifying, through those calls.
            agg = aggregate
            if self.originator_id is not agg._id and self.originator_id != agg._id:
                raise OriginatorIDError(self.originator_id, agg._id)
            next_version = agg._version + 1
            if self.originator_version != next_version:
                raise OriginatorVersionError(self.originator_version, next_version)
            self.apply(agg)
            agg._version = self.originator_version
            agg._modified_on = self.timestamp
        agg.last_hash = self.hash
        return agg


class Created(Event, Aggregate.Created):
    """The campaign's first event: its scenario and ruleset as recorded, its dice, and (PL1) the
    player who created it through a league server (None for a campaign created locally)."""

    class_version = 2

    name: str
    scenario: dict[str, Any]
    ruleset: dict[str, Any]
    dice_mode: str
    dice_scheme: str
    seed_commitment: str
    created_by: str | None

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        # Campaigns created before PL1 named no creator.
        state["created_by"] = None
        state[UPCAST_ADDED] = ["created_by"]

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
        agg.unit_numbers = unit_numbers(agg.units)
        agg.ended = {}
        agg.convoy_passed = []
        agg.movement_ended = {}
        agg.attack_zones = []
        agg.committed = []
        agg.lost = {}
        # `entered` (F8) is set by the first adjustment that brings an entry forward: until
        # then the state is what it always was (snapshots compare equal to the log's replay).


class PhaseAdvanced(Event):
    round: int
    nation: str
    phase: str

    def apply(self, agg: Campaign) -> None:
        if self.nation != agg.nation or self.round != agg.round:
            # A new national turn: its movement allowances and research rolls start afresh.
            # Most units have not moved: asked first, that spares the nation's look-up (this
            # loop over the whole board is a tenth of replaying a log).
            nation = self.nation
            for unit in agg.units.values():
                if unit["moved"] and unit["nation"] == nation:
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


class TurnPassedOver(Event):
    """F8: a neutral nation's turn in this round is passed over: it buys, moves, fights and
    collects nothing (the turn sequence goes on to the next nation at war). `enters`: the round
    it enters the war, as its scenario has it (None where the ruleset does not record entries,
    `entries_recorded`, and in logs recorded before the field)."""

    class_version = 2

    round: int
    nation: str
    rule: str
    enters: int | None

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        # Turns passed over before entries were recorded named no entry round.
        state["enters"] = None
        state[UPCAST_ADDED] = ["enters"]

    def apply(self, agg: Campaign) -> None:
        pass


class WarEntered(Event):
    """F8: a nation neutral until this round enters the war at the round's start, by its
    scenario's entry round (an entry an adjustment brought forward is the adjustment's, AD1).
    Nothing to fold: whether a nation is at war is read from the round and the entries
    brought forward."""

    round: int
    nation: str
    rule: str

    def apply(self, agg: Campaign) -> None:
        pass


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
            note_number(agg.unit_numbers, uid)


class Adjusted(Event):
    """AD1: what the tracker does not model enters the record, with a reason; `enter`: the
    neutral nations whose entry into the war it brings forward (F8)."""

    class_version = 2

    added: list[dict[str, Any]]
    removed: list[str]
    resources: dict[str, int]
    ntr: list[dict[str, Any]]
    owners: dict[str, str]
    tech: list[dict[str, Any]]
    reason: str
    enter: list[str]

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        # Adjustments recorded before F8 was played brought no entry forward.
        state["enter"] = []
        state[UPCAST_ADDED] = ["enter"]

    def apply(self, agg: Campaign) -> None:
        for u in self.added:
            agg.units[u["id"]] = {"type": u["type"], "nation": u["nation"], "at": u["at"], "damage": 0, "moved": 0}
            note_number(agg.unit_numbers, u["id"])
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
        if self.enter:
            agg.__dict__["entered"] = [*agg.__dict__.get("entered", []), *self.enter]


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


class PurchasesForfeited(Event):
    """PU2, T4: units bought this turn that had nowhere to be placed when placement ended (the
    nation lost its last port, or its last territory, after buying them), given up when the
    player confirmed it. What they cost stays spent."""

    nation: str
    units: dict[str, int]
    rule: str

    def apply(self, agg: Campaign) -> None:
        bought = agg.unplaced.get(self.nation, {})
        for unit_type, count in self.units.items():
            left = bought.get(unit_type, 0) - count
            if left > 0:
                bought[unit_type] = left
            else:
                bought.pop(unit_type, None)
        if not bought:
            agg.unplaced.pop(self.nation, None)


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
        # F8: entries brought forward are kept in `restored` only when there are some (undo
        # events recorded before F8 was played hold none), so none kept means none; a state
        # that never had one is left as it was (as older snapshots hold it).
        if "entered" in self.restored or "entered" in agg.__dict__:
            agg.__dict__["entered"] = list(self.restored.get("entered", []))
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


class ActionAsked(Event):
    """What a player asked for, recorded first in each action: the action's name, its inputs
    as typed (before names are resolved), the version the player saw, and who asked (PL1),
    so that `verify` can run the action again and compare what it records."""

    name: str
    inputs: dict[str, Any]
    seen: int
    player: str | None
    nation: str | None

    def apply(self, agg: Campaign) -> None:
        pass


class SeedRevealed(Event):
    epoch: int
    seed: str
    next_commitment: str

    def apply(self, agg: Campaign) -> None:
        agg.revealed_seeds.append(self.seed)
        agg.commitments.append(self.next_commitment)


# Attributes set by Created.apply, declared for type checkers only: at run time an
# annotation here would become a constructor argument of the aggregate.


def keep_stored_topics(namespace: dict[str, Any], module: str) -> None:
    """Name every event class defined in `module` as it was first recorded: stored topics are
    `domain.campaign:Campaign.<Name>` (hashes and exports include them), wherever the class
    is defined now; `Campaign` keeps each one as an attribute of that name."""
    for name, value in namespace.items():
        if isinstance(value, type) and issubclass(value, Event) and value.__module__ == module:
            value.__module__ = "domain.campaign"
            value.__qualname__ = f"Campaign.{name}"


keep_stored_topics(globals(), __name__)
