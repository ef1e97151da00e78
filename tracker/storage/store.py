"""Where campaigns live: database URLs, and the registry of campaign names, dice seeds and
the marks of campaigns imported or served.

The registry is outside the event log on purpose: it maps names to aggregate IDs and
keeps each campaign's secret dice seeds, which the log holds only as commitments until
`tracker dice reveal` publishes them. `verify` checks each of its rows against the log.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import tempfile
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, bindparam, func, inspect, select, update
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError

from domain.errors import InputError
from tracker.storage import DEFAULT_DB as DEFAULT_DB
from tracker.storage.migrations import ensure

# A URL's password (`scheme://user:password@host`), up to the last "@" before the path: a
# password holding an unencoded "@" is hidden whole.
_URL_PASSWORD = re.compile(r"(?<=://)([^:/@\s]*):[^/\s]*@")

metadata = MetaData()
# The revisions (`tracker.storage.migrations`) make these tables; a small keyed table is made
# without a rowid on SQLite (`migrations.steps.KEYED`), and declared so here as well.
campaigns_table = Table(
    "tracker_campaigns",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("campaign_id", String(36), nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), server_default=func.now()),
    sqlite_with_rowid=False,
)
seeds_table = Table(
    "tracker_dice_seeds",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("epoch", Integer, primary_key=True),
    Column("seed", String(64), nullable=False),
    sqlite_with_rowid=False,
)

# Campaigns recorded here by `tracker import`: their auto dice seed stayed with the exported
# copy, so `verify` notes its absence instead of failing. PBEM copies share one log, so the
# log cannot say which copy imported it: the mark says it instead, with the name given to the
# import and the head of the log it recorded, which `verify` checks against the log (a bare
# row, or one naming a head the log does not hold, was not written by an import).
imported_table = Table(
    "tracker_imported",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("imported_at", DateTime(timezone=True), server_default=func.now()),
    # Added after the table first shipped (see `upgrade_import_marks`); 0 and "" in head_seq
    # and head_hash mark a row an earlier tracker wrote, which named no head.
    Column("name", String(200)),
    Column("head_seq", Integer),
    Column("head_hash", String(64)),
    sqlite_with_rowid=False,
)
_MARK_COLUMNS = ("name", "head_seq", "head_hash")


# Campaigns served by `tracker serve`: their auto dice seeds live in the server's key store,
# not here (D5). `verify` does not take this row's word for it: the log must show an event
# recorded through a server (see tracker.service.verify).
served_table = Table(
    "tracker_served",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("since", DateTime(timezone=True), server_default=func.now()),
    sqlite_with_rowid=False,
)


# Seconds a PostgreSQL connection may take to open, unless the URL (`?connect_timeout=`) or the
# environment (PGCONNECT_TIMEOUT) says otherwise: libpq's own default is to wait for ever, and a
# database host that takes the connection and never answers (a stuck proxy, a failover under
# way) held a command, or a server's start, with no word.
CONNECT_TIMEOUT = "10"


def require_postgres_driver() -> None:
    """PostgreSQL is an optional part (the `postgres` extra): said in one line, exit 2, when
    its driver is not installed. Every connection libpq opens from here on gives up after
    CONNECT_TIMEOUT seconds unless told otherwise."""
    import importlib.util

    if importlib.util.find_spec("psycopg") is None:
        raise InputError(
            "PostgreSQL needs the postgres extra (psycopg is not installed): "
            "pip install 'twtea-naval-tracker[postgres]', or pip install '.[postgres]' in a checkout"
        )
    os.environ.setdefault("PGCONNECT_TIMEOUT", CONNECT_TIMEOUT)


def database_url(db: str | None, create: bool = True) -> str:
    """A SQLAlchemy URL from `--db`: a URL as given, or a path to a SQLite file.

    Without `create`, a SQLite file that does not exist is refused instead of created: only
    the commands that make a campaign (`new`, `import`) may bring a database into being.
    """
    db = db or os.environ.get("TRACKER_DB") or DEFAULT_DB
    if "://" in db:
        # A URL SQLAlchemy cannot read is quoted as typed, but never with its password.
        shown = _URL_PASSWORD.sub(r"\1:***@", db)
        try:
            url = make_url(db)
        except ArgumentError:
            raise InputError(f"bad database URL {shown!r}") from None
        except ValueError:
            # SQLAlchemy reads the port as int(...) and says no more than that.
            raise InputError(f"bad database URL {shown!r}: its port is not a number") from None
        if url.get_backend_name() not in ("sqlite", "postgresql"):
            raise InputError(
                f"unsupported database {url.get_backend_name()!r} in {shown!r} (use a file path, "
                "sqlite:///FILE or postgresql+psycopg://USER@HOST/DB)"
            )
        if url.get_backend_name() == "postgresql" and url.get_driver_name() != "psycopg":
            url = url.set(drivername="postgresql+psycopg")
        if url.get_backend_name() == "postgresql":
            require_postgres_driver()
        if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
            _check_sqlite_path(Path(url.database))
            if not create:
                _require_file(Path(url.database))
        return url.render_as_string(hide_password=False)
    path = Path(db).expanduser()
    _check_sqlite_path(path)
    if not create:
        _require_file(path)
    return f"sqlite:///{path.resolve()}"


def sqlite_file(url: str) -> Path | None:
    """The SQLite database file a URL names (None for PostgreSQL or an in-memory database)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def _require_file(path: Path) -> None:
    """A command that reads campaigns (all but `new`, `import` and `demo`) refuses a file it
    would otherwise have to write its tables into: a missing one, an empty one, or another
    program's database, so that a mistyped `--db` changes nothing."""
    if not path.exists():
        raise InputError(
            f"no database at {str(path)!r}: create a campaign with `tracker new NAME --scenario S` "
            "or `tracker import FILE`, or name another with --db"
        )
    if path.stat().st_size == 0 or (_writable(path) and not _table_names(path) - _FOREIGN_OK):
        raise InputError(
            f"no campaign in {str(path)!r} (an empty database): create one with `tracker new NAME --scenario S` "
            "or `tracker import FILE`, or name another with --db"
        )


