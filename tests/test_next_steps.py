"""Knowing what comes next: `pending` gives the command, the dice and the eligible units; a
player at a terminal is asked for manual dice; `auto --dice` plays as far as the dice go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli import cli

CNS = "Central North Sea"


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    run(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    return path


def run(db: str, *args: str, code: int = 0, stdin: str | None = None) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], input=stdin)
    assert result.exit_code == code, result.output
    return result.output


def to_britain_collect(db: str) -> None:
    run(db, "next", "--to", "collect_resources")
    run(db, "convoy", "pass", "--by", "Britain")
    run(db, "next", "--to", "collect_resources", "--nation", "Britain")


def test_pending_json_carries_the_command_the_dice_and_the_eligible_units(db: str) -> None:
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    (item,) = json.loads(run(db, "pending", "--json"))
    assert item["command"] == "tracker convoy roll 1 [--dice V,V]"
    assert item["dice"] == {"count": 2, "faces": 10, "order": ["merchant defence die 1", "merchant defence die 2"]}
    run(db, "convoy", "roll", "1", "--dice", "3,4")
    (item,) = json.loads(run(db, "pending", "--json"))
    assert item["step"] == "search" and "GB-DD1" in item["eligible"]
    assert item["dice"]["order"] == item["eligible"]  # one die per searcher, in that order
    assert "next: tracker convoy search 1" in run(db, "pending")


def test_a_player_at_a_terminal_is_asked_for_manual_dice(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tracker.cli_common.interactive", lambda: True)
    out = run(db, "research", "advanced_submarine", stdin="12\n9\n")
    assert "Dice for Germany research roll for advanced_submarine (1 die, D10, in order)" in out
    assert "give 1 die, each 1 to 10" in out  # 12 is no D10 face: asked again
    assert "D10 x1 = 9" in out and "[manual]" in out


def test_scripts_without_dice_are_refused_not_asked(db: str) -> None:
    out = run(db, "research", "advanced_submarine", code=1)
    assert "pass them with --dice" in out and "Dice for" not in out


def test_convoy_auto_with_fewer_dice_stops_where_they_run_out_and_says_what_comes_next(db: str) -> None:
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    out = run(db, "convoy", "auto", "1", "--dice", "3,4")  # merchant defence only
    assert "total 7: no effect" in out
    assert "Waiting: battle 1 (convoy, Central North Sea): waiting for Britain to choose which ships" in out
    assert "next: tracker convoy search 1" in out
    # Dice left over that cannot finish a step are refused, and nothing is recorded.
    before = run(db, "log", "--json")
    assert "D3" in run(db, "convoy", "auto", "1", "--dice", "1", code=1)
    assert run(db, "log", "--json") == before


def test_battle_auto_with_manual_dice_plays_the_defaults_up_to_the_first_roll_it_has_no_dice_for(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-CA1", "DE-BB1", "DE-BB2", "--to", CNS)
    run(db, "next")
    out = run(db, "battle", "start", "--zone", CNS, "--auto", "--dice", "")
    assert "battle 1: naval battle in Central North Sea" in out and "(default)" in out  # targets taken
    (item,) = json.loads(run(db, "pending", "--json"))
    assert item["step"] in ("fire", "opening_fire") and item["dice"]["count"] == len(item["dice"]["order"]) > 0
    rolled = len(json.loads(run(db, "log", "--json", "--kind", "DiceRolled")))
    dice = ",".join(["10"] * item["dice"]["count"])
    run(db, "battle", "auto", "1", "--dice", dice)  # exactly that volley; then it waits again
    assert len(json.loads(run(db, "log", "--json", "--kind", "DiceRolled"))) == rolled + item["dice"]["count"]
    assert json.loads(run(db, "pending", "--json"))[0]["battle"] == 1


def test_nc1_a_battles_end_says_the_actual_reason(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-CA1", "DE-BB1", "DE-BB2", "--to", CNS)
    run(db, "next")
    run(db, "battle", "start", "--zone", CNS)
    out = run(db, "battle", "auto", "1", "--dice", ",".join(["1"] * 8))  # every die hits: one volley
    ended = json.loads(run(db, "log", "--json", "--kind", "BattleEnded"))[-1]
    assert ended["data"]["reason"] == "Britain has no unit left in the battle"
    assert "battle 1 ends (Britain has no unit left in the battle)" in out
