"""D4, CV4: a manual-dice command given no --dice at all is refused with the whole roll step's
count and order, as `pending` lists it. It named the first die only ("DE-BB1 (battleship)
fires at Britain's units needs 1 D10", "GB-CA4 ... interception search needs 1 D10") for a
step that rolls ten or two, so a player typed one die and was refused again."""

from __future__ import annotations

from pathlib import Path

from tests.support import cli_on


def test_d4_volley_without_dice_names_the_steps_count_and_order(tmp_path: Path) -> None:
    run = cli_on(tmp_path / "c.db")
    run("new", "a", "--scenario", "north-sea-1914", "--dice", "manual")
    run("next", "--to", "combat_movement")
    run("move", "de-bb1", "de-bb2", "de-ca1", "de-dd1", "de-dd2", "--path", "central north sea")
    run("next", "--to", "naval_combat")
    run("battle", "start", "--zone", "central north sea")
    run("battle", "targets", "1")
    run("battle", "screen", "1")
    head = run("log", "--tail", "1")
    order = "DE-BB1, DE-BB2, DE-CA1, DE-DD1, DE-DD2, DE-SS1, DE-SS2, GB-CA1, GB-DD1, GB-DD2"
    for command in (("battle", "fire", "1"), ("battle", "auto", "1")):
        said = run(*command, code=1)
        assert said.strip() == (
            "Error: D4: this campaign uses manual dice; battle 1 (naval, Central North Sea) rolls 10 dice at its "
            f"fire step, in the order `tracker pending` lists ({order}): roll them and pass them with --dice"
        )
    assert run("log", "--tail", "1") == head  # nothing recorded


def test_d4_interception_search_without_dice_names_every_searcher(tmp_path: Path) -> None:
    run = cli_on(tmp_path / "w.db")
    run("new", "w", "--scenario", "great-war-1914", "--dice", "manual")
    run("next", "--to", "combat_movement")
    run("move", "DE-SS1", "DE-SS2", "--path", "Southern North Sea,Dover Strait")
    head = run("log", "--tail", "1")
    said = run("intercept", "search", "1", "--units", "GB-DD5,GB-CA4", code=1)
    assert said.strip() == (
        "Error: D4: this campaign uses manual dice; battle 1 (interception, Southern North Sea) rolls 2 dice at "
        "its search step, in the order `tracker pending` lists (GB-CA4, GB-DD5): roll them and pass them with --dice"
    )
    assert run("log", "--tail", "1") == head
    said = run("intercept", "search", "1", "--units", "GB-DD5,GB-CA4", "--dice", "1,9")
    assert "GB-CA4 (cruiser) interception search in Southern North Sea: D10 x1 = 1" in said
