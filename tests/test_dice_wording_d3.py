"""D3: the refusal of typed dice the action did not roll says how many it rolled (none, or
"N dice": not "rolled 1", which reads as a one rolled) and what to type instead, on one line,
and records nothing. Plays north-sea-1914 with manual dice on SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from domain.dice import ManualDice
from domain.errors import DiceError
from tests.support import cli_on

SNS = "Southern North Sea"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "c.db")


def refusal(dice: ManualDice) -> str:
    with pytest.raises(DiceError) as info:
        dice.check_all_used()
    return str(info.value)


def test_d3_dice_typed_for_an_action_that_rolls_none_are_refused_saying_none_were_rolled() -> None:
    assert refusal(ManualDice([3, 4])) == (
        "D3: 2 dice entered (3, 4) but the action rolled none: run it without --dice"
    )
    assert refusal(ManualDice([7])) == "D3: 1 die entered (7) but the action rolled none: run it without --dice"


def test_d3_dice_left_over_name_the_dice_rolled_and_how_many_values_to_type() -> None:
    dice = ManualDice([9, 9])
    dice.roll(1, 1, 10, "research")
    assert refusal(dice) == (
        "D3: 2 dice entered but the action rolled 1 die, taken: 9 for research; left over: 9; "
        "give --dice exactly 1 value"
    )


def test_d3_battle_start_with_dice_it_does_not_roll_is_refused_on_one_line_recording_nothing(db: str) -> None:
    run = cli_on(db)
    run("new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    run("next")
    run("next")
    run("move", "DE-CA1,DE-DD1", "--to", SNS)
    run("next")
    before = json.loads(run("log", "--json"))
    out = run("battle", "start", "--zone", SNS, "--dice", "3,4", code=1)
    assert out == "Error: D3: 2 dice entered (3, 4) but the action rolled none: run it without --dice\n"
    assert json.loads(run("log", "--json")) == before


def test_d3_research_with_a_die_too_many_says_it_rolled_one_die(db: str) -> None:
    run = cli_on(db)
    run("new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    before = json.loads(run("log", "--json"))
    out = run("research", "advanced_asw", "--dice", "9,4", code=1)
    assert out == (
        "Error: D3: 2 dice entered but the action rolled 1 die, taken: 9 for Germany research roll for "
        "Advanced ASW; left over: 4; give --dice exactly 1 value\n"
    )
    assert json.loads(run("log", "--json")) == before
