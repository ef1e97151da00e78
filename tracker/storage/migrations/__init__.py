"""The side tables' schema (campaign names, seeds, marks, players, overrides, public campaigns,
notifications, idempotency keys) and its versioned upgrades: Alembic revisions in `versions/`,
recorded in the database's `alembic_version` table. The event tables are eventsourcing's and the
read models rebuild themselves (`projections.schema`): neither is migrated here.

Opening a database costs one query when its tables are at this tracker's head (`HEAD`); Alembic
is imported only when a revision is to run. A SQLite file is upgraded when it is opened (one
user's file: an upgraded tracker goes on working on it), and so is a new PostgreSQL database; a
PostgreSQL database that holds tables of an earlier release is shared by servers and players,
and is upgraded by whoever administers it, with `tracker db upgrade`.

A database whose side tables were made before versioned upgrades is first stamped at the last
revision it holds whole (see `steps`), then upgraded from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from domain.errors import InputError

if TYPE_CHECKING:
    from alembic.script import ScriptDirectory

# The last revision in versions/ (tests check it against the scripts).
HEAD = "0005"
VERSION_TABLE = "alembic_version"
# The key of PostgreSQL's advisory lock held while the side tables are upgraded.
PG_LOCK = 0x74726B72
# How long a revision waits for a table another session holds (a backup by pg_dump, a server's
# transaction) before the upgrade gives up. While it waits, every other query on that table
# waits behind it: the league would stand still for as long as the backup runs.
LOCK_WAIT_SECONDS = 10
# PostgreSQL's lock_not_available: a lock not granted within lock_timeout.
_LOCK_NOT_AVAILABLE = "55P03"
FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Step:
    """One revision: its id and the first line of its docstring."""

    revision: str
    title: str


@dataclass(frozen=True)
class Schema:
    """Where a database's side tables stand: the revision recorded (None before any), the
    revision unversioned tables match, this tracker's head, and the revisions to run."""

    current: str | None
    head: str = HEAD
    matches: str | None = None
    known: bool = True
    ahead: list[Step] = field(default_factory=list)

    @property
    def at_head(self) -> bool:
        return self.current == self.head

    def as_json(self) -> dict[str, Any]:
        return {
            "current": self.current,
            "head": self.head,
            "at_head": self.at_head,
            "known": self.known,
            "matches": self.matches,
            "to_run": [{"revision": s.revision, "title": s.title} for s in self.ahead],
        }


@dataclass(frozen=True)
class Upgrade:
    """What `upgrade` did: the revision before, the stamp given to unversioned tables, the
    revisions run."""

    before: str | None
    stamped: str | None
    applied: list[Step]
    head: str = HEAD

    def as_json(self) -> dict[str, Any]:
        return {
            "before": self.before,
            "stamped": self.stamped,
            "applied": [{"revision": s.revision, "title": s.title} for s in self.applied],
            "current": self.head,
        }


def recorded(conn: Connection) -> str | None:
    """The revision the database records, None when it records none (no version table)."""
    try:
        return conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
    except DBAPIError as e:
        if not _no_such_table(e):
            # An account that may not read the table (say), is not a database without it:
            # told as such, never as one needing an upgrade.
            raise
        # No version table: a new database, or one made before versioned upgrades. A failed
        # statement leaves a PostgreSQL transaction unusable: start again.
        conn.rollback()
        return None


def _no_such_table(error: DBAPIError) -> bool:
    """Whether the statement failed for want of its table (PostgreSQL's undefined_table, 42P01;
    SQLite's "no such table"), rather than for a lack of rights or a lost connection."""
    cause = error.orig
    return getattr(cause, "sqlstate", None) == "42P01" or "no such table" in str(cause)


def ensure(engine: Engine) -> None:
    """Bring the side tables to this tracker's head where it may do so on its own (see the module
    docstring); InputError naming `tracker db upgrade` where it may not."""
    with engine.connect() as conn:
        if recorded(conn) == HEAD:
            return
    _run(engine, automatic=True)


def upgrade(engine: Engine) -> Upgrade:
    """Bring the side tables to this tracker's head (`tracker db upgrade`): a no-op at head."""
    return _run(engine, automatic=False)


def current(engine: Engine) -> Schema:
    """Where the side tables stand (`tracker db current`); reads only."""
    script = _script()
    with engine.connect() as conn:
        found = recorded(conn)
        matches = _matching(conn, script) if found is None else None
    known = found is None or _known(script, found)
    start = found if found is not None else matches
    ahead = _steps_after(script, start) if known else []
    return Schema(current=found, matches=matches, known=known, ahead=ahead)


