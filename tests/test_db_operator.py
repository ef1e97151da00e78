"""What an operator meets with `tracker db`: a PostgreSQL database without the tracker's tables
(a mistyped name, another program's database) is refused in one line, as every other command
refuses it, and gets no tables made in it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from tracker.cli.main import cli


@pytest.fixture
def empty_pg(pg_url: str) -> Iterator[str]:
    """A PostgreSQL database of this test's own with no tables in it, dropped afterwards."""
    name = f"tracker_db_empty_{uuid.uuid4().hex[:12]}"
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(pg_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


@pytest.mark.parametrize("command", ["current", "upgrade"])
def test_db_commands_refuse_a_postgresql_database_without_tracker_tables(empty_pg: str, command: str) -> None:
    """`db upgrade` made the twelve side tables in any database it was pointed at (a mistyped
    name, another program's), and `db current` offered that upgrade."""
    engine = create_engine(empty_pg)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE invoices (id integer)"))
    finally:
        engine.dispose()
    done = CliRunner().invoke(cli, ["--db", empty_pg, "db", command])
    lines = done.output.strip().splitlines()
    assert done.exit_code == 2 and len(lines) == 1, done.output
    assert "has no tracker tables" in lines[0] and "tracker db upgrade" not in lines[0], done.output
    assert _tables(empty_pg) == {"invoices"}
