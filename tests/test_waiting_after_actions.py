"""What the CLI says the game waits for after an action: the units bought this turn (PU1),
placed only in placement (PU2, T3), are named after the purchase that changes them, not again
after every move and battle step of the turn; in placement, where they block the phase (T4),
each is named with the command that places it after every action.

The tests play Germany's first turn of north-sea-1914 with manual dice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import cli_on

SNS = "Southern North Sea"
BOUGHT = "bought this turn, to place in placement"


@pytest.fixture
def db(tmp_path: Path) -> str:
    db = str(tmp_path / "c.db")
    cli_on(db)("new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    cli_on(db)("next")  # Germany's purchase
    return db


def test_pu1_a_purchase_names_what_waits_for_placement(db: str) -> None:
    out = cli_on(db)("buy", "submarine")
    assert "Waiting: Germany has 1 submarine bought this turn, to place in placement (where: tracker pending)" in out
    out = cli_on(db)("buy", "destroyer")
    assert f"Waiting: Germany has 1 destroyer, 1 submarine {BOUGHT}" in out


def test_pu2_t3_moves_and_battle_steps_do_not_repeat_the_units_bought(db: str) -> None:
    run = cli_on(db)
    run("buy", "submarine")
    run("next")
    out = run("move", "DE-CA1,DE-DD1", "--to", SNS)
    assert "Germany moves DE-CA1, DE-DD1" in out and BOUGHT not in out and "Waiting" not in out
    # They are still listed where a player asks for everything the game waits for.
    assert f"Germany has 1 submarine {BOUGHT}" in run("pending")
    run("next")
    out = run("battle", "start", "--zone", SNS)
    # What the battle waits for is still said after each of its steps (NC3).
    assert "Waiting: battle 1 (naval, Southern North Sea): waiting for Germany and Britain to roll" in out
    assert BOUGHT not in out


def test_pu2_t4_in_placement_the_units_left_are_named_with_the_command_that_places_them(db: str) -> None:
    run = cli_on(db)
    run("buy", "submarine")
    run("buy", "destroyer")
    run("next", "--to", "placement", "--nation", "Germany")
    out = run("place", "submarine", "--at", "Heligoland Bight")
    assert "Waiting: Germany has 1 destroyer bought and not placed (legal: " in out
    assert "  next: tracker place destroyer --at " in out
