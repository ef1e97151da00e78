"""`scenario check`: every problem of a scenario file at once, each with its line and key path,
as errors (what the loader refuses) and warnings (what it accepts but a board rarely means).

Line numbers come from the file's text: a small scanner of TOML lines maps each key path to the
line that writes it (table headers, keys, dotted keys, arrays of tables); a problem whose key
the file lacks points at the nearest table that holds it.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, replace
from typing import Any

from domain.errors import DataFileError, InputError
from domain.ruleset import Ruleset, load_ruleset
from domain.scenario import SCENARIO_NAME, GameMap, Scenario, scenario_with_problems
from domain.schema import SameNameTwice, control_character

KeyPath = tuple[str | int, ...]
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_ERROR_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)")
# A problem about one named thing quotes it ('Foo' or "Foo's"); a multi-line array is searched
# for that name so the line shown is the element's own.
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")
# `key = Some words`: text without its quotes (not true, false, inf or nan, which TOML knows).
_UNQUOTED = re.compile(r"[^=#]*=\s*(?!(?:true|false|inf|nan)\b)[A-Za-z]")


@dataclass(frozen=True)
class KeyLine:
    """Where the text writes one key: its first line, and the last line of its value."""

    line: int
    end: int
    header: bool  # a [table] or [[array]] header rather than a `key = value` line


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


# ----- key paths and their lines -----


def _read_key(s: str, i: int) -> tuple[list[str], int]:
    """A dotted TOML key starting at s[i]: its parts, and where the text after it starts."""
    parts: list[str] = []
    while True:
        while i < len(s) and s[i] in " \t":
            i += 1
        if i < len(s) and s[i] in "\"'":
            quote = s[i]
            j = i + 1
            while j < len(s) and s[j] != quote:
                j += 2 if quote == '"' and s[j] == "\\" else 1
            raw = s[i : j + 1]
            try:
                parts.append(json.loads(raw) if quote == '"' else raw[1:-1])
            except ValueError:
                parts.append(raw[1:-1])
            i = j + 1
        else:
            match = _BARE_KEY.match(s, i)
            if match is None:
                return parts, i
            parts.append(match.group())
            i = match.end()
        while i < len(s) and s[i] in " \t":
            i += 1
        if i < len(s) and s[i] == ".":
            i += 1
            continue
        return parts, i


class _ValueScanner:
    """Follows brackets and strings across lines, so that the lines of a multi-line array or
    string are not read as keys."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None  # the delimiter of a multi-line string left open

    @property
    def open(self) -> bool:
        return self.depth > 0 or self.string is not None

    def feed(self, s: str, i: int = 0) -> None:
        while i < len(s):
            if self.string is not None:
                end = s.find(self.string, i)
                if end < 0:
                    return
                self.string, i = None, end + 3
                continue
            ch = s[i]
            if ch == "#":
                return
            if s.startswith('"""', i) or s.startswith("'''", i):
                self.string, i = s[i : i + 3], i + 3
            elif ch in "\"'":
                i = _past_string(s, i)
            else:
                self.depth += 1 if ch in "[{" else -1 if ch in "]}" else 0
                i += 1


def key_lines(text: str) -> dict[KeyPath, KeyLine]:
    """Each key path the text writes (tables, keys, arrays of tables as `(name, index)`), with
    its line; implicit parent tables take the line of their first child."""
    return _scan_keys(text).found


def key_at(text: str, line: int) -> str:
    """The key path a line writes (`nations.Britain.code`, `units[2]`), as the loader names it;
    "" for a line that writes none. Read from the text alone, so it works where TOML refuses the
    file (a key given twice is written on a line of its own)."""
    return _key_name(_scan_keys(text).at_line.get(line, ()))


def value_span(row: str) -> tuple[int, int] | None:
    """Where the value of a `key = value` line begins and where it ends on that line, before
    any comment and the spaces ahead of it (a value running on over lines ends with the line);
    None for a line that writes no key."""
    parts, at = _read_key(row, 0)
    if not parts or not row.startswith("=", at):
        return None
    start = at + 1
    while start < len(row) and row[start] in " \t":
        start += 1
    end = _comment_start(row, start)
    end = len(row.rstrip("\r")) if end is None else end
    while end > start and row[end - 1] in " \t":
        end -= 1
    return start, end


def _comment_start(s: str, i: int) -> int | None:
    """The '#' that begins a comment at or after s[i], passing over quoted strings, or None."""
    while i < len(s):
        ch = s[i]
        if ch == "#":
            return i
        i = _past_string(s, i) if ch in "\"'" else i + 1
    return None


