"""Turn reports as BBCode for phpBB and BoardGameGeek forums (`tracker report --format bbcode`).

Converted from the Markdown report (`templates/report.md.j2`) rather than rendered from a
template of its own: a forum post in either markup is the same document, so one template keeps
both formats telling the same story and a new section is written once. The conversion knows the
few constructs that template writes (headings, bold, italic, strike-through, inline code, bullet
lists, one quote style, pipe tables and backslash escapes). Tables become fixed-width `[code]`
blocks, as neither forum has tables in its default tag set: a column's width needs every row,
which is the finished table's business, not a template's. A `[` that players typed gets a
zero-width space after it, so no name or reason can open a tag.
"""

from __future__ import annotations

import re

_ESCAPED = re.compile(r"\\(.)")
_INLINE = (
    (re.compile(r"\*\*(.+?)\*\*"), r"[b]\1[/b]"),
    (re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])"), r"[i]\1[/i]"),
    (re.compile(r"~~(.+?)~~"), r"[s]\1[/s]"),
    (re.compile(r"`([^`]*)`"), r"\1"),
)
_PLAIN = (
    (re.compile(r"\*\*(.+?)\*\*"), r"\1"),
    (re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])"), r"\1"),
    (re.compile(r"~~(.+?)~~"), r"\1"),
    (re.compile(r"`([^`]*)`"), r"\1"),
)
HEADINGS = {1: ("[size=150][b]", "[/b][/size]"), 2: ("[size=120][b]", "[/b][/size]")}


def _protect(text: str) -> tuple[str, list[str]]:
    """Escaped characters out of the way of the markup patterns, kept for `restore`."""
    kept: list[str] = []

    def keep(m: re.Match[str]) -> str:
        kept.append(m.group(1))
        return f"\x00{len(kept) - 1}\x00"

    return _ESCAPED.sub(keep, text), kept


def restore(text: str, kept: list[str]) -> str:
    def put(m: re.Match[str]) -> str:
        ch = kept[int(m.group(1))]
        return "[\u200b" if ch == "[" else ch

    return re.sub(r"\x00(\d+)\x00", put, text)


def inline(text: str, plain: bool = False) -> str:
    """One line of the tracker's Markdown as BBCode (or, with `plain`, as bare text)."""
    protected, kept = _protect(text)
    for pattern, replacement in _PLAIN if plain else _INLINE:
        protected = pattern.sub(replacement, protected)
    return restore(protected, kept)


def _cells(line: str) -> list[str]:
    protected, kept = _protect(line.strip())
    return [restore(c.strip(), kept) for c in protected.strip("|").split("|")]


def _table(lines: list[str]) -> list[str]:
    rows = [_cells(line) for line in lines]
    rows = [r for r in rows if not all(set(c) <= {"-", ":"} and c for c in r)]  # the |---| row
    rows = [[inline(c, plain=True) for c in r] for r in rows]
    widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(max(map(len, rows)))]
    out = ["[code]"]
    for n, r in enumerate(rows):
        out.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    out.append("[/code]")
    return out


def markdown_to_bbcode(markdown: str) -> str:
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            out += _table(block)
            continue
        if line.startswith("- ") or line.startswith("  - "):
            out.append("[list]")
            nested = False
            while i < len(lines) and (lines[i].startswith("- ") or lines[i].startswith("  - ")):
                item = lines[i]
                if item.startswith("  - ") and not nested:
                    out.append("[list]")
                    nested = True
                elif item.startswith("- ") and nested:
                    out.append("[/list]")
                    nested = False
                out.append("[*]" + inline(item.lstrip()[2:]))
                i += 1
            if nested:
                out.append("[/list]")
            out.append("[/list]")
            continue
        heading = re.match(r"^(#{1,6}) (.*)$", line)
        if heading:
            start, end = HEADINGS.get(len(heading.group(1)), ("[b]", "[/b]"))
            out.append(start + inline(heading.group(2)) + end)
        elif line.startswith("> "):
            out.append("[quote]" + inline(line[2:]) + "[/quote]")
        else:
            out.append(inline(line))
        i += 1
    return "\n".join(out).rstrip("\n") + "\n"
