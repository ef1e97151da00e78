"""The event store under the tracker: eventsourcing's recorders on the tables of
eventsourcing-sqlalchemy, read and written with SQLAlchemy Core statements (see
`tracker.storage.datastore`; their rows and statements in `tracker.storage.rows`), and the
factory eventsourcing makes them with, and campaign snapshots without the recorded scenario and
ruleset. How an event is encoded is `tracker.storage.mapper`'s.

Writing an action checks, in the transaction that inserts its events, that the event it
follows is still the last one stored as this process saw it (a log cut below the campaign's
snapshot or working copy would otherwise leave a gap) and that the new rows do not reuse ids
the projections already passed (a cut tail on SQLite hands its ids out again). Either is
refused with a one-line error, and nothing is recorded.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.domain import Snapshot
from eventsourcing.persistence import (
    AggregateRecorder,
    ApplicationRecorder,
    InfrastructureFactory,
    IntegrityError,
    Notification,
    PersistenceError,
    ProcessRecorder,
    StoredEvent,
    Subscription,
    TrackingRecorder,
)
from eventsourcing.utils import Environment, strtobool
from sqlalchemy import Table, func, insert, select, type_coerce
from sqlalchemy.engine import Connection
from sqlalchemy.sql.sqltypes import NullType

from domain.errors import TrackerError
from projections.schema import NAME
from tracker.storage.datastore import (
    Datastore,
    Transaction,
    create_tables,
    event_table,
    operational_error,
    record_class,
    writing,
)
from tracker.storage.rows import (
    WriteStatements,
    campaign_uuid,
    checks_sql,
    driver_row,
    insert_rows,
    last_version_sql,
    made,
    notifications_of,
    recorded_hash,
    row_of,
    state_bytes,
    stored_event,
    uuid_bytes,
)

# Recorded once by a campaign's first event and never changed: a snapshot leaves them out.
RECORDED_AT_CREATION = ("scenario_data", "ruleset_data")
_FROM_CREATION = "_from_created_event"

# Stored events per page of a whole-log read (`event_pages`): a few megabytes at most.
PAGE_SIZE = 1000


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
            made(
                StoredEvent,
                originator_id=campaign_uuid(r[0]),
                originator_version=r[1],
                topic=r[2],
                state=state_bytes(r[3]),
            )
            for r in rows
        ]

    def event_pages(
        self, originator_id: UUID | str, gt: int | None = None, lte: int | None = None, page: int | None = None
    ) -> Iterator[list[StoredEvent]]:
        """A campaign's stored events in version order, `page` at a time, read by one query
        without holding the whole log: SQLite steps its cursor (`fetchmany`), PostgreSQL a
        server-side cursor. One query, so the pages are one consistent view of the log (a
        writer appending meanwhile is seen by the next read). Stop early by closing the
        iterator (or dropping it): the connection goes back to the pool. `page`: PAGE_SIZE."""
        page = page or PAGE_SIZE
        if self.datastore.is_sqlite_in_memory_db:
            # One connection shared under a lock: a short query per page, never one held
            # open while the caller reads the database in between.
            yield from self._keyset_pages(originator_id, gt, lte, page)
            return
        oid = campaign_uuid(originator_id) if not isinstance(originator_id, UUID) else originator_id
        engine = self.datastore.engine
        if engine.dialect.name == "sqlite":
            # In WAL mode the open read holds back no writer (the datastore's first transaction
            # switches a file to it; this read may come first).
            self._wal_mode()
            raw = engine.raw_connection()
            try:
                params: list[Any] = [bytearray(uuid_bytes(oid))]
                where = "originator_id = ?"
                if gt is not None:
                    where += " AND originator_version > ?"
                    params.append(gt)
                if lte is not None:
                    where += " AND originator_version <= ?"
                    params.append(lte)
                cursor = raw.cursor()
                cursor.execute(
                    f"SELECT originator_version, topic, state FROM {self.events_table_name} "
                    f"WHERE {where} ORDER BY originator_version",
                    params,
                )
                while rows := cursor.fetchmany(page):
                    yield [stored_event(oid, v, topic, state) for v, topic, state in rows]
                cursor.close()
            finally:
                raw.close()
            return
        table = self.table
        query = select(self._raw_id, table.c.originator_version, table.c.topic, table.c.state).where(
            table.c.originator_id == oid
        )
        if gt is not None:
            query = query.where(table.c.originator_version > gt)
        if lte is not None:
            query = query.where(table.c.originator_version <= lte)
        with engine.connect() as conn:
            query = query.order_by(table.c.originator_version)
            result = conn.execution_options(stream_results=True, yield_per=page).execute(query)
            for rows in result.partitions():
                yield [stored_event(oid, r[1], r[2], r[3]) for r in rows]

    def _keyset_pages(
        self, originator_id: UUID | str, gt: int | None, lte: int | None, page: int
    ) -> Iterator[list[StoredEvent]]:
        after = gt
        while True:
            rows = self.select_events(originator_id, gt=after, lte=lte, limit=page)
            if not rows:
                return
            yield rows
            if len(rows) < page:
                return
            after = rows[-1].originator_version

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        if stored_events:
            with self.transaction(commit=True) as session:
                connection_of(session).execute(insert(self.table), [row_of(e) for e in stored_events])
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
        """`_write` on a SQLite file, as driver statements on the datastore's writing connection:
        one insert and one query for both checks, in one transaction (SQLAlchemy's statement
        building and ORM session cost more than the writing itself). Same checks, same errors."""
        if not stored_events:
            return []
        datastore = self.datastore
        self._wal_mode()
        # The library's datastore (the recorder contract's tests) has no writing connection:
        # a pooled one serves there.
        held = isinstance(datastore, Datastore)
        with writing(datastore.write_lock):
            pooled = None if held else datastore.engine.raw_connection()
            raw = datastore.writer().connection.driver_connection if pooled is None else pooled
            assert raw is not None
            try:
                ids = self._write_driver(raw.cursor(), stored_events, follows)
                raw.commit()
                if held:
                    datastore.committed()
            except BaseException:
                try:
                    raw.rollback()
                except sqlite3.Error:
                    if held:
                        datastore.drop_writer()
                raise
            finally:
                if pooled is not None:
                    pooled.close()
        return ids

    def _write_driver(
        self, cur: Any, stored_events: Sequence[StoredEvent], follows: tuple[int, str] | None
    ) -> list[int]:
        name = self.events_table_name
        # The insert takes SQLite's write lock: the checks below read what no other writer can
        # change before this transaction ends. Rows inserted under one write lock take
        # consecutive ids, so the last one inserted gives them all (nothing is read back).
        last_id = insert_rows(cur, name, [driver_row(e) for e in stored_events])
        ids = list(range(last_id - len(stored_events) + 1, last_id + 1))
        version = follows[0] if follows is not None and follows[0] >= 1 else 0
        if not version and not self.check_projection_position:
            return ids
        oid = bytearray(uuid_bytes(stored_events[0].originator_id))
        position = self.check_projection_position
        follows_state, passed = cur.execute(
            checks_sql(name, position), (oid, version, NAME) if position else (oid, version)
        ).fetchone()
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
                raise operational_error(e) from e
        self._lock_table(session)
        # Insert first: on SQLite that takes the write lock, so the checks below read what no
        # other writer can change before this transaction ends. The statements are built once
        # per recorder (SQLAlchemy then finds their compiled form by identity).
        result = conn.execute(self._statements.insert, [row_of(e) for e in stored_events])
        ids = [int(i) for i in result.scalars()]
        version = follows[0] if follows is not None and follows[0] >= 1 else 0
        if version or self.check_projection_position:
            check = self._statements.checks[self.check_projection_position]
            follows_state, passed = conn.execute(
                check, {"oid": stored_events[0].originator_id, "version": version, "name": NAME}
            ).one()
            if version:
                assert follows is not None
                if follows_state is None:
                    raise _log_ends(self._last_before(conn, stored_events[0].originator_id, version), version)
                _check_hash(follows_state, version, follows[1])
            _check_position(ids, passed)
        if conn.dialect.name == "postgresql":
            # For any listener on the library's channel (eventsourcing's LISTEN/NOTIFY subscriptions).
            conn.exec_driver_sql(f"NOTIFY {self.channel_name}")
        return ids

    @functools.cached_property
    def _statements(self) -> WriteStatements:
        return WriteStatements(self.table)

    def _last_before(self, conn: Any, originator_id: UUID | str, version: int) -> int | None:
        table = self.table
        value = conn.execute(
            select(func.max(table.c.originator_version)).where(
                table.c.originator_id == originator_id, table.c.originator_version < version
            )
        ).scalar()
        return None if value is None else int(value)

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
                return notifications_of(rows)
            rows = conn.execute(query).all()
        return [
            made(
                Notification,
                id=r[0],
                originator_id=campaign_uuid(r[1]),
                originator_version=r[2],
                topic=r[3],
                state=state_bytes(r[4]),
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

    def has_events(self, originator_id: UUID) -> bool:
        """Whether the log holds any event of `originator_id`: its key only, nothing decoded
        (a campaign's first event holds its whole scenario, tens of KB on a large one)."""
        table = self.table
        with self.transaction(commit=False) as session:
            found = (
                connection_of(session)
                .execute(select(table.c.originator_version).where(table.c.originator_id == originator_id).limit(1))
                .first()
            )
        return found is not None

    def last_version(self, originator_id: UUID) -> int:
        datastore = self.datastore
        if isinstance(datastore, Datastore) and datastore.is_sqlite_filedb:
            # Asked just before an action is recorded (is the working copy still the last
            # one?): on the connection that then writes, whose cache is warm.
            self._wal_mode()
            oid = originator_id.bytes if isinstance(originator_id, UUID) else uuid_bytes(originator_id)
            rows = datastore.read_on_writer(last_version_sql(self.events_table_name), (bytearray(oid),))
            return int(rows[0][0] or 0)
        table = self.table
        with self.transaction(commit=False) as session:
            value = (
                connection_of(session)
                .execute(select(func.max(table.c.originator_version)).where(table.c.originator_id == originator_id))
                .scalar()
            )
        return int(value or 0)


def _log_ends(last: int | None, version: int) -> LogDamaged:
    return LogDamaged(
        f"this campaign's log ends at event {last or 0}, but its latest snapshot or working copy is at "
        f"event {version}: events were deleted; nothing was recorded (run `tracker verify`)"
    )


def _check_hash(state: Any, version: int, expected_hash: str) -> None:
    if recorded_hash(state_bytes(state)) != expected_hash:
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

    def close(self) -> None:
        self.datastore.close()

    def creates_tables(self) -> bool:
        return bool(strtobool(self.env.get(self.CREATE_TABLE) or "yes"))


# Its topic is stored with every snapshot: the class stays in this module.
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
