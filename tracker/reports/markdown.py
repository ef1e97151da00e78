"""Turn reports in Markdown for forum posts: the Markdown dialect of the post template
(`tracker.reports.post`), with its escaping of players' text."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from tracker.reports.post import Dialect, Marked, Row, fixed_width, plain, render_post
from tracker.reports.split import CLOSE, HEADING, OPEN, TEXT, Construct, Cut, Line

# Characters that could start emphasis, code, links, strikethrough, a table cell, (a "<"
# before a letter, "/", "!" or "?") raw HTML and autolinks, or (an "&" before a name or number
# and ";") a character reference: "&amp;" typed would be shown as "&".
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~]|<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;))")


def md(text: object) -> str:
    """Text safe inside Markdown (and a table cell): no markup, no HTML, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


class MarkdownDialect(Dialect):
    """Markdown as GitHub and Discourse read it: pipe tables, `~~` for struck text."""

    def escape(self, text: object) -> Marked:
        return text if isinstance(text, Marked) else Marked(md(text), " ".join(str(text).split()))

    def bold(self, text: object) -> Marked:
        return Marked(f"**{text}**", plain(text))

    def italic(self, text: object) -> Marked:
        return Marked(f"*{text}*", plain(text))

    def struck(self, text: object) -> Marked:
        return Marked(f"~~{text}~~", plain(text))

    def code(self, text: object) -> Marked:
        return Marked(f"`{text}`", plain(text))

    def heading(self, level: int, text: object) -> str:
        return f"{'#' * level} {text}"

    def item(self, caller: Callable[[], str]) -> str:
        return f"- {caller()}\n"

    def quote(self, caller: Callable[[], str]) -> str:
        return f"> {caller()}\n"

    def bullets(self, caller: Callable[[], str], nested: bool = False) -> str:
        body = caller()
        if not nested:
            return body
        # A list inside an item: its items indented under the item's text.
        return "".join(f"  {line}" if line.strip() else line for line in body.splitlines(keepends=True))

    def layout(self, header: list[Marked], rows: list[Row]) -> str:
        lines = [f"| {' | '.join(header)} |", "|" + "|".join("---" for _ in header) + "|"]
        for row in rows:
            cells = [self.cell(c) for c in row.cells]
            if row.undone_by:
                # Every non-empty cell struck; the last one says which undo took the row back.
                cells = [self.struck(c) if c else c for c in cells]
                cells[-1] = Marked(f"{cells[-1]} {self.italic(f'(undone by event {row.undone_by})')}")
            lines.append("|" + "".join(f" {c} |" for c in cells))
        return "\n".join(lines) + "\n"

    # ----- cutting a post into parts (`tracker.reports.split`) -----

    def lines(self, text: str) -> list[Line]:
        """The post's lines: a code fence and a pipe table (its header and delimiter row
        opening it, as a part cut inside it opens it again) are constructs; lists and quotes
        are lines of their own, whole where cut between them."""
        raw = text.splitlines(keepends=True)
        out: list[Line] = []
        fence: tuple[Construct, str] | None = None  # the open fence and its marker
        table: Construct | None = None
        k = 0
        while k < len(raw):
            line = raw[k]
            if fence is not None:
                construct, marker = fence
                closing = re.fullmatch(rf" {{0,3}}{marker[0]}{{{len(marker)},}}\s*", line)
                out.append(Line(line, (construct,), CLOSE if closing else TEXT))
                fence = None if closing else fence
                k += 1
                continue
            if table is not None:
                if line.lstrip(" ").startswith("|"):
                    out.append(Line(line, (table,)))
                    k += 1
                    continue
                table = None  # a table ends at the first line that is no row
            opened = _FENCE.match(line)
            if opened:
                marker = opened.group(1)
                fence = (Construct(_line(line), marker + "\n", _line(line), literal=True), marker)
                out.append(Line(line, (), OPEN))
            elif line.lstrip(" ").startswith("|") and k + 1 < len(raw) and _DELIMITER_ROW.fullmatch(raw[k + 1] or ""):
                header = _line(line) + _line(raw[k + 1])
                columns = raw[k + 1].strip().strip("|").count("|") + 1
                # A header of blank cells, when the header and a row are longer than a part:
                # the rows stay a table.
                bare = "|" + " |" * columns + "\n|" + "-|" * columns + "\n"
                table = Construct(header, "", bare)
                out.extend([Line(line, (), OPEN), Line(raw[k + 1], (table,), OPEN)])
                k += 1
            else:
                out.append(Line(line, (), HEADING if _HEADING.match(line) else TEXT))
            k += 1
        return out

    def cuts(self, text: str, literal: bool) -> Iterator[Cut]:
        """Where a line may be cut: between characters, never in an escape or a `**`/`~~`
        marker; emphasis, struck text and code open there are closed and opened again, and the
        rest of a table's row starts with a pipe."""
        if literal:
            yield from (Cut(at) for at in range(1, len(text)))
            return
        # The rest of a table's row is a row of the table as well, with a pipe in front.
        row = "| " if text.startswith("|") else ""
        open_, at = list[str](), 0
        while at < len(text):
            if open_ and open_[-1] == "`":
                marker = "`" if text[at] == "`" else ""
            elif text[at] == "\\":
                marker = text[at : at + 2]
                at += len(marker)
                yield Cut(at, "".join(reversed(open_)), row + "".join(open_))
                continue
            else:
                marker = next((m for m in ("**", "~~", "*", "`") if text.startswith(m, at)), "")
            if marker:
                if marker in open_:
                    del open_[len(open_) - 1 - open_[::-1].index(marker) :]
                else:
                    open_.append(marker)
            at += len(marker) or 1
            yield Cut(at, "".join(reversed(open_)), row + "".join(open_))

    def part_label(self, number: int, total: int) -> str:
        return f"**({number}/{total})**\n\n"


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
# A table's delimiter row, with a pipe at least (a line of dashes alone is a rule).
_DELIMITER_ROW = re.compile(r" {0,3}(\|\s*:?-+:?\s*)+\|?\s*|\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*")
_HEADING = re.compile(r" {0,3}#{1,6}(\s|$)")


def _line(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


class DiscordDialect(MarkdownDialect):
    """Markdown as Discord reads it: the same, but Discord draws no pipe table, so a table is a
    fixed-width code block (as BBCode's), which a Discord message shows aligned."""

    def escape(self, text: object) -> Marked:
        if isinstance(text, Marked):
            return text
        escaped = MarkdownDialect.escape(self, text)
        # Pasted, a message pings whom its @everyone, @here, <@id> or <@&id> names; a zero-width
        # space after each "@" keeps what a player typed from pinging anyone (no mention is
        # read inside a code block, so a table's cells keep theirs).
        return Marked(escaped.replace("@", "@\u200b"), escaped.plain)

    def layout(self, header: list[Marked], rows: list[Row]) -> str:
        # Nothing is markup inside the block but a fence: a run of backticks a player typed is
        # broken up so that it cannot close the block.
        lines = fixed_width(header, rows, lambda c: plain(self.cell(c)).replace("`", "\u02cb"))
        return "\n".join(["```", *lines, "```"]) + "\n"


MARKDOWN = MarkdownDialect()
DISCORD = DiscordDialect()


def render_markdown(report: dict[str, Any]) -> str:
    """The report (`tracker.reports.report.build_report`) in Markdown."""
    return render_post(report, MARKDOWN)


def render_discord(report: dict[str, Any]) -> str:
    """The report in Markdown for Discord (tables as code blocks)."""
    return render_post(report, DISCORD)
