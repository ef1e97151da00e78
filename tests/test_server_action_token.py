"""PL2 on a POSTed action, whose token is checked in the worker thread that then records it
(one hop to a thread, not two): the same answers as a token checked on its own. An unknown or
revoked token is 401, records nothing and counts as a failed check (429 once the address has
failed too often); an action refused to a known player (403, PL2) still has its request line
name the player; an action without a token is 401."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.support import in_process

pytest.importorskip("starlette", reason="the server needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

from tracker.server.access import FailedChecks  # noqa: E402
from tracker.server.app import create_app  # noqa: E402

ACTIONS = "/api/campaigns/autumn/actions"


def tracker(*args: str) -> subprocess.CompletedProcess[str]:
    """A command set up in this process: these tests are about the server's app, not the CLI's."""
    return in_process(*args)


@pytest.fixture
def league(tmp_path: Path) -> tuple[str, dict[str, str]]:
    db = str(tmp_path / "league.db")
    assert tracker("--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    tokens = {}
    for name, nations in (("anna", "Germany"), ("bob", "Britain"), ("gone", "Germany")):
        made = tracker("--db", db, "players", "add", name, "--nations", nations)
        assert made.returncode == 0, made.stderr
        tokens[name] = made.stdout.strip().splitlines()[-1]
    assert tracker("--db", db, "players", "revoke", "gone").returncode == 0
    return db, tokens


def seq(db: str) -> int:
    """The last event recorded, read from the database (the server may be refusing this address)."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT max(originator_version) FROM tracker_events").fetchone()[0])


def test_pl2_an_action_with_an_unknown_or_revoked_token_is_401_counted_then_429(league, tmp_path: Path) -> None:
    db, tokens = league
    app = create_app(db, keys=str(tmp_path / "keys.db"), failures=FailedChecks(limit=2))
    with TestClient(app) as client:
        before = seq(db)
        answers = [
            client.post(ACTIONS, json={"action": "next"}, headers={"Authorization": f"Bearer {token}"})
            for token in (tokens["gone"], "trk_0123456789abcdef_nope", tokens["anna"])
        ]
        assert [a.status_code for a in answers] == [401, 401, 429]
        assert answers[0].json()["error"] == "the token is unknown or revoked"
        assert answers[2].headers["Retry-After"].isdigit()
        assert seq(db) == before


def test_pl2_an_action_without_a_token_is_401_and_records_nothing(league, tmp_path: Path) -> None:
    db, tokens = league
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client:
        before = seq(db)
        answer = client.post(ACTIONS, json={"action": "next"})
        assert answer.status_code == 401 and "needs a player's token" in answer.json()["error"]
        assert seq(db) == before


def test_pl2_an_action_refused_to_its_player_is_403_and_its_request_line_names_them(
    league, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db, tokens = league
    with (
        TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client,
        caplog.at_level(logging.INFO, logger="tracker.requests"),
    ):
        before = seq(db)
        # Germany's turn: Britain's player may not end it.
        refused = client.post(ACTIONS, json={"action": "next"}, headers={"Authorization": f"Bearer {tokens['bob']}"})
        done = client.post(ACTIONS, json={"action": "next"}, headers={"Authorization": f"Bearer {tokens['anna']}"})
    assert refused.status_code == 403 and refused.json()["rule"] == "PL2", refused.json()
    assert done.status_code == 200 and done.json()["action"]
    assert seq(db) > before
    lines = [r.fields for r in caplog.records if getattr(r, "fields", {}).get("route", "").endswith("/actions")]
    assert [(line["status"], line["player"]) for line in lines] == [(403, "bob"), (200, "anna")]


def test_pl2_next_out_of_turn_is_403_even_when_the_rules_would_refuse_it_too(league, tmp_path: Path) -> None:
    """`next` is the phasing nation's (PL2): Britain's player sending it on Germany's turn was
    answered 409 with the rule that kept the phase open (T4: a naval battle due) and the
    command that would close it, as though it were theirs to do; through either route."""
    db, tokens = league
    anna, bob = ({"Authorization": f"Bearer {tokens[name]}"} for name in ("anna", "bob"))
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client:
        for asked in (
            {"action": "next"},
            {"action": "next"},
            {"action": "move", "inputs": {"units": ["DE-SS4"], "path": ["Central North Sea"]}},
            {"action": "next"},
        ):
            done = client.post(ACTIONS, json=asked, headers=anna)
            assert done.status_code == 200, done.json()
        before = seq(db)
        # Germany's naval combat, its battle due: the phase cannot end, and not by Britain.
        refused = client.post(ACTIONS, json={"action": "next"}, headers=bob)
        assert (refused.status_code, refused.json()["rule"]) == (403, "PL2"), refused.json()
        assert "bob plays Britain, not Germany" in refused.json()["error"]
        command = client.post("/api/command", json={"args": ["next"], "campaign": "autumn"}, headers=bob)
        assert (command.status_code, command.json()["rule"]) == (403, "PL2"), command.json()
        # Germany's own player is told the rule.
        ruled = client.post(ACTIONS, json={"action": "next"}, headers=anna)
        assert (ruled.status_code, ruled.json()["rule"]) == (409, "T4"), ruled.json()
        assert seq(db) == before
