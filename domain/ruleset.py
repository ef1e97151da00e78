"""Rulesets as data: every number and table of RULES.md, loaded from TOML and validated."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from domain.amended import AMENDED, AS_IT_STANDS, AS_RECORDED_BEFORE
from domain.errors import DataFileError, InputError
from domain.ruleset_files import at_line, check_new_ruleset, ruleset_file
from domain.ruleset_files import builtin_names as builtin_names
from domain.ruleset_files import builtin_nations as builtin_nations
from domain.ruleset_files import read_builtin_or_file as read_builtin_or_file
from domain.ruleset_files import read_toml as read_toml
from domain.schema import Reader, did_you_mean
from domain.text import possessive

CATEGORIES = ("naval", "air")
CLASSES = ("submarine", "escort", "capital", "transport", "air")
SEARCH_CONTEXTS = ("convoy", "interception", "asw")
# The keys of a unit type's table (F1-F4, PU3).
UNIT_KEYS = (
    "category", "class", "abbr", "attack", "defense", "move", "hits", "cost",
    "hostile", "screens", "carries", "search", "asw_attack", "cap",
)  # fmt: skip
PLACEMENTS = ("owner-order", "class-order")
PLACEMENT = AS_IT_STANDS["placement"]
SEARCH_ORDERS = ("pending", "named")
SEARCH_ORDER = AS_IT_STANDS["search_order"]
ROLL_KINDS = (
    "merchant_defence",
    "convoy_search",
    "convoy_combat",
    "convoy_table",
    "interception_search",
    "asw_search",
    "asw_combat",
    "naval_combat",
    "research",
)
MODIFIED_ROLLS = (
    "convoy_search",
    "convoy_attack",
    "submarine_attack",
    "submarine_defense",
    "convoy_table",
    "interception_search",
    "asw_search",
    "asw_attack",
)
KNOWN_PHASES = (
    "research",
    "purchase",
    "combat_movement",
    "naval_combat",
    "land_combat",
    "noncombat_movement",
    "placement",
    "collect_resources",
)


@dataclass(frozen=True)
class UnitType:
    name: str
    category: str
    unit_class: str
    abbr: str
    attack: int
    defense: int
    move: int
    hits: int
    cost: int
    hostile: bool
    screens: bool
    carries: int
    search: dict[str, int]
    asw_attack: int
    cap: int | None = None  # PU3: most units of this type a nation may have (None: no cap)

    @property
    def is_naval(self) -> bool:
        return self.category == "naval"

    @property
    def is_air(self) -> bool:
        return self.category == "air"

    @property
    def is_submarine(self) -> bool:
        return self.unit_class == "submarine"


@dataclass(frozen=True)
class Modifier:
    technology: str
    rule: str
    holder: str
    units: tuple[str, ...]
    rolls: tuple[str, ...]
    set_to: int | None
    add: int


@dataclass(frozen=True)
class ConvoyRow:
    low: int
    high: int
    destroyed: int


@dataclass(frozen=True)
class AppliedModifier:
    """One modifier as it touched a roll, for the roll's event and `explain`."""

    rule: str
    technology: str
    holder: str
    set_to: int | None
    add: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "technology": self.technology,
            "holder": self.holder,
            "set": self.set_to,
            "add": self.add,
        }


