"""The viewer tells each reader what the game waits for (issue: nobody polls): on every page
of a campaign, who is waited for and with which command, "your move" for a player whose nation
it is; the board shows open battles and units bought and not placed, the map the units' IDs
on hover; the timeline reads newest first on request."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape

import pytest
from click.testing import CliRunner

from tests.support import served
from tests.test_server import Reader
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.players import Players

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def readers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Reader]]:
    work = tmp_path_factory.mktemp("waiting")
    db = str(work / "c.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next")  # research -> purchase
    run(db, "buy", "submarine")  # bought, not placed until placement
    with Tracker(db) as t:
        cid = str(t.campaign_id("autumn"))
        players = Players(t.engine)
        tokens = {
            "anna": players.add(cid, "anna", ["Germany"], False),
            "bert": players.add(cid, "bert", ["Britain"], False),
        }
    with served(db, workdir=work) as server:
        yield {name: Reader(server, token) for name, token in tokens.items()}


def waiting_box(html: str) -> str:
    match = re.search(r'<div id="waiting".*?</div>', html, re.DOTALL)
    assert match, "every page of the campaign says what the game waits for"
    return unescape(match.group(0))


@pytest.mark.parametrize("path", ["/board", "/log", "/battles", "/charts"])
def test_pl1_every_page_says_whom_the_game_waits_for_and_your_move_to_that_player(
    readers: dict[str, Reader], path: str
) -> None:
    status, html = readers["anna"].page("/campaigns/autumn" + path)
    assert status == 200
    box = waiting_box(html)
    assert 'id="your-move"' in box and "Germany" in box and "tracker next" in box
    status, html = readers["bert"].page("/campaigns/autumn" + path)
    assert status == 200
    box = waiting_box(html)
    assert "Germany" in box and 'id="your-move"' not in box


def test_pu2_the_board_shows_units_bought_and_not_placed_and_unit_ids_on_hover(readers: dict[str, Reader]) -> None:
    _, html = readers["bert"].page("/campaigns/autumn/board")
    assert re.search(r'data-unplaced="Germany">Germany to place: 1 submarine<', html)
    # Each zone's title (the tooltip) lists the IDs of the units there.
    titles = [unescape(t) for t in re.findall(r'<g class="zone[^>]*>\s*<title>(.*?)</title>', html, re.DOTALL)]
    assert any("DE-SS1" in t for t in titles), titles[:3]


def test_the_timeline_reads_newest_first_on_request(readers: dict[str, Reader]) -> None:
    def seqs(html: str) -> list[int]:
        return [int(s) for s in re.findall(r'<tr data-seq="(\d+)"', html)]

    _, oldest = readers["bert"].page("/campaigns/autumn/log")
    _, newest = readers["bert"].page("/campaigns/autumn/log?order=newest")
    assert seqs(oldest) == sorted(seqs(oldest)) and len(seqs(oldest)) > 2
    assert seqs(newest) == list(reversed(seqs(oldest)))
    status, html = readers["bert"].page("/campaigns/autumn/log?order=sideways")
    assert status == 400 and "order must be newest or oldest" in html
