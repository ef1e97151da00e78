"""The viewer's reading of a page's URL: the numbers, phase and texts of its query, each
refused with a 400 page (`PageError`) saying why, never a 500."""

from __future__ import annotations

from starlette.requests import Request

from domain.ruleset import KNOWN_PHASES

MAX_INT = 2**31 - 1


class PageError(Exception):
    """A request the viewer answers with an error page: 400 (bad input) or 404 (no such thing)."""

    def __init__(self, status: int, message: str, link: tuple[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        # (href, text): where the reader goes instead, beside the page's usual links.
        self.link = link


def number(request: Request, key: str, text: str | None = None) -> int | None:
    """A positive whole number from the query (or `text`), None when absent; 400 otherwise."""
    value = request.query_params.get(key) if text is None else text
    if value is None or value.strip() == "":
        return None
    value = value.strip()
    # ASCII digits only: str.isdigit() also takes a superscript two, which int() refuses (a 500).
    if len(value) > 20 or not (value.isascii() and value.isdigit()):
        raise PageError(400, f"{key} must be a whole number from 1 to {MAX_INT}, got {value[:40]!r}")
    result = int(value)
    if not 1 <= result <= MAX_INT:
        raise PageError(400, f"{key} must be a whole number from 1 to {MAX_INT}, got {value[:40]}")
    return result


def phase_param(request: Request) -> str | None:
    typed = request.query_params.get("phase") or None
    # In any case, as the command line takes it.
    phase = typed.lower() if typed is not None else None
    if typed is not None and phase not in KNOWN_PHASES:
        raise PageError(400, f"unknown phase {typed[:40]!r} (phases: {', '.join(KNOWN_PHASES)})")
    return phase


def text_param(request: Request, key: str) -> str | None:
    value = request.query_params.get(key) or None
    if value is not None and len(value) > 200:
        raise PageError(400, f"{key} is too long ({len(value)} characters)")
    return value


def page_bounds(request: Request) -> tuple[int | None, int | None]:
    """The timeline's `before` and `after` event numbers (one page reads one way: not both)."""
    before, after = number(request, "before"), number(request, "after")
    if before is not None and after is not None:
        raise PageError(400, "give before or after, not both")
    return before, after
