"""The server's reading tracker keeps each campaign it loaded and, once more events are
recorded, applies just those to its copy (checked against the hash chain, as a load checks
them): the copy then equals a fresh load, and an edited event among the new ones is refused
as damage, as a load refuses it. The writing tracker looks a name up on its writing
connection, and still sees a name another process gave another campaign."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import pytest

from tests.support import perform_advance
from tracker.service.application import Tracker

pytest.importorskip("starlette", reason="the server's tracker needs the server extra")

from tracker.server.served import ServedTracker  # noqa: E402
from tracker.storage.event_app import DamagedLogError  # noqa: E402


@dataclass
class Reads:
    """A campaign's database, a tracker recording on it and a server's reading tracker."""

    db: str
    writer: Tracker
    reader: ServedTracker
    cid: UUID


@pytest.fixture
def reads(tmp_path: Path) -> Iterator[Reads]:
    db = str(tmp_path / "reads.db")
    writer = Tracker(db)
    cid = writer.create("reads", "north-sea-1914", dice="auto").id
    reader = ServedTracker(db, keys=str(tmp_path / "keys.db"), reads_only=True)
    try:
        yield Reads(db, writer, reader, cid)
    finally:
        reader.close()
        writer.close()


def test_reader_copy_takes_the_events_recorded_since_and_equals_a_fresh_load(reads: Reads) -> None:
    kept = reads.reader.load(reads.cid)
    first = kept.version
    for _ in range(5):
        perform_advance(reads.writer, reads.cid)
    again = reads.reader.load(reads.cid)
    # The same copy, brought forward rather than loaded anew.
    assert again is kept
    assert again.version > first
    with Tracker(reads.db) as fresh:
        loaded = fresh.load(reads.cid)
    assert again.version == loaded.version
    assert again.last_hash == loaded.last_hash
    assert again.pending() == loaded.pending()
    assert (again.round, again.nation, again.phase) == (loaded.round, loaded.nation, loaded.phase)
    assert again.units == loaded.units


def test_reader_copy_refuses_an_edited_event_recorded_since_as_a_load_does_D1(reads: Reads) -> None:
    kept = reads.reader.load(reads.cid)
    perform_advance(reads.writer, reads.cid)
    with sqlite3.connect(reads.db) as conn:
        # The first event recorded after the reader's copy (the action asked), edited outside
        # the tracker.
        conn.execute(
            "UPDATE tracker_events SET state = CAST(replace(CAST(state AS TEXT), '\"next\"', '\"undo\"') AS BLOB)"
            " WHERE originator_version = ?",
            (kept.version + 1,),
        )
        assert conn.total_changes == 1
    with pytest.raises(DamagedLogError, match="hash chain"):
        reads.reader.load(reads.cid)
    # The copy is dropped with the refusal: asking again is refused again, not served.
    with pytest.raises(DamagedLogError):
        reads.reader.load(reads.cid)


def test_the_writing_server_sees_a_name_another_process_moved_to_another_campaign(tmp_path: Path) -> None:
    # What `import --resolve theirs` does in another process: the old log renamed, its name
    # given to the new one. The server looks the name up on its writing connection.
    db = str(tmp_path / "names.db")
    with Tracker(db) as t:
        old = t.create("war", "north-sea-1914", dice="auto").id
        new = t.create("war-2", "north-sea-1914", dice="auto").id
    server = ServedTracker(db, keys=str(tmp_path / "keys.db"))
    try:
        for cid in (old, new):
            server.players.set_public(str(cid), True)  # readable without a token
        assert server.campaign_id("war") == old
        referee = server.players.authenticate(server.players.add(str(old), "referee", [], True))
        # An action opens the writing connection and leaves its cache warm.
        server.acting_as(referee, lambda: perform_advance(server, old))
        assert server.campaign_id("war") == old
        other = sqlite3.connect(db, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("UPDATE tracker_campaigns SET name = 'war-archive' WHERE campaign_id = ?", (str(old),))
            other.execute("UPDATE tracker_campaigns SET name = 'war' WHERE campaign_id = ?", (str(new),))
            other.execute("COMMIT")
        finally:
            other.close()
        assert server.campaign_id("war") == new
        assert server.campaign_id("war-archive") == old
        assert server.registry.lookup("war-2") is None
    finally:
        server.close()
