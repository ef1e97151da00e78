"""What keeps a campaign database small: a new SQLite file's small pages
(`tracker.storage.datastore.PAGE_SIZE`), and a state over `COMPRESS_OVER` bytes (a campaign's
first event, with its scenario and ruleset) kept compressed, whoever writes it (a new campaign,
an import). Files made before keep their pages, a first event stored plain still reads, and
an export holds every event's JSON as before."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.storage import datastore
from tracker.storage.datastore import PAGE_SIZE
from tracker.storage.rows import COMPRESS_OVER, COMPRESSED


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def pragma(db: str, name: str) -> Any:
    with sqlite3.connect(db) as conn:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]


def states(db: str) -> dict[int, bytes]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT originator_version, state FROM tracker_events ORDER BY id"))


def played(db: str, scenario: str = "great-war-1914") -> None:
    run(db, "new", "war", "--scenario", scenario)
    for _ in range(5):
        run(db, "next")


def test_a_new_database_has_small_pages_and_an_older_one_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = str(tmp_path / "new.db")
    played(new)
    assert (pragma(new, "page_size"), pragma(new, "journal_mode")) == (PAGE_SIZE, "wal")
    # A file made with SQLite's default pages, as every database was before: opened, written
    # and read as it is, its pages unchanged.
    old = str(tmp_path / "old.db")
    with monkeypatch.context() as before:
        before.setattr(datastore, "PAGE_SIZE", 4096)
        played(old)
    assert pragma(old, "page_size") == 4096
    for _ in range(5):
        run(old, "next")
    assert pragma(old, "page_size") == 4096
    assert run(old, "verify").startswith("OK:")


def test_rk1_the_first_event_is_kept_compressed_and_reads_as_every_other(tmp_path: Path) -> None:
    db = str(tmp_path / "war.db")
    played(db)
    stored = states(db)
    first = stored[1]
    assert first.startswith(COMPRESSED)
    plain = json.loads(zlib.decompress(first[len(COMPRESSED) :]))
    assert plain["name"] == "war" and "Heligoland Bight" in json.dumps(plain["scenario"])
    assert len(first) * 4 < len(zlib.decompress(first[len(COMPRESSED) :])), "compressed to under a quarter"
    # Every other event is plain JSON, as eventsourcing's own mapper writes it.
    assert all(s.startswith(b"{") and len(s) <= COMPRESS_OVER for v, s in stored.items() if v > 1)
    assert run(db, "verify").startswith("OK:")
    assert "created from scenario great-war-1914" in run(db, "explain", "1")
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        assert t.load(cid).scenario.title == "The Great War at sea, 1914-1918"


def test_rk4_an_export_holds_the_first_events_json_and_its_import_keeps_it_compressed(tmp_path: Path) -> None:
    db, out = str(tmp_path / "war.db"), str(tmp_path / "war.jsonl")
    played(db)
    run(db, "export", out)
    lines = Path(out).read_text().splitlines()
    first = json.loads(lines[1])
    assert first["seq"] == 1 and json.loads(first["state"])["name"] == "war"
    copy = str(tmp_path / "copy.db")
    run(copy, "import", out)
    assert states(copy)[1].startswith(COMPRESSED)
    assert run(copy, "verify").startswith("OK:")
    run(copy, "export", str(tmp_path / "again.jsonl"))
    assert Path(tmp_path / "again.jsonl").read_text().splitlines()[1:] == lines[1:]


def test_rk1_a_first_event_stored_plain_as_before_still_reads_and_plays(tmp_path: Path) -> None:
    db = str(tmp_path / "war.db")
    played(db, "north-sea-1914")
    with sqlite3.connect(db) as conn:
        (first,) = conn.execute("SELECT state FROM tracker_events WHERE originator_version = 1").fetchone()
        conn.execute(
            "UPDATE tracker_events SET state = ? WHERE originator_version = 1",
            (zlib.decompress(first[len(COMPRESSED) :]),),
        )
    assert states(db)[1].startswith(b"{")
    assert run(db, "verify").startswith("OK:")
    run(db, "next")
    run(db, "export", str(tmp_path / "plain.jsonl"))
    assert json.loads(json.loads(Path(tmp_path / "plain.jsonl").read_text().splitlines()[1])["state"])["name"] == "war"
    assert states(db)[1].startswith(b"{")  # left as it was stored
    assert run(db, "verify").startswith("OK:")


def test_rk1_a_damaged_compressed_first_event_is_named_by_verify_in_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "war.db")
    played(db, "north-sea-1914")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tracker_events SET state = ? WHERE originator_version = 1", (COMPRESSED + b"\x00damaged",))
    out = run(db, "verify", code=1)
    assert "event 1 cannot be read" in out and "Traceback" not in out


def test_rk3_an_undos_event_with_the_state_it_restores_is_kept_compressed(tmp_path: Path) -> None:
    db = str(tmp_path / "war.db")
    played(db)
    run(db, "undo")
    last = max(states(db))
    assert states(db)[last].startswith(COMPRESSED)
    assert run(db, "verify").startswith("OK:")
    assert run(db, "redo").startswith("redo of action")
    assert run(db, "verify").startswith("OK:")
