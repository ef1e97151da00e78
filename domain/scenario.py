"""Scenarios as data: map, nations and sides (entering the war in a given round, F8), starting
forces, NTR and head starts, from TOML. The loader raises the first problem; `scenario check`
reads on and collects them all."""

from __future__ import annotations

import re
import stat
from collections import deque
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from domain.errors import DataFileError, InputError
from domain.ruleset import Ruleset, builtin_names, load_ruleset
from domain.scenario_carriers import overfull_carriers
from domain.scenario_reading import (
    NationNames,
    Report,
    attempt,
    finish,
    meant,
    nation_names,
    stop,
    strays_lifted,
    subtables,
    toml_key,
    zones_read_through,
)
from domain.scenario_slips import check_new_campaign
from domain.schema import Reader, SameNameTwice, did_you_mean

# Sane maxima for a scenario's numbers: far above any real game, and low enough that a
# campaign's balances and counts stay within database integers for thousands of turns.
MAX_RESOURCES = 1_000_000
MAX_NTR = 10_000
# Map coordinates are drawing positions only (no rule reads them); any unit, this range.
MAX_COORDINATE = 100_000
# F8: a nation entering the war later than this has no war to enter in any real campaign.
MAX_ENTRY_ROUND = 10_000
# The form of a scenario's `name` that `tracker scenario new` writes (nothing looks a scenario
# up by it: campaigns show it in reports and --json).
SCENARIO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


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
    # F8: the first round the nation is at war; before it, it is neutral. Scenarios (and the
    # campaigns recorded from them) that do not say are at war from round 1.
    entry_round: int = 1


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

    def distance(self, start: str, goal: str, avoid: frozenset[str] = frozenset()) -> int | None:
        """Map steps between two places over sea and land (F7 air range), passing through no
        place of `avoid` (F8: a neutral's territory)."""
        if start == goal:
            return 0
        if goal in avoid:
            return None
        seen = {start, *avoid}
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
        """F5: nations of different sides (whether both are at war yet is `at_war`'s, F8)."""
        return self.nations[a].side != self.nations[b].side

    def at_war(self, nation: str, round_: int, entered: frozenset[str] | tuple[str, ...] = ()) -> bool:
        """F8: the nation is at war in this round: its entry round has come, or an adjustment
        (AD1) brought its entry forward (`entered`)."""
        return round_ >= self.nations[nation].entry_round or nation in entered

    def neutral(self, round_: int, entered: frozenset[str] | tuple[str, ...] = ()) -> frozenset[str]:
        """F8: the nations still neutral in this round."""
        return frozenset(n for n in self.nations if not self.at_war(n, round_, entered))


def _position(r: Reader, report: Report) -> tuple[int, int] | None:
    if not (r.has("x") or r.has("y")):
        return None
    if not (r.has("x") and r.has("y")):
        r.used.update(("x", "y"))
        report(r.fail("y" if r.has("x") else "x", "missing: a map position needs both x and y"))
        return None
    x = attempt(report, None, r.integer, "x", -MAX_COORDINATE, MAX_COORDINATE)
    y = attempt(report, None, r.integer, "y", -MAX_COORDINATE, MAX_COORDINATE)
    return None if x is None or y is None else (x, y)


# The lead of the error of a map giving some zones x and y and not others: `scenario map` draws
# it all the same, the others laid out around those, and says it as a warning.
SOME_POSITIONS = "no x and y: once one zone has a map position, every zone needs one"


def _some_positions(top: Reader, names: list[str], sea_names: set[str], placing: set[str], report: Report) -> None:
    """The error of a map where some zones have x and y and others not, at the first without:
    naming the fewer of the two kinds, so that either can be made whole."""
    lacking = [n for n in names if n not in placing]
    where = f"map.{'sea' if lacking[0] in sea_names else 'land'}.{lacking[0]}"
    have = f"({len(placing)} of {len(names)} have one)"
    given = [n for n in names if n in placing]
    fewer = f"given for {_some_of(given)}" if len(given) <= len(lacking) else f"missing for {_some_of(lacking)}"
    # The way out a newcomer who typed a few by hand is looking for.
    way = "give every zone x and y, or none, or let `tracker scenario map FILE --write-coordinates` lay out"
    problem = f"{SOME_POSITIONS} {have}: {fewer}; {way} the rest"
    report(top.fail(where, problem))


