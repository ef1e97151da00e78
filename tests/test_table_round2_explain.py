"""`tracker explain roll 16`: what a player types after reading a battle line "roll 16: ...",
taken as `explain --roll 16` (it was refused: "give a whole number (got 'roll')")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import cli_on


@pytest.fixture
def run(tmp_path: Path) -> Callable[..., str]:
    """North Sea 1914, manual dice: round 1 of the battle in the Central North Sea fired (rolls 1-5)."""
    run = cli_on(tmp_path / "n.db")
    run("new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run("next", "--to", "naval_combat")
    run("battle", "start", "--zone", "Central North Sea")
    run("battle", "targets", "1")
    run("battle", "screen", "1", "--screens", "")
    assert "roll 3: " in run("battle", "fire", "1", "--dice", "9,9,9,9,9")
    return run


@pytest.mark.parametrize("words", [["roll", "3"], ["Roll", "3"], ["--json", "roll", "3"], ["roll", "3", "--json"]])
def test_d3_explain_roll_n_is_explain_dash_dash_roll_n(run: Callable[..., str], words: list[str]) -> None:
    json_too = ["--json"] if "--json" in words else []
    assert run("explain", *words) == run("explain", "--roll", "3", *json_too)
    if json_too:
        assert json.loads(run("explain", *words))["dice"]["roll"] == 3
    else:
        assert "(roll 3)" in run("explain", *words).splitlines()[0]


def test_d3_explain_an_event_number_is_as_it_was(run: Callable[..., str]) -> None:
    assert run("explain", "3").startswith("Event 3: ")


def test_d3_explain_roll_without_its_number_says_so_in_one_line(run: Callable[..., str]) -> None:
    out = run("explain", "roll", code=2)
    assert out.count("\n") == 1 and "tracker explain roll N" in out
    assert "give a whole number" not in out


def test_d3_explain_roll_of_a_roll_not_made_is_refused_as_with_dash_dash_roll(run: Callable[..., str]) -> None:
    assert run("explain", "roll", "99", code=2) == run("explain", "--roll", "99", code=2)


def test_d3_explain_says_roll_n_in_its_help(run: Callable[..., str]) -> None:
    assert "tracker explain roll 16" in " ".join(run("explain", "--help").split())
