"""The event store's rows: stored events and notifications made from the driver's rows without
their dataclass `__init__`, campaign ids converted once, and the statements the recorders write
and check with (see `tracker.storage.recorder`)."""

from __future__ import annotations

import json
import zlib
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent
from sqlalchemy import Select, Table, bindparam, insert, null, select
from sqlalchemy.sql.dml import ReturningInsert

from projections.schema import tracking

T = TypeVar("T")

_UUIDS: dict[Any, UUID] = {}


def made(cls: type[T], **fields: Any) -> T:
    """A frozen dataclass record of fields already of their types, without its `__init__`
    (one `object.__setattr__` per field: as much as reading the row, for whole-log reads)."""
    record = object.__new__(cls)
    object.__setattr__(record, "__dict__", fields)
    return record


def state_bytes(state: Any) -> bytes:
    """A stored state as bytes, however the row holds it: a row edited by hand may hold it as
    text (the sqlite3 shell's `replace()` makes one), read as its UTF-8 bytes, so that the hash
    chain finds the edit and names the event, where `bytes(text)` raised a TypeError."""
    if state.__class__ is bytes:
        return state
    return state.encode("utf-8", "surrogateescape") if isinstance(state, str) else bytes(state)


def stored_event(oid: UUID, version: int, topic: str, state: Any) -> StoredEvent:
    """A `made` stored event of a row already known to be campaign `oid`'s."""
    return made(
        StoredEvent,
        originator_id=oid,
        originator_version=version,
        topic=topic,
        state=state if state.__class__ is bytes else state_bytes(state),
    )


def notifications_of(rows: list[Any]) -> list[Notification]:
    """`made` notifications of the sqlite3 driver's rows, in one loop: whole-log reads make one
    per event. Consecutive rows of one campaign share its UUID object."""
    new = object.__new__
    set_dict = object.__setattr__
    out: list[Notification] = []
    append = out.append
    last_raw: Any = None
    last_id: Any = None
    for nid, raw_id, version, topic, state in rows:
        if raw_id != last_raw:
            last_raw, last_id = raw_id, campaign_uuid(raw_id)
        if state.__class__ is not bytes:
            state = state_bytes(state)  # a row edited by hand: what `made` of other reads makes of it
        record = new(Notification)
        fields = {"id": nid, "originator_id": last_id, "originator_version": version, "topic": topic, "state": state}
        set_dict(record, "__dict__", fields)
        append(record)
    return out


def campaign_uuid(value: Any) -> UUID:
    """A stored campaign id as a UUID (a handful of campaigns: each converted once)."""
    found = _UUIDS.get(value)
    if found is None:
        if isinstance(value, UUID):
            return value
        found = UUID(bytes=bytes(value)) if isinstance(value, bytes | memoryview) else UUID(str(value))
        if len(_UUIDS) < 10_000:
            _UUIDS[value] = found
    return found


# A stored state compressed (zlib) after this marker: every snapshot (`CampaignMapper`), and
# any state written over `COMPRESS_OVER` bytes (`kept`): a campaign's first event, which records
# its scenario and ruleset (31 KB of JSON on the great-war-1914 board, 5 KB compressed), and an
# undo's, which records the state it restores. A JSON state starts with "{", so a state without
# the marker (every other event, and every state stored before) is read as it is.
COMPRESSED = b"zlib:"
COMPRESS_OVER = 4096


def kept(state: bytes) -> bytes:
    """A state as the database keeps it: compressed when it is JSON over `COMPRESS_OVER` bytes."""
    if len(state) <= COMPRESS_OVER or not state.startswith(b"{"):
        return state
    return COMPRESSED + zlib.compress(state)


def plain_state(state: bytes) -> bytes:
    """A stored state's JSON, compressed (`COMPRESSED`) or not; a state that only begins like a
    compressed one (a cipher's) as it is."""
    if not state.startswith(COMPRESSED):
        return state
    try:
        return zlib.decompress(state[len(COMPRESSED) :])
    except zlib.error:
        return state


# How the JSON transcoder writes every event's first field, its timestamp; the event's hashes
# follow it (the aggregate sets them first, `Campaign._record`).
STAMPED = b'{"timestamp":{"_type_":"datetime_iso","_data_":"'
_PREV_HASH = b'"},"prev_hash":"'
_HASH = b'","hash":"'


