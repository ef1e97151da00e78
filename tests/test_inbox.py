"""`tracker inbox` and `tracker wait` (issue: nobody polls): what the game waits for from one
player, across campaigns, on a database (`--player NAME`) and through a server (the token says
who); `wait` returns as soon as the game waits for that player, and not before."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.support import TRACKER, in_process, served


def tracker(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A command run in this process; the `wait` that must keep waiting is a process of its own."""
    return in_process(*args, env=env)


def token_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture
def two_campaigns(tmp_path: Path) -> tuple[str, dict[str, str]]:
    db = str(tmp_path / "league.db")
    tokens = {}
    for name in ("autumn", "winter"):
        assert tracker("--db", db, "new", name, "--scenario", "north-sea-1914", "--dice", "manual").returncode == 0
        for player, nations in (("anna", "Germany"), ("bert", "Britain")):
            tokens[f"{player}-{name}"] = token_of(
                tracker("--db", db, "--campaign", name, "players", "add", player, "--nations", nations)
            )
        tokens[f"rita-{name}"] = token_of(
            tracker("--db", db, "--campaign", name, "players", "add", "rita", "--referee")
        )
    return db, tokens


def test_pl1_inbox_lists_what_each_player_owes_in_every_campaign(two_campaigns: tuple[str, dict[str, str]]) -> None:
    db, _ = two_campaigns
    done = tracker("--db", db, "inbox", "--player", "anna", "--json")
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)
    # Germany's research phase opens both campaigns: Anna owes it in each, with its command.
    assert [(i["campaign"], i["nation"], i["phase"], i["waiting"]) for i in items] == [
        ("autumn", "Germany", "research", ["Germany"]),
        ("winter", "Germany", "research", ["Germany"]),
    ]
    assert all(i["command"] for i in items)
    # Each command to copy names its campaign: there are two here.
    text = tracker("--db", db, "inbox", "--player", "anna").stdout
    assert [line.strip() for line in text.splitlines() if line.strip().startswith("next:")] == [
        f"next: tracker --campaign {name} next" for name in ("autumn", "winter")
    ], text
    text = tracker("--db", db, "inbox", "--player", "bert").stdout
    assert text.strip() == "Nothing waits for you."
    # A player of no campaign here is refused (a typo would otherwise owe nothing for ever);
    # nobody in particular sees everything.
    stranger = tracker("--db", db, "inbox", "--player", "nobody", "--json")
    assert stranger.returncode == 2 and "does not play in any campaign" in stranger.stderr
    assert len(json.loads(tracker("--db", db, "inbox", "--json").stdout)) == 2


def test_wait_returns_when_the_game_waits_for_the_player_and_not_before(
    two_campaigns: tuple[str, dict[str, str]],
) -> None:
    db, _ = two_campaigns
    refused = tracker("--db", db, "--campaign", "autumn", "wait", "--player", "bert", "--timeout", "0.5")
    assert refused.returncode == 1 and refused.stderr.strip() == "Error: nothing waited for you within 0.5 s"
    waiting = subprocess.Popen(
        [*TRACKER, "--db", db, "--campaign", "autumn", "wait", "--player", "bert", "--json", "--timeout", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.0)
        assert waiting.poll() is None, "wait returned while nothing waited for Britain"
        # Germany plays on to its collect_resources phase, where Britain may declare a convoy
        # attack (CV1): the first thing Britain owes, in Germany's turn.
        moved = tracker("--db", db, "--campaign", "autumn", "next", "--to", "research", "--nation", "Britain")
        assert "CV1" in moved.stderr
        out, err = waiting.communicate(timeout=30)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, err
    (item,) = json.loads(out)
    assert (item["campaign"], item["nation"], item["phase"]) == ("autumn", "Germany", "collect_resources")
    assert item["waiting"] == ["Britain"] and item["rule"] == "CV1"
    assert item["command"].startswith("tracker convoy")


def test_inbox_and_wait_through_a_server_know_the_player_by_token(
    two_campaigns: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    pytest.importorskip("starlette", reason="tracker serve needs the server extra")
    db, tokens = two_campaigns
    with served(db, workdir=tmp_path) as server:

        def remote(token: str, *args: str) -> subprocess.CompletedProcess[str]:
            env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "TRACKER_TOKEN": token}
            return tracker("--server", server.url, *args, env=env)

        mine = json.loads(remote(tokens["anna-autumn"], "inbox", "--json").stdout)
        # A token is one campaign's: Anna's autumn token shows what she owes in autumn.
        assert [(i["campaign"], i["nation"]) for i in mine] == [("autumn", "Germany")]
        assert remote(tokens["bert-autumn"], "--campaign", "autumn", "inbox").stdout.strip() == "Nothing waits for you."
        # A public campaign is read by everyone, and played only by its own players (PL2): what
        # winter waits for is no autumn player's, whatever their nations or role in autumn.
        made_public = remote(tokens["rita-winter"], "--campaign", "winter", "campaign", "public", "on")
        assert made_public.returncode == 0, made_public.stderr
        for holder in ("anna-autumn", "rita-autumn"):
            items = json.loads(remote(tokens[holder], "inbox", "--json").stdout)
            assert {i["campaign"] for i in items} == {"autumn"}, holder
        env = {"TRACKER_CONFIG": "/nonexistent/config.toml", "TRACKER_TOKEN": tokens["bert-autumn"]}
        clean = {k: v for k, v in os.environ.items() if k not in ("TRACKER_TOKEN", "TRACKER_SERVER")}
        waiting = subprocess.Popen(
            [*TRACKER, "--server", server.url, "--campaign", "autumn", "wait", "--timeout", "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**clean, **env},
        )
        try:
            time.sleep(1.5)
            assert waiting.poll() is None, "wait returned while nothing waited for Britain"
            moved = remote(tokens["rita-autumn"], "--campaign", "autumn", "next", "--to", "research", "--nation", "gb")
            assert "CV1" in moved.stderr, moved.stdout + moved.stderr
            out, err = waiting.communicate(timeout=30)
        finally:
            waiting.kill()
        assert waiting.returncode == 0, err
        assert out.startswith("autumn · round 1 · Germany · collect resources: ")
        assert "or tracker --campaign autumn convoy pass --by Britain" in out  # each command names it
        assert "--player" in remote(tokens["bert-autumn"], "wait", "--player", "x").stderr
