"""The short cuts of the reports give what the long way gives: the campaign report drawn a turn at
a time, the charts' figures summed in the database, the ends of a few turns read backwards, and
territory owners folded from the index of adjustments (upgraded in place on an older database)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner

from tests.support import perform_advance
from tracker.cli.main import cli
from tracker.reports import report as report_module
from tracker.reports.context import ReportContext
from tracker.reports.html import CHARTS, chart_svgs
from tracker.service.application import Tracker

CHARTED = tuple(key for key, _title, _label in CHARTS)


def _advance_to(t: Tracker, cid: UUID, nation: str) -> None:
    while t.load(cid).nation != nation:
        perform_advance(t, cid, confirm_losses=True)


@pytest.fixture
def adjusted(db_url: str, unique_name: str) -> Iterator[tuple[Tracker, UUID]]:
    """Three national turns with adjustments of owners, units, NTR and resources, one of them
    undone, an undo and a redo of research, on SQLite and PostgreSQL."""
    with Tracker(db_url) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="auto").id
        t.perform(cid, "research", {"technology": "advanced_submarine"})
        t.undo(cid, override=True, reason="misclick", agreed_by=["Britain"])
        t.redo(cid)
        t.perform(
            cid,
            "adjust",
            {
                "reason": "the offensive takes Lille",
                "owner": ["Northern France=Germany"],
                "add": ["Germany:submarine:Heligoland Bight:2"],
                "ntr": ["Britain:Irish Sea=+1"],
                "resources": ["Germany=-5"],
            },
        )
        t.perform(cid, "adjust", {"reason": "a slip", "owner": ["Flanders=France"]})
        t.undo(cid)  # Flanders stays German
        _advance_to(t, cid, "Britain")
        sunk = sorted(u for u, x in t.load(cid).units.items() if x["nation"] == "Germany")[0]
        t.perform(cid, "adjust", {"reason": "a landing", "owner": ["Scotland=Germany"], "remove": sunk})
        _advance_to(t, cid, "France")
        t.perform(cid, "adjust", {"reason": "given back", "owner": ["Scotland=Britain", "Brittany=Germany"]})
        t.catch_up(cid)
        yield t, cid


def test_owners_after_every_event_are_the_campaigns_own(adjusted: tuple[Tracker, UUID]) -> None:
    t, cid = adjusted
    version = t.load(cid).version
    scenario = t.load(cid).scenario
    seen = set()
    with t.views(cid) as v:
        for seq in range(1, version + 1):
            expected = dict(sorted(t.load(cid, version=seq).owners.items()))
            assert t.owners_at(v, seq, scenario) == expected, seq
            assert t.owners_at(v, seq) == expected, seq  # the scenario read from the log
            seen.add(tuple(expected.items()))
        board = t.board_from(v, at=version)
    # The adjustments did change owners, and the undone one never showed once undone.
    assert board["owners"]["Northern France"] == "Germany" and board["owners"]["Brittany"] == "Germany"
    assert board["owners"]["Flanders"] == "Germany" and board["owners"]["Scotland"] == "Britain"
    assert len(seen) >= 4


def test_the_html_map_colours_territories_by_their_owner_at_the_turns_end(adjusted: tuple[Tracker, UUID]) -> None:
    t, cid = adjusted
    ctx = ReportContext(t, cid)
    html = report_module.render(report_module.build_report(t, cid, ctx.current - 1, "html"), "html")
    assert 'data-zone="Scotland" data-owner="Germany"' in html
    assert 'data-zone="Northern France" data-owner="Germany"' in html
    now = report_module.render(report_module.build_report(t, cid, ctx.current, "html"), "html")
    assert 'data-zone="Scotland" data-owner="Britain"' in now
    assert 'data-zone="Brittany" data-owner="Germany"' in now


def test_chart_points_summed_in_the_database_are_the_figures_of_the_full_series(
    adjusted: tuple[Tracker, UUID],
) -> None:
    t, cid = adjusted
    ctx = ReportContext(t, cid)
    with t.views(cid) as v:
        ends = ctx.played(v, ctx.current)
        turns = sorted(ends)
        full, _ = ctx.series(v, turns, sweep=True, ends=ends)
        sketched = ctx.chart_series(v, turns, ends)
    assert len(turns) >= 3
    for whole, sketch in zip(full, sketched, strict=True):
        assert {k: whole[k] for k in whole if k != "nations"} == {k: sketch[k] for k in sketch if k != "nations"}
        assert sketch["nations"] == {n: {key: f[key] for key in CHARTED} for n, f in whole["nations"].items()}, whole[
            "turn"
        ]
    # The adjustments moved what the charts draw.
    germany = [e["nations"]["Germany"] for e in sketched]
    assert len({(g["units"], g["fleet_cost"], g["balance"]) for g in germany}) > 1


def test_a_one_turn_html_reports_charts_are_those_drawn_from_the_full_figures(tmp_path: Path) -> None:
    """Three rounds, figures changed by adjustments in each: every chart point of the one-turn
    page, drawn from what the charts need alone, is drawn as from the whole figures."""
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("c", "north-sea-1914", dice="auto").id
        for change in ("-5", "+3", "-2"):
            t.perform(cid, "adjust", {"reason": "trade", "resources": [f"Germany={change}"]})
            t.perform(cid, "adjust", {"reason": "a raid", "add": ["Britain:destroyer:Irish Sea"]})
            start = t.load(cid).round
            while t.load(cid).round == start:
                perform_advance(t, cid, confirm_losses=True)
        ctx = ReportContext(t, cid)
        for turn in (ctx.current, ctx.current - 2):
            report = report_module.build_report(t, cid, turn, "html")
            with t.views(cid) as v:
                ends = ctx.played(v, ctx.current)
                full, _ = ctx.series(v, sorted(ends), sweep=True, ends=ends)
            by_turn = {e["turn"]: e for e in full}
            assert len(report["chart"]) >= 3
            whole = {**report, "chart": [by_turn[e["turn"]] for e in report["chart"]]}
            assert chart_svgs(report) == chart_svgs(whole)
            units = [e["nations"]["Britain"]["units"] for e in report["chart"]]
            assert units == sorted(units) and units[0] < units[-1]


def test_the_ends_of_a_few_turns_are_those_of_all_turns(adjusted: tuple[Tracker, UUID]) -> None:
    t, cid = adjusted
    ctx = ReportContext(t, cid)
    with t.views(cid) as v:
        every = v.turn_ends(ctx.current)
        for only in ([1], [ctx.current], [1, 2, ctx.current, ctx.current + 5], [], list(range(1, ctx.current + 2))):
            asked = v.turn_ends(ctx.current, only)
            assert asked == {k: e for k, e in every.items() if k in only}, only
        # `upto` bounds the turns asked for too.
        assert v.turn_ends(1, [1, 2]) == {1: every[1]}


def test_report_all_streamed_is_the_report_built_whole(adjusted: tuple[Tracker, UUID]) -> None:
    t, cid = adjusted
    for fmt in ("md", "discord", "bbcode"):
        whole = report_module.render(report_module.build_report(t, cid, None, "md"), fmt)
        assert "".join(report_module.stream_report(t, cid, fmt)) == whole, fmt
    with pytest.raises(Exception, match="md, discord or bbcode"):
        next(report_module.stream_report(t, cid, "html"))


def test_report_all_draws_each_turn_before_reading_the_next(
    adjusted: tuple[Tracker, UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is written of the first turn comes out before the last turn is read: the report is
    never held whole."""
    t, cid = adjusted
    read: list[int | None] = []
    real = report_module._turn_records  # noqa: SLF001 - counted, not replaced

    def counted(t_: Tracker, cid_: UUID, v: Any, ctx: Any, turn: int | None) -> list[dict[str, Any]]:
        read.append(turn)
        return real(t_, cid_, v, ctx, turn)

    monkeypatch.setattr(report_module, "_turn_records", counted)
    pieces = report_module.stream_report(t, cid, "md")
    text = ""
    while "## Turn 2:" not in text:
        text += next(pieces)
    assert read == [1, 2]
    rest = "".join(pieces)
    assert len(read) >= 3 and read == sorted(read)
    assert "## Luck" in rest or "## Turn" in rest


def test_report_all_through_the_cli_writes_what_it_prints(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    with Tracker(db) as t:
        cid = t.create("c", "north-sea-1914", dice="auto").id
        t.perform(cid, "adjust", {"reason": "a raid", "ntr": ["Britain:Irish Sea=+1"]})
        _advance_to(t, cid, "Britain")
        whole = report_module.render(report_module.build_report(t, cid, None, "md"), "md")
    runner = CliRunner()
    printed = runner.invoke(cli, ["--db", db, "report", "--all"])
    assert printed.exit_code == 0, printed.output
    assert printed.output == whole
    out = tmp_path / "all.md"
    written = runner.invoke(cli, ["--db", db, "report", "--all", "--format", "bbcode", "-o", str(out)])
    assert written.exit_code == 0, written.output
    with Tracker(db) as t:
        expected = report_module.render(report_module.build_report(t, t.campaign_id("c"), None, "md"), "bbcode")
    assert out.read_text(encoding="utf-8") == expected
    assert f"({len(expected.encode()):,} bytes)" in written.output
