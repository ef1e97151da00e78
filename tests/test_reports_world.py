"""Turn reports of a great-war-1914 campaign read as the group's scribe posts them: a naval
battle against two nations' ships (NC1), a battle where ships are damaged and then sunk, BBCode
tables a forum shows without scrolling sideways, and the HTML page on a phone."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support import cli_on
from tests.test_viewer_browser import browser as browser  # noqa: F401  (the fixture)
from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.reports.bbcode import BBCODE
from tracker.reports.post import CELL_WIDTH
from tracker.reports.text import battle_result


def invoke(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return str(result.stdout)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The world demo, then Italy's first turn (round 2, turn 16) and Japan's (turn 17) with its
    attack on a German destroyer and an Austro-Hungarian cruiser in the Yellow Sea."""
    db = str(tmp_path_factory.mktemp("world") / "world.db")
    run_demo(db, lambda line: None, scenario="great-war-1914")
    invoke(db, "next", "--to", "collect_resources")
    invoke(db, "next")
    invoke(db, "next", "--to", "naval_combat")
    invoke(db, "battle", "start", "--zone", "Yellow Sea", "--auto")
    yield db


def test_nc1_a_naval_battle_names_every_nation_whose_ships_are_attacked(world: str) -> None:
    # The event names one defending nation (Germany) for DE-DD6 and AH-CA3 alike.
    for fmt in ("md", "bbcode", "html"):
        text = invoke(world, "report", "--turn", "17", "--format", fmt)
        assert "Japan attacks Germany and Austria-Hungary" in text, fmt
    (battle,) = [b for t in [_turn_json(world, 17)] for b in t["battles"]]
    assert battle["defender"] == "Germany"
    assert battle["defending_nations"] == ["Germany", "Austria-Hungary"]


def _turn_json(db: str, turn: int) -> dict[str, Any]:
    import json

    data: dict[str, Any] = json.loads(invoke(db, "report", "--turn", str(turn), "--json"))
    (entry,) = data["turns"]
    return entry


def _casualty(unit: str, result: str, seq: int) -> dict[str, Any]:
    return {"seq": seq, "unit": unit, "result": result, "undone_by": None}


def test_nc3_a_ship_damaged_then_sunk_in_a_later_round_is_told_sunk_not_damaged() -> None:
    battle = {
        "kind": "naval",
        "casualties": [
            _casualty("DE-BB1", "damaged", 10),
            _casualty("GB-BB8", "damaged", 11),
            _casualty("DE-BB1", "sunk", 20),
        ],
        "ended": True,
        "survivors": ["GB-BB8"],
        "went_on": [],
    }
    assert battle_result(battle) == "sunk: DE-BB1; damaged: GB-BB8; still there: GB-BB8"


def test_bbcode_table_cuts_a_long_cell_after_its_commas_instead_of_widening_every_line() -> None:
    zones = ", ".join(f"Zone number {k} 1" for k in range(20))
    text = BBCODE.table(["Nation", "NTR by zone", "Resources"], [["Britain", zones, "137"], ["Italy", "Gulf 1", "8"]])
    lines = text.splitlines()
    assert lines[0] == "[code]" and lines[-1] == "[/code]"
    body = lines[1:-1]
    assert max(map(len, body)) <= len("Britain") + 2 + CELL_WIDTH + 2 + len("Resources")
    # The cell reads whole down its column; the row's other cells stand on its first line.
    column, after = body[0].index("NTR by zone"), body[0].index("Resources")
    britain = [line for line in body[2:] if not line.startswith("Italy")]
    assert britain[0].startswith("Britain") and britain[0].rstrip().endswith("137")
    assert " ".join(line[column:after].strip() for line in britain) == zones
    assert all(line[:column].strip() == "" for line in britain[1:])


def test_bbcode_report_of_the_world_has_no_line_wider_than_a_forum_post(world: str) -> None:
    # The trade table's NTR zone by zone made every line of it 360 characters wide.
    text = invoke(world, "report", "--turn", "17", "--format", "bbcode")
    assert "Britain" in text and "Western Approaches 4" in text
    # Text outside [code] wraps in the post; a [code] block keeps its lines as they are.
    blocks = re.findall(r"\[code\]\n(.*?)\[/code\]", text, re.S)
    assert len(blocks) >= 3
    assert max(len(line) for block in blocks for line in block.splitlines()) <= 150


def test_html_report_fits_a_phone_its_wide_tables_scrolling_by_themselves(
    world: str,
    tmp_path: Path,
    browser: Any,  # noqa: F811
) -> None:
    page = tmp_path / "turn17.html"
    invoke(world, "report", "--turn", "17", "--format", "html", "-o", str(page))
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
    )
    browser.get(page.as_uri())
    width = browser.execute_script("return window.innerWidth")
    assert width == 390
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    # Every chart whole on the screen: its legend (the nations' names) included.
    charts = browser.execute_script(
        "return [...document.querySelectorAll('.charts figure')].map(f => f.getBoundingClientRect().right)"
    )
    assert len(charts) == 5 and max(charts) <= width
    # The forces table (a column per unit type) is wider than the phone: it scrolls, the page does not.
    scrolls = browser.execute_script(
        "return [...document.querySelectorAll('table')].filter(t => t.scrollWidth > t.clientWidth).length"
    )
    assert scrolls >= 1


def test_html_chart_captions_say_what_a_point_is_as_the_axis_does(world: str) -> None:
    page = invoke(world, "report", "--turn", "17", "--format", "html")
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)
    charts = [c for c in captions if "dashed lines their enemies" in c]
    assert len(charts) == 5
    # The figure charts have a point per round, the luck chart one per national turn.
    assert not any("at the end of every national turn" in c for c in charts)


def test_rk3_an_undone_request_is_named_by_its_command_not_by_pythons_words(tmp_path: Path) -> None:
    # The log's index keeps what was asked as Python writes it (units=['DE-DD1']); a report
    # posted to the group names the command, and the moves it recorded say the rest.
    run = cli_on(tmp_path / "c.db")
    run("new", "r", "--scenario", "north-sea-1914")
    run("next", "--to", "combat_movement")
    run("move", "DE-DD1", "--path", "Central North Sea")
    run("undo")
    for fmt in ("md", "bbcode", "html"):
        out = run("report", "--turn", "1", "--format", fmt)
        assert "asked: move" in out and "units=" not in out and "['DE-DD1']" not in out, fmt
