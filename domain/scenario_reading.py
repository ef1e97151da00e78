"""How the scenario loader reads a file's tables: each reader call's problem reported and the
reading gone on past it (`attempt`), keys nobody asked for (`finish`), the TOML slips it reads
through rather than report again at everything that follows from them (`[[...]]` for a
`[...]` table, a nation's own keys written below its sub-table's header, a zone's table
misspelt or written under a misspelt header), and the names the file gives nations, by which
the references to them are read."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from domain.errors import DataFileError
from domain.schema import ENCODED_OTHERWISE, Reader, did_you_mean, same_but_for_form, unknown_key

T = TypeVar("T")
# Where the readers below send a problem: the loader raises the first one, the authoring
# check (`scenario check`) collects them all and reads on past each.
Report = Callable[[DataFileError], None]


# The tables a scenario file is made of, in the order `tracker scenario new` writes them.
TOP_LEVEL = ("scenario", "sides", "nations", "map", "units")
# A key TOML reads without quotes; any other name is written in them.
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_key(name: str) -> str:
    """A name as a TOML header or dotted key writes it: bare when it may be, else quoted
    (`Italy`, `"Austria.Hungary"`, `"Low Countries"`), so that a header a message shows is one
    that can be copied into the file."""
    if _BARE_KEY.fullmatch(name):
        return name
    return json.dumps(name, ensure_ascii=False)


def stop(problem: DataFileError) -> None:
    raise problem


def attempt(report: Report, fallback: T, read: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """One reader call; a problem is reported and the reading goes on with `fallback`."""
    try:
        return read(*args, **kwargs)
    except DataFileError as problem:
        report(problem)
        return fallback


def finish(r: Reader, report: Report) -> None:
    """Report every key nobody asked for: a typo must not silently fall back to a default."""
    for name in r.data:
        if name not in r.used:
            report(unknown_key(r, name))


def subtables(r: Reader, name: str, report: Report, required: bool = True) -> list[tuple[str, Reader]]:
    """The sub-tables of a table as (name, reader) pairs; an entry that is no table is reported."""
    outer = attempt(report, None, r.table, name, required)
    if outer is None:
        return []
    found = []
    for sub in outer.data:
        outer.used.add(sub)
        value = outer.data[sub]
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            # `[[nations.Germany]]` for `[nations.Germany]`: one slip, reported once; its first
            # entry is read as the table, so that the units, owners and adjacencies naming it
            # are not each reported unknown.
            header = f"[{outer.path}.{toml_key(sub)}]"
            problem = f"expected a table, got a list of tables: write the header {header}, with single brackets"
            report(outer.fail(sub, f"{problem} ([[...]] begins an entry of a list, as [[units]] does)"))
            found.append((sub, Reader(outer.source, value[0], f"{outer.key(sub)}[0]")))
            continue
        try:
            found.append((sub, Reader(outer.source, value, outer.key(sub))))
        except DataFileError as problem:
            report(problem)
    return found


def meant(text: str, known: Collection[str]) -> str:
    """`did_you_mean`, and for a name followed by '#' and more inside its quotes (a comment put
    before the closing quote, where TOML keeps it as text), that name and why. Among a
    ruleset's unit types (a mapping to them), one typed as its abbreviation, as the map and
    the IDs show it (`DD`, `ss`), is named too."""
    before = text.partition("#")[0].strip()
    if "#" in text and before in known:
        return f" (did you mean {before!r}? a '#' inside the quotes is part of the text, not a comment)"
    if isinstance(known, Mapping):
        abbrs = {
            t.abbr.casefold(): (name, t.abbr) for name, t in known.items() if isinstance(getattr(t, "abbr", None), str)
        }
        found = abbrs.get(text.strip().casefold())
        if found is not None:
            return f" (did you mean {found[0]!r}? {found[1]} is its abbreviation on the map)"
    return did_you_mean(text, known)


@dataclass(frozen=True)
class NationNames:
    """The names the file gives nations, to read the references to them by (turn order, owners,
    units). A name [sides] lists or [nations] holds is `declared` even when its table cannot be
    read: that one problem is reported where it is, not again at every reference. With
    [nations] missing or no table, nothing is known (`complete` False) and no reference is
    called unknown. `aliases`: a name [sides] lists with no table, for the table on no side
    spelt like it (one slip, reported at the side)."""

    tables: frozenset[str]  # the names [nations] holds, tables or not
    declared: frozenset[str]
    aliases: dict[str, str]
    complete: bool
    # Each nation's code, folded, with the nation and the code as written: a nation typed as
    # its code (`GB`, as the map and the unit IDs show it) is named for it.
    codes: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def resolve(self, name: str) -> str:
        return self.aliases.get(name, name)

    def meant(self, text: str, known: Collection[str] | None = None) -> str:
        """`meant` among `known` (the declared names when not given), and for a nation's code
        the nation it is the code of."""
        found = self.codes.get(text.strip().casefold())
        if found is not None and found[0] != text:
            return f" (did you mean {found[0]!r}? {found[1]} is its code on the map)"
        return meant(text, self.declared if known is None else known)

    def unknown(self, name: str) -> bool:
        """A reference to no nation the file declares: reported where it is."""
        return self.complete and name not in self.declared

    def tableless(self, name: str, top: Reader) -> bool:
        """[sides] lists the name, and no table of [nations] or of a misspelt top-level key
        (`[nation.Germany]`, reported as unknown) was written for it."""
        if not self.complete or name in self.tables:
            return False
        strays = (v for k, v in top.data.items() if k not in TOP_LEVEL)
        return not any(isinstance(table, dict) and name in table for table in strays)


def nation_names(raw: Any, side_of: dict[str, str], sides_read: bool) -> NationNames:
    """The names of `raw` (the [nations] table as written) and of [sides] (`side_of`, whole
    when `sides_read`), each side's name with no table paired with a table on no side spelt
    like it."""
    tables = list(raw) if isinstance(raw, dict) else []
    codes: dict[str, tuple[str, str]] = {}
    for table in tables:
        code = raw[table].get("code") if isinstance(raw[table], dict) else None
        if isinstance(code, str) and code.strip():
            codes.setdefault(code.strip().casefold(), (table, code.strip()))
    aliases: dict[str, str] = {}
    if sides_read:
        unsided = [t for t in tables if t not in side_of]
        for listed in side_of:
            if listed in tables:
                continue
            free = [t for t in unsided if t not in aliases.values()]
            close = _by_code(listed, codes, free) or _closest(listed, free)
            if close is not None:
                aliases[listed] = close
    declared = frozenset(tables) | frozenset(side_of)
    return NationNames(frozenset(tables), declared, aliases, isinstance(raw, dict), codes)


def _by_code(listed: str, codes: Mapping[str, tuple[str, str]], free: list[str]) -> str | None:
    """The table on no side whose code [sides] lists in its place (`"Entente" = ["GB"]`)."""
    found = codes.get(listed.strip().casefold())
    return found[0] if found is not None and found[0] in free else None


def _closest(text: str, known: list[str]) -> str | None:
    """The known name `did_you_mean` would name for `text`, or None."""
    import difflib  # only for a file with a problem

    by_fold = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(text.casefold(), sorted(by_fold), n=1, cutoff=0.75)
    return by_fold[close[0]] if close else None


# A nation's keys, and those of them that are tables of its own (`[nations.Germany.tech]`).
NATION_KEYS = ("code", "resources", "income", "tech", "ntr", "ntr_max", "caps", "entry_round")
_NATION_TABLES = ("tech", "ntr", "ntr_max", "caps")


def strays_lifted(nname: str, r: Reader, known: dict[str, Collection[str]], report: Report) -> Reader:
    """The nation's table with its own keys taken back out of a sub-table they were written
    under (`resources = 30` below a `[nations.Germany.tech]` header belongs to that table in
    TOML): the slip reported once, not as a missing key and an unknown technology each. A key
    the sub-table may hold (`known`: a zone called "income" in `ntr`) is left where it is."""
    for sub in _NATION_TABLES:
        table = r.data.get(sub)
        if not isinstance(table, dict):
            continue
        mine = known.get(sub, ())
        strays = [k for k in table if k in NATION_KEYS and k != sub and k not in r.data and k not in mine]
        if not strays:
            continue
        header = f"[nations.{toml_key(nname)}.{sub}]"
        problem = (
            f"{', '.join(strays)}: the nation's own {'keys' if len(strays) > 1 else 'key'}, written below the "
            f"header {header}, so TOML puts {'them' if len(strays) > 1 else 'it'} in that table: "
            f"move {header} and its lines after the nation's own keys"
        )
        report(r.fail(f"{sub}.{strays[0]}", problem))
        data = {**r.data, sub: {k: v for k, v in table.items() if k not in strays}}
        data.update((k, table[k]) for k in strays)
        r = Reader(r.source, data, r.path)
    return r


# ----- a zone's table written with a slip -----

# The keys of a zone's table: a table holding any of them under a key no zone belongs under is
# taken for a zone written there by a slip of its header.
_ZONE_KEYS = frozenset(("adjacent", "owner", "port", "x", "y"))
# Lines naming an unknown zone that make a zone table named by no line the slip, not them: one
# line alone may as well be the slip itself (and is one error at its own line anyway).
_NAMED_BY_MOST = 2


class ReferredTo(DataFileError):
    """A slip in a zone's table (its name, or the header it is written under) reported once at
    that table, in place of an unknown zone at every line that names the zone: `refs` are those
    lines' keys with the name each writes, for a tool that knows the file's lines to list them."""

    def __init__(self, source: str, key: str, lead: str, refs: list[tuple[str, str]], aside: str = "") -> None:
        self.lead = lead
        self.refs = tuple(refs)
        self.aside = aside  # said after the question, before the lines
        super().__init__(source, key, self.told(None))

    def told(self, lines: list[int] | None) -> str:
        """The problem, with the lines that name the zone when they are known."""
        count = len(lines) if lines is not None else len(self.refs)
        aside = f" {self.aside}" if self.aside else ""
        if count == 0:
            return f"{self.lead}?{aside})"
        by = f"referred to by {count} other line{'s' if count != 1 else ''}"
        if lines:
            shown = ", ".join(str(n) for n in lines[:10])
            by = f"{by}: {shown}{f' and {len(lines) - 10} more' if len(lines) > 10 else ''}"
        return f"{self.lead}?{aside}{';' if aside else ''} {by})"


def zone_references(data: dict[str, Any]) -> dict[str, list[str]]:
    """The key paths that name each zone (adjacency lists, NTR and their maxima, starting
    forces), from the tables as written: whatever is wrong with them is the loader's to report."""
    refs: dict[str, list[str]] = {}

    def named(name: Any, key: str) -> None:
        if isinstance(name, str):
            refs.setdefault(name, []).append(key)

    game_map = data.get("map")
    for kind in ("sea", "land"):
        tables = game_map.get(kind) if isinstance(game_map, dict) else None
        for zone, table in tables.items() if isinstance(tables, dict) else ():
            adjacent = table.get("adjacent") if isinstance(table, dict) else None
            for other in adjacent if isinstance(adjacent, list) else ():
                named(other, f"map.{kind}.{zone}.adjacent")
    nations = data.get("nations")
    for nation, table in nations.items() if isinstance(nations, dict) else ():
        for sub in ("ntr", "ntr_max"):
            trade = table.get(sub) if isinstance(table, dict) else None
            for zone in trade if isinstance(trade, dict) else ():
                named(zone, f"nations.{nation}.{sub}.{zone}")
    units = data.get("units")
    for i, group in enumerate(units if isinstance(units, list) else ()):
        named(group.get("at") if isinstance(group, dict) else None, f"units[{i}].at")
    return refs


