"""PL1: the log names who acted by the player's name, and the league's players act in every
campaign of the database: a campaign's player and a league player may not share a name (two
people both recorded as "rita" could not be told apart)."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

from domain.errors import InputError
from tests.support import cli_on
from tracker.service.application import Tracker
from tracker.service.players import Players


def test_pl1_a_campaign_player_and_a_league_player_may_not_share_a_name(tmp_path: Path) -> None:
    run = cli_on(tmp_path / "c.db")

    run("players", "add", "rita", "--referee", "--league")
    run("new", "a", "--scenario", "north-sea-1914")
    said = run("--campaign", "a", "players", "add", "rita", "--nations", "Germany", code=2)
    assert "a player named 'rita' already plays in the league" in said
    run("--campaign", "a", "players", "add", "anna", "--nations", "Germany")
    said = run("players", "add", "anna", "--spectator", "--league", code=2)
    assert "a player named 'anna' already plays in a campaign of this league" in said
    # A name given up (its token revoked) may be taken.
    run("--campaign", "a", "players", "revoke", "anna")
    run("players", "add", "anna", "--spectator", "--league")
    assert "rita" not in run("--campaign", "a", "players", "list")


def test_pl1_a_player_is_found_however_the_accents_of_the_name_are_typed(tmp_path: Path) -> None:
    """A name is stored in one Unicode form ('ü' one character); typed with a combining accent
    (as some systems send it), `notify add --player`, `players revoke` and `inbox --player`
    did not find it ("no player 'Jürgen'")."""
    run = cli_on(tmp_path / "c.db")

    run("new", "a", "--scenario", "north-sea-1914")
    run("--campaign", "a", "players", "add", "J\u00fcrgen", "--nations", "Germany")
    typed = "Ju\u0308rgen"
    assert "a · round 1 · Germany · research" in run("inbox", "--player", typed)
    run("--campaign", "a", "notify", "add", "email", "j@example.org", "--player", typed)
    run("--campaign", "a", "players", "revoke", typed)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_pl1_two_adds_at_once_differing_only_by_case_never_both_pass(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Two `players add` at the same moment, "alice" and "Alice": each read the live names
    before the other wrote, so both passed the case check and both were recorded (the key is
    the exact name). One now waits for the other and is refused by name."""
    url = str(tmp_path / "c.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    campaign = f"race-{uuid.uuid4().hex[:8]}"
    with Tracker(url) as t:
        cid = str(t.create(campaign, "north-sea-1914").id)
        engine = t.engine
        first_checked = threading.Event()
        second_done = threading.Event()

        def hold_first_insert(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            # The first add has made its checks and is about to write: let the second one run
            # its checks now (or wait for it, when it cannot get that far).
            writing = statement.lstrip().startswith("INSERT INTO tracker_players")
            if writing and threading.current_thread().name == "first":
                first_checked.set()
                second_done.wait(timeout=1.5)

        sqlalchemy.event.listen(engine, "before_cursor_execute", hold_first_insert)
        outcomes: dict[str, str] = {}

        def add(thread_name: str, name: str) -> None:
            try:
                Players(engine).add(cid, name, ["Germany"], False)
                outcomes[thread_name] = "added"
            except InputError as e:
                outcomes[thread_name] = str(e)
            finally:
                if thread_name == "second":
                    second_done.set()

        first = threading.Thread(target=add, args=("first", "Alice"), name="first")
        first.start()
        assert first_checked.wait(timeout=10)
        second = threading.Thread(target=add, args=("second", "alice"), name="second")
        second.start()
        first.join(timeout=20)
        second.join(timeout=20)
        sqlalchemy.event.remove(engine, "before_cursor_execute", hold_first_insert)

        assert outcomes["first"] == "added"
        assert "differs from it only by case" in outcomes["second"], outcomes
        names = [p["name"] for p in Players(engine).listed(cid)]
        assert names == ["Alice"]
