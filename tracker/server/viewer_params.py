"""The viewer's reading of a page's URL: the parameters each page takes (`PAGE_QUERIES`), and
the numbers, phase and texts of its query, each refused with a 400 page (`PageError`) saying
why, never a 500."""

from __future__ import annotations

from starlette.requests import Request

from domain.ruleset import KNOWN_PHASES

MAX_INT = 2**31 - 1

# The query parameters of each page, the one list of them: what its links, forms and scripts
# send (the board's map keeps its zoom in the browser, not in the URL). Any other is a 400
# naming it (`known_query`): `board?trun=2` showed the board now without a word, not turn 2.
PAGE_QUERIES: dict[str, tuple[str, ...]] = {
    "home": (),
    "campaign": (),  # sends the browser on to the board
    "board": ("turn", "phase", "at"),
    "log": ("turn", "phase", "nation", "zone", "kind", "battle", "order", "before", "after"),
    "battles": (),
    "battle": (),
    "event": (),
    "charts": (),
    "zone": (),
}
# Every page also takes a sign-in link's token (`tracker.server.access.sign_in`).
SIGN_IN = "token"


class PageError(Exception):
    """A request the viewer answers with an error page: 400 (bad input) or 404 (no such thing)."""

    def __init__(self, status: int, message: str, link: tuple[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        # (href, text): where the reader goes instead, beside the page's usual links.
        self.link = link


def known_query(request: Request, page: str) -> None:
    """400 for a query parameter `page` does not take (`PAGE_QUERIES`), or one given more than
    once (`?turn=2&turn=3`: which one was meant is not for the viewer to guess), as the API."""
    takes = PAGE_QUERIES[page]
    given = [key for key, _ in request.query_params.multi_items()]
    unknown = next((key for key in given if key not in (*takes, SIGN_IN)), None)
    if unknown is not None:
        listed = f"{', '.join(takes)}, and {SIGN_IN}" if takes else f"only {SIGN_IN},"
        raise PageError(400, f"unknown query parameter {unknown[:40]!r} (this page takes {listed} to sign in)")
    twice = next((key for key in given if given.count(key) > 1), None)
    if twice is not None:
        raise PageError(400, f"query parameter {twice[:40]!r} is given more than once")


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
