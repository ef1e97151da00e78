"""D5 in the reliability figures (issue 24 §1): one campaign taken along every path that touches
a seed (created and played through the server, first served, a reveal at the end of each round,
a reveal on request, export and import), the campaign database's files (the database, -wal,
-shm) scanned for the current secret seed after each, as hex, base64 and raw bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import served
from tests.test_seed_secrecy import found_in_files, rows, run, secret_seed, tracker

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def test_d5_no_path_that_touches_a_seed_leaves_the_secret_one_in_the_campaign_files(
    tmp_path: Path, figures: Any
) -> None:
    db, keys = tmp_path / "league.db", tmp_path / "keys.db"
    added = tracker("--db", str(db), "players", "add", "lena", "--referee", "--league")
    assert added.returncode == 0, added.stderr
    lena = added.stdout.strip().splitlines()[-1]
    found: list[str] = []
    scans = 0

    def scan(path: Path = db) -> None:
        nonlocal scans
        scans += 1
        found.extend(found_in_files(path, secret_seed(keys)))

    with served(str(db), "--keys", str(keys), "--reveal", "each-round", workdir=tmp_path) as server:
        run(server, lena, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
        scan()
        for wanted in (2, 3):
            run(server, lena, "research", "advanced_submarine")
            scan()
            while server.get("/api/campaigns/autumn/state", token=lena)[1]["round"] < wanted:
                for item in server.get("/api/campaigns/autumn/pending", token=lena)[1]:
                    if item["kind"] == "convoy_open":
                        run(server, lena, "convoy", "pass", "--by", item["nation"])
                run(server, lena, "next")
            scan()  # the round's seed revealed, the next one committed to
        run(server, lena, "dice", "reveal")
        scan()
    scan()
    exported, copy = tmp_path / "autumn.jsonl", tmp_path / "copy.db"
    assert tracker("--db", str(db), "export", str(exported)).returncode == 0
    scan(exported)
    assert tracker("--db", str(copy), "import", str(exported)).returncode == 0
    scan(copy)
    with served(str(copy), "--keys", str(tmp_path / "copy-keys.db"), workdir=tmp_path):
        scan(copy)
    # Every seed but the current one was revealed on the way, and the scan finds those.
    revealed = [seed for (seed,) in rows(keys, "SELECT seed FROM tracker_dice_seeds ORDER BY epoch")][:-1]
    assert len(revealed) == 3 and all(found_in_files(db, seed) for seed in revealed)
    assert found == []
    figures.add("seed secrecy (SQLite)", paths=7, scans=scans, seeds_revealed=len(revealed), secrets_found_in_files=0)
