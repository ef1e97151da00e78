"""Event streams share one watch per campaign per process: with many pages open on a campaign
the database is read once per interval, not once per page; a write by another process reaches
every open stream (on PostgreSQL through LISTEN/NOTIFY); the last stream to close stops the
watch. The application runs in this process, driven through ASGI, so its reads can be counted."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRACKER, in_process
from tracker.service.application import Tracker
from tracker.service.players import Players

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

from tracker.server import app as app_module  # noqa: E402
from tracker.server import watch as watch_module  # noqa: E402
from tracker.server.app import create_app  # noqa: E402

STREAMS = 20


class Stream:
    """An event stream opened on the application by a raw ASGI call: what it was sent so far,
    and `close()` to hang up as a browser does."""

    def __init__(self, app: Any, name: str, token: str) -> None:
        path = f"/api/campaigns/{name}/events/stream"
        scope = {
            "type": "http",
            # 2.3: the server tells of a hang-up by `http.disconnect`, as uvicorn does.
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"testserver"), (b"authorization", f"Bearer {token}".encode())],
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 80),
        }
        self.status = 0
        self.body = bytearray()
        self.gone = asyncio.Event()
        self.asked = False
        self.task = asyncio.create_task(app(scope, self.receive, self.send))

    async def receive(self) -> dict[str, Any]:
        if not self.asked:
            self.asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        else:
            self.body += message.get("body", b"")

    def versions(self) -> list[int]:
        """The versions told so far, in order."""
        return [json.loads(d)["version"] for d in re.findall(rb"event: recorded\ndata: (.*)\n\n", bytes(self.body))]

    async def close(self) -> None:
        self.gone.set()
        await self.task


async def until(what: str, done: Callable[[], bool], seconds: float = 60) -> None:
    """Wait for `done()`; fail naming `what` if it never comes (a hang, not a slow machine)."""
    for _ in range(int(seconds / 0.01)):
        if done():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"still waiting for {what}")


@pytest.fixture
def league(db_url: str, unique_name: str, tmp_path: Path) -> Iterator[tuple[Any, str, str, str]]:
    """(application, database URL, campaign name, spectator's token) of a manual-dice campaign."""
    with Tracker(db_url) as t:
        t.create(unique_name, "north-sea-1914", dice="manual")
        token = Players(t.engine).add(str(t.campaign_id(unique_name)), "watcher", [], False, spectator=True)
    app = create_app(db_url, keys=str(tmp_path / "keys.db"))
    try:
        yield app, db_url, unique_name, token
    finally:
        app.state.service.close()


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


def watches(app: Any) -> dict[str, watch_module.Watch]:
    """The campaigns the application's watcher follows, by name (none before any stream)."""
    watcher = watch_module.watching(app.state.service)
    return {} if watcher is None else watcher.watches


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_many_streams_on_one_campaign_cost_one_database_read_per_interval(
    league: tuple[Any, str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, db_url, name, token = league
    with Tracker(db_url) as t:
        last = t.recorder.last_version(t.campaign_id(name))
    service = app.state.service
    reads: list[str] = []
    permits = threading.Semaphore(0)
    read = service.last_version

    def counted(campaign: str) -> int:
        # Each read waits for the test's permit: reads are counted by round, not by the clock.
        reads.append(campaign)
        permits.acquire()
        return int(read(campaign))

    monkeypatch.setattr(service, "last_version", counted)
    monkeypatch.setattr(watch_module, "POLL_SECONDS", 0.01)

    async def scenario() -> None:
        streams = [Stream(app, name, token) for _ in range(STREAMS)]
        await until("every stream to follow the campaign", lambda: name in watches(app))
        watch = watches(app)[name]
        await until("every stream to follow the campaign", lambda: watch.followers == STREAMS)
        await until("the first read", lambda: bool(reads))
        assert reads == [name]  # one read under way for all the streams
        for round_ in range(1, 4):
            permits.release()

            def read_again(n: int = round_) -> bool:
                return len(reads) > n

            await until(f"read {round_ + 1}", read_again)
            assert len(reads) == round_ + 1
        assert all(s.status == 200 and s.versions() == [last] for s in streams)
        permits.release(10_000)
        for s in streams:
            await s.close()
        assert watches(app) == {}
        assert watch.task is not None
        await until("the watch to stop", watch.task.done)

    run(scenario)


def test_an_action_recorded_by_another_process_reaches_every_open_stream(
    league: tuple[Any, str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, db_url, name, token = league
    on_postgresql = Path(db_url).suffix != ".db"
    monkeypatch.setattr(watch_module, "POLL_SECONDS", 0.05)
    # On PostgreSQL only the NOTIFY can tell the watch in time: its safety-net read never comes.
    monkeypatch.setattr(watch_module, "CHECK_SECONDS", 3600.0)

    async def scenario() -> None:
        streams = [Stream(app, name, token) for _ in range(STREAMS)]
        await until("the first version on every stream", lambda: all(s.versions() for s in streams))
        first = streams[0].versions()[-1]
        watcher = watch_module.watching(app.state.service)
        assert watcher is not None
        assert (watcher.listener is not None) == on_postgresql
        done = await asyncio.to_thread(
            subprocess.run,
            [*TRACKER, "--db", db_url, "--campaign", name, "next"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        await until("the new version on every stream", lambda: all(s.versions()[-1] > first for s in streams))
        assert len({s.versions()[-1] for s in streams}) == 1
        for s in streams:
            await s.close()
        assert watcher.watches == {} and watcher.listener is None

    run(scenario)


def test_a_stream_on_a_campaign_the_reader_may_not_read_is_refused_before_it_follows(
    league: tuple[Any, str, str, str],
) -> None:
    app, _db, _name, token = league

    async def scenario() -> None:
        stream = Stream(app, "no-such-campaign", token)
        await stream.task
        assert stream.status == 404
        assert watches(app) == {}

    run(scenario)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_quiet_stream_still_sends_its_keep_alive_comments(
    league: tuple[Any, str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, _db, name, token = league
    monkeypatch.setattr(app_module, "KEEPALIVE_SECONDS", 0.05)

    async def scenario() -> None:
        stream = Stream(app, name, token)
        await until("a keep-alive comment", lambda: b": keep-alive\n\n" in stream.body)
        assert len(stream.versions()) == 1
        await stream.close()
        assert watches(app) == {}

    run(scenario)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_stream_whose_token_is_revoked_ends_at_the_next_event(
    league: tuple[Any, str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`players revoke` ends a token at once (PL1): a stream opened with it went on telling its
    reader every version the campaign reached."""
    app, db_url, name, token = league
    monkeypatch.setattr(watch_module, "POLL_SECONDS", 0.05)

    async def scenario() -> None:
        stream = Stream(app, name, token)
        await until("the first version", lambda: bool(stream.versions()))
        for args in (["players", "revoke", "watcher"], ["next"]):
            # Recorded by the command line in this process, on its own connection: the stream
            # learns of it from the database as of any other writer's.
            done = await asyncio.to_thread(in_process, "--db", db_url, "--campaign", name, *args)
            assert done.returncode == 0, done.stderr
        # The stream ends by itself, without the version recorded after the revocation.
        await asyncio.wait_for(stream.task, 60)
        assert len(stream.versions()) == 1
        assert watches(app) == {}

    run(scenario)
