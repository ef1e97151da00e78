"""The server's key store for auto dice seeds (D5): outside the campaign database, read only
by the server, so no player who can read (or write) the log can know or choose a die.

`--keys` names a SQLite file, created readable and writable by its owner only (0600) and
refused if anyone else may read it, or a database URL (a separate PostgreSQL database
that only the server's account may open, for several server processes on several hosts).
A seed that the campaign database still holds (a campaign created there before it was
served) is no secret from whoever could read that file: the server reveals it in the log when
it first serves the campaign (`seeds_left`, then a `dice reveal` of its own) and commits to a
fresh seed made here. Only a seed that matches the commitment in the log is used: one someone
wrote into the campaign database later never is. Rows leaving either database are overwritten
on disk (SQLite's secure_delete) and the write-ahead log is truncated after them.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine, delete, inspect, select, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

from domain.dice import commitment
from domain.errors import InputError, Unavailable
from tracker.storage.store import Registry, campaigns_table, database_url, seeds_table, served_table

DEFAULT_KEYS = "tracker-keys.db"
# The key of PostgreSQL's advisory lock held while a key store's table is made.
PG_KEYS_LOCK = 0x74726B6B
_SAME_DATABASE = "--keys must name another database than the campaigns' (D5: seeds never sit in the log database)"


# What a refusal of `--keys` (or TRACKER_KEYS) adds: the option names a store few remember.
_WHAT = "the key store of the dice seeds, D5"


def key_store_url(keys: str | None, log_url: str) -> str:
    """The key store's URL: a URL as given, or a private SQLite file (made 0600 if new)."""
    keys = keys or DEFAULT_KEYS
    path = None if "://" in keys else Path(keys).expanduser()
    if path is not None:
        # Said of --keys: the campaign database's checks below name a "database path".
        if path.is_dir():
            raise InputError(f"--keys {path}: a folder, not a file ({_WHAT})")
        if not path.exists() and not path.parent.resolve().is_dir():
            raise InputError(f"--keys {path}: folder {path.parent} does not exist ({_WHAT})")
    try:
        url = database_url(keys)
    except InputError as e:
        raise InputError(f"--keys: {e} ({_WHAT})") from None
    if _same_database(url, log_url):
        raise InputError(_SAME_DATABASE)
    if path is not None:
        if not path.exists():
            # Another server process may make it between the look and the create: then it is
            # that process's store, which the mode check below judges as any store found.
            try:
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except OSError as e:
                raise InputError(f"--keys {path}: cannot create it: {e.strerror} ({_WHAT})") from None
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise InputError(
                f"key store {str(path)!r} may be read by others (mode {stat.filemode(mode)}): "
                f"it holds the dice seeds; chmod 600 {str(path)!r}"
            )
    return url


def _same_database(a: str, b: str) -> bool:
    ua, ub = make_url(a), make_url(b)
    if ua.get_backend_name() == "sqlite" and ub.get_backend_name() == "sqlite":
        return bool(ua.database and ub.database and Path(ua.database).resolve() == Path(ub.database).resolve())
    return (ua.host, ua.port, ua.database) == (ub.host, ub.port, ub.database)