def _some_of(names: list[str], most: int = 3) -> str:
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _read_map(top: Reader, owners: NationNames, report: Report) -> GameMap:
    m = attempt(report, None, top.table, "map")
    if m is None:
        return GameMap(sea=frozenset(), land={}, adjacency={})
    sea_entries = subtables(m, "sea", report)
    land_entries = subtables(m, "land", report, required=False)
    sea_entries, land_entries = zones_read_through(top, m, sea_entries, land_entries, report)
    finish(m, report)
    if m.has("sea") and not sea_entries:
        report(top.fail("map.sea", "at least one sea zone is required"))
    sea_names = {n for n, _ in sea_entries}
    for name in sorted(sea_names & {n for n, _ in land_entries}):
        twice = (top.key(f"map.sea.{name}"), top.key(f"map.land.{name}"))
        report(SameNameTwice(top.source, twice, f"{name!r} is both a sea zone and a land territory"))
    land_entries = [(n, r) for n, r in land_entries if n not in sea_names]
    names = [n for n, _ in sea_entries] + [n for n, _ in land_entries]
    adjacency: dict[str, set[str]] = {n: set() for n in names}
    land: dict[str, str] = {}
    marked: dict[str, bool] = {}
    positions: dict[str, tuple[int, int]] = {}
    # Zones that give x or y, placed or not (a bad x or y is reported on its own).
    placing = {n for n, r in sea_entries + land_entries if r.has("x") or r.has("y")}
    for name, r in sea_entries + land_entries:
        position = _position(r, report)
        if position is not None:
            positions[name] = position
        if name not in sea_names:
            # An unknown or missing owner is reported; the territory stays land meanwhile.
            land[name] = owners.resolve(attempt(report, "", r.string, "owner"))
            if land[name] and owners.unknown(land[name]):
                report(r.fail("owner", f"unknown nation {land[name]!r}{owners.meant(land[name])}"))
            if r.has("port"):
                marked[name] = attempt(report, False, r.boolean, "port")
        for other in attempt(report, list[str](), r.strings, "adjacent", default=[]):
            if other not in adjacency:
                hint = meant(other, adjacency)
                report(r.fail("adjacent", f"unknown zone {other!r} in adjacency list{hint}"))
            elif other == name:
                report(r.fail("adjacent", "a zone cannot be adjacent to itself"))
            else:
                adjacency[name].add(other)
                adjacency[other].add(name)
        finish(r, report)
    if placing and len(placing) < len(names):
        _some_positions(top, names, sea_names, placing, report)
    return GameMap(
        sea=frozenset(sea_names),
        land=land,
        adjacency={k: frozenset(v) for k, v in adjacency.items()},
        ports=_ports(land, marked),
        positions=positions if len(positions) == len(names) else {},
    )


def _ports(land: dict[str, str], marked: dict[str, bool]) -> frozenset[str]:
    """PU2: a scenario that marks no port makes every territory one; once any territory says
    `port = true`, only the marked ones are ports (`port = false` alone excludes that one)."""
    if any(marked.values()):
        return frozenset(t for t, is_port in marked.items() if is_port)
    return frozenset(t for t in land if marked.get(t, True))


def scenario_from_dict(data: dict[str, Any], source: str, ruleset: Ruleset, *, new_campaign: bool = False) -> Scenario:
    """Validate a scenario against the ruleset it will be played with; the first problem is
    raised as a DataFileError naming the file and the key path. `new_campaign` adds the checks
    of `domain.scenario_slips`, which a recorded campaign's scenario is read without."""
    return _build(data, source, ruleset, stop, new_campaign)


