"""How a campaign's events are stored: the tracker's mapper, which writes the bytes eventsourcing's
own mapper writes and reads the usual event without a Python call per JSON object."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Mapper, MapperDeserialisationError, StoredEvent
from eventsourcing.utils import TopicError, get_topic, resolve_topic

from domain.errors import TrackerError
from tracker.storage.rows import COMPRESSED, STAMPED, made, plain_state

_scan_json: Any = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
# Looked up once, not on every event decoded.
_new = object.__new__
_set = object.__setattr__
_from_iso = datetime.fromisoformat


class DamagedLogError(TrackerError):
    """The stored log or its views were damaged outside the tracker (exit 1, like a failed verify)."""


class UnreadableEventError(DamagedLogError, MapperDeserialisationError):
    """A stored event the mapper cannot decode: damaged (a TrackerError, told in one line) and
    still the library's own error, for code that catches that."""


class TrackerMapper(Mapper[UUID]):
    """eventsourcing's mapper, reading the usual stored event without a Python call per JSON
    object: a state whose only typed value is its leading timestamp is decoded by the C
    parser alone and the timestamp converted after. Anything else (another typed value, a
    \\u escape that could spell one, an older class version, a cipher or compressor) takes
    eventsourcing's own path, so every state decodes to what that path gives. Writing gives
    the bytes eventsourcing's own path gives, with the timestamp converted before encoding."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._classes: dict[str, tuple[Any, int]] = {}
        self._plain = self.cipher is None and self.compressor is None
        # Writing: the library's JSON encoder itself, given the timestamp already in the form
        # its datetime transcoding gives it (one Python call fewer per event, same bytes).
        transcoder: Any = self.transcoder
        stamps = getattr(transcoder, "types", {}).get(datetime)
        self._encode: Any = transcoder.encoder.encode if getattr(stamps, "name", None) == "datetime_iso" else None
        self._topics: dict[type, tuple[str, int]] = {}

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        encode = self._encode
        if encode is None or not self._plain:
            return super().to_stored_event(domain_event)
        cls = type(domain_event)
        found = self._topics.get(cls)
        if found is None:
            found = self._topics[cls] = (get_topic(cls), getattr(cls, "class_version", 1))
        event_state = dict(domain_event.__dict__)
        originator_id = event_state.pop("originator_id")
        originator_version = event_state.pop("originator_version")
        if found[1] > 1:
            event_state["class_version"] = found[1]
        stamp = event_state.get("timestamp")
        if type(stamp) is datetime:
            event_state["timestamp"] = {"_type_": "datetime_iso", "_data_": stamp.isoformat()}
        return made(
            StoredEvent,
            originator_id=originator_id,
            originator_version=originator_version,
            topic=found[0],
            state=encode(event_state).encode("utf8"),
        )

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        state = stored_event.state
        if (
            self._plain
            and type(stored_event.originator_id) is UUID
            and state.startswith(STAMPED)
            and state.count(b'"_type_"') == 1
            # A lone byte is found by memchr; the escape itself only looked for where there is one.
            # `find`, not `in`: bytes' `in` tries its operand as an integer first, and raises and
            # clears a TypeError on every event (half the check's time).
            and (state.find(b"\\") < 0 or state.find(b"\\u") < 0)
        ):
            try:
                text = state.decode("utf-8")
                # The C scanner itself: what json.loads runs, without its Python frames.
                event_state, end = _scan_json(text, 0)
                stamp = event_state["timestamp"]
                if end == len(text) and len(stamp) == 2 and "class_version" not in event_state:
                    found = self._classes.get(stored_event.topic) or self._class_of(stored_event.topic)
                    if found[1] == 1:
                        event_state["timestamp"] = _from_iso(stamp["_data_"])
                        event_state["originator_id"] = stored_event.originator_id
                        event_state["originator_version"] = stored_event.originator_version
                        domain_event = _new(found[0])
                        _set(domain_event, "__dict__", event_state)
                        return domain_event
            except (ValueError, TypeError, KeyError, StopIteration, TopicError):
                # eventsourcing's path below raises its own error (an unknown topic, a row
                # edited by hand, is said as an unreadable event), or decodes it its way.
                pass
        if state.startswith(COMPRESSED):
            plain = uncompressed(stored_event)
            if plain is not stored_event:
                return self.to_domain_event(plain)
        try:
            return super().to_domain_event(stored_event)
        except Exception as e:  # noqa: BLE001 - whatever the library raises, the row is unreadable
            # Said as `verify` says it, for every command that meets the row (explain, report,
            # export): one line naming the event, not the library's error.
            raise UnreadableEventError(
                f"event {stored_event.originator_version} cannot be read ({type(e).__name__}): "
                "the stored row was edited; run `tracker verify`"
            ) from e

    def _class_of(self, topic: str) -> tuple[Any, int]:
        cls = resolve_topic(topic)
        found = self._classes[topic] = (cls, getattr(cls, "class_version", 1))
        return found


def uncompressed(stored: StoredEvent) -> StoredEvent:
    """A stored state as JSON (`COMPRESSED`); anything else as it is."""
    state = plain_state(stored.state)
    if state is stored.state:
        return stored
    return made(
        StoredEvent,
        originator_id=stored.originator_id,
        originator_version=stored.originator_version,
        topic=stored.topic,
        state=state,
    )
