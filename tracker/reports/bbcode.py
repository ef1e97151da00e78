"""Turn reports as BBCode for phpBB and BoardGameGeek forums (`tracker report --format bbcode`):
the BBCode dialect of the post template (`tracker.reports.post`), the same document as the
Markdown report in forum tags.

Tables become fixed-width `[code]` blocks, as neither forum has tables in its default tag set;
inside them text carries no markup (a struck row says which undo took it back, in words). A
`[` that players typed gets a zero-width space after it, so no name or reason can open a tag;
nothing else of theirs is markup in BBCode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from tracker.reports.post import Dialect, Marked, Row, fixed_width, plain, render_post
from tracker.reports.split import CLOSE, HEADING, MORE, OPEN, TEXT, Construct, Cut, Line

HEADINGS = {1: ("[size=150][b]", "[/b][/size]"), 2: ("[size=120][b]", "[/b][/size]")}


# BoardGameGeek drops the rest of a post from a "<" followed by anything but a space (its
# "HTML stripping", which the preview does not show): a die's "(<=5)" would cut a report off at
# its first battle. The comparisons are written as their own signs, any other "<" spaced.
_LESS = re.compile(r"<(?=\S)")


def bbcode(text: object) -> str:
    """Text safe in BBCode: no tag can start in it, no "<" starts what a forum strips as HTML
    (BoardGameGeek), one line."""
    line = " ".join(str(text).split()).replace("[", "[\u200b")
    if "<" in line or ">=" in line:
        line = _LESS.sub("< ", line.replace("<=", "\u2264").replace(">=", "\u2265"))
    return line


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
        lines = fixed_width(header, rows, lambda c: plain(self.cell(c)))
        return "\n".join(["[code]", *lines, "[/code]"]) + "\n"

    # ----- cutting a post into parts (`tracker.reports.split`) -----

    def lines(self, text: str) -> list[Line]:
        """The post's lines: a block tag alone on its line ([list], [code], [quote], [table])
        opens a construct, closed by its closing tag alone on a line; a fixed-width table's
        header (a [code] block's first line over a line of dashes) opens it with the tag, and a
        row's wrapped lines (a blank first cell) are the row's."""
        raw = text.splitlines(keepends=True)
        out: list[Line] = []
        stack: list[tuple[str, Construct]] = []
        k = 0
        while k < len(raw):
            line = raw[k]
            inside = tuple(c for _, c in stack)
            opened = _BLOCK_OPEN.fullmatch(line)
            closed = _BLOCK_CLOSE.fullmatch(line)
            if closed and stack and stack[-1][0] == closed.group(1).lower():
                out.append(Line(line, inside, CLOSE))
                stack.pop()
            elif stack and stack[-1][0] == "code":
                # Nothing is a tag inside a code block but its end.
                wrapped = line.startswith(" ") and out[-1].role in (TEXT, MORE)
                out.append(Line(line, inside, MORE if wrapped else TEXT))
            elif opened:
                name = opened.group(1).lower()
                tag = _line(line)
                opening = [line]
                if name == "code" and k + 2 < len(raw) and _DASHES.fullmatch(raw[k + 2]):
                    opening += raw[k + 1 : k + 3]
                construct = Construct("".join(map(_line, opening)), f"[/{name}]\n", tag, literal=name == "code")
                # The tag opens the block: the header's lines are in it.
                out.extend(Line(o, inside if n == 0 else (*inside, construct), OPEN) for n, o in enumerate(opening))
                stack.append((name, construct))
                k += len(opening) - 1
            else:
                out.append(Line(line, inside, HEADING if _HEADING.fullmatch(line) else TEXT))
            k += 1
        return out

    def cuts(self, text: str, literal: bool) -> Iterator[Cut]:
        """Where a line may be cut: between characters, never in a tag or between a `[` and
        the zero-width space that keeps it from being one; the tags open there are closed and
        opened again ([*] needs no closing)."""
        if literal:
            yield from (Cut(at) for at in range(1, len(text)) if text[at] != "\u200b")
            return
        open_: list[tuple[str, str]] = []  # (name, opening tag)
        at = 0
        while at < len(text):
            tag = _TAG.match(text, at)
            if tag is None or (open_ and open_[-1][0] == "code" and tag.group(0).lower() != "[/code]"):
                at += 2 if text.startswith("[\u200b", at) else 1
            else:
                name = tag.group(2).lower()
                if tag.group(1):
                    names = [n for n, _ in open_]
                    if name in names:
                        del open_[len(names) - 1 - names[::-1].index(name) :]
                elif name != "*":
                    open_.append((name, tag.group(0)))
                at = tag.end()
            if at < len(text):
                closing = "".join(f"[/{n}]" for n, _ in reversed(open_))
                yield Cut(at, closing, "".join(t for _, t in open_))

    def part_label(self, number: int, total: int) -> str:
        return f"[b]({number}/{total})[/b]\n\n"


_BLOCK_OPEN = re.compile(r"\[(list|code|quote|table)(=[^\]]*)?\]\s*", re.IGNORECASE)
_BLOCK_CLOSE = re.compile(r"\[/(list|code|quote|table)\]\s*", re.IGNORECASE)
_TAG = re.compile(r"\[(/?)([a-z]+|\*)(=[^\]]*)?\]", re.IGNORECASE)
_DASHES = re.compile(r"-+( +-+)*\s*")
# A heading as `BBCodeDialect.heading` writes it, alone on its line.
_HEADING = re.compile(r"(\[size=\d+\])?\[b\](?:(?!\[/b\]).)*\[/b\](\[/size\])?\s*")


def _line(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


BBCODE = BBCodeDialect()


def render_bbcode(report: dict[str, Any]) -> str:
    """The report (`tracker.reports.report.build_report`) in BBCode."""
    return render_post(report, BBCODE)
