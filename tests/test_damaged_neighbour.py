"""One campaign damaged outside the tracker (an event row edited) in a database shared by
several: its own commands and pages name the damage, and every listing across campaigns
(`tracker inbox`, the viewer's list of campaigns) still shows the others, never a 500."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.support import in_process, served

DAMAGE = "event 1 cannot be read (MapperDeserialisationError): the stored row was edited"


def tracker(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command on `db`, run in this process."""
    return in_process("--db", str(db), *args)


@pytest.fixture
def league(tmp_path: Path) -> Path:
    """Two campaigns, `broken` with its first event cut in half, and `fine`."""
    db = tmp_path / "league.db"
    for name in ("broken", "fine"):
        assert tracker(db, "new", name, "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
    conn = sqlite3.connect(db)
    (cid,) = conn.execute("SELECT campaign_id FROM tracker_campaigns WHERE name = 'broken'").fetchone()
    conn.execute(
        "UPDATE tracker_events SET state = ? WHERE originator_version = 1 AND originator_id = ?",
        (b"zlib:garbage", uuid.UUID(cid).bytes),
    )
    conn.commit()
    conn.close()
    done = tracker(db, "--campaign", "broken", "state")
    assert done.returncode == 1 and DAMAGE in done.stderr, done.stderr
    return db


def test_inbox_lists_the_other_campaigns_past_a_damaged_one(league: Path) -> None:
    done = tracker(league, "inbox", "--json")
    assert done.returncode == 0, done.stderr
    assert [i["campaign"] for i in json.loads(done.stdout)] == ["fine"]
    # Named, the damaged campaign says what is wrong with it (exit 1, as verify).
    done = tracker(league, "--campaign", "broken", "inbox")
    assert done.returncode == 1 and DAMAGE in done.stderr


def test_the_viewer_lists_a_damaged_campaign_beside_the_others(league: Path, tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="tracker serve needs the server extra")
    done = tracker(league, "players", "add", "watcher", "--spectator", "--league")
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip().splitlines()[-1]
    work = tmp_path / "served"
    work.mkdir()
    with served(str(league), workdir=work) as server:
        request = urllib.request.Request(server.url + "/", headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as resp:
                status, html = resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            status, html = e.code, e.read().decode()
    assert status == 200, html
    assert 'href="/campaigns/fine/board"' in html
    assert "broken" in html and "the stored row was edited" in html
    assert 'href="/campaigns/broken/board"' not in html
