"""The rows one projected event writes (`projections.board` follows the log, this module makes
the rows of each event):

- an event index row (turn, phase, nation, zones, kind, battle, rule, one-line summary, undo marks),
  which also answers "the end of turn N" (its last event not undone);
- the history of units, NTR, nations (balance, losses, technology) and each nation's totals
  (units, their cost, NTR at sea: what a chart draws) as rows valid from one event to
  another, so the board after any event is one indexed query, not a replay.

What each class of event can change is worked out once per class: most events build again and
compare only the rows they can change, or none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from projections.batch import Batch
from projections.positions import turn_number
from projections.schema import HISTORIES
from projections.summary import RULED, SIDED, rule_of, rule_of_kind, summary, summary_of_kind

# Events that never change units, NTR or a nation's figures: no need to compare boards.
BOARD_UNCHANGED = frozenset(
    {
        "PhaseAdvanced",
        "DiceRolled",
        "BattleAdvanced",
        "SearchersChosen",
        "DetectionsRecorded",
        "HitsScored",
        "CasualtiesChosen",
        "ConvoyAttackDeclared",
        "SeedRevealed",
        "BattleEnded",
        "ActionAsked",
        "ConvoyPassed",
        "TurnPassedOver",
        "WarEntered",
    }
)
# Events that change one part of the board only (their apply touches nothing else the rows
# hold): the other parts' rows are kept, not built again and compared.
BOARD_PARTS = {
    "UnitsMoved": frozenset({"unit"}),
    "ResourcesCollected": frozenset({"nation"}),
    "ResearchPaid": frozenset({"nation"}),
    "TechnologyAdvanced": frozenset({"nation"}),
}
# Events that change the rows of the units they name (in these fields) and nothing else the
# rows hold: only those units' rows are built again and compared.
UNITS_NAMED = {"UnitsMoved": ("units", "carried")}
# Events that change the row of the nation they name (in this field: its balance or its
# technology) and nothing else the rows hold: only that nation's row is built again and compared.
NATION_NAMED = {"ResourcesCollected": "nation", "ResearchPaid": "nation", "TechnologyAdvanced": "nation"}
_BATTLE_STARTS = frozenset({"ConvoyAttackDeclared", "InterceptionStarted", "AswCombatStarted", "NavalBattleStarted"})
# How a field of an event names units: a list of them, a mapping's keys or values, one unit, or
# the escorts present when they cancelled some fire (NC2; present alone, they did nothing).
_LIST, _KEYS, _VALUES, _ONE, _CANCELLING = 0, 1, 2, 3, 4
# The fields of battle events naming units whose nations `log --nation` finds the event by: one
# nation is recorded deciding for a side (NC1, F5, HA7), but the units it names may be an ally's,
# which only their IDs say (CV3, AS2: a pooled search). Named are the units acting (searchers,
# firers, the escorts screening or cancelling fire, units retreating, submerging or going on,
# each side of a battle as it starts) and the side the hits fall on (its candidates, the units
# chosen to take them), as the nation hit is found by HitsScored and the unit's owner by
# UnitHit. Not the units shot at or detected (the target side is no nation of those choices) nor
# the survivors a battle ends with.
UNIT_FIELDS: dict[str, tuple[tuple[str, int], ...]] = {
    "ConvoyAttackDeclared": (("submarines", _LIST),),
    "InterceptionStarted": (("submarines", _LIST),),
    "AswCombatStarted": (("submarines", _LIST),),
    "NavalBattleStarted": (("attackers", _LIST), ("defenders", _LIST)),
    "SearchersChosen": (("units", _LIST),),
    "DetectionsRecorded": (("detected", _LIST), ("failed", _LIST)),
    "HuntersChosen": (("units", _LIST),),
    "SearchesResolved": (("found_by", _LIST), ("failed", _LIST)),
    "HitsScored": (("candidates", _LIST),),
    "CasualtiesChosen": (("units", _LIST),),
    "OpeningFire": (("firing", _LIST), ("cancelled", _LIST), ("escorts", _CANCELLING)),
    "TargetsChosen": (("targets", _KEYS),),
    "ScreeningChosen": (("screens", _VALUES),),
    "TargetHit": (("firer", _ONE),),
    "FireWithheld": (("units", _LIST),),
    "SubmarinesSubmerged": (("units", _LIST),),
    "SubmarinesRetreated": (("units", _LIST),),
    "SubmarinesContinued": (("continuing", _LIST), ("stopping", _LIST)),
    "AttackerRetreated": (("units", _LIST),),
}
# Events recorded with no battle that belong to one (see `link_battle`): a reroll (RK3) to the
# battle of the roll it follows, an undo (RK3) or a redo (RK4) to that of the events it takes
# back or records again; and a roll of a battle lends its battle to the typed dice it follows
# (D4, RK3: accepted once an action, just before its first roll).
_REROLL, _UNDO, _REDO, _ROLLED = 1, 2, 3, 4
_LINKS = {"DiceRerolled": _REROLL, "ActionUndone": _UNDO, "ActionRedone": _REDO, "DiceRolled": _ROLLED}
# The columns that name a history row's unit, NTR or nation.
KEY_COLUMNS = {"unit": ("unit_id",), "ntr": ("nation", "zone"), "nation": ("nation",), "tally": ("nation",)}


_unit_values = itemgetter("type", "nation", "at", "damage")


def _unit_rows(agg: Any) -> dict[Any, tuple[Any, ...]]:
    return {uid: _unit_values(u) for uid, u in agg.units.items()}


def _ntr_rows(agg: Any) -> dict[Any, tuple[Any, ...]]:
    return {(n, z): (c,) for n, zones in agg.ntr.items() for z, c in zones.items()}


def _nation_row(agg: Any, n: Any) -> tuple[Any, ...]:
    return (agg.balances[n], agg.ntr_lost.get(n, 0), tuple(sorted(agg.tech[n].items())))


def _nation_rows(agg: Any) -> dict[Any, tuple[Any, ...]]:
    return {n: _nation_row(agg, n) for n in agg.balances}


ROWS = {"unit": _unit_rows, "ntr": _ntr_rows, "nation": _nation_rows}
# The ruleset's unit costs, by the recorded ruleset they were read from (which a campaign never
# changes): read once, not on every event that changes units.
_COSTS: dict[int, tuple[Any, dict[str, int]]] = {}


def _costs_of(agg: Any) -> dict[str, int]:
    data = agg.ruleset_data
    found = _COSTS.get(id(data))
    if found is None or found[0] is not data:
        if len(_COSTS) > 100:
            _COSTS.clear()
        # The recorded data is kept with its costs, so its id cannot be another's meanwhile.
        found = _COSTS[id(data)] = (data, {name: u.cost for name, u in agg.ruleset.units.items()})
    return found[1]


Rows = dict[Any, tuple[Any, ...]]


def _tally_rows(agg: Any, units: Rows, ntr: Rows) -> Rows:
    """Each nation's totals from the unit and NTR rows: (units, their cost, NTR at sea)."""
    costs = _costs_of(agg)
    count = dict.fromkeys(agg.balances, 0)
    cost = dict.fromkeys(agg.balances, 0)
    at_sea = dict.fromkeys(agg.balances, 0)
    for type_, nation, _at, _damage in units.values():
        count[nation] = count.get(nation, 0) + 1
        cost[nation] = cost.get(nation, 0) + costs.get(type_, 0)
    for (nation, _zone), (n,) in ntr.items():
        at_sea[nation] = at_sea.get(nation, 0) + n
    return {n: (count[n], cost.get(n, 0), at_sea.get(n, 0)) for n in count}