def scenario_with_problems(data: dict[str, Any], source: str, ruleset: Ruleset) -> tuple[Scenario, list[DataFileError]]:
    """Every problem the loader finds for a new campaign, not only the first, and the scenario
    as far as it could be read around them (to draw or to warn about; never to play while there
    are problems)."""
    problems: list[DataFileError] = []
    return _build(data, source, ruleset, problems.append, new_campaign=True), problems


def _build(data: dict[str, Any], source: str, ruleset: Ruleset, report: Report, new_campaign: bool) -> Scenario:
    top = Reader(source, data)
    meta = attempt(report, Reader(source, {}, "scenario"), top.table, "scenario")
    name = attempt(report, "", meta.string, "name")
    title = attempt(report, name, meta.string, "title", default=name)
    ruleset_name = attempt(report, "twtea-3e", meta.string, "ruleset", default="twtea-3e")
    dice = attempt(report, "auto", meta.string, "dice", default="auto", choices=("auto", "manual"))
    turn_order = attempt(report, None, meta.strings, "turn_order")
    side_of, sides_read = _sides(top, report)
    raw_nations: Any = attempt(report, None, top.raw, "nations")
    if raw_nations is not None and not isinstance(raw_nations, dict):
        report(top.fail("nations", "expected a table"))
    names = nation_names(raw_nations, side_of, sides_read)
    game_map = _read_map(top, names, report)
    nations = _nations(top, side_of, sides_read, names, ruleset, game_map, report)
    if turn_order is not None:
        turn_order = [names.resolve(n) for n in turn_order]
        _check_turn_order(meta, turn_order, nations, names, report)
    finish(meta, report)
    placed = _unit_groups(top, nations, names, ruleset, game_map, report)
    finish(top, report)
    scenario = Scenario(
        name=name,
        title=title,
        ruleset=ruleset_name,
        dice=dice,
        turn_order=tuple(turn_order) if turn_order is not None else tuple(nations),
        nations=nations,
        game_map=game_map,
        units=tuple(group for _, group in placed),
    )
    if new_campaign:
        check_new_campaign(data, scenario, placed, source, report)
    return scenario


def _check_turn_order(
    meta: Reader, turn_order: list[str], nations: dict[str, Nation], names: NationNames, report: Report
) -> None:
    """T1: every nation once. A nation the file names whose table could not be read is not
    called missing or unknown here: its own problem is reported where it is."""
    missing = [n for n in nations if n not in turn_order]
    twice = sorted({n for n in turn_order if turn_order.count(n) > 1})
    strangers = [f"{n}{names.meant(n, nations)}" for n in turn_order if n not in nations and names.unknown(n)]
    details = [
        f"{what}: {', '.join(listed)}"
        for what, listed in (("missing", missing), ("twice", twice), ("no such nation", strangers))
        if listed
    ]
    if details:
        report(meta.fail("turn_order", f"must list every nation exactly once ({'; '.join(details)})"))


def _sides(top: Reader, report: Report) -> tuple[dict[str, str], bool]:
    """Each nation's side; a nation is on one side only, and there are at least two sides. The
    flag says whether every side's list could be read (if not, a nation missing from them may
    be on the unread one)."""
    sides_reader = attempt(report, None, top.table, "sides")
    if sides_reader is None:
        return {}, False
    side_of: dict[str, str] = {}
    complete = True
    for side in list(sides_reader.data):
        listed = attempt(report, None, sides_reader.strings, side)
        if listed is None:
            complete = False
            continue
        for nation in listed:
            if nation in side_of:
                report(sides_reader.fail(side, f"nation {nation!r} is on two sides"))
            else:
                side_of[nation] = side
    if len(sides_reader.data) < 2:
        report(top.fail("sides", "at least two sides are required"))
    return side_of, complete


