"""`explain --roll N`: a battle line's "roll 16" is the campaign's roll number (D3), not an event
number; `explain` finds the event that recorded the roll, and a roll's explanation names both
numbers so that neither is taken for the other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tracker.cli.main import cli


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "r.db")
    invoke(path, "new", "r", "--scenario", "north-sea-1914")
    invoke(path, "research", "advanced_submarine")  # roll 1, at event 4
    return path


def invoke(db: str, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result


def rolls(db: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(invoke(db, "log", "--kind", "DiceRolled", "--json").stdout)
    return found


def test_d3_explain_roll_explains_the_event_that_recorded_that_roll(db: str) -> None:
    (rolled,) = rolls(db)
    seq = rolled["seq"]
    assert seq != 1  # the roll's number and the event's differ: the test tells them apart
    by_roll = json.loads(invoke(db, "explain", "--roll", "1", "--json").stdout)
    assert by_roll == json.loads(invoke(db, "explain", str(seq), "--json").stdout)
    # Both numbers in the JSON: the event's and the roll's.
    assert (by_roll["seq"], by_roll["kind"], by_roll["dice"]["roll"]) == (seq, "DiceRolled", 1)


def test_d3_explain_of_a_roll_says_its_event_and_roll_numbers_at_the_top(db: str) -> None:
    (rolled,) = rolls(db)
    seq = rolled["seq"]
    for args in (["--roll", "1"], [str(seq)]):
        first = invoke(db, "explain", *args).stdout.splitlines()[0]
        assert first.startswith(f"Event {seq} (roll 1): DiceRolled (turn 1, research, ")
    # An event that rolled nothing has no roll number to name.
    assert invoke(db, "explain", str(seq - 1)).stdout.startswith(f"Event {seq - 1}: ResearchPaid (")


def test_d3_explain_refuses_a_roll_not_yet_made_in_one_line(db: str, tmp_path: Path) -> None:
    refused = invoke(db, "explain", "--roll", "2", code=2)
    assert refused.stderr == "Error: roll 2 has not been rolled in campaign 'r' (the last is roll 1) [D3]\n"
    assert refused.stdout == ""
    # The same exit as explain of an event not recorded yet.
    invoke(db, "explain", "99", code=2)
    fresh = str(tmp_path / "fresh.db")
    invoke(fresh, "new", "fresh", "--scenario", "north-sea-1914")
    refused = invoke(fresh, "explain", "--roll", "1", code=2)
    assert refused.stderr == "Error: roll 1 has not been rolled in campaign 'fresh' (no die has been rolled yet) [D3]\n"


def test_explain_takes_an_event_or_a_roll_not_both_nor_neither(db: str) -> None:
    for args in ([], ["4", "--roll", "1"]):
        refused = invoke(db, "explain", *args, code=2)
        assert "SEQ" in refused.stderr and "--roll" in refused.stderr
        assert len(refused.stderr.splitlines()) == 1


def test_rk4_explain_roll_of_a_redone_roll_explains_the_redo_and_names_the_first(db: str) -> None:
    (first,) = rolls(db)
    invoke(db, "undo", "--override", "--reason", "misread", "--agreed-by", "Britain")
    invoke(db, "redo")
    again = [r["seq"] for r in rolls(db) if r["seq"] != first["seq"]]
    (redone,) = again
    data = json.loads(invoke(db, "explain", "--roll", "1", "--json").stdout)
    assert (data["seq"], data["dice"]["roll"], data["undone_by"]) == (redone, 1, None)
    lines = invoke(db, "explain", "--roll", "1").stdout.splitlines()
    assert lines[0].startswith(f"Event {redone} (roll 1): DiceRolled")
    assert f"  Roll 1 was recorded before by event {first['seq']}, undone and redone since (RK4)" in lines
