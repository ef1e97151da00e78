"""Turn reports in Markdown for forum posts: the Markdown dialect of the post template
(`tracker.reports.post`), with its escaping of players' text."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tracker.reports.post import Dialect, Marked, Row, plain, render_post

# Characters that could start emphasis, code, links, strikethrough, a table cell or (a "<"
# before a letter, "/", "!" or "?") raw HTML and autolinks.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~]|<(?=[A-Za-z/!?]))")


def md(text: object) -> str:
    """Text safe inside Markdown (and a table cell): no markup, no HTML, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


class MarkdownDialect(Dialect):
    """Markdown as GitHub, Discourse and Discord read it: pipe tables, `~~` for struck text."""

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


MARKDOWN = MarkdownDialect()


def render_markdown(report: dict[str, Any]) -> str:
    """The report (`tracker.reports.report.build_report`) in Markdown."""
    return render_post(report, MARKDOWN)
