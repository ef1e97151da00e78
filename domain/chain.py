"""The hash chain that makes the event log tamper-evident: each event hashes its predecessor."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

GENESIS = "0" * 64

# Attributes that are not part of an event's recorded content, or are hashed separately.
_NOT_CONTENT = {"originator_id", "originator_version", "timestamp", "prev_hash", "hash", "originator_topic"}

# An upcaster (a schema change, version 1 to 2) names here the fields it added with their
# defaults: they were never recorded, so the event's hash does not cover them.
UPCAST_ADDED = "upcast_added"


def _plain(value: Any) -> Any:
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


def event_hash(prev_hash: str, kind: str, version: int, timestamp: datetime, content: dict[str, Any]) -> str:
    """SHA-256 over the previous hash and the event's kind, position, time and content."""
    canonical = json.dumps(
        {
            "prev": prev_hash,
            "kind": kind,
            "version": version,
            "timestamp": timestamp.isoformat(),
            "content": _plain(content),
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()