def _run(engine: Engine, automatic: bool) -> Upgrade:
    from alembic import command

    script = _script()
    where = engine.url.render_as_string(hide_password=True)
    with engine.connect() as conn:
        _lock(conn)
        # Read again under the lock: another process may have upgraded meanwhile.
        before = recorded(conn) if _has_table(conn, VERSION_TABLE) else None
        if before is not None and not _known(script, before):
            raise InputError(
                f"the side tables of {where} are at revision {before!r}, which this tracker does not know "
                "(a newer tracker upgraded them): upgrade the tracker"
            )
        if before == HEAD:
            conn.rollback()
            return Upgrade(before, None, [])
        stamped = _matching(conn, script) if before is None else None
        if automatic and conn.dialect.name == "postgresql" and (before is not None or _unversioned(conn, script)):
            at = before or f"{stamped or 'none'} (made before versioned upgrades)"
            raise InputError(
                f"the side tables of {where} are at revision {at} and this tracker needs {HEAD}: "
                # Named with the database: a server given --db, or TRACKER_DB in one service's
                # environment, left `tracker db upgrade` on ./campaign.db in the operator's shell.
                f"upgrade them with `tracker --db {where} db upgrade` (stop the servers of the earlier release first)"
            )
        config = _config(conn)
        if conn.dialect.name == "postgresql":
            # For the revisions' statements only: the advisory lock above waits for another
            # upgrade as long as it takes.
            conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_WAIT_SECONDS}s'")
        try:
            if stamped is not None:
                command.stamp(config, stamped)
            applied = _steps_after(script, before or stamped)
            command.upgrade(config, "head")
        except DBAPIError as e:
            if getattr(e.orig, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
                raise
            conn.rollback()
            raise InputError(
                f"cannot upgrade the tables of {where}: another session held them for over {LOCK_WAIT_SECONDS} s "
                "(a backup by pg_dump, a server's long transaction: see pg_stat_activity); nothing was changed: "
                "run `tracker db upgrade` again once it has ended"
            ) from None
        conn.commit()
    return Upgrade(before, stamped, applied)


def _lock(conn: Connection) -> None:
    """Hold the database's write lock for the upgrade: one process upgrades, the others wait and
    then find it done."""
    if conn.dialect.name == "sqlite":
        # pysqlite opens no transaction for DDL: open one, taking the write lock now, so that the
        # revisions and the version they record commit together or not at all.
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_LOCK})


def _has_table(conn: Connection, name: str) -> bool:
    return inspect(conn).has_table(name)


def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(FOLDER))


def _config(conn: Connection) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(FOLDER))
    config.attributes["connection"] = conn
    return config


def _known(script: ScriptDirectory, revision: str) -> bool:
    return any(s.revision == revision for s in script.walk_revisions())


def _oldest_first(script: ScriptDirectory) -> list[Any]:
    return list(reversed(list(script.walk_revisions())))


def _steps_after(script: ScriptDirectory, revision: str | None) -> list[Step]:
    """The revisions after `revision` (all of them after None), oldest first."""
    order = _oldest_first(script)
    ids = [s.revision for s in order]
    start = 0 if revision is None else ids.index(revision) + 1
    return [Step(s.revision, _title(s.doc)) for s in order[start:]]


def _title(doc: str | None) -> str:
    return (doc or "").strip().split("\n\n")[0].replace("\n", " ")


def _holds(conn: Connection, module: Any) -> bool:
    """Whether the database has every table and column the revision adds."""
    inspector = inspect(conn)
    tables = set(inspector.get_table_names())
    if not set(module.CREATES) <= tables:
        return False
    for table, columns in module.ADDS.items():
        if table not in tables or not set(columns) <= {c["name"] for c in inspector.get_columns(table)}:
            return False
    return True


def _matching(conn: Connection, script: ScriptDirectory) -> str | None:
    """The last revision whose tables and columns, and those of every revision before it, the
    database holds; None when it does not hold the first one's whole."""
    found = None
    for s in _oldest_first(script):
        if not _holds(conn, s.module):
            break
        found = s.revision
    return found


def _unversioned(conn: Connection, script: ScriptDirectory) -> bool:
    """Whether the database holds any side table made before versioned upgrades."""
    tables = set(inspect(conn).get_table_names())
    return any(set(s.module.CREATES) & tables for s in script.walk_revisions())
