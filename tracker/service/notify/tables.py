"""The notification tables: the channels a campaign's players are told on, the outbox of
hand-offs and the log of delivery attempts; made when missing, and a channel's target as shown."""

from __future__ import annotations

import re
import time

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, UniqueConstraint
from sqlalchemy.engine import Engine

from domain.errors import InputError

metadata = MetaData()
channels_table = Table(
    "tracker_notify_channels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(36), nullable=False, index=True),
    Column("kind", String(16), nullable=False),  # webhook | email
    Column("target", Text, nullable=False),  # the URL or address: shown masked, never logged
    Column("format", String(16), nullable=False),  # json | discord | slack | email
    Column("player", String(100), nullable=True),  # None: the campaign's group channel
    Column("mention", String(200), nullable=True),
    Column("created_at", Float, nullable=False),
    # Added after the first release: a table made before has them added on first use (see
    # `ensure_tables`). Seconds between reminders (None: none), and whether an e-mail carries
    # the export of the events since the player last acted.
    Column("remind", Float, nullable=True),
    Column("attach_export", Integer, nullable=True),
)
# The columns `ensure_tables` adds to a channel table made before them.
ADDED_CHANNEL_COLUMNS = ("remind", "attach_export")
# One row per channel per hand-off: the unique key makes a hand-off written twice (an action
# run again after a conflict writes its own version) impossible to deliver twice.
outbox_table = Table(
    "tracker_notify_outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(36), nullable=False),
    # No foreign key: a removed channel's delivered messages stay in the log.
    Column("channel_id", Integer, nullable=False),
    Column("version", Integer, nullable=False),  # the campaign's version after the action
    Column("payload", Text, nullable=False),  # JSON: the hand-off, see `handoff`
    Column("created_at", Float, nullable=False),
    # pending | delivered | failed | superseded (never sent: see `notify.delivery.stale`)
    Column("status", String(16), nullable=False, default="pending"),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Float, nullable=False),
    Column("delivered_at", Float, nullable=True),
    Column("last_error", Text, nullable=True),
    UniqueConstraint("channel_id", "campaign_id", "version", name="tracker_notify_once"),
)
attempts_table = Table(
    "tracker_notify_attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("outbox_id", Integer, nullable=False, index=True),
    Column("at", Float, nullable=False),
    Column("ok", Integer, nullable=False),
    Column("status", Text, nullable=False),  # an HTTP status or the error's first line
)

FORMATS = ("json", "discord", "slack", "email")
# An override request (RK3) records no event, so its hand-off's row takes a version of its own
# below every test message's (-1, -2, ...): -(OVERRIDE_VERSIONS + the request's number).
OVERRIDE_VERSIONS = 2**30


class NotifyError(InputError):
    """A channel that cannot be added, found or reached."""


def ensure_tables(engine: Engine) -> None:
    """The notification tables, made when missing (like the other side tables). Looked for
    first without a transaction, so an action on a database that has them commits nothing
    more than its own events."""
    from sqlalchemy import inspect

    inspector = inspect(engine)
    if all(inspector.has_table(table.name) for table in metadata.sorted_tables):
        _add_channel_columns(engine, {c["name"] for c in inspector.get_columns(channels_table.name)})
        return
    from sqlalchemy.exc import DatabaseError

    for attempt in range(_CREATE_ATTEMPTS):
        try:
            metadata.create_all(engine, checkfirst=True)
            return
        except DatabaseError:
            # Writers opening a fresh database together race to make the tables: the one that
            # lost finds one made ("already exists") and goes on once all are, making any the
            # winner has not made yet itself; anything else is raised.
            if all(inspect(engine).has_table(table.name) for table in metadata.sorted_tables):
                return
            if attempt == _CREATE_ATTEMPTS - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


_CREATE_ATTEMPTS = 5


def _add_channel_columns(engine: Engine, present: set[str]) -> None:
    """Give a channel table made before `remind` and `attach_export` those columns, once."""
    from sqlalchemy import inspect
    from sqlalchemy.exc import DBAPIError

    missing = [name for name in ADDED_CHANNEL_COLUMNS if name not in present]
    if not missing:
        return
    try:
        with engine.begin() as conn:
            for name in missing:
                kind = channels_table.c[name].type.compile(conn.dialect)
                conn.exec_driver_sql(f"ALTER TABLE {channels_table.name} ADD COLUMN {name} {kind}")
    except DBAPIError:
        # Another process added them at the same time: its columns stand.
        columns = {c["name"] for c in inspect(engine).get_columns(channels_table.name)}
        if not set(ADDED_CHANNEL_COLUMNS) <= columns:
            raise


def mask(target: str) -> str:
    """A channel's URL or address as shown after it is added: enough to tell two apart."""
    if "@" in target and "://" not in target:
        user, _, host = target.partition("@")
        return f"{user[:1]}***@{host}"
    from urllib.parse import urlsplit

    scheme, _, rest = target.partition("://")
    # The host as the sender reads it: it ends where the path, the query or the fragment
    # begins (a webhook whose secret is its query, `https://hooks.example?token=...`, has no
    # path), after any user and password.
    try:
        netloc = urlsplit(target).netloc
    except ValueError:
        netloc = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host = re.split(r"[\\\s]", netloc.rsplit("@", 1)[-1], maxsplit=1)[0]
    return f"{scheme}://{host}/***" if rest else "***"
