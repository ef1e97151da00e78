"""`tracker new NAME` without --scenario names the boards to choose from (a newcomer knows none
by name), and the counts the tracker prints read as English for one event."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tracker.cli.main import cli


def test_new_without_a_scenario_names_the_built_in_ones_and_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "new", "autumn"])
    assert result.exit_code == 2
    assert (
        "missing option --scenario: a built-in scenario (great-war-1914, north-sea-1914) or a scenario TOML file"
        in result.output
    )
    assert not db.exists()


def test_verify_and_import_of_a_campaign_of_one_event_say_1_event(tmp_path: Path) -> None:
    runner = CliRunner()
    db, copy, out = str(tmp_path / "c.db"), str(tmp_path / "d.db"), str(tmp_path / "c.jsonl")
    assert runner.invoke(cli, ["--db", db, "new", "v", "--scenario", "north-sea-1914"]).exit_code == 0
    assert runner.invoke(cli, ["--db", db, "verify"]).output.startswith("OK: 1 event, hash chain intact")
    assert runner.invoke(cli, ["--db", db, "export", out]).exit_code == 0
    assert "Imported campaign 'v': 1 event into" in runner.invoke(cli, ["--db", copy, "import", out]).output


def test_new_on_a_scenario_file_with_a_problem_names_the_check_that_lists_them_all(tmp_path: Path) -> None:
    runner = CliRunner()
    board = tmp_path / "my board.toml"
    assert runner.invoke(cli, ["scenario", "new", "mine", "-o", str(board)]).exit_code == 0
    text = board.read_text()
    board.write_text(text.replace("adjacent = [", 'adjacent = ["Nowhere", ', 1))
    db = tmp_path / "c.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "new", "autumn", "--scenario", str(board)])
    assert result.exit_code == 2
    assert "unknown zone 'Nowhere' in adjacency list" in result.output
    assert f"(`tracker scenario check '{board}'` lists every problem)" in result.output
    assert result.output.count("\n") == 1 and not db.exists()