def with_tally(agg: Any, rows: dict[str, Rows]) -> dict[str, Rows]:
    """`rows` with the nations' totals worked out again from their unit and NTR rows."""
    rows["tally"] = _tally_rows(agg, rows["unit"], rows["ntr"])
    return rows


def rows_of(agg: Any) -> dict[str, Rows]:
    """The board as comparable rows: what changed between two events is a set difference."""
    return with_tally(agg, {name: rows(agg) for name, rows in ROWS.items()})


_ZONE_KEYS = frozenset({"zone", "path", "hostile_passed"})
_NATION_KEYS = frozenset({"nation", "attacker", "defender", "roller"})
_PLACE_KEYS = _ZONE_KEYS | _NATION_KEYS
# How a place field of an event reads: a nation named, a zone named, zones listed.
_NATION, _ZONE, _ZONES = 0, 1, 2
# How an event changes the board's rows (see `BOARD_UNCHANGED`, `UNITS_NAMED`, `NATION_NAMED`,
# `BOARD_PARTS`).
UNCHANGED, NAMED, NATION, PARTS, _WHOLE = 0, 1, 2, 3, 4


def _fields_of(cls: type) -> set[str]:
    """The fields an event class declares, its bases' included: what its stored state can hold
    (upcasting only adds declared fields)."""
    fields: set[str] = set()
    for c in cls.__mro__:
        fields.update(vars(c).get("__annotations__", {}))
    return fields


