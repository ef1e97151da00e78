"""Forum posts cut into parts that each fit a post (`tracker report --split`): cut between lines
of the post only (headings, paragraphs, list items, table rows), every construct open at a cut (a
table, a code block, a list) closed at the end of its part and opened again, a table's header
repeated, at the start of the next, so that each part renders on its own.

A dialect (`tracker.reports.markdown`, `tracker.reports.bbcode`) reads its own markup into
`Line`s, says where a line too long for a part may be cut and numbers the parts; this module
packs the lines into parts. Characters are counted as Python counts them, in Unicode code points,
as Discord and phpBB count a post's length.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

# Characters a post may hold, by where it goes: a Discord message (the webhook notices are cut
# to it too, see `tracker.service.notify.messages`) and a phpBB board's default `max_post_chars`.
PRESETS = {"discord": 2000, "phpbb": 60000}
# Below this a table's reopened header and one row no longer fit a part: every row would be cut.
SMALLEST = 200
# No forum holds a post of more; a larger number is a slip of the keyboard.
LARGEST = 1_000_000

# The roles of a line: what may follow a cut before it, or after it.
OPEN = "open"  # a line of a construct's opening (its tag, a table's header): no cut after it
CLOSE = "close"  # the line that closes a construct: no cut before it
TEXT = "text"
HEADING = "heading"  # kept with what follows it
MORE = "more"  # the rest of the line before (a fixed-width table's wrapped row): no cut before it


class SplitError(ValueError):
    """A post that cannot be cut into parts of the length asked for."""


@dataclass(frozen=True, eq=False)
class Construct:
    """A construct lines sit inside (a table, a code block, a list), as a part cut inside it
    writes it: `reopen` starts the next part (a table with its header again), `close` ends the
    part, `bare` opens it again without a header when header and row leave no room. Each text
    is whole lines. `literal`: no inline markup inside (a code block)."""

    reopen: str
    close: str
    bare: str
    literal: bool = False


@dataclass(frozen=True)
class Line:
    """A line of a post (its newline included), the constructs open around it, outermost first
    (the lines of an opening after its first are in their construct), and its role."""

    text: str
    inside: tuple[Construct, ...] = ()
    role: str = TEXT


@dataclass(frozen=True)
class Cut:
    """Where a line's text may be cut: an offset, and the inline markup open there as the text
    closing it (at the end of the part) and the text opening it again (in the next)."""

    at: int
    close: str = ""
    reopen: str = ""


class Markup(Protocol):
    """What a dialect tells the splitter about its markup."""

    def lines(self, text: str) -> list[Line]:
        """The post's lines, in order: joined, their texts are `text`."""
        ...

    def cuts(self, text: str, literal: bool) -> Iterator[Cut]:
        """Where one line's `text` (no newline) may be cut, in order (`literal`: inside a code
        block): never inside a tag, a marker or an escape."""
        ...

    def part_label(self, number: int, total: int) -> str:
        """The first lines of part `number` of `total`: "(2/5)" in the markup, a blank line."""
        ...


@dataclass(frozen=True)
class Split:
    """The parts of a post, each ending in a newline; the numbers of the parts cut inside a
    block longer than a part (`cut_inside`) and of those continuing a table without its header
    (`headless`), and the warnings that say so (one line each)."""

    parts: list[str]
    warnings: list[str]
    cut_inside: list[int]
    headless: list[int]


def split_post(text: str, markup: Markup, limit: int) -> Split:
    """`text` (a post in `markup`) in parts of at most `limit` characters each, numbered; a post
    that fits is one part, as it is. A line longer than a part is cut inside (and said so)."""
    if len(text) <= limit:
        return Split([text], [], [], [])
    # Every line, the last too, ends in its newline: a part's length is its lines' lengths.
    lines = markup.lines(text if text.endswith("\n") else text + "\n")
    digits = 1
    while True:
        # The label's length depends on the number of parts: packed again if it has more digits.
        widest = 10**digits - 1
        packer = _Packer(lines, markup, limit - len(markup.part_label(widest, widest)))
        bodies = packer.pack()
        if len(str(len(bodies))) <= digits:
            break
        digits += 1
    total = len(bodies)
    parts = [markup.part_label(k, total) + body for k, body in enumerate(bodies, 1)]
    return Split(parts, packer.warnings(limit), sorted(set(packer.cut_parts)), sorted(set(packer.bare_parts)))