def _past_string(s: str, i: int) -> int:
    """Past the one-line string that s[i] (a quote) opens: a basic string's escapes are passed
    over, a literal string (') has none."""
    quote = s[i]
    j = i + 1
    while j < len(s) and s[j] != quote:
        j += 2 if quote == '"' and s[j] == "\\" else 1
    return j + 1


def _key_name(path: KeyPath) -> str:
    """A key path as the loader names it (`nations.Britain.code`, `units[2]`)."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" if n else p for n, p in enumerate(path))


@dataclass(frozen=True)
class _Scan:
    found: dict[KeyPath, KeyLine]  # `key_lines`
    at_line: dict[int, KeyPath]  # the key path each line writing a key or header writes
    # The multi-line value each later line of it belongs to: (its key path, its first line);
    # under 0, one the text leaves open at its end.
    within: dict[int, tuple[KeyPath, int]]


def _scan_keys(text: str) -> _Scan:
    """Where the text writes each key path, and which lines belong to a value begun above."""
    found: dict[KeyPath, KeyLine] = {}
    at_line: dict[int, KeyPath] = {}
    within: dict[int, tuple[KeyPath, int]] = {}
    arrays: dict[KeyPath, int] = {}
    current: KeyPath = ()
    scanner = _ValueScanner()
    pending: tuple[KeyPath, int] | None = None

    def resolve(parts: list[str]) -> KeyPath:
        path: KeyPath = ()
        for part in parts:
            path = path + (part,)
            if path in arrays:
                path = path + (arrays[path],)
        return path

    def note(path: KeyPath, line: int, header: bool) -> None:
        for n in range(1, len(path)):
            found.setdefault(path[:n], KeyLine(line, line, False))
        found.setdefault(path, KeyLine(line, line, header))

    # Only "\n" ends a line in TOML (str.splitlines would also split at form feeds and the like).
    for number, line in enumerate(text.split("\n"), start=1):
        if scanner.open:
            if pending is not None:
                within[number] = pending
            scanner.feed(line)
            if not scanner.open and pending is not None:
                found[pending[0]] = KeyLine(pending[1], number, False)
                pending = None
            continue
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("[["):
            parts, _ = _read_key(stripped, 2)
            base = resolve(parts[:-1]) + tuple(parts[-1:])
            arrays[base] = arrays.get(base, -1) + 1
            current = base + (arrays[base],)
            note(current, number, True)
            at_line[number] = current
        elif stripped.startswith("["):
            parts, _ = _read_key(stripped, 1)
            current = resolve(parts)
            note(current, number, True)
            at_line[number] = current
        else:
            parts, at = _read_key(stripped, 0)
            if not parts or not stripped[at:].startswith("="):
                continue
            path = current + tuple(parts)
            note(path, number, False)
            at_line[number] = path
            scanner.feed(stripped, at + 1)
            if scanner.open:
                pending = (path, number)
    if pending is not None:
        within[0] = pending
    return _Scan(found, at_line, within)


def key_parts(data: Any, key: str) -> KeyPath:
    """A key path as the loader names it (`map.sea.St. George's Channel.adjacent`, `units[3].at`)
    split into its parts by the data itself, so names holding dots stay whole."""
    parts: list[str | int] = []
    node = data
    rest = key
    while rest:
        if isinstance(node, dict):
            names = [k for k in node if rest == k or rest.startswith(k + ".") or rest.startswith(k + "[")]
            if not names:
                # A key the file lacks (a missing required key): the rest names it.
                parts.append(rest)
                break
            name = max(names, key=len)
            parts.append(name)
            node, rest = node[name], rest[len(name) :]
            if rest == "." and isinstance(node, dict) and "" in node:
                # The path ends in a table named "" (`[map.sea.""]`): a key of its own.
                parts.append("")
                break
        elif isinstance(node, list) and (index := re.match(r"\[(\d+)\]", rest)):
            parts.append(int(index.group(1)))
            position = int(index.group(1))
            node, rest = node[position] if position < len(node) else None, rest[index.end() :]
        else:
            parts.append(rest)
            break
        rest = rest[1:] if rest.startswith(".") else rest
    return tuple(parts)


def line_of(lines: dict[KeyPath, KeyLine], text_lines: list[str], path: KeyPath, message: str = "") -> int | None:
    """The line of a key path, or of the nearest table holding it; within a multi-line array,
    the line of the element the message quotes."""
    for n in range(len(path), 0, -1):
        entry = lines.get(path[:n])
        if entry is None:
            continue
        quoted = _QUOTED.search(message)
        if quoted and entry.end > entry.line and n == len(path):
            name = json.dumps(quoted.group(1) or quoted.group(2), ensure_ascii=False)
            for number in range(entry.line, entry.end + 1):
                if name in text_lines[number - 1]:
                    return number
        return entry.line
    return None


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
        return ScenarioCheck(source, (_not_toml(text, str(e)),), None)
    if not positions:
        _drop_positions(data)
    if not data:
        # Nothing but blanks and comments: one finding, not one per missing table.
        empty = "no scenario in the file: it is empty (`tracker scenario new NAME` writes one to start from)"
        return ScenarioCheck(source, (Finding("error", "", empty, None),), None)
    lines = key_lines(text)
    text_lines = text.split("\n")

    def finding(level: str, key: str, message: str) -> Finding:
        return Finding(level, key, message, line_of(lines, text_lines, key_parts(data, key), message))

    def error(problem: DataFileError) -> Finding:
        """The problem at its key; a name given twice at the later of its two places (the
        duplicate, where an editor's "defined twice" points), naming the other's line too."""
        if not isinstance(problem, SameNameTwice):
            return finding("error", problem.key, problem.problem)
        first, later = sorted((finding("error", key, problem.problem) for key in problem.keys), key=_by_line)
        if first.line is None or first.line == later.line:
            return later
        return replace(later, message=f"{later.message} (also at line {first.line})")

    written = _written(data)
    rules = _ruleset(data, ruleset)
    if isinstance(rules, str):
        return ScenarioCheck(source, (finding("error", "scenario.ruleset", rules),), None, written=written)
    scenario, problems = scenario_with_problems(data, source, rules)
    errors = [error(p) for p in _without_echoes(problems)]
    warnings = [finding("warning", key, message) for key, message in scenario_warnings(data, scenario)]
    order = sorted(errors, key=_by_line) + sorted(warnings, key=_by_line)
    return ScenarioCheck(source, tuple(order), scenario, rules, written)


def _drop_positions(data: dict[str, Any]) -> None:
    """`data` without any zone's x and y."""
    game_map = data.get("map")
    if not isinstance(game_map, dict):
        return  # the loader reports it
    for kind in ("sea", "land"):
        tables = game_map.get(kind)
        for table in tables.values() if isinstance(tables, dict) else ():
            if isinstance(table, dict):
                table.pop("x", None)
                table.pop("y", None)


def _not_toml(text: str, error: str) -> Finding:
    """TOML's refusal at its line, with the key path of that line: a key or table given twice
    names the line of the first; a line inside a value begun above (an array left unclosed)
    names that value and the line it begins on."""
    at = _TOML_ERROR_AT.search(error)
    message = _TOML_ERROR_AT.sub("", error)
    line = int(at.group(1)) if at else None
    scan = _scan_keys(text)
    opened = scan.within.get(line if line is not None else 0)
    if opened is not None and opened[1] != line:
        path, start = opened
        where = "here" if line is not None else "at the end of the file"
        problem = f"not valid TOML ({message}; the value begun at line {start} is still open {where})"
        return Finding("error", _key_name(path), problem, line if line is not None else start)
    if line is None:
        return Finding("error", "", f"not valid TOML ({message})", None)
    path = scan.at_line.get(line, ())
    row = text.split("\n")[line - 1].rstrip("\r")
    earlier = [n for n, p in scan.at_line.items() if path and p == path and n < line]
    stray = next((ch for ch in row if ch != "\t" and control_character(ch)), None)
    if earlier:
        message = f"{message}: also at line {earlier[0]}"
    elif stray is not None and "Illegal character" not in message:
        # Invisible in an editor: say what TOML stumbled on.
        message = f"{message}: the line holds the control character {stray!r}, column {row.index(stray) + 1}"
    elif message == "Invalid initial character for a key part" and at is not None and "{" in row:
        message = f"{message}: {_inline_table_slip(row, int(at.group(2)))}"
    elif message == "Illegal character '\\n'":
        message = f"{message}: a string is still open at the end of the line: a closing quote is missing"
    elif message == "Invalid value" and _UNQUOTED.match(row):
        message = f'{message}: text needs quotes, as name = "North Sea"'
    return Finding("error", _key_name(path), f"not valid TOML ({message})", line)


def _inline_table_slip(row: str, column: int) -> str:
    """What TOML's "Invalid initial character for a key part" means inside `{ ... }`, by the
    character it stopped at: written like an array, over lines, with a comment or a last comma."""
    stopped = row[column - 1] if column <= len(row.rstrip("\r")) else "\n"
    if stopped == "#":
        return "a comment cannot go inside { ... }, written on one line: put the comment on the line above"
    if stopped == "}":
        return "no comma after the last entry of { ... }"
    if stopped == "\n":
        return (
            "an inline table { ... } ends on the line it begins: close it with } on this line, "
            "or write it as a [table] of its own"
        )
    return "inside { ... } each entry is a key = value, separated by commas"


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
        unit_groups=count(data.get("units")),
    )


