"""`scenario check`: every problem of a scenario file at once, each with its line and key path,
as errors (what the loader refuses) and warnings (what it accepts but a board rarely means).

Line numbers come from the file's text (`domain.toml_lines`): each problem at the line that
writes its key, or at the nearest table that holds a key the file lacks (line 1 for a table the
file lacks altogether).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from typing import Any

from domain.errors import DataFileError, InputError
from domain.ruleset import Ruleset, load_ruleset
from domain.scenario import SCENARIO_NAME, GameMap, Scenario, load_named_ruleset, scenario_with_problems
from domain.scenario_reading import TOP_LEVEL, ReferredTo, misplaced_zones
from domain.scenario_toml import toml_refusal
from domain.schema import SameNameTwice, control_character
from domain.text import plural
from domain.toml_lines import key_lines, key_parts, line_of


@dataclass(frozen=True)
class Finding:
    level: str  # "error" or "warning"
    key: str
    message: str
    line: int | None

    def as_dict(self, source: str) -> dict[str, Any]:
        return {"level": self.level, "file": source, "line": self.line, "key": self.key, "message": self.message}


@dataclass(frozen=True)
class Written:
    """How many of each thing the file writes, those with errors included (the scenario as read
    leaves out a unit group it cannot place)."""

    sea: int
    land: int
    nations: int
    unit_groups: int


@dataclass(frozen=True)
class ScenarioCheck:
    source: str
    findings: tuple[Finding, ...]
    scenario: Scenario | None  # as far as it could be read; None when the file is no TOML
    ruleset: Ruleset | None = None  # the one it was checked against, when it could be read
    written: Written | None = None  # None when the file is no TOML

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "warning"]


# ----- the check -----


def check_scenario(text: str, source: str, ruleset: str | None = None, *, positions: bool = True) -> ScenarioCheck:
    """Every error the loader finds and every warning below, in the order of the file. `ruleset`
    (a name or a file) replaces the one the scenario names, as `tracker new --ruleset` does.
    Without `positions`, the zones' x and y are left unread (a layout is about to replace them)."""
    # A byte-order mark some editors write first: TOML has no place for it, nothing is lost.
    text = text.removeprefix("\ufeff")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return ScenarioCheck(source, (not_toml(text, str(e)),), None)
    if not positions:
        _drop_positions(data)
    if not data:
        # Nothing but blanks and comments: one finding, not one per missing table.
        return ScenarioCheck(source, (Finding("error", "", EMPTY, 1),), None)
    lines = key_lines(text)
    text_lines = text.split("\n")

    def finding(level: str, key: str, message: str) -> Finding:
        line = line_of(lines, text_lines, key_parts(data, key), message)
        if line is None:
            # A table the file lacks altogether: the top level that should hold it begins at
            # line 1, as a key a table lacks is shown at that table's header.
            line = 1
            if key in TOP_LEVEL and message == "missing required key":
                header = "[[units]]" if key == "units" else f"[{key}]"
                message = f"{message}: the file has no {header} table"
        return Finding(level, key, message, line)

    def error(problem: DataFileError) -> Finding:
        """The problem at its key; a name given twice at the later of its two places (the
        duplicate, where an editor's "defined twice" points), naming the other's line too; a
        slip in a zone's table with the lines that name the zone."""
        if isinstance(problem, ReferredTo):
            at = finding("error", problem.key, problem.problem)
            # Each line once, and not the slip's own (a reference whose key falls back to it).
            named = {finding("error", key, repr(name)).line for key, name in problem.refs} - {at.line}
            return replace(at, message=problem.told(sorted(n for n in named if n is not None)))
        if not isinstance(problem, SameNameTwice):
            return finding("error", problem.key, problem.problem)
        first, later = sorted((finding("error", key, problem.problem) for key in problem.keys), key=_by_line)
        if first.line is None or first.line == later.line:
            return later
        return replace(later, message=f"{later.message} (also at line {first.line})")

    written = _written(data)
    rules = _ruleset(data, source, ruleset)
    if isinstance(rules, str):
        return ScenarioCheck(source, (finding("error", "scenario.ruleset", rules),), None, written=written)
    scenario, problems = scenario_with_problems(data, source, rules)
    kept = _without_echoes(problems)
    errors = [error(p) for p in kept]
    unsure = _unsure_zones(data, scenario.game_map, [p for p in kept if _about_borders(p)])
    warnings = [finding("warning", key, message) for key, message in scenario_warnings(data, scenario, unsure)]
    order = sorted(errors, key=_by_line) + sorted(warnings, key=_by_line)
    return ScenarioCheck(source, tuple(order), scenario, rules, written)


