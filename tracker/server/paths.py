"""Campaign names in request paths: the `{name:campaign}` path parameter, and the middleware
that routes on the raw path so a name holding "/" or "%" stays one segment."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, unquote_to_bytes

from starlette.convertors import Convertor, register_url_convertor
from starlette.types import ASGIApp, Receive, Scope, Send


class CampaignName(Convertor[str]):
    """`{name:campaign}`: one path segment, percent-decoded here (a name may hold "/", "%", "?"
    or spaces: pages and clients send it quoted, as `quote(name, safe="")` does)."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return unquote(value)

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("campaign", CampaignName())

# An encoded "/" or "%" in a request's path, left encoded for routing.
_KEPT = re.compile(rb"(%2[fF]|%25)")


def routing_path(raw_path: bytes) -> str:
    """The path as sent, decoded except for %2F and %25: the server would otherwise see
    `north%2Fsea` as two segments, so a campaign named "north/sea" would match no route."""
    parts = _KEPT.split(raw_path.split(b"?", 1)[0])
    return "".join(
        part.upper().decode() if i % 2 else unquote_to_bytes(part).decode("utf-8", "replace")
        for i, part in enumerate(parts)
    )


class EncodedSlashes:
    """ASGI middleware routing on `routing_path` of the raw path (the decoded path is kept
    where the server gives no raw one)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] in ("http", "websocket") else None
        if raw:
            # Changed in place, not copied: the request log reads the route the router notes here.
            scope["path"] = routing_path(raw)
        await self.app(scope, receive, send)