def _nations(
    top: Reader,
    side_of: dict[str, str],
    sides_read: bool,
    names: NationNames,
    ruleset: Ruleset,
    game_map: GameMap,
    report: Report,
) -> dict[str, Nation]:
    """Every nation on a side, each with a table of its own and a code no other nation has
    (a nation on no side is not reported when [sides] could not be read whole: it says why)."""
    nations: dict[str, Nation] = {}
    spelt = {table: listed for listed, table in names.aliases.items()}
    for nname, r in subtables(top, "nations", report):
        if nname not in side_of and nname not in spelt and sides_read:
            report(top.fail(f"nations.{nname}", "nation is on no side (see [sides])"))
        side = side_of.get(nname, side_of.get(spelt.get(nname, ""), ""))
        nations[nname] = _nation(nname, r, side, ruleset, game_map, report)
    for nation in side_of:
        if nation not in nations and names.tableless(nation, top):
            # At the side that names it, with the table it may have meant (a name spelt two ways:
            # the one slip the two spellings make, reported here only).
            problem = f"nation {nation!r} has no [nations.{toml_key(nation)}] table{names.meant(nation, nations)}"
            report(top.fail(f"sides.{side_of[nation]}", problem))
    holders: dict[str, list[str]] = {}
    for n in nations.values():
        if n.code:
            holders.setdefault(n.code, []).append(n.name)
    for code, sharing in holders.items():
        if len(sharing) > 1:
            keys = (top.key(f"nations.{sharing[-1]}.code"), top.key(f"nations.{sharing[0]}.code"))
            report(SameNameTwice(top.source, keys, f"two nations share a code ({code!r}: {', '.join(sharing)})"))
    return nations


def _tech(r: Reader, ruleset: Ruleset, report: Report) -> dict[str, int]:
    """Head starts in known technologies, within TE2; each level is checked against the TE2
    maximum itself, however large (a bound of the reader's would name a maximum no rule sets)."""
    table = attempt(report, None, r.table, "tech", False)
    if table is None:
        return {}
    tech: dict[str, int] = {}
    for t in list(table.data):
        table.used.add(t)
        if t not in ruleset.technologies:
            report(r.fail(f"tech.{t}", f"unknown technology (known: {', '.join(ruleset.technologies)})"))
            continue
        value = table.data[t]
        if isinstance(value, int) and not isinstance(value, bool) and value > ruleset.max_head_start:
            report(r.fail(f"tech.{t}", f"head start {value} is above the maximum {ruleset.max_head_start} (TE2)"))
            continue
        level = attempt(report, None, table.integer, t, 0)
        if level is not None:
            tech[t] = level
    return tech


def _trade(r: Reader, game_map: GameMap, report: Report) -> tuple[dict[str, int], dict[str, int]]:
    """Starting NTR and their maxima, in sea zones only (F6)."""
    ntr = attempt(report, dict[str, int](), r.int_map, "ntr", maximum=MAX_NTR)
    ntr_max = attempt(report, dict[str, int](), r.int_map, "ntr_max", maximum=MAX_NTR)
    for key, table in (("ntr", ntr), ("ntr_max", ntr_max)):
        for zone in table:
            if not game_map.knows(zone):
                report(r.fail(f"{key}.{zone}", "unknown zone" + did_you_mean(zone, game_map.adjacency)))
            elif not game_map.is_sea(zone):
                report(r.fail(f"{key}.{zone}", "NTR can only be in sea zones (F6)"))
    for zone, count in ntr.items():
        if count > ntr_max.get(zone, count):
            report(r.fail(f"ntr.{zone}", f"{count} is above ntr_max {ntr_max[zone]}"))
    return ntr, {z: ntr_max.get(z, ntr.get(z, 0)) for z in set(ntr) | set(ntr_max)}


def _entry_round(r: Reader, report: Report) -> int:
    """F8: the round the nation enters the war, 1 (at war from the start) when not given."""
    value = r.raw("entry_round", 1)
    if isinstance(value, int) and not isinstance(value, bool) and value < 1:
        problem = f"entry round {value} is before round 1 (F8; leave it out to be at war from the start)"
        report(r.fail("entry_round", problem))
        return 1
    return attempt(report, 1, r.integer, "entry_round", 1, MAX_ENTRY_ROUND, default=1)