@dataclass(frozen=True)
class Ruleset:
    name: str
    title: str
    version: int
    default_faces: int
    faces: dict[str, int]
    phases: tuple[str, ...]
    units: dict[str, UnitType]
    hit_priority: dict[str, tuple[tuple[str, ...], ...]]
    submarine_targets_surface_first: bool
    submarine_can_hit_air: bool
    naval_hits_naval_before_air: bool
    screening_classes: tuple[str, ...]
    merchant_defence_dice: int
    merchant_defence_sinks_on_total: int
    convoy_table: tuple[ConvoyRow, ...]
    opening_fire_cancelled_per_escort: int
    research_cost: int
    research_success_min: int
    research_levels: int
    max_head_start: int
    research_rolls_per_turn: int
    technologies: tuple[str, ...]
    modifiers: tuple[Modifier, ...]
    ntr_value: int = 1  # F6: resources one NTR is worth at collection
    retreat_distance: int = 1  # NC1: how many sea zones an attacker may retreat
    # The amended rules (AMENDED), as the ruleset plays them.
    hit_placement: str = PLACEMENT  # HA7: PLACEMENTS
    search_order: str = SEARCH_ORDER  # CV4: SEARCH_ORDERS
    submarines_arriving_fight: bool = True  # NC1
    every_override_agreed: bool = True  # RK3
    undos_answer_nothing: bool = True  # RK3
    reveals_answer_nothing: bool = True  # RK3, D5
    entries_recorded: bool = True  # F8
    neutrals_do_not_act: bool = True  # PL2, RK3, F8
    sides_named_whole: bool = True  # NC1, F5
    deciders_decide: bool = True  # RK3, NC4
    purposes_in_words: bool = True  # D3, TE1, NC1
    detected_survivors_named: bool = True  # SM5
    submarines_alone_call_for_asw: bool = True  # NC1, AS1
    aircraft_need_a_carrier: bool = True  # F7, SM2
    friendly_carriers: bool = True  # F7, PU2
    ships_stopped_stay: bool = True  # SM1
    purchases_need_a_place: bool = True  # PU1, PU2
    neutral_land_closed: bool = True  # F8, AD1, F7
    others_fly_afresh: bool = True  # F7, CV3
    owners_change_first: bool = True  # AD1, F7
    hits_lost_by_ha7: bool = True  # HA7
    gone_side_ends_battle: bool = True  # NC1, NC4
    content_hash: str = field(default="", compare=False)

    def unit(self, name: str) -> UnitType:
        try:
            return self.units[name]
        except KeyError:
            raise InputError(f"unknown unit type {name!r} (known: {', '.join(self.units)})") from None

    def faces_for(self, kind: str) -> int:
        return self.faces.get(kind, self.default_faces)

    @cached_property
    def submarines(self) -> frozenset[str]:
        """The submarine unit types."""
        return frozenset(name for name, ut in self.units.items() if ut.is_submarine)

    @cached_property
    def screeners(self) -> frozenset[str]:
        """HA1, HA3: the unit types that may take a hit instead of another unit (naval types
        marked `screens` or of a screening class)."""
        return frozenset(
            name
            for name, ut in self.units.items()
            if ut.is_naval and (ut.screens or ut.unit_class in self.screening_classes)
        )

    def convoy_result(self, value: int) -> int:
        for row in self.convoy_table:
            if row.low <= value <= row.high:
                return row.destroyed
        return 0

    def modified(
        self,
        roll: str,
        unit_type: str,
        base: int,
        actor_techs: frozenset[str] = frozenset(),
        target_techs: frozenset[str] = frozenset(),
    ) -> tuple[int, list[AppliedModifier]]:
        """The target number after technology modifiers (TE3-TE5), and the modifiers applied.

        Every `set` applies before any `add`, so TE4's "at 3" and TE3's "one less" stack
        to 2 (TE5). The result is clamped to 0..faces by D2 at roll time.
        """
        applied: list[AppliedModifier] = []
        value = base
        relevant = [
            m
            for m in self.modifiers
            if roll in m.rolls
            and unit_type in m.units
            and m.technology in (actor_techs if m.holder == "actor" else target_techs)
        ]
        for m in relevant:
            if m.set_to is not None:
                value = m.set_to
                applied.append(AppliedModifier(m.rule, m.technology, m.holder, m.set_to, 0))
        for m in relevant:
            if m.set_to is None and m.add:
                value += m.add
                applied.append(AppliedModifier(m.rule, m.technology, m.holder, None, m.add))
        return value, applied


