"""A dispute over a battle, settled as a referee does: `explain` shows where a roll's seed
stands and what it re-derives (D5), the volley a roll belongs to in the order rolled (CV4),
the hits a casualty choice placed and the rule of that choice (HA7); `undo --to` lists the
dice it takes back as runs and asks where the player can see the question (RK3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.commands import history as cli_history
from tracker.cli.main import cli
from tracker.service.undo_text import spans


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def explained(db: str, *args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run(db, "explain", *args, "--json"))
    return data


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The demo campaign (fixed seed): an interception, an ASW combat, a convoy battle and a
    naval battle, every die auto."""
    db = str(tmp_path_factory.mktemp("dispute") / "demo.db")
    result = CliRunner().invoke(cli, ["demo", "--db", db])
    assert result.exit_code == 0, result.output
    return db


def test_d5_explain_of_an_auto_roll_says_its_seed_is_not_revealed_then_re_derives_it(tmp_path: Path) -> None:
    db = str(tmp_path / "seed.db")
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "research", "advanced_submarine")
    commitment = json.loads(run(db, "log", "--kind", "Created", "--json"))[0]["data"]["seed_commitment"]
    before = explained(db, "--roll", "1")["dice"]
    assert before["seed"] == {
        "epoch": 0,
        "commitment": commitment,
        "committed_at": 1,
        "revealed_at": None,
        "derived": None,
        "matches": None,
    }
    assert "  Seed (D5): epoch 0, committed at event 1, not revealed yet: once `tracker dice reveal`" in run(
        db, "explain", "--roll", "1"
    )
    run(db, "dice", "reveal")
    (reveal,) = json.loads(run(db, "log", "--kind", "SeedRevealed", "--json"))
    after = explained(db, "--roll", "1")["dice"]
    assert after["seed"]["revealed_at"] == reveal["seq"]
    assert after["seed"]["derived"] == after["values"] and after["seed"]["matches"] is True
    text = run(db, "explain", "--roll", "1")
    assert f"revealed at event {reveal['seq']}: it re-derives {after['values']}, as recorded" in text


def test_cv4_explain_of_a_roll_lists_its_volley_in_the_order_rolled(demo: str) -> None:
    # The ASW round of the demo: three German ships fire, a hit is recorded among their dice,
    # and the submarine fires back, in the order `pending` listed them.
    dice = explained(demo, "--roll", "19")["dice"]
    assert [(r["roll"], r["unit"]) for r in dice["volley"]] == [
        (17, "DE-CA1"),
        (18, "DE-DD1"),
        (19, "DE-DD2"),
        (20, "GB-SS1"),
    ]
    text = run(demo, "explain", "--roll", "19")
    assert (
        "  Order (CV4): die 3 of 4 rolled together, in this order: "
        "DE-CA1 (roll 17), DE-DD1 (roll 18), DE-DD2 (roll 19), GB-SS1 (roll 20)\n"
    ) in text
    # A research roll is made alone: no volley to name.
    assert explained(demo, "--roll", "1")["dice"]["volley"] == []
    assert "Order (CV4)" not in run(demo, "explain", "--roll", "1")


def test_ha7_explain_of_a_casualty_choice_cites_ha7_and_the_hits_it_placed(demo: str) -> None:
    (chosen,) = json.loads(run(demo, "log", "--kind", "CasualtiesChosen", "--json"))
    battle = chosen["battle"]
    scored = [
        r
        for r in json.loads(run(demo, "log", "--battle", str(battle), "--kind", "NavalHitsScored", "--json"))
        if r["data"]["nation"] == chosen["data"]["nation"]
    ]
    data = explained(demo, str(chosen["seq"]))
    assert [r["id"] for r in data["rules"]] == [chosen["rule"], "HA7"]
    assert data["choice"] == {
        "by": "Germany",
        "default": True,
        "hits": [{"seq": r["seq"], "summary": r["summary"]} for r in scored],
    }
    text = run(demo, "explain", str(chosen["seq"]))
    assert "  Decided: Germany took the default, the cheapest legal choice (HA7)\n" in text
    assert f"  Placing: event {scored[0]['seq']}: {scored[0]['summary']}\n" in text
    # Another kind of default (targets spread, HA1) is not called the cheapest.
    targets = json.loads(run(demo, "log", "--kind", "TargetsChosen", "--json"))[0]
    assert f"  Decided: {targets['data']['nation']} took the default\n" in run(demo, "explain", str(targets["seq"]))


def test_rk3_undo_lists_the_dice_it_takes_back_as_runs(tmp_path: Path) -> None:
    assert spans([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10"
    assert spans([5]) == "5"
    db = str(tmp_path / "runs.db")
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "research", "advanced_asw", "--dice", "3")
    run(db, "research", "advanced_submarine", "--dice", "4")
    out = run(db, "undo", "--to", "1", "--yes", "--override", "--reason", "restart", "--agreed-by", "France")
    assert "  dice taken back: rolls 1-2\n" in out


def test_undo_to_asked_at_a_terminal_with_its_output_piped_asks_on_standard_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `tracker undo --to 1 | less`: standard input is the terminal, standard output a pipe.
    monkeypatch.setattr(cli_history, "_interactive", lambda: True)
    db = str(tmp_path / "piped.db")
    run(db, "new", "a", "--scenario", "north-sea-1914")
    run(db, "next")
    run(db, "next")
    result = CliRunner().invoke(cli, ["--db", db, "undo", "--to", "1"], input="y\n")
    assert result.exit_code == 0, result.output
    assert "undo --to 1 takes back 2 actions in events 2-5" in result.stderr
    assert "Undo these 2 actions? [y/N]:" in result.stderr
    assert "takes back" not in result.stdout and "Undo these" not in result.stdout
    assert "Undone: 2 actions in events 2-5" in result.stdout


def test_rk3_a_command_raced_by_an_undo_is_told_the_undo_not_only_a_count(tmp_path: Path) -> None:
    """Two terminals: one records an undo while the other's `next` was typed on the board
    before it. The `next` is refused (it meant the board it saw) and names the undo, which took
    back a move rather than adding one."""
    db = str(tmp_path / "race.db")
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next")
    seen = json.loads(run(db, "state", "--json"))["seq"]
    run(db, "undo")
    (undo,) = json.loads(run(db, "log", "--kind", "ActionUndone", "--json"))
    out = run(db, "next", "--seen", str(seen), code=1)
    assert out == (
        f"Error: Germany recorded 2 events meanwhile (undo event {undo['seq']} took back events 2-3); "
        "look and run again\n"
    )
    run(db, "redo")
    seen_redo = undo["seq"]
    out = run(db, "next", "--seen", str(seen_redo), code=1)
    assert f"(redo event {undo['seq'] + 2} put back action 2)" in out
