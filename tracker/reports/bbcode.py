"""Turn reports as BBCode for phpBB and BoardGameGeek forums (`tracker report --format bbcode`):
the BBCode dialect of the post template (`tracker.reports.post`), the same document as the
Markdown report in forum tags.

Tables become fixed-width `[code]` blocks, as neither forum has tables in its default tag set;
inside them text carries no markup (a struck row says which undo took it back, in words). A
`[` that players typed gets a zero-width space after it, so no name or reason can open a tag;
nothing else of theirs is markup in BBCode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracker.reports.post import Dialect, Marked, Row, plain, render_post

HEADINGS = {1: ("[size=150][b]", "[/b][/size]"), 2: ("[size=120][b]", "[/b][/size]")}


def bbcode(text: object) -> str:
    """Text safe in BBCode: no tag can start in it, one line."""
    return " ".join(str(text).split()).replace("[", "[\u200b")


class BBCodeDialect(Dialect):
    """BBCode as phpBB and BoardGameGeek read it: the tags of their default set only."""

    def escape(self, text: object) -> Marked:
        return text if isinstance(text, Marked) else Marked(bbcode(text))

    def bold(self, text: object) -> Marked:
        return Marked(f"[b]{text}[/b]", plain(text))

    def italic(self, text: object) -> Marked:
        return Marked(f"[i]{text}[/i]", plain(text))

    def struck(self, text: object) -> Marked:
        return Marked(f"[s]{text}[/s]", plain(text))

    def code(self, text: object) -> Marked:
        # Neither forum's default set has inline code: the text stands as it is.
        return Marked(bbcode(text))

    def heading(self, level: int, text: object) -> str:
        start, end = HEADINGS.get(level, ("[b]", "[/b]"))
        return f"{start}{text}{end}"

    def item(self, caller: Callable[[], str]) -> str:
        return f"[*]{caller()}\n"

    def quote(self, caller: Callable[[], str]) -> str:
        return f"[quote]{caller()}[/quote]\n"

    def bullets(self, caller: Callable[[], str], nested: bool = False) -> str:
        body = caller()
        # A list with no item is no list (a nested one comes after its item, within the list).
        return f"[list]\n{body}[/list]\n" if body.strip() else body

    def layout(self, header: list[Marked], rows: list[Row]) -> str:
        table = [[plain(h) for h in header]]
        for row in rows:
            cells = [plain(self.cell(c)) for c in row.cells]
            if row.undone_by:
                cells[-1] += f" (undone by event {row.undone_by})"
            table.extend(_wrapped(cells))
        widths = [max(len(r[i]) if i < len(r) else 0 for r in table) for i in range(max(map(len, table)))]
        lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(["[code]", *lines, "[/code]"]) + "\n"


# A [code] block does not wrap: a cell longer than this (a nation's NTR zone by zone) goes on
# over the lines below its row, rather than widening every line of the table past the post.
CELL_WIDTH = 60


def _wrapped(cells: list[str]) -> list[list[str]]:
    """A row of a fixed-width table as lines: each long cell cut after its commas into pieces of
    at most `CELL_WIDTH` characters where it can be, the other cells blank below the first."""
    pieces = [_cell_lines(c) for c in cells]
    depth = max(map(len, pieces), default=1)
    return [[p[k] if k < len(p) else "" for p in pieces] for k in range(depth)]


def _cell_lines(text: str) -> list[str]:
    if len(text) <= CELL_WIDTH:
        return [text]
    lines, line = [], ""
    for part in text.split(", "):
        joined = f"{line}, {part}" if line else part
        # The comma left at the end of a line counts in its width.
        if line and len(joined) + 1 > CELL_WIDTH:
            lines.append(line + ",")
            line = part
        else:
            line = joined
    return [*lines, line]


BBCODE = BBCodeDialect()


def render_bbcode(report: dict[str, Any]) -> str:
    """The report (`tracker.reports.report.build_report`) in BBCode."""
    return render_post(report, BBCODE)
