"""What the league server accepts of a request: a body of at most 1 MiB (413 beyond, whether
the client said its length or streams it), JSON of at most 64 levels that holds only text a
database can store (400 otherwise, with a message saying which), command-line arguments that
are UTF-8 text.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Largest request body read: actions and command lines are a few hundred bytes.
MAX_BODY = 1024 * 1024
# Deepest JSON a request may hold: an action's inputs are two or three levels deep.
MAX_DEPTH = 64
# How much of a body too large is still read (and dropped) before the 413: a client that sends
# its whole body before reading the answer (most do) then gets the 413 instead of a connection
# reset. A body larger still is cut off.
MAX_DRAINED = 8 * MAX_BODY


class TooLarge(Exception):
    """A request body over MAX_BODY bytes (HTTP 413)."""

    def __init__(self) -> None:
        super().__init__(f"request body over {MAX_BODY} bytes (1 MiB)")


class BadBody(Exception):
    """A request body that is not the JSON object asked for (HTTP 400)."""


def answers_json(path: str) -> bool:
    """Whether an error at this address is answered as JSON: the API's, and the probes'; every
    other address is a viewer page's, whose errors are pages too."""
    return path == "/api" or path.startswith("/api/") or path in ("/health", "/ready")


def too_large_response(path: str) -> Response:
    """The 413: the API's JSON error, or a viewer page's error page."""
    message = str(TooLarge())
    if answers_json(path):
        return JSONResponse({"error": message, "rule": None}, status_code=413)
    from tracker.server.viewer import error_page

    return error_page(413, message)


async def drain(receive: Receive, seen: int = 0) -> None:
    """Read what is left of a request body and drop it, up to MAX_DRAINED bytes in all."""
    more = True
    while more and seen <= MAX_DRAINED:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        more = bool(message.get("more_body", False))


class BodyLimit:
    """ASGI middleware: a request whose Content-Length is over MAX_BODY is answered 413 before
    the application sees it; a body streamed without a length (or longer than it said) raises
    TooLarge in whoever reads it, once MAX_BODY bytes have passed. Either way the rest of the
    body is read and dropped (up to MAX_DRAINED), so the client is there to get the 413."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            text = declared.decode("latin-1").strip()
            if not text.isdigit() or int(text) > MAX_BODY:
                await drain(receive)
                await too_large_response(scope.get("path", ""))(scope, receive, send)
                return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY:
                    if message.get("more_body", False):
                        await drain(receive, seen)
                    raise TooLarge()
            return message

        await self.app(scope, counted, send)


def parse_json_object(body: bytes, text_only: bool = True) -> dict[str, Any]:
    """The body as a JSON object ({} when empty); BadBody saying what is wrong otherwise.
    `text_only=False` lets strings that are not UTF-8 text through, for a caller that names
    the one at fault itself (a command line's argument)."""
    try:
        data = json.loads(body or b"{}", object_pairs_hook=_object, parse_constant=_no_constant)
    except RecursionError:
        raise BadBody(f"the request body nests JSON deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise BadBody(f"the request body is not JSON: {e}") from None
    check_json(data, text_only)
    if not isinstance(data, dict):
        raise BadBody("the request body must be a JSON object")
    return data


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose names are each given once: `{"action": "move", ..., "action": "next"}`
    was read as its last `action` without a word, the request meaning what no client sent."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise BadBody(f"the request body gives {ascii(key)[:60]} twice in one object")
        data[key] = value
    return data


def _no_constant(name: str) -> Any:
    """NaN and Infinity are no JSON (RFC 8259), though Python's reader takes them."""
    raise BadBody(f"the request body is not JSON: {name} is not a number JSON writes")


def check_json(data: Any, text_only: bool = True) -> None:
    """BadBody for JSON nested deeper than MAX_DEPTH, or holding a string that is not Unicode
    text (a lone surrogate, "\\udcff", which is what an argument that is not UTF-8 becomes;
    unless not `text_only`), or one holding a NUL character: walked without recursion, so no
    depth can exhaust the stack."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if text_only and not is_text(value):
                raise BadBody(f"the request body holds a string that is not UTF-8 text: {ascii(value)[:80]}")
            if "\x00" in value:
                # No input holds one (a command line cannot), and PostgreSQL stores none: a NUL
                # recorded in a reason or a dice reference left the campaign's log unreadable.
                raise BadBody(f"the request body holds a string with a NUL character: {ascii(value)[:80]}")
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise BadBody(f"the request body nests JSON deeper than {MAX_DEPTH} levels")
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        stack.extend((item, depth + 1) for item in items)


def is_text(value: str) -> bool:
    """Whether a string is Unicode text that encodes as UTF-8 (no lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
