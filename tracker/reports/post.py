"""Turn reports as forum posts: one document, `templates/report.post.j2`, rendered in the
markup of a dialect (Markdown in `tracker.reports.markdown`, BBCode in `tracker.reports.bbcode`),
so every post format tells the same story and a new section is written once.

The template says what a piece of text is (a heading, a list and its items, a quote, a table of
rows, bold, italic, struck or code text, players' text to escape); the dialect, registered in
the template's environment, says how its markup writes it:

- filters `escape` (text made safe for the markup, on one line), `bold`, `italic` and
  `struck` (of markup), and `code` (of the tracker's own text, a command or a hash), each
  returning `Marked` text, which a table cell keeps as it is;
- `heading(level, text)`, one line;
- call blocks, each returning whole lines: `item` (one item of a list), `quote` (one quoted
  line), `bullets` (a list, `nested=True` inside an item), and `table(header)`, whose body
  adds its rows with `row(cells, undone_by)` (or `table(header, rows)` for rows at hand).
  A table needs all its rows at once: a column's width in a fixed-width block depends on them.

A dialect whose posts can be cut into parts (`tracker report --split`) also reads its own markup
back, as `tracker.reports.split.Markup` says: its lines and constructs, where a line may be cut,
and how a part is numbered.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracker.reports.html import template_environment
from tracker.reports.text import (
    BATTLE_RULES,
    battle_declaration,
    battle_heading,
    battle_result,
    campaign_turns,
    dice_text,
    entries_line,
    fleet_rows,
    has_actions,
    move_text,
    neutral_line,
    numbered_span,
    override_notice,
    passed_over_turns,
    progress_rows,
    report_meta,
    research_result,
    roll_line,
    step_text,
    target_text,
    trade_rows,
    turn_title,
    undo_text,
    undone_listing,
)

if TYPE_CHECKING:
    import jinja2

TEMPLATE = "report.post.j2"


class Marked(str):
    """Text already in a dialect's markup (escaped players' text, or the template's own
    emphasis), with the same text stripped of its markup for places that take none."""

    plain: str

    def __new__(cls, markup: str, plain: str | None = None) -> Marked:
        made = super().__new__(cls, markup)
        made.plain = markup if plain is None else plain
        return made


def plain(text: object) -> str:
    """The text of `Marked` text without its markup."""
    return text.plain if isinstance(text, Marked) else str(text)


@dataclass(frozen=True)
class Row:
    """A row of a table: its cells (plain values, escaped by the dialect, or `Marked` text) and,
    for an event taken back, the undo that took it back."""

    cells: list[Any]
    undone_by: int | None = None


# A code block does not wrap: a cell longer than this (a nation's NTR zone by zone) goes on
# over the lines below its row, rather than widening every line of the table past the post.
CELL_WIDTH = 60


def fixed_width(header: list[Marked], rows: list[Row], text: Callable[[Any], str]) -> list[str]:
    """A table as the lines of a fixed-width block (a dialect without tables writes it in its
    code block): columns aligned, a line of dashes under the header, long cells wrapped after
    their commas (`CELL_WIDTH`), a row taken back saying which undo took it (in words: nothing
    is struck in a code block). `text` gives a cell's text as the block shows it."""
    table = [[plain(h) for h in header]]
    for row in rows:
        cells = [text(c) for c in row.cells]
        if row.undone_by:
            cells[-1] += f" (undone by event {row.undone_by})"
        table.extend(_wrapped(cells))
    widths = [max(len(r[i]) if i < len(r) else 0 for r in table) for i in range(max(map(len, table)))]
    lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


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


