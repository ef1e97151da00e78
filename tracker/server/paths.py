"""Campaign names in request paths: the `{name:campaign}` path parameter, and the middleware
that routes on the raw path so a name holding "/" or "%" stays one segment."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, unquote_to_bytes

from starlette.convertors import Convertor, register_url_convertor
from starlette.types import ASGIApp, Receive, Scope, Send

# Names that are a path's dot segments. A browser folds them away before it sends a URL
# ("/campaigns/../board" asks for "/board"), and their percent-encoded forms (%2E, %2E%2E) as
# well, so a page's link or script could never reach such a campaign. In a URL they carry a
# trailing space instead ("..%20"), which no campaign name has (names are stored trimmed, see
# `tracker.storage.store.check_campaign_name`), and which is taken off again here.
DOT_NAMES = (".", "..")


def name_segment(name: str) -> str:
    """A campaign's name as one segment of a URL path (`CampaignName` reads it back)."""
    quoted = quote(name, safe="")
    return quoted + "%20" if name in DOT_NAMES else quoted


class CampaignName(Convertor[str]):
    """`{name:campaign}`: one path segment, percent-decoded here (a name may hold "/", "%", "?"
    or spaces: pages and clients send it quoted, as `name_segment` does)."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        name = unquote(value)
        return name[:-1] if name.endswith(" ") and name[:-1] in DOT_NAMES else name

    def to_string(self, value: str) -> str:
        return name_segment(value)


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
