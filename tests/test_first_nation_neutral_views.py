"""F8: a campaign whose first nations in turn order are neutral in round 1 passed their turns
over as it was created; turn 1 holds only the events `new` recorded (the creation, the
TurnPassedOver of each). As `state --turn 1` refuses that turn and names the board the campaign
opened with, the viewer's page of such a turn links to that board (not to a "turn 0" or to
turn 1, itself passed over), its timeline says what its events are, and the reports tell turn 1
as passed over, not as a turn its nation played."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support import cli_on
from tests.test_scenario_tools import NORTH_SEA, edited
from tests.test_viewer_f8 import pages, text


def campaign(tmp_path: Path, *neutral: str) -> tuple[str, Any]:
    """A campaign "demo" of north-sea-1914 with `neutral` entering the war in round 2: its
    database and CLI."""
    source = NORTH_SEA
    for nation in neutral:
        source = edited(source, f"[nations.{nation}]\n", f"[nations.{nation}]\nentry_round = 2\n")
    path = tmp_path / "late.toml"
    path.write_text(source)
    db = str(tmp_path / "late.db")
    run = cli_on(db)
    run("new", "demo", "--scenario", str(path))
    return db, run


def link(html: str, text_of: str) -> str:
    """The href of the link whose text starts with `text_of`."""
    found = re.search(rf'<a href="([^"]+)">{re.escape(text_of)}', html)
    assert found is not None, html
    return found.group(1)


def test_f8_the_page_of_turn_1_passed_over_links_to_the_opening_board(tmp_path: Path) -> None:
    db, _run = campaign(tmp_path, "Germany")
    got = pages(db, tmp_path, "/campaigns/demo/board?turn=1", "/campaigns/demo/board?at=3")
    status, html = got["/campaigns/demo/board?turn=1"]
    assert status == 404
    assert text(html, "error") == (
        "turn 1 (Germany, round 1) has no events of its own: a neutral nation's turn is passed over (F8)"
    )
    assert "board?turn=0" not in html
    # The board `state --turn 1` names (`state --at 3`), labelled as what it is.
    assert (
        link(html, "the board then: the one the campaign opened with (after event 3)") == "/campaigns/demo/board?at=3"
    )
    status, opening = got["/campaigns/demo/board?at=3"]
    assert status == 200
    assert "turn <strong>2</strong> · <strong>Britain</strong> · <strong>research</strong>" in opening
    # The turn menu offers turn 1 disabled, and turn 2 has no link back to it.
    assert '<option value="1" disabled>1 (Germany, round 1, passed over)</option>' in opening


def test_f8_a_turn_passed_over_after_turn_1_passed_over_links_to_the_opening_board_not_turn_1(
    tmp_path: Path,
) -> None:
    db, run = campaign(tmp_path, "Germany", "Britain")
    got = pages(db, tmp_path, "/campaigns/demo/board?turn=2", "/campaigns/demo/log?turn=2")
    status, html = got["/campaigns/demo/board?turn=2"]
    assert status == 404
    assert "board?turn=1" not in html
    assert (
        link(html, "the board then: the one the campaign opened with (after event 4)") == "/campaigns/demo/board?at=4"
    )
    assert run("state", "--turn", "2", code=2).rstrip().endswith("tracker state --at 4")
    # Its timeline: the TurnPassedOver is among turn 1's events (the creation's), the board
    # then the opening one.
    status, html = got["/campaigns/demo/log?turn=2"]
    assert status == 200
    notice = text(html, "passed-over")
    assert "the events of turn 1" in notice and "the one the campaign opened with (after event 4)" in notice
    assert '<a href="/campaigns/demo/log?turn=1&amp;kind=TurnPassedOver">the events of turn 1</a>' in html
    assert "board?turn=1" not in html


def test_f8_the_timeline_of_turn_1_passed_over_lists_the_creation_and_says_so(tmp_path: Path) -> None:
    db, run = campaign(tmp_path, "Germany")
    status, html = pages(db, tmp_path, "/campaigns/demo/log?turn=1")["/campaigns/demo/log?turn=1"]
    assert status == 200
    assert re.findall(r'<tr data-seq="(\d+)"', html) == ["1", "2"]
    notice = text(html, "passed-over")
    assert notice.startswith("Turn 1 (Germany, round 1) was passed over: Germany was neutral then (F8)"), notice
    assert "has no events of its own: those listed are the campaign's creation" in notice
    assert "turn 0" not in notice
    # Their turn links to the opening board, not to a board turn 1 never had.
    assert "board?turn=1" not in html and "board?turn=0" not in html
    assert html.count('<a href="/campaigns/demo/board?at=3">') == 3
    # As `log --turn 1` lists them.
    assert [r["seq"] for r in json.loads(run("log", "--turn", "1", "--json"))] == [1, 2]


def test_f8_the_report_of_turn_1_passed_over_says_so_in_every_format(tmp_path: Path) -> None:
    _db, run = campaign(tmp_path, "Germany")
    md = run("report", "--turn", "1")
    assert md.startswith("# demo: Turn 1: Germany, round 1, passed over (F8)\n"), md
    assert "Report of turn 1 (Germany, round 1), passed over (F8), events 1-2 · " in md
    html = run("report", "--turn", "1", "--format", "html")
    assert "<title>demo: Turn 1: Germany, round 1, passed over (F8)</title>" in html
    report = json.loads(run("report", "--turn", "1", "--format", "json"))
    assert [t["passed_over"] for t in report["turns"]] == [True]
    assert [e["passed_over"] for e in report["series"]] == [True]
    # A turn played is no such turn.
    played = json.loads(run("report", "--turn", "2", "--format", "json"))
    assert [t["passed_over"] for t in played["turns"]] == [False]
    assert run("report", "--turn", "2").startswith("# demo: Turn 2: Britain, round 1 (in progress)\n")


def test_f8_the_campaign_report_tells_turn_1_passed_over_as_the_others(tmp_path: Path) -> None:
    _db, run = campaign(tmp_path, "Germany", "Britain")
    md = run("report", "--all")
    rows = [line for line in md.splitlines() if re.match(r"\| \d+ \| ", line)]
    assert [row.split(" | ")[2] for row in rows] == [
        "Germany: passed over (F8)",
        "Britain: passed over (F8)",
        "Austria-Hungary",
    ]
    assert "## Turn 1: Germany, round 1, passed over (F8)\n" in md
    assert "Passed over (F8): **Germany** was neutral · round 1 · events 1-3, the campaign's creation\n\n" in md
    assert "Phasing nation: **Germany**" not in md
    html = run("report", "--all", "--format", "html")
    assert "Passed over (F8): <strong>Germany</strong> was neutral" in html
    assert "Phasing nation <strong>Germany</strong>" not in html
    # Turn 2 is told by the report of turn 1, which holds its TurnPassedOver.
    refused = run("report", "--turn", "2", code=2)
    assert "the report of turn 1 tells it (tracker report --turn 1)" in refused
    assert "(F8, event 3)" in run("report", "--turn", "1")


def test_f8_log_of_a_turn_passed_over_with_turn_1_names_turn_1s_log(tmp_path: Path) -> None:
    """Turn 1 was not played, but its log (the creation's) holds turn 2's TurnPassedOver."""
    _db, run = campaign(tmp_path, "Germany", "Britain")
    said = run("log", "--turn", "2")
    assert said.rstrip().endswith("its TurnPassedOver event is in the log of turn 1"), said
