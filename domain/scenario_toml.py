"""TOML's refusal of a scenario file as `scenario check` and `tracker new` tell it: at its line,
with the key path of that line, and for the slips people make typing a board, what to write
instead (a name with spaces or accents left unquoted, a word processor's curly quotes, a comma
missing in a list, `:` for `=`, `True` for `true`). TOML's own words say none of that."""

from __future__ import annotations

import re

from domain.schema import control_character
from domain.toml_lines import KeyPath, Scan, key_name, scan_keys

_TOML_ERROR_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)")
# `key = Some words`: text without its quotes (not true, false, inf or nan, which TOML knows).
_UNQUOTED = re.compile(r"[^=#]*=\s*(?!(?:true|false|inf|nan)\b)[A-Za-z]")
_UNITS_TWICE = "each group of starting forces is a [[units]] table, with double brackets"
# A name TOML reads without quotes: ASCII letters, digits, '-' and '_' only.
_BARE = re.compile(r"[A-Za-z0-9_-]+")
# The quotes a word processor (or a phone's keyboard) types for " and '.
_CURLY = "“”„‟«»‘’‚‛"
# `True`, `yes`: a yes-or-no value TOML only knows as true or false.
_TRUTH = re.compile(r"(?i)true|false|yes|no|on|off")
# TOML's words where a key is written with what a bare key may not hold.
_KEY_STOPPED = ("Expected '=' after a key in a key/value pair", "Invalid initial character for a key part")
# A quoted key and its `=`: the line after an array left open, not an entry missing its comma.
_QUOTED_KEY = re.compile(r"(\"[^\"]*\"|'[^']*')\s*=")
_QUOTED_ENTRY = re.compile(r"\"[^\"]*\"|'[^']*'")


def toml_refusal(text: str, error: str, scenario: bool = True) -> tuple[str, str, int | None]:
    """(key path, problem, line) for TOML's `error` on `text`: a key or table given twice names
    the line of the first; a line inside a value begun above (an array left unclosed) names
    that value and the line it begins on. A ruleset file (not a `scenario`) has no [[units]]
    tables of starting forces, and is told nothing of them."""
    at = _TOML_ERROR_AT.search(error)
    message = _TOML_ERROR_AT.sub("", error)
    line = int(at.group(1)) if at else None
    scan = scan_keys(text)
    rows = text.split("\n")
    row = rows[line - 1].rstrip("\r") if line is not None and line <= len(rows) else ""
    column = int(at.group(2)) if at else 0
    slip = _typing_slip(message, row, column)
    opened = scan.within.get(line if line is not None else 0)
    if opened is not None and opened[1] != line:
        path, start = opened
        if slip is not None:
            # A comma missing between the entries of a list written over lines: TOML calls the
            # list unclosed at the entry after the gap.
            return key_name(path), f"not valid TOML ({message}: {slip})", line
        where = "here" if line is not None else "at the end of the file"
        problem = f"not valid TOML ({message}; the value begun at line {start} is still open {where})"
        return key_name(path), problem, line if line is not None else start
    if line is None:
        return "", f"not valid TOML ({message})", None
    path = scan.at_line.get(line, ())
    earlier = [n for n, p in scan.at_line.items() if path and p == path and n < line]
    stray = next((ch for ch in row if ch != "\t" and control_character(ch)), None)
    single = [n for n in range(1, line) if rows[n - 1].lstrip().startswith("[units]")]
    if scenario and single and row.lstrip().startswith("[[units]]"):
        # `[units]` first and `[[units]]` after: TOML stops at the second, the slip is the first.
        problem = f"not valid TOML ({message} at line {line}: {_UNITS_TWICE})"
        return "units", problem, single[0]
    if earlier:
        message = f"{message}: also at line {earlier[0]}"
        if scenario and path[:1] == ("units",) and row.lstrip().startswith("[units]"):
            message = f"{message}; {_UNITS_TWICE}"
    elif slip is not None:
        message = f"{message}: {slip}"
        path = path or _unquoted_key_path(scan, line, row)
    elif message == "Expected ']' at the end of a table declaration" and (quoted := _quoted_header(row)):
        message, path = f"{message}: {quoted[0]}", quoted[1]
    elif stray is not None and "Illegal character" not in message:
        # Invisible in an editor: say what TOML stumbled on.
        message = f"{message}: the line holds the control character {stray!r}, column {row.index(stray) + 1}"
    elif message == "Invalid initial character for a key part" and at is not None and "{" in row:
        message = f"{message}: {_inline_table_slip(row, column)}"
    elif message == "Illegal character '\\n'":
        message = f"{message}: a string is still open at the end of the line: a closing quote is missing"
    elif message == "Invalid value" and _UNQUOTED.match(row):
        message = f'{message}: text needs quotes, as name = "North Sea"'
    return key_name(path), f"not valid TOML ({message})", line