def _by_line(f: Finding) -> int:
    return f.line if f.line is not None else 0


def _ruleset(data: dict[str, Any], override: str | None) -> Ruleset | str:
    """The ruleset to check against, or why the scenario's own cannot be read (without it no
    unit type or technology can be checked, so the check stops there)."""
    meta = data.get("scenario")
    named = meta.get("ruleset", "twtea-3e") if isinstance(meta, dict) else "twtea-3e"
    if override is not None:
        return load_ruleset(override)[0]  # one the user typed: an error of usage (exit 2)
    if not isinstance(named, str):
        named = "twtea-3e"  # the loader reports the bad value itself
    try:
        return load_ruleset(named)[0]
    except (DataFileError, InputError) as e:
        return f"the ruleset cannot be read, so nothing else was checked: {e}"


def _without_echoes(problems: list[DataFileError]) -> list[DataFileError]:
    """Each problem once; nothing reported inside a table already reported missing or not a
    table (`scenario = "x"` is one slip, not one per key the table should hold), and no zone
    called unknown when the file has no map to know it by."""
    seen: set[tuple[str, str]] = set()
    missing: list[str] = []
    kept = []
    for p in problems:
        if (p.key, p.problem) in seen or any(p.key.startswith(m + ".") for m in missing):
            continue
        if "map" in missing and p.problem.startswith("unknown zone"):
            continue
        seen.add((p.key, p.problem))
        if p.problem == "missing required key" or p.problem.startswith("expected a table,"):
            missing.append(p.key)
        kept.append(p)
    return kept


