"""Shared fixtures: a Tracker on a fresh SQLite file, and on PostgreSQL when a server answers.

PostgreSQL tests skip with the reason where no server answers (a laptop without one); in CI
(`CI=true`) a missing server is an error instead, so they can never be skipped silently.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tracker.service.application import Tracker

PG_URL = os.environ.get("TRACKER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def pg_problem() -> str | None:
    """Why no PostgreSQL server answers at PG_URL, or None when one does."""
    try:
        import psycopg

        url = PG_URL.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as e:  # noqa: BLE001 - any failure means no usable server
        return f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    return None


def fresh_pg_database(prefix: str) -> Iterator[str]:
    """A PostgreSQL database of its own (named `prefix` and a random tail), dropped afterwards;
    skipped with the reason where no server answers, an error in CI."""
    problem = pg_problem()
    if problem:
        message = f"no PostgreSQL server answers at {PG_URL} ({problem})"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must run the PostgreSQL tests")
        pytest.skip(message)
    import psycopg
    from sqlalchemy.engine import make_url

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = PG_URL.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A database of its own for this test session, dropped at the end, so no run sees
    campaigns left by another."""
    yield from fresh_pg_database("tracker_test")


@pytest.fixture
def own_pg() -> Iterator[str]:
    """A PostgreSQL database of this test's own (its side tables may be dropped and made again)."""
    yield from fresh_pg_database("tracker_own")


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "campaign.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def tracker(db_url: str) -> Iterator[Tracker]:
    with Tracker(db_url) as t:
        yield t


@pytest.fixture
def unique_name() -> str:
    """Campaign names never collide in a PostgreSQL database shared by many test runs."""
    return f"test-{uuid.uuid4().hex[:10]}"


# The reliability catalogue (tests/figures.py): here, in the root conftest, so that the
# pytest-xdist controller, which collects nothing, prints it too.
def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests import secretscan
    from tests.figures import hand_over

    hand_over(session.config)
    secretscan.hand_over(session.config)
    secretscan.finish(session)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    from tests import secretscan
    from tests.figures import take_over

    take_over(node)
    secretscan.take_over(node)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    from tests import secretscan
    from tests.figures import print_figures

    print_figures(terminalreporter, config)
    secretscan.report(terminalreporter, config)


# The servers' logs scanned for secrets at the end of the session (tests/secretscan.py): the
# tokens, seeds and webhook URLs this process makes are collected from the first test on.
@pytest.fixture(scope="session", autouse=True)
def secrets_as_issued() -> Iterator[None]:
    from tests import secretscan

    with secretscan.collecting():
        yield
