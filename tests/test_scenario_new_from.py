"""`tracker scenario new NAME --from BUILTIN`: a copy of a built-in scenario to start a board
from, its comments and sources kept and its name changed; a pip install keeps the built-in files
deep in the Python environment, where the guide's `domain/data/scenarios/` is nowhere to be seen."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.scenario import scenario_text
from tracker.cli.main import cli


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


@pytest.mark.parametrize("builtin", ["north-sea-1914", "great-war-1914"])
def test_a_copy_of_a_builtin_checks_clean_and_starts_a_campaign(tmp_path: Path, builtin: str) -> None:
    target = tmp_path / "mine.toml"
    out = run("scenario", "new", "mine", "--from", builtin, "-o", str(target))
    assert f"a copy of {builtin}, named mine" in out
    text, _ = scenario_text(builtin)
    copied = target.read_text(encoding="utf-8")
    # Every line as the built-in writes it (comments and sources too) but the name's.
    assert [a for a, b in zip(copied.split("\n"), text.split("\n"), strict=True) if a != b] == ['name = "mine"']
    assert tomllib.loads(copied)["scenario"]["name"] == "mine"
    assert "0 errors" in run("scenario", "check", str(target))
    created = run("--db", str(tmp_path / "c.db"), "new", "c", "--scenario", str(target))
    assert "Campaign 'c' created" in created


def test_from_an_unknown_builtin_is_a_usage_error(tmp_path: Path) -> None:
    out = run("scenario", "new", "mine", "--from", "baltic", "-o", str(tmp_path / "x.toml"), code=2)
    assert "'baltic' is not one of 'great-war-1914', 'north-sea-1914'" in out
    assert not (tmp_path / "x.toml").exists()


def test_from_to_standard_output(tmp_path: Path) -> None:
    out = run("scenario", "new", "mine", "--from", "north-sea-1914", "-o", "-")
    assert tomllib.loads(out)["scenario"]["name"] == "mine"


def test_new_names_the_line_of_an_unknown_ruleset_the_scenario_names(tmp_path: Path) -> None:
    # It said "unknown ruleset 'twtea-3': ..." with no file, line or key, where `check` names them.
    target = tmp_path / "mine.toml"
    run("scenario", "new", "mine", "--from", "north-sea-1914", "-o", str(target))
    text = target.read_text(encoding="utf-8").replace('ruleset = "twtea-3e"', 'ruleset = "twtea-3"', 1)
    target.write_text(text, encoding="utf-8")
    line = text.split("\n").index('ruleset = "twtea-3"') + 1
    out = run("--db", str(tmp_path / "c.db"), "new", "c", "--scenario", str(target), code=2)
    assert f"{target}:{line}: scenario.ruleset: the ruleset cannot be read, so nothing else was checked: " in out
    assert "unknown ruleset 'twtea-3'" in out
    assert not (tmp_path / "c.db").exists()
    # A ruleset typed on the command line is named as typed.
    out = run("--db", str(tmp_path / "c.db"), "new", "c", "--scenario", "north-sea-1914", "--ruleset", "nope", code=2)
    assert "unknown ruleset 'nope'" in out and "scenario.ruleset" not in out