class _Kind:
    """What the projector does with every event of one class, worked out once per class: the
    per-event work is then a lookup and a few attribute reads, not set tests and string
    comparisons on the event's name and fields."""

    __slots__ = (
        "name",
        "rule",
        "summary",
        "sided",
        "ruled",
        "places",
        "by_nation",
        "battle",
        "unit",
        "starts_battle",
        "ends_battle",
        "undo",
        "board",
        "parts",
        "named",
        "plain",
        "index_rule",
        "named_in",
        "adjusted",
        "units",
        "links",
    )

    def __init__(self, cls: type) -> None:
        name = self.name = cls.__name__
        fields = _fields_of(cls)
        # A constant rule, or None when it depends on the event (`rule_of` then decides).
        self.rule: str | None = rule_of_kind(name)
        self.summary = summary_of_kind(name)
        # Whose summary reads the campaign: its scenario (`SIDED`) or its ruleset (`RULED`).
        self.sided = name in SIDED
        self.ruled = name in RULED
        self.places: tuple[tuple[str, int], ...] = tuple(
            (key, _NATION if key in _NATION_KEYS else _ZONE if key == "zone" else _ZONES)
            for key in sorted(_PLACE_KEYS & fields)
        )
        self.battle = "battle" in fields
        self.unit = "unit" in fields
        # AD1: an adjustment names its places in the parts it changes (`_adjusted_places`).
        self.adjusted = name == "Adjusted"
        self.units = UNIT_FIELDS.get(name, ())
        self.links = _LINKS.get(name, 0)
        # Most events (asked actions, phases, collections) name no place but their nation, and
        # neither battle nor unit: their index row needs no sets of names.
        self.by_nation = not self.battle and not self.unit and not self.units and self.places == (("nation", _NATION),)
        self.starts_battle = name in _BATTLE_STARTS
        self.ends_battle = name == "BattleEnded"
        self.undo = name == "ActionUndone"
        self.parts: frozenset[str] = frozenset()
        self.named: tuple[str, ...] = ()
        # The table whose rows the event's `named` fields name.
        self.named_in = "unit"
        if name in BOARD_UNCHANGED:
            self.board = UNCHANGED
        elif name in UNITS_NAMED:
            self.board, self.named = NAMED, UNITS_NAMED[name]
        elif name in NATION_NAMED:
            self.board, self.named, self.named_in = NATION, (NATION_NAMED[name],), "nation"
        elif name in BOARD_PARTS:
            self.board, self.parts = PARTS, BOARD_PARTS[name]
        else:
            self.board = _WHOLE
        # Most events of a log (asked actions, phases): the same rule for every event of the
        # kind, no place but their nation, no row of the board changed. The projector makes
        # their index row itself (see `projections.board`), as `index_row` would.
        self.plain = (
            self.by_nation and self.rule is not None and self.board == UNCHANGED and not self.undo and not self.links
        )
        self.index_rule = self.rule or None