def first_error(text: str, source: str, ruleset: str | None = None) -> DataFileError | None:
    """The problem `tracker new` refuses a file with: the first error the check lists, at its
    key path and in its words, or None when it lists none. The loader alone would stop at the
    first problem in the order it reads the tables (all of [scenario] last, a key called missing
    before the misspelt key beside it, a name given twice at its first place), which is not the
    line the check's list begins with."""
    errors = check_scenario(text, source, ruleset).errors
    return DataFileError(source, errors[0].key, errors[0].message) if errors else None


def _drop_positions(data: dict[str, Any]) -> None:
    """`data` without any zone's x and y, those of a zone written under a misspelt header (read
    as a zone all the same) too."""
    game_map = data.get("map")
    if not isinstance(game_map, dict):
        return  # the loader reports it
    tables = [t for kind in ("sea", "land") if isinstance(game_map.get(kind), dict) for t in game_map[kind].values()]
    tables += [table for _, _, misplaced in misplaced_zones(data) for _, _, table in misplaced]
    for table in tables:
        if isinstance(table, dict):
            table.pop("x", None)
            table.pop("y", None)


# A file of nothing but blanks and comments, as `scenario check` and `tracker new` say it.
EMPTY = "no scenario in the file: it is empty (`tracker scenario new NAME` writes one to start from)"


def not_toml(text: str, error: str) -> Finding:
    """TOML's refusal at its line, with the key path of that line and, for a slip of typing, what
    to write instead (`domain.scenario_toml`). `tracker new` says it in the same words."""
    key, problem, line = toml_refusal(text, error)
    return Finding("error", key, problem, line)


def _written(data: dict[str, Any]) -> Written:
    """What the file writes, counted from its tables whatever their problems."""

    def count(value: Any) -> int:
        return len(value) if isinstance(value, dict | list) else 0

    game_map = data.get("map")
    tables = game_map if isinstance(game_map, dict) else {}
    return Written(
        sea=count(tables.get("sea")),
        land=count(tables.get("land")),
        nations=count(data.get("nations")),
        # A lone [units] table (for [[units]]) writes one group, whatever keys it holds.
        unit_groups=1 if isinstance(data.get("units"), dict) else count(data.get("units")),
    )


def _by_line(f: Finding) -> int:
    return f.line if f.line is not None else 0


def _ruleset(data: dict[str, Any], source: str, override: str | None) -> Ruleset | str:
    """The ruleset to check against, or why the scenario's own cannot be read (without it no
    unit type or technology can be checked, so the check stops there). A file the scenario
    names is found beside it (`load_named_ruleset`), as `tracker new` finds it."""
    meta = data.get("scenario")
    named = meta.get("ruleset", "twtea-3e") if isinstance(meta, dict) else "twtea-3e"
    if override is not None:
        return load_ruleset(override)[0]  # one the user typed: an error of usage (exit 2)
    if not isinstance(named, str):
        named = "twtea-3e"  # the loader reports the bad value itself
    try:
        return load_named_ruleset(named, source)[0]
    except (DataFileError, InputError) as e:
        return f"the ruleset cannot be read, so nothing else was checked: {e}"


# A key the loader did not ask for, spelt like one it did: `unknown key (did you mean 'code'?)`.
_MISSPELT = re.compile(r"unknown key \(did you mean '(.+)'\?\)")


def _without_echoes(problems: list[DataFileError]) -> list[DataFileError]:
    """Each problem once; nothing reported inside a table already reported missing or not a
    table (`scenario = "x"` is one slip, not one per key the table should hold), no zone
    called unknown when the file has no map to know it by, and no key called missing that a
    misspelt key beside it is reported as meaning (`cod = "DE"` is one slip, at its own line)."""
    seen: set[tuple[str, str]] = set()
    missing: list[str] = []
    kept = []
    misspelt = [(p, meant.group(1)) for p in problems if (meant := _MISSPELT.fullmatch(p.problem))]
    for p in problems:
        if (p.key, p.problem) in seen or any(p.key.startswith(m + ".") for m in missing):
            continue
        if p.problem == "missing required key" and any(_spelt_for(p.key, u.key, m) for u, m in misspelt):
            continue
        if "map" in missing and p.problem.startswith("unknown zone"):
            continue
        seen.add((p.key, p.problem))
        if p.problem == "missing required key" or p.problem.startswith("expected a table,"):
            missing.append(p.key)
        kept.append(p)
    return kept


