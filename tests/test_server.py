"""`tracker serve` as a group uses it: a real server process on a free 127.0.0.1 port, its JSON
API read with plain HTTP, the event stream, and bad URLs answered with 4xx, never 500.

Reads need a token of the campaign's players or spectators (issue 24, "strangers learn
nothing"): these tests read as a spectator, through `Reader`; what a stranger gets is in
tests/test_server_strangers.py."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRACKER, Server, in_process, served

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def tracker(db: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    """A command on `db` run in this process (the server is another process all the same)."""
    return in_process("--db", str(db), *args)


class Reader:
    """A served league read with a token (every read needs one, unless the campaign is
    public): `get`, `open` and `page` send it; everything else is the `Server`'s."""

    def __init__(self, server: Server, token: str) -> None:
        self.server = server
        self.token = token

    def __getattr__(self, name: str) -> Any:
        return getattr(self.server, name)

    def get(self, path: str, token: str | None = None) -> tuple[int, Any]:
        return self.server.get(path, token=token or self.token)

    def open(self, path: str) -> Any:
        """The response to a GET with the token, left open (an event stream)."""
        request = urllib.request.Request(self.server.url + path, headers={"Authorization": f"Bearer {self.token}"})
        return urllib.request.urlopen(request, timeout=60)

    def page(self, path: str) -> tuple[int, str]:
        """(status, HTML) of a viewer page read with the token."""
        try:
            with self.open(path) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()


