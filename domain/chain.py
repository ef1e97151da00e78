"""The hash chain that makes the event log tamper-evident: each event hashes its predecessor."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any

GENESIS = "0" * 64

# Attributes that are not part of an event's recorded content, or are hashed separately.
_NOT_CONTENT = {"originator_id", "originator_version", "timestamp", "prev_hash", "hash", "originator_topic"}

# An upcaster (a schema change, version 1 to 2) names here the fields it added with their
# defaults: they were never recorded, so the event's hash does not cover them.
UPCAST_ADDED = "upcast_added"


# Values that are their own plain form: most of an event's fields, and of what they hold.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    # Exact types first: this runs for every value of every event recorded or checked.
    cls = type(value)
    if cls in _SCALARS:
        return value
    if cls is dict:
        return {k if type(k) is str else str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def event_content(attributes: dict[str, Any]) -> dict[str, Any]:
    added = set(attributes.get(UPCAST_ADDED, ())) | {UPCAST_ADDED}
    return {k: _plain(v) for k, v in attributes.items() if k not in _NOT_CONTENT and k not in added}


def recorded_fields(attributes: dict[str, Any]) -> dict[str, Any]:
    """An event's own fields as its class now declares them (upcast defaults included), without
    its position, time, hashes or action: what re-recording it takes (RK4)."""
    skip = _NOT_CONTENT | {UPCAST_ADDED, "action"}
    return {k: v for k, v in attributes.items() if k not in skip}


# Set while recorded actions are run again only to compare their events (see `unhashed`).
_UNHASHED: ContextVar[bool] = ContextVar("unhashed", default=False)
# One count for the whole process, not one per `unhashed` block: the referee keeps the state a
# step left by the last event's hash (`domain.campaign.referee`), so a placeholder must name one
# event only, in every campaign this process re-runs.
_PLACEHOLDERS = itertools.count(1)


@contextmanager
def unhashed() -> Iterator[None]:
    """Within it, `event_hash` gives a placeholder, distinct for every event this process
    records, instead of a hash: for re-running recorded actions whose events are compared with
    the log's without their hashes (`verify`'s referee), so that each stored event is hashed
    once, by the check of the chain (`chain_hash`). A placeholder never equals a hash (it is
    not hexadecimal)."""
    token = _UNHASHED.set(True)
    try:
        yield
    finally:
        _UNHASHED.reset(token)


def event_hash(prev_hash: str, kind: str, version: int, timestamp: datetime, content: dict[str, Any]) -> str:
    """The hash a new event records (`chain_hash`), or a placeholder within `unhashed`."""
    if _UNHASHED.get():
        return f"unhashed-{next(_PLACEHOLDERS)}"
    return chain_hash(prev_hash, kind, version, timestamp, content)


def chain_hash(prev_hash: str, kind: str, version: int, timestamp: datetime, content: dict[str, Any]) -> str:
    """SHA-256 over the previous hash and the event's kind, position, time and content, given
    in its plain form (`event_content`'s, or decoded JSON)."""
    canonical = json.dumps(
        {
            "prev": prev_hash,
            "kind": kind,
            "version": version,
            "timestamp": timestamp.isoformat(),
            "content": content,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()
