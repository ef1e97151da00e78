"""Where campaigns live: database paths and URLs, and what opening one must never disturb."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from domain.errors import InputError
from tracker.service.application import Tracker
from tracker.storage.store import database_url

_TRY_WRITE_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
try:
    conn.execute("BEGIN IMMEDIATE")
except sqlite3.OperationalError as e:
    print("locked" if "locked" in str(e) else f"error {e}")
else:
    print("got the lock")
"""


def _other_process_can_write(path: Path) -> str:
    return subprocess.run(
        [sys.executable, "-c", _TRY_WRITE_LOCK, str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_second_tracker_on_one_file_keeps_the_first_ones_locks(tmp_path: Path, unique_name: str) -> None:
    path = tmp_path / "campaign.db"
    with Tracker(str(path)) as first:
        first.create(unique_name, "north-sea-1914")
        raw = first.engine.raw_connection()
        try:
            driver = raw.driver_connection
            assert isinstance(driver, sqlite3.Connection)
            driver.isolation_level = None
            driver.execute("BEGIN IMMEDIATE")
            assert _other_process_can_write(path) == "locked"
            # Opening the same file again checks it is a database: that must not drop the lock.
            with Tracker(str(path)) as second:
                assert second.campaign_names() == [unique_name]
                assert _other_process_can_write(path) == "locked"
            assert _other_process_can_write(path) == "locked"
            driver.execute("ROLLBACK")
        finally:
            raw.close()
        assert _other_process_can_write(path) == "got the lock"


@pytest.mark.parametrize("content", [b"hello", b"x" * 5000, b"SQLite format 3\x00" + b"\x00" * 100])
def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    with pytest.raises(InputError, match="is not a SQLite database"):
        Tracker(str(path))
    assert path.read_bytes() == content


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://league:s3cret@db/league", "unsupported database 'mysql' in 'mysql://league:***@db/league'"),
        ("postgres://league:s3cret@db/league", "unsupported database 'postgres'"),
        ("mysql://league:s3c@ret@db/league", "'mysql://league:***@db/league'"),
        ("postgresql://league:s3cret@db:5432x/league", "bad database URL 'postgresql://league:***@db:5432x/league': "
         "its port is not a number"),
        ("://league:s3cret@db/league", "bad database URL '://league:***@db/league'"),
    ],
)  # fmt: skip
def test_a_database_url_that_is_refused_is_quoted_without_its_password(url: str, message: str) -> None:
    # An operator's TRACKER_DB holds the database's password: a refusal (exit 2) quotes what
    # was typed so it can be fixed, but the password never reaches the terminal or a log.
    with pytest.raises(InputError) as refused:
        database_url(url)
    assert message in str(refused.value)
    assert "s3c" not in str(refused.value) and "ret@" not in str(refused.value)


def _fill(t: Tracker) -> None:
    """Let the file grow by a few pages more, then no more (as on a full disk): SQLite then
    refuses a write that needs a new page with SQLITE_FULL, "database or disk is full"."""
    raw = t.app.factory.datastore.writer().connection.driver_connection  # type: ignore[attr-defined]
    pages = raw.execute("PRAGMA page_count").fetchone()[0]
    raw.execute(f"PRAGMA max_page_count = {pages + 3}")


def test_a_full_disk_is_one_line_and_records_nothing(tmp_path: Path) -> None:
    from domain.errors import TrackerError

    db = str(tmp_path / "c.db")
    with Tracker(db) as t:
        t.create("autumn", "north-sea-1914")
        cid = t.campaign_id("autumn")
        before = len(t.stored_events(cid))
        _fill(t)
        with pytest.raises(TrackerError) as refused:
            for n in range(200):  # each adds a row; a page fills within a few
                t.perform(cid, "adjust", {"reason": f"supplies {n} " + "x" * 500, "resources": ["Germany=+1"]})
        recorded = len(t.stored_events(cid))
    assert recorded > before
    # Not an "unexpected OperationalError": what happened and that nothing was recorded.
    assert str(refused.value).startswith("the database is full (database or disk is full): nothing was recorded")
    assert (recorded - before) % 2 == 0  # each action whole (its ActionAsked and its Adjusted), or nothing
    with Tracker(db) as t:
        assert len(t.stored_events(t.campaign_id("autumn"))) == recorded