def _unit_type(name: str, r: Reader) -> UnitType:
    for key in r.data:
        if key not in UNIT_KEYS:
            # Before any key is read: `atack = 2` is said as itself, not as a missing `attack`.
            raise r.fail(key, "unknown key" + did_you_mean(key, UNIT_KEYS))
    category = r.string("category", choices=CATEGORIES)
    search_reader = r.table("search", required=False)
    search = {ctx: search_reader.integer(ctx, 0, 100, default=0) for ctx in SEARCH_CONTEXTS}
    search_reader.finish()
    unit = UnitType(
        name=name,
        category=category,
        unit_class=r.string("class", choices=CLASSES),
        abbr=r.string("abbr"),
        attack=r.integer("attack", 0, 100),
        defense=r.integer("defense", 0, 100),
        move=r.integer("move", 0, 100),
        hits=r.integer("hits", 1, 10),
        cost=r.integer("cost", 0, 1000),
        hostile=r.boolean("hostile", default=False),
        screens=r.boolean("screens", default=False),
        carries=r.integer("carries", 0, 20, default=0),
        search=search,
        asw_attack=r.integer("asw_attack", 0, 100, default=0),
        cap=r.integer("cap", 0, 10000, default=None) if r.has("cap") else None,
    )
    if not unit.abbr.isalnum():
        raise r.fail("abbr", f"{unit.abbr!r} must be letters and digits only")
    if unit.is_air and (unit.hostile or unit.screens or unit.carries):
        raise r.fail("category", "air units cannot be hostile, screen or carry")
    r.finish()
    return unit


def ruleset_from_dict(data: dict[str, Any], source: str, amended: dict[str, Any] = AS_IT_STANDS) -> Ruleset:
    """Validate a ruleset table; raise DataFileError naming the first problem found.
    `amended`: the value of each amended rule's key (AMENDED) where the table does not say:
    the rule as it stands (AS_IT_STANDS), or as refereed before it was amended
    (AS_RECORDED_BEFORE, for a campaign's recorded ruleset)."""
    # The sections are read in file order, so the first problem reported is the first a reader
    # of the file would meet.
    top = Reader(source, data)
    meta = top.table("ruleset")
    name = meta.string("name")
    title = meta.string("title", default=name)
    version = meta.integer("version", 1, default=1)
    meta.finish()
    default_faces, faces, search_order = _dice(top, amended["search_order"])
    phases = _phases(top)
    units = _units(top, source)
    hit_allocation = _hit_allocation(top, amended["placement"])
    convoy = _convoy(top, faces.get("convoy_table", default_faces))
    nc = top.table("naval_combat")
    cancel = nc.integer("opening_fire_cancelled_per_escort", 0, 10)
    retreat_distance = nc.integer("retreat_distance", 1, 10, default=1)
    played: dict[str, Any] = {
        key: nc.boolean(key, default=amended[key]) for key, (table, _, _) in AMENDED.items() if table == "naval_combat"
    }
    nc.finish()
    trade = top.table("trade", required=False)
    ntr_value = trade.integer("ntr_value", 0, 100, default=1)
    trade.finish()
    record = top.table("record", required=False)
    kept: dict[str, Any] = {
        key: record.boolean(key, default=amended[key]) for key, (table, _, _) in AMENDED.items() if table == "record"
    }
    record.finish()
    research = _research(top, faces.get("research", default_faces))
    modifiers = _modifiers(top, research["technologies"], units)
    top.finish()

    return Ruleset(
        name=name,
        title=title,
        version=version,
        default_faces=default_faces,
        faces=faces,
        phases=tuple(phases),
        units=units,
        opening_fire_cancelled_per_escort=cancel,
        modifiers=modifiers,
        ntr_value=ntr_value,
        retreat_distance=retreat_distance,
        search_order=search_order,
        **kept,
        **played,
        content_hash=content_hash(data),
        **hit_allocation,
        **convoy,
        **research,
    )


def _dice(top: Reader, search_order: str) -> tuple[int, dict[str, int], str]:
    """The default number of faces, the faces of each roll kind that differs (D1), and the order
    of a search's dice (CV4; `search_order` where the table does not say)."""
    dice = top.table("dice")
    default_faces = dice.integer("default_faces", 2, 100)
    faces_reader = dice.table("faces", required=False)
    faces = {}
    for kind in list(faces_reader.data):
        if kind not in ROLL_KINDS:
            raise faces_reader.fail(kind, f"unknown roll kind (known: {', '.join(ROLL_KINDS)})")
        faces[kind] = faces_reader.integer(kind, 2, 100)
    faces_reader.finish()
    order = dice.string("search_order", choices=SEARCH_ORDERS, default=search_order)
    dice.finish()
    return default_faces, faces, order


