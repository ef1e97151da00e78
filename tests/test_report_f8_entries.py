"""F8 in turn reports, as a group posting them reads them (great-war-1914: the Ottoman Empire
enters the war in round 2, Italy in round 4, the United States in round 11):

- the first turn played in a round opens with the nations at war from that round, though the
  entry (WarEntered) is recorded in the last turn of the round before; that turn lists it with
  the turns passed over under a heading of their own, not among "Other events";
- a report says which nations are neutral at the end of the turn, as `tracker state` does,
  counting an entry an adjustment brought forward (AD1);
- the campaign report's progress table says which turns were passed over;
- a log recorded before entries were recorded (`entries_recorded`) tells the entry from the
  scenario's entry round."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.reports.report import build_report, render, stream_report
from tracker.service.application import Tracker

FIXTURES = Path(__file__).parent / "fixtures"
POSTS = ("md", "bbcode", "discord")
F8_HEADING = "Turns passed over and entries into the war (F8)"


def step(c: Any, _dice: Any) -> None:
    """On to the next position, passing every convoy attack open (CV1)."""
    opened = c.convoy_attacks_open()
    if opened:
        c.convoy_pass(next(iter(opened)))
    else:
        c.advance()


def run(db: str, *args: str) -> str:
    # Wide enough that `state` prints its line of neutral nations on one line.
    result = CliRunner().invoke(cli, ["--db", db, *args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def report(db: str, *args: str) -> str:
    return run(db, "report", *args)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A great-war-1914 campaign played into round 2, Austria-Hungary's turn (turn 12), and the
    event recording the Ottoman Empire's entry."""
    db = str(tmp_path_factory.mktemp("f8") / "gw.db")
    with Tracker(db) as t:
        cid = t.create("gw", "great-war-1914", dice="auto").id
        while True:
            c = t.load(cid)
            if c.round == 2 and c.nation == "Austria-Hungary":
                break
            t.execute(cid, step)
    (entered,) = json.loads(run(db, "log", "--kind", "WarEntered", "--json"))
    assert (entered["turn"], entered["data"]["nation"]) == (8, "Ottoman Empire")
    yield db, entered["seq"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The great-war-1914 demo: its group brings Italy's entry forward to round 2 (AD1, turn 14)."""
    db = str(tmp_path_factory.mktemp("demo") / "demo.db")
    run_demo(db, lambda line: None, scenario="great-war-1914")
    return db


@pytest.fixture(scope="module")
def old_log(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A great-war-1914 log recorded before entries were recorded, to round 2's Ottoman turn."""
    tmp = tmp_path_factory.mktemp("old")
    export = tmp / "old.jsonl"
    export.write_bytes(gzip.decompress((FIXTURES / "turns-passed-over-untold.jsonl.gz").read_bytes()))
    db = str(tmp / "old.db")
    run(db, "import", str(export))
    return db


def at_war_line(text: str) -> list[str]:
    return [line for line in text.splitlines() if "At war from this round (F8)" in line]


# ----- 1. the entry, told where round 2's reader looks -----


def test_f8_the_first_turn_of_a_round_opens_with_the_nations_at_war_from_it(world: tuple[str, int]) -> None:
    db, seq = world
    told = f"Ottoman Empire (event {seq})"
    expected = {
        "md": f"**At war from this round (F8):** {told}",
        "discord": f"**At war from this round (F8):** {told}",
        "bbcode": f"[b]At war from this round (F8):[/b] {told}",
    }
    for fmt in POSTS:
        first = report(db, "--turn", "10", "--format", fmt)
        assert at_war_line(first) == [expected[fmt]], fmt
        # Above the turn's sections: the first thing round 2's reader meets after the header.
        assert first.index("At war from this round") < first.index("Resources collected")
        # Told once, on the round's first turn: not on the next one, nor on the turn recording it.
        for other in ("8", "11"):
            assert at_war_line(report(db, "--turn", other, "--format", fmt)) == [], (fmt, other)
    page = report(db, "--turn", "10", "--format", "html")
    assert f'<p class="notice"><strong>At war from this round (F8):</strong> {told}</p>' in page
    assert "At war from this round" not in report(db, "--turn", "11", "--format", "html")
    data = json.loads(report(db, "--turn", "10", "--format", "json"))
    assert data["turns"][0]["war_entries"] == [{"nation": "Ottoman Empire", "round": 2, "seq": seq}]


def test_f8_turns_passed_over_and_entries_have_a_heading_of_their_own(world: tuple[str, int]) -> None:
    db, seq = world
    md = report(db, "--turn", "8")
    section = md[md.index(f"## {F8_HEADING}") :]
    section = section[: section.index("\n## ")]
    assert "round 1, United States: turn passed over, neutral until it enters the war in round 11 (F8, event" in section
    assert f"round 2, Ottoman Empire: enters the war at its entry round (F8, event {seq})" in section
    assert "Other events" not in md
    assert f"[b]{F8_HEADING}[/b]" in report(db, "--turn", "8", "--format", "bbcode")
    assert f"<h3>{F8_HEADING}</h3>" in report(db, "--turn", "8", "--format", "html")
    data = json.loads(report(db, "--turn", "8", "--format", "json"))
    (turn,) = data["turns"]
    assert [e["kind"] for e in turn["neutrality"]] == ["TurnPassedOver", "WarEntered"]
    assert turn["other"] == []


def test_f8_the_campaign_report_tells_the_entry_on_round_twos_first_turn(world: tuple[str, int]) -> None:
    db, seq = world
    for fmt in POSTS:
        text = report(db, "--all", "--format", fmt)
        (line,) = at_war_line(text)
        assert line.endswith(f"Ottoman Empire (event {seq})")
        # Inside turn 10's section, after its heading and before turn 11's.
        at = text.index(line)
        assert text.rindex("Turn 10: Germany, round 2", 0, at) < at < text.index("Turn 11: Britain, round 2")
    page = report(db, "--all", "--format", "html")
    assert page.count("At war from this round (F8)") == 1
    at = page.index("At war from this round (F8)")
    assert page.rindex('<section id="turn-10">', 0, at) > page.rindex('<section id="turn-8">', 0, at)


# ----- 2. the nations neutral, as `tracker state` says -----


def neutral_of_state(db: str, turn: int) -> str:
    (line,) = [line for line in run(db, "state", "--turn", str(turn)).splitlines() if line.startswith("Neutral (F8)")]
    return line.removeprefix("Neutral (F8): ")


def test_f8_a_turn_report_says_who_is_neutral_at_its_end(world: tuple[str, int]) -> None:
    db, _seq = world
    for turn, listed in (
        (8, "Ottoman Empire until round 2, Italy until round 4, United States until round 11"),
        (10, "Italy until round 4, United States until round 11"),
    ):
        assert neutral_of_state(db, turn) == listed
        line = f"Neutral (F8) at the end of turn {turn}: {listed}"
        for fmt in POSTS:
            text = report(db, "--turn", str(turn), "--format", fmt)
            assert line in text, fmt
            # Near the top: right after the header, before any of the turn's sections.
            assert text.index(line) < text.index("Resources collected"), fmt
        assert f'<p class="meta" id="neutral">{line}</p>' in report(db, "--turn", str(turn), "--format", "html")
    data = json.loads(report(db, "--turn", "10", "--format", "json"))
    assert data["neutral"]["turn"] == 10
    assert data["neutral"]["nations"] == [{"nation": "Italy", "until": 4}, {"nation": "United States", "until": 11}]


def test_f8_the_campaign_report_says_who_is_neutral_at_the_end_of_its_last_turn(world: tuple[str, int]) -> None:
    db, _seq = world
    line = "Neutral (F8) at the end of turn 12: Italy until round 4, United States until round 11"
    for fmt in POSTS:
        text = report(db, "--all", "--format", fmt)
        assert text.index(line) < text.index("Progress"), fmt
    assert line in report(db, "--all", "--format", "html")


def test_f8_an_entry_brought_forward_by_ad1_leaves_the_neutral_line(demo: str) -> None:
    # The demo's Ottoman turn (14) records Italy's entry, brought forward to round 2.
    assert "Italy enters the war now (F8)" in report(demo, "--turn", "14")
    assert neutral_of_state(demo, 13) == "Italy until round 4, United States until round 11"
    assert neutral_of_state(demo, 14) == "United States until round 11"
    for fmt in ("md", "bbcode"):
        assert "at the end of turn 13: Italy until round 4, United States until round 11" in report(
            demo, "--turn", "13", "--format", fmt
        )
        assert "Neutral (F8) at the end of turn 14: United States until round 11\n" in report(
            demo, "--turn", "14", "--format", fmt
        )
        assert "Neutral (F8) at the end of turn 16: United States until round 11\n" in report(
            demo, "--all", "--format", fmt
        )


def test_f8_a_report_says_nothing_of_neutrals_when_every_nation_is_at_war(tmp_path: Path) -> None:
    db = str(tmp_path / "ns.db")
    run_demo(db, lambda line: None)
    assert "Neutral (F8)" not in report(db, "--turn", "2") and "Neutral (F8)" not in report(db, "--all")
    assert "passed over" not in report(db, "--all")


# ----- 3. the progress table's turns passed over -----


def test_f8_the_progress_table_marks_the_turns_passed_over(world: tuple[str, int]) -> None:
    db, _seq = world
    md = report(db, "--all")
    table = md[md.index("## Progress") : md.index("## Turn 1:")]
    rows = [line for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == [str(k) for k in range(1, 13)]
    blank = " | -" * 9
    for turn, nation in ((5, "Ottoman Empire"), (7, "Italy"), (9, "United States")):
        assert f"| {turn} | 1 | {nation}: passed over (F8){blank} |" in rows
    assert "A neutral nation's turn is passed over (F8): no events, no figures of its own." in table
    discord = report(db, "--all", "--format", "discord")
    assert re.search(r"^7 +1 +Italy: passed over \(F8\) +- +-", discord, re.M)
    page = report(db, "--all", "--format", "html")
    assert (
        "Turns passed over (F8), a neutral nation's with no events and no figures of its own: "
        "5 (Ottoman Empire, round 1), 7 (Italy, round 1), 9 (United States, round 1).</p>"
    ) in page


def test_f8_the_streamed_campaign_report_is_the_one_built_whole(world: tuple[str, int]) -> None:
    db, _seq = world
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        for fmt in POSTS:
            assert "".join(stream_report(t, cid, fmt)) == render(build_report(t, cid, None, "md"), fmt)


# ----- older logs: no WarEntered events -----


def test_f8_a_log_recorded_before_entries_were_recorded_tells_the_entry_by_the_scenario(old_log: str) -> None:
    assert json.loads(run(old_log, "log", "--kind", "WarEntered", "--json")) == []
    told = "Ottoman Empire (its entry round in the scenario)"
    assert at_war_line(report(old_log, "--turn", "10")) == [f"**At war from this round (F8):** {told}"]
    assert at_war_line(report(old_log, "--turn", "10", "--format", "bbcode")) == [
        f"[b]At war from this round (F8):[/b] {told}"
    ]
    assert at_war_line(report(old_log, "--turn", "11")) == []
    (line,) = at_war_line(report(old_log, "--all"))
    assert line.endswith(told)
    data: dict[str, Any] = json.loads(report(old_log, "--turn", "10", "--format", "json"))
    assert data["turns"][0]["war_entries"] == [{"nation": "Ottoman Empire", "round": 2, "seq": None}]
    assert "Neutral (F8) at the end of turn 10: Italy until round 4, United States until round 11" in report(
        old_log, "--turn", "10"
    )
