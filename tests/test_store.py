"""Where campaigns live: database paths and URLs, and what opening one must never disturb."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from domain.errors import InputError
from tracker.service.application import Tracker

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
