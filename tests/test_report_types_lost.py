"""A turn report's fleet table keeps the column of a unit type lost in the turn: the columns were
the types some nation still had at the end of the turn, so the last cruiser of the game sunk
that turn left no "0 (-1)" behind, in every format; the turn's losses showed only in the units
and cost columns. A type no nation had at the start of the turn or at its end still has no
column."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def sunk(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The template scenario with Britain's one cruiser (the only cruiser of the game) alone in
    the North Sea, sunk there by Germany's battleship in turn 1 (manual dice)."""
    work = tmp_path_factory.mktemp("lost")
    scenario = work / "board.toml"
    run(str(work / "none.db"), "scenario", "new", "board", "-o", str(scenario))
    text = scenario.read_text(encoding="utf-8")
    for kind, at in (("destroyer", "North Sea"), ("battleship", "North Sea"), ("cruiser", "English Channel")):
        written = f'nation = "Britain"\ntype = "{kind}"\nat = "{at}"'
        assert text.count(written) == 1
        moved = "North Sea" if kind == "cruiser" else "Western Approaches"
        text = text.replace(written, f'nation = "Britain"\ntype = "{kind}"\nat = "{moved}"')
    scenario.write_text(text, encoding="utf-8")
    db = str(work / "c.db")
    run(db, "new", "c", "--scenario", str(scenario), "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-BB1", "--path", "North Sea")
    run(db, "next", "--to", "naval_combat")
    run(db, "battle", "start", "--zone", "North Sea")
    assert "GB-CA1 sunk in battle 1" in run(db, "battle", "fire", "1", "--dice", "1,9")
    return db


def fleet_table(report: str) -> dict[str, dict[str, str]]:
    """The Markdown fleet table of a turn report: each nation's cells by column."""
    section = report.split("## Forces at the end of the turn")[1].split("\n## ")[0]
    header, _, *rows = [line for line in section.split("\n") if line.startswith("|")]
    columns = [c.strip() for c in header.strip("|").split("|")]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    return {row[0]: dict(zip(columns, row, strict=True)) for row in cells}


def test_md_the_last_cruiser_sunk_keeps_its_column_going_to_0(sunk: str) -> None:
    table = fleet_table(run(sunk, "report", "--turn", "1", "--format", "md"))
    assert list(table["Britain"]) == [
        "Nation", "submarine", "destroyer", "cruiser", "battleship", "fighter", "bomber", "Units", "Damaged", "Cost",
    ]  # fmt: skip
    assert table["Britain"]["cruiser"] == "0 (-1)" and table["Germany"]["cruiser"] == "0"
    assert table["Britain"]["Units"] == "5 (-1)"


@pytest.mark.parametrize("fmt", ["discord", "bbcode", "html"])
def test_every_format_shows_the_cruiser_lost(sunk: str, fmt: str) -> None:
    report = run(sunk, "report", "--turn", "1", "--format", fmt)
    if fmt == "html":
        assert '<th class="num">cruiser</th>' in report
        assert re.search(r"Britain</th>(<td[^>]*>[^<]*</td>){2}<td class=\"num\">0 \(-1\)</td>", report)
    else:
        (row,) = [line for line in report.split("\n") if line.startswith("Britain ") and "(-12)" in line]
        assert row.split()[:5] == ["Britain", "0", "2", "0", "(-1)"]
    # Types no nation had before the turn or after it: no column.
    assert "aircraft_carrier" not in report and "transport" not in report.replace("transport_plane", "")


def test_the_whole_campaigns_report_keeps_it_too(sunk: str) -> None:
    report = run(sunk, "report", "--all", "--format", "md")
    assert "| Britain | 0 | 2 | 0 (-1) | 2 | 1 | 0 | 5 (-1) | 0 | 66 (-12) |" in report


def test_a_type_no_nation_has_at_the_start_of_a_turn_or_its_end_has_no_column(sunk: str, tmp_path: Path) -> None:
    """Britain's turn 2 begins with no cruiser anywhere: its report has no cruiser column."""
    db = str(tmp_path / "c.db")
    for suffix in ("", "-wal", "-shm"):
        if Path(sunk + suffix).exists():
            shutil.copy(sunk + suffix, db + suffix)
    assert "round 1, Britain: collect resources" in run(db, "next", "--to", "purchase")
    report = run(db, "report", "--turn", "2", "--format", "md")
    assert "Britain" in report.split("\n")[0]
    table = fleet_table(report)
    assert "cruiser" not in table["Britain"] and table["Britain"]["Units"] == "5"