def _zone_like(value: Any) -> bool:
    return isinstance(value, dict) and bool(_ZONE_KEYS & set(value))


def _zone_tables(value: Any, path: str, depth: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, key path, table) of the tables like a zone's within `depth` levels below `value`."""
    if depth == 0 or not isinstance(value, dict):
        return []
    found: list[tuple[str, str, dict[str, Any]]] = []
    for name, table in value.items():
        key = f"{path}.{name}"
        found.extend([(name, key, table)] if _zone_like(table) else _zone_tables(table, key, depth - 1))
    return found


def misplaced_zones(data: dict[str, Any]) -> list[tuple[bool, str, list[tuple[str, str, dict[str, Any]]]]]:
    """The tables like a zone's under each key of the map other than sea and land (`[map.see.X]`,
    `[map.X]`) and each top-level key the file has no use for (`[mpa.sea.X]`): whether the
    key is the map's, the key, and (name, key path, table) of each such table."""
    game_map = data.get("map")
    found = [
        (True, k, [(k, f"map.{k}", v)] if _zone_like(v) else _zone_tables(v, f"map.{k}", 1))
        for k, v in (game_map.items() if isinstance(game_map, dict) else ())
        if k not in ("sea", "land")
    ]
    found += [(False, k, _zone_tables(v, k, 2)) for k, v in data.items() if k not in TOP_LEVEL]
    return [(in_map, k, tables) for in_map, k, tables in found if tables]


