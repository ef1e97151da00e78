"""`next --to` goes no further than the next round's first turn (T4, F8): a target that lies
after other nations' turns of the next round (a nation neutral this round, or a position behind
this one) is refused before any step is recorded, naming where it is and what to type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "w.db")
    run(path, "new", "war", "--scenario", "great-war-1914")
    run(path, "next", "--to", "research", "--nation", "France")
    return path


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def last_seq(db: str) -> int:
    return int(json.loads(run(db, "state", "--json"))["seq"])


def test_f8_a_nation_neutral_this_round_reached_only_after_next_rounds_turns_is_refused_unrecorded(db: str) -> None:
    before = last_seq(db)
    out = run(db, "next", "--to", "research", "--nation", "Ottoman Empire", code=1)
    assert len(out.strip().splitlines()) == 1, out
    assert "F8: Ottoman Empire is neutral in round 1 (at war from round 2)" in out
    assert "after Germany's, Britain's, Austria-Hungary's and France's round-2 turns" in out
    assert "`tracker next --to research --nation Germany` opens round 2" in out
    assert "`tracker next --to research --nation 'Ottoman Empire'`" in out
    assert "Traceback" not in out
    assert last_seq(db) == before
    state = json.loads(run(db, "state", "--json"))
    assert (state["round"], state["nation"], state["phase"]) == (1, "France", "research")


def test_f8_the_refusal_with_json_records_and_prints_no_steps(db: str) -> None:
    before = last_seq(db)
    result = CliRunner().invoke(cli, ["--db", db, "next", "--to", "research", "--nation", "Ottoman Empire", "--json"])
    assert result.exit_code == 1, result.output
    assert "PhaseAdvanced" not in result.output
    assert last_seq(db) == before


def test_t4_a_position_behind_this_one_after_other_nations_next_turns_is_refused(db: str) -> None:
    run(db, "next")  # France's purchase
    before = last_seq(db)
    out = run(db, "next", "--to", "research", "--nation", "France", code=1)
    assert "T4: France's research is in round 2" in out
    assert "after Germany's, Britain's and Austria-Hungary's round-2 turns" in out
    assert last_seq(db) == before


def test_t4_the_next_rounds_first_turn_and_this_rounds_positions_stay_reachable(db: str) -> None:
    run(db, "next", "--to", "purchase", "--nation", "Japan")
    run(db, "next", "--to", "purchase", "--nation", "Germany")
    state = json.loads(run(db, "state", "--json"))
    assert (state["round"], state["nation"], state["phase"]) == (2, "Germany", "purchase")


def test_f8_from_the_turn_before_it_a_nation_entering_this_round_is_reached(db: str) -> None:
    run(db, "next", "--to", "purchase", "--nation", "Germany")  # round 2
    out = run(db, "next", "--to", "research", "--nation", "Austria-Hungary")
    assert "round 2, Austria-Hungary: research" in out
    # From Britain's turn: Austria-Hungary, France and then the Ottoman Empire, now at war.
    state = json.loads(run(db, "state", "--json"))
    assert state["nation"] == "Austria-Hungary"


def test_f8_from_the_next_rounds_opening_position_the_way_given_is_the_rounds_end(tmp_path: Path) -> None:
    # At Germany's research the command opening round 2 would be "already there".
    path = str(tmp_path / "w.db")
    run(path, "new", "war", "--scenario", "great-war-1914")
    out = run(path, "next", "--to", "research", "--nation", "Ottoman Empire", code=1)
    assert "`tracker next --to collect_resources --nation Japan` ends round 1" in out
    assert last_seq(path) == 1
