"""`tracker db upgrade` on a shared PostgreSQL database while another session holds a side table
(a backup by pg_dump, a server's transaction): it gives up after a bounded wait, in one line,
changing nothing, instead of waiting as long as the backup runs with every query on that table
queued behind it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from tracker.cli.main import cli
from tracker.storage import migrations


@pytest.fixture
def league_at_0004(own_pg: str) -> str:
    """A league's PostgreSQL database of its own, its side tables as revision 0004 left them."""
    import psycopg

    done = CliRunner().invoke(cli, ["--db", own_pg, "new", "autumn", "--scenario", "north-sea-1914"])
    assert done.exit_code == 0, done.output
    with psycopg.connect(make_url(own_pg).set(drivername="postgresql").render_as_string(False)) as conn:
        conn.execute("ALTER TABLE tracker_notify_channels DROP COLUMN remind, DROP COLUMN attach_export")
        conn.execute("UPDATE alembic_version SET version_num = '0004'")
    return own_pg


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