def _nation(nname: str, r: Reader, side: str, ruleset: Ruleset, game_map: GameMap, report: Report) -> Nation:
    """One nation's table: head starts within TE2, NTR in sea zones (F6), caps of known types,
    the round it enters the war (F8)."""
    zones = game_map.adjacency
    r = strays_lifted(
        nname, r, {"tech": ruleset.technologies, "ntr": zones, "ntr_max": zones, "caps": ruleset.units}, report
    )
    tech = _tech(r, ruleset, report)
    ntr, ntr_max = _trade(r, game_map, report)
    caps = attempt(report, dict[str, int](), r.int_map, "caps")
    for unit_type in caps:
        if unit_type not in ruleset.units:
            report(r.fail(f"caps.{unit_type}", f"unknown unit type (known: {', '.join(ruleset.units)})"))
    nation = Nation(
        name=nname,
        code=attempt(report, "", r.string, "code"),
        side=side,
        resources=attempt(report, 0, r.integer, "resources", 0, MAX_RESOURCES),
        income=attempt(report, 0, r.integer, "income", 0, MAX_RESOURCES, default=0),
        tech=tech,
        ntr=ntr,
        ntr_max=ntr_max,
        caps=caps,
        entry_round=_entry_round(r, report),
    )
    finish(r, report)
    return nation


def _group_readers(top: Reader, report: Report) -> list[Reader]:
    value: Any = attempt(report, [], top.raw, "units")
    if not isinstance(value, list):
        report(top.fail("units", "expected a list of tables ([[units]])"))
        return []
    readers = []
    for i, item in enumerate(value):
        try:
            readers.append(Reader(top.source, item, f"units[{i}]"))
        except DataFileError as problem:
            report(problem)
    return readers


def _unit_groups(
    top: Reader, nations: dict[str, Nation], names: NationNames, ruleset: Ruleset, game_map: GameMap, report: Report
) -> list[tuple[str, UnitGroup]]:
    """The starting forces, each group where it may start, with its key path (`units[3]`); air
    units at sea fit on the carriers of their side there (F7; their nation's own while it is
    neutral, F8, or under a ruleset without `friendly_carriers`)."""
    placed = []
    for ur in _group_readers(top, report):
        group = _unit_group(ur, nations, names, ruleset, game_map, report)
        if group is not None:
            placed.append((ur.path, group))
    for path, message in overfull_carriers(placed, nations, ruleset, game_map):
        report(DataFileError(top.source, f"{path}.at", message))
    return placed


def _unit_group(
    ur: Reader, nations: dict[str, Nation], names: NationNames, ruleset: Ruleset, game_map: GameMap, report: Report
) -> UnitGroup | None:
    """One starting group, or None when it cannot be placed (each reason reported; a nation
    whose own table has a problem is not reported again at each of its groups)."""
    nation = attempt(report, None, ur.string, "nation")
    unit_type = attempt(report, None, ur.string, "type")
    at = attempt(report, None, ur.string, "at")
    count = attempt(report, None, ur.integer, "count", 1, 1000, default=1)
    finish(ur, report)
    nation = names.resolve(nation) if nation is not None else None
    if nation is not None and nation not in nations:
        if names.unknown(nation):
            report(ur.fail("nation", f"unknown nation {nation!r}{names.meant(nation)}"))
        nation = None
    if unit_type is not None and unit_type not in ruleset.units:
        known = ", ".join(ruleset.units)
        report(
            ur.fail(
                "type",
                f"reference to unknown unit {unit_type!r}{meant(unit_type, ruleset.units)} (known: {known})",
            )
        )
        unit_type = None
    if at is not None and not game_map.knows(at):
        report(ur.fail("at", f"unknown zone {at!r}{meant(at, game_map.adjacency)}"))
        at = None
    if nation is None or unit_type is None or at is None or count is None:
        return None
    utype = ruleset.units[unit_type]
    if utype.is_naval and not game_map.is_sea(at):
        report(ur.fail("at", f"naval unit {unit_type} cannot start on land ({at})"))
        return None
    owner = game_map.land.get(at)
    if utype.is_air and owner in nations and nations[owner].side != nations[nation].side:
        report(ur.fail("at", f"air unit cannot start in {at}, a territory of the other side"))
        return None
    return UnitGroup(nation=nation, type=unit_type, at=at, count=count)


