"""What an operator of a league server meets: a server started with a key store that is not the
league's (D5), and the log lines it reads."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import in_process
from tests.test_server_ops import get

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def tracker(db: str, *args: str) -> str:
    """A set-up command on `db`, run in this process."""
    done = in_process("--db", db, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def served_league(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A league database one server has served (its campaign's seed in `keys.db`), stopped."""
    from tracker.server import create_app

    db, keys = tmp_path / "league.db", tmp_path / "keys.db"
    tracker(str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    create_app(str(db), keys=str(keys)).state.service.close()
    yield str(db), keys


def test_d5_ready_fails_keys_for_a_key_store_holding_none_of_the_leagues_seeds(
    served_league: tuple[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A second server started from another folder made its own empty `tracker-keys.db`: it
    answered ready, and every auto die of the league's campaigns was refused (D4) by it."""
    from tracker.server import create_app

    db, _keys = served_league
    (tmp_path / "elsewhere").mkdir()
    wrong = create_app(db, keys=str(tmp_path / "elsewhere" / "tracker-keys.db"))
    try:
        status, body = get(wrong, "/ready")
        assert status == 503 and body["failed"] == ["keys"], body
        assert "holds the dice seeds of none of the 1 campaign(s) served from this database" in caplog.text
        assert get(wrong, "/health") == (200, {"status": "ok", "ok": True})
    finally:
        wrong.state.service.close()


def test_d5_ready_passes_with_the_leagues_key_store_and_on_a_new_league(
    served_league: tuple[str, Path], tmp_path: Path
) -> None:
    from tracker.server import create_app

    db, keys = served_league
    right = create_app(db, keys=str(keys))
    try:
        assert get(right, "/ready")[0] == 200
    finally:
        right.state.service.close()
    # A league no server has served yet: any key store is its own.
    tracker(str(tmp_path / "new.db"), "players", "add", "rita", "--referee", "--league")
    fresh = create_app(str(tmp_path / "new.db"), keys=str(tmp_path / "new-keys.db"))
    try:
        assert get(fresh, "/ready")[0] == 200
    finally:
        fresh.state.service.close()


def test_d5_ready_passes_with_an_older_copy_of_the_leagues_key_store(
    served_league: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key store restored from a copy older than the database lacks the newest campaigns'
    seeds, but it is the league's: the other campaigns roll their dice with it."""
    import shutil

    from tracker.server import create_app, ready

    db, keys = served_league
    older = tmp_path / "keys-copy.db"
    shutil.copy(keys, older)
    tracker(db, "new", "winter", "--scenario", "north-sea-1914", "--dice", "auto")
    create_app(db, keys=str(keys)).state.service.close()  # winter served: its seed in keys.db alone
    with sqlite3.connect(db) as conn:
        # Served a day later (the marks are made within one second here).
        conn.execute(
            "UPDATE tracker_served SET since = datetime(since, '+1 day') WHERE campaign_id = "
            "(SELECT campaign_id FROM tracker_campaigns WHERE name = 'winter')"
        )
    monkeypatch.setattr(ready, "LOOKED_FOR", 1)
    restored = create_app(db, keys=str(older))
    try:
        assert get(restored, "/ready")[0] == 200
    finally:
        restored.state.service.close()


def test_ready_fails_database_not_keys_while_the_campaign_database_does_not_answer(
    served_league: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The key store answers: its check must not fail for the campaign database's outage. The
    log says why the database failed, in the driver's words, not only "OperationalError"."""
    from sqlalchemy import create_engine

    from tracker.server import create_app

    db, keys = served_league
    app = create_app(db, keys=str(keys))
    try:
        gone = create_engine(f"sqlite:///{tmp_path / 'no-such-folder' / 'league.db'}")
        monkeypatch.setattr(app.state.service.tracker, "engine", gone)
        status, body = get(app, "/ready")
        assert status == 503 and body["checks"]["database"] == "failed" and body["checks"]["keys"] == "ok", body
        said = [r.getMessage() for r in caplog.records if "ready check database failed" in r.getMessage()]
        assert said and "unable to open database file" in said[-1], said
    finally:
        monkeypatch.undo()
        app.state.service.close()


def test_a_ready_probe_through_an_outage_logs_its_failure_once_and_its_end_once(
    served_league: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A probe every 10 s through an outage logged "ready check database failed" each time,
    some 360 lines an hour: once now, and once when the check passes again."""
    from sqlalchemy import create_engine

    from tracker.server import create_app

    caplog.set_level(logging.INFO, logger="tracker.server")
    db, keys = served_league
    app = create_app(db, keys=str(keys))
    try:
        answering = app.state.service.tracker.engine
        gone = create_engine(f"sqlite:///{tmp_path / 'no-such-folder' / 'league.db'}")
        monkeypatch.setattr(app.state.service.tracker, "engine", gone)
        for _ in range(3):
            assert get(app, "/ready")[0] == 503
        monkeypatch.setattr(app.state.service.tracker, "engine", answering)
        for _ in range(2):
            assert get(app, "/ready")[0] == 200
    finally:
        monkeypatch.undo()
        app.state.service.close()
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ready check database")]
    assert len(said) == 2, said
    assert "failed: unable to open database file" in said[0] and said[1] == "ready check database passes again"


def test_d5_serve_warns_at_start_when_the_key_store_holds_none_of_the_leagues_seeds(
    served_league: tuple[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.server import logs
    from tracker.server.command import build_app

    # The log stays pytest's to capture (configure sends it to stderr).
    monkeypatch.setattr(logs, "configure", lambda level, fmt: None)
    db, _keys = served_league
    (tmp_path / "elsewhere").mkdir()
    app = build_app(
        db, "", keys=str(tmp_path / "elsewhere" / "k.db"), reveal="on-request", public_url=None, log_level="info",
        log_format="text", smtp_host=None, smtp_port=587, smtp_from=None, smtp_starttls=False, smtp_user=None,
    )  # fmt: skip
    try:
        warned = [r for r in caplog.records if r.levelno == logging.WARNING and "--keys" in r.getMessage()]
        assert warned, caplog.text
        assert "auto dice of the league's campaigns cannot be rolled here" in warned[0].getMessage()
    finally:
        app.state.service.close()


# ----- the log -----


def failing_app() -> Any:
    """A route that fails (500) and one that notes an action's name and rule, behind the
    server's request log."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from tracker.server.logs import RequestLog, note

    async def fails(request: Request) -> Response:
        raise RuntimeError("the database went away")

    async def refused(request: Request) -> Response:
        note(request.scope, campaign="autumn", player="anna", action="move", rule="M2")
        return JSONResponse({"error": "M2: ...", "rule": "M2"}, status_code=409)

    async def command(request: Request) -> Response:
        note(request.scope, campaign="autumn", player="anna", action="next", rule="T4", exit=1)
        return JSONResponse({"exit": 1, "stdout": "", "stderr": "Error: T4: ..."})

    async def unexpected(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "unexpected"}, status_code=500)

    routes = [
        Route("/fails", fails),
        Route("/api/campaigns/{name}/actions", refused, methods=["POST"]),
        Route("/api/command", command, methods=["POST"]),
    ]
    return Starlette(routes=routes, middleware=[Middleware(RequestLog)], exception_handlers={Exception: unexpected})


def ask(app: Any, method: str, path: str) -> int:
    import httpx

    async def fetch() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://league") as client:
            return await client.request(method, path)

    return asyncio.run(fetch()).status_code


def test_a_500_carries_its_traceback_on_its_request_line_and_once(caplog: pytest.LogCaptureFixture) -> None:
    """A failure printed its request line, then uvicorn's "Exception in ASGI application\\n"
    (the line break shown as "\\n") with the traceback, on a line naming no request: under
    load, the two were apart and an operator could not tell which request failed."""
    from tracker.server.logs import LoggedOnce, TextFormatter

    with caplog.at_level(logging.INFO, logger="tracker.requests"):
        assert ask(failing_app(), "GET", "/fails") == 500
    [line] = [r for r in caplog.records if r.name == "tracker.requests"]
    assert line.exc_info is not None and "the database went away" in str(line.exc_info[1])
    text = TextFormatter().format(line)
    assert text.splitlines()[0].endswith("route=/fails client=127.0.0.1") and "RuntimeError" in text
    # uvicorn's own record of the same failure is dropped; any other error still prints.
    error = line.exc_info[1]
    assert isinstance(error, BaseException)
    again = logging.LogRecord(
        "uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application\n", (), (type(error), error, None)
    )
    other = logging.LogRecord(
        "uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application\n", (), (OSError, OSError(), None)
    )
    assert LoggedOnce().filter(line) and not LoggedOnce().filter(again) and LoggedOnce().filter(other)
    assert TextFormatter().format(other).splitlines()[0].endswith(" ERROR Exception in ASGI application")


def test_a_request_line_names_the_action_rule_and_exit_a_handler_noted(caplog: pytest.LogCaptureFixture) -> None:
    from tracker.server.logs import TextFormatter

    with caplog.at_level(logging.INFO, logger="tracker.requests"):
        assert ask(failing_app(), "POST", "/api/campaigns/autumn/actions") == 409
        assert ask(failing_app(), "POST", "/api/command") == 200
    action, command = [r for r in caplog.records if r.name == "tracker.requests"]
    assert "campaign=autumn player=anna action=move rule=M2 client=127.0.0.1" in TextFormatter().format(action)
    assert "/api/command 200 " in TextFormatter().format(command)
    assert "action=next rule=T4 exit=1" in TextFormatter().format(command)
