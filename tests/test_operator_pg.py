"""What a league's operator meets on a shared PostgreSQL database: an account that may not read
the side tables is told so (never that the tables need an upgrade); a key store that is the
campaign database named another way, or that cannot be opened, is refused in one line (D5); and
a restart of PostgreSQL under a running tracker costs no request."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from domain.errors import InputError
from tracker.cli.main import cli
from tracker.server.served import ServedTracker
from tracker.service.application import Tracker


def _campaign_in(db: str, name: str) -> None:
    with Tracker(db) as t:
        t.create(name, scenario="north-sea-1914", dice="auto")


@pytest.fixture
def outsider(pg_url: str) -> Iterator[str]:
    """The URL of pg_url's database for a login role with no rights on its tables (an account
    the operator has not granted them to), dropped afterwards."""
    role = f"tracker_outsider_{uuid.uuid4().hex[:10]}"
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f"CREATE ROLE {role} LOGIN PASSWORD 'outsider-pw'"))
    except Exception as e:  # noqa: BLE001 - a server where the tests may not make roles
        admin.dispose()
        pytest.skip(f"cannot create a PostgreSQL role for the test ({type(e).__name__})")
    try:
        yield make_url(pg_url).set(username=role, password="outsider-pw").render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = :r"), {"r": role})
            conn.execute(text(f"DROP ROLE IF EXISTS {role}"))
        admin.dispose()


def test_db_current_as_an_account_without_rights_names_the_refusal_not_an_upgrade(
    pg_url: str, outsider: str, unique_name: str
) -> None:
    _campaign_in(pg_url, unique_name)
    runner = CliRunner()
    for args in (["db", "current"], ["db", "upgrade"], ["--campaign", unique_name, "state"]):
        result = runner.invoke(cli, ["--db", outsider, *args])
        assert result.exit_code == 2, result.output
        assert "permission denied" in result.output, result.output
        assert "needs" not in result.output and "revision" not in result.output, result.output
        assert "outsider-pw" not in result.output
        assert len(result.output.strip().splitlines()) == 1, result.output


def _other_spelling(url: str) -> str:
    """`url` naming the same PostgreSQL database another way: its default port spelled out or
    left out, or localhost for 127.0.0.1."""
    parsed = make_url(url)
    # URL.set takes None for "unchanged": a port is left out through _replace.
    if parsed.port in (None, 5432):
        other = parsed._replace(port=None if parsed.port else 5432)
        return other.render_as_string(hide_password=False)
    if parsed.host in ("127.0.0.1", "localhost"):
        host = "localhost" if parsed.host == "127.0.0.1" else "127.0.0.1"
        return parsed.set(host=host).render_as_string(hide_password=False)
    pytest.skip(f"no second spelling known for {parsed.render_as_string(hide_password=True)}")


def test_d5_a_key_store_that_is_the_campaign_database_spelled_otherwise_is_refused(
    pg_url: str, unique_name: str
) -> None:
    _campaign_in(pg_url, unique_name)
    with pytest.raises(InputError, match="--keys must name another database than the campaigns'"):
        ServedTracker(pg_url, keys=_other_spelling(pg_url)).close()


def test_d5_a_key_store_linked_to_the_campaign_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    _campaign_in(str(db), "autumn")
    keys = tmp_path / "keys.db"
    os.link(db, keys)
    keys.chmod(0o600)
    with pytest.raises(InputError, match="--keys must name another database than the campaigns'"):
        ServedTracker(str(db), keys=str(keys)).close()


def test_d5_a_key_store_database_that_does_not_exist_is_one_line_naming_it(pg_url: str, unique_name: str) -> None:
    _campaign_in(pg_url, unique_name)
    missing = f"tracker_no_keys_{uuid.uuid4().hex[:10]}"
    keys = make_url(pg_url).set(database=missing, password="keys-pw").render_as_string(hide_password=False)
    with pytest.raises(InputError) as refused:
        ServedTracker(pg_url, keys=keys).close()
    message = str(refused.value)
    assert message.startswith("cannot open the key store ") and missing in message, message
    assert "keys-pw" not in message and "\n" not in message, message


def test_a_tracker_on_postgresql_answers_after_its_pooled_connections_were_cut(pg_url: str, unique_name: str) -> None:
    """As after a restart of PostgreSQL under a running server: the next request is answered."""
    _campaign_in(pg_url, unique_name)
    with Tracker(pg_url) as t:
        held = [t.engine.connect() for _ in range(3)]
        pids = [c.execute(text("SELECT pg_backend_pid()")).scalar() for c in held]
        for c in held:
            c.close()  # back to the pool, whose connections the cut then kills
        admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                for pid in pids:
                    conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        finally:
            admin.dispose()
        assert unique_name in t.campaign_names()
        assert t.campaign_names().count(unique_name) == 1
