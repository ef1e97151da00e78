"""A strict reader for TOML-shaped data: every error names the file, the key path and the problem."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

from domain.errors import DataFileError

_MISSING: Any = object()

# No number in a data file may exceed what a PostgreSQL INTEGER column holds, whatever a
# key's own limit: the figures derived from it (balances, counts) are stored in such columns.
MAX_INTEGER = 2**31 - 1


def _type_name(value: object) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a decimal number",  # an integer is a number too: say which kind
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)


# Characters no name or title in a data file may hold (line breaks, tabs, escapes, format
# characters): they break one-line messages and terminals, and XML (the SVG map) has no place
# for them. The same set campaign names refuse (tracker.storage.store.check_campaign_name).
_CONTROL_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")


def control_character(text: str) -> str | None:
    """The first control character in `text`, or None."""
    return next((ch for ch in text if unicodedata.category(ch) in _CONTROL_CATEGORIES), None)


def printable(text: str) -> str:
    """`text` with each control character written as its escape (BEL as \\x07), for one-line
    messages that quote a name without repr's quotes (a key path)."""
    if control_character(text) is None:
        return text
    return "".join(repr(ch)[1:-1] if unicodedata.category(ch) in _CONTROL_CATEGORIES else ch for ch in text)


def name_problem(what: str, name: str, comma_splits: str = "") -> str | None:
    """Why a name a data file gives could not be printed on one line or typed back in a command,
    or None: empty, spaces around it (what a player types is trimmed), a control character, or a
    comma where `comma_splits` (which commands split at commas) is given."""
    if not name.strip():
        return f"a {what} needs a name: {name!r} is empty"
    if name != name.strip():
        return f"{name!r}: a {what} name may not begin or end with spaces (commands trim what is typed)"
    bad = control_character(name)
    if bad is not None:
        return f"{name!r}: a {what} name may not contain control characters such as {bad!r}"
    if comma_splits and "," in name:
        return f"{name!r}: a {what} name may not contain a comma ({comma_splits})"
    return None


class SameNameTwice(DataFileError):
    """One name in two places (two tables, two codes); `keys` names both, so a tool that knows
    the file's lines points at the later one (the duplicate), not whichever was read first."""

    def __init__(self, source: str, keys: tuple[str, str], problem: str) -> None:
        super().__init__(source, keys[0], problem)
        self.keys = keys


# A name that differs from a known one only in its Unicode form ('Ö' one character, or 'O' and
# a combining accent, as text pasted from some PDFs or macOS file names has it) looks the same:
# the suggestion alone would read as nonsense.
ENCODED_OTHERWISE = (
    "it looks the same, but an accented letter is encoded another way (Unicode NFC and NFD): type the name again"
)


def same_but_for_form(text: str, known: Iterable[str]) -> str | None:
    """The known name `text` differs from in its Unicode form alone, or None."""
    composed = unicodedata.normalize("NFC", text)
    return next((k for k in known if k != text and unicodedata.normalize("NFC", k) == composed), None)


def did_you_mean(text: str, known: Iterable[str]) -> str:
    """' (did you mean 'X'?)' naming the known name closest to a mistyped one (case aside), or ''
    when none is close: on a board of a hundred zones, the list of them all helps nobody. A name
    that looks the same, encoded otherwise, is said to be."""
    import difflib  # only on this error path: reading a good file never needs it

    known = list(known)
    if (same := same_but_for_form(text, known)) is not None:
        return f" (did you mean {same!r}? {ENCODED_OTHERWISE})"
    by_fold = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(text.casefold(), sorted(by_fold), n=1, cutoff=0.75)
    return f" (did you mean {by_fold[close[0]]!r}?)" if close else ""


def unknown_key(r: Reader, name: str) -> DataFileError:
    """The error for a key nobody asked for, naming the asked key it looks like (`cuont`: `count`)."""
    return r.fail(name, "unknown key" + did_you_mean(name, r.used))


class Reader:
    """Reads one table, remembering which keys were used so unknown keys can be reported."""

    def __init__(self, source: str, data: Any, path: str = "") -> None:
        self.source = source
        self.path = path
        if not isinstance(data, dict):
            raise DataFileError(source, path or "(top level)", f"expected a table, got {_type_name(data)}")
        self.data: dict[str, Any] = data
        self.used: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def fail(self, name: str, problem: str) -> DataFileError:
        return DataFileError(self.source, self.key(name), problem)

    def has(self, name: str) -> bool:
        return name in self.data

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        self.used.add(name)
        if name not in self.data:
            if default is _MISSING:
                raise self.fail(name, "missing required key")
            return default
        return self.data[name]

    def table(self, name: str, required: bool = True) -> Reader:
        value = self.raw(name, _MISSING if required else {})
        return Reader(self.source, value, self.key(name))

    def tables(self, name: str, required: bool = True) -> Iterator[tuple[str, Reader]]:
        """The sub-tables of a table, as (name, reader) pairs."""
        outer = self.table(name, required)
        for sub in outer.data:
            outer.used.add(sub)
            yield sub, Reader(self.source, outer.data[sub], outer.key(sub))

    def table_list(self, name: str, required: bool = True) -> list[Reader]:
        value = self.raw(name, _MISSING if required else [])
        if not isinstance(value, list):
            raise self.fail(name, f"expected a list of tables, got {_type_name(value)}")
        return [Reader(self.source, item, f"{self.key(name)}[{i}]") for i, item in enumerate(value)]

    def integer(
        self, name: str, minimum: int | None = None, maximum: int | None = None, default: Any = _MISSING
    ) -> int:
        value = self.raw(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(name, f"expected an integer, got {_type_name(value)}")
        bottom = max(minimum, -MAX_INTEGER) if minimum is not None else -MAX_INTEGER
        if value < bottom:
            raise self.fail(name, f"value {value} is out of range (minimum {bottom})")
        top = min(maximum, MAX_INTEGER) if maximum is not None else MAX_INTEGER
        if value > top:
            raise self.fail(name, f"value {value} is out of range (maximum {top})")
        return value

    def string(self, name: str, default: Any = _MISSING, choices: tuple[str, ...] = ()) -> str:
        value = self.raw(name, default)
        if not isinstance(value, str):
            raise self.fail(name, f"expected a string, got {_type_name(value)}")
        if choices and value not in choices:
            raise self.fail(name, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def boolean(self, name: str, default: Any = _MISSING) -> bool:
        value = self.raw(name, default)
        if not isinstance(value, bool):
            raise self.fail(name, f"expected a boolean, got {_type_name(value)}")
        return value

    def strings(self, name: str, default: Any = _MISSING) -> list[str]:
        value = self.raw(name, default)
        if not isinstance(value, list):
            raise self.fail(name, f"expected a list of strings, got {_type_name(value)}")
        stranger = next((v for v in value if not isinstance(v, str)), _MISSING)
        if stranger is not _MISSING:
            raise self.fail(name, f"expected a list of strings, got a list holding {_type_name(stranger)}")
        return list(value)

    def int_map(
        self, name: str, minimum: int = 0, maximum: int | None = None, required: bool = False
    ) -> dict[str, int]:
        """A table of name = integer pairs."""
        inner = self.table(name, required)
        return {k: inner.integer(k, minimum=minimum, maximum=maximum) for k in list(inner.data)}

    def finish(self) -> None:
        """Refuse keys nobody asked for: a typo must not silently fall back to a default."""
        for name in self.data:
            if name not in self.used:
                raise unknown_key(self, name)
