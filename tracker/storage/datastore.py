"""The database under the event store: an engine, transactions on SQLAlchemy Core connections,
and the event and snapshot tables as eventsourcing-sqlalchemy lays them out.

eventsourcing-sqlalchemy maps its tables with ORM classes whose id column type comes from
sqlalchemy-utils; importing that package imports every one of its types, and with them
SQLAlchemy's PostgreSQL, MSSQL and Oracle dialects and the ORM: more than a command reading a
campaign costs otherwise. The tracker reads and writes the same tables with Core statements
on the copies of their columns below. New tables are still made by the library, from its
own record classes (`create_tables`), so a database the tracker creates is the library's by
construction; the library is imported only then.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from threading import Lock, Semaphore
from types import TracebackType
from typing import Any
from uuid import UUID

import sqlalchemy.exc
from eventsourcing.persistence import (
    DatabaseError,
    DataError,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    PersistenceError,
    ProgrammingError,
)
from sqlalchemy import (
    BINARY,
    BigInteger,
    Column,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    TypeDecorator,
    Uuid,
    create_engine,
    inspect,
)
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.pool import StaticPool

from domain.errors import TrackerError

# Integers as the library declares them: BIGINT, but SQLite's INTEGER (a rowid alias for ids).
_BIG = BigInteger().with_variant(Integer(), "sqlite")


class StoredUUID(TypeDecorator[UUID]):
    """A UUID column as eventsourcing-sqlalchemy stores it (sqlalchemy-utils' binary UUIDType):
    PostgreSQL's native UUID, 16 bytes elsewhere."""

    impl = BINARY(16)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> Any:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(Uuid(as_uuid=True))
        return dialect.type_descriptor(BINARY(16))

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        if not isinstance(value, UUID):
            value = UUID(value) if isinstance(value, str) else UUID(bytes=bytes(value))
        return value if dialect.name == "postgresql" else value.bytes

    def process_result_value(self, value: Any, dialect: Dialect) -> UUID | None:
        if value is None or isinstance(value, UUID):
            return value
        return UUID(value) if isinstance(value, str) else UUID(bytes=bytes(value))


metadata = MetaData()
_tables: dict[tuple[str | None, str], tuple[Table, bool]] = {}


def event_table(name: str, schema: str | None = None, for_snapshots: bool = False) -> Table:
    """The table of stored events (ids in the application sequence, one row per event) or of
    snapshots (keyed by originator and version), column for column as the library's."""
    key = (schema, name)
    found = _tables.get(key)
    if found is not None:
        if found[1] != for_snapshots:
            raise ValueError(f"table {name!r} is already defined as {'snapshots' if found[1] else 'events'}")
        return found[0]
    if for_snapshots:
        table = Table(
            name,
            metadata,
            Column("originator_id", StoredUUID(), primary_key=True),
            Column("originator_version", _BIG, primary_key=True),
            Column("topic", Text(), nullable=False),
            Column("state", LargeBinary(), nullable=False),
            schema=schema,
        )
    else:
        table = Table(
            name,
            metadata,
            Column("id", _BIG, primary_key=True, autoincrement=True),
            Column("originator_id", StoredUUID(), nullable=False),
            Column("originator_version", _BIG, nullable=False),
            Column("topic", Text(), nullable=False),
            Column("state", LargeBinary(), nullable=False),
            Index(f"{name}_aggregate_idx", "originator_id", "originator_version", unique=True),
            schema=schema,
        )
    _tables[key] = (table, for_snapshots)
    return table


def is_snapshot_table(table: Table) -> bool:
    return _tables[(table.schema, table.name)][1]


def create_tables(engine: Engine, tables: Iterable[Table]) -> None:
    """Create whichever of these tables the database lacks, with eventsourcing-sqlalchemy's own
    record classes (the library, and the ORM and sqlalchemy-utils with it, imported only now)."""
    with engine.connect() as conn:
        inspector = inspect(conn)
        missing = [t for t in tables if not inspector.has_table(t.name, schema=t.schema)]
    if not missing:
        return
    from eventsourcing_sqlalchemy.datastore import SQLAlchemyDatastore

    for table in missing:
        base = (
            SQLAlchemyDatastore.base_snapshot_record_cls
            if is_snapshot_table(table)
            else SQLAlchemyDatastore.base_stored_event_record_cls
        )
        # The class name the library's recorders give the same table.
        words = (table.schema or "").split("_") + table.name.rstrip("s").split("_")
        record = SQLAlchemyDatastore.define_record_class(
            cls_name="".join(w.capitalize() for w in words),
            table_name=table.name,
            schema_name=table.schema,
            base_cls=base,
        )
        record.__table__.create(engine, checkfirst=True)


_orm_classes: dict[Table, Any] = {}


def record_class(table: Table) -> Any:
    """An ORM class mapped on the table, for code that edits rows as objects (tests that tamper
    with a log): made on first use, so no command pays for the ORM it does not use."""
    found = _orm_classes.get(table)
    if found is None:
        from sqlalchemy.orm import registry

        base: Any = registry().generate_base()
        found = _orm_classes[table] = type(f"{table.name}_record", (base,), {"__table__": table})
    return found


# eventsourcing's errors for SQLAlchemy's, in the order eventsourcing-sqlalchemy maps them.
_ERRORS: tuple[tuple[type[sqlalchemy.exc.SQLAlchemyError], type[PersistenceError]], ...] = (
    (sqlalchemy.exc.InterfaceError, InterfaceError),
    (sqlalchemy.exc.DataError, DataError),
    (sqlalchemy.exc.OperationalError, OperationalError),
    (sqlalchemy.exc.IntegrityError, IntegrityError),
    (sqlalchemy.exc.InternalError, InternalError),
    (sqlalchemy.exc.ProgrammingError, ProgrammingError),
    (sqlalchemy.exc.NotSupportedError, NotSupportedError),
    (sqlalchemy.exc.DatabaseError, DatabaseError),
)


class DatabaseFull(OperationalError, TrackerError):
    """The database could not grow: its disk (or PostgreSQL's) is full. The transaction was
    rolled back, so nothing was recorded; said in one line, as any refusal is, instead of as an
    unexpected error (a traceback in the server's log for every request until space is freed)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(
            f"the database is full ({_first_line(error)}): nothing was recorded; free space on its disk and try again"
        )


def _first_line(error: BaseException) -> str:
    cause = getattr(error, "orig", None) or error
    return (str(cause).strip().splitlines() or [type(cause).__name__])[0]


def _is_full(error: BaseException) -> bool:
    """SQLite's SQLITE_FULL ("database or disk is full"), PostgreSQL's disk_full (53100)."""
    cause = getattr(error, "orig", None) or error
    if isinstance(cause, sqlite3.Error):
        return getattr(cause, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(cause)
    return getattr(cause, "sqlstate", None) == "53100"


def operational_error(error: BaseException) -> OperationalError:
    """eventsourcing's OperationalError for a driver's or SQLAlchemy's; DatabaseFull for a full disk."""
    return DatabaseFull(error) if _is_full(error) else OperationalError(error)


def persistence_error(error: sqlalchemy.exc.SQLAlchemyError) -> PersistenceError:
    for theirs, ours in _ERRORS:
        if isinstance(error, theirs):
            return operational_error(error) if ours is OperationalError else ours(error)
    return PersistenceError(error)


_current: ContextVar[Transaction] = ContextVar("tracker_storage_transaction")


@contextmanager
def writing(lock: Semaphore | None) -> Iterator[None]:
    """Hold a SQLite file's write lock (when it has one) around work on its driver connection,
    with sqlite3's errors raised as eventsourcing's."""
    if lock is not None:
        lock.acquire()
    try:
        yield
    except sqlite3.IntegrityError as e:
        raise IntegrityError(e) from e
    except sqlite3.OperationalError as e:
        raise operational_error(e) from e
    except sqlite3.Error as e:
        raise PersistenceError(e) from e
    finally:
        if lock is not None:
            lock.release()


class Transaction:
    """One database transaction on a Core connection; a `transaction()` of the same datastore
    asked for inside it (in the same thread or task) joins it. Leaving it commits (or, for a
    read, rolls back); an error rolls back, SQLAlchemy's raised as eventsourcing's."""

    def __init__(self, datastore: Datastore, commit: bool) -> None:
        self.datastore = datastore
        self.commit = commit
        self.depth = 0
        self.connection: Connection | None = None
        self.lock: Semaphore | None = None
        self.token: Any = None
        self.held = False  # on the datastore's writing connection (see `Datastore.writer`)

    def __enter__(self) -> Connection:
        if self.depth == 0:
            datastore = self.datastore
            if datastore.access_lock is not None:
                self.lock = datastore.access_lock
            elif self.commit and datastore.write_lock is not None:
                self.lock = datastore.write_lock
            if self.lock is not None:
                self.lock.acquire()
            try:
                if self.commit and datastore.is_sqlite_filedb:
                    self.held = True
                    self.connection = datastore.writer()
                else:
                    self.connection = datastore.engine.connect()
                self.connection.begin()
            except sqlalchemy.exc.SQLAlchemyError as e:
                self._release(failed=True)
                raise persistence_error(e) from e
            except BaseException:
                self._release(failed=True)
                raise
            self.token = _current.set(self)
        self.depth += 1
        assert self.connection is not None
        return self.connection

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.depth -= 1
        if self.depth:
            return
        conn = self.connection
        assert conn is not None
        failed = True
        try:
            if exc is not None or not self.commit:
                conn.rollback()
            else:
                conn.commit()
                if self.held:
                    self.datastore.committed()
            failed = False
        except sqlalchemy.exc.SQLAlchemyError as e:
            if exc is None:
                raise persistence_error(e) from e
        finally:
            self._release(failed)
            _current.reset(self.token)
        if isinstance(exc, sqlalchemy.exc.SQLAlchemyError):
            raise persistence_error(exc) from exc

    def _release(self, failed: bool = False) -> None:
        try:
            if self.held:
                # The datastore's writing connection stays open for the next write; one whose
                # commit or rollback failed is given up (its state is unknown).
                if failed:
                    self.datastore.drop_writer()
                self.connection = None
            elif self.connection is not None:
                self.connection.close()
                self.connection = None
        finally:
            if self.lock is not None:
                self.lock.release()
                self.lock = None


# The page size of a new SQLite file, in bytes. A campaign database holds some thirty tables
# and indexes, most of a few rows (names, seeds, players, channels), and each takes at least
# one page; an event row is about 450 bytes with its index entries. Half SQLite's default
# page spares about 60 KB of near-empty pages in every database (a third of a 2,000-event
# campaign's overhead) for about 1% more pages in a long log.
PAGE_SIZE = 2048


def _small_pages(dbapi_connection: Any, _record: Any) -> None:
    # SQLite applies it only to a file with no table yet (and never in WAL mode): on any other
    # database it changes nothing, so it is said on every new connection.
    dbapi_connection.execute(f"PRAGMA page_size = {PAGE_SIZE}")


class Datastore:
    """The engine of one database URL, and its transactions (eventsourcing-sqlalchemy's
    datastore, on Core connections): a SQLite file in WAL mode with one writer at a time in
    the process, on one connection kept open for writing (`writer`); an in-memory SQLite
    database on one connection shared under a lock."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.is_sqlite_in_memory_db = False
        self.is_sqlite_wal_mode = False
        self.access_lock: Semaphore | None = None
        self.write_lock: Semaphore | None = None
        self._wal_lock = Lock()
        self._tried_wal = False
        self._writer: Connection | None = None
        self._writer_pool: Any = None
        # Group commit (`commit_in_groups`): commits made on the writing connection, and how
        # many of them are known durable.
        self.grouped = False
        self.commits = 0
        self.synced = 0
        self._sync_lock = Lock()
        if url.startswith("sqlite"):
            if ":memory:" in url or "mode=memory" in url:
                self.is_sqlite_in_memory_db = True
                connect_args = dict(engine_kwargs.get("connect_args") or {})
                connect_args.setdefault("check_same_thread", False)
                engine_kwargs = {"poolclass": StaticPool, **engine_kwargs, "connect_args": connect_args}
                self.access_lock = Semaphore()
            else:
                self.write_lock = Semaphore()
        elif url.startswith("postgresql"):
            # A pooled connection outlives a restart of PostgreSQL (an upgrade, a failover):
            # tested as it is taken from the pool, so that a long-running server's first
            # requests afterwards are answered instead of failing on a dead connection.
            engine_kwargs.setdefault("pool_pre_ping", True)
        self.engine: Engine = create_engine(url, echo=False, **engine_kwargs)
        self.is_sqlite_filedb = self.engine.dialect.name == "sqlite" and not self.is_sqlite_in_memory_db
        if self.is_sqlite_filedb:
            sqlalchemy.event.listen(self.engine, "connect", _small_pages)

    def init_sqlite_wal_mode(self) -> None:
        """Put a SQLite file in WAL mode (readers and the writer then do not block each other)."""
        self._tried_wal = True
        if self.is_sqlite_filedb and not self.is_sqlite_wal_mode:
            with self._wal_lock, self.engine.connect() as conn:
                mode = conn.exec_driver_sql("PRAGMA journal_mode=WAL").scalar()
                self.is_sqlite_wal_mode = mode == "wal"

    def writer(self) -> Connection:
        """The connection every write to a SQLite file goes through, opened on first use and
        kept; the caller holds `write_lock` and leaves it outside a transaction.

        One writer at a time is all a SQLite file takes, so one connection serves them all:
        a write then pays no pool checkout and check-in (with its rollback), and SQLite keeps
        this connection's page cache across writes, since no other connection of the process
        wrote in between (a connection that reads after another one wrote starts cold)."""
        conn = self._writer
        # A disposed engine (a new pool) gives new connections, this one included.
        if conn is None or conn.closed or conn.invalidated or self._writer_pool is not self.engine.pool:
            if conn is not None:
                self.drop_writer()
            conn = self._writer = self.engine.connect()
            self._writer_pool = self.engine.pool
            if self.grouped:
                # Through the driver: SQLAlchemy would begin a transaction around it.
                driver = conn.connection.driver_connection
                assert driver is not None
                driver.execute("PRAGMA synchronous=NORMAL")
        return conn

    def committed(self) -> None:
        """Count a commit made on the writing connection (the caller holds `write_lock`)."""
        self.commits += 1

    def commit_in_groups(self) -> None:
        """Group commit on a SQLite file, for a server whose requests wait on each other: each
        write still commits in its own transaction, but without waiting for the disk; whoever
        answers for a write calls `durable` first, and one flush of the write-ahead log makes
        every commit before it durable, so writers waiting meanwhile share one flush.

        A write is atomic as before: SQLite recovers the log up to its last whole commit (each
        frame is checksummed with those before it), so a crash keeps a commit whole or drops it,
        and drops a commit only with every one after it."""
        database = self.engine.url.database
        if not self.is_sqlite_filedb or not database or not os.path.isfile(database):
            # Only a file named plainly has its log beside it (`durable` flushes that file);
            # anything else keeps waiting for the disk at each commit.
            return
        lock = self.write_lock
        if lock is not None:
            lock.acquire()
        try:
            self.grouped = True
            self.drop_writer()  # the next one is opened in this mode
        finally:
            if lock is not None:
                lock.release()

    def durable(self) -> None:
        """In group commit: return once every commit made on the writing connection so far is
        on disk, flushing the write-ahead log unless a flush begun since covered them."""
        if not self.grouped:
            return
        target = self.commits
        if self.synced >= target:
            return
        with self._sync_lock:
            if self.synced >= target:
                return
            # Every commit counted by now is in the log file: this flush covers it.
            upto = self.commits
            try:
                fd = os.open(f"{self.engine.url.database}-wal", os.O_RDONLY)
            except FileNotFoundError:
                # No log left: SQLite checkpointed it into the database file (and flushed
                # both) when the last connection closed.
                self.synced = max(self.synced, upto)
                return
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            self.synced = max(self.synced, upto)

    def read_on_writer(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The rows of a small query (driver SQL) run on the writing connection of a SQLite
        file, between writes: for what an action reads just before it writes, on the
        connection whose cache its last write left warm. Every row is fetched, so no read
        stays open on the connection. Inside a transaction of this datastore, it runs there."""
        current = _current.get(None)
        if current is not None and current.datastore is self and current.connection is not None:
            return [tuple(r) for r in current.connection.exec_driver_sql(sql, params).all()]
        with writing(self.write_lock):
            try:
                driver = self.writer().connection.driver_connection
            except sqlalchemy.exc.SQLAlchemyError as e:
                raise persistence_error(e) from e
            assert driver is not None
            cursor = driver.cursor()
            try:
                rows: list[tuple[Any, ...]] = cursor.execute(sql, params).fetchall()
                return rows
            finally:
                cursor.close()

    def drop_writer(self) -> None:
        """Close the writing connection (after a failed commit, or for good): the next write
        opens a new one. The caller holds `write_lock`, or no write can be under way."""
        conn, self._writer = self._writer, None
        if conn is not None:
            with suppress(sqlalchemy.exc.SQLAlchemyError):
                conn.close()

    def close(self) -> None:
        """Close the writing connection and every pooled one."""
        self.durable()
        lock = self.write_lock
        # A write still under way in another thread finishes first (a stuck one is not waited
        # for forever: its connection is closed under it).
        locked = lock.acquire(timeout=30) if lock is not None else False
        try:
            self.drop_writer()
        finally:
            if locked:
                assert lock is not None
                lock.release()
        self.engine.dispose()

    def transaction(self, commit: bool) -> Transaction:
        current = _current.get(None)
        if current is not None and current.datastore is self:
            if commit and not current.commit:
                raise ProgrammingError("Transaction already started with commit=False")
            return current
        if not self._tried_wal:
            # After the tables are made: switching the journal first fails on some SQLites.
            self.init_sqlite_wal_mode()
        return Transaction(self, commit)
