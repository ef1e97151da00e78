"""PL1: `tracker inbox` and `tracker wait` on a database with a `--player` who plays in none of
the campaigns asked about (a typo, a revoked token): refused at once, naming who does play
there, instead of "Nothing waits for you" or a wait that never ends."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    runner = CliRunner()
    for args in (
        ["new", "autumn", "--scenario", "north-sea-1914"],
        ["--campaign", "autumn", "players", "add", "anna", "--nations", "Germany"],
        ["--campaign", "autumn", "players", "add", "bert", "--nations", "Britain"],
    ):
        assert runner.invoke(cli, ["--db", path, *args]).exit_code == 0
    return path


@pytest.mark.parametrize("command", [["inbox"], ["wait", "--timeout", "60"]])
def test_pl1_a_player_who_plays_nowhere_is_refused_naming_the_players(db: str, command: list[str]) -> None:
    result = CliRunner().invoke(cli, ["--db", db, *command, "--player", "annna"])
    assert result.exit_code == 2, result.output
    assert "--player 'annna' does not play in any campaign of this database (players: anna, bert)" in result.output
    result = CliRunner().invoke(cli, ["--db", db, "--campaign", "autumn", *command, "--player", "annna"])
    assert result.exit_code == 2 and "does not play in campaign 'autumn'" in result.output


def test_pl1_a_revoked_player_is_refused_and_a_player_who_plays_is_answered(db: str) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", db, "--campaign", "autumn", "players", "revoke", "bert"]).exit_code == 0
    result = runner.invoke(cli, ["--db", db, "inbox", "--player", "bert"])
    assert result.exit_code == 2 and "(players: anna)" in result.output
    result = runner.invoke(cli, ["--db", db, "inbox", "--player", "anna"])
    assert result.exit_code == 0 and "autumn · round 1 · Germany · research" in result.output


def test_pl1_no_players_set_up_says_how_to_add_them(tmp_path: Path) -> None:
    path = str(tmp_path / "c.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", path, "new", "w", "--scenario", "north-sea-1914"]).exit_code == 0
    result = runner.invoke(cli, ["--db", path, "wait", "--player", "anna", "--timeout", "60"])
    assert result.exit_code == 2 and "no players are set up: `tracker players add`" in result.output
