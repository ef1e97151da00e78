"""Scenarios as data: map, nations and sides, starting forces, NTR and head starts, from TOML."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from domain.ruleset import Ruleset, read_builtin_or_file
from domain.schema import Reader

# Sane maxima for a scenario's numbers: far above any real game, and low enough that a
# campaign's balances and counts stay within database integers for thousands of turns.
MAX_RESOURCES = 1_000_000
MAX_NTR = 10_000
MAX_LEVEL = 100
# Map coordinates are drawing positions only (no rule reads them); any unit, this range.
MAX_COORDINATE = 100_000


@dataclass(frozen=True)
class Nation:
    name: str
    code: str
    side: str
    resources: int
    income: int
    tech: dict[str, int]
    ntr: dict[str, int]
    ntr_max: dict[str, int]
    caps: dict[str, int] = field(default_factory=dict)  # PU3: unit type -> most units


@dataclass(frozen=True)
class UnitGroup:
    nation: str
    type: str
    at: str
    count: int


@dataclass(frozen=True)
class GameMap:
    sea: frozenset[str]
    land: dict[str, str]  # territory -> owning nation at the start
    adjacency: dict[str, frozenset[str]]
    ports: frozenset[str] = frozenset()  # PU2: territories where new ships may be placed
    # Where the map drawing puts each zone (x to the right, y downwards), when the scenario
    # says; empty when it does not, and the drawing lays the map out itself.
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def is_sea(self, zone: str) -> bool:
        return zone in self.sea

    def is_land(self, zone: str) -> bool:
        return zone in self.land

    def knows(self, zone: str) -> bool:
        return zone in self.adjacency

    def adjacent(self, a: str, b: str) -> bool:
        return b in self.adjacency.get(a, frozenset())

    def distance(self, start: str, goal: str) -> int | None:
        """Map steps between two places over sea and land (F7 air range)."""
        if start == goal:
            return 0
        seen = {start}
        queue = deque([(start, 0)])
        while queue:
            here, steps = queue.popleft()
            for nxt in self.adjacency.get(here, ()):
                if nxt == goal:
                    return steps + 1
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append((nxt, steps + 1))
        return None


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    ruleset: str
    dice: str
    turn_order: tuple[str, ...]
    nations: dict[str, Nation]
    game_map: GameMap
    units: tuple[UnitGroup, ...]

    def side_of(self, nation: str) -> str:
        return self.nations[nation].side

    def are_enemies(self, a: str, b: str) -> bool:
        return self.nations[a].side != self.nations[b].side


def _read_map(top: Reader, nations: dict[str, Any]) -> GameMap:
    m = top.table("map")
    sea_entries = list(m.tables("sea"))
    land_entries = list(m.tables("land"))
    m.finish()
    if not sea_entries:
        raise top.fail("map.sea", "at least one sea zone is required")
    names = [n for n, _ in sea_entries] + [n for n, _ in land_entries]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise top.fail("map", f"{sorted(duplicates)[0]!r} is both a sea zone and a land territory")
    adjacency: dict[str, set[str]] = {n: set() for n in names}
    land: dict[str, str] = {}
    marked: dict[str, bool] = {}
    positions: dict[str, tuple[int, int]] = {}
    for name, r in sea_entries + land_entries:
        if r.has("x") or r.has("y"):
            if not (r.has("x") and r.has("y")):
                raise r.fail("y" if r.has("x") else "x", "missing: a map position needs both x and y")
            positions[name] = (
                r.integer("x", -MAX_COORDINATE, MAX_COORDINATE),
                r.integer("y", -MAX_COORDINATE, MAX_COORDINATE),
            )
        if name in dict(land_entries):
            owner = r.string("owner")
            if owner not in nations:
                raise r.fail("owner", f"unknown nation {owner!r}")
            land[name] = owner
            if r.has("port"):
                marked[name] = r.boolean("port")
        for other in r.strings("adjacent", default=[]):
            if other not in adjacency:
                raise r.fail("adjacent", f"unknown zone {other!r} in adjacency list")
            if other == name:
                raise r.fail("adjacent", "a zone cannot be adjacent to itself")
            adjacency[name].add(other)
            adjacency[other].add(name)
        r.finish()
    # PU2: a scenario that marks no port makes every territory one; once any territory says
    # `port = true`, only the marked ones are ports (`port = false` alone excludes that one).
    if positions and len(positions) < len(names):
        missing = next(n for n in names if n not in positions)
        raise top.fail(
            f"map.{'sea' if missing in dict(sea_entries) else 'land'}.{missing}",
            "no x and y: once one zone has a map position, every zone needs one",
        )
    if any(marked.values()):
        ports = frozenset(t for t, is_port in marked.items() if is_port)
    else:
        ports = frozenset(t for t in land if marked.get(t, True))
    return GameMap(
        sea=frozenset(n for n, _ in sea_entries),
        land=land,
        adjacency={k: frozenset(v) for k, v in adjacency.items()},
        ports=ports,
        positions=positions,
    )


def scenario_from_dict(data: dict[str, Any], source: str, ruleset: Ruleset) -> Scenario:
    """Validate a scenario against the ruleset it will be played with."""
    top = Reader(source, data)
    meta = top.table("scenario")
    name = meta.string("name")
    title = meta.string("title", default=name)
    ruleset_name = meta.string("ruleset", default="twtea-3e")
    dice = meta.string("dice", default="auto", choices=("auto", "manual"))
    turn_order = meta.strings("turn_order")
    side_of = _sides(top)
    raw_nations = top.raw("nations")
    if not isinstance(raw_nations, dict):
        raise top.fail("nations", "expected a table")
    game_map = _read_map(top, raw_nations)
    nations = _nations(top, side_of, ruleset, game_map)
    if sorted(turn_order) != sorted(nations):
        raise meta.fail("turn_order", "must list every nation exactly once")
    meta.finish()
    groups = _unit_groups(top, nations, ruleset, game_map)
    top.finish()
    return Scenario(
        name=name,
        title=title,
        ruleset=ruleset_name,
        dice=dice,
        turn_order=tuple(turn_order),
        nations=nations,
        game_map=game_map,
        units=groups,
    )


def _sides(top: Reader) -> dict[str, str]:
    """Each nation's side; a nation is on one side only, and there are at least two sides."""
    sides_reader = top.table("sides")
    side_of: dict[str, str] = {}
    for side in list(sides_reader.data):
        for nation in sides_reader.strings(side):
            if nation in side_of:
                raise sides_reader.fail(side, f"nation {nation!r} is on two sides")
            side_of[nation] = side
    sides_reader.finish()
    if len(sides_reader.data) < 2:
        raise top.fail("sides", "at least two sides are required")
    return side_of


