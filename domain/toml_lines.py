"""Where a TOML text writes each key: a small scanner of TOML lines that maps each key path to
the line that writes it (table headers, keys, dotted keys, arrays of tables), reading the text
alone, so that it works where TOML refuses the file; a problem whose key the file lacks points
at the nearest table that holds it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

KeyPath = tuple[str | int, ...]
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# A problem about one named thing quotes it ('Foo' or "Foo's"); a multi-line array is searched
# for that name so the line shown is the element's own.
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


@dataclass(frozen=True)
class KeyLine:
    """Where the text writes one key: its first line, and the last line of its value."""

    line: int
    end: int
    header: bool  # a [table] or [[array]] header rather than a `key = value` line


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
    return scan_keys(text).found


def key_at(text: str, line: int) -> str:
    """The key path a line writes (`nations.Britain.code`, `units[2]`), as the loader names it;
    "" for a line that writes none. Read from the text alone, so it works where TOML refuses the
    file (a key given twice is written on a line of its own)."""
    return key_name(scan_keys(text).at_line.get(line, ()))


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


def key_name(path: KeyPath) -> str:
    """A key path as the loader names it (`nations.Britain.code`, `units[2]`)."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" if n else p for n, p in enumerate(path))


@dataclass(frozen=True)
class Scan:
    found: dict[KeyPath, KeyLine]  # `key_lines`
    at_line: dict[int, KeyPath]  # the key path each line writing a key or header writes
    # The multi-line value each later line of it belongs to: (its key path, its first line);
    # under 0, one the text leaves open at its end.
    within: dict[int, tuple[KeyPath, int]]


def scan_keys(text: str) -> Scan:
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
    return Scan(found, at_line, within)


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
