"""T1: `tracker state --turn N` says whether it shows the end of turn N or, for the turn being
played, the board now ("end of turn 1", "turn 2 in progress"); with --phase, the same of the
phase. `--json` adds `in_progress` with --turn alone (docs/json.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import perform_until
from tracker.cli.main import cli
from tracker.service.application import Tracker


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def first_line(db: str, *args: str) -> str:
    return run(db, "state", *args).splitlines()[0]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A campaign in Britain's combat_movement, turn 2: turn 1 (Germany's) is over."""
    path = str(tmp_path_factory.mktemp("heading") / "h.db")
    run(path, "new", "heading", "--scenario", "north-sea-1914")
    with Tracker(path) as t:
        perform_until(t, t.campaign_id(None), "Britain", "combat_movement")
    return path


def test_t1_state_turn_of_a_finished_turn_says_it_shows_its_end(db: str) -> None:
    end = json.loads(run(db, "state", "--turn", "1", "--json"))
    assert (end["in_progress"], end["phase"]) == (False, "collect_resources")  # JSON keeps the ID
    assert first_line(db, "--turn", "1") == (
        f"heading · Round 1 · end of turn 1 · Germany · collect resources  (after event {end['seq']})"
    )


def test_t1_state_turn_of_the_turn_being_played_says_it_is_in_progress(db: str) -> None:
    now = json.loads(run(db, "state", "--json"))
    assert (now["turn"], now["nation"], now["phase"]) == (2, "Britain", "combat_movement")
    assert "in_progress" not in now  # the board now: nothing to tell apart
    shown = json.loads(run(db, "state", "--turn", "2", "--json"))
    assert shown.pop("in_progress") is True
    assert shown["seq"] == now["seq"] and shown["units"] == now["units"]
    assert first_line(db, "--turn", "2") == (
        f"heading · Round 1 · turn 2 in progress · Britain · combat movement  (after event {now['seq']})"
    )
    # `state` itself heads the board now as it did.
    assert first_line(db) == f"heading · Round 1 · turn 2 · Britain · combat movement  (after event {now['seq']})"


def test_t1_state_turn_phase_says_whether_the_phase_is_over_or_being_played(db: str) -> None:
    done = json.loads(run(db, "state", "--turn", "2", "--phase", "purchase", "--json"))
    assert done["in_progress"] is False
    assert first_line(db, "--turn", "2", "--phase", "purchase") == (
        f"heading · Round 1 · turn 2 in progress · Britain · end of purchase  (after event {done['seq']})"
    )
    over = json.loads(run(db, "state", "--turn", "1", "--phase", "purchase", "--json"))
    assert first_line(db, "--turn", "1", "--phase", "purchase") == (
        f"heading · Round 1 · turn 1 · Germany · end of purchase  (after event {over['seq']})"
    )
    now = json.loads(run(db, "state", "--turn", "2", "--phase", "combat_movement", "--json"))
    assert now["in_progress"] is True
    assert first_line(db, "--turn", "2", "--phase", "combat_movement") == (
        f"heading · Round 1 · turn 2 · Britain · combat movement in progress  (after event {now['seq']})"
    )


def test_t1_state_at_an_event_is_headed_as_before(db: str) -> None:
    at = json.loads(run(db, "state", "--at", "3", "--json"))
    assert "in_progress" not in at
    line = first_line(db, "--at", "3")
    assert line.endswith("(after event 3)") and "in progress" not in line and "end of" not in line


def test_docs_json_lists_in_progress_in_the_state_row() -> None:
    docs = Path(__file__).resolve().parent.parent / "docs" / "json.md"
    (row,) = [line for line in docs.read_text().splitlines() if line.startswith("| `tracker state`")]
    assert '"in_progress"' in row