KINDS: dict[type, _Kind] = {}


def kind_of(cls: type) -> _Kind:
    found = KINDS.get(cls)
    if found is None:
        found = KINDS[cls] = _Kind(cls)
    return found


@dataclass
class Followed:
    """A campaign the projector is following: its state after the last projected event, and
    where each open history row began."""

    key: int
    agg: Any
    rows: dict[str, dict[Any, tuple[Any, ...]]]
    since: dict[str, dict[Any, int]]
    turn_order: list[str]
    last_hash: str
    # The zone of each battle the state holds open (`battle_zones`), which a battle's events are
    # indexed under. Kept as the state keeps its battles (set at a start, dropped at the end, put
    # back as an undo restores them), never as a memory of every battle seen: a projector that
    # starts following in the middle of the log (each command line process does) must hold what
    # one following from the first event holds, or its rows differ from a rebuild's.
    battle_zone: dict[int, str] = field(default_factory=dict)
    # National turn numbers by (round, nation), worked out once each.
    turns: dict[tuple[int, str], int] = field(default_factory=dict)
    # AD1: the territory owners just before the adjustment being projected.
    owners_before: dict[str, str] = field(default_factory=dict)


def turn_of(f: Followed, agg: Any) -> int:
    """The national turn of the state's round and nation, worked out once each."""
    round_, nation = agg.round, agg.nation
    turn = f.turns.get((round_, nation))
    if turn is None:
        if not f.turn_order:
            f.turn_order = list(agg.scenario.turn_order)
        turn = f.turns[round_, nation] = turn_number(f.turn_order, round_, nation)
    return turn


def index_row(f: Followed, agg: Any, event: Any, data: dict[str, Any], kind: _Kind, seq: int) -> list[Any]:
    """The event index row of an event, in the order of the table's columns (undone_by last,
    set by a later undo of the page)."""
    round_, nation = agg.round, agg.nation
    turn = f.turns.get((round_, nation))
    if turn is None:
        turn = turn_of(f, agg)
    rule = kind.rule
    if kind.by_nation:
        # Most events: no place but their nation, no battle, no unit (no sets of names made).
        named = data.get("nation")
        battle, zones, nations = None, "", bar(named) if named.__class__ is str else ""
    else:
        battle, zones, nations = _places(f, agg, event, data, kind)
    if kind.sided:
        # NC1: a naval battle's side by the nations of its units, as the scenario codes them.
        text = summary(event, agg.scenario)
    elif kind.ruled:
        # F3, NC5: a unit by its type in the campaign's own ruleset (a house one's abbreviations).
        text = summary(event, None, agg.ruleset)
    else:
        text = kind.summary(event)
    return [
        f.key,
        seq,
        turn,
        round_,
        nation,
        agg.phase,
        kind.name,
        (rule if rule is not None else rule_of(event)) or None,
        battle,
        zones,
        nations,
        text,
        None,
    ]


def _places(f: Followed, agg: Any, event: Any, data: dict[str, Any], kind: _Kind) -> tuple[Any, str, str]:
    """An event's battle, and the zones and nations its index row names (as `_bars` stores them)."""
    zones: set[str] | None = None
    nations: set[str] | None = None
    for key, how in kind.places:
        value = data.get(key)
        if how == _NATION:
            if value.__class__ is str:
                if nations is None:
                    nations = {value}
                else:
                    nations.add(value)
        elif how == _ZONE:
            if value.__class__ is str:
                if zones is None:
                    zones = {value}
                else:
                    zones.add(value)
        elif value.__class__ is list and value:
            if zones is None:
                zones = set(value)
            else:
                zones.update(value)
    battle = None
    if kind.battle:
        battle = data.get("battle")
        if kind.starts_battle:
            f.battle_zone[event.battle] = event.zone
        if battle is not None and battle in f.battle_zone:
            if zones is None:
                zones = {f.battle_zone[battle]}
            else:
                zones.add(f.battle_zone[battle])
            if kind.ends_battle:
                del f.battle_zone[battle]
    if kind.adjusted:
        zones, nations = _adjusted_places(f, data, zones or set(), nations or set())
    if kind.unit:
        unit = data.get("unit")
        if unit.__class__ is str:
            u = agg.units.get(unit)
            owner = u["nation"] if u is not None else f.rows["unit"][unit][1] if unit in f.rows["unit"] else None
            if owner is not None:
                if nations is None:
                    nations = {owner}
                else:
                    nations.add(owner)
    if kind.units:
        owners = _owners(f, agg, data, kind.units)
        if owners:
            nations = owners if nations is None else nations | owners
    return battle, "" if zones is None else _bars(zones), "" if nations is None else _bars(nations)


