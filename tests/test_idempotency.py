"""Idempotency keys (issue 24 §4): a request sent again with the same `Idempotency-Key` is
answered the first answer and records nothing more; the key is written in the transaction of
the action's events, so a dropped answer, a retry or a second server process never records an
action twice, and a refused action leaves the key free. The `--server` client sends a fresh key
with every command and retries once, with the same key, when the connection fails."""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import subprocess
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import Server, in_process, served

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def tracker(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command line, run in this process: these tests are about the requests it sends and
    the server's answers, not about its process."""
    return in_process(*args, env=env)


@dataclass(frozen=True)
class League:
    """A campaign of this test's own with auto dice, on the module's server: its name, its
    referee's token and a German player's."""

    server: Server
    db: Path
    name: str
    rita: str
    anna: str

    @property
    def actions(self) -> str:
        return f"/api/campaigns/{self.name}/actions"

    def kinds(self) -> list[str]:
        """The kinds of this campaign's events, in order (read from the log's own rows)."""
        with sqlite3.connect(self.db) as conn:
            (cid,) = conn.execute("SELECT campaign_id FROM tracker_campaigns WHERE name = ?", (self.name,)).fetchone()
            rows = conn.execute(
                "SELECT topic FROM tracker_events WHERE originator_id = ? ORDER BY originator_version",
                (uuid.UUID(cid).bytes,),
            )
            topics = [r[0] for r in rows]
        return [topic.rsplit(".", 1)[-1] for topic in topics]


@pytest.fixture(scope="module")
def leagues(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Iterator[League]]:
    """One `tracker serve` for the module over a campaign for each test that asks for one
    (`league`), each with auto dice, a referee and a German player. The campaigns are made
    locally before the server first serves them, as each test's own server once found its
    campaign; each test has one of its own, so none sees what another recorded."""
    work = tmp_path_factory.mktemp("idempotency")
    db = work / "league.db"
    here = [item for item in request.session.items if getattr(item, "module", None) is request.module]
    made: list[tuple[str, str, str]] = []
    for n in range(sum("league" in getattr(item, "fixturenames", ()) for item in here)):
        name = f"autumn-{n}"
        done = tracker("--db", str(db), "new", name, "--scenario", "north-sea-1914", "--dice", "auto")
        assert done.returncode == 0, done.stderr
        tokens = []
        for args in (["rita", "--referee"], ["anna", "--nations", "Germany"]):
            added = tracker("--db", str(db), "--campaign", name, "players", "add", *args)
            assert added.returncode == 0, added.stderr
            tokens.append(added.stdout.strip().splitlines()[-1])
        made.append((name, tokens[0], tokens[1]))
    with served(str(db), "--keys", str(work / "keys.db"), workdir=work) as server:
        yield iter(League(server, db, *campaign) for campaign in made)


@pytest.fixture
def league(leagues: Iterator[League]) -> League:
    """This test's own campaign on the module's server."""
    given = next(leagues, None)
    assert given is not None, "more tests asked for a campaign than the module's server was given"
    return given


def post(url: str, path: str, body: Any, token: str, key: str | None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


RESEARCH = {"action": "research", "inputs": {"technology": "advanced_submarine"}}


def test_a_repeated_key_is_answered_the_first_answer_and_records_nothing(league: League) -> None:
    server, anna = league.server, league.anna
    key = str(uuid.uuid4())
    first = post(server.url, league.actions, RESEARCH, anna, key)
    assert first[0] == 200, first
    before = league.kinds()
    again = post(server.url, league.actions, RESEARCH, anna, key)
    assert again == first
    assert league.kinds() == before
    assert before.count("ResearchPaid") == 1
    # A fresh key is a new request: it runs, and the referee refuses a second research roll.
    third = post(server.url, league.actions, RESEARCH, anna, str(uuid.uuid4()))
    assert third[0] == 409 and third[1]["rule"], third
    assert league.kinds() == before


def test_a_repeated_command_with_its_key_is_answered_its_first_output(league: League) -> None:
    server, rita = league.server, league.rita
    key = str(uuid.uuid4())
    body = {"args": ["next"], "campaign": league.name}
    first = post(server.url, "/api/command", body, rita, key)
    assert first[0] == 200 and first[1]["exit"] == 0, first
    before = league.kinds()
    assert post(server.url, "/api/command", body, rita, key) == first
    assert league.kinds() == before and before.count("PhaseAdvanced") == 1


def reused(first: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The 422 a key sent again with another request gets, naming what `first` recorded."""
    seqs = [e["seq"] for e in first["events"]] if "events" in first else []
    span = f"{first['asked']}-{seqs[-1]}" if seqs else None
    message = (
        f"this Idempotency-Key was used for a different request (the one that recorded events {span}): "
        "nothing was recorded; send a new key with a new request"
    )
    return 422, {"error": message, "rule": None}


def adjust(amount: str) -> dict[str, Any]:
    return {"action": "adjust", "inputs": {"resources": [f"Germany={amount}"], "reason": "a"}}


def test_a_key_sent_again_with_a_different_body_is_refused_with_422_and_records_nothing(league: League) -> None:
    """The IETF draft on the Idempotency-Key header: a key reused with another payload is a
    422; answering the first answer would say the second request was recorded."""
    server, rita = league.server, league.rita
    key = str(uuid.uuid4())
    first = post(server.url, league.actions, adjust("+1"), rita, key)
    assert first[0] == 200, first
    before = league.kinds()
    for other in (adjust("+50"), {**adjust("+1"), "seen": first[1]["asked"]}, RESEARCH):
        assert post(server.url, league.actions, other, rita, key) == reused(first[1])
    assert league.kinds() == before
    # The same request with the key is still answered its first answer.
    assert post(server.url, league.actions, adjust("+1"), rita, key) == first
    # The key on the command line's route is another request, too.
    command = {"args": ["adjust", "--resources", "Germany=+1", "--reason", "a"], "campaign": league.name}
    assert post(server.url, "/api/command", command, rita, key) == reused(first[1])
    assert league.kinds() == before


def test_a_command_key_sent_again_with_another_command_line_is_refused_with_422(league: League) -> None:
    server, rita = league.server, league.rita
    key = str(uuid.uuid4())
    body = {"args": ["next"], "campaign": league.name}
    first = post(server.url, "/api/command", body, rita, key)
    assert first[0] == 200 and first[1]["exit"] == 0, first
    before = league.kinds()
    with sqlite3.connect(league.db) as conn:
        span = conn.execute("SELECT first_version, last_version FROM tracker_request_keys WHERE key = ?", (key,))
        low, high = span.fetchone()
    message = (
        f"this Idempotency-Key was used for a different request (the one that recorded events {low}-{high}): "
        "nothing was recorded; send a new key with a new request"
    )
    for args in (["next", "--to", "combat_movement"], ["adjust", "--resources", "Germany=5", "--reason", "x"]):
        other = post(server.url, "/api/command", {"args": args, "campaign": league.name}, rita, key)
        assert other == (422, {"error": message, "rule": None})
    assert league.kinds() == before
    # Another terminal is the same request: only what it asks tells requests apart.
    again = post(server.url, "/api/command", {**body, "columns": 120, "color_system": "truecolor"}, rita, key)
    assert again == first


def test_another_players_equal_key_is_their_own_request(league: League) -> None:
    server, rita, anna = league.server, league.rita, league.anna
    key = str(uuid.uuid4())
    first = post(server.url, league.actions, {"action": "next"}, anna, key)
    other = post(server.url, league.actions, {"action": "next"}, rita, key)
    assert first[0] == other[0] == 200, (first, other)
    assert other[1]["asked"] > first[1]["asked"]
    assert league.kinds().count("PhaseAdvanced") == 2


def test_a_refused_action_leaves_its_key_free(league: League) -> None:
    server, anna = league.server, league.anna
    key = str(uuid.uuid4())
    refused = post(server.url, league.actions, {"action": "research", "inputs": {}}, anna, key)
    assert refused[0] == 400, refused
    done = post(server.url, league.actions, RESEARCH, anna, key)
    assert done[0] == 200 and league.kinds().count("ResearchPaid") == 1


@pytest.mark.parametrize("key", ["", "has space", "x" * 101, "ключ"])
def test_a_malformed_key_is_bad_usage(league: League, key: str) -> None:
    server, anna = league.server, league.anna
    before = league.kinds()
    # urllib refuses to send a non-ASCII header: that one goes as its UTF-8 bytes.
    answer = raw_post(server.url, league.actions, RESEARCH, anna, key.encode())
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"Idempotency-Key must be" in answer
    assert league.kinds() == before


def raw_post(url: str, path: str, body: Any, token: str, key: bytes) -> bytes:
    """A POST sent on a plain socket, its Idempotency-Key header as the bytes given: the whole answer."""
    host, port = url.removeprefix("http://").split(":")
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {len(data)}\r\nConnection: close\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(head + b"Idempotency-Key: " + key + b"\r\n\r\n" + data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_connection_dropped_after_the_commit_is_retried_safely(league: League) -> None:
    server, anna = league.server, league.anna
    key = str(uuid.uuid4())
    before = league.kinds()
    with losing_proxy(server.url) as (url, seen):
        # The server records and answers; the connection is closed before the answer comes.
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            post(url, league.actions, RESEARCH, anna, key)
        recorded = league.kinds()
        assert recorded.count("ResearchPaid") == before.count("ResearchPaid") + 1
        status, answer = post(url, league.actions, RESEARCH, anna, key)
    assert len(seen) == 2
    assert status == 200, answer
    assert league.kinds() == recorded
    # The answer names the events the one action recorded after what was asked.
    assert [e["kind"] for e in answer["events"]] == recorded[answer["asked"] :]
    assert post(server.url, league.actions, RESEARCH, anna, key) == (status, answer)


@contextmanager
def losing_proxy(target: str) -> Iterator[tuple[str, list[bytes]]]:
    """A proxy to `target` that passes the first request on, waits for the server's answer and
    closes the client's connection without it; every later connection is passed through. Yields
    its URL and the requests it saw."""
    host, port = target.removeprefix("http://").split(":")
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def read_request(conn: socket.socket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        while len(rest) < length:
            rest += conn.recv(65536)
        return head + b"\r\n\r\n" + rest

    def forward(request: bytes) -> bytes:
        with socket.create_connection((host, int(port)), timeout=60) as upstream:
            upstream.sendall(request.replace(b"Connection: keep-alive", b"Connection: close"))
            chunks = []
            while chunk := upstream.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                request = read_request(conn)
                seen.append(request)
                answer = forward(request)
                if len(seen) > 1:
                    conn.sendall(answer)

    worker = threading.Thread(target=serve, daemon=True)
    worker.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        listener.close()


def idempotency_key(request: bytes) -> bytes:
    head = request.split(b"\r\n\r\n", 1)[0]
    return next(
        line.split(b":", 1)[1].strip() for line in head.split(b"\r\n") if line.lower().startswith(b"idempotency-key:")
    )


def test_the_client_retries_a_lost_answer_once_with_the_same_key(league: League) -> None:
    server, anna = league.server, league.anna
    before = league.kinds()
    with losing_proxy(server.url) as (url, seen):
        env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "TRACKER_TOKEN": anna}
        done = tracker("--server", url, "--campaign", league.name, "research", "advanced_submarine", env=env)
    assert done.returncode == 0, done.stderr
    assert "roll 1:" in done.stdout
    assert len(seen) == 2 and idempotency_key(seen[0]) == idempotency_key(seen[1])
    uuid.UUID(idempotency_key(seen[0]).decode())
    assert league.kinds().count("ResearchPaid") == before.count("ResearchPaid") + 1


def test_the_client_sends_a_fresh_key_with_every_command(league: League) -> None:
    server, rita = league.server, league.rita
    with losing_proxy(server.url) as (url, seen):
        env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "TRACKER_TOKEN": rita}
        for _ in range(2):
            assert tracker("--server", url, "--campaign", league.name, "next", env=env).returncode == 0
    keys = [idempotency_key(r) for r in seen]
    assert len(keys) == 3 and keys[0] == keys[1] != keys[2]
    assert league.kinds().count("PhaseAdvanced") == 2


def test_the_client_says_so_when_the_retry_fails_too(tmp_path: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "TRACKER_TOKEN": "x"}
    done = tracker("--server", f"http://127.0.0.1:{port}", "next", env=env)
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: cannot reach the server at http://127.0.0.1:{port}")
    assert "Traceback" not in done.stderr


# ----- the service: the key and the events in one transaction -----


def test_the_key_is_written_with_the_events_and_a_repeat_records_nothing(tmp_path: Path) -> None:
    from tracker.service.application import Tracker
    from tracker.service.idempotency import KeyedRequest, RepeatedRequest, answered_once, events_answer

    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("autumn", "north-sea-1914", dice="manual").id
        request = KeyedRequest(t.request_keys, "k1", "anna", events_answer)
        first = answered_once(t, request, lambda: events_answer(t.perform(cid, "next")))
        stored = t.request_keys.find("k1", "anna", str(cid))
        assert stored is not None and stored["answer"] == first
        assert (stored["first"], stored["last"]) == (2, t.load(cid).version)
        version = t.load(cid).version
        again = KeyedRequest(t.request_keys, "k1", "anna", events_answer)
        with pytest.raises(RepeatedRequest):
            t.with_key(again, lambda: t.perform(cid, "next"))
        assert answered_once(t, again, lambda: events_answer(t.perform(cid, "next"))) == first
        assert t.load(cid).version == version


def test_a_key_kept_before_fingerprints_answers_any_request_as_it_did(tmp_path: Path) -> None:
    """A row written by an earlier release holds the answer alone: it cannot tell requests
    apart, so it is answered as before; a row holding a fingerprint refuses another request."""
    from sqlalchemy import insert

    from tracker.service.application import Tracker
    from tracker.service.idempotency import KeyedRequest, KeyReused, answered_once, events_answer, keys_table

    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("autumn", "north-sea-1914", dice="manual").id
        old = {"exit": 0, "stdout": "old\n", "stderr": ""}
        with t.engine.begin() as conn:
            conn.execute(
                insert(keys_table).values(
                    campaign_id=str(cid), key="k0", player="anna", first_version=2, last_version=3,
                    answer=json.dumps(old), complete=1, created_at=0.0,
                )
            )  # fmt: skip
        request = KeyedRequest(t.request_keys, "k0", "anna", events_answer, "f" * 64)
        assert answered_once(t, request, lambda: events_answer(t.perform(cid, "next"))) == old
        first = KeyedRequest(t.request_keys, "k1", "anna", events_answer, "a" * 64)
        done = answered_once(t, first, lambda: events_answer(t.perform(cid, "next")))
        version = t.load(cid).version
        same = KeyedRequest(t.request_keys, "k1", "anna", events_answer, "a" * 64)
        assert answered_once(t, same, lambda: events_answer(t.perform(cid, "next"))) == done
        other = KeyedRequest(t.request_keys, "k1", "anna", events_answer, "b" * 64)
        with pytest.raises(KeyReused):
            answered_once(t, other, lambda: events_answer(t.perform(cid, "next")))
        assert t.load(cid).version == version


def test_a_key_written_meanwhile_by_another_process_keeps_the_events_out(tmp_path: Path) -> None:
    from sqlalchemy import insert

    from tracker.service.application import Tracker
    from tracker.service.idempotency import KeyedRequest, RepeatedRequest, keys_table

    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("autumn", "north-sea-1914", dice="manual").id
        version = t.load(cid).version

        def answer_while_another_process_writes_the_key(done: Any) -> dict[str, Any]:
            # Between this request's check of the key and its save, another process recorded it.
            with t.engine.begin() as conn:
                conn.execute(
                    insert(keys_table).values(
                        campaign_id=str(cid), key="k1", player="anna", first_version=2, last_version=3,
                        answer=json.dumps({"exit": 0, "stdout": "theirs\n", "stderr": ""}), complete=1, created_at=0.0,
                    )
                )  # fmt: skip
            return {"exit": 0, "stdout": "mine\n", "stderr": ""}

        request = KeyedRequest(t.request_keys, "k1", "anna", answer_while_another_process_writes_the_key)
        with pytest.raises(RepeatedRequest) as raised:
            t.with_key(request, lambda: t.perform(cid, "next"))
        assert raised.value.stored["answer"]["stdout"] == "theirs\n"
        assert t.load(cid).version == version
