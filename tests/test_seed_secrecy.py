"""D5 on first serve (issue 24 §1): a seed that ever sat in the campaign database is no secret,
so the server reveals it in the log when it first serves the campaign and commits to a fresh
seed made in its key store; that seed's bytes are then found nowhere in the campaign
database's files (the database, its -wal and -shm), as hex, base64 or raw bytes. Nor after any
other path that touches a seed: actions through the server, a campaign created through it,
the reveal at the end of each round, a reveal on request (which commits to the next seed),
and an export and its import."""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from tests.support import in_process, served

pytest.importorskip("starlette", reason="the server's tracker needs the server extra")


def tracker(*args: str) -> subprocess.CompletedProcess[str]:
    """A command on a campaign database, run in this process; the servers run as processes."""
    return in_process(*args)


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
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tracker.server.served import SERVER, ServedTracker

    db, keys = tmp_path / "c.db", tmp_path / "keys.db"
    assert tracker("--db", str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    assert tracker("--db", str(db), "research", "advanced_submarine").returncode == 0
    [(epoch, old)] = seeds(db)
    assert epoch == 0

    with caplog.at_level("INFO", logger="tracker.server"):
        served = ServedTracker(str(db), keys=str(keys))
    try:
        cid = UUID(served.registry.lookup("autumn"))
        campaign = served.load(cid)
        assert campaign.dice_epoch == 1
        assert [epoch for epoch, _ in seeds(keys)] == [0, 1]
        [(_, kept_old), (_, fresh)] = seeds(keys)
        assert kept_old == old and fresh != old
        asked: Any = [e for e in served.events(cid) if type(e).__name__ == "ActionAsked"][-1]
        assert (asked.name, asked.player) == ("dice reveal", SERVER)
        # Said in the server's log: a copy played by file must send these events on, or forks.
        # (How many events the research roll recorded depends on its die.)
        events = f"events {asked.originator_version}-{campaign.version}"
        said = f"Campaign 'autumn': the dice seed its database held is revealed in its log (D5, {events})"
        assert said in caplog.text
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


# ----- every other path that touches a seed (issue 24 §1) -----


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def secret_seed(keys: Path) -> str:
    """The seed the campaign rolls with now: the key store's latest, never revealed."""
    return str(rows(keys, "SELECT seed FROM tracker_dice_seeds ORDER BY epoch DESC LIMIT 1")[0][0])


def served_league(work: Path) -> tuple[Path, Path, str]:
    """A campaign with auto dice and its referee's token."""
    db = work / "league.db"
    assert tracker("--db", str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    added = tracker("--db", str(db), "players", "add", "rita", "--referee")
    assert added.returncode == 0, added.stderr
    return db, work / "keys.db", added.stdout.strip().splitlines()[-1]


def run(server: Any, token: str, *args: str) -> dict[str, Any]:
    status, body = server.post("/api/command", {"args": list(args), "campaign": "autumn"}, token=token)
    assert status == 200, body
    return dict(body)


def test_d5_the_scan_finds_a_seed_the_files_hold(tmp_path: Path) -> None:
    # A local campaign keeps its seed in its database until it is first served: found.
    db = tmp_path / "c.db"
    assert tracker("--db", str(db), "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    [(_, seed)] = seeds(db)
    assert found_in_files(db, seed) != []


def test_d5_actions_through_the_server_leave_the_secret_seed_out_of_the_campaign_files(tmp_path: Path) -> None:
    db, keys, rita = served_league(tmp_path)
    with served(str(db), "--keys", str(keys), workdir=tmp_path) as server:
        run(server, rita, "research", "advanced_submarine")
        run(server, rita, "next")
        # Checked while the server runs, its -wal and -shm files open.
        assert found_in_files(db, secret_seed(keys)) == []
    assert found_in_files(db, secret_seed(keys)) == []


def test_d5_a_campaign_created_through_the_server_never_writes_its_seed_to_the_campaign_files(
    tmp_path: Path,
) -> None:
    db = tmp_path / "league.db"
    added = tracker("--db", str(db), "players", "add", "lena", "--referee", "--league")
    assert added.returncode == 0, added.stderr
    lena = added.stdout.strip().splitlines()[-1]
    keys = tmp_path / "keys.db"
    with served(str(db), "--keys", str(keys), workdir=tmp_path) as server:
        run(server, lena, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
        run(server, lena, "research", "advanced_submarine")
        assert found_in_files(db, secret_seed(keys)) == []
    assert rows(db, "SELECT count(*) FROM tracker_dice_seeds") == [(0,)]
    assert found_in_files(db, secret_seed(keys)) == []


def test_d5_each_round_reveals_leave_the_next_seed_out_of_the_campaign_files(tmp_path: Path) -> None:
    db, keys, rita = served_league(tmp_path)
    with served(str(db), "--keys", str(keys), "--reveal", "each-round", workdir=tmp_path) as server:
        for wanted in (2, 3):
            run(server, rita, "research", "advanced_submarine")
            while server.get("/api/campaigns/autumn/state", token=rita)[1]["round"] < wanted:
                for item in server.get("/api/campaigns/autumn/pending", token=rita)[1]:
                    if item["kind"] == "convoy_open":
                        run(server, rita, "convoy", "pass", "--by", item["nation"])
                run(server, rita, "next")
            assert found_in_files(db, secret_seed(keys)) == []
    revealed = [r[0] for r in rows(keys, "SELECT seed FROM tracker_dice_seeds ORDER BY epoch")][:-1]
    # Epoch 0 on first serve, epochs 1 and 2 at the ends of rounds 1 and 2: public, in the log.
    assert len(revealed) == 3 and all(found_in_files(db, seed) for seed in revealed)
    assert found_in_files(db, secret_seed(keys)) == []


def test_d5_a_reveal_on_request_commits_to_a_seed_kept_out_of_the_campaign_files(tmp_path: Path) -> None:
    db, keys, rita = served_league(tmp_path)
    with served(str(db), "--keys", str(keys), workdir=tmp_path) as server:
        run(server, rita, "research", "advanced_submarine")
        before = secret_seed(keys)
        run(server, rita, "dice", "reveal")
        after = secret_seed(keys)
        assert after != before
        assert found_in_files(db, before) != []  # revealed: in the log now
        assert found_in_files(db, after) == []
    assert found_in_files(db, after) == []


def test_d5_an_export_and_its_import_carry_no_secret_seed(tmp_path: Path) -> None:
    db, keys, rita = served_league(tmp_path)
    with served(str(db), "--keys", str(keys), workdir=tmp_path) as server:
        run(server, rita, "research", "advanced_submarine")
    secret = secret_seed(keys)
    exported = tmp_path / "autumn.jsonl"
    assert tracker("--db", str(db), "export", str(exported)).returncode == 0
    copy = tmp_path / "copy.db"
    imported = tracker("--db", str(copy), "import", str(exported))
    assert imported.returncode == 0, imported.stderr
    assert rows(copy, "SELECT count(*) FROM tracker_dice_seeds") == [(0,)]
    for path in (exported, copy):
        assert found_in_files(path, secret) == [], path
    # Served, the imported copy has no seed to move: it makes none for the secret one either.
    with served(str(copy), "--keys", str(tmp_path / "copy-keys.db"), workdir=tmp_path):
        assert found_in_files(copy, secret) == []