def require_tracker_tables(url: str) -> None:
    """For a command that reads campaigns on PostgreSQL (see `_require_file` for SQLite): a
    database without the tracker's tables (a mistyped name that is another database, a new
    one) is refused as holding no campaign, instead of having some twenty tables made in it."""
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            found = has_tracker_tables(conn)
    finally:
        engine.dispose()
    if not found:
        raise no_tracker_tables(make_url(url).render_as_string(hide_password=True))


def has_tracker_tables(conn: Connection) -> bool:
    """Whether a database holds the tracker's tables (its campaign names')."""
    return bool(inspect(conn).has_table(campaigns_table.name))


def no_tracker_tables(shown: str) -> InputError:
    """The refusal of a database without the tracker's tables, named by `shown` (no password)."""
    return InputError(
        f"no campaign in {shown} (it has no tracker tables): create one with `tracker new NAME --scenario S` "
        "or `tracker import FILE`, start a league with `tracker players add NAME --referee --league`, "
        "or name another with --db"
    )


# Tables SQLite makes by itself, which say nothing about whose database a file is.
_FOREIGN_OK = frozenset({"sqlite_sequence", "sqlite_stat1", "sqlite_stat4"})


def _writable(path: Path) -> bool:
    """Whether the tracker could write this file at all: a read-only one is read through a
    private copy (`read_only_copy`), and even a read-only connection would leave files beside it."""
    return not (_cannot_write(path) or _cannot_write(path.parent))