def _about_borders(problem: DataFileError) -> bool:
    """An error that leaves a border of the map unread: in an `adjacent` list, a key misspelt
    for one, or a zone's entry that is no table."""
    return (
        problem.key.endswith(".adjacent")
        or problem.problem == "unknown key (did you mean 'adjacent'?)"
        # A zone written [[...]] is read all the same (see `subtables`).
        or (
            problem.key.startswith("map.")
            and bool(re.match(r"expected a table, got (?!a list of tables)", problem.problem))
        )
    )


def _unsure_zones(data: dict[str, Any], game_map: GameMap, unread: list[DataFileError]) -> frozenset[str]:
    """The zones a border left unread by one of the `unread` errors may join to the map: the
    zone whose list it is in, the zone its error suggests (`did you mean 'Riga'?`) and every
    zone that list, or a key misspelt for it, names. Whether those are cut off, or a port
    inland, waits on the error; every other zone's warnings are told all the same."""
    zones = sorted(game_map.adjacency, key=len, reverse=True)  # the longest name first: "A.B" before "B"
    unsure: set[str] = set()
    for problem in unread:
        unsure.update(z for z in zones if f"did you mean {z!r}" in problem.problem)
        # The zone's table is the key's last part off (`.adjacent`, `.adjacant`), read as its
        # first entry when written [[...]]. A zone whose own entry is no table is no zone of the
        # map: each list naming it is an error of its own, at the zone that holds that list.
        table = problem.key.rpartition(".")[0].removesuffix("[0]")
        holder = next((z for z in zones if table.endswith(f".{z}")), None)
        if holder is not None:
            unsure.add(holder)
            unsure.update(n for n in _names_written(data, holder) if game_map.knows(n))
    return frozenset(unsure)


def _names_written(data: dict[str, Any], zone: str) -> set[str]:
    """Every text a zone's table holds, in a list or alone, wherever in the file it is written."""
    game_map = data.get("map")
    tables = [game_map.get(kind) for kind in ("sea", "land")] if isinstance(game_map, dict) else []
    found = [t.get(zone) for t in tables if isinstance(t, dict)]
    found += [table for _, _, misplaced in misplaced_zones(data) for name, _, table in misplaced if name == zone]
    names: set[str] = set()
    for table in found:
        table = table[0] if isinstance(table, list) and table else table
        for value in table.values() if isinstance(table, dict) else ():
            values = value if isinstance(value, list) else [value]
            names.update(v for v in values if isinstance(v, str))
    return names


def _spelt_for(missing: str, unknown: str, meant: str) -> bool:
    """The key `missing` is the one the unknown key `unknown` of the same table is said to mean."""
    if missing != meant and not missing.endswith("." + meant):
        return False
    table = missing[: len(missing) - len(meant)]
    return unknown.startswith(table) and unknown != missing


# ----- warnings: what the loader accepts but a board rarely means -----


