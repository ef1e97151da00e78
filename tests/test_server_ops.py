"""Running a league server in production: the ASGI factory (`uvicorn --factory
tracker.server:create_app --workers 2`) configured from the environment, on SQLite and on
PostgreSQL; `/health` and `/ready`; and the log, one line per request and per delivery attempt,
as JSON or text, that never holds a token, a seed or a webhook URL."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests import secretscan
from tests.support import PORT_TAKEN_RETRIES, TRACKER, Server, free_port, in_process, served, stop

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

REQUEST_FIELDS = {"time", "method", "route", "status", "ms", "campaign", "player"}


def tracker(db: str, *args: str) -> str:
    """A command that sets up or reads a league, run in this process; the server, and what is
    said of its process's start and exit, run as processes."""
    done = in_process("--db", db, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def league(db: str, name: str) -> dict[str, str]:
    """A campaign with auto dice, and the tokens of anna (Germany) and bob (Britain)."""
    tracker(db, "new", name, "--scenario", "north-sea-1914", "--dice", "auto")
    return {
        player: tracker(db, "--campaign", name, "players", "add", player, "--nations", nation).strip().splitlines()[-1]
        for player, nation in (("anna", "Germany"), ("bob", "Britain"))
    }


def play(server: Server, name: str, tokens: dict[str, str]) -> int:
    """The first national turn of north-sea-1914 through the API, each action by the player of
    the nation it is for: anna ends Germany's phases (`next`) up to collecting income, bob
    passes on Britain's convoy attack (CV1), anna collects. The events recorded, in all."""
    url = f"/api/campaigns/{name}/actions"
    turn: list[tuple[str, dict[str, Any]]] = [("anna", {"action": "next"})] * 7
    turn += [("bob", {"action": "convoy pass", "inputs": {"by": "Britain"}}), ("anna", {"action": "next"})]
    recorded = 0
    for player, action in turn:
        status, done = server.post(url, action, tokens[player])
        assert status == 200, (player, action, done)
        recorded += len(done["events"])
    return recorded


def lines(log: str) -> list[dict[str, Any]]:
    """Every line of a JSON log, decoded (a line that is not JSON fails the test)."""
    decoded = []
    for line in log.splitlines():
        try:
            decoded.append(json.loads(line))
        except ValueError:
            pytest.fail(f"a log line that is not JSON: {line!r}")
    return decoded


def requests_of(log: str) -> list[dict[str, Any]]:
    return [line for line in lines(log) if line["logger"] == "tracker.requests"]


def secret_part(token: str) -> str:
    return token.split("_", 2)[2]


# ----- the ASGI factory -----


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


@contextmanager
def factory(workdir: Path, env: dict[str, str], workers: int = 2) -> Iterator[Server]:
    """`uvicorn --factory tracker.server:create_app` on a free port, `env` its settings; stopped
    by its PID (the parent stops its workers)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}
    command = [sys.executable, "-m", "uvicorn", "--factory", "tracker.server:create_app"]

    def start() -> Server:
        port = free_port()
        output = secretscan.keep_log(workdir / f"uvicorn-{port}.log")
        with output.open("wb") as out:
            proc = subprocess.Popen(
                [*command, "--workers", str(workers), "--host", "127.0.0.1", "--port", str(port)],
                stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env={**clean, **env},
            )  # fmt: skip
        return Server(f"http://127.0.0.1:{port}", proc, output)

    server = start()
    retries = PORT_TAKEN_RETRIES
    try:
        deadline = time.monotonic() + 120
        while not answers(server.url + "/health"):
            if server.proc.poll() is not None:
                # The free port chosen was taken before uvicorn bound it: another one.
                if retries and "address already in use" in server.log().lower():
                    retries -= 1
                    server = start()
                    continue
                raise RuntimeError(f"uvicorn exited with {server.proc.returncode}:\n{server.log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not answer within 120 s:\n{server.log()}")
            time.sleep(0.2)
        yield server
    finally:
        stop(server.proc)
        secretscan.harvest(None, None, env, workdir)


def test_the_factory_is_started_again_on_another_port_when_its_free_port_was_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The port is free when chosen, not reserved: a parallel run on the machine may take it
    before uvicorn binds it, and uvicorn then exits; the test starts it on another."""
    import socket

    import tests.test_server_ops as here

    db = str(tmp_path / "league.db")
    tracker(db, "new", "autumn", "--scenario", "north-sea-1914")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = iter([taken.getsockname()[1]])
        monkeypatch.setattr(here, "free_port", lambda: next(ports, None) or free_port())
        with factory(tmp_path, {"TRACKER_DB": db, "TRACKER_KEYS": str(tmp_path / "keys.db")}) as server:
            assert answers(server.url + "/health") and not server.url.endswith(f":{taken.getsockname()[1]}")


def test_the_asgi_factory_serves_one_league_from_the_environment_with_two_workers(db_url: str, tmp_path: Path) -> None:
    name = f"autumn-{uuid.uuid4().hex[:8]}"
    tokens = league(db_url, name)
    env = {"TRACKER_DB": db_url, "TRACKER_KEYS": str(tmp_path / "keys.db"), "TRACKER_LOG_FORMAT": "json"}
    with factory(tmp_path, env) as server:
        # One shape at both addresses: a probe written for either reads the other's answer.
        assert server.get("/health") == server.get("/api/health") == (200, {"status": "ok", "ok": True})
        assert server.get("/ready") == (
            200,
            {"status": "ready", "checks": dict.fromkeys(("database", "keys", "schema"), "ok")},
        )
        recorded = play(server, name, tokens)
        # Each action recorded once, whichever worker took it; both players' reads agree.
        for token in tokens.values():
            status, events = server.get(f"/api/campaigns/{name}/log", token=token)
            assert status == 200 and len(events) == int(
                tracker(db_url, "--campaign", name, "log", "--json").count('"seq"')
            )
        log = server.log()
    assert recorded > 0 and len(events) >= recorded
    actions = [r for r in requests_of_workers(log) if r["route"] == "/api/campaigns/{name}/actions"]
    assert {r["player"] for r in actions} == {"anna", "bob"} and {r["campaign"] for r in actions} == {name}


def requests_of_workers(log: str) -> list[dict[str, Any]]:
    """The request lines of the workers' JSON log (uvicorn's parent process logs in its own words)."""
    found = []
    for line in log.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record["logger"] == "tracker.requests":
                found.append(record)
    return found


def test_a_bad_setting_in_the_environment_is_one_line_naming_it(tmp_path: Path) -> None:
    env = {**os.environ, "TRACKER_DB": str(tmp_path / "nowhere.db"), "TRACKER_LOG_LEVEL": "loud"}
    done = subprocess.run(
        [sys.executable, "-c", "from tracker.server import create_app; create_app()"],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("Error: TRACKER_LOG_LEVEL: ") and "Traceback" not in done.stderr
    env["TRACKER_LOG_LEVEL"] = "info"
    done = subprocess.run(
        [sys.executable, "-c", "from tracker.server import create_app; create_app()"],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("Error: no database at ")
    assert "Traceback" not in done.stderr


def test_a_bad_setting_under_uvicorn_workers_stops_uvicorn_instead_of_restarting_its_workers(tmp_path: Path) -> None:
    """Each worker of `uvicorn --workers 2` refused the setting and exited 2; uvicorn's
    supervisor started each again, at once and for good, printing the refusal every time. A
    worker that cannot start exits with uvicorn's startup failure, which stops uvicorn."""
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}
    env = {**clean, "TRACKER_DB": str(tmp_path / "league.db"), "TRACKER_PUBLIC_URL": "javascript:alert(1)"}
    command = [sys.executable, "-m", "uvicorn", "--factory", "tracker.server:create_app", "--workers", "2"]
    proc = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    try:
        output, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        stop(proc)
        pytest.fail(f"uvicorn kept starting workers that refused the setting:\n{proc.communicate()[0][-2000:]}")
    refusals = [line for line in output.splitlines() if line.startswith("Error: ")]
    assert refusals and set(refusals) == {
        "Error: TRACKER_PUBLIC_URL must be an http:// or https:// address with a host, got 'javascript:alert(1)'"
    }, output
    # One refusal a worker, then uvicorn stops (its parent's own exit status is uvicorn's: 0).
    assert len(refusals) <= 2 and "Traceback" not in output, output


def _factory_in_a_worker(env: dict[str, str]) -> None:
    """A worker process of an ASGI server calling the factory (`multiprocessing`'s child)."""
    os.environ.update(env)
    from tracker.server import create_app

    create_app()


@pytest.mark.parametrize(
    ("env", "status"),
    [
        # A bad setting: every worker would fail alike, so uvicorn is told to stop (3).
        ({"TRACKER_PUBLIC_URL": "javascript:alert(1)"}, 3),
        # A database out of reach may answer again: the worker's own status, so that uvicorn
        # starts it again (its startup failure would stop the whole league server for good).
        ({"TRACKER_DB": "postgresql+psycopg://nobody@127.0.0.1:1/none"}, 2),
    ],
)
def test_a_worker_stops_uvicorn_for_a_bad_setting_not_for_a_database_out_of_reach(
    tmp_path: Path, env: dict[str, str], status: int
) -> None:
    import multiprocessing

    pytest.importorskip("psycopg", reason="the postgres extra's driver")
    settings = {"TRACKER_DB": str(tmp_path / "league.db"), "TRACKER_KEYS": str(tmp_path / "keys.db"), **env}
    worker = multiprocessing.get_context("spawn").Process(target=_factory_in_a_worker, args=(settings,))
    worker.start()
    worker.join(timeout=120)
    assert worker.exitcode == status


def test_importing_tracker_server_loads_no_web_framework() -> None:
    code = "import sys, tracker.server; print(sorted(m for m in sys.modules if m.startswith(('starlette', 'uvicorn'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


# ----- /health and /ready -----


def get(app: Any, path: str) -> tuple[int, Any]:
    import httpx

    async def fetch() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://league") as client:
            return await client.get(path)

    response = asyncio.run(fetch())
    return response.status_code, response.json()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[Any, Path, Path]]:
    from tracker.server import create_app

    db, keys = tmp_path / "league.db", tmp_path / "keys.db"
    tracker(str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    made = create_app(str(db), keys=str(keys))
    try:
        yield made, db, keys
    finally:
        made.state.service.close()


def test_ready_names_the_side_table_that_is_missing_and_says_no_path(app) -> None:
    made, db, _keys = app
    assert get(made, "/health") == (200, {"status": "ok", "ok": True})
    assert get(made, "/ready")[0] == 200
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE tracker_players")
    status, body = get(made, "/ready")
    assert status == 503 and body["failed"] == ["schema"] and body["checks"]["database"] == "ok"
    assert str(db.parent) not in json.dumps(body)


def test_ready_fails_schema_when_the_read_models_are_of_another_schema(app) -> None:
    made, db, _keys = app
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tracker_projection_tracking SET schema = schema - 1")
    assert get(made, "/ready") == (
        503,
        {"status": "unavailable", "checks": {"database": "ok", "keys": "ok", "schema": "failed"}, "failed": ["schema"]},
    )


def test_ready_fails_keys_when_the_key_store_is_gone_and_health_still_answers(app) -> None:
    made, _db, keys = app
    keys.unlink()
    status, body = get(made, "/ready")
    assert status == 503 and body["failed"] == ["keys"]
    assert not keys.exists()  # the check made no empty key store in its place
    assert get(made, "/health") == (200, {"status": "ok", "ok": True})


def test_ready_fails_database_when_the_server_may_only_read_it(app) -> None:
    """A database this server may not write (its file's permissions, after a restore) is read
    from a private copy: every action is refused, so the server is not ready (it said so)."""
    made, _db, _keys = app
    assert get(made, "/ready")[0] == 200
    made.state.service.tracker.app.refuse_saves = "database league.db is read-only"
    status, body = get(made, "/ready")
    assert status == 503 and body["failed"] == ["database"]
    assert get(made, "/health") == (200, {"status": "ok", "ok": True})


def test_ready_says_timed_out_for_a_database_that_does_not_answer(app, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from tracker.server import app as server_app

    answer = threading.Event()

    def hangs(t: Any) -> bool:
        answer.wait(60)
        return True

    made, _db, _keys = app
    monkeypatch.setattr(server_app, "READY_SECONDS", 0.2)
    monkeypatch.setitem(server_app.READY_CHECKS, "database", hangs)
    try:
        status, body = get(made, "/ready")
        assert status == 503 and body["checks"] == {"database": "timed out", "keys": "timed out", "schema": "timed out"}
        # A probe behind the one still waiting gives up too.
        assert get(made, "/ready")[0] == 503
        assert get(made, "/health") == (200, {"status": "ok", "ok": True})
    finally:
        answer.set()


def test_an_action_on_a_full_disk_is_503_in_one_line_and_records_nothing(
    app: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import httpx

    from tracker.service.application import Tracker

    made, db, _keys = app
    token = tracker(str(db), "--campaign", "autumn", "players", "add", "rita", "--referee").strip().splitlines()[-1]
    # The file may grow by a few pages more, then fills as on a full disk: SQLite's "database or
    # disk is full".
    with Tracker(str(db)) as t:
        before = len(t.stored_events(t.campaign_id("autumn")))
    raw = made.state.service.tracker.app.factory.datastore.writer().connection.driver_connection
    raw.execute(f"PRAGMA max_page_count = {raw.execute('PRAGMA page_count').fetchone()[0] + 3}")
    recorded = []

    async def fill() -> httpx.Response:
        transport = httpx.ASGITransport(app=made)
        async with httpx.AsyncClient(transport=transport, base_url="http://league") as client:
            for n in range(200):  # each adds a row; a page fills within a few
                body = {
                    "action": "adjust",
                    "inputs": {"reason": f"supplies {n} " + "x" * 500, "resources": ["Germany=+1"]},
                }
                answer = await client.post(
                    "/api/campaigns/autumn/actions", json=body, headers={"Authorization": f"Bearer {token}"}
                )
                if answer.status_code != 200:
                    return answer
                recorded.append(answer.json()["events"])
        raise AssertionError("the file never filled")

    with caplog.at_level(logging.ERROR, logger="tracker"):
        answer = asyncio.run(fill())
    # The server's trouble, not the request's: 503 and what happened, not "unexpected
    # OperationalError" (500) with a traceback in the log for every request.
    assert answer.status_code == 503
    assert answer.json()["error"].startswith("the database is full (database or disk is full): nothing was recorded")
    assert "the database is full" in caplog.text and "Traceback" not in caplog.text
    made.state.service.close()
    with Tracker(str(db)) as t:
        stored = t.stored_events(t.campaign_id("autumn"))
    # Every action answered whole (what was asked and its adjustment), the refused one not at all.
    assert recorded and len(stored) == before + 2 * len(recorded)


def test_sigterm_stops_the_server_while_a_page_follows_a_campaign(tmp_path: Path) -> None:
    """uvicorn waits for every response to end before it stops, and an event stream (an open
    viewer page) never ends by itself: the server ends its streams when it shuts down."""
    import signal

    db = str(tmp_path / "league.db")
    token = league(db, "autumn")["anna"]
    with served(db, "--keys", str(tmp_path / "keys.db"), workdir=tmp_path) as server:
        stream = urllib.request.urlopen(
            urllib.request.Request(
                server.url + "/api/campaigns/autumn/events/stream", headers={"Authorization": f"Bearer {token}"}
            ),
            timeout=30,
        )
        with stream:
            assert stream.readline() == b"event: recorded\n"
            server.proc.send_signal(signal.SIGTERM)
            try:
                server.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pytest.fail(f"tracker serve was still up 10 s after SIGTERM:\n{server.log()}")
            # uvicorn raises the signal again once it has shut down, as a process stopped by it.
            assert server.proc.returncode in (0, -signal.SIGTERM)
            assert "Application shutdown complete" in server.log()
            stream.read()  # the stream ended with the server


# ----- the log -----


def test_json_log_has_a_line_per_request_and_no_token_seed_or_webhook_url(tmp_path: Path) -> None:
    db = str(tmp_path / "league.db")
    tokens = league(db, "autumn")
    hook = f"http://127.0.0.1:9/hooks/{uuid.uuid4().hex}"
    tracker(db, "--campaign", "autumn", "notify", "add", "webhook", hook)
    env = {"TRACKER_NOTIFY_POLL": "0.2", "TRACKER_NOTIFY_BACKOFF": "0.2,0.5,3"}
    with served(db, "--log-format", "json", "--keys", "keys.db", workdir=tmp_path, env=env) as server:
        assert server.request("GET", f"/?token={tokens['anna']}")[0] in (200, 303)
        assert server.get("/api/campaigns", token=tokens["bob"] + "x")[0] == 401
        assert server.get("/api/campaigns/autumn/state", token="not a token")[0] == 401
        play(server, "autumn", tokens)
        # The game now waits for Britain: the hand-off to the webhook is attempted (and fails).
        deadline = time.monotonic() + 60
        while '"job": "delivery"' not in server.log() and time.monotonic() < deadline:
            time.sleep(0.2)
        with sqlite3.connect(tmp_path / "keys.db") as conn:
            seeds = [row[0] for row in conn.execute("SELECT seed FROM tracker_dice_seeds")]
        log = server.log()
    assert seeds and not any(seed in log for seed in seeds)
    assert not any(secret_part(token) in log for token in tokens.values())
    assert hook not in log and hook.rsplit("/", 1)[1] not in log
    requests = requests_of(log)
    assert all(set(line) >= REQUEST_FIELDS for line in requests)
    link = next(line for line in requests if line["route"] == "/" and line["status"] == 303)
    assert link["path"] == "/?token=[hidden]" and link["player"] == "anna"
    failed = [line for line in requests if line["status"] == 401]
    assert len(failed) == 2 and all(line["player"] is None for line in failed)
    acted = [line for line in requests if line["route"] == "/api/campaigns/{name}/actions"]
    assert {(line["campaign"], line["player"], line["method"]) for line in acted} == {
        ("autumn", "anna", "POST"),
        ("autumn", "bob", "POST"),
    }
    assert all(isinstance(line["ms"], float) and line["ms"] >= 0 for line in requests)
    jobs = [line for line in lines(log) if line.get("job") == "delivery"]
    assert jobs and jobs[0]["kind"] == "webhook" and jobs[0]["outcome"].startswith("unreachable")
    # The campaign by name, as the request lines name it (it was its id alone).
    assert jobs[0]["campaign"] == "autumn" and jobs[0]["campaign_id"] != "autumn"


def test_text_log_keeps_one_record_on_one_line_and_hides_secrets() -> None:
    from tracker.server.logs import TextFormatter, hide_secrets

    fields = {"method": "GET", "route": "/campaigns/{name}/board", "campaign": "north\nsea", "player": "anna"}
    record = logging.LogRecord("tracker.requests", logging.INFO, __file__, 1, "GET %s", ("/x\n\x1b[2Jy",), None)
    record.fields = fields
    line = TextFormatter().format(record)
    assert "GET /x\\n\\x1b[2Jy" in line and 'campaign="north\\nsea"' in line and "player=anna" in line
    assert "\n" not in line and "\x1b" not in line
    token = "trk_0123456789abcdef_" + "s" * 43
    assert hide_secrets(f"/?a=1&token={token}&b=2") == "/?a=1&token=[hidden]&b=2"
    assert hide_secrets(f"Bearer {token}") == "Bearer [hidden]"
    assert hide_secrets("postgresql://league:hunter2@db/league") == "postgresql://league:[hidden]@db/league"
    # D5: anything shaped as a seed, alone or in a longer run of hex digits a client sent.
    seed = "5eed" * 16
    assert hide_secrets(f"GET /api/campaigns/{seed}/state") == "GET /api/campaigns/[hidden]/state"
    assert hide_secrets(f"/x/00{seed.upper()}ff?n=1") == "/x/[hidden]?n=1"
    assert hide_secrets("/api/campaigns/cafe1234/state") == "/api/campaigns/cafe1234/state"


def test_a_request_line_shows_at_most_300_characters_of_its_path_and_cuts_no_secret_in_half(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A query of 50,000 characters made a log line of as many; the path and the campaign a
    line shows are bounded, cut after secrets are hidden (a seed cut in half would no longer
    look like one, and its first half would be printed)."""
    from starlette.testclient import TestClient

    from tracker.server.app import create_app

    db = str(tmp_path / "league.db")
    tracker(db, "new", "autumn", "--scenario", "north-sea-1914")
    seed = "5eed" * 16
    prefix = "/api/campaigns/autumn/log?kind="
    asks = [
        f"{prefix}{'k' * 50_000}",
        # A seed-shaped run across the cut.
        f"{prefix}{'k' * (300 - len(prefix) - 4)}{seed}{'k' * 1000}",
        f"/api/campaigns/{'n' * 5000}/state",
    ]
    with (
        TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client,
        caplog.at_level(logging.INFO, logger="tracker.requests"),
    ):
        for path in asks:
            assert client.get(path).status_code in (400, 404)
    lines = [r.fields for r in caplog.records if getattr(r, "fields", None)]
    assert len(lines) == len(asks)
    for line in lines:
        assert len(line["path"]) <= 303 and line["path"].endswith("...")
        assert seed[:4] not in line["path"]
    assert lines[1]["path"].endswith("[hid...")
    assert lines[2]["campaign"] == "n" * 200 + "..."


def test_json_log_line_carries_the_request_fields() -> None:
    from tracker.server.logs import JsonFormatter

    fields = {"method": "POST", "route": "/api/command", "status": 409, "ms": 3.2, "campaign": "a", "player": "bob"}
    record = logging.LogRecord("tracker.requests", logging.INFO, __file__, 1, "POST /api/command", (), None)
    record.fields = fields
    line = json.loads(JsonFormatter().format(record))
    assert {k: line[k] for k in fields} == fields and line["level"] == "info" and line["time"].endswith("+00:00")


def test_serve_refuses_an_unknown_log_format_as_usage(tmp_path: Path) -> None:
    db = str(tmp_path / "league.db")
    tracker(db, "new", "autumn", "--scenario", "north-sea-1914")
    done = subprocess.run(
        [*TRACKER, "--db", db, "serve", "--log-format", "xml"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2 and "--log-format" in done.stderr and "Traceback" not in done.stderr


def test_d5_serve_on_a_port_in_use_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    """A server that cannot listen (the port taken, a host that is not this machine's) says so
    in one line before it opens the database: it never moves a seed to a key store, nor
    reveals one in the log, for a league it never served."""
    import socket

    db = str(tmp_path / "league.db")
    tracker(db, "new", "autumn", "--scenario", "north-sea-1914")
    keys = tmp_path / "keys.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for host, said in (
            ("127.0.0.1", f"Error: cannot listen on 127.0.0.1:{port}: "),
            ("999.1.1.1", "Error: --host "),
        ):
            done = subprocess.run(
                [*TRACKER, "serve", "--db", db, "--host", host, "--port", str(port), "--keys", str(keys)],
                capture_output=True, text=True, timeout=300, cwd=tmp_path,
            )  # fmt: skip
            assert done.returncode == 2 and done.stderr.startswith(said), done.stderr
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not keys.exists()
    assert "SeedRevealed" not in tracker(db, "log")
