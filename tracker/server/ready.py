"""The checks `/ready` runs: the database answers and may be written, the key store is readable
and is the league's, and the schema is current."""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy import func, inspect, literal, select
from sqlalchemy.exc import SQLAlchemyError

from tracker.server.keys import KeyedRegistry
from tracker.server.responses import outage
from tracker.server.served import ServedTracker, file_identity
from tracker.storage.store import campaigns_table, seeds_table, served_table, sqlite_file

log = logging.getLogger("tracker.server")
# The reason each check of each database last failed for, as logged: a probe every few seconds
# through an outage said the same line each time (hundreds an hour); it is said once, again when
# the reason changes, and once when the check passes again.
_failing: dict[tuple[str, str], str] = {}


def _failed(t: ServedTracker, check: str, reason: str) -> None:
    key = (t.safe_url, check)
    if _failing.get(key) != reason:
        _failing[key] = reason
        log.warning("ready check %s failed: %s (said again only if the reason changes)", check, reason)


def _passed(t: ServedTracker, check: str) -> None:
    if _failing.pop((t.safe_url, check), None) is not None:
        log.info("ready check %s passes again", check)


def database_answers(t: ServedTracker) -> bool:
    """The database answers, and this server may record to it: one it may only read (a file
    whose permissions a restore changed, say) is read from a private copy, and every action
    would be refused."""
    with t.engine.connect() as conn:
        conn.execute(select(literal(1))).scalar()
    if t.app.refuse_saves is not None:
        _failed(t, "database", "the database is read-only to this server")
        return False
    problem = file_replaced(t)
    if problem is not None:
        _failed(t, "database", problem)
        return False
    return True


def file_replaced(t: ServedTracker) -> str | None:
    """Why the SQLite file at the server's path is no longer the one it opened (a restore that
    moved a copy into its place, a file deleted), or None. The server's connections keep the
    file they opened: every action is answered and recorded there, in a file nobody will read
    again, while readers that connect afresh read the new one."""
    opened = getattr(t, "opened_file", None)
    if opened is None:
        return None
    now = file_identity(t.url)
    if now == opened:
        return None
    what = "removed" if now is None else "replaced by another file"
    return (
        f"the database file {t.safe_url} was {what} while this server had it open (a restore?): "
        "what the server records goes to the file it opened; restart the server (restore with it stopped)"
    )


def keys_readable(t: ServedTracker) -> bool:
    """The key store is there, its seeds can be read (a SQLite file deleted under a running
    server is not made again, empty, by the check), and it is the league's (`foreign_keys`)."""
    registry = t.registry
    if not isinstance(registry, KeyedRegistry):
        return False
    path = sqlite_file(registry.keys.url.render_as_string(hide_password=False))
    if path is not None and not path.is_file():
        return False
    with registry.keys.connect() as conn:
        conn.execute(select(seeds_table.c.epoch).limit(1)).all()
    problem = foreign_keys(t)
    if problem is not None:
        _failed(t, "keys", problem)
        return False
    return True


# How many of the campaigns served first, and of those served last, `foreign_keys` looks for
# in the key store: enough to tell the league's store (an older copy of it too) from another,
# and the check stays as cheap in a league of thousands.
LOOKED_FOR = 50


def foreign_keys(t: ServedTracker) -> str | None:
    """Why the key store is not the league's, or None: campaigns of the database were served
    (their seeds went into a server's key store) and this one holds the seeds of none of them,
    as a store made empty by a server started from another folder (the default
    `tracker-keys.db` is the folder's) or on another host with a file for `--keys`. Its
    server would refuse every auto die of those campaigns (D4). A store holding some of them
    is the league's: one restored from an older copy lacks the newest campaigns' seeds, which
    no check can give back, and refusing the whole server for them would stop every other
    campaign too."""
    registry = t.registry
    if not isinstance(registry, KeyedRegistry):
        return None
    try:
        with t.engine.connect() as conn:
            served = conn.execute(select(func.count()).select_from(served_table)).scalar() or 0
            looked_for = {
                campaign_id
                for order in (served_table.c.since.asc(), served_table.c.since.desc())
                for campaign_id in conn.execute(
                    select(served_table.c.campaign_id).order_by(order).limit(LOOKED_FOR)
                ).scalars()
            }
    except SQLAlchemyError:
        return None  # the campaign database does not answer: its own check says so, not the keys'
    if not looked_for:
        return None
    with registry.keys.connect() as conn:
        held = conn.execute(select(seeds_table.c.campaign_id).where(seeds_table.c.campaign_id.in_(looked_for)).limit(1))
        if held.first() is not None:
            return None
    return (
        f"the key store holds the dice seeds of none of the {served} campaign(s) served from this database: "
        "it is not the league's (was the server started with another --keys, or from another folder, whose "
        "tracker-keys.db is a new one?); the auto dice of the league's campaigns cannot be rolled here (D4, D5)"
    )


def schema_current(t: ServedTracker) -> bool:
    """The log's and the side tables are there, the side tables at this tracker's head revision
    (`tracker db current`), and the read models of this tracker's schema."""
    from projections import schema as views
    from tracker.service.players import players_table, public_table, requests_table
    from tracker.storage.migrations import HEAD, recorded

    tables = [t.recorder.table, campaigns_table, served_table, players_table, requests_table, public_table]
    with t.engine.connect() as conn:
        inspector = inspect(conn)
        if not all(inspector.has_table(table.name, schema=table.schema) for table in [*tables, views.tracking]):
            return False
        found = conn.execute(select(views.tracking.c.schema).where(views.tracking.c.name == views.NAME)).scalar()
        revision = recorded(conn)
    if revision != HEAD:
        _failed(t, "schema", f"schema not at head (side tables at {revision}, head {HEAD})")
        return False
    return bool(found == views.SCHEMA)


READY_CHECKS: dict[str, Callable[[ServedTracker], bool]] = {
    "database": database_answers,
    "keys": keys_readable,
    "schema": schema_current,
}


def readiness(t: ServedTracker, outcome: dict[str, str]) -> None:
    """Each check's outcome into `outcome` as it ends, "ok" or "failed" (why is logged, not
    answered: it could name a path)."""
    for name, check in READY_CHECKS.items():
        try:
            outcome[name] = "ok" if check(t) else "failed"
        except Exception as e:  # noqa: BLE001 - a check that cannot run has failed
            # The database's own reason when it does not answer (the operator's first
            # question); for any other error its kind alone, as its text may hold a URL.
            _failed(t, name, outage(e) or type(e).__name__)
            outcome[name] = "failed"
        if outcome[name] == "ok":
            _passed(t, name)