def _nations(top: Reader, side_of: dict[str, str], ruleset: Ruleset, game_map: GameMap) -> dict[str, Nation]:
    """Every nation on a side, each with a table of its own and a code no other nation has."""
    nations: dict[str, Nation] = {}
    for nname, r in top.tables("nations"):
        if nname not in side_of:
            raise top.fail(f"nations.{nname}", "nation is on no side (see [sides])")
        nations[nname] = _nation(nname, r, side_of[nname], ruleset, game_map)
    for nation in side_of:
        if nation not in nations:
            raise top.fail("sides", f"nation {nation!r} has no [nations.{nation}] table")
    codes = [n.code for n in nations.values()]
    if len(set(codes)) != len(codes):
        raise top.fail("nations", "two nations share a code")
    return nations


def _nation(nname: str, r: Reader, side: str, ruleset: Ruleset, game_map: GameMap) -> Nation:
    """One nation's table: head starts within TE2, NTR in sea zones (F6), caps of known types."""
    tech = r.int_map("tech", maximum=MAX_LEVEL)
    for t, level in tech.items():
        if t not in ruleset.technologies:
            raise r.fail(f"tech.{t}", f"unknown technology (known: {', '.join(ruleset.technologies)})")
        if level > ruleset.max_head_start:
            raise r.fail(f"tech.{t}", f"head start {level} is above the maximum {ruleset.max_head_start} (TE2)")
    ntr = r.int_map("ntr", maximum=MAX_NTR)
    ntr_max = r.int_map("ntr_max", maximum=MAX_NTR)
    for key, table in (("ntr", ntr), ("ntr_max", ntr_max)):
        for zone in table:
            if not game_map.knows(zone):
                raise r.fail(f"{key}.{zone}", "unknown zone")
            if not game_map.is_sea(zone):
                raise r.fail(f"{key}.{zone}", "NTR can only be in sea zones (F6)")
    for zone, count in ntr.items():
        if count > ntr_max.get(zone, count):
            raise r.fail(f"ntr.{zone}", f"{count} is above ntr_max {ntr_max[zone]}")
    caps = r.int_map("caps")
    for unit_type in caps:
        if unit_type not in ruleset.units:
            raise r.fail(f"caps.{unit_type}", f"unknown unit type (known: {', '.join(ruleset.units)})")
    code = r.string("code")
    nation = Nation(
        name=nname,
        code=code,
        side=side,
        resources=r.integer("resources", 0, MAX_RESOURCES),
        income=r.integer("income", 0, MAX_RESOURCES, default=0),
        tech=tech,
        ntr=ntr,
        ntr_max={z: ntr_max.get(z, ntr.get(z, 0)) for z in set(ntr) | set(ntr_max)},
        caps=caps,
    )
    r.finish()
    return nation