# ----- warnings: what the loader accepts but a board rarely means -----


def scenario_warnings(data: dict[str, Any], scenario: Scenario) -> list[tuple[str, str]]:
    """(key path, message) for zones nobody can reach, ports without a sea, a side with nobody
    on it or nobody at war in round 1 (F8), a nation with no unit and no port (PU2), and a name not of
    the template's form."""
    game_map = scenario.game_map
    return [
        *_unreachable(game_map),
        *_inland_ports(data, game_map),
        *_empty_sides(data),
        *_sides_at_peace(scenario),
        *_portless(data, scenario),
        *_name_form(data),
    ]


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


def _unreachable(game_map: GameMap) -> list[tuple[str, str]]:
    """Zones cut off from the rest of the map, and sea zones no ship can sail to from the
    main sea (joined to it over land only)."""
    zones = list(game_map.adjacency)
    found = []
    cut_off: set[str] = set()
    for part in _components(zones, game_map.adjacency)[1:]:
        for zone in part:
            cut_off.add(zone)
            near = game_map.adjacency[zone]
            touches = f"it touches only {_names(near)}" if near else "it touches no zone"
            found.append((_zone_key(game_map, zone), f"nobody can reach it from the rest of the map ({touches})"))
    seas = [z for z in zones if game_map.is_sea(z)]
    sea_near = {z: frozenset(n for n in game_map.adjacency[z] if game_map.is_sea(n)) for z in seas}
    for part in _components(seas, sea_near)[1:]:
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


def _inland_ports(data: dict[str, Any], game_map: GameMap) -> list[tuple[str, str]]:
    """PU2: ports that touch no sea zone, where no new ship could ever be placed."""
    land_tables = data.get("map", {}).get("land", {})
    any_marked = any(isinstance(t, dict) and t.get("port") is True for t in land_tables.values())
    found = []
    for territory in sorted(game_map.ports, key=list(game_map.adjacency).index):
        if any(game_map.is_sea(z) for z in game_map.adjacency[territory]):
            continue
        if any_marked:
            found.append((f"map.land.{territory}.port", "a port with no sea zone beside it (PU2)"))
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
