"""Who a request to the league server comes from: the token in its `Authorization: Bearer`
header, or in the viewer's cookie, checked against the players table; failed checks counted
per client address and refused for a while once there are too many (429 with Retry-After).

The viewer takes a token once: a link carrying it (`/?token=...`, or any page's URL with
`?token=...`) sets an HttpOnly, SameSite=Strict cookie and sends the browser to the same URL
without it, so the token stays neither in the address bar, the history nor the server's log
(whose access lines hide any token they would print, see `HideTokens`). Cookies only ever
authorize reads: whatever records needs the header.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from tracker.service.players import Player

T = TypeVar("T")

COOKIE = "tracker_token"
# How long a browser keeps the token: a season of play; the link sets it again.
COOKIE_DAYS = 30
# Failed token checks allowed per client address within WINDOW seconds; then 429 until the
# oldest of them is WINDOW seconds old. A token is 256 random bits, so this is not what stops
# guessing: it keeps one address from making the server check tokens without end.
FAILURES = 20
WINDOW = 60.0
# Addresses remembered at most (the least recently failed are forgotten first).
ADDRESSES = 10_000


class Denied(Exception):
    """A request refused for its token: 401 (unknown, revoked or malformed) or 429 (too many
    failures from its address, with the seconds to wait)."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}


class FailedChecks:
    """Failed token checks per client address, in memory, bounded: at most `limit` remembered
    per address (the times of the last ones) and `addresses` addresses."""

    def __init__(
        self, limit: int = FAILURES, window: float = WINDOW, addresses: int = ADDRESSES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self.limit = limit
        self.window = window
        self.addresses = addresses
        self.clock = clock
        self._failed: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def retry_after(self, address: str) -> int | None:
        """Whole seconds until `address` may have a token checked again; None: it may now."""
        with self._lock:
            times = self._failed.get(address)
            if times is None:
                return None
            now = self.clock()
            while times and now - times[0] >= self.window:
                times.popleft()
            if not times:
                del self._failed[address]
                return None
            if len(times) < self.limit:
                return None
            return max(1, math.ceil(self.window - (now - times[0])))

    def failed(self, address: str) -> None:
        with self._lock:
            times = self._failed.pop(address, None) or deque(maxlen=self.limit)
            times.append(self.clock())
            self._failed[address] = times
            while len(self._failed) > self.addresses:
                self._failed.popitem(last=False)

    def __len__(self) -> int:
        return len(self._failed)


def client_address(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def bearer(request: Request) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header; None without the header; Denied
    (401) for another kind of header."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Denied(401, "Authorization must be: Bearer TOKEN")
    return token.strip()


class Gate:
    """Checks the tokens requests carry (`check`: the players table's lookup, run in a worker
    thread) and counts the failures per address."""

    def __init__(self, check: Callable[[str], Player | None], failures: FailedChecks | None = None) -> None:
        self.check = check
        self.failures = failures if failures is not None else FailedChecks()

    async def verify(self, request: Request, token: str) -> Player:
        """The player holding `token`; Denied (401, or 429 while the address waits) otherwise."""
        return await self.run_as(request, token, lambda player: player)

    async def run_as(self, request: Request, token: str, work: Callable[[Player], T]) -> T:
        """`work(player)` for the player holding `token`, in a worker thread that checks the
        token first: one hop to a thread for both, where a hop costs about as much as a short
        action. Denied as `verify` (nothing of `work` runs for a token refused)."""
        address = client_address(request)
        wait = self.failures.retry_after(address)
        if wait is not None:
            raise Denied(429, f"too many failed token checks from this address: try again in {wait} s", wait)

        held: list[Player] = []
        done: list[T] = []

        def checked() -> None:
            player = self.check(token)
            if player is not None:
                held.append(player)
                done.append(work(player))

        try:
            await anyio.to_thread.run_sync(checked)
        finally:
            # Also when `work` raised: a refused action is still the player's request.
            if held:
                self.let_through(request, held[0])
        if not held:
            self.failures.failed(address)
            raise Denied(401, "the token is unknown or revoked")
        return done[0]

    def let_through(self, request: Request, player: Player) -> None:
        """Called for each request whose token was checked and held by `player`."""

    def token(self, request: Request, cookie: bool = True) -> str | None:
        """The token the request carries, unchecked: the Authorization header's, else (when
        `cookie`: a read) the viewer's cookie; None for neither. Denied (401) for a header of
        another kind, counted as a failed check."""
        try:
            token = bearer(request)
        except Denied:
            self.failures.failed(client_address(request))
            raise
        if token is None and cookie:
            token = request.cookies.get(COOKIE) or None
        return token

    async def player(self, request: Request, cookie: bool = True) -> Player | None:
        """Who the request comes from: the Authorization header's token, else (when `cookie`:
        a read) the viewer's cookie; None for a request with neither."""
        token = self.token(request, cookie)
        return None if token is None else await self.verify(request, token)


def without_token(request: Request) -> str:
    """The URL the request asked for, as a path on this server, without its `token` parameter."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    path = raw.split(b"?", 1)[0].decode("latin-1")
    # "//host/..." would send the browser to another site.
    path = "/" + path.lstrip("/")
    kept = [(k, v) for k, v in parse_qsl(request.url.query, keep_blank_values=True) if k != "token"]
    return path + (f"?{urlencode(kept)}" if kept else "")


async def sign_in(gate: Gate, request: Request) -> Response:
    """A link carrying `?token=`: the token checked, kept in an HttpOnly, SameSite=Strict
    cookie, and the browser sent on (303) to the same URL without it. Denied for a bad token."""
    token = request.query_params.get("token", "").strip()
    await gate.verify(request, token)
    response = RedirectResponse(without_token(request), status_code=303)
    response.set_cookie(
        COOKIE, token, max_age=COOKIE_DAYS * 86400, path="/",
        httponly=True, samesite="strict", secure=request.url.scheme == "https",
    )  # fmt: skip
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def forget_cookie(response: Response) -> Response:
    """A response that also drops the viewer's cookie (a token revoked since it was set)."""
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response


# A token anywhere in a logged line, and a `token=` parameter of a URL.
_TOKENS = re.compile(r"trk_[0-9A-Za-z]{1,64}_[0-9A-Za-z_\-]+|(?<=[?&]token=)[^&\s\"]*")


def hide_tokens(text: str) -> str:
    return _TOKENS.sub("[hidden]", text)


class HideTokens(logging.Filter):
    """A logging filter for the server's access log: a URL's `token=` value and anything that
    looks like a token are printed as [hidden]."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(hide_tokens(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = hide_tokens(record.msg)
        return True