def _typing_slip(message: str, row: str, column: int) -> str | None:
    """What to write instead, for a slip of typing TOML stopped at on `row` (at `column`,
    counted from 1), or None when it is none of those known."""
    rest = row[column - 1 :] if column > 0 else ""
    stopped = rest[:1]
    if (stopped and stopped in _CURLY) or (message == "Illegal character '\\n'" and any(c in _CURLY for c in row)):
        curly = stopped if stopped and stopped in _CURLY else next(c for c in row if c in _CURLY)
        return (
            f"{curly} is a curly quote, as a word processor types it: TOML's quotes are straight, "
            'as "North Sea"; turn off smart quotes or type the file in a plain-text editor'
        )
    if message in _KEY_STOPPED and not row.lstrip().startswith("["):
        unquoted = _unquoted_key(row, column)
        if unquoted is not None:
            return unquoted
    eq = row.find("=")
    key, value = row[:eq].strip(), row[eq + 1 :].partition(" #")[0].strip()
    if message == "Expected '=' after a key in a key/value pair" and stopped == ":":
        key, value = row[: column - 1].strip(), row[column:].strip()
        return f"a key and its value are joined by '=', as {key} = {value}"
    if message == "Invalid value" and eq >= 0 and _TRUTH.fullmatch(value):
        if value.lower() in ("true", "false"):
            return f"true and false are written in lower case, as {key} = {value.lower()}"
        meant = "true" if value.lower() in ("yes", "on") else "false"
        return f"yes or no is written true or false, as {key} = {meant} (text would need quotes)"
    if message == "Unclosed array" and stopped == ";":
        return "the entries of [ ... ] are separated by commas, not ';'"
    if message == "Unclosed array" and stopped in ("'", '"') and not _QUOTED_KEY.match(rest):
        entry = _QUOTED_ENTRY.match(rest)
        before = entry.group() if entry else "this entry"
        return f"a comma is missing before {before}: the entries of [ ... ] are separated by commas"
    if message == "Expected newline or end of document after a statement" and stopped == "," and eq >= 0:
        return f"several values are a list, written in brackets, as {key} = [{value}]"
    return None


def _unquoted_key(row: str, column: int) -> str | None:
    """A key with spaces or letters beyond a to z written without its quotes (`Central Powers =`,
    `{ Ålandshav = 1 }`) where TOML stopped at `column`: how to write it."""
    head = row[: max(column - 1, 0)]
    # The key TOML was reading begins at the line's start or, in { ... }, after '{' or ','.
    start = max(head.rfind("{"), head.rfind(",")) + 1 if "{" in head else 0
    eq = row.find("=", start)
    if eq < 0 or eq < column - 1:
        return None
    key = row[start:eq].strip()
    if not key or key[0] in "\"'" or all(_BARE.fullmatch(part) for part in key.split(".")):
        return None
    why = "spaces" if " " in key else "letters other than a to z"
    return f'a name with {why} is written in quotes, as "{key}" = ...'


def _unquoted_key_path(scan: Scan, line: int, row: str) -> KeyPath:
    """The key path of a line TOML could not read a key from (`Central Powers = [...]`,
    `income: 4`): the table above it, and the key as written; () for a line in { ... }."""
    written = re.match(r"\s*([^=:{\"']+?)\s*[=:]", row)
    if written is None or "{" in row:
        return ()
    above = max((n for n, p in scan.at_line.items() if n < line and scan.found[p].header), default=None)
    return (*scan.at_line[above], written.group(1)) if above is not None else (written.group(1),)


def _quoted_header(row: str) -> tuple[str, KeyPath] | None:
    """How to write a table header whose names hold spaces or accents (`[nations.Ottoman
    Empire]`, `[map.land.Götaland]`), each such name in quotes, and the key path it means; None
    for a row that is no such header."""
    header = re.fullmatch(r"\s*(\[\[?)([^\]\"'#]*)(\]\]?)\s*(#.*)?", row)
    if header is None:
        return None
    parts = [part.strip() for part in header.group(2).split(".")]
    if all(_BARE.fullmatch(part) for part in parts):
        return None
    quoted = ".".join(part if _BARE.fullmatch(part) else f'"{part}"' for part in parts)
    why = "spaces" if " " in header.group(2).strip() else "letters other than a to z"
    told = f"a name with {why} is written in quotes, as {header.group(1)}{quoted}{header.group(3)}"
    return told, tuple(parts)


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
