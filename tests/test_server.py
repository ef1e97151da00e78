"""`tracker serve` as a group uses it: a real server process on a free 127.0.0.1 port, its JSON
API read with plain HTTP, the event stream, and bad URLs answered with 4xx, never 500."""

from __future__ import annotations

import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support import TRACKER, served

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def tracker(db: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRACKER, "--db", str(db), *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("league")
    db = work / "league.db"
    assert tracker(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    with served(str(db), workdir=work) as server:
        yield server, db


def test_serve_answers_state_pending_and_log_as_the_cli_json_does(league) -> None:
    server, db = league
    status, names = server.get("/api/campaigns")
    assert (status, names) == (200, ["autumn"])
    import json

    for path, args in (
        ("/api/campaigns/autumn/state", ["state", "--json"]),
        ("/api/campaigns/autumn/pending", ["pending", "--json"]),
        ("/api/campaigns/autumn/log", ["log", "--json"]),
        ("/api/campaigns/autumn/explain/1", ["explain", "1", "--json"]),
    ):
        status, data = server.get(path)
        assert status == 200, (path, data)
        assert data == json.loads(tracker(db, *args).stdout), path


def test_serve_binds_loopback_by_default(league) -> None:
    server, _db = league
    assert server.url.startswith("http://127.0.0.1:")
    assert "http://127.0.0.1:" in server.log()


@pytest.mark.parametrize(
    "path, status",
    [
        ("/api/campaigns/nope/state", 404),
        ("/api/campaigns/autumn/explain/999", 404),
        ("/api/campaigns/autumn/explain/99999999999999999999999999", 400),
        ("/api/campaigns/autumn/state?turn=100000000000000000000000000000", 400),
        ("/api/campaigns/autumn/state?turn=-3", 400),
        ("/api/campaigns/autumn/state?turn=x", 400),
        ("/api/campaigns/autumn/state?turn=99", 400),
        ("/api/campaigns/autumn/state?phase=bogus&turn=1", 400),
        ("/api/campaigns/autumn/log?kind=NoSuchKind", 400),
        ("/api/campaigns/autumn/log?nation=Atlantis", 400),
        ("/api/campaigns/" + "x" * 5000 + "/state", 404),
        ("/api/nothing-here", 404),
    ],
)
def test_bad_urls_and_huge_numbers_are_4xx_with_a_json_error(league, path: str, status: int) -> None:
    server, _db = league
    got, body = server.get(path)
    assert got == status, body
    assert isinstance(body, dict) and body["error"]


def test_the_event_stream_tells_a_page_when_the_campaign_records_something(league) -> None:
    server, db = league
    with urllib.request.urlopen(server.url + "/api/campaigns/autumn/events/stream", timeout=60) as stream:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        first = _next_event(stream)
        assert first[0] == "recorded"
        # Recorded by another process straight into the database: the stream polls it.
        assert tracker(db, "next").returncode == 0
        started = time.monotonic()
        event, data = _next_event(stream)
        assert event == "recorded" and data["version"] > first[1]["version"]
        assert time.monotonic() - started < 30


def _next_event(stream) -> tuple[str, dict]:
    import json

    event, data = "", ""
    while True:
        line = stream.readline().decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[len("event: ") :]
        elif line.startswith("data: "):
            data = line[len("data: ") :]
        elif line == "" and event:
            return event, json.loads(data)


@pytest.mark.postgres
def test_two_server_processes_on_one_postgresql_database_see_every_write(pg_url: str, tmp_path: Path) -> None:
    import uuid

    from tracker.application import Tracker
    from tracker.players import Players

    name = f"league-{uuid.uuid4().hex[:8]}"
    with Tracker(pg_url) as t:
        t.create(name, "north-sea-1914", dice="auto")
        token = Players(t.engine).add(str(t.campaign_id(name)), "rita", [], True)
    keys = str(tmp_path / "keys.db")
    with served(pg_url, "--keys", keys, workdir=tmp_path) as a, served(pg_url, "--keys", keys, workdir=tmp_path) as b:
        stream_url = f"{b.url}/api/campaigns/{name}/events/stream"
        with urllib.request.urlopen(stream_url, timeout=60) as stream:
            _event, first = _next_event(stream)
            status, body = a.post("/api/command", {"args": ["research", "advanced_submarine"], "campaign": name}, token)
            assert status == 200, body
            _event, seen = _next_event(stream)
            assert seen["version"] > first["version"]
        # Writers on both processes, alternating: every action lands once, in order.
        for server in (b, a, b, a):
            status, body = server.post("/api/command", {"args": ["next"], "campaign": name}, token)
            assert status == 200, body
        log_a = a.get(f"/api/campaigns/{name}/log")[1]
        assert log_a == b.get(f"/api/campaigns/{name}/log")[1]
        assert [r["kind"] for r in log_a].count("PhaseAdvanced") == 4
        # Both processes roll from the one key store: the rolls verify on either.
        assert b.get(f"/api/campaigns/{name}/verify")[1]["rolls_checked"] == 1


def test_serve_refuses_a_database_that_does_not_exist(tmp_path: Path) -> None:
    done = subprocess.run(
        [*TRACKER, "serve", "--db", str(tmp_path / "typo.db"), "--port", "0"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "no database at" in done.stderr
    assert not (tmp_path / "typo.db").exists()