Entries = list[tuple[str, Reader]]


def zones_read_through(top: Reader, m: Reader, sea: Entries, land: Entries, report: Report) -> tuple[Entries, Entries]:
    """The map's sea and land zones, each slip of a zone's table read through and reported
    once at that table rather than as an unknown zone at every line that names it: a table
    written under a misspelt header (`[map.see."Skagerrak"]`, `[mpa.sea."Skagerrak"]`) is read
    as a zone all the same, and a table whose name no line writes, spelt like an unknown name
    that lines do, is read under that name."""
    refs = zone_references(top.data)
    names = {n for n, _ in sea + land}
    for in_map, key, tables in misplaced_zones(top.data):
        outer = m if in_map else top
        if any(name in names for name, _, _ in tables):
            continue  # a zone twice: the unknown key alone is reported, as before
        outer.used.add(key)
        kinds = []
        for name, path, table in tables:
            kinds.append("land" if "owner" in table or "port" in table else "sea")
            (land if kinds[-1] == "land" else sea).append((name, Reader(top.source, table, path)))
            names.add(name)
        header = f"[map.{kinds[0]}.{toml_key(tables[0][0])}]"
        more = f", and {len(tables) - 1} more zone tables below it" if len(tables) > 1 else ""
        named = [(k, n) for n, _, _ in tables for k in refs.get(n, ())]
        report(ReferredTo(top.source, outer.key(key), f"unknown key (did you mean {header}{more}", named))
    # Sorted: the same file reports the same way every time.
    unnamed = sorted(n for n in names if n not in refs)
    renamed: dict[str, str] = {}
    for name, keys in refs.items():
        if name in names or len(keys) < _NAMED_BY_MOST:
            continue
        spelt = _closest(name, [n for n in unnamed if n not in renamed])
        if spelt is not None:
            renamed[spelt] = name
    for entries in (sea, land):
        for i, (name, r) in enumerate(entries):
            if name in renamed:
                meant = renamed[name]
                lead = f"zone {name!r} is named by no other line (did you mean {meant!r}"
                aside = ENCODED_OTHERWISE if same_but_for_form(name, [meant]) else ""
                report(ReferredTo(top.source, r.path, lead, [(k, meant) for k in refs[meant]], aside))
                entries[i] = (meant, r)
    return sea, land