def _unit_groups(top: Reader, nations: dict[str, Nation], ruleset: Ruleset, game_map: GameMap) -> tuple[UnitGroup, ...]:
    """The starting forces, each group where it may start; air units at sea fit on their
    nation's carriers there (F7)."""
    groups = tuple(_unit_group(ur, nations, ruleset, game_map) for ur in top.table_list("units"))
    carried: dict[tuple[str, str], int] = {}
    capacity: dict[tuple[str, str], int] = {}
    for group in groups:
        utype = ruleset.units[group.type]
        place = (group.nation, group.at)
        if utype.is_air and game_map.is_sea(group.at):
            carried[place] = carried.get(place, 0) + group.count
        if utype.carries:
            capacity[place] = capacity.get(place, 0) + utype.carries * group.count
    for (carrier_nation, zone), count in carried.items():
        if count > capacity.get((carrier_nation, zone), 0):
            raise top.fail(
                "units",
                f"{count} {carrier_nation} air unit(s) at sea in {zone} but carriers there hold "
                f"{capacity.get((carrier_nation, zone), 0)} (F7)",
            )
    return groups


def _unit_group(ur: Reader, nations: dict[str, Nation], ruleset: Ruleset, game_map: GameMap) -> UnitGroup:
    group = UnitGroup(
        nation=ur.string("nation"),
        type=ur.string("type"),
        at=ur.string("at"),
        count=ur.integer("count", 1, 1000, default=1),
    )
    ur.finish()
    if group.nation not in nations:
        raise ur.fail("nation", f"unknown nation {group.nation!r}")
    if group.type not in ruleset.units:
        raise ur.fail("type", f"reference to unknown unit {group.type!r}")
    if not game_map.knows(group.at):
        raise ur.fail("at", f"unknown zone {group.at!r}")
    utype = ruleset.units[group.type]
    if utype.is_naval and not game_map.is_sea(group.at):
        raise ur.fail("at", f"naval unit {group.type} cannot start on land ({group.at})")
    if utype.is_air and game_map.is_land(group.at):
        owner = game_map.land[group.at]
        if nations[owner].side != nations[group.nation].side:
            raise ur.fail("at", f"air unit cannot start in {group.at}, a territory of the other side")
    return group


def read_scenario(name_or_path: str) -> tuple[dict[str, Any], str]:
    """Raw TOML and source label of a built-in or user scenario (validated later with its ruleset)."""
    return read_builtin_or_file("scenarios", name_or_path)
