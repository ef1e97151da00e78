"""The record as a group reads it months later: `explain` names a reroll and the roll it replaced
(RK3) and what an entry brought forward changed (F8, AD1); `verify --projections` says when
there was nothing to compare; a point the campaign has not reached is refused naming where it
is; `replay --battle` refuses a battle that never was as `log --battle` does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tracker.cli.main import cli


def invoke(db: str, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result


def explained(db: str, *args: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(invoke(db, "explain", *args, "--json").stdout)
    return found


@pytest.fixture
def rerolled(tmp_path: Path) -> str:
    """A research roll taken back by an override undo and made again: roll 2 rerolls roll 1."""
    db = str(tmp_path / "r.db")
    invoke(db, "new", "r", "--scenario", "north-sea-1914")
    invoke(db, "research", "advanced_submarine")
    invoke(db, "undo", "--override", "--reason", "misread", "--agreed-by", "Britain")
    invoke(db, "research", "advanced_submarine")
    return db


def test_rk3_explain_of_a_reroll_names_the_roll_it_makes_again(rerolled: str) -> None:
    (reroll,) = json.loads(invoke(rerolled, "log", "--kind", "DiceRerolled", "--json").stdout)
    undo = reroll["data"]["undo"]
    dice = explained(rerolled, "--roll", "2")["dice"]
    assert dice["reroll_of"] == {"roll": 1, "event": reroll["seq"], "undo": undo}
    assert dice["rerolled_as"] is None
    text = invoke(rerolled, "explain", "--roll", "2").stdout
    assert f"Reroll (RK3): makes again roll 1, taken back by override undo event {undo} (event {reroll['seq']})" in text


def test_rk3_explain_of_a_roll_taken_back_names_the_roll_that_made_it_again(rerolled: str) -> None:
    (reroll,) = json.loads(invoke(rerolled, "log", "--kind", "DiceRerolled", "--json").stdout)
    undo = reroll["data"]["undo"]
    dice = explained(rerolled, "--roll", "1")["dice"]
    assert dice["rerolled_as"] == {"roll": 2, "event": reroll["seq"], "undo": undo}
    assert dice["reroll_of"] is None
    assert f"made again as roll 2 (event {reroll['seq']})" in invoke(rerolled, "explain", "--roll", "1").stdout


def test_rk4_a_roll_undone_and_redone_is_no_reroll(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    invoke(db, "new", "r", "--scenario", "north-sea-1914")
    invoke(db, "research", "advanced_submarine")
    invoke(db, "undo", "--override", "--reason", "misread", "--agreed-by", "Britain")
    invoke(db, "redo")
    dice = explained(db, "--roll", "1")["dice"]
    assert (dice["reroll_of"], dice["rerolled_as"]) == (None, None)
    assert "Reroll" not in invoke(db, "explain", "--roll", "1").stdout


def test_f8_explain_of_an_entry_brought_forward_says_what_it_changed(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    invoke(db, "new", "w", "--scenario", "great-war-1914")
    neutral = json.loads(invoke(db, "state", "--json").stdout)["neutral"]
    entering = neutral[0]
    invoke(db, "adjust", "--enter", entering, "--reason", "the group agrees")
    (adjusted,) = json.loads(invoke(db, "log", "--kind", "Adjusted", "--json").stdout)
    data = explained(db, str(adjusted["seq"]))
    assert data["changes"] == [f"{entering}: neutral -> at war (F8)"]
    assert f"Changed: {entering}: neutral -> at war (F8)" in invoke(db, "explain", str(adjusted["seq"])).stdout


def test_verify_projections_says_when_no_views_were_built_yet(tmp_path: Path) -> None:
    db = str(tmp_path / "v.db")
    invoke(db, "new", "v", "--scenario", "north-sea-1914")
    out = invoke(db, "verify", "--projections").stdout
    assert "0 view rows match" not in out
    assert "Projections: not built yet for this campaign" in out
    # Once a read built them, the rows are compared and counted.
    invoke(db, "log")
    out = invoke(db, "verify", "--projections").stdout
    assert "view rows match a rebuild of the log." in out and "not built yet" not in out


def test_verify_projections_says_when_the_views_are_behind_the_log(tmp_path: Path) -> None:
    db = str(tmp_path / "v.db")
    invoke(db, "new", "v", "--scenario", "north-sea-1914")
    invoke(db, "log")
    invoke(db, "next")  # recorded after the views last read the log
    last = json.loads(invoke(db, "verify", "--json").stdout)["head"]["seq"]
    assert last > 1
    notes = json.loads(invoke(db, "verify", "--projections", "--json").stdout)["notes"]
    assert any(f"up to event 1 of {last}" in n for n in notes), notes
    invoke(db, "log")
    notes = json.loads(invoke(db, "verify", "--projections", "--json").stdout)["notes"]
    assert not any("have read the log up to" in n for n in notes), notes


def test_state_of_a_point_not_reached_names_where_the_campaign_is(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    invoke(db, "new", "s", "--scenario", "north-sea-1914")
    invoke(db, "next")
    now = json.loads(invoke(db, "state", "--json").stdout)
    where = f"(the last is event {now['seq']}, in turn {now['turn']}, {now['phase']})"
    for args, what in (
        (["--turn", "99"], "turn 99 has not been played in this campaign"),
        (["--at", "999"], "no event 999 in this campaign"),
        (["--turn", "1", "--phase", "placement"], "phase placement of turn 1 has not been played in this campaign"),
    ):
        refused = invoke(db, "state", *args, code=2)
        assert refused.stderr == f"Error: {what} {where}\n"


def test_replay_of_a_battle_that_never_was_is_refused_as_log_refuses_it(tmp_path: Path) -> None:
    db = str(tmp_path / "b.db")
    invoke(db, "new", "b", "--scenario", "north-sea-1914")
    by_log = invoke(db, "log", "--battle", "3", code=2).stderr
    assert by_log == "Error: no battle 3 in campaign 'b' (it has had no battle yet)\n"
    assert invoke(db, "replay", "--battle", "3", code=2).stderr == by_log
