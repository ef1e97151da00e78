"""Reports of a campaign whose neutral nations' turns are passed over (F8, great-war-1914):
only played turns are reported, charted and compared with; and the figures of many points read
together (`Views.boards_at`, `Views.tallies_at`) are those of the boards read one by one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.errors import InputError
from tracker.cli.main import cli
from tracker.reports.context import ReportContext
from tracker.reports.report import build_report, render, stats_rows
from tracker.service.application import Tracker

# great-war-1914's turn order: the Ottoman Empire (5th), Italy (7th) and the United States (9th)
# are neutral in round 1, so turns 5, 7 and 9 have no events.
PASSED_OVER = {5, 7, 9}


def _step(c: Any, _dice: Any) -> None:
    opened = c.convoy_attacks_open()
    if opened:
        c.convoy_pass(next(iter(opened)))
    else:
        c.advance()


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Tracker, Any]]:
    """A great-war-1914 campaign played into round 2, France's turn (turn 13)."""
    db: Path = tmp_path_factory.mktemp("neutral") / "gw.db"
    t = Tracker(str(db))
    cid = t.create("gw", "great-war-1914", dice="auto").id
    while True:
        c = t.load(cid)
        if c.round == 2 and c.nation == "France":
            break
        t.execute(cid, _step)
    t.catch_up()
    yield t, cid
    t.close()


def test_f8_report_all_reports_the_played_turns_only(campaign: tuple[Tracker, Any]) -> None:
    t, cid = campaign
    report = build_report(t, cid)
    numbers = [turn["turn"] for turn in report["turns"]]
    assert numbers == [k for k in range(1, 14) if k not in PASSED_OVER]
    assert [e["turn"] for e in report["series"]] == numbers
    assert "Turn 8" in render(build_report(t, cid, fmt="md"), "md")


def test_f8_campaign_report_title_names_the_last_turn_not_the_count_of_turns_played(
    campaign: tuple[Tracker, Any],
) -> None:
    # Turns 1-13 less the three passed over: 10 turn entries, but the report covers turns 1-13.
    t, cid = campaign
    for fmt in ("md", "bbcode", "html"):
        text = render(build_report(t, cid, fmt=fmt), fmt)
        assert "campaign report, turns 1-13" in text and "Report of turns 1-13 " in text
        assert "turns 1-10" not in text


def test_html_report_draws_a_board_wider_than_the_page_at_full_size_to_scroll(
    campaign: tuple[Tracker, Any],
) -> None:
    # great-war-1914's map is 4258 px wide: fitted to the 1100 px page its labels cannot be read.
    t, cid = campaign
    page = render(build_report(t, cid, turn=12, fmt="html"), "html")
    assert (
        re.search(r'<div class="map-scroll"( data-focus="[\d.]+,[\d.]+")?><svg', page)
        and "scroll the map to see the whole board" in page
    )
    assert ".map .map-scroll svg { width: auto; max-width: none; }" in page


def test_f8_one_turn_report_of_a_passed_over_turn_is_refused(campaign: tuple[Tracker, Any]) -> None:
    t, cid = campaign
    with pytest.raises(InputError, match=r"turn 9 \(United States, round 1\) has no events.*F8"):
        build_report(t, cid, turn=9, fmt="md")


def test_f8_one_turn_report_of_a_passed_over_turn_names_the_report_that_tells_it(
    campaign: tuple[Tracker, Any],
) -> None:
    # Turn 9 (the United States) follows Japan's turn 8, turn 7 (Italy) Russia's turn 6: the
    # TurnPassedOver of each is in the report of the turn played before it.
    t, _cid = campaign
    for passed, told in ((9, 8), (7, 6), (5, 4)):
        result = CliRunner().invoke(cli, ["--db", t.url, "report", "--turn", str(passed)])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert result.stderr.endswith(
            f"a neutral nation's turn is passed over (F8); the report of turn {told} tells it "
            f"(tracker report --turn {told})\n"
        )
        shown = CliRunner().invoke(cli, ["--db", t.url, "report", "--turn", str(told)])
        assert shown.exit_code == 0 and "turn passed over, neutral until it enters the war" in shown.stdout


def test_f8_the_board_of_a_passed_over_turn_names_f8_and_the_turn_to_read(campaign: tuple[Tracker, Any]) -> None:
    t, cid = campaign
    with pytest.raises(InputError, match=r"turn 5 \(Ottoman Empire, round 1\) has no events.*F8.*--turn 4$"):
        t.board_at(cid, turn=5)
    assert t.board_at(cid, turn=4)["nation"] == "France"
    # A turn not reached yet is still one to be played, neutral or not.
    with pytest.raises(InputError, match="turn 21 has not been played"):
        t.board_at(cid, turn=21)


def test_f8_the_log_of_a_passed_over_turn_says_where_its_record_is(campaign: tuple[Tracker, Any]) -> None:
    t, _cid = campaign
    result = CliRunner().invoke(cli, ["--db", t.url, "log", "--turn", "5"])
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr == (
        "turn 5 (Ottoman Empire, round 1) has no events in this campaign: a neutral nation's turn is passed over"
        " (F8): its TurnPassedOver event is in the log of turn 4\n"
    )
    listed = CliRunner().invoke(cli, ["--db", t.url, "log", "--turn", "4", "--kind", "TurnPassedOver", "--json"])
    assert [r["data"]["nation"] for r in json.loads(listed.stdout)] == ["Ottoman Empire"]


def test_f8_turn_after_a_passed_over_one_is_compared_with_the_last_played(campaign: tuple[Tracker, Any]) -> None:
    t, cid = campaign
    report = build_report(t, cid, turn=10, fmt="md")
    assert [e["turn"] for e in report["series"]] == [8, 10]


def test_f8_chart_points_stand_for_the_last_turn_played_by_then(campaign: tuple[Tracker, Any]) -> None:
    t, cid = campaign
    report = build_report(t, cid, turn=12, fmt="html")
    # The end of round 1 is turn 9, passed over: its point is the end of turn 8.
    assert [e["turn"] for e in report["chart"]] == [8, 12]
    assert "<svg" in render(report, "html")


def test_f8_stats_have_a_row_per_played_turn(campaign: tuple[Tracker, Any]) -> None:
    t, cid = campaign
    rows, _ = stats_rows(t, cid)
    assert {row["turn"] for row in rows} == {k for k in range(1, 14) if k not in PASSED_OVER}


def test_boards_and_tallies_of_many_points_match_the_boards_one_by_one(campaign: tuple[Tracker, Any]) -> None:
    t, cid = campaign
    ctx = ReportContext(t, cid)
    with t.views(cid) as v:
        seqs = sorted({1, 2, *range(3, ctx.version + 1, 7), ctx.version})
        one_by_one = {seq: v.board_at(seq) for seq in seqs}
        assert v.boards_at(seqs) == one_by_one
        tallied = {seq: ctx.tallied(tally) for seq, tally in v.tallies_at(seqs).items()}
        assert tallied == {seq: ctx.figures(board) for seq, board in one_by_one.items()}
        with pytest.raises(LookupError):
            v.boards_at([1, ctx.version + 1])