class Dialect(ABC):
    """A markup for the forum-post template: each construct the template names, written."""

    # ----- inline: filters, from markup (or plain text, for `escape`) to markup -----

    @abstractmethod
    def escape(self, text: object) -> Marked:
        """Players' or the tracker's text, safe in the markup and on one line."""

    @abstractmethod
    def bold(self, text: object) -> Marked: ...

    @abstractmethod
    def italic(self, text: object) -> Marked: ...

    @abstractmethod
    def struck(self, text: object) -> Marked: ...

    @abstractmethod
    def code(self, text: object) -> Marked:
        """The tracker's own text (a command, a hash) shown as typed."""

    # ----- lines and blocks: a heading is one line; the call blocks return whole lines -----

    @abstractmethod
    def heading(self, level: int, text: object) -> str: ...

    @abstractmethod
    def item(self, caller: Callable[[], str]) -> str: ...

    @abstractmethod
    def quote(self, caller: Callable[[], str]) -> str: ...

    @abstractmethod
    def bullets(self, caller: Callable[[], str], nested: bool = False) -> str: ...

    @abstractmethod
    def layout(self, header: list[Marked], rows: list[Row]) -> str:
        """The lines of a table: `header` escaped, then its rows in order."""

    def cell(self, value: object) -> Marked:
        """A table cell: `Marked` text as it is, anything else escaped."""
        return value if isinstance(value, Marked) else self.escape(value)

    def table(
        self,
        header: Iterable[object],
        rows: Iterable[Iterable[Any]] | None = None,
        caller: Callable[[Callable[..., str]], str] | None = None,
    ) -> str:
        collected = [Row(list(cells)) for cells in rows or []]
        if caller is not None:

            def row(cells: Iterable[Any], undone_by: int | None = None) -> str:
                collected.append(Row(list(cells), undone_by))
                return ""

            # The body only adds rows; its own text is the whitespace between them.
            caller(row)
        return self.layout([self.cell(h) for h in header], collected)

    def register(self, env: jinja2.Environment) -> None:
        """Make this markup the one of `env`'s templates."""
        env.filters.update(escape=self.escape, bold=self.bold, italic=self.italic, struck=self.struck, code=self.code)
        env.globals.update(
            heading=self.heading, item=self.item, quote=self.quote, bullets=self.bullets, table=self.table
        )


def luck_tables(report: dict[str, Any]) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """The rows of the luck table (nation and turn, then expected / actual per metric), leaving
    out the rows with nothing expected and nothing happened and the total of a nation with one
    turn, and the battles of the report."""
    from tracker.analysis.luck import rows_for

    luck = report.get("luck")
    if not luck:
        return [], []
    # A nation's total over a single turn repeats that turn's row under a name that reads as the
    # whole campaign's: left out (a one-turn report has one row per nation).
    single = {n for n, data in luck["nations"].items() if len(data["turns"]) <= 1}
    rows = [
        r
        for r in rows_for(luck)
        if any(not c.startswith("0.00 / 0") for c in r[2:]) and not (r[1] == "total" and r[0] in single)
    ]
    return rows, luck.get("battles", [])


def render_post(report: dict[str, Any], dialect: Dialect) -> str:
    """The report (`tracker.reports.report.build_report`) as a forum post in `dialect`."""
    text = _post_environment(dialect).get_template(TEMPLATE).render(report=report)
    # One newline at the end, however the template's last section ends.
    return text.rstrip("\n") + "\n"


def stream_post(report: dict[str, Any], dialect: Dialect) -> Iterator[str]:
    """`render_post` as pieces of text, drawn as the template reaches them: a report whose
    `turns` are built while they are iterated is written out turn by turn, never held whole.
    The pieces joined are `render_post`'s text."""
    held = ""  # newlines at the end of what was drawn so far: dropped if nothing follows them
    for piece in _post_environment(dialect).get_template(TEMPLATE).generate(report=report):
        body = piece.rstrip("\n")
        if not body:
            held += piece
            continue
        yield held + body
        held = piece[len(body) :]
    yield "\n"


@functools.cache
def _post_environment(dialect: Dialect) -> jinja2.Environment:
    """The post template's environment in one dialect, made once a process (its template
    compiles the first time it is drawn)."""
    env = template_environment()
    dialect.register(env)
    env.globals.update(
        target_text=target_text,
        dice_text=dice_text,
        move_text=move_text,
        research_result=research_result,
        roll_line=roll_line,
        step_text=step_text,
        undo_text=undo_text,
        undone_listing=undone_listing,
        override_notice=override_notice,
        battle_heading=battle_heading,
        battle_declaration=battle_declaration,
        battle_rule=lambda b: BATTLE_RULES.get(b["kind"], "CV1"),
        battle_result=battle_result,
        fleet_rows=fleet_rows,
        trade_rows=trade_rows,
        progress_rows=progress_rows,
        passed_over_turns=passed_over_turns,
        neutral_line=neutral_line,
        entries_line=entries_line,
        turn_title=turn_title,
        campaign_turns=campaign_turns,
        numbered_span=numbered_span,
        has_actions=has_actions,
        report_meta=lambda r: report_meta(r, dialect.escape),
        luck_tables=luck_tables,
    )
    return env
