"""`battle decide` with neither --submerge nor --retreat-to: the side fights on (NC4). No event
records it (RK1 records retreats and submerges), so the command's first line says it, as a
retreat's or a submerge's line does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

CNS = "Central North Sea"


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def db(tmp_path: Path) -> str:
    """North Sea 1914, manual dice: DE-SS1 and DE-SS2 attack in the Central North Sea, every
    shot of round 1 misses, and Germany decides."""
    path = str(tmp_path / "n.db")
    run(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run(path, "next", "--to", "naval_combat")
    run(path, "battle", "start", "--zone", CNS)
    run(path, "battle", "targets", "1")
    run(path, "battle", "screen", "1", "--screens", "")
    assert "next: tracker battle decide 1" in run(path, "battle", "fire", "1", "--dice", "9,9,9,9,9")
    return path


@pytest.mark.parametrize("named", [[], ["--nation", "Germany"], ["--nation", "de"], ["--submerge", ""]])
def test_nc4_fighting_on_is_said_before_the_next_round(db: str, named: list[str]) -> None:
    lines = run(db, "battle", "decide", "1", *named).splitlines()
    assert lines[0] == "battle 1: Germany fights on   [NC4]"
    assert lines[1] == "battle 1: round 2   [NC3]"


def test_nc4_a_retreat_is_no_fight_on(db: str) -> None:
    out = run(db, "battle", "decide", "1", "--retreat-to", "Heligoland Bight")
    assert "Germany retreats DE-SS1, DE-SS2 to Heligoland Bight   [NC1]" in out
    assert "fights on" not in out


def test_nc4_json_is_the_recorded_events_alone(db: str) -> None:
    recorded = json.loads(run(db, "battle", "decide", "1", "--json"))
    assert [e["kind"] for e in recorded["events"]][:1] == ["RoundStarted"]


def test_nc4_a_refused_decision_says_no_fight_on(db: str) -> None:
    out = run(db, "battle", "decide", "1", "--nation", "Britain", code=1)
    assert "fights on" not in out
