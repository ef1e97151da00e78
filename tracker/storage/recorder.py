"""The event store under the tracker: eventsourcing's recorders on the tables of
eventsourcing-sqlalchemy, read and written with SQLAlchemy Core statements (see
`tracker.storage.datastore`), and campaign snapshots without the recorded scenario and ruleset.

Writing an action checks, in the transaction that inserts its events, that the event it
follows is still the last one stored as this process saw it (a log cut below the campaign's
snapshot or working copy would otherwise leave a gap) and that the new rows do not reuse ids
the projections already passed (a cut tail on SQLite hands its ids out again). Either is
refused with a one-line error, and nothing is recorded.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.domain import Snapshot
from eventsourcing.persistence import (
    AggregateRecorder,
    ApplicationRecorder,
    InfrastructureFactory,
    IntegrityError,
    Mapper,
    Notification,
    OperationalError,
    PersistenceError,
    ProcessRecorder,
    StoredEvent,
    Subscription,
    TrackingRecorder,
)
from eventsourcing.utils import Environment, resolve_topic, strtobool
from sqlalchemy import Table, func, insert, select, type_coerce
from sqlalchemy.engine import Connection
from sqlalchemy.sql.sqltypes import NullType

from domain.errors import TrackerError
from projections.schema import NAME, tracking
from tracker.storage.datastore import Datastore, Transaction, create_tables, event_table, record_class

T = TypeVar("T")

# Recorded once by a campaign's first event and never changed: a snapshot leaves them out.
RECORDED_AT_CREATION = ("scenario_data", "ruleset_data")
_FROM_CREATION = "_from_created_event"


class LogDamaged(TrackerError):
    """The stored log is not what this action follows: events were deleted or rewritten."""


def connection_of(session: Any) -> Connection:
    """The Core connection of a transaction: the tracker's datastore hands one out, the
    library's an ORM session (the recorder contract's tests run on either)."""
    return session if isinstance(session, Connection) else session.connection()


class TrackerAggregateRecorder(AggregateRecorder):
    """eventsourcing's aggregate recorder (the tracker's snapshots) on the library's table
    layout, with Core statements."""

    def __init__(
        self,
        datastore: Datastore,
        *,
        events_table_name: str,
        schema_name: str | None = None,
        for_snapshots: bool = False,
    ) -> None:
        self.datastore = datastore
        self.events_table_name = events_table_name
        self.schema_name = schema_name
        self.table: Table = event_table(events_table_name, schema_name, for_snapshots)
        self.tables = [self.table]
        self._wal_tried = False

    @property
    def events_record_cls(self) -> Any:
        """An ORM class on the table, for code that edits rows as objects."""
        return record_class(self.table)

    def create_table(self) -> None:
        create_tables(self.datastore.engine, self.tables)

    def transaction(self, commit: bool = True) -> Transaction:
        return self.datastore.transaction(commit=commit)

    @property
    def _raw_id(self) -> Any:
        # The driver's value as it comes (16 bytes on SQLite, a UUID from psycopg): the column
        # type's own conversion costs more per row than the rest of reading it.
        return type_coerce(self.table.c.originator_id, NullType())

    def select_events(
        self,
        originator_id: UUID | str,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        table = self.table
        query = select(self._raw_id, table.c.originator_version, table.c.topic, table.c.state).where(
            table.c.originator_id == originator_id
        )
        if gt is not None:
            query = query.where(table.c.originator_version > gt)
        if lte is not None:
            query = query.where(table.c.originator_version <= lte)
        query = query.order_by(table.c.originator_version.desc() if desc else table.c.originator_version)
        if limit is not None:
            query = query.limit(limit)
        with self.transaction(commit=False) as session:
            rows = connection_of(session).execute(query).all()
        return [
            _made(StoredEvent, originator_id=_uuid(r[0]), originator_version=r[1], topic=r[2], state=bytes(r[3]))
            for r in rows
        ]

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        if stored_events:
            with self.transaction(commit=True) as session:
                connection_of(session).execute(insert(self.table), [_row(e) for e in stored_events])
        return None

    def _wal_mode(self) -> None:
        # Once, before the first write through the driver (the datastores switch a SQLite file
        # to WAL in their first transaction, which that write does without).
        if not self._wal_tried:
            self._wal_tried = True
            self.datastore.init_sqlite_wal_mode()

    def _lock_table(self, session: Any) -> None:
        # PostgreSQL hands out ids in insert order but commits in any: one writer at a time
        # keeps the notification ids in commit order, as the library does.
        if self.datastore.engine.dialect.name == "postgresql":
            name = self.events_table_name
            if self.schema_name is not None:
                name = f"{self.schema_name}.{name}"
            connection_of(session).exec_driver_sql(f"LOCK TABLE {name} IN EXCLUSIVE MODE")


class TrackerSnapshotRecorder(TrackerAggregateRecorder):
    """The snapshot recorder."""


class TrackerRecorder(TrackerAggregateRecorder, ApplicationRecorder):
    """The application recorder, with plain Core statements and the write checks above."""

    # Set by the tracker once the projection tables exist: only then are new ids checked
    # against the projections' position.
    check_projection_position = False

    def __init__(self, datastore: Datastore, *, events_table_name: str, schema_name: str | None = None) -> None:
        super().__init__(datastore, events_table_name=events_table_name, schema_name=schema_name)
        self.channel_name = events_table_name.replace(".", "_")

    def insert_events(
        self,
        stored_events: Sequence[StoredEvent],
        *,
        session: Any = None,
        follows: tuple[int, str] | None = None,
        **kwargs: Any,
    ) -> Sequence[int] | None:
        """Insert the events in one transaction (the caller's `session`, or a new one); with
        `follows=(version, hash)`, check that the campaign's stored event `version` has `hash`."""
        if session is not None:
            return self._write(session, stored_events, follows)
        if self.datastore.is_sqlite_filedb:
            return self._write_sqlite(stored_events, follows)
        with self.transaction(commit=True) as session:
            return self._write(session, stored_events, follows)

    def _write_sqlite(self, stored_events: Sequence[StoredEvent], follows: tuple[int, str] | None) -> list[int]:
        """`_write` on a SQLite file, as driver statements on a pooled connection: one insert and
        one query for both checks, in one transaction (SQLAlchemy's statement building and ORM
        session cost more than the writing itself). Same checks, same errors."""
        if not stored_events:
            return []
        datastore = self.datastore
        self._wal_mode()
        lock = datastore.write_lock
        if lock is not None:
            lock.acquire()
        try:
            raw = datastore.engine.raw_connection()
            try:
                try:
                    ids = self._write_driver(raw.cursor(), stored_events, follows)
                    raw.commit()
                except BaseException:
                    raw.rollback()
                    raise
            finally:
                raw.close()
        except sqlite3.IntegrityError as e:
            raise IntegrityError(e) from e
        except sqlite3.OperationalError as e:
            raise OperationalError(e) from e
        except sqlite3.Error as e:
            raise PersistenceError(e) from e
        finally:
            if lock is not None:
                lock.release()
        return ids

    def _write_driver(
        self, cur: Any, stored_events: Sequence[StoredEvent], follows: tuple[int, str] | None
    ) -> list[int]:
        name = self.events_table_name
        first = stored_events[0]
        oid = _uuid_bytes(first.originator_id)
        # The insert takes SQLite's write lock: the checks below read what no other writer can
        # change before this transaction ends.
        cur.executemany(
            f"INSERT INTO {name} (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)",
            [(_uuid_bytes(e.originator_id), e.originator_version, e.topic, e.state) for e in stored_events],
        )
        version = follows[0] if follows is not None and follows[0] >= 1 else 0
        passed_sql = "NULL"
        if self.check_projection_position:
            passed_sql = f"(SELECT notification_id FROM {tracking.name} WHERE name = ?)"
        params: list[Any] = [oid, first.originator_version, oid, version]
        if self.check_projection_position:
            params.append(NAME)
        # Rows inserted under one write lock take consecutive ids on SQLite.
        first_id, follows_state, passed = cur.execute(
            f"SELECT (SELECT id FROM {name} WHERE originator_id = ? AND originator_version = ?), "
            f"(SELECT state FROM {name} WHERE originator_id = ? AND originator_version = ?), {passed_sql}",
            params,
        ).fetchone()
        ids = list(range(int(first_id), int(first_id) + len(stored_events)))
        if version:
            assert follows is not None
            if follows_state is None:
                last = cur.execute(
                    f"SELECT max(originator_version) FROM {name} WHERE originator_id = ? AND originator_version < ?",
                    (oid, version),
                ).fetchone()[0]
                raise _log_ends(last, version)
            _check_hash(follows_state, version, follows[1])
        _check_position(ids, passed)
        return ids

    def _write(self, session: Any, stored_events: Sequence[StoredEvent], follows: tuple[int, str] | None) -> list[int]:
        if not stored_events:
            return []
        conn = connection_of(session)
        if conn.dialect.name == "sqlite":
            # The driver statements of `_write_sqlite`, in the caller's transaction.
            driver = conn.connection.driver_connection
            assert driver is not None
            try:
                return self._write_driver(driver.cursor(), stored_events, follows)
            except sqlite3.IntegrityError as e:
                raise IntegrityError(e) from e
            except sqlite3.OperationalError as e:
                raise OperationalError(e) from e
        table = self.table
        self._lock_table(session)
        # Insert first: on SQLite that takes the write lock, so the checks below read what no
        # other writer can change before this transaction ends.
        result = conn.execute(
            insert(table).returning(table.c.id, sort_by_parameter_order=True), [_row(e) for e in stored_events]
        )
        ids = [int(i) for i in result.scalars()]
        if follows is not None:
            self._check_follows(conn, stored_events[0].originator_id, *follows)
        passed = None
        if self.check_projection_position:
            passed = conn.execute(select(tracking.c.notification_id).where(tracking.c.name == NAME)).scalar()
        _check_position(ids, passed)
        if conn.dialect.name == "postgresql":
            # For any listener on the library's channel (eventsourcing's LISTEN/NOTIFY subscriptions).
            conn.exec_driver_sql(f"NOTIFY {self.channel_name}")
        return ids

    def _check_follows(self, conn: Any, originator_id: UUID | str, version: int, expected_hash: str) -> None:
        if version < 1:
            return
        table = self.table
        state = conn.execute(
            select(table.c.state).where(table.c.originator_id == originator_id, table.c.originator_version == version)
        ).scalar()
        if state is None:
            last = conn.execute(
                select(func.max(table.c.originator_version)).where(
                    table.c.originator_id == originator_id, table.c.originator_version < version
                )
            ).scalar()
            raise _log_ends(last, version)
        _check_hash(state, version, expected_hash)

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> list[Notification]:
        table = self.table
        query = select(table.c.id, self._raw_id, table.c.originator_version, table.c.topic, table.c.state)
        if start is not None:
            query = query.where(table.c.id >= start if inclusive_of_start else table.c.id > start)
        if stop is not None:
            query = query.where(table.c.id <= stop)
        if topics:
            query = query.where(table.c.topic.in_(topics))
        query = query.order_by(table.c.id).limit(limit)
        with self.transaction(commit=False) as session:
            conn = connection_of(session)
            if conn.dialect.name == "sqlite" and not topics:
                # Straight from the driver's cursor: the projections read the whole log in
                # pages of thousands, and result processing cost as much as the reading.
                where, params = ["1 = 1"], []
                if start is not None:
                    where.append("id >= ?" if inclusive_of_start else "id > ?")
                    params.append(start)
                if stop is not None:
                    where.append("id <= ?")
                    params.append(stop)
                driver = conn.connection.driver_connection
                assert driver is not None
                rows = driver.execute(
                    f"SELECT id, originator_id, originator_version, topic, state FROM {self.events_table_name} "
                    f"WHERE {' AND '.join(where)} ORDER BY id LIMIT ?",
                    (*params, limit),
                ).fetchall()
            else:
                rows = conn.execute(query).all()
        return [
            _made(
                Notification, id=r[0], originator_id=_uuid(r[1]), originator_version=r[2], topic=r[3], state=bytes(r[4])
            )
            for r in rows
        ]

    def max_notification_id(self) -> int | None:
        with self.transaction(commit=False) as session:
            value = connection_of(session).execute(select(func.max(self.table.c.id))).scalar()
        return None if value is None else int(value)

    def subscribe(self, gt: int | None = None, topics: Sequence[str] = ()) -> Subscription[ApplicationRecorder]:
        # Nothing in the tracker follows the log this way: its server and projections read
        # notifications by position.
        raise NotImplementedError("the tracker's event store has no subscriptions")

    def last_version(self, originator_id: UUID) -> int:
        table = self.table
        with self.transaction(commit=False) as session:
            value = (
                connection_of(session)
                .execute(select(func.max(table.c.originator_version)).where(table.c.originator_id == originator_id))
                .scalar()
            )
        return int(value or 0)


_UUIDS: dict[Any, UUID] = {}


def _made(cls: type[T], **fields: Any) -> T:
    """A frozen dataclass record of fields already of their types, without its `__init__`
    (one `object.__setattr__` per field: as much as reading the row, for whole-log reads)."""
    record = object.__new__(cls)
    object.__setattr__(record, "__dict__", fields)
    return record


def _uuid(value: Any) -> UUID:
    """A stored campaign id as a UUID (a handful of campaigns: each converted once)."""
    found = _UUIDS.get(value)
    if found is None:
        if isinstance(value, UUID):
            return value
        found = UUID(bytes=bytes(value)) if isinstance(value, bytes | memoryview) else UUID(str(value))
        if len(_UUIDS) < 10_000:
            _UUIDS[value] = found
    return found


def _row(e: StoredEvent) -> dict[str, Any]:
    return {
        "originator_id": e.originator_id,
        "originator_version": e.originator_version,
        "topic": e.topic,
        "state": e.state,
    }


def _uuid_bytes(value: UUID | str) -> bytes:
    return value.bytes if isinstance(value, UUID) else UUID(str(value)).bytes


def _log_ends(last: int | None, version: int) -> LogDamaged:
    return LogDamaged(
        f"this campaign's log ends at event {last or 0}, but its latest snapshot or working copy is at "
        f"event {version}: events were deleted; nothing was recorded (run `tracker verify`)"
    )


def _check_hash(state: Any, version: int, expected_hash: str) -> None:
    try:
        stored_hash = json.loads(bytes(state)).get("hash")
    except ValueError:
        stored_hash = None
    if stored_hash != expected_hash:
        raise StaleCopy(version)


def _check_position(ids: Sequence[int], passed: int | None) -> None:
    if passed is not None and ids and ids[0] <= passed:
        raise LogDamaged(
            f"the event log was cut: new events would take row {ids[0]}, which the projections already "
            f"passed (row {passed}); nothing was recorded. Run `tracker verify`, then `tracker projections "
            "rebuild` once the log is as it should be"
        )


class StaleCopy(Exception):
    """The stored event an action follows is not the one its working copy ended with."""

    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


# How the JSON transcoder writes every event's first field, its timestamp.
_STAMPED = b'{"timestamp":{"_type_":"datetime_iso","_data_":"'
_scan_json: Any = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class TrackerMapper(Mapper[UUID]):
    """eventsourcing's mapper, reading the usual stored event without a Python call per JSON
    object: a state whose only typed value is its leading timestamp is decoded by the C
    parser alone and the timestamp converted after. Anything else (another typed value, a
    \\u escape that could spell one, an older class version, a cipher or compressor) takes
    eventsourcing's own path, so every state decodes to what that path gives."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._classes: dict[str, tuple[Any, int]] = {}
        self._plain = self.cipher is None and self.compressor is None

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        state = stored_event.state
        if (
            self._plain
            and type(stored_event.originator_id) is UUID
            and state.startswith(_STAMPED)
            and state.count(b'"_type_"') == 1
            and b"\\u" not in state
        ):
            try:
                text = state.decode("utf-8")
                # The C scanner itself: what json.loads runs, without its Python frames.
                event_state, end = _scan_json(text, 0)
                stamp = event_state["timestamp"]
                if end == len(text) and len(stamp) == 2 and "class_version" not in event_state:
                    found = self._classes.get(stored_event.topic) or self._class_of(stored_event.topic)
                    if found[1] == 1:
                        event_state["timestamp"] = datetime.fromisoformat(stamp["_data_"])
                        event_state["originator_id"] = stored_event.originator_id
                        event_state["originator_version"] = stored_event.originator_version
                        domain_event = object.__new__(found[0])
                        object.__setattr__(domain_event, "__dict__", event_state)
                        return domain_event
            except (ValueError, TypeError, KeyError, StopIteration):
                pass  # eventsourcing's path below raises its own error, or decodes it its way
        return super().to_domain_event(stored_event)

    def _class_of(self, topic: str) -> tuple[Any, int]:
        cls = resolve_topic(topic)
        found = self._classes[topic] = (cls, getattr(cls, "class_version", 1))
        return found


class TrackerFactory(InfrastructureFactory[TrackingRecorder]):
    """eventsourcing's persistence for the tracker: the recorders above on one `Datastore`,
    configured as eventsourcing-sqlalchemy's factory is (SQLALCHEMY_URL, SQLALCHEMY_SCHEMA,
    CREATE_TABLE)."""

    SQLALCHEMY_URL = "SQLALCHEMY_URL"
    SQLALCHEMY_SCHEMA = "SQLALCHEMY_SCHEMA"
    CREATE_TABLE = "CREATE_TABLE"

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        url = self.env.get(self.SQLALCHEMY_URL)
        if not url:
            raise PersistenceError(f"no database URL in {self.SQLALCHEMY_URL}")
        self.schema_name = self.env.get(self.SQLALCHEMY_SCHEMA)
        self.datastore = Datastore(url)

    def aggregate_recorder(self, purpose: str = "events") -> AggregateRecorder:
        recorder = TrackerSnapshotRecorder(
            self.datastore,
            events_table_name=f"{self.env.name.lower() or 'stored'}_{purpose}",
            schema_name=self.schema_name,
            for_snapshots=purpose == "snapshots",
        )
        if self.creates_tables():
            recorder.create_table()
        return recorder

    def application_recorder(self) -> ApplicationRecorder:
        name = f"{self.env.name.lower() or 'stored'}_events"
        recorder = TrackerRecorder(self.datastore, events_table_name=name, schema_name=self.schema_name)
        if self.creates_tables():
            recorder.create_table()
        return recorder

    def tracking_recorder(self, tracking_recorder_class: type[TrackingRecorder] | None = None) -> TrackingRecorder:
        # The tracker runs no process applications: its projections keep their own position.
        raise NotImplementedError("the tracker's event store has no tracking recorder")

    def process_recorder(self) -> ProcessRecorder:
        raise NotImplementedError("the tracker's event store has no process recorder")

    def creates_tables(self) -> bool:
        return bool(strtobool(self.env.get(self.CREATE_TABLE) or "yes"))


class CampaignSnapshot(Snapshot):
    """A campaign's state at one version, without the scenario and ruleset its first event
    recorded (several kilobytes each, and never changed): loading puts them back from there."""

    @classmethod
    def take(cls, aggregate: Any) -> CampaignSnapshot:
        snapshot = super().take(aggregate)
        state = snapshot.state
        if all(k in state for k in RECORDED_AT_CREATION):
            for k in RECORDED_AT_CREATION:
                del state[k]
            state[_FROM_CREATION] = True
        return snapshot

    @property
    def needs_created_event(self) -> bool:
        return bool(self.state.get(_FROM_CREATION))

    def with_created(self, created: Any) -> CampaignSnapshot:
        """This snapshot with the scenario and ruleset of the campaign's Created event."""
        state = {k: v for k, v in self.state.items() if k != _FROM_CREATION}
        state["scenario_data"] = created.scenario
        state["ruleset_data"] = created.ruleset
        return type(self)(
            originator_id=self.originator_id,
            originator_version=self.originator_version,
            timestamp=self.timestamp,
            topic=self.topic,
            state=state,
        )