def load_named_ruleset(named: str, scenario_source: str) -> tuple[Ruleset, dict[str, Any]]:
    """The ruleset a scenario file names, as `load_ruleset` reads it: a built-in by its name, a
    file by a path relative to the folder of the scenario naming it (a board and its house
    ruleset are kept and moved together), whatever folder the command runs in. A built-in
    scenario (read by name), stdin and a stream (`/dev/stdin`, `<(...)`) have no folder: the
    path is the command's, as one typed with --ruleset is."""
    path = Path(named)
    if named in builtin_names("rulesets") or path.is_absolute():
        return load_ruleset(named)
    source = Path(scenario_source)
    if not source.is_file() or scenario_source.startswith(("/dev/", "/proc/")):
        return load_ruleset(named)
    beside = source.parent / path
    if str(beside) != named and not beside.exists():
        # The path as read, not only as written: the folder it was looked for in is the point.
        raise InputError(
            f"unknown ruleset {named!r}: not a built-in ({', '.join(builtin_names('rulesets'))}) and no file "
            f"{beside} (a ruleset file a scenario names is read from the scenario's folder)"
        )
    return load_ruleset(str(beside))


def read_scenario(name_or_path: str) -> tuple[dict[str, Any], str]:
    """Raw TOML and source label of a built-in or user scenario (validated later with its ruleset),
    read as `scenario check` reads it (a byte-order mark before the TOML is let pass)."""
    import tomllib  # only reading a scenario file needs it: a recorded campaign carries its own

    text, source = scenario_text(name_or_path)
    try:
        return tomllib.loads(text), source
    except tomllib.TOMLDecodeError as e:
        raise DataFileError(source, "", f"not valid TOML ({e})") from None


def scenario_text(name_or_path: str) -> tuple[str, str]:
    """The text and source label of a built-in or user scenario, for tools that point at lines
    (`scenario check`) or edit the file (`scenario map --write-coordinates`). A UTF-8 byte-order
    mark that some editors write first is left out (TOML has no place for it; a file edited
    here is written without it)."""
    if name_or_path in builtin_names("scenarios"):
        ref = resources.files("domain.data").joinpath("scenarios").joinpath(f"{name_or_path}.toml")
        return ref.read_text(encoding="utf-8"), name_or_path
    path = Path(name_or_path)
    try:
        mode = path.stat().st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            # /dev/zero would be read for ever; a pipe (`<(...)`) ends and is read.
            raise InputError(f"{name_or_path}: is a device, not a TOML file")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(
            f"unknown scenario {name_or_path!r}: not a built-in ({', '.join(builtin_names('scenarios'))}) "
            "and no such file"
        ) from None
    except IsADirectoryError:
        raise InputError(f"{name_or_path}: is a directory, not a TOML file") from None
    except OSError as e:
        raise InputError(f"cannot read {name_or_path}: {e.strerror or e}") from None
    return decoded_scenario(raw, str(path)), str(path)


def decoded_scenario(raw: bytes, source: str) -> str:
    """A scenario file's bytes as text, its line endings as they are (a tool that edits the file
    must not rewrite every line) and without a UTF-8 byte-order mark; not UTF-8 is refused
    naming the line of the first byte that is not (a file saved as Latin-1 or Windows-1252)."""
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise DataFileError(source, "", "not a UTF-8 text file (it is UTF-16: save it as UTF-8)") from None
        line = raw.count(b"\n", 0, e.start) + 1
        byte = raw[e.start : e.start + 1].hex()
        problem = f"not a UTF-8 text file (line {line}: byte 0x{byte} is not UTF-8): save it as UTF-8"
        raise NotUtf8(source, problem, line) from None


class NotUtf8(DataFileError):
    """A scenario file that is not UTF-8 text, with the line of its first byte that is not:
    `scenario check --json` gives it as the finding's line, as an editor jumps to it."""

    def __init__(self, source: str, problem: str, line: int) -> None:
        super().__init__(source, "", problem)
        self.line = line
