"""`tracker db upgrade` on a shared PostgreSQL database while another session holds a side table
(a backup by pg_dump, a server's transaction): it gives up after a bounded wait, in one line,
changing nothing, instead of waiting as long as the backup runs with every query on that table
queued behind it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from tests.conftest import PG_URL
from tests.test_migrations import pg_problem
from tracker.cli.main import cli
from tracker.storage import migrations


@pytest.fixture
def league_at_0004() -> Iterator[str]:
    """A league's PostgreSQL database of its own, its side tables as revision 0004 left them."""
    problem = pg_problem()
    if problem:
        message = f"no PostgreSQL server answers at {PG_URL} ({problem})"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must run the PostgreSQL tests")
        pytest.skip(message)
    import psycopg

    name = f"tracker_locks_{uuid.uuid4().hex[:12]}"
    admin = PG_URL.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    try:
        done = CliRunner().invoke(cli, ["--db", url, "new", "autumn", "--scenario", "north-sea-1914"])
        assert done.exit_code == 0, done.output
        with psycopg.connect(make_url(url).set(drivername="postgresql").render_as_string(False)) as conn:
            conn.execute("ALTER TABLE tracker_notify_channels DROP COLUMN remind, DROP COLUMN attach_export")
            conn.execute("UPDATE alembic_version SET version_num = '0004'")
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_db_upgrade_gives_up_in_one_line_while_a_backup_holds_a_table(
    league_at_0004: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    url = league_at_0004
    monkeypatch.setattr(migrations, "LOCK_WAIT_SECONDS", 1)
    # Without a bound the upgrade waited as long as the backup ran: here the statement's own
    # timeout ends it, in other words than the ones the test looks for.
    monkeypatch.setenv("PGOPTIONS", "-c statement_timeout=30000")
    backup = psycopg.connect(make_url(url).set(drivername="postgresql").render_as_string(False))
    try:
        # As pg_dump does: one transaction reading every table, holding them until it ends.
        backup.execute("SELECT count(*) FROM tracker_notify_channels").fetchall()
        done = CliRunner().invoke(cli, ["--db", url, "db", "upgrade"])
        lines = done.output.strip().splitlines()
        assert done.exit_code == 2 and len(lines) == 1, done.output
        assert "another session held them for over 1 s" in lines[0] and "nothing was changed" in lines[0]
        assert "Traceback" not in done.output
    finally:
        backup.rollback()
        backup.close()
    current = CliRunner().invoke(cli, ["--db", url, "db", "current"])
    assert current.output.startswith("Revision 0004, behind"), current.output
    again = CliRunner().invoke(cli, ["--db", url, "db", "upgrade"])
    assert again.exit_code == 0 and "Upgraded from 0004 to 0005" in again.output, again.output