def _phases(top: Reader) -> list[str]:
    turn = top.table("turn")
    phases = turn.strings("phases")
    for phase in phases:
        if phase not in KNOWN_PHASES:
            raise turn.fail("phases", f"unknown phase {phase!r} (known: {', '.join(KNOWN_PHASES)})")
    if len(set(phases)) != len(phases):
        raise turn.fail("phases", "a phase is listed twice")
    if not phases:
        raise turn.fail("phases", "a turn needs at least one phase (T2)")
    turn.finish()
    return phases


def _units(top: Reader, source: str) -> dict[str, UnitType]:
    units = {uname: _unit_type(uname, ur) for uname, ur in top.tables("units")}
    if not units:
        raise top.fail("units", "at least one unit type is required")
    first: dict[str, str] = {}
    for unit in units.values():
        if (other := first.setdefault(unit.abbr, unit.name)) != unit.name:
            # Unit IDs are made of it (DE-SS1): named, with the type that has it already.
            problem = (
                f"{unit.abbr!r} is {possessive(other)} abbr too: each type needs its own (unit IDs are made of it)"
            )
            raise DataFileError(source, f"units.{unit.name}.abbr", problem)
    for unit in units.values():
        if unit.category == "naval" and unit.unit_class == "air":
            raise DataFileError(source, f"units.{unit.name}.class", "naval units cannot be of class 'air'")
        if unit.category == "air" and unit.unit_class != "air":
            raise DataFileError(source, f"units.{unit.name}.class", "air units must be of class 'air'")
    return units


def _hit_allocation(top: Reader, placement: str) -> dict[str, Any]:
    """The ruleset's hit allocation fields (HA1-HA7), by name; `placement` where it says none."""
    ha = top.table("hit_allocation")
    prio_reader = ha.table("priority")
    hit_priority: dict[str, tuple[tuple[str, ...], ...]] = {}
    for firing in list(prio_reader.data):
        if firing not in CLASSES:
            raise prio_reader.fail(firing, f"unknown unit class (known: {', '.join(CLASSES)})")
        tiers = prio_reader.raw(firing)
        if not isinstance(tiers, list) or not all(isinstance(t, list) and all(c in CLASSES for c in t) for t in tiers):
            raise prio_reader.fail(firing, "expected a list of lists of unit classes")
        hit_priority[firing] = tuple(tuple(t) for t in tiers)
    prio_reader.finish()
    screening = ha.strings("screening_classes")
    for c in screening:
        if c not in CLASSES:
            raise ha.fail("screening_classes", f"unknown unit class {c!r}")
    fields = dict(
        hit_priority=hit_priority,
        screening_classes=tuple(screening),
        submarine_targets_surface_first=ha.boolean("submarine_targets_surface_first"),
        submarine_can_hit_air=ha.boolean("submarine_can_hit_air"),
        naval_hits_naval_before_air=ha.boolean("naval_hits_naval_before_air"),
        hit_placement=ha.string("placement", choices=PLACEMENTS, default=placement),
    )
    ha.finish()
    return fields


def _convoy(top: Reader, table_faces: int) -> dict[str, Any]:
    """The ruleset's convoy fields (CV2, CV5), by name; the table's rows must cover the die."""
    convoy = top.table("convoy")
    md_dice = convoy.integer("merchant_defence_dice", 1, 10)
    md_total = convoy.integer("merchant_defence_sinks_on_total", 1, 1000)
    rows = []
    for row_reader in convoy.table_list("table"):
        row = ConvoyRow(
            low=row_reader.integer("from", 1, table_faces),
            high=row_reader.integer("to", 1, table_faces),
            destroyed=row_reader.integer("destroyed", 0, 100),
        )
        row_reader.finish()
        if row.high < row.low:
            raise row_reader.fail("to", f"{row.high} is below 'from' {row.low}")
        rows.append(row)
    covered = sorted(v for row in rows for v in range(row.low, row.high + 1))
    if covered != list(range(1, table_faces + 1)):
        raise convoy.fail("table", f"rows must cover 1..{table_faces} exactly once")
    convoy.finish()
    return dict(merchant_defence_dice=md_dice, merchant_defence_sinks_on_total=md_total, convoy_table=tuple(rows))