def spectator(db: Path | str, *league: str) -> str:
    """A spectator's token (with "--league": of every campaign in the database)."""
    done = tracker(db, "players", "add", "watcher", "--spectator", *league)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("league")
    db = work / "league.db"
    assert tracker(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    token = spectator(db)
    with served(str(db), workdir=work) as server:
        yield Reader(server, token), db


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
        # A well-formed turn or event that is not there is not found, as on the board page.
        ("/api/campaigns/autumn/state?turn=99", 404),
        ("/api/campaigns/autumn/state?at=99", 404),
        ("/api/campaigns/autumn/state?turn=1&phase=placement", 404),
        ("/api/campaigns/autumn/state?at=0", 400),
        ("/api/campaigns/autumn/state?at=-1", 400),
        ("/api/campaigns/autumn/state?at=x", 400),
        ("/api/campaigns/autumn/state?at=100000000000000000000000000000", 400),
        ("/api/campaigns/autumn/state?phase=bogus&turn=1", 400),
        # Another script's digits (Arabic-Indic three) and digit separators are not a number
        # here, as the event number in a path is not.
        ("/api/campaigns/autumn/state?turn=%D9%A3", 400),
        ("/api/campaigns/autumn/state?at=1_0", 400),
        ("/api/campaigns/autumn/log?tail=%D9%A1", 400),
        ("/api/campaigns/autumn/report?turn=%C2%B2", 400),
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


@pytest.mark.parametrize(
    "path, status, message",
    [
        # An event number that is not a number is bad input, as on the event page: not "Not Found".
        ("/api/campaigns/autumn/explain/abc", 400, "event number must be a whole number from 1 to 2147483647"),
        ("/api/campaigns/autumn/explain/0", 400, "event number must be a whole number from 1 to 2147483647"),
        # A turn not played yet is not found, as `/state?turn=` answers it.
        ("/api/campaigns/autumn/report?turn=99", 404, "turn 99 has not been played in campaign 'autumn'"),
        ("/api/nothing-here", 404, "no API route at /api/nothing-here (see /api/openapi.json)"),
        # The log of a turn not played yet, or of a battle never fought, is not there (as `log
        # --json` refuses it and the timeline page answers 404), not an empty list.
        ("/api/campaigns/autumn/log?turn=99", 404, "turn 99 has not been played in campaign 'autumn'"),
        ("/api/campaigns/autumn/log?battle=7", 404, "no battle 7 in campaign 'autumn'"),
        ("/api/campaigns/autumn/log?battle=7&turn=1", 404, "no battle 7 in campaign 'autumn'"),
        # A parameter the route does not take was ignored: `?trun=2` answered the board now.
        ("/api/campaigns/autumn/state?trun=2", 400, "unknown query parameter 'trun' (it takes turn, phase, at)"),
        ("/api/campaigns/autumn/pending?turn=2", 400, "unknown query parameter 'turn' (it takes none)"),
    ],
)
def test_a_bad_api_url_is_answered_with_what_is_wrong_with_it(league, path: str, status: int, message: str) -> None:
    server, _db = league
    got, body = server.get(path)
    assert (got, body["error"][: len(message)]) == (status, message), body
    got, body = server.request("POST", "/api/campaigns/autumn/overrides/first/approve", {}, token=server.token)
    assert got == 400 and body["error"].startswith("override request number must be a whole number"), body
    got, body = server.request("POST", "/api/campaigns/autumn/overrides/99/approve", {}, token=server.token)
    assert (got, body["error"]) == (404, "no override request 99 in this campaign"), body


@pytest.mark.parametrize(
    "content_type, body, status, message",
    [
        ("text/plain", b"approve it", 415, "the request body must be JSON sent with Content-Type: application/json"),
        ("application/json", b'{"reason": "why not"}', 400, "unknown field 'reason' in the request body"),
        ("application/json", b"{not json", 400, "the request body is not JSON"),
    ],
)
def test_an_approval_with_a_body_it_does_not_take_is_refused(
    league, content_type: str, body: bytes, status: int, message: str
) -> None:
    """The approval route read no body at all: a form or text post, or a field it does not take
    (a reason, say, which it would have dropped), was answered as if nothing had been sent."""
    server, _db = league
    req = urllib.request.Request(
        server.url + "/api/campaigns/autumn/overrides/99/approve", data=body, method="POST",
        headers={"Content-Type": content_type, "Authorization": f"Bearer {server.token}"},
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=60)
    answer = json.loads(refused.value.read())
    assert (refused.value.code, answer["error"][: len(message)]) == (status, message), answer


def test_the_event_stream_tells_a_page_when_the_campaign_records_something(league) -> None:
    server, db = league
    with server.open("/api/campaigns/autumn/events/stream") as stream:
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

    from tracker.service.application import Tracker
    from tracker.service.players import Players

    name = f"league-{uuid.uuid4().hex[:8]}"
    with Tracker(pg_url) as t:
        t.create(name, "north-sea-1914", dice="auto")
        token = Players(t.engine).add(str(t.campaign_id(name)), "rita", [], True)
    keys = str(tmp_path / "keys.db")
    with served(pg_url, "--keys", keys, workdir=tmp_path) as a, served(pg_url, "--keys", keys, workdir=tmp_path) as b:
        a, b = Reader(a, token), Reader(b, token)
        with b.open(f"/api/campaigns/{name}/events/stream") as stream:
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


# Names a group may well choose, each needing quoting in a URL: "/" (which the router must not
# take for a separator), "%", "?", "#", spaces, and a name ending like one of the pages.
ODD_NAMES = ["north/sea 1914", "100% x/board", "a?b#c & d"]


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("odd")
    db = work / "odd.db"
    for name in ODD_NAMES:
        assert tracker(db, "new", name, "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    token = spectator(db, "--league")
    with served(str(db), workdir=work) as server:
        yield Reader(server, token), db


def q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


@pytest.mark.parametrize("name", ODD_NAMES)
def test_every_api_path_takes_a_quoted_campaign_name(odd, name: str) -> None:
    import json

    server, db = odd
    for path, args in (
        ("state", ["state", "--json"]),
        ("pending", ["pending", "--json"]),
        ("log", ["log", "--json"]),
        ("explain/1", ["explain", "1", "--json"]),
        ("verify", None),
        ("report?turn=1", None),
        ("overrides", None),
    ):
        status, data = server.get(f"/api/campaigns/{q(name)}/{path}")
        assert status == 200, (name, path, data)
        if args is not None:
            assert data == json.loads(tracker(db, "--campaign", name, *args).stdout), (name, path)
    assert server.get(f"/api/campaigns/{q(name)}/state")[1]["campaign"] == name
    # Sent unquoted, a "/" is a separator: no such campaign (or route), never another's page.
    if "/" in name:
        assert server.get(f"/api/campaigns/{urllib.parse.quote(name, safe='/')}/state")[0] == 404


@pytest.mark.parametrize("name", ODD_NAMES)
def test_the_event_stream_takes_a_quoted_campaign_name(odd, name: str) -> None:
    server, db = odd
    with server.open(f"/api/campaigns/{q(name)}/events/stream") as stream:
        first = _next_event(stream)
        assert first[0] == "recorded"
        assert tracker(db, "--campaign", name, "next").returncode == 0
        event, data = _next_event(stream)
        assert event == "recorded" and data["version"] > first[1]["version"]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_every_viewer_page_takes_a_quoted_campaign_name(odd, name: str) -> None:
    from html import escape

    server, _db = odd
    status, home = server.page("/")
    assert status == 200 and f'href="/campaigns/{escape(q(name))}/board"' in home
    for path in ("", "/board", "/board?turn=1", "/log", "/battles", "/events/1", "/charts"):
        status, html = server.page(f"/campaigns/{q(name)}{path}")
        assert status == 200, (name, path, html[:300])
        assert escape(name) in html, (name, path)
    status, html = server.page(f"/campaigns/{q(name)}/battles/1")
    assert status == 404 and "no battle 1" in html


def test_the_router_sees_an_encoded_slash_as_part_of_a_name() -> None:
    from tracker.server.app import routing_path

    assert routing_path(b"/api/campaigns/north%2fsea%201914/state") == "/api/campaigns/north%2Fsea 1914/state"
    assert routing_path(b"/campaigns/100%25%20x%2Fboard/board?turn=1") == "/campaigns/100%25 x%2Fboard/board"
    assert routing_path(b"/campaigns/K%C3%B6nigsberg") == "/campaigns/Königsberg"
    assert routing_path("/campaigns/Königsberg".encode()) == "/campaigns/Königsberg"


def test_a_command_run_for_a_client_writes_to_its_own_buffers_and_sees_the_clients_terminal() -> None:
    import sys
    import threading

    from tracker.server.streams import captured

    seen: dict[str, tuple[bool, bool, bool, str]] = {}

    def command(name: str, tty: bool) -> None:
        with captured(tty) as streams:
            print(name)
            seen[name] = (sys.stdout.isatty(), sys.stderr.isatty(), sys.stdin.isatty(), streams["stdout"].getvalue())

    threads = [threading.Thread(target=command, args=(n, n == "tty")) for n in ("tty", "pipe")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Only stdout is the client's terminal: no prompt reads input, no progress bar is drawn.
    assert seen == {"tty": (True, False, False, "tty\n"), "pipe": (False, False, False, "pipe\n")}


def test_a_read_after_a_write_by_another_process_sees_it(league) -> None:
    server, db = league
    before = server.get("/api/campaigns/autumn/state")[1]
    assert server.get("/api/campaigns/autumn/state")[1] == before
    assert tracker(db, "next").returncode == 0
    after = server.get("/api/campaigns/autumn/state")[1]
    assert after["seq"] > before["seq"] and after["phase"] != before["phase"]
    assert server.get("/api/campaigns/autumn/pending")[1] == server.get("/api/campaigns/autumn/pending")[1]
