"""The options of tracker itself (--db, --campaign, --server) go before the command; typed
after it they were refused as any unknown option, with a guess among the command's own
("no such option --db; did you mean --dice?"), which sent a newcomer the wrong way."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import cli_on
from tracker.cli.main import cli


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (
            ["new", "w", "--scenario", "north-sea-1914", "--db", "x.db"],
            "new: --db is an option of tracker itself: give it before the command, as in `tracker --db PATH new ...`",
        ),
        (["state", "--campaign=w"], "state: --campaign is an option of tracker itself"),
        (["battle", "start", "--server", "http://x"], "`tracker --server URL battle start ...`"),
    ],
)
def test_a_global_option_after_the_command_is_said_to_go_before_it(tmp_path: Path, words: list[str], said: str) -> None:
    result = CliRunner().invoke(cli, words, env={"TRACKER_DB": str(tmp_path / "c.db")})
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert "did you mean" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()


def test_any_other_unknown_option_is_said_as_before(tmp_path: Path) -> None:
    run = cli_on(tmp_path / "c.db")
    run("new", "w", "--scenario", "north-sea-1914")
    said = run("state", "--dbx", "1", code=2)
    assert "no such option --dbx" in said


def test_serve_with_a_server_in_the_environment_is_said_to_run_on_a_database(tmp_path: Path) -> None:
    """With TRACKER_SERVER set, `tracker --db X serve` said "leave out --db", which was not the
    problem: serve runs on a database, never through a server."""
    env = {"TRACKER_SERVER": "http://127.0.0.1:9", "TRACKER_DB": ""}
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "c.db"), "serve"], env=env)
    assert result.exit_code == 2, result.output
    assert "'serve' runs on a database, not through a server: unset TRACKER_SERVER for it" in result.output


def test_a_suggested_command_pasted_with_its_optional_parts_says_what_the_brackets_mean(tmp_path: Path) -> None:
    """`pending` writes optional parts in brackets (`[--units U1,U2]`); pasted as they stand,
    the command was refused as "more arguments than the command takes" without a word on why."""
    run = cli_on(tmp_path / "c.db")
    run("new", "w", "--scenario", "north-sea-1914")
    said = run("convoy", "search", "1", "[--units", "U1,U2]", "[--dice", "V,...]", code=2)
    assert "the parts of a suggested command in [brackets] are optional" in said
    assert len(said.strip().splitlines()) == 1


def test_scenario_tools_run_here_with_a_server_in_the_environment(tmp_path: Path) -> None:
    """`scenario check/new/map` read and write files alone: with TRACKER_SERVER exported (as the
    README sets it for a league) they were refused as running "on a database", and a group
    writing its board had to unset it."""
    env = {"TRACKER_SERVER": "http://127.0.0.1:9", "TRACKER_DB": ""}
    board = tmp_path / "board.toml"
    made = CliRunner().invoke(cli, ["scenario", "new", "board", "-o", str(board)], env=env)
    assert made.exit_code == 0, made.output
    checked = CliRunner().invoke(cli, ["scenario", "check", str(board)], env=env)
    assert checked.exit_code == 0, checked.output
    assert "not through a server" not in checked.output
