"""Turn reports as a group reads them: a one-turn report's luck table has no "total" row that
only repeats the turn's (and reads as the campaign's), a campaign report keeps each nation's
total over its turns, and the forces table marks a change of damaged ships as every other
count."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tracker.cli.main import cli
from tracker.reports.text import fleet_rows


def invoke(db: str, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result


def luck_rows(markdown: str) -> list[list[str]]:
    """The rows of a Markdown report's luck table by nation and turn."""
    section = markdown.split("## Luck", 1)[1].split("Each battle's percentile", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("| ")]
    return [r for r in rows[1:]]


@pytest.fixture
def fought(tmp_path: Path) -> str:
    """Turn 1 of the North Sea with Germany's submarines attacking the British ships they share
    a zone with: rolls of both sides in one turn."""
    db = str(tmp_path / "l.db")
    invoke(db, "new", "l", "--scenario", "north-sea-1914")
    invoke(db, "next", "--to", "naval_combat")
    invoke(db, "battle", "start", "--zone", "Central North Sea")
    invoke(db, "battle", "auto", "1")
    return db


def test_one_turn_report_has_no_luck_total_repeating_the_turn(fought: str) -> None:
    rows = luck_rows(invoke(fought, "report", "--turn", "1").stdout)
    assert {r[0] for r in rows} >= {"Germany", "Britain"}
    assert [r[1] for r in rows] == ["1"] * len(rows)
    # The same figures are in `tracker luck`, where the total is the campaign's.
    luck = json.loads(invoke(fought, "luck", "--json").stdout)
    germany = next(r for r in rows if r[0] == "Germany")
    total = luck["nations"]["Germany"]["total"]
    assert germany[2:] == [f"{total[m]['expected']:.2f} / {total[m]['actual']:g}" for m in luck["metrics"]]


def test_campaign_report_keeps_the_total_of_a_nation_with_several_turns(tmp_path: Path) -> None:
    db = str(tmp_path / "demo.db")
    invoke(db, "demo")
    rows = luck_rows(invoke(db, "report", "--all").stdout)
    turns: dict[str, list[str]] = {}
    for r in rows:
        turns.setdefault(r[0], []).append(r[1])
    several = [n for n, ts in turns.items() if len([t for t in ts if t != "total"]) > 1]
    assert several, turns
    for nation in several:
        assert turns[nation][-1] == "total"
    for nation, ts in turns.items():
        if nation not in several:
            assert "total" not in ts


def test_forces_table_marks_a_change_of_damaged_ships(fought: str) -> None:
    report: dict[str, Any] = json.loads(invoke(fought, "report", "--turn", "1", "--format", "json").stdout)
    (turn,) = report["turns"]
    header, rows = fleet_rows(report, turn)
    column = header.index("Damaged")
    before = {n: f["damaged"] for n, f in report["start"]["nations"].items()}
    assert [r[column] for r in rows] == [str(before[r[0]]) for r in rows]  # nothing damaged: no mark
    hurt = copy.deepcopy(turn)
    hurt["end"]["nations"]["Germany"]["damaged"] = before["Germany"] + 1
    _, rows = fleet_rows(report, hurt)
    germany = next(r for r in rows if r[0] == "Germany")
    assert germany[column] == f"{before['Germany'] + 1} (+1)"
