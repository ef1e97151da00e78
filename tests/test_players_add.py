"""`tracker players add` (PL2): what a group may not have meant is said, and still allowed: a
nation another player already plays (a team, or a typo), and one player holding nations of
both sides (whose overrides still need another player's approval, RK3)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tracker.cli.main import cli


def add(db: Path, *args: str) -> tuple[str, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), "players", "add", *args])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def test_pl2_a_nation_another_player_plays_and_both_sides_in_one_hand_are_noted(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    assert CliRunner().invoke(cli, ["--db", str(db), "new", "g", "--scenario", "north-sea-1914"]).exit_code == 0
    out, err = add(db, "bert", "--nations", "Britain")
    assert err == "" and out.splitlines()[-1].startswith("trk_")
    out, err = add(db, "anna", "--nations", "Germany,britain")
    assert out.splitlines()[-1].startswith("trk_"), "the token stays the last line of the output"
    assert err.splitlines() == [
        "Note: Britain is also played by bert: each of them may act for it (PL2)",
        "Note: anna plays nations of both sides (Germany, Britain); an override they ask for still needs "
        "another player's approval (RK3)",
    ]
    # A revoked player plays no more.
    assert CliRunner().invoke(cli, ["--db", str(db), "players", "revoke", "bert"]).exit_code == 0
    assert (
        add(db, "cleo", "--nations", "Britain")[1]
        == "Note: Britain is also played by anna: each of them may act for it (PL2)\n"
    )


def test_pl1_the_league_referees_hints_name_league_and_following_them_revokes(tmp_path: Path) -> None:
    import shlex

    from tests.support import cli_on

    run = cli_on(tmp_path / "league.db")
    run("players", "add", "rita", "--referee", "--league")

    def hint(said: str) -> list[str]:
        command = shlex.split(said.strip().rsplit(": ", 1)[1])
        assert command[:4] == ["tracker", "players", "revoke", "--league"], said
        return command[1:]

    again = run("players", "add", "rita", "--referee", "--league", code=2)
    assert again.startswith("Error: player 'rita' already has a token; revoke it first:"), again
    twin = run("players", "add", "Rita", "--referee", "--league", code=2)
    assert "differs from it only by case" in twin
    assert hint(twin) == hint(again)
    # The hint, followed as printed, does what it says.
    assert run(*hint(again)) == "Token of 'rita' revoked.\n"
    assert run(*hint(again), code=2) == "Error: no player 'rita' with a live token in the league\n"
    # A campaign's player is still revoked without --league, as its hint says.
    run("new", "g", "--scenario", "north-sea-1914")
    run("players", "add", "anna", "--nations", "Germany")
    said = run("players", "add", "anna", "--nations", "Germany", code=2)
    assert said.strip().endswith("revoke it first: tracker players revoke 'anna'"), said
    assert (
        run("players", "revoke", "nobody", code=2) == "Error: no player 'nobody' with a live token in this campaign\n"
    )