def recorded_hash(state: bytes) -> str | None:
    """The hash an event's stored state records: read where the tracker writes it, right after
    the timestamp and the previous hash, without decoding the state (the write check of every
    action asks it); any other layout (compressed, written otherwise, edited) decoded."""
    if state.startswith(STAMPED):
        # The time holds no quote: the first one after it closes it.
        at = state.find(b'"', len(STAMPED))
        if state.startswith(_PREV_HASH, at):
            at += len(_PREV_HASH) + 64
            if state.startswith(_HASH, at) and state[at + len(_HASH) + 64 : at + len(_HASH) + 65] == b'"':
                found = state[at + len(_HASH) : at + len(_HASH) + 64]
                if b'"' not in found and b"\\" not in found:
                    return found.decode("ascii", "replace")
    try:
        stored = json.loads(plain_state(state))
    except ValueError:
        return None
    value = stored.get("hash") if isinstance(stored, dict) else None
    return value if isinstance(value, str) else None


def row_of(e: StoredEvent) -> dict[str, Any]:
    state = e.state
    return {
        "originator_id": e.originator_id,
        "originator_version": e.originator_version,
        "topic": e.topic,
        "state": kept(state) if len(state) > COMPRESS_OVER else state,
    }


def driver_row(e: StoredEvent) -> tuple[Any, ...]:
    # The sqlite3 driver binds bytes only after looking for an adapter (and making and dropping
    # an AttributeError on the way), which costs more than the insert of the value; a bytearray
    # it binds straight away, as the same BLOB.
    oid = e.originator_id
    oid_bytes = oid.bytes if type(oid) is UUID else uuid_bytes(oid)
    state = e.state
    if len(state) > COMPRESS_OVER:
        state = kept(state)
    return (bytearray(oid_bytes), e.originator_version, e.topic, bytearray(state))


# Rows per INSERT statement on SQLite: an action's events go in one statement (one step of
# the statement for all its rows), a long import in statements of this many rows, far below
# SQLite's limit of bound values; each count's statement is prepared once per connection
# (sqlite3 keeps prepared statements by their text).
_ROWS_PER_INSERT = 50
_INSERT_SQL: dict[tuple[str, int], str] = {}


def _insert_sql(table: str, rows: int) -> str:
    found = _INSERT_SQL.get((table, rows))
    if found is None:
        values = ", ".join(["(?, ?, ?, ?)"] * rows)
        found = f"INSERT INTO {table} (originator_id, originator_version, topic, state) VALUES {values}"
        _INSERT_SQL[(table, rows)] = found
    return found


def insert_rows(cur: Any, table: str, rows: list[tuple[Any, ...]]) -> int:
    """Insert event rows with multi-row statements; the id of the last row inserted."""
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        chunk = rows[start : start + _ROWS_PER_INSERT]
        cur.execute(_insert_sql(table, len(chunk)), [value for row in chunk for value in row])
    return int(cur.lastrowid)


def last_version_sql(table: str) -> str:
    return f"SELECT max(originator_version) FROM {table} WHERE originator_id = ?"


_CHECKS_SQL: dict[tuple[str, bool], str] = {}


def checks_sql(table: str, position: bool) -> str:
    """One query for both write checks: the stored state of the event an action follows (its
    campaign and version bound), and the projections' position (its name bound; NULL when the
    position is not checked)."""
    found = _CHECKS_SQL.get((table, position))
    if found is None:
        passed = f"(SELECT notification_id FROM {tracking.name} WHERE name = ?)" if position else "NULL"
        found = f"SELECT (SELECT state FROM {table} WHERE originator_id = ? AND originator_version = ?), {passed}"
        _CHECKS_SQL[(table, position)] = found
    return found


class WriteStatements:
    """A recorder's write statements as SQLAlchemy constructs, built once: the insert that
    returns the new ids, and the query of both write checks with and without the position."""

    def __init__(self, table: Table) -> None:
        self.insert: ReturningInsert[Any] = insert(table).returning(table.c.id, sort_by_parameter_order=True)
        follows_state = (
            select(table.c.state)
            .where(table.c.originator_id == bindparam("oid"), table.c.originator_version == bindparam("version"))
            .scalar_subquery()
        )
        passed = select(tracking.c.notification_id).where(tracking.c.name == bindparam("name")).scalar_subquery()
        self.checks: dict[bool, Select[Any]] = {
            True: select(follows_state, passed),
            False: select(follows_state, null()),
        }


def uuid_bytes(value: UUID | str) -> bytes:
    return value.bytes if isinstance(value, UUID) else UUID(str(value)).bytes
