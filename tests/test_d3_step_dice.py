"""D3: typed dice too few for a roll step (a volley rolls one die per firing unit, in the order
`pending` lists) are refused before any is taken, naming the battle, how many dice the step
rolls and in which order, and how many were typed for it. The refusal named one unit of the
volley ("DE-CA1 (cruiser) fires at Britain's units needs 1 die (D10) but 2 dice were entered
and the rolls before it took 2"), which read as if that unit alone were short."""

from __future__ import annotations

from pathlib import Path

from tests.support import cli_on

ORDER = "DE-BB1, DE-BB2, DE-CA1, DE-DD1, DE-DD2, DE-SS1, DE-SS2, GB-CA1, GB-DD1, GB-DD2"


def test_d3_too_few_dice_for_a_volley_say_the_steps_count_and_order(tmp_path: Path) -> None:
    run = cli_on(tmp_path / "c.db")

    run("new", "a", "--scenario", "north-sea-1914", "--dice", "manual")
    run("next", "--to", "combat_movement")
    run("move", "de-bb1", "de-bb2", "de-ca1", "de-dd1", "de-dd2", "--path", "central north sea")
    run("next", "--to", "naval_combat")
    run("battle", "start", "--zone", "central north sea")
    run("battle", "targets", "1")
    run("battle", "screen", "1")
    head = run("log", "--tail", "1")
    said = run("battle", "fire", "1", "--dice", "5,5", code=1)
    assert said.strip() == (
        "Error: D3: battle 1 (naval, Central North Sea) rolls 10 dice at its fire step, in the order "
        f"`tracker pending` lists ({ORDER}); 2 were typed for it"
    )
    said = run("battle", "auto", "1", "--dice", "5,5,5", code=1)
    assert "rolls 10 dice at its fire step" in said and "3 were typed for it" in said
    assert run("log", "--tail", "1") == head  # nothing recorded
    run("battle", "fire", "1", "--dice", ",".join(["5"] * 10))