def _owners(f: Followed, agg: Any, data: dict[str, Any], fields: tuple[tuple[str, int], ...]) -> set[str]:
    """The nations of the units these fields of an event name (`UNIT_FIELDS`)."""
    units: list[Any] = []
    for key, how in fields:
        value = data.get(key)
        if not value:
            continue
        if how == _ONE:
            units.append(value)
        elif how == _KEYS:
            units.extend(value)
        elif how == _VALUES:
            units.extend(value.values())
        elif how == _LIST or data.get("cancelled"):
            units.extend(value)
    owners: set[str] = set()
    before = f.rows["unit"]
    codes: dict[str, str] | None = None
    for uid in units:
        if uid.__class__ is not str:
            continue
        u = agg.units.get(uid)
        if u is not None:
            owners.add(u["nation"])
        elif uid in before:
            owners.add(before[uid][1])
        else:
            # Gone from the board before the event (and so from the rows): its ID begins with
            # its nation's code (DE-SS1), as the summaries read it.
            if codes is None:
                codes = {n.code: name for name, n in agg.scenario.nations.items() if n.code}
            found = codes.get(uid.split("-", 1)[0])
            if found is not None:
                owners.add(found)
    return owners


def battle_zones(agg: Any) -> dict[int, str]:
    """The zone of each battle open in the state (`Followed.battle_zone`)."""
    return {b["id"]: b["zone"] for b in agg.battles.values()}


def link_battle(batch: Batch, kind: _Kind, data: dict[str, Any], seq: int) -> None:
    """Give event `seq`'s index row the battle it belongs to though it records none (`_LINKS`),
    or a roll's battle to the typed dice accepted for it just before. An undo or a redo takes
    the battle of the first event it takes back or records again that has one: the board goes
    back to that battle (the events of a later one it took back are marked undone by it)."""
    how = kind.links
    if how == _ROLLED:
        battle = data.get("battle")
        if battle is not None:
            batch.lend_battle(seq - 1, battle, "TypedDiceAccepted")
    elif how == _REROLL:
        # RK3: a reroll is recorded right after the roll it flags (`Rolling.roll`).
        batch.borrow_battle(seq, seq - 1, seq - 1)
    elif how == _UNDO:
        batch.borrow_battle(seq, data["undone_from"], data["undone_to"])
    elif how == _REDO and data.get("events"):
        batch.borrow_battle(seq, min(data["events"]), max(data["events"]))


def _adjusted_places(f: Followed, data: dict[str, Any], zones: set[str], nations: set[str]) -> tuple[Any, Any]:
    """AD1: the zones and nations an adjustment changes, so that `log --zone` and `--nation`
    find it: where units are added or removed and whose they are, the NTR changed, the
    resources and technology of whom, the territories handed over with their old and new
    owners, and the nations whose entry it brings forward (F8)."""
    before = f.rows["unit"]
    for u in data.get("added") or ():
        zones.add(u["at"])
        nations.add(u["nation"])
    for uid in data.get("removed") or ():
        row = before.get(uid)
        if row is not None:
            nations.add(row[1])
            zones.add(row[2])
    nations.update(data.get("resources") or {})
    for n in data.get("ntr") or ():
        zones.add(n["zone"])
        nations.add(n["nation"])
    for territory, owner in (data.get("owners") or {}).items():
        zones.add(territory)
        nations.add(owner)
        if f.owners_before.get(territory):
            nations.add(f.owners_before[territory])
    for t in data.get("tech") or ():
        nations.add(t["nation"])
    nations.update(data.get("enter") or ())
    return zones or None, nations or None


