"""F8 in the viewer, as a group following a great-war-1914 campaign reads it: the board names
the nations neutral at its moment and until when (as `tracker state` does) and those that
entered the war, with the event saying so; the timeline of a turn passed over says why it is
empty and where its TurnPassedOver is; a turn a nation played because an adjustment brought its
entry forward (AD1) is a turn like any other, not one passed over. And the timeline says why it
lists fewer events than the campaign has."""

from __future__ import annotations

import asyncio
import itertools
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.players import Players


@pytest.fixture(scope="module")
def war(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The great-war-1914 demo: round 2, Italy's research (turn 16). The Ottoman Empire entered
    at its entry round (event 126), Italy by an adjustment (AD1); the United States is neutral
    until round 11. Turns 5, 7 and 9 were passed over."""
    db = str(tmp_path_factory.mktemp("f8") / "war.db")
    run_demo(db, lambda line: None, scenario="great-war-1914")
    return db


READERS = itertools.count(1)  # a new spectator for each read of the module's shared campaign


def pages(db: str, tmp_path: Path, *paths: str) -> dict[str, tuple[int, str]]:
    """(status, HTML) of each page, read in-process by a spectator of the demo campaign."""
    import httpx

    from tracker.server import create_app

    with Tracker(db) as t:
        token = Players(t.engine).add(str(t.campaign_id("demo")), f"reader{next(READERS)}", [], False, spectator=True)
    app = create_app(db, keys=str(tmp_path / "keys.db"))

    async def go() -> dict[str, tuple[int, str]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://league") as client:
            out = {}
            for path in paths:
                r = await client.get(path, headers={"Authorization": f"Bearer {token}"})
                out[path] = (r.status_code, r.text)
            return out

    try:
        return asyncio.run(go())
    finally:
        app.state.service.close()


def text(html: str, element_id: str) -> str:
    """The text of the element with this id (nested elements' included), spaces folded."""
    from html.parser import HTMLParser

    class Reader(HTMLParser):
        depth = 0
        parts: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if self.depth or ("id", element_id) in attrs:
                self.depth += tag not in ("br", "img", "input")

        def handle_endtag(self, tag: str) -> None:
            if self.depth:
                self.depth -= 1

        def handle_data(self, data: str) -> None:
            if self.depth:
                self.parts.append(data)

    reader = Reader()
    reader.parts = []
    reader.feed(html)
    assert reader.parts, f"no #{element_id}"
    return " ".join("".join(reader.parts).split())


def test_f8_the_board_says_who_is_neutral_until_when_and_who_entered_by_which_event(war: str, tmp_path: Path) -> None:
    """The board showed neutrality only as a badge in the table of nations below the 60-zone
    map, and nothing of the entries: "when did Italy enter?" had no answer on it."""
    got = pages(war, tmp_path, "/campaigns/demo/board", "/campaigns/demo/board?turn=3")
    status, now = got["/campaigns/demo/board"]
    assert status == 200
    assert text(now, "neutral").startswith("Neutral (F8): United States until round 11 (nobody's enemy yet")
    entered = text(now, "entered")
    assert entered == (
        "Entered the war: Ottoman Empire in round 2, its entry round (event 126); "
        "Italy in round 2, brought forward by an adjustment (AD1) (event 197)"
    )
    assert '<a href="/campaigns/demo/events/197">event 197</a>' in now
    italy = re.search(r'<tr data-nation="Italy">.*?</tr>', now, re.S)
    assert italy and "at war from round 2 (AD1)" in italy.group(0)
    # The board of round 1 names the three neutrals then, and no entry yet.
    status, then = got["/campaigns/demo/board?turn=3"]
    assert status == 200
    assert text(then, "neutral").startswith(
        "Neutral (F8): Ottoman Empire until round 2, Italy until round 4, United States until round 11"
    )
    assert 'id="entered"' not in then


def test_f8_the_timeline_of_a_turn_passed_over_says_why_it_is_empty_and_where_its_event_is(
    war: str, tmp_path: Path
) -> None:
    """`log?turn=7` (Italy's turn in round 1) was a bare "0 events"; the turn menu did not say
    which turns had been passed over."""
    got = pages(
        war, tmp_path, "/campaigns/demo/log?turn=7", "/campaigns/demo/log?turn=6&kind=TurnPassedOver",
        "/campaigns/demo/log?turn=6",
    )  # fmt: skip
    status, html = got["/campaigns/demo/log?turn=7"]
    assert status == 200
    notice = text(html, "passed-over")
    assert notice.startswith("Turn 7 (Italy, round 1) was passed over: Italy was neutral then (F8)")
    assert '<a href="/campaigns/demo/log?turn=6&amp;kind=TurnPassedOver">the events of turn 6</a>' in html
    assert '<option value="7" selected>7 (Italy, round 1, passed over)</option>' in html
    # The link finds it, with its rule.
    status, html = got["/campaigns/demo/log?turn=6&kind=TurnPassedOver"]
    rows = re.findall(r"<td>TurnPassedOver</td><td>(\w+)</td><td>([^<]*)</td>", html)
    assert rows == [("F8", "round 1, Italy: turn passed over, neutral until it enters the war in round 4")]
    # A turn played has no such notice.
    assert 'id="passed-over"' not in got["/campaigns/demo/log?turn=6"][1]


def test_f8_a_turn_played_after_an_adjustment_brought_the_entry_forward_is_not_passed_over(
    war: str, tmp_path: Path
) -> None:
    """Italy (entry round 4) played turn 16, in round 2, by an adjustment (AD1). Once the game
    had moved on, the board of turn 16 was a 404 "passed over (F8)", the turn menu offered it
    disabled and turn 15's "next" link jumped to 17: the viewer read the scenario's entry round
    alone."""
    db = str(tmp_path / "on.db")
    shutil.copy(war, db)
    for _ in range(8):  # Italy's eight phases: now Japan's turn 17
        result = CliRunner().invoke(cli, ["--db", db, "next"])
        assert result.exit_code == 0, result.output
    got = pages(
        db, tmp_path, "/campaigns/demo/board?turn=16", "/campaigns/demo/board?turn=15", "/campaigns/demo/log?turn=16"
    )
    status, html = got["/campaigns/demo/board?turn=16"]
    assert status == 200, html
    assert "Board at the end of turn 16" in html
    assert '<option value="16" selected>16 (Italy, round 2)</option>' in html
    status, html = got["/campaigns/demo/board?turn=15"]
    following = re.search(r'id="next-turn" href="([^"]+)"', html)
    assert following and following.group(1) == "/campaigns/demo/board?turn=16"
    assert '<option value="7" disabled>7 (Italy, round 1, passed over)</option>' in html
    status, html = got["/campaigns/demo/log?turn=16"]
    assert 'id="passed-over"' not in html and "Italy collects" in html


def test_the_timeline_says_why_it_lists_fewer_events_than_its_heading_counts(war: str, tmp_path: Path) -> None:
    """ "Timeline demo, 233 events" over "130 events" with nothing saying where the others were:
    the requests (ActionAsked) are listed only when that kind is chosen."""
    got = pages(war, tmp_path, "/campaigns/demo/log", "/campaigns/demo/log?kind=ActionAsked")
    html = got["/campaigns/demo/log"][1]
    assert "(the requests behind them, ActionAsked, are left out: choose that kind to list them)" in text(html, "count")
    assert 'id="asked-note"' not in got["/campaigns/demo/log?kind=ActionAsked"][1]