def _reopen(stack: Sequence[Construct], bare: bool = False) -> str:
    return "".join(c.bare if bare else c.reopen for c in stack)


def _close(stack: Sequence[Construct]) -> str:
    return "".join(c.close for c in reversed(stack))


def _blank(line: Line) -> bool:
    return not line.text.strip()


class _Packer:
    """Lines into part bodies of at most `room` characters each (the label left out)."""

    def __init__(self, lines: list[Line], markup: Markup, room: int) -> None:
        self.lines = lines
        self.markup = markup
        self.room = room
        n = len(lines)
        # The non-blank line before each line (-1: none).
        before, last = [], -1
        for k, line in enumerate(lines):
            before.append(last)
            if not _blank(line):
                last = k
        self.before = before
        self.priority = [self._priority(j) for j in range(n)] + [9]
        self.bare_parts: list[int] = []  # parts whose table header could not be repeated
        self.cut_parts: list[int] = []  # parts that end inside a block (a row, a line)

    def _priority(self, j: int) -> int:
        """How good a cut before line `j` is; -1: none there."""
        line, k = self.lines[j], self.before[j]
        if _blank(line) or line.role in (CLOSE, MORE) or k < 0 or self.lines[k].role == OPEN:
            return -1
        if line.inside:
            return 1
        if self.lines[k].role == HEADING:
            return 0  # a heading is kept with its section where there is any other cut
        return 3 if line.role == HEADING else 2

    def pack(self) -> list[str]:
        lines, bodies = self.lines, list[str]()
        i, offset, prefix = 0, 0, ""  # the next line, where in it, the inline markup it reopens
        while i < len(lines) and _blank(lines[i]):
            i += 1
        while i < len(lines):
            stack = lines[i].inside
            head = _reopen(stack)
            end = self._end(i, offset, prefix, head)
            if end is None and _reopen(stack, bare=True) != head:
                head = _reopen(stack, bare=True)
                end = self._end(i, offset, prefix, head)
                if end is not None:
                    self.bare_parts.append(len(bodies) + 1)
            if end is not None:
                bodies.append(head + self._body(i, offset, prefix, end) + _close(self._inside(end)))
                i, offset, prefix = self._next(end), 0, ""
                continue
            # Nothing up to the first cut fits: the block (a row and its wrapped lines, a line)
            # is longer than a part, and is cut inside.
            if offset == 0 and lines[i].role == OPEN:
                # A construct whose first block is too long: the part that holds the block's
                # start opens it, as a part continuing it would (the same lines), rather than
                # a part holding the opening alone; unless the opening is too long itself, and
                # is cut as any line.
                o = i
                while o < len(lines) and lines[o].role == OPEN:
                    o += 1
                if o < len(lines) and len(_reopen(lines[o].inside)) <= self.room // 2:
                    i = o
                    continue
            self.cut_parts.append(len(bodies) + 1)
            # The header again if it leaves the block room enough, for each piece of it (not
            # for the rest of the header itself).
            head = _reopen(stack)
            if len(head) > self.room // 2 or (lines[i].role == OPEN and lines[self.before[i]].role == OPEN):
                head = _reopen(stack, bare=True)
                if head != _reopen(stack):
                    self.bare_parts.append(len(bodies) + 1)
            k = i + 1
            size = kept = len(head) + len(prefix) + len(lines[i].text) - offset
            while k < len(lines):
                size += len(lines[k].text)
                grown = kept if _blank(lines[k]) else size
                if grown + len(_close(self._inside(k + 1))) > self.room:
                    break
                kept, k = grown, k + 1
            # No part ends with an opening and nothing in it, unless the part is that opening
            # (a table's header alone, over no row: a table still).
            j = k
            while j - 1 > i and lines[j - 1].role == OPEN:
                j -= 1
            if lines[j - 1].role != OPEN:
                k = j
            if self._fits(head, self._body(i, offset, prefix, k), self._inside(k)):
                bodies.append(head + self._body(i, offset, prefix, k) + _close(self._inside(k)))
                i, offset, prefix = self._next(k), 0, ""
                continue
            body, taken, prefix = self._piece(head, i, offset, prefix)
            bodies.append(body)
            offset += taken
            if offset >= len(lines[i].text.rstrip("\n")):
                i, offset, prefix = self._next(i + 1), 0, ""
        return bodies

    def _inside(self, j: int) -> tuple[Construct, ...]:
        return self.lines[j].inside if j < len(self.lines) else ()

    def _next(self, j: int) -> int:
        while j < len(self.lines) and _blank(self.lines[j]):
            j += 1
        return j

    def _body(self, i: int, offset: int, prefix: str, j: int) -> str:
        """Lines `i` (from `offset`, after `prefix`) to `j` (excluded), without blank lines at
        the end."""
        last = next((k for k in range(j - 1, i, -1) if not _blank(self.lines[k])), i)
        return prefix + self.lines[i].text[offset:] + "".join(line.text for line in self.lines[i + 1 : last + 1])

    def _fits(self, head: str, body: str, inside: tuple[Construct, ...]) -> bool:
        return len(head) + len(body) + len(_close(inside)) <= self.room

    def _end(self, i: int, offset: int, prefix: str, head: str) -> int | None:
        """The best line before which to end the part that starts at line `i`, or None if the
        part would be over the limit wherever it ended."""
        lines = self.lines
        size = len(head) + len(prefix) + len(lines[i].text) - offset
        kept = size  # without the blank lines at the end
        fitting: list[tuple[int, int, int]] = []  # (priority, line, length)
        for j in range(i + 1, len(lines) + 1):
            if kept > self.room:
                break
            if self.priority[j] >= 0:
                length = kept + len(_close(self._inside(j)))
                if length <= self.room:
                    if j == len(lines):
                        return j
                    fitting.append((self.priority[j], j, length))
            if j < len(lines):
                size += len(lines[j].text)
                if not _blank(lines[j]):
                    kept = size
        if not fitting:
            return None
        # Rather a cut between sections than inside a table or a list, where the part is well
        # filled all the same.
        full = [f for f in fitting if f[2] >= 0.6 * self.room] or fitting
        return max(full)[1]

    def _piece(self, head: str, i: int, offset: int, prefix: str) -> tuple[str, int, str]:
        """As much of line `i` (from `offset`, after `prefix`) as a part holds: the part's
        body, the characters of the line taken, and the inline markup the rest opens again."""
        line = self.lines[i]
        text = prefix + line.text[offset:].rstrip("\n")
        literal = any(c.literal for c in line.inside)
        close = _close(line.inside)
        space = self.room - len(head) - len(close) - 1  # the newline after the piece
        if space <= len(prefix):
            raise SplitError(f"the markup open at line {i + 1} leaves no room in a part: give a larger limit")
        # The prefix reopens what was open where the line was cut: read with it, the rest of the
        # line closes it. The last cut that fits, rather after a space if the part is well
        # filled all the same.
        fitting = spaced = None
        for c in self.markup.cuts(text, literal):
            if c.at > space or c.at >= len(text):
                break
            if c.at > len(prefix) and c.at + len(c.close) <= space:
                fitting = c
                if text[c.at - 1].isspace() and c.at >= space // 2:
                    spaced = c
        cut = spaced or fitting or Cut(min(space, len(text)))
        return head + text[: cut.at] + cut.close + "\n" + close, cut.at - len(prefix), cut.reopen

    def warnings(self, limit: int) -> list[str]:
        said = []
        if self.cut_parts:
            said.append(
                f"a block longer than a part of {limit:,} characters was cut inside "
                f"({_numbers(self.cut_parts)}): "
                "it may not render as one there"
            )
        if self.bare_parts:
            said.append(
                f"a table's header and row are longer than a part of {limit:,} characters: "
                f"its header is not repeated ({_numbers(self.bare_parts)})"
            )
        return said


def _numbers(numbers: list[int]) -> str:
    """ "part 3", "parts 3, 4 and 5", the first ten of many and how many more."""
    unique = sorted(set(numbers))
    if len(unique) == 1:
        return f"part {unique[0]}"
    shown = ", ".join(map(str, unique[: min(10, len(unique) - 1)]))
    last = f"{len(unique) - 10} more" if len(unique) > 11 else str(unique[-1])
    return f"parts {shown} and {last}"