# One name as the index stores it, made once per name: most events name one nation or zone.
_ONE_BAR: dict[str, str] = {}


def bar(only: str) -> str:
    """One name as the index stores it (see `_bars`)."""
    found = _ONE_BAR.get(only)
    if found is None:
        found = f"|{only}|"
        if len(_ONE_BAR) < 10_000:
            _ONE_BAR[only] = found
    return found


def _bars(values: set[str]) -> str:
    """Names as the index stores them for LIKE filters: "|a|b|" (sorted), or ""."""
    if len(values) == 1:
        for only in values:
            return bar(only)
    return "|" + "|".join(sorted(values)) + "|" if values else ""


# A row of the board an event changed: its key, its values before and after (None: no row).
Change = tuple[Any, tuple[Any, ...] | None, tuple[Any, ...] | None]


def named_unit_changes(units: Rows, agg: Any, data: dict[str, Any], fields: tuple[str, ...]) -> list[Change]:
    """The unit rows changed by an event that changes only the units it names (`UNITS_NAMED`),
    read from those units alone: a move touches a few rows of a board of hundreds."""
    after: dict[Any, tuple[Any, ...] | None] = {}
    now = agg.units
    for key in fields:
        for uid in data.get(key) or ():
            u = now.get(uid)
            after[uid] = None if u is None else _unit_values(u)
    return [(uid, units.get(uid), new) for uid, new in after.items() if units.get(uid) != new]


def with_unit_changes(agg: Any, rows: dict[str, Rows], changes: list[Change]) -> dict[str, Rows]:
    """`rows`, or a copy with the nations' totals worked out again when `changes` can change
    them: a unit gone, new, or of another type or nation than it was (a move changes none)."""
    if all(old is not None and new is not None and old[:2] == new[:2] for _, old, new in changes):
        return rows
    units = dict(rows["unit"])
    for uid, _, new in changes:
        if new is None:
            del units[uid]
        else:
            units[uid] = new
    return {**rows, "tally": _tally_rows(agg, units, rows["ntr"])}


def named_nation_changes(nations: Rows, agg: Any, data: dict[str, Any], field: str) -> list[Change]:
    """The nation row changed by an event that changes only the nation it names (`NATION_NAMED`)."""
    nation = data.get(field)
    old, new = nations.get(nation), _nation_row(agg, nation)
    return [] if old == new else [(nation, old, new)]


def write_changes(batch: Batch, f: Followed, name: str, changes: list[Change], seq: int) -> None:
    """Close the rows of table `name` that `changes` (at event `seq`) replace or remove, open
    their new values, and keep them in `f.rows` in place (no copy of the whole board)."""
    rows, since = f.rows[name], f.since[name]
    for k, old, new in changes:
        if old is not None:
            batch.close(name, k, since.pop(k), seq)
        if new is None:
            del rows[k]
        else:
            rows[k] = new
            batch.open(name, k, new, seq)
            since[k] = seq


def write_history(batch: Batch, f: Followed, new_rows: dict[str, Rows], seq: int, checkpoint: bool) -> None:
    """Close the history rows that changed at event `seq` and open their new values; at a
    checkpoint, re-open every row that began before it (see `projections.board`)."""
    for name in HISTORIES:
        old, new = f.rows[name], new_rows[name]
        since = f.since[name]
        if old is not new and old != new:
            # Key by key: a change touches a few of the board's rows, and comparing each row
            # with its own costs less than hashing every row into sets.
            for k, value in old.items():
                if new.get(k) != value:
                    batch.close(name, k, since.pop(k), seq)
            for k, value in new.items():
                if old.get(k) != value:
                    batch.open(name, k, value, seq)
                    since[k] = seq
        if checkpoint:
            batch.reopen(name, since, new, seq)
