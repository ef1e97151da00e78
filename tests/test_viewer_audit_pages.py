"""The viewer as a group uses it, audited against the CLI: a battle whose dice an override undo
took back (RK3), the zone page's names, what the board says its zone links open, and the turn
pickers, which name each turn's nation and round as the pages' own messages do.

The campaign is the demo, its last action (battle 4's volley) taken back by an override and
fought again before the server starts (the server keeps the dice seed to itself after that)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support import served
from tests.test_server import Reader
from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.players import Players


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Reader]]:
    db = str(tmp_path_factory.mktemp("audit") / "demo.db")
    run_demo(db, lambda line: None)
    # RK3: the volley of battle 4 taken back with the other side's agreement, and rolled again.
    run(db, "undo", "--override", "--reason", "dice rolled too soon", "--agreed-by", "Britain")
    run(db, "battle", "auto", "4")
    with Tracker(db) as t:
        token = Players(t.engine).add(str(t.campaign_id("demo")), "watcher", [], False, spectator=True)
    with served(db, workdir=tmp_path_factory.mktemp("served")) as server:
        yield db, Reader(server, token)


def rolls_of(db: str, battle: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(run(db, "log", "--battle", str(battle), "--kind", "DiceRolled", "--json"))
    return rows


def test_rk3_the_battle_list_counts_the_rolls_that_stand_not_those_an_undo_took_back(
    site: tuple[str, Reader],
) -> None:
    db, reader = site
    rolls = rolls_of(db, 4)
    standing = [r for r in rolls if not r["undone_by"]]
    assert len(standing) < len(rolls), "the override took rolls of battle 4 back"
    status, html = reader.page("/campaigns/demo/battles")
    assert status == 200
    row = re.search(r'<tr><td class="num"><a href="/campaigns/demo/battles/4">4</a></td>(.*?)</tr>', html, re.DOTALL)
    assert row is not None, html
    cells = [unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]
    assert cells[3] == str(len(standing))
    # The last step is the battle's end as fought again, not one of the steps taken back.
    ended = json.loads(run(db, "log", "--battle", "4", "--kind", "BattleEnded", "--json"))
    assert cells[4] == next(e["summary"] for e in ended if not e["undone_by"])


def test_rk3_a_roll_taken_back_links_the_undo_that_took_it_back(site: tuple[str, Reader]) -> None:
    db, reader = site
    status, html = reader.page("/campaigns/demo/battles/4")
    assert status == 200
    for roll in rolls_of(db, 4):
        row = re.search(rf'<tr( class="undone")?><td class="num">{roll["data"]["roll"]}</td>.*?</tr>', html)
        assert row is not None, roll
        badge = f'<a class="badge" href="/campaigns/demo/events/{roll["undone_by"]}">undone by {roll["undone_by"]}</a>'
        assert (badge in row.group(0)) == bool(roll["undone_by"]), row.group(0)
        assert bool(row.group(1)) == bool(roll["undone_by"])


def test_the_zone_page_names_unit_types_and_the_phase_as_the_other_pages_do(site: tuple[str, Reader]) -> None:
    db, reader = site
    zone = "Northern North Sea"
    shown = json.loads(run(db, "show", zone, "--json"))
    types = {u["type"] for u in shown["units"]}
    assert "aircraft_carrier" in types, "the demo's carrier is there"
    status, html = reader.page("/campaigns/demo/zones/Northern%20North%20Sea")
    assert status == 200
    table = re.search(r'<table id="zone-units">.*?</table>', html, re.DOTALL)
    assert table is not None
    cells = set(re.findall(r"<td>([^<]*)</td>", table.group(0)))
    assert {t.replace("_", " ") for t in types} <= cells
    assert not {t for t in types if "_" in t} & cells
    assert "Germany&#39;s naval combat." in html


def test_the_board_says_a_zone_opens_its_page_and_each_zone_link_does(site: tuple[str, Reader]) -> None:
    _db, reader = site
    status, html = reader.page("/campaigns/demo/board")
    assert status == 200
    assert "click a zone for its page: its units, the odds there and its events." in html
    svg = html.split('class="board-map"', 1)[1].split("</svg>", 1)[0]
    links = re.findall(r'<a [^>]*href="([^"]+)"', svg)
    assert links and all(link.startswith("/campaigns/demo/zones/") for link in links)


@pytest.mark.parametrize("page", ["board", "log"])
def test_t1_the_turn_pickers_name_each_turns_nation_and_round_as_state_does(
    site: tuple[str, Reader], page: str, tmp_path: Path
) -> None:
    db, reader = site
    status, html = reader.page(f"/campaigns/demo/{page}")
    assert status == 200
    picker = re.search(r'<select name="turn"[^>]*>(.*?)</select>', html, re.DOTALL)
    assert picker is not None
    options = re.findall(r'<option value="(\d+)"[^>]*>([^<]*)</option>', picker.group(1))
    now = json.loads(run(db, "state", "--json"))["turn"]
    assert [int(k) for k, _ in options] == list(range(1, now + 1))
    for k, label in options:
        board = json.loads(run(db, "state", "--turn", k, "--json"))
        assert unescape(label) == f"{k} ({board['nation']}, round {board['round']})"
