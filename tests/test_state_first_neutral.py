"""F8: a campaign whose first nation in turn order is neutral in round 1 passed its turn 1 over
as it was created. `state --turn 1` refuses that turn as it refuses every turn passed over
(exit 2, one line, the turn and rule named), not showing the opening board as a research phase
the nation never had; with no turn played before it, it names the board the campaign opened
with, labelled with the first turn actually played. A turn passed over after it points there
too, not to turn 1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support import cli_on
from tests.test_scenario_tools import NORTH_SEA, edited


def campaign(tmp_path: Path, *neutral: str) -> Any:
    """A campaign of north-sea-1914 with `neutral` entering the war in round 2, and its CLI."""
    text = NORTH_SEA
    for nation in neutral:
        text = edited(text, f"[nations.{nation}]\n", f"[nations.{nation}]\nentry_round = 2\n")
    path = tmp_path / "late.toml"
    path.write_text(text)
    run = cli_on(tmp_path / "late.db")
    run("new", "late", "--scenario", str(path))
    return run


def pointed_at(refused: str) -> list[str]:
    """The `tracker state ...` command a refusal names, as arguments."""
    found = re.search(r"tracker (state --at \d+)\n$", refused)
    assert found is not None, refused
    return found.group(1).split()


@pytest.mark.parametrize("phase", [None, "research", "purchase"])
def test_f8_state_of_turn_1_passed_over_is_refused_as_passed_over(tmp_path: Path, phase: str | None) -> None:
    run = campaign(tmp_path, "Germany")
    events = len(json.loads(run("log", "--json")))
    refused = run("state", "--turn", "1", *(["--phase", phase] if phase else []), code=2)
    assert refused.startswith(
        "Error: turn 1 (Germany, round 1) has no events of its own: a neutral nation's turn is passed over (F8); "
        "no turn was played before it, so the board then is the one the campaign opened with: tracker state --at 3"
    ), refused
    assert refused.count("\n") == 1
    assert len(json.loads(run("log", "--json"))) == events


def test_f8_the_board_turn_1_points_to_is_the_opening_one_at_the_first_turn_played(tmp_path: Path) -> None:
    run = campaign(tmp_path, "Germany")
    run("next")  # Britain's research done: the board of the opening stays where it was
    shown = run(*pointed_at(run("state", "--turn", "1", code=2)))
    assert shown.startswith("late · Round 1 · turn 2 · Britain · research  (after event 3)"), shown
    board = json.loads(run(*pointed_at(run("state", "--turn", "1", code=2)), "--json"))
    assert len(board["units"]) == len(json.loads(run("state", "--at", "1", "--json"))["units"])
    assert board["neutral"] == ["Germany"]


def test_f8_a_turn_passed_over_after_turn_1_passed_over_points_to_the_opening_board(tmp_path: Path) -> None:
    run = campaign(tmp_path, "Germany", "Britain")
    refused = run("state", "--turn", "2", code=2)
    assert refused.startswith("Error: turn 2 (Britain, round 1) has no events in this campaign: "), refused
    assert "tracker state --turn 1" not in refused
    assert run(*pointed_at(refused)).startswith("late · Round 1 · turn 3 · Austria-Hungary · research")
    assert "(Germany, round 1) has no events of its own" in run("state", "--turn", "1", code=2)


def test_f8_turn_1_of_a_first_nation_at_war_is_its_board(tmp_path: Path) -> None:
    run = campaign(tmp_path, "Britain")
    assert run("state", "--turn", "1").startswith("late · Round 1 · turn 1 in progress · Germany · research")
