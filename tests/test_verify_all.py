"""`tracker verify --all`: every campaign of a database checked, a line each, as an operator
checks a restored league database; one damaged campaign fails alone and the others are still
checked; through a server it is refused (one campaign at a time there)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.support import cli_on


@pytest.fixture
def league(tmp_path: Path) -> Path:
    db = tmp_path / "league.db"
    run = cli_on(db)
    run("new", "autumn", "--scenario", "north-sea-1914")
    run("new", "winter", "--scenario", "north-sea-1914")
    run("--campaign", "autumn", "next")
    return db


def test_verify_all_checks_every_campaign_a_line_each(league: Path) -> None:
    out = cli_on(league)("verify", "--all")
    lines = out.splitlines()
    assert lines[0].startswith("autumn: OK, 3 events, head 3:")
    assert lines[1].startswith("winter: OK, 1 event, head 1:")
    assert lines[2] == "2 campaigns verified: 2 OK, 0 failed."


def test_verify_all_reports_a_damaged_campaign_and_still_checks_the_others(league: Path) -> None:
    with sqlite3.connect(league) as conn:
        # autumn's last event, edited by hand.
        [(row_id,)] = conn.execute("SELECT max(id) FROM tracker_events")
        conn.execute("UPDATE tracker_events SET state = ? WHERE id = ?", (b"{edited", row_id))
    run = cli_on(league)
    out = run("verify", "--all", code=1)
    assert "autumn: FAILED: event 3 cannot be read" in out
    assert "winter: OK, 1 event" in out
    assert out.endswith("2 campaigns verified: 1 OK, 1 failed.\n")
    found = json.loads(run("verify", "--all", "--json", code=1))
    assert [(r["campaign"], r["ok"]) for r in found] == [("autumn", False), ("winter", True)]
    assert found[1]["head"]["seq"] == 1


def test_verify_all_with_a_head_is_bad_usage(league: Path) -> None:
    out = cli_on(league)("verify", "--all", "--head", "1:abcd", code=2)
    assert "--head is one campaign's" in out


def test_verify_all_is_refused_through_a_server() -> None:
    pytest.importorskip("starlette", reason="the server's commands need the server extra")
    from domain.errors import InputError
    from tracker.server.commands import check_args

    with pytest.raises(InputError, match="verify --all cannot be run through a server"):
        check_args(["verify", "--all"])
    assert check_args(["verify", "--campaign", "autumn"]) == ["verify", "--campaign", "autumn"]
