"""D5 on first serve (issue 24 §1): a seed that ever sat in the campaign database is no secret,
so the server reveals it in the log when it first serves the campaign and commits to a fresh
seed made in its key store; that seed's bytes are then found nowhere in the campaign
database's files (the database, its -wal and -shm), as hex, base64 or raw bytes."""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
from pathlib import Path
from uuid import UUID

import pytest

from tests.support import TRACKER

pytest.importorskip("starlette", reason="the server's tracker needs the server extra")


def tracker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRACKER, *args], capture_output=True, text=True, timeout=300)


def seeds(path: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT epoch, seed FROM tracker_dice_seeds ORDER BY epoch").fetchall()


def found_in_files(db: Path, seed: str) -> list[str]:
    """Where the seed's bytes appear among the campaign database's files, in any of its forms."""
    raw = bytes.fromhex(seed)
    forms = {"hex": seed.encode(), "HEX": seed.upper().encode(), "base64": base64.b64encode(raw), "raw": raw}
    hits = []
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        if path.exists():
            data = path.read_bytes()
            hits += [f"{path.name}: {name}" for name, form in forms.items() if form in data]
    return hits


def test_d5_first_serve_reveals_the_seed_the_campaign_database_held_and_commits_to_a_fresh_one(
    tmp_path: Path,
) -> None:
    from tracker.server.served import SERVER, ServedTracker

    db, keys = tmp_path / "c.db", tmp_path / "keys.db"
    assert tracker("--db", str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    assert tracker("--db", str(db), "research", "advanced_submarine").returncode == 0
    [(epoch, old)] = seeds(db)
    assert epoch == 0

    served = ServedTracker(str(db), keys=str(keys))
    try:
        cid = UUID(served.registry.lookup("autumn"))
        campaign = served.load(cid)
        assert campaign.dice_epoch == 1
        assert [epoch for epoch, _ in seeds(keys)] == [0, 1]
        [(_, kept_old), (_, fresh)] = seeds(keys)
        assert kept_old == old and fresh != old
        asked = [e for e in served.events(cid) if type(e).__name__ == "ActionAsked"][-1]
        assert (asked.name, asked.player) == ("dice reveal", SERVER)
    finally:
        served.close()

    # The campaign database no longer holds any seed, and nothing of the fresh one.
    assert seeds(db) == []
    assert found_in_files(db, fresh) == []
    # The log alone re-derives the roll made under the old seed; the fresh one stays secret.
    local = json.loads(tracker("--db", str(db), "verify", "--json").stdout)
    assert local["ok"] and local["rolls_checked"] == 1
    revealed = json.loads(tracker("--db", str(db), "log", "--json", "--kind", "SeedRevealed").stdout)
    assert [r["data"]["seed"] for r in revealed] == [old]


def test_d5_a_second_serve_reveals_nothing_more(tmp_path: Path) -> None:
    from tracker.server.served import ServedTracker

    db, keys = tmp_path / "c.db", tmp_path / "keys.db"
    assert tracker("--db", str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    for _ in range(2):
        ServedTracker(str(db), keys=str(keys)).close()
    revealed = json.loads(tracker("--db", str(db), "log", "--json", "--kind", "SeedRevealed").stdout)
    assert len(revealed) == 1
    assert [epoch for epoch, _ in seeds(keys)] == [0, 1]
    fresh = seeds(keys)[1][1]
    assert found_in_files(db, fresh) == []
