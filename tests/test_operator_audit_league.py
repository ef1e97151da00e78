"""A league server as its operator runs it: a database that stops answering before one of the
server's trackers is first used is an outage (503), not the client's error naming where the
database is; a database the server may only read is said at start and refused to players without
its path; a request line for no route under /api names no route; and a shared database behind
this tracker's head names the database in the upgrade it asks for."""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.support import TRACKER, in_process

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

# A port nothing listens on: a PostgreSQL server that is down.
DOWN_PORT = 5439


def tracker(db: str, *args: str) -> str:
    """A command that sets up a league, run in this process."""
    done = in_process("--db", db, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def request_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    from tracker.server.logs import TextFormatter

    return [TextFormatter().format(r) for r in caplog.records if r.name == "tracker.requests"]


@pytest.fixture
def pg_league(own_pg: str, tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """A served PostgreSQL league with the campaign `autumn`, and the referee's headers."""
    from tracker.server.app import create_app

    tracker(own_pg, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    token = tracker(own_pg, "--campaign", "autumn", "players", "add", "rita", "--referee").strip().splitlines()[-1]
    with TestClient(create_app(own_pg, keys=str(tmp_path / "keys.db"))) as client:
        yield client, {"Authorization": f"Bearer {token}"}


def test_a_database_down_when_a_tracker_is_first_made_is_a_503_that_names_no_database(
    pg_league: tuple[TestClient, dict[str, str]], own_pg: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The server makes its trackers on their first request: PostgreSQL stopped before that
    answered 400 "cannot open database postgresql+psycopg://USER@HOST:PORT/DB: ..." to the
    player (a usage error, with where the database is), and nothing said to try again."""
    from tracker.server.served import ServedTracker

    client, headers = pg_league
    service = client.app.state.service  # type: ignore[attr-defined]
    down = make_url(own_pg).set(port=DOWN_PORT).render_as_string(hide_password=False)
    keys = str(tmp_path / "keys.db")
    for slot in service.readers:
        if slot.tracker is None:
            slot.make = lambda: ServedTracker(down, keys=keys, reads_only=True)
    stripe = service._stripe(service.readers, "autumn")
    assert stripe.tracker is None, "autumn's reads must go to a tracker not made yet"
    with caplog.at_level(logging.INFO, logger="tracker.requests"):
        answer = client.get("/api/campaigns/autumn/state", headers=headers)
    assert answer.status_code == 503, answer.text
    assert answer.headers["Retry-After"] == "5"
    assert answer.json() == {"error": "the database does not answer; try again shortly", "rule": None}
    [line] = request_lines(caplog)
    assert " 503 " in line and 'reason="connection failed' in line and str(DOWN_PORT) in line, line
    # Back by itself: the next request makes the tracker again.
    stripe.make = lambda: ServedTracker(own_pg, keys=keys, reads_only=True)
    assert client.get("/api/campaigns/autumn/state", headers=headers).status_code == 200


@pytest.fixture
def read_only_league(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A league file restored read-only (mode 444), and its referee's headers."""
    db = tmp_path / "league.db"
    tracker(str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    token = tracker(str(db), "--campaign", "autumn", "players", "add", "rita", "--referee").strip().splitlines()[-1]
    db.chmod(0o444)
    try:
        yield db, {"Authorization": f"Bearer {token}"}
    finally:
        db.chmod(0o644)


def test_a_read_only_database_is_said_at_start_and_refused_to_players_without_its_path(
    read_only_league: tuple[Path, dict[str, str]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The server started on a read-only file without a word (only `/ready`, when asked, said
    so), and a player's action was refused with "database sqlite:////srv/.../league.db is
    read-only": the server's path, and nothing a player can act on."""
    from tracker.server.app import create_app

    db, headers = read_only_league
    with caplog.at_level(logging.WARNING, logger="tracker.server"):
        app = create_app(str(db), keys=str(tmp_path / "keys.db"))
    try:
        [warning] = [r.getMessage() for r in caplog.records if r.name == "tracker.server"]
        assert str(db) in warning and "read-only to this server" in warning and "every action is refused" in warning
        with TestClient(app) as client:
            answer = client.post("/api/campaigns/autumn/actions", json={"action": "next"}, headers=headers)
            assert client.get("/api/campaigns/autumn/state", headers=headers).status_code == 200
        # The server's state, not the client's fault: 503, without Retry-After (it does not mend soon).
        assert answer.status_code == 503 and "retry-after" not in answer.headers, answer.text
        message = answer.json()["error"]
        assert "read-only" in message and "tell its operator" in message
        assert str(tmp_path) not in message and "sqlite" not in message
    finally:
        app.state.service.close()


def test_a_request_line_for_no_route_under_api_names_no_route(
    read_only_league: tuple[Path, dict[str, str]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`GET /api/ready` (a probe pointed one level too deep) was logged `route=/api/api`."""
    from tracker.server.app import create_app

    db, _headers = read_only_league
    app = create_app(str(db), keys=str(tmp_path / "keys.db"))
    try:
        with TestClient(app) as client, caplog.at_level(logging.INFO, logger="tracker.requests"):
            assert client.get("/api/ready").status_code == 404
            assert client.get("/api/campaigns/autumn/nothing").status_code == 404
        lines = request_lines(caplog)
        assert len(lines) == 2 and all("route=" not in line for line in lines), lines
    finally:
        app.state.service.close()


def test_a_shared_database_behind_the_head_names_itself_in_the_upgrade_it_asks_for(own_pg: str) -> None:
    """`tracker serve --db URL` (or TRACKER_DB in the service's environment) stopped with "upgrade
    them with `tracker db upgrade`": run as written in the operator's shell, that names
    ./campaign.db ("no database at ..."), not the league's database."""
    from sqlalchemy import create_engine, text

    tracker(own_pg, "new", "autumn", "--scenario", "north-sea-1914")
    engine = create_engine(own_pg)
    with engine.begin() as conn:
        # As release 0004 left it: revision 0005 adds these two columns.
        conn.execute(text("ALTER TABLE tracker_notify_channels DROP COLUMN remind, DROP COLUMN attach_export"))
        conn.execute(text("UPDATE alembic_version SET version_num = '0004'"))
    engine.dispose()
    done = in_process("--db", own_pg, "campaigns")
    shown = make_url(own_pg).render_as_string(hide_password=True)
    assert done.returncode == 2 and f"`tracker --db {shown} db upgrade`" in done.stderr, done.stderr
    upgrade = done.stderr.split("`")[1].split()
    assert upgrade[0] == "tracker"
    upgraded = in_process(*upgrade[1:])
    assert upgraded.returncode == 0, upgraded.stderr


def test_ready_fails_database_once_the_file_it_opened_was_replaced_by_a_restore(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A backup moved over the file of a running server: `/ready` answered 200, and every action
    after it was answered, recorded in the file the server had open, and lost at its restart."""
    import shutil

    from tests.test_server_ops import get
    from tracker.server.app import create_app

    db = tmp_path / "league.db"
    tracker(str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    shutil.copy(db, tmp_path / "copy.db")
    app = create_app(str(db), keys=str(tmp_path / "keys.db"))
    try:
        assert get(app, "/ready")[0] == 200
        os.replace(tmp_path / "copy.db", db)
        with caplog.at_level(logging.WARNING, logger="tracker.server"):
            status, body = get(app, "/ready")
        assert status == 503 and body["failed"] == ["database"], body
        assert str(tmp_path) not in str(body)
        assert "was replaced by another file while this server had it open" in caplog.text
        assert "restart the server" in caplog.text
        db.unlink()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tracker.server"):
            assert get(app, "/ready")[0] == 503
        assert "was removed while this server had it open" in caplog.text
    finally:
        app.state.service.close()


def test_a_database_host_that_never_answers_is_one_line_after_the_connect_timeout() -> None:
    """libpq waits for ever on a host that takes the connection and says nothing (a stuck
    proxy): the tracker gives every PostgreSQL connection CONNECT_TIMEOUT seconds unless the
    URL or PGCONNECT_TIMEOUT says otherwise. A command hung for good."""
    import socket
    import threading
    import time

    pytest.importorskip("psycopg", reason="PostgreSQL needs the postgres extra")
    from tracker.storage.store import CONNECT_TIMEOUT

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    taken: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                taken.append(silent.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if k not in ("PGCONNECT_TIMEOUT", "TRACKER_DB", "TRACKER_SERVER")}
    url = f"postgresql://postgres@127.0.0.1:{silent.getsockname()[1]}/league"
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*TRACKER, "--db", url, "campaigns"], capture_output=True, text=True, timeout=120, env=env
        )
    finally:
        silent.close()
        for conn in taken:
            conn.close()
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"Error: cannot open database postgresql+psycopg://postgres@{url.split('@')[1]}: connection timeout expired"
    ]
    assert int(CONNECT_TIMEOUT) <= took < int(CONNECT_TIMEOUT) + 20, took
