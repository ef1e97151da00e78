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

from collections.abc import Iterable
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


def persistence_error(error: sqlalchemy.exc.SQLAlchemyError) -> PersistenceError:
    for theirs, ours in _ERRORS:
        if isinstance(error, theirs):
            return ours(error)
    return PersistenceError(error)


_current: ContextVar[Transaction] = ContextVar("tracker_storage_transaction")


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
                self.connection = datastore.engine.connect()
                self.connection.begin()
            except sqlalchemy.exc.SQLAlchemyError as e:
                self._release()
                raise persistence_error(e) from e
            except BaseException:
                self._release()
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
        try:
            if exc is not None or not self.commit:
                conn.rollback()
            else:
                conn.commit()
        except sqlalchemy.exc.SQLAlchemyError as e:
            if exc is None:
                raise persistence_error(e) from e
        finally:
            self._release()
            _current.reset(self.token)
        if isinstance(exc, sqlalchemy.exc.SQLAlchemyError):
            raise persistence_error(exc) from exc

    def _release(self) -> None:
        try:
            if self.connection is not None:
                self.connection.close()
                self.connection = None
        finally:
            if self.lock is not None:
                self.lock.release()
                self.lock = None


class Datastore:
    """The engine of one database URL, and its transactions (eventsourcing-sqlalchemy's
    datastore, on Core connections): a SQLite file in WAL mode with one writer at a time in
    the process, an in-memory SQLite database on one connection shared under a lock."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.is_sqlite_in_memory_db = False
        self.is_sqlite_wal_mode = False
        self.access_lock: Semaphore | None = None
        self.write_lock: Semaphore | None = None
        self._wal_lock = Lock()
        self._tried_wal = False
        if url.startswith("sqlite"):
            if ":memory:" in url or "mode=memory" in url:
                self.is_sqlite_in_memory_db = True
                connect_args = dict(engine_kwargs.get("connect_args") or {})
                connect_args.setdefault("check_same_thread", False)
                engine_kwargs = {"poolclass": StaticPool, **engine_kwargs, "connect_args": connect_args}
                self.access_lock = Semaphore()
            else:
                self.write_lock = Semaphore()
        self.engine: Engine = create_engine(url, echo=False, **engine_kwargs)
        self.is_sqlite_filedb = self.engine.dialect.name == "sqlite" and not self.is_sqlite_in_memory_db

    def init_sqlite_wal_mode(self) -> None:
        """Put a SQLite file in WAL mode (readers and the writer then do not block each other)."""
        self._tried_wal = True
        if self.is_sqlite_filedb and not self.is_sqlite_wal_mode:
            with self._wal_lock, self.engine.connect() as conn:
                mode = conn.exec_driver_sql("PRAGMA journal_mode=WAL").scalar()
                self.is_sqlite_wal_mode = mode == "wal"

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
