"""Group commit on a SQLite file (issue 28): the server's recording tracker commits each action
in its own transaction without waiting for the disk, and one flush of the write-ahead log makes
every commit before it durable; no request is answered before its commit is durable. Actions
sent at once on one campaign are each checked alone, on the state the one before left, and a
refused one records nothing while the others land."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.support import TRACKER, served
from tracker.service.application import Tracker
from tracker.service.players import Players
from tracker.storage import datastore as datastore_module
from tracker.storage.datastore import Datastore

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def _counting_fsync(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the flushes the datastore asks for (each still done)."""
    calls: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(datastore_module.os, "fsync", fsync)
    return calls


def test_one_flush_makes_every_commit_before_it_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Datastore(f"sqlite:///{tmp_path / 'g.db'}")
    try:
        with store.transaction(commit=True) as conn:
            conn.execute(text("CREATE TABLE t (x INTEGER)"))
        store.commit_in_groups()
        flushes = _counting_fsync(monkeypatch)
        before = store.commits
        for x in range(3):
            with store.transaction(commit=True) as conn:
                conn.execute(text("INSERT INTO t (x) VALUES (:x)"), {"x": x})
        assert store.commits == before + 3
        assert flushes == [], "a grouped commit does not wait for the disk"
        store.durable()
        assert len(flushes) == 1 and store.synced == store.commits
        store.durable()
        assert len(flushes) == 1, "nothing committed since the last flush: no other one"
    finally:
        store.close()
    with closing(sqlite3.connect(tmp_path / "g.db")) as conn:
        assert [r[0] for r in conn.execute("SELECT x FROM t ORDER BY x")] == [0, 1, 2]


def test_without_group_commit_durable_flushes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Datastore(f"sqlite:///{tmp_path / 'n.db'}")
    try:
        flushes = _counting_fsync(monkeypatch)
        with store.transaction(commit=True) as conn:
            conn.execute(text("CREATE TABLE t (x INTEGER)"))
        store.durable()
        assert flushes == [], "each commit waited for the disk itself (synchronous FULL)"
    finally:
        store.close()


def test_no_action_is_answered_before_its_commit_is_durable(tmp_path: Path) -> None:
    from tracker.server.app import Slot
    from tracker.server.served import ServedTracker

    db, keys = str(tmp_path / "league.db"), str(tmp_path / "keys.db")
    with Tracker(db) as t:
        cid = t.create("slots", "north-sea-1914", dice="manual").id
        token = Players(t.engine).add(str(cid), "referee", [], True)
    slot = Slot(lambda: ServedTracker(db, keys=keys), grouped=True)
    seen: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def one() -> None:
        def act(tracker: Any) -> int:
            player = tracker.players.authenticate(token)
            tracker.acting_as(player, lambda: tracker.perform(cid, "next", {}))
            return int(tracker.app.factory.datastore.commits)

        try:
            committed = slot.run(act)
            assert slot.tracker is not None
            synced = int(slot.tracker.app.factory.datastore.synced)  # type: ignore[attr-defined]
            with lock:
                seen.append((committed, synced))
        except BaseException as e:  # noqa: BLE001 - reported by the test below
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert not errors, errors
        assert len(seen) == 6
        for committed, synced in seen:
            assert synced >= committed, "answered before its commit was flushed"
        assert slot.tracker is not None
        campaign = slot.tracker.load(cid)
        assert campaign.phase == "placement", "six phases ended, each on the state the one before left"
    finally:
        slot.close()


def test_actions_sent_at_once_on_one_campaign_each_land_once_and_a_refused_one_records_nothing(
    tmp_path: Path,
) -> None:
    db, keys = tmp_path / "league.db", tmp_path / "keys.db"
    name = f"at-once-{uuid.uuid4().hex[:6]}"
    with Tracker(str(db)) as t:
        cid = t.create(name, "north-sea-1914", dice="manual").id
        token = Players(t.engine).add(str(cid), "referee", [], True)
    # From round 1's research phase, six phase ends are legal in any order (no gate is open on
    # the way to placement); a move of a unit nobody has is refused in every phase it meets.
    asked = [{"action": "next"}] * 6 + [{"action": "move", "inputs": {"units": ["XX-NONE"], "path": ["Skagerrak"]}}] * 2
    answers: list[tuple[int, Any]] = []
    lock = threading.Lock()
    with served(str(db), "--keys", str(keys), workdir=tmp_path) as server:
        start = threading.Barrier(len(asked))

        def send(body: dict[str, Any]) -> None:
            start.wait()
            answer = server.post(f"/api/campaigns/{name}/actions", body, token=token)
            with lock:
                answers.append(answer)

        threads = [threading.Thread(target=send, args=(body,)) for body in asked]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        status, log = server.get(f"/api/campaigns/{name}/log", token=token)
        assert status == 200, log
    done = [body for status, body in answers if status == 200]
    refused = [(status, body) for status, body in answers if status != 200]
    assert len(done) == 6 and len(refused) == 2, answers
    # Refused for the phase (T3) or the unit, whichever the state it ran on gave.
    assert all(400 <= status < 500 and body["error"] for status, body in refused), refused
    # The server's own action on first serve (D5: the seed the database held is revealed) aside.
    revealed = {r["data"]["action"] for r in log if r["kind"] == "SeedRevealed"}
    stored = sorted(r["seq"] for r in log if r["kind"] != "Created" and r["data"]["action"] not in revealed)
    answered = sorted(e["seq"] for body in done for e in body["events"])
    assert stored == answered, "each answered action's events once, and nothing of the refused ones"
    assert len({r["data"]["action"] for r in log if r["seq"] in answered}) == 6
    assert all(body["action"] == "next" for body in done)
    with Tracker(str(db)) as t:
        assert t.load(cid).phase == "placement"
    verified = subprocess.run(
        [*TRACKER, "--db", str(db), "--campaign", name, "verify"], capture_output=True, text=True, timeout=300
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
