"""What the API's answer to an action says the game waits for: the same list as GET
.../pending and `tracker pending --json`, whose first item, with nothing open, is the `turn`
item naming the nation whose phase it is (docs/json.md). It was `[]` when nothing was open."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import TRACKER

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

from tracker.server.app import create_app  # noqa: E402


def tracker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRACKER, *args], capture_output=True, text=True, timeout=300)


def test_an_actions_pending_is_what_get_pending_and_the_command_line_list(tmp_path: Path) -> None:
    db = str(tmp_path / "league.db")
    assert tracker("--db", db, "new", "league1", "--scenario", "great-war-1914", "--dice", "auto").returncode == 0
    anna = tracker("--db", db, "players", "add", "anna", "--nations", "Germany").stdout.strip().splitlines()[-1]
    headers = {"Authorization": f"Bearer {anna}"}
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client:
        # Research ends: nothing is open in the purchase phase but Germany's turn.
        done = client.post("/api/campaigns/league1/actions", json={"action": "next"}, headers=headers)
        assert done.status_code == 200, done.json()
        listed = client.get("/api/campaigns/league1/pending", headers=headers).json()
    pending = done.json()["pending"]
    assert pending == listed
    assert pending[0]["kind"] == "turn" and pending[0]["waiting"] == ["Germany"] and pending[0]["phase"] == "purchase"
    assert pending[0]["command"] == "tracker next"
    local = json.loads(tracker("--db", db, "pending", "--json").stdout)
    assert local == listed