def _research(top: Reader, research_faces: int) -> dict[str, Any]:
    """The ruleset's research fields (TE1, TE2) and its technologies, by name."""
    research = top.table("research")
    levels = research.integer("levels", 1, 10)
    fields = dict(
        research_cost=research.integer("cost", 0, 1000),
        research_success_min=research.integer("success_min", 1, research_faces),
        research_levels=levels,
        max_head_start=research.integer("max_head_start", 0, levels - 1),
        research_rolls_per_turn=research.integer("rolls_per_technology_per_turn", 1, 10),
        technologies=tuple(research.strings("technologies")),
    )
    research.finish()
    return fields


def _modifiers(top: Reader, technologies: tuple[str, ...], units: dict[str, UnitType]) -> tuple[Modifier, ...]:
    return tuple(_modifier(mr, technologies, units) for mr in top.table_list("modifiers", required=False))


def _modifier(mr: Reader, technologies: tuple[str, ...], units: dict[str, UnitType]) -> Modifier:
    """One technology modifier (TE3-TE5), naming only known technologies, units and rolls."""
    tech = mr.string("technology")
    if tech not in technologies:
        raise mr.fail("technology", f"unknown technology {tech!r} (known: {', '.join(technologies)})")
    unit_names = mr.strings("units")
    for u in unit_names:
        if u not in units:
            raise mr.fail("units", f"reference to unknown unit {u!r}")
    rolls = mr.strings("rolls")
    for roll in rolls:
        if roll not in MODIFIED_ROLLS:
            raise mr.fail("rolls", f"unknown roll {roll!r} (known: {', '.join(MODIFIED_ROLLS)})")
    set_to = mr.integer("set", 0, 100, default=None) if mr.has("set") else None
    add = mr.integer("add", -100, 100, default=0)
    if set_to is None and add == 0:
        raise mr.fail("add", "a modifier needs 'set' or a non-zero 'add'")
    modifier = Modifier(
        technology=tech,
        rule=mr.string("rule"),
        holder=mr.string("holder", choices=("actor", "target")),
        units=tuple(unit_names),
        rolls=tuple(rolls),
        set_to=set_to,
        add=add,
    )
    mr.finish()
    return modifier


def content_hash(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


_parsed: dict[str, Ruleset] = {}


def load_ruleset(name_or_path: str) -> tuple[Ruleset, dict[str, Any]]:
    """A ruleset file and the data a new campaign records of it, held to what a new campaign's
    must also get right (`check_new_ruleset`: unit type names a player can type back), each
    problem said at its line of the file. A recorded ruleset that leaves out a key of an amended
    rule (AMENDED: HA7's placement, CV4's search order, NC1's arriving and lone submarines, F7's
    aircraft at sea, friendly carriers and other nations' range, SM1's stopped ships, PU2's
    purchases with a place, F8's neutral land and recorded entries, RK3's agreement, PL2 and
    RK3's neutrals that do not act, NC1 and F5's sides named whole, NC1's battle over once a
    side is gone, RK3's decider of a fight on, D3's purposes in words) was recorded before the
    rule was amended and is refereed as then (`ruleset_from_recorded`), so the data says each:
    the rule as it stands unless the file says."""
    read, source, text = ruleset_file(name_or_path)
    data = read
    try:
        check_new_ruleset(data, source)
        for key, (table, now, _) in AMENDED.items():
            # `record` is a table a file may leave out; the others it must have (checked when read).
            section = data.get(table, {} if table == "record" else None)
            if isinstance(section, dict) and key not in section:
                data = {**data, table: {**section, key: now}}
        return ruleset_from_dict(data, source), data
    except DataFileError as e:
        raise at_line(e, read, text) from None


_recent: OrderedDict[int, tuple[dict[str, Any], Ruleset]] = OrderedDict()


def ruleset_from_recorded(data: dict[str, Any]) -> Ruleset:
    """The ruleset a campaign recorded in its first event, parsed once per process (by content),
    and found again by identity while the same aggregate is in use, without re-hashing it."""
    hit = _recent.get(id(data))
    if hit is not None and hit[0] is data:
        return hit[1]
    key = content_hash(data)
    if key not in _parsed:
        _parsed[key] = ruleset_from_dict(data, "recorded ruleset", AS_RECORDED_BEFORE)
    # Holding `data` keeps its id from being reused while the entry lives.
    _recent[id(data)] = (data, _parsed[key])
    if len(_recent) > 256:
        _recent.popitem(last=False)
    return _parsed[key]
