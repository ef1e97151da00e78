"""The other lines of a naval battle whose side is Britain's and France's (NC1, F5): Britain
decides for the side, but "2 hits from escort ships on Britain" and "Britain takes hits on
FR-CA2, GB-CA6" credited France's ships to Britain. The hits are now "for Britain to place" (the
event names no unit), and a choice Britain made for France's units names France, in the printed
lines, `log`, `log --json` and the shell's news of another writer's events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session

EC = "English Channel"
HITS = "battle 1: 2 hits from escort ships for Britain to place"
TARGETS = "battle 1: Britain targets for France: FR-SS2 -> DE-CA12 (default)"
CASUALTIES = "battle 1: Britain places the side's hits on FR-CA2, GB-CA6 of Britain and France (chosen)"
# DE-CA12 and DE-CA13 hit; every British and French die misses.
DICE = "1,1,10,10,10,10,10,10,10"


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def db(tmp_path: Path) -> str:
    """Great War, round 1, manual dice: two German cruisers attack the English Channel, where
    Britain's and France's ships lie together; France's FR-SS2 fires first, Britain choosing."""
    path = str(tmp_path / "w.db")
    run(path, "new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    run(path, "adjust", "--add", f"Germany:cruiser:{EC}:2", "--reason", "a raid on the Channel")
    run(path, "next", "--to", "combat_movement")
    run(path, "next")
    run(path, "battle", "start", "--zone", EC)
    return path


def play(db: str) -> str:
    """The round's choices and volley, as printed."""
    out = run(db, "battle", "targets", "1")
    out += run(db, "battle", "screen", "1", "--screens", "")
    out += run(db, "battle", "fire", "1", "--dice", DICE)
    return out + run(db, "battle", "casualties", "1", "--units", "FR-CA2,GB-CA6")


def test_nc1_f5_the_hits_targets_and_casualties_of_a_side_name_its_allies(db: str) -> None:
    out = play(db)
    for line in (f"{TARGETS}   [HA1]", f"{HITS}   [HA6]", f"{CASUALTIES}   [HA7]"):
        assert line in out
    assert "ships on Britain  " not in out and "Britain takes hits on FR-" not in out
    log = run(db, "log", "--battle", "1")
    assert HITS in log and TARGETS in log and CASUALTIES in log
    summaries = [e["summary"] for e in json.loads(run(db, "log", "--json", "--battle", "1"))]
    assert HITS in summaries and TARGETS in summaries and CASUALTIES in summaries


def test_nc1_a_choice_over_the_deciders_own_units_reads_as_before(db: str) -> None:
    play(db)
    # Germany's cruisers, Germany's choice: no ally to name.
    assert "battle 1: Germany screens nothing (chosen)" in run(db, "log", "--battle", "1")


def test_nc1_the_shell_says_another_writers_battle_lines_as_log_does(db: str) -> None:
    obj = Context(db, None)
    try:
        session = Session(cli, obj)
        session.start_looking()
        play(db)  # another writer, on the same database
        news = session.news()
    finally:
        obj.close()
    assert f"Meanwhile: {CASUALTIES}   [HA7]" in news
    assert f"Meanwhile: {HITS}   [HA6]" in news


def test_rk3_nc1_undo_and_redo_name_the_side_as_log_does(db: str) -> None:
    """The lines an undo lists and a redo re-records are the log's, allies named (RK3, RK4)."""
    run(db, "battle", "targets", "1")
    undone = run(db, "undo")
    assert TARGETS in undone
    assert TARGETS in run(db, "redo")
