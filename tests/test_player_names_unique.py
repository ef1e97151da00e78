"""PL1: the log names who acted by the player's name, and the league's players act in every
campaign of the database: a campaign's player and a league player may not share a name (two
people both recorded as "rita" could not be told apart)."""

from __future__ import annotations

from pathlib import Path

from tests.support import cli_on


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
