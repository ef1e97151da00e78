"""A scenario's `ruleset = "house.toml"` names a file beside the scenario, whatever folder the
command runs in: `tracker new`, `scenario check` and `scenario map` read the group's house rules
from the board's folder, never another `house.toml` where the command happens to run. A built-in
name stays a name; a `--ruleset` typed on the command line stays the command's path."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.scenario import scenario_text
from tracker.cli.main import cli

BUILTIN = resources.files("domain.data").joinpath("rulesets", "twtea-3e.toml").read_text(encoding="utf-8")
# A unit type the built-in ruleset has not: a scenario using it loads only with the house rules.
LIGHT_CRUISER = """
[units.light_cruiser]
category = "naval"
class = "escort"
abbr = "CL"
attack = 4
defense = 4
move = 4
hits = 1
cost = 10
hostile = true
screens = true
search = { convoy = 5, interception = 3, asw = 3 }
asw_attack = 3

[units.battleship]"""


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def house_board(tmp_path: Path) -> Path:
    """boards/my.toml naming ruleset "house.toml" (beside it, with a light cruiser), and in the
    folder the commands run in, another house.toml: the built-in rules under another name."""
    boards = tmp_path / "boards"
    boards.mkdir()
    house = BUILTIN.replace('name = "twtea-3e"', 'name = "house"', 1).replace("\n[units.battleship]", LIGHT_CRUISER, 1)
    (boards / "house.toml").write_text(house, encoding="utf-8")
    text, _ = scenario_text("north-sea-1914")
    text = text.replace('ruleset = "twtea-3e"', 'ruleset = "house.toml"', 1)
    text += '\n[[units]]\nnation = "Britain"\ntype = "light_cruiser"\nat = "Central North Sea"\n'
    (boards / "my.toml").write_text(text, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    decoy = BUILTIN.replace('name = "twtea-3e"', 'name = "decoy"', 1)
    (elsewhere / "house.toml").write_text(decoy, encoding="utf-8")
    return elsewhere


def test_new_reads_the_ruleset_beside_the_scenario_not_the_one_where_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(house_board(tmp_path))
    out = run("--db", "c.db", "new", "c", "--scenario", "../boards/my.toml")
    assert "with ruleset house" in out
    assert "light_cruiser" in run("--db", "c.db", "units", "--json")


def test_check_and_map_read_the_ruleset_beside_the_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(house_board(tmp_path))
    assert "0 errors" in run("scenario", "check", "../boards/my.toml")
    assert "Wrote map.svg" in run("scenario", "map", "../boards/my.toml", "-o", "map.svg")
    # From the board's own folder as well.
    monkeypatch.chdir(tmp_path / "boards")
    assert "0 errors" in run("scenario", "check", "my.toml")


def test_a_missing_ruleset_is_named_where_it_was_looked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(house_board(tmp_path))
    (tmp_path / "boards" / "house.toml").unlink()
    # The house.toml where the command runs is not taken instead; the one looked for is named.
    looked = Path("..", "boards", "house.toml")
    out = run("scenario", "check", "../boards/my.toml", code=1)
    assert f"unknown ruleset 'house.toml': not a built-in (twtea-3e) and no file {looked} " in out
    out = run("--db", "c.db", "new", "c", "--scenario", "../boards/my.toml", code=2)
    assert (
        "scenario.ruleset: the ruleset cannot be read, so nothing else was checked: unknown ruleset "
        f"'house.toml': not a built-in (twtea-3e) and no file {looked} "
    ) in out
    assert not Path("c.db").exists()


def test_a_broken_ruleset_beside_the_scenario_is_named_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(house_board(tmp_path))
    house = tmp_path / "boards" / "house.toml"
    text = house.read_text(encoding="utf-8")
    house.write_text(text.replace("attack = 4", "attack = -1", 1), encoding="utf-8")
    out = run("--db", "c.db", "new", "c", "--scenario", "../boards/my.toml", code=2)
    # At the line of the key, as a scenario's problem is said.
    line = text[: text.index("attack = 4")].count("\n") + 1
    assert f"{Path('..', 'boards', 'house.toml')}:{line}: units.submarine.attack: value -1" in out


def test_a_ruleset_typed_on_the_command_line_is_the_commands_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(house_board(tmp_path))
    # The decoy where the command runs has no light cruiser: the scenario's is not read.
    out = run("scenario", "check", "../boards/my.toml", "--ruleset", "house.toml", code=1)
    assert "reference to unknown unit 'light_cruiser'" in out
    out = run("--db", "c.db", "new", "c", "--scenario", "../boards/my.toml", "--ruleset", "house.toml", code=2)
    assert "unknown unit 'light_cruiser'" in out


def test_a_builtin_name_stays_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file called twtea-3e beside the scenario is not the built-in ruleset's stand-in.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "twtea-3e").write_text("not toml [", encoding="utf-8")
    text, _ = scenario_text("north-sea-1914")
    (tmp_path / "my.toml").write_text(text, encoding="utf-8")
    assert "with ruleset twtea-3e" in run("--db", "c.db", "new", "c", "--scenario", "my.toml")


def test_a_scenario_piped_through_dev_stdin_reads_the_ruleset_where_the_command_runs(tmp_path: Path) -> None:
    """`cat my.toml | tracker scenario check /dev/stdin` (or `<(...)`): a stream has no folder,
    as `-` has none; the ruleset was looked for in /dev, "no file /dev/house.toml"."""
    import subprocess
    import sys

    house_board(tmp_path)
    boards = tmp_path / "boards"
    text = (boards / "my.toml").read_text(encoding="utf-8")
    check = [sys.executable, "-m", "tracker", "scenario", "check", "/dev/stdin"]
    done = subprocess.run(check, input=text, capture_output=True, text=True, cwd=boards)
    assert "0 errors" in done.stdout and "/dev/house.toml" not in done.stdout + done.stderr, done.stdout + done.stderr