def _table_names(path: Path) -> set[str]:
    """The tables of a SQLite file, read through a read-only connection (see `_is_sqlite_file`
    on why never through a plain open); empty when it cannot tell."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return set()
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.OperationalError:
        return set()  # locked, or unreadable for now: it cannot tell
    # A sqlite3.DatabaseError itself ("database disk image is malformed", a file cut short) goes
    # on: the file is damaged, not empty, and the command says so.
    finally:
        conn.close()


def _require_own_database(path: Path) -> None:
    """No command writes the tracker's tables into another program's SQLite database (one
    holding tables and none of the tracker's)."""
    tables = _table_names(path) - _FOREIGN_OK if path.is_file() and _writable(path) else set()
    if tables and not any(t.startswith("tracker_") for t in tables):
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise InputError(
            f"{str(path)!r} is another program's SQLite database (tables: {shown}): "
            "give the tracker a file of its own with --db"
        )


def _cannot_write(path: Path) -> bool:
    """True when this process may not write `path`, or nobody may by its permission bits
    (which counts for a superuser too: a file made read-only is meant to stay untouched)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def read_only_copy(url: str) -> tempfile.TemporaryDirectory[str] | None:
    """For a SQLite file that may not be written (the file or its folder is read-only): a
    private copy in a temporary folder, taken through a read-only, immutable connection, on
    which the read models can catch up without touching the original. None otherwise."""
    if not url.startswith("sqlite:///"):
        return None
    path = Path(make_url(url).database or "")
    if not path.is_file() or not (_cannot_write(path) or _cannot_write(path.parent)):
        return None
    scratch = tempfile.TemporaryDirectory(prefix="tracker-")
    source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        target = sqlite3.connect(Path(scratch.name) / path.name)
        try:
            source.backup(target)
        finally:
            target.close()
    except sqlite3.DatabaseError as e:
        scratch.cleanup()
        raise InputError(f"{str(path)!r} cannot be read as a SQLite database: {e}") from None
    finally:
        source.close()
    return scratch


def check_campaign_name(name: str) -> str:
    """A campaign name as stored: trimmed, 1 to 200 characters, no line breaks, tabs or
    other control characters (it is printed in prompts, reports and one-line messages)."""
    name = name.strip()
    if not name or len(name) > 200:
        raise InputError("a campaign name must have 1 to 200 characters")
    bad = next((ch for ch in name if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")), None)
    if bad is not None:
        raise InputError(f"a campaign name may not contain control characters such as {bad!r}: {name!r}")
    # One spelling for names that look alike: "ö" typed as one character or as "o" and a
    # combining diaeresis (as some keyboards and file systems give it) names one campaign.
    return unicodedata.normalize("NFC", name)


def _check_sqlite_path(path: Path) -> None:
    if path.is_dir():
        raise InputError(f"database path {str(path)!r} is a directory")
    if not path.parent.resolve().is_dir():
        raise InputError(f"database path {str(path)!r}: folder {str(path.parent)!r} does not exist")
    if path.exists() and not _is_sqlite_file(path):
        raise InputError(f"{str(path)!r} is not a SQLite database")
    _require_own_database(path)


def _is_sqlite_file(path: Path) -> bool:
    """Whether SQLite reads the file as a database, asked through SQLite itself.

    Never open the file directly: POSIX drops every lock a process holds on a file when
    any descriptor of that file is closed, so a plain open-read-close here would silently
    release the locks of another connection of this process (and other processes could
    then checkpoint and delete the WAL under it). SQLite's own connections share one lock
    table per file and defer such closes.
    """
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=rw", uri=True, timeout=5)
    except sqlite3.Error:
        return True  # cannot tell (e.g. read-only): the real open reports the problem
    try:
        conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as e:
        return "not a database" not in str(e)
    finally:
        conn.close()
    return True


@dataclass(frozen=True)
class ImportMark:
    """What `tracker import` noted here about a campaign it recorded: the name it was given and
    the head (last event) of the log recorded; head 0 for a mark of an earlier tracker, which
    noted neither, None for a row no import wrote."""

    name: str | None
    head_seq: int | None
    head_hash: str | None

    @property
    def legacy(self) -> bool:
        return self.head_seq == 0


def mark_imported(conn: Connection, campaign_id: str, name: str, head_seq: int, head_hash: str) -> None:
    """Note, in the import's own transaction, that the campaign was imported here (see
    `imported_table`); `Registry.upgrade_import_marks` must have run."""
    conn.execute(
        imported_table.insert().values(campaign_id=campaign_id, name=name, head_seq=head_seq, head_hash=head_hash)
    )


def _marks_upgraded(conn: Connection) -> bool:
    columns = {c["name"] for c in inspect(conn).get_columns(imported_table.name)}
    return set(_MARK_COLUMNS) <= columns


# Built once: a server looks a campaign up on every request, and a statement built anew each
# time costs SQLAlchemy twice the query itself to recognise as one it compiled before.
_LOOKUP = select(campaigns_table.c.campaign_id).where(campaigns_table.c.name == bindparam("name"))
_LOOKUP_SQL = f"SELECT campaign_id FROM {campaigns_table.name} WHERE name = ?"
_NAME_OF = select(campaigns_table.c.name).where(campaigns_table.c.campaign_id == bindparam("campaign_id"))


class Registry:
    """Campaign names and dice seeds, in the same database as the events."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # Every side table, this module's and the service's, is made and changed by the
        # versioned upgrades; at this tracker's head this costs one query.
        ensure(engine)
        self._marks_ready = False  # the import marks have their name and head columns
        # Where a name is looked up: a pooled connection, unless `read_names_on` says otherwise.
        self._read: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]] | None = None

    def read_names_on(self, read: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]) -> None:
        """Look names up with `read` (driver SQL): a server on a SQLite file looks one up on
        every request, and on the connection that writes, whose page cache its own last write
        left warm, the query costs a fraction of what it costs on a pooled connection, which
        must drop its cache and read the pages again after every write."""
        self._read = read

    def names(self) -> list[tuple[str, str]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(campaigns_table.c.name, campaigns_table.c.campaign_id).order_by(campaigns_table.c.name)
            )
            return [(r[0], r[1]) for r in rows]

    def lookup(self, name: str) -> str | None:
        """The campaign registered under `name`, spelled in any Unicode normal form and with
        spaces around it or not (names are stored trimmed and composed, NFC, by
        `check_campaign_name`)."""
        found = self._lookup(name)
        stored = unicodedata.normalize("NFC", name.strip())
        if found is None and stored != name:
            found = self._lookup(stored)
        return found

    def _lookup(self, name: str) -> str | None:
        if self._read is not None:
            rows = self._read(_LOOKUP_SQL, (name,))
            return str(rows[0][0]) if rows else None
        with self.engine.connect() as conn:
            return conn.execute(_LOOKUP, {"name": name}).scalar()

    def name_of(self, campaign_id: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(_NAME_OF, {"campaign_id": campaign_id}).scalar()

    def import_mark(self, campaign_id: str) -> ImportMark | None:
        """What `tracker import` noted about the campaign, if it recorded it here. Only reads:
        a table an earlier tracker made, without the name and head, gives marks of that tracker."""
        where = imported_table.c.campaign_id == campaign_id
        with self.engine.connect() as conn:
            if not _marks_upgraded(conn):
                found = conn.execute(select(imported_table.c.campaign_id).where(where)).first()
                return None if found is None else ImportMark(None, 0, "")
            row = conn.execute(
                select(imported_table.c.name, imported_table.c.head_seq, imported_table.c.head_hash).where(where)
            ).first()
        return None if row is None else ImportMark(row[0], row[1], row[2])

    def upgrade_import_marks(self) -> None:
        """Give the import marks the name and head columns, once, before an import writes one.
        The rows already there were written by an earlier tracker and are marked so (head 0) in
        the same transaction, so that a row written later without a head never passes for one."""
        if self._marks_ready:
            return
        with self.engine.connect() as conn:
            self._marks_ready = _marks_upgraded(conn)
        if self._marks_ready:
            return
        try:
            with self.engine.connect() as conn:
                if conn.dialect.name == "sqlite":
                    # pysqlite opens no transaction for DDL: open one, so that the columns and
                    # the marking of the rows already there commit together or not at all.
                    conn.exec_driver_sql("BEGIN IMMEDIATE")
                for name in _MARK_COLUMNS:
                    kind = imported_table.c[name].type.compile(conn.dialect)
                    conn.exec_driver_sql(f"ALTER TABLE {imported_table.name} ADD COLUMN {name} {kind}")
                registered = select(campaigns_table.c.name).where(
                    campaigns_table.c.campaign_id == imported_table.c.campaign_id
                )
                conn.execute(update(imported_table).values(name=registered.scalar_subquery(), head_seq=0, head_hash=""))
                conn.commit()
        except DBAPIError:
            # Another process upgraded the table at the same time: its upgrade stands.
            with self.engine.connect() as conn:
                if not _marks_upgraded(conn):
                    raise
        self._marks_ready = True

    def is_served(self, campaign_id: str) -> bool:
        query = select(served_table.c.campaign_id).where(served_table.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            return conn.execute(query).first() is not None

    def claim(self, name: str, campaign_id: str) -> str:
        """Register a name, or return the ID already registered under it."""
        try:
            with self.engine.begin() as conn:
                conn.execute(campaigns_table.insert().values(name=name, campaign_id=campaign_id))
        except IntegrityError:
            pass
        existing = self.lookup(name)
        assert existing is not None
        return existing

    # Where the seeds are kept, as a refusal to roll names it (D5).
    seeds_kept_in = "this database"

    def seed(self, campaign_id: str, epoch: int, new_seed: str | None = None) -> str | None:
        """The seed of a dice epoch; with `new_seed`, store it first unless one is there already.

        First writer wins, so two racing writers end up committing to the same seed.
        """
        if new_seed is not None:
            try:
                with self.engine.begin() as conn:
                    conn.execute(seeds_table.insert().values(campaign_id=campaign_id, epoch=epoch, seed=new_seed))
            except IntegrityError:
                pass
        with self.engine.connect() as conn:
            return conn.execute(
                select(seeds_table.c.seed).where(seeds_table.c.campaign_id == campaign_id, seeds_table.c.epoch == epoch)
            ).scalar()