def scenario_warnings(
    data: dict[str, Any], scenario: Scenario, unsure: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """(key path, message) for zones nobody can reach, ports without a sea, a side with nobody
    on it or nobody at war in round 1 (F8), a nation with no unit and no port (PU2), a cap below
    the units a nation starts with (PU3), a name not of the template's form, a title too long
    to head a page, and a zone listed twice in one `adjacent` list. A zone `unsure` (one a
    border left unread by an error may join) is called neither cut off, nor a port inland,
    nor is any zone joined to it over the borders read: the border left out may be why."""
    game_map = scenario.game_map
    return [
        *_unreachable(game_map, unsure),
        *_inland_ports(data, game_map, unsure),
        *_empty_sides(data),
        *_sides_at_peace(scenario),
        *_portless(data, scenario),
        *_caps_below_the_start(scenario),
        *_name_form(data),
        *_long_title(data),
        *_listed_twice(data, game_map),
    ]


def _caps_below_the_start(scenario: Scenario) -> list[tuple[str, str]]:
    """PU3: a cap is the most units of a type the nation may have, so one below what it starts
    with contradicts the file's own forces (the nation could buy none until its losses bring it
    under). Only the scenario's caps: a ruleset's are not the scenario author's to change."""
    found = []
    for name, nation in scenario.nations.items():
        for unit_type, cap in nation.caps.items():
            have = sum(g.count for g in scenario.units if g.nation == name and g.type == unit_type)
            if have > cap:
                found.append(
                    (
                        f"nations.{name}.caps.{unit_type}",
                        f"{name} starts with {plural(have, unit_type)}, more than its cap of {cap} (PU3: the most "
                        f"it may have): raise the cap to at least {have}, or start it with fewer",
                    )
                )
    return found


def _portless(data: dict[str, Any], scenario: Scenario) -> list[tuple[str, str]]:
    """PU2: a nation that starts with no unit and holds no port can never have one (a nation
    whose ports are off the board, with units on it, is a board's own choice). Units the file
    gives it count, placed or not: a group with an error is reported at its own key."""
    game_map = scenario.game_map
    holds = {game_map.land[t] for t in game_map.ports if t in game_map.land}
    groups = data.get("units")
    written = [g.get("nation") for g in groups if isinstance(g, dict)] if isinstance(groups, list) else []
    armed = {group.nation for group in scenario.units} | {n for n in written if isinstance(n, str)}
    return [
        (
            f"nations.{name}",
            "starts with no unit and holds no port, so it can never place one (PU2): "
            "give it [[units]] or a territory with a port",
        )
        for name in scenario.nations
        if name not in holds and name not in armed
    ]


def _empty_sides(data: dict[str, Any]) -> list[tuple[str, str]]:
    """F5: a side listing no nation is nobody's enemy: a slip, or a side left to fill in."""
    sides = data.get("sides")
    if not isinstance(sides, dict):
        return []
    return [(f"sides.{side}", "no nation is on this side (F5)") for side, listed in sides.items() if listed == []]


def _name_form(data: dict[str, Any]) -> list[tuple[str, str]]:
    """A scenario name not of the form `tracker scenario new` gives. Only a warning: nothing
    finds a scenario by it (campaigns show it in reports and --json); one that cannot be shown
    on one line is an error of its own."""
    meta = data.get("scenario")
    name = meta.get("name") if isinstance(meta, dict) else None
    if (
        not isinstance(name, str)
        or not name.strip()
        or SCENARIO_NAME.fullmatch(name)
        or control_character(name) is not None
    ):
        return []  # missing, not a string, empty or with control characters: errors of their own
    form = "letters, digits, - and _ (at most 64, a letter or digit first)"
    return [("scenario.name", f"{name!r} is not of {form}, the form `tracker scenario new` gives")]


# The longest title not warned about: it heads every report (the line under its heading), the
# viewer's board page (beside the campaign's name) and `tracker map`'s table, and stands in the
# viewer's list of campaigns; past a line's width it wraps on each, or stretches that list. A
# board game's scenario title is rarely half as long.
MAX_TITLE = 120


def _long_title(data: dict[str, Any]) -> list[tuple[str, str]]:
    """A title longer than MAX_TITLE characters (one that cannot be shown on one line is an
    error of its own)."""
    meta = data.get("scenario")
    title = meta.get("title") if isinstance(meta, dict) else None
    if not isinstance(title, str) or len(title) <= MAX_TITLE or control_character(title) is not None:
        return []
    return [
        (
            "scenario.title",
            f"the title is {len(title)} characters long: it heads every report and the viewer's board page, "
            f"where one of more than {MAX_TITLE} wraps over lines; shorten it (a comment can keep the rest)",
        )
    ]


def _listed_twice(data: dict[str, Any], game_map: GameMap) -> list[tuple[str, str]]:
    """A zone an `adjacent` list names twice: a border is one however often it is listed, so the
    second is a slip (often for a zone meant and not listed). A name the map does not know is
    an error of its own, reported at each place."""
    found = []
    tables = data.get("map")
    if not isinstance(tables, dict):
        return []  # the loader reports it
    for kind in ("sea", "land"):
        zones = tables.get(kind)
        for zone, table in zones.items() if isinstance(zones, dict) else ():
            listed = table.get("adjacent") if isinstance(table, dict) else None
            if not isinstance(listed, list):
                continue
            twice = [n for i, n in enumerate(listed) if isinstance(n, str) and n in listed[:i]]
            for name in dict.fromkeys(n for n in twice if game_map.knows(n)):
                times = "twice" if listed.count(name) == 2 else f"{listed.count(name)} times"
                problem = f"{name!r} is listed {times} in this list: a border is one, list it once"
                found.append((f"map.{kind}.{zone}.adjacent", problem))
    return found


def _zone_key(game_map: GameMap, zone: str) -> str:
    return f"map.{'sea' if game_map.is_sea(zone) else 'land'}.{zone}"


def _components(zones: list[str], near: dict[str, frozenset[str]]) -> list[list[str]]:
    """The connected parts of a graph, largest first (the first zone's part first among equals)."""
    parts: list[list[str]] = []
    seen: set[str] = set()
    for start in zones:
        if start in seen:
            continue
        part, stack = [], [start]
        seen.add(start)
        while stack:
            here = stack.pop()
            part.append(here)
            for nxt in near.get(here, frozenset()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        parts.append(part)
    return sorted(parts, key=len, reverse=True)


def _names(zones: list[str] | set[str] | frozenset[str], most: int = 4) -> str:
    listed = sorted(zones)
    more = f" and {len(listed) - most} more" if len(listed) > most else ""
    return ", ".join(listed[:most]) + more


def _unreachable(game_map: GameMap, unsure: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """Zones cut off from the rest of the map, and sea zones no ship can sail to from the
    main sea (joined to it over land only); none in a part of the map (or of the sea) that
    holds an `unsure` zone."""
    zones = list(game_map.adjacency)
    found = []
    cut_off: set[str] = set()
    for part in _components(zones, game_map.adjacency)[1:]:
        if unsure.intersection(part):
            # Whether it is cut off waits on the error: the border left unread may join it.
            cut_off.update(part)
            continue
        for zone in part:
            cut_off.add(zone)
            near = game_map.adjacency[zone]
            touches = f"it touches only {_names(near)}" if near else "it touches no zone"
            found.append((_zone_key(game_map, zone), f"nobody can reach it from the rest of the map ({touches})"))
    seas = [z for z in zones if game_map.is_sea(z)]
    sea_near = {z: frozenset(n for n in game_map.adjacency[z] if game_map.is_sea(n)) for z in seas}
    for part in _components(seas, sea_near)[1:]:
        if unsure.intersection(part):
            continue
        for zone in part:
            if zone not in cut_off:
                found.append(
                    (
                        _zone_key(game_map, zone),
                        f"no ship can sail here from the rest of the sea: its sea ({_names(part)}) "
                        "is joined to the map over land only",
                    )
                )
    return found


def _inland_ports(
    data: dict[str, Any], game_map: GameMap, unsure: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """PU2: ports that touch no sea zone, where no new ship could ever be placed (an `unsure`
    one may, over the border an error left unread)."""
    tables = data.get("map")
    land_tables = tables.get("land") if isinstance(tables, dict) else None
    written = land_tables.values() if isinstance(land_tables, dict) else ()
    any_marked = any(isinstance(t, dict) and t.get("port") is True for t in written)
    found = []
    for territory in sorted(game_map.ports, key=list(game_map.adjacency).index):
        if territory in unsure or any(game_map.is_sea(z) for z in game_map.adjacency[territory]):
            continue
        if any_marked:
            found.append(
                (
                    f"map.land.{territory}.port",
                    "a port with no sea zone beside it (PU2): no new ship can be placed beside it, only "
                    "new aircraft on it; leave `port = true` out unless it is meant as an airfield",
                )
            )
        else:
            found.append(
                (
                    f"map.land.{territory}",
                    "a port with no sea zone beside it: no territory says `port = true`, so every "
                    "territory is a port (PU2); mark the real ones",
                )
            )
    return found


def _sides_at_peace(scenario: Scenario) -> list[tuple[str, str]]:
    """F8: a side none of whose nations is at war in round 1 leaves its enemies nobody to fight."""
    sides: dict[str, list[int]] = {}
    for nation in scenario.nations.values():
        if nation.side:
            sides.setdefault(nation.side, []).append(nation.entry_round)
    return [
        (f"sides.{side}", f"no nation of this side is at war before round {min(rounds)} (F8 entry_round)")
        for side, rounds in sides.items()
        if min(rounds) > 1
    ]
