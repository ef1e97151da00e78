"""Ruleset and scenario files as they are read: a built-in by its name, a user's file by its
path; and what a ruleset file a new campaign is made from must also get right (unit type names a
player can type back, texts printed on one line), each problem said at the line that writes it.
A ruleset a campaign recorded is read as recorded, without these (`ruleset_from_recorded`)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from domain.errors import DataFileError, InputError
from domain.schema import SameNameTwice, control_character, name_problem, printable

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

# Characters a command splits a value naming a unit type at, so that a type named with one could
# not be typed there, with what splits at it.
_TYPE_COMMA = "`odds --attacker NATION:TYPE=N,TYPE=N` separates types with commas"
_TYPE_SEPARATORS = {
    ":": "`odds --attacker NATION:TYPE=N` and `adjust --add NATION:TYPE:ZONE` split their values at it",
    "=": "`odds --attacker NATION:TYPE=N` splits a type from its count at it",
}
# How a force typed by hand names a damaged capital ship (F3, NC5: `odds --attacker
# "Germany:battleship (damaged)=1"`), and odds' outcomes count one: a type whose name ends so
# would be read as a damaged unit of the type named before it.
_DAMAGED = " (damaged)"


class RulesetFileError(DataFileError):
    """A ruleset file's problem with its file and line apart, said as `house.toml:80: key:
    problem`: `scenario check --json` gives them as its finding's, where an editor jumps to."""

    def __init__(self, file: str, line: int | None, key: str, problem: str) -> None:
        super().__init__(f"{file}:{line}" if line is not None else file, key, problem)
        self.file = file
        self.line = line


def _file_text(path: Path | str, source: str) -> str:
    """A file's text, refused as a user reads it: missing, a directory, not UTF-8."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{source}: is a directory, not a TOML file") from None
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise DataFileError(source, "", "not a UTF-8 text file") from None


def read_toml(path: Path | str, source: str | None = None) -> dict[str, Any]:
    # Imported here: a campaign carries its ruleset and scenario as recorded, so a command
    # that only reads one never parses TOML.
    import tomllib

    source = source or str(path)
    text = _file_text(path, source)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise DataFileError(source, "", f"not valid TOML ({e})") from None


def builtin_names(kind: str) -> list[str]:
    folder = resources.files("domain.data").joinpath(kind)
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def _builtin(kind: str, name: str) -> Traversable:
    return resources.files("domain.data").joinpath(kind).joinpath(f"{name}.toml")


@cache
def builtin_nations() -> dict[str, str]:
    """Every nation of the built-in scenarios, name to code, in their turn order: what a position
    given by hand may name without a campaign (`tracker odds naval --attacker "United States:..."`)."""
    found: dict[str, str] = {}
    for scenario in builtin_names("scenarios"):
        data, _ = read_builtin_or_file("scenarios", scenario)
        for name, nation in data.get("nations", {}).items():
            found.setdefault(name, str(nation.get("code", "")))
    return found


def _user_file(kind: str, name_or_path: str) -> Path:
    path = Path(name_or_path)
    if not path.exists():
        raise InputError(
            f"unknown {kind[:-1]} {name_or_path!r}: not a built-in ({', '.join(builtin_names(kind))}) and no such file"
        )
    return path


def read_builtin_or_file(kind: str, name_or_path: str) -> tuple[dict[str, Any], str]:
    """Raw TOML of a built-in (by name) or of a user's file (by path), and its source label."""
    if name_or_path in builtin_names(kind):
        with resources.as_file(_builtin(kind, name_or_path)) as path:
            return read_toml(path, f"{kind[:-1]} {name_or_path}"), name_or_path
    path = _user_file(kind, name_or_path)
    return read_toml(path), str(path)


def ruleset_file(name_or_path: str) -> tuple[dict[str, Any], str, str]:
    """A ruleset's tables, source label and text (`at_line` finds a problem's line in it): a
    built-in by its name, a user's file by its path, TOML's refusal said at its line."""
    import tomllib

    if name_or_path in builtin_names("rulesets"):
        text = _builtin("rulesets", name_or_path).read_text(encoding="utf-8")
        return tomllib.loads(text), name_or_path, text
    source = str(_user_file("rulesets", name_or_path))
    text = _file_text(source, source)
    try:
        return tomllib.loads(text), source, text
    except tomllib.TOMLDecodeError as e:
        # Said as a scenario file's slips are: at the line, with what to write instead.
        from domain.scenario_toml import toml_refusal

        key, problem, line = toml_refusal(text, str(e), scenario=False)
        raise RulesetFileError(source, line, printable(key), problem) from None


def at_line(problem: DataFileError, data: dict[str, Any], text: str) -> RulesetFileError:
    """The problem a ruleset file has, with the line of the key it names after its source
    (`house.toml:12: units.cruiser.attack: ...`), as `tracker new` and `scenario check` say a
    scenario's; a name given twice at the later of its two places. The key path with its
    control characters escaped, so that the message stays one line."""
    # Only on this error path: a command that loads a good ruleset never scans its lines.
    from domain.toml_lines import key_lines, key_parts, line_of

    keys = problem.keys if isinstance(problem, SameNameTwice) else (problem.key,)
    lines, rows = key_lines(text), text.split("\n")
    found = [line_of(lines, rows, key_parts(data, key), problem.problem) if key else None for key in keys]
    numbers = sorted({n for n in found if n is not None})
    if not numbers:
        return RulesetFileError(problem.source, None, printable(problem.key), problem.problem)
    also = f" (also at line {numbers[0]})" if len(numbers) > 1 else ""
    return RulesetFileError(problem.source, numbers[-1], printable(problem.key), problem.problem + also)


def check_new_ruleset(data: dict[str, Any], source: str) -> None:
    """What a ruleset file must get right for a new campaign besides its values: its name and
    title on one line, unit types a player can type back."""
    _one_line_texts(data, source)
    _unit_type_names(data, source)


def _one_line_texts(data: dict[str, Any], source: str) -> None:
    """A new campaign's ruleset name and title are printed on one line (`units`, reports): a
    control character (an escape sequence) would reach the terminal of whoever reads them. A
    ruleset a campaign recorded is read as recorded."""
    meta = data.get("ruleset")
    for key in ("name", "title"):
        value = meta.get(key) if isinstance(meta, dict) else None
        bad = control_character(value) if isinstance(value, str) else None
        if bad is not None:
            problem = f"the {key} may not contain control characters such as {bad!r} (it is shown on one line)"
            raise DataFileError(source, f"ruleset.{key}", problem)


def _unit_type_names(data: dict[str, Any], source: str) -> None:
    """Unit type names a player can type: `buy TYPE`, `odds --attacker NATION:TYPE=N,TYPE=N` and
    `adjust --add NATION:TYPE:ZONE` take them, trimmed and whatever their case, so a type named
    with a character they split at, ending in " (damaged)" (a damaged capital ship there), or
    alike another but for case, could not be named there (a campaign already recorded keeps its
    names: it is read as recorded)."""
    from domain.scenario_slips import fold_name

    units = data.get("units")
    if not isinstance(units, dict):
        return  # the loader says what is wrong with it
    first: dict[str, str] = {}
    for name in units:
        problem = name_problem("unit type", name, _TYPE_COMMA)
        for ch, why in _TYPE_SEPARATORS.items():
            if problem is None and ch in name:
                problem = f"{name!r}: a unit type name may not contain {ch!r} ({why})"
        if problem is None and fold_name(name).endswith(_DAMAGED):
            problem = (
                f"{name!r}: a unit type name may not end in {_DAMAGED.strip()!r} (`odds --attacker "
                "NATION:TYPE (damaged)=N` names a damaged capital ship of TYPE so, F3, NC5)"
            )
        if problem is not None:
            raise DataFileError(source, f"units.{name}", problem)
        other = first.setdefault(fold_name(name), name)
        if other != name:
            problem = (
                f"unit types {other!r} and {name!r} differ only in case, spaces, '-', '_' or how their "
                "letters are encoded: the commands, which take a type whatever its case, could not tell them apart"
            )
            raise SameNameTwice(source, (f"units.{name}", f"units.{other}"), problem)
    _abbrs_apart(units, source)


def _abbrs_apart(units: dict[str, Any], source: str) -> None:
    """Abbreviations that differ in more than case: they make unit IDs (GB-DD1), which commands
    take whatever their case, so a cruiser's `Dd` would make GB-Dd1 that GB-DD1 is typed as (the
    same abbreviation twice is the loader's to refuse)."""
    from domain.text import possessive

    first: dict[str, tuple[str, str]] = {}
    for name, table in units.items():
        abbr = table.get("abbr") if isinstance(table, dict) else None
        if not isinstance(abbr, str):
            continue  # the loader says what is wrong with it
        other, other_abbr = first.setdefault(abbr.casefold(), (name, abbr))
        if other_abbr != abbr:
            problem = (
                f"{abbr!r} differs from {possessive(other)} abbr {other_abbr!r} only in case: each type needs "
                "its own (unit IDs are made of it, and commands take them whatever their case)"
            )
            raise SameNameTwice(source, (f"units.{name}.abbr", f"units.{other}.abbr"), problem)