class KeyedRegistry(Registry):
    """The campaign registry with dice seeds read from and written to the key store."""

    def __init__(self, engine: Engine, keys_url: str, commitments: Callable[[str], list[str]]) -> None:
        super().__init__(engine)
        self.keys: Engine = open_key_store(keys_url)
        self._commitments = commitments
        # Named without its path: a refusal reaches players, and where the server keeps its
        # files is the operator's to know (they started it with --keys).
        self.seeds_kept_in = "this server's key store"

    def seed(self, campaign_id: str, epoch: int, new_seed: str | None = None) -> str | None:
        if new_seed is not None:
            return self._store(campaign_id, epoch, new_seed)
        found = self._stored(campaign_id, epoch)
        return found if found is not None else self._adopt(campaign_id, epoch)

    def _store(self, campaign_id: str, epoch: int, new_seed: str) -> str | None:
        """A fresh seed for an epoch the log does not commit to yet (a new campaign, the next
        epoch of a reveal), so there is none to adopt: written at once, read only when another
        server process (or an attempt of this action that lost a conflict) stored one first."""
        try:
            with self.keys.begin() as conn:
                conn.execute(seeds_table.insert().values(campaign_id=campaign_id, epoch=epoch, seed=new_seed))
            found: str | None = new_seed
        except IntegrityError:
            found = self._stored(campaign_id, epoch)
        if epoch == 0:
            # A campaign's first seed makes it served. A later one follows a seed the key store
            # held already (a reveal publishes it), whose storing or adoption marked it.
            self.mark_served(campaign_id)
        return found

    def _stored(self, campaign_id: str, epoch: int) -> str | None:
        with self.keys.connect() as conn:
            return conn.execute(
                select(seeds_table.c.seed).where(seeds_table.c.campaign_id == campaign_id, seeds_table.c.epoch == epoch)
            ).scalar()

    def _adopt(self, campaign_id: str, epoch: int) -> str | None:
        """Move a seed the campaign database holds into the key store, if the log committed to it."""
        with self.engine.connect() as conn:
            left = conn.execute(
                select(seeds_table.c.seed).where(seeds_table.c.campaign_id == campaign_id, seeds_table.c.epoch == epoch)
            ).scalar()
        if left is None:
            return None
        try:
            commitments = self._commitments(campaign_id)
        except Exception:  # noqa: BLE001 - no campaign recorded (yet): nothing to adopt
            return None
        if epoch >= len(commitments) or commitment(left) != commitments[epoch]:
            return None
        try:
            with self.keys.begin() as conn:
                conn.execute(seeds_table.insert().values(campaign_id=campaign_id, epoch=epoch, seed=left))
        except IntegrityError:
            pass
        self.mark_served(campaign_id)
        with self.engine.begin() as conn:
            overwrite_deleted(conn)
            conn.execute(
                delete(seeds_table).where(seeds_table.c.campaign_id == campaign_id, seeds_table.c.epoch == epoch)
            )
        truncate_wal(self.engine)
        return self._stored(campaign_id, epoch)

    def mark_served(self, campaign_id: str) -> None:
        """Note in the campaign database that this campaign's seeds live in a server's key store."""
        try:
            with self.engine.begin() as conn:
                conn.execute(served_table.insert().values(campaign_id=campaign_id))
        except IntegrityError:
            pass

    def seeds_left(self) -> list[str]:
        """The campaigns whose seeds the campaign database still holds (made there before this
        server served them), to be revealed on first serve (D5)."""
        with self.engine.connect() as conn:
            return sorted(set(conn.execute(select(seeds_table.c.campaign_id)).scalars()))

    def held_here(self, campaign_id: str, epoch: int, committed: str) -> bool:
        """Whether the campaign database holds the seed of this epoch that the log `committed`
        to (its hash): a seed stored for an epoch whose reveal was never recorded (a crash, a
        lost conflict) is no seed of the log's, and no reason to reveal anything."""
        with self.engine.connect() as conn:
            found = conn.execute(
                select(seeds_table.c.seed).where(seeds_table.c.campaign_id == campaign_id, seeds_table.c.epoch == epoch)
            ).scalar()
        return found is not None and commitment(found) == committed

    def close(self) -> None:
        self.keys.dispose()


def open_key_store(keys_url: str) -> Engine:
    """The key store's engine, its seeds table made; one line (InputError) for a store that
    cannot be opened (a database that does not exist, a wrong password) or that holds a
    campaign log."""
    # Pre-pinged on PostgreSQL, as the campaign database's pool is (see `Datastore`): the
    # server outlives a restart of the key store's database too.
    keys = create_engine(keys_url, pool_pre_ping=keys_url.startswith("postgresql"))
    try:
        refuse_log_database(keys)
        make_seeds_table(keys)
    except SQLAlchemyError as e:
        keys.dispose()
        cause = getattr(e, "orig", None) or e
        reason = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        shown = keys.url.render_as_string(hide_password=True)
        # A key store that does not answer (OperationalError) may answer later: said as such.
        gone = isinstance(e, OperationalError)
        raise (Unavailable if gone else InputError)(f"cannot open the key store {shown}: {reason}") from None
    except InputError:
        keys.dispose()
        raise
    return keys


def refuse_log_database(keys: Engine) -> None:
    """Refuse a key store that holds a campaign log: the campaigns' own database named another
    way (`localhost` for `127.0.0.1`, the default port spelled out, a second link to the file),
    which `key_store_url` cannot tell from its URL, or another league's."""
    with keys.connect() as conn:
        if inspect(conn).has_table(campaigns_table.name):
            raise InputError(_SAME_DATABASE)


def make_seeds_table(keys: Engine) -> None:
    """The key store's seeds table, made when missing. Several server processes may open one
    new key store at once: one makes the table, the others find it made."""
    with keys.connect() as conn:
        if inspect(conn).has_table(seeds_table.name):
            return
    with keys.connect() as conn:
        # Look again and make it under the store's write lock, so that no other process makes
        # it between the look and the make.
        if conn.dialect.name == "sqlite":
            # pysqlite opens no transaction for DDL: open one that takes the write lock now.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        elif conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_KEYS_LOCK})
        seeds_table.create(conn, checkfirst=True)
        conn.commit()


def overwrite_deleted(conn: Connection) -> None:
    """On SQLite, have the rows this connection deletes overwritten with zeros in the file, so a
    secret that leaves the database cannot be read back from its free pages (no-op elsewhere)."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("PRAGMA secure_delete = ON")


def truncate_wal(engine: Engine) -> None:
    """On SQLite, copy the write-ahead log into the database and truncate it, so deleted rows
    do not live on in the `-wal` file (best effort: a reader holding a snapshot may keep it)."""
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
