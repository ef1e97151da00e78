"""A database the tracker cannot open is refused in one line that names it (no password) and
gives the driver's first line of reason, as `tracker db current` does: no class names, no
SQLAlchemy wrapping."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from tracker.cli.main import cli

# A closed port on this host: the driver refuses at once, with or without a server.
REFUSED = "postgresql+psycopg://nobody:s3cret@127.0.0.1:1/none"


def refusal(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == 2, result.output  # the --db input is wrong
    (line,) = result.output.strip().splitlines()
    return line


def assert_plain(line: str) -> None:
    assert "OperationalError" not in line and "psycopg." not in line and "(Background" not in line, line
    assert "sqlalche" not in line.lower(), line


@pytest.mark.parametrize("args", [("state",), ("new", "war", "--scenario", "great-war-1914")])
def test_a_refused_connection_is_one_line_naming_the_database_and_the_drivers_reason(args: tuple[str, ...]) -> None:
    line = refusal(REFUSED, *args)
    assert line.startswith("Error: cannot open database postgresql+psycopg://nobody:***@127.0.0.1:1/none: "), line
    assert "s3cret" not in line
    assert "connection failed" in line and "Connection refused" in line, line
    assert_plain(line)


def test_a_missing_postgresql_database_reads_as_db_current_says_it(pg_url: str) -> None:
    missing = make_url(pg_url).set(database=f"nosuch_{uuid.uuid4().hex[:10]}").render_as_string(hide_password=False)
    shown = make_url(missing).render_as_string(hide_password=True)
    opened = refusal(missing, "state")
    current = refusal(missing, "db", "current")
    assert opened.startswith(f"Error: cannot open database {shown}: "), opened
    assert_plain(opened)
    assert "does not exist" in opened, opened
    # Both say the driver's same first line after naming the database.
    assert opened.split(f"{shown}: ", 1)[1] == current.split(f"{shown}: ", 1)[1]
