"""The tables of the board's read models (`projections.board` keeps them, `projections.views`
reads them): the tracking position, the followed campaigns, the event index and the unit, NTR,
nation and per-nation tally histories, with their keys and indexes; and creating them, or replacing the views
of an earlier schema."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    DDL,
    Column,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    event,
    insert,
    select,
)
from sqlalchemy.engine import Connection, Engine

from domain.errors import TrackerError

NAME = "board"
# Bumped whenever a view changes shape or what it holds (6: the wording of three summaries;
# 7: what an interception or ASW combat leaves, BattleEnded; 8: the zones and nations an
# adjustment names; 9: "1 hit ... lost: no unit there may take it"; 10: a naval battle's side
# named by its units' nations, "attacks Britain and France" (the deciding nation first, then
# the others in turn order, as a battle's recorded words name a side), an ally's units a choice
# names, "of France", and the hits of a class or lost named by the nation placing them, "for
# Britain to place", and "United States' NTR" for a name ending in s; the battle of a reroll,
# undo, redo or typed dice (and its zone), and the nations of an ally's units a battle event
# names, in the event index; a unit type as words, "aircraft
# carrier", "2 destroyers" placed, and a technology as words, "Advanced ASW"; a seed reveal's
# rule D5; a battle's events indexed under the zone of the battle as the state holds it open,
# an undo's battles put back, not of every battle seen, so that views resumed by a later process
# hold what a rebuild holds; and in its words, hits lost "2 hits for Britain to place are lost:
# no unit there may take them", "no opening fire by the submarines of Germany", "2 of
# Britain's NTR destroyed", an aircraft "shot down", not sunk, and unit IDs in the order a
# player counts them, GB-BB8 before GB-BB10; 11: an aircraft "shot down" by its type in the
# campaign's own ruleset (a house one's abbreviations too), an override undo's dice rolls as
# runs, "dice rolls 59-470 undone", and the NTR a collection lost to convoy attacks said as NTR,
# "2 NTR lost to convoy attacks"; 12: a phase in words, "round 1, Germany: combat movement",
# "no place to land when noncombat movement ends"): older views are dropped and rebuilt from
# the log, so a database whose views an earlier build wrote verifies against a rebuild.
SCHEMA = 12
# Adjustments (AD1) are the only events that change territory owners, and few: a partial index
# of them lets the owners at any event be folded from them without scanning the whole index.
ADJUSTED = "Adjusted"


def _without_rowid(*args: Any, **kwargs: Any) -> Table:
    # On SQLite the primary key is then the table itself: no second copy of every key.
    return Table(*args, sqlite_with_rowid=False, **kwargs)


metadata = MetaData()
tracking = Table(
    "tracker_projection_tracking",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("notification_id", Integer, nullable=False),
    Column("schema", Integer, nullable=False),
)
campaigns = Table(
    "tracker_projection_campaigns",
    metadata,
    Column("key", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(36), nullable=False, unique=True),
    Column("last_seq", Integer, nullable=False),
    Column("last_hash", String(64), nullable=False),
    Column("stopped_seq", Integer),
    Column("problem", Text),
)
event_index = _without_rowid(
    "tracker_event_index",
    metadata,
    Column("c", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("turn", Integer, nullable=False),
    Column("round", Integer, nullable=False),
    Column("nation", String(100), nullable=False),
    Column("phase", String(40), nullable=False),
    Column("kind", String(40), nullable=False),
    Column("rule", String(10)),
    Column("battle", Integer),
    Column("zones", Text, nullable=False),  # "|zone|zone|" for LIKE filters
    Column("nations", Text, nullable=False),  # "|nation|nation|"
    Column("summary", Text, nullable=False),
    Column("undone_by", Integer),
    PrimaryKeyConstraint("c", "seq"),
    Index("tracker_event_index_turn", "c", "turn", "seq"),
)
# Only adjustments' rows, in a partial index a query reads when its WHERE names the kind as a
# literal. Written as DDL that SQLite and PostgreSQL both take: declared on the table, its
# `postgresql_where` would load SQLAlchemy's PostgreSQL dialect for every command that reads a
# SQLite file.
ADJUSTED_INDEX = DDL(  # type: ignore[no-untyped-call]
    f"CREATE INDEX IF NOT EXISTS tracker_event_index_adjusted ON {event_index.name} (c, seq) WHERE kind = '{ADJUSTED}'"
)
event.listen(event_index, "after_create", ADJUSTED_INDEX)
unit_history = _without_rowid(
    "tracker_unit_history",
    metadata,
    Column("c", Integer, nullable=False),
    Column("from_seq", Integer, nullable=False),
    Column("unit_id", String(40), nullable=False),
    Column("type", String(40), nullable=False),
    Column("nation", String(100), nullable=False),
    Column("zone", String(100), nullable=False),
    Column("damage", Integer, nullable=False),
    Column("to_seq", Integer),
    PrimaryKeyConstraint("c", "from_seq", "unit_id"),
)
ntr_history = _without_rowid(
    "tracker_ntr_history",
    metadata,
    Column("c", Integer, nullable=False),
    Column("from_seq", Integer, nullable=False),
    Column("nation", String(100), nullable=False),
    Column("zone", String(100), nullable=False),
    Column("count", Integer, nullable=False),
    Column("to_seq", Integer),
    PrimaryKeyConstraint("c", "from_seq", "nation", "zone"),
)
nation_history = _without_rowid(
    "tracker_nation_history",
    metadata,
    Column("c", Integer, nullable=False),
    Column("from_seq", Integer, nullable=False),
    Column("nation", String(100), nullable=False),
    Column("balance", Integer, nullable=False),
    Column("ntr_lost", Integer, nullable=False),
    Column("tech", Text, nullable=False),  # JSON {technology: level}
    Column("to_seq", Integer),
    PrimaryKeyConstraint("c", "from_seq", "nation"),
)
# Each nation's totals (units, their cost by the ruleset, NTR at sea), kept as rows of their
# own: a chart of many points then reads a row per nation and point, not every unit and NTR
# counter valid at each point.
tally_history = _without_rowid(
    "tracker_tally_history",
    metadata,
    Column("c", Integer, nullable=False),
    Column("from_seq", Integer, nullable=False),
    Column("nation", String(100), nullable=False),
    Column("units", Integer, nullable=False),
    Column("fleet_cost", Integer, nullable=False),
    Column("ntr_at_sea", Integer, nullable=False),
    Column("to_seq", Integer),
    PrimaryKeyConstraint("c", "from_seq", "nation"),
)
VIEWS = (campaigns, event_index, unit_history, ntr_history, nation_history, tally_history)
HISTORIES = {"unit": unit_history, "ntr": ntr_history, "nation": nation_history, "tally": tally_history}
# Views of earlier schemas, dropped on upgrade.
_RETIRED = ("tracker_phase_index", "tracker_projection_stopped")


def _schema_found(conn: Connection) -> int | None:
    """The schema of the views the tracking row names, or None (no tracking table yet, or one
    of an earlier shape)."""
    try:
        found = conn.execute(select(tracking.c.schema).where(tracking.c.name == NAME)).scalar()
    except Exception:  # noqa: BLE001 - no tracking table yet, or one of an earlier shape
        return None
    return None if found is None else int(found)


def ensure_schema(engine: Engine) -> None:
    """Create the views, or drop and recreate views of an earlier schema (they are rebuilt
    from the log on the next read). Views of a later schema, made by a newer release, are
    refused, not dropped: two releases on one database would otherwise rebuild them in turn."""
    with engine.connect() as conn:
        found = _schema_found(conn)
    if found == SCHEMA:
        return
    if found is not None and found > SCHEMA:
        raise TrackerError(
            f"this database's read models were made by a newer release of the tracker (projections schema "
            f"{found}; this release reads {SCHEMA}): upgrade the tracker to use it"
        )
    from sqlalchemy import inspect

    with engine.begin() as conn:
        if conn.dialect.name == "sqlite":
            # pysqlite runs each DDL statement in a transaction of its own: one write transaction
            # makes dropping and recreating the views one change, which no reader sees half done
            # ("no such table"), and a second process upgrading at once waits, then finds them made.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            if _schema_found(conn) == SCHEMA:
                return
        existing = set(inspect(conn).get_table_names())
        stale = found is not None or (
            tracking.name in existing and "schema" not in {c["name"] for c in inspect(conn).get_columns(tracking.name)}
        )
        if stale:
            for table in [*_RETIRED, *(t.name for t in reversed(metadata.sorted_tables))]:
                if table in existing:
                    conn.exec_driver_sql(f"DROP TABLE {table}")
        metadata.create_all(conn, checkfirst=True)
        if conn.dialect.name == "sqlite":
            _plan_hints(conn)
        # The tracking row says which schema the views have, so the next process that opens
        # the database reads it and returns above without writing (and without waiting for a
        # writer's lock).
        insert_tracking_row(conn)


def insert_tracking_row(conn: Connection) -> None:
    """The tracking row at position 0, unless there is one: another process may make it at
    the same moment (a `projections rebuild` deletes it and makes it again; on PostgreSQL both
    would see none and the second insert fail), so an existing row is left as it is."""
    values = {"name": NAME, "notification_id": 0, "schema": SCHEMA}
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        conn.execute(postgresql.insert(tracking).values(**values).on_conflict_do_nothing())
    elif conn.dialect.name == "sqlite":
        from sqlalchemy.dialects import sqlite

        conn.execute(sqlite.insert(tracking).values(**values).on_conflict_do_nothing())
    elif conn.execute(select(tracking.c.name).where(tracking.c.name == NAME)).first() is None:
        conn.execute(insert(tracking).values(**values))


def _plan_hints(conn: Connection) -> None:
    """Tell SQLite's planner that one campaign holds many events: without statistics it reads a
    turn's events by scanning the campaign's whole primary key instead of the turn index."""
    conn.exec_driver_sql("ANALYZE sqlite_schema")  # creates sqlite_stat1 if there is none
    conn.exec_driver_sql("DELETE FROM sqlite_stat1 WHERE tbl = ?", (event_index.name,))
    conn.exec_driver_sql(
        "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?), (?, ?, ?)",
        (event_index.name, event_index.name, "1000000 1000000 1")
        + (event_index.name, "tracker_event_index_turn", "1000000 1000000 12 1"),
    )
