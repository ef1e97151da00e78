"""The browser viewer's pages over HTTP, from a real `tracker serve`: what each page shows, and
a 400 or 404 page with one line for every bad URL, never a 500 or a traceback.

Reads need a token (issue 24): the pages are read as a spectator of the demo campaign
(`Reader`), or of a public campaign without one; an unknown campaign is "no such campaign"."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.ruleset import load_ruleset
from tests.map_svg import assert_map_shows
from tests.support import served
from tests.test_server import Reader
from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.players import Players


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("viewer") / "demo.db"
    run_demo(str(path), lambda line: None)
    return str(path)


def spectator_token(db: str, campaign: str) -> str:
    with Tracker(db) as t:
        return Players(t.engine).add(str(t.campaign_id(campaign)), "watcher", [], False, spectator=True)


@pytest.fixture(scope="module")
def server(demo_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    token = spectator_token(demo_db, "demo")
    with served(demo_db, workdir=tmp_path_factory.mktemp("served")) as s:
        yield Reader(s, token)


def page(server: Reader, path: str) -> tuple[int, str]:
    return server.page(path)


def anonymous_page(url: str, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url + path, timeout=60) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def state(db: str, *args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CliRunner().invoke(cli, ["--db", db, "state", *args, "--json"]).stdout)
    return data


def svg_of(html: str) -> str:
    match = re.search(r'<svg[^>]*class="board-map".*?</svg>', html, re.DOTALL)
    assert match, "the page draws the map"
    # The map's zones are links in the viewer; the SVG reader wants the drawing itself.
    return re.sub(r"</?a\b[^>]*>", "", match.group(0))


def test_the_campaign_list_links_each_campaign(server: Reader) -> None:
    status, html = page(server, "/")
    assert status == 200
    assert 'href="/campaigns/demo/board"' in html and "The North Sea, autumn 1914" in html
    # The list follows no campaign: no notice of news, and no link to a campaign without a name.
    assert 'id="news"' not in html and "/campaigns//" not in html


@pytest.mark.parametrize("args", [[], ["--turn", "2"], ["--turn", "2", "--phase", "combat_movement"], ["--at", "40"]])
def test_the_board_page_draws_each_zone_as_state_reports_it(server: Reader, demo_db: str, args: list[str]) -> None:
    query = urllib.parse.urlencode(dict(zip([a.lstrip("-") for a in args[::2]], args[1::2], strict=True)))
    status, html = page(server, "/campaigns/demo/board" + (f"?{query}" if query else ""))
    assert status == 200
    board = state(demo_db, *args)
    with Tracker(demo_db) as t:
        scenario = t.load(t.campaign_id("demo")).scenario
    assert_map_shows(svg_of(html), board, scenario, load_ruleset("twtea-3e")[0])
    assert f'after event <a href="/campaigns/demo/events/{board["seq"]}">{board["seq"]}</a>' in html
    for nation, balance in board["balances"].items():
        row = re.search(rf'<tr data-nation="{nation}">(.*?)</tr>', html, re.DOTALL)
        assert row and f'<td class="num">{balance}</td>' in row.group(1)


def test_the_timeline_filters_as_log_does(server: Reader, demo_db: str) -> None:
    status, html = page(server, "/campaigns/demo/log?nation=gb&kind=dicerolled&turn=1")
    assert status == 200
    shown = [int(s) for s in re.findall(r'<tr data-seq="(\d+)"', html)]
    expected = json.loads(
        CliRunner()
        .invoke(cli, ["--db", demo_db, "log", "--nation", "gb", "--kind", "dicerolled", "--turn", "1", "--json"])
        .stdout
    )
    assert shown == [r["seq"] for r in expected] and shown
    # The filters come back chosen, spelled the campaign's way.
    assert '<option value="Britain" selected>' in html and '<option value="DiceRolled" selected>' in html


def test_a_battle_page_lists_every_roll_of_the_battle(server: Reader, demo_db: str) -> None:
    status, html = page(server, "/campaigns/demo/battles")
    assert status == 200 and 'href="/campaigns/demo/battles/1"' in html
    status, html = page(server, "/campaigns/demo/battles/1")
    assert status == 200
    args = ["--db", demo_db, "log", "--battle", "1", "--kind", "DiceRolled", "--json"]
    rolls = json.loads(CliRunner().invoke(cli, args).stdout)
    table = re.search(r'<table id="rolls">.*?</table>', html, re.DOTALL)
    assert table
    linked = [int(s) for s in re.findall(r'href="/campaigns/demo/events/(\d+)"', table.group(0))]
    assert linked == [r["seq"] for r in rolls] and linked
    assert "Result:" in html


def test_the_explain_page_says_what_explain_says(server: Reader, demo_db: str) -> None:
    rolls = json.loads(CliRunner().invoke(cli, ["--db", demo_db, "log", "--kind", "DiceRolled", "--json"]).stdout)
    seq = rolls[0]["seq"]
    data = json.loads(CliRunner().invoke(cli, ["--db", demo_db, "explain", str(seq), "--json"]).stdout)
    status, html = page(server, f"/campaigns/demo/events/{seq}")
    assert status == 200
    text = unescape(html)
    assert f"Event {seq}: DiceRolled" in text and data["summary"] in text and data["hash"] in text
    for rule in data["rules"]:
        assert f"Rule {rule['id']}" in text and rule["statement"] in text


def test_the_charts_page_has_the_report_charts(server: Reader) -> None:
    status, html = page(server, "/campaigns/demo/charts")
    assert status == 200
    # The report's charts, whichever it draws: at least these four.
    assert html.count("<svg") >= 4
    for key in ("ntr_at_sea", "balance", "units", "fleet_cost"):
        assert f'id="chart-{key}"' in html


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        # Issue 24: "no such campaign" and nothing more (it named the campaign asked for).
        ("/campaigns/nosuch/board", 404, "no such campaign"),
        ("/campaigns/nosuch/log", 404, "no such campaign"),
        (f"/campaigns/{'x' * 300}/board", 404, "no such campaign"),
        ("/campaigns/demo/board?turn=" + "1" + "0" * 30, 400, "turn must be a whole number from 1 to 2147483647"),
        ("/campaigns/demo/board?turn=2147483647", 404, "turn 2147483647 has not been played"),
        ("/campaigns/demo/board?turn=0", 400, "turn must be a whole number"),
        ("/campaigns/demo/board?turn=two", 400, "turn must be a whole number"),
        ("/campaigns/demo/board?turn=2&phase=lunch", 400, "unknown phase 'lunch'"),
        ("/campaigns/demo/board?phase=research&at=3", 400, "a phase goes with a turn, not an event"),
        ("/campaigns/demo/board?turn=1&at=3", 400, "give a turn or an event, not both"),
        ("/campaigns/demo/board?at=999999", 404, "no event 999999"),
        ("/campaigns/demo/events/999999", 404, "no event 999999"),
        ("/campaigns/demo/events/" + "9" * 40, 400, "event must be a whole number"),
        ("/campaigns/demo/events/-1", 400, "event must be a whole number"),
        ("/campaigns/demo/battles/999", 404, "no battle 999"),
        # The timeline of a battle nobody fought: not there, as the battle's own page says.
        ("/campaigns/demo/log?battle=999", 404, "no battle 999 in this campaign"),
        ("/campaigns/demo/log?battle=999&turn=1", 404, "no battle 999 in this campaign"),
        ("/campaigns/demo/battles/x", 400, "battle must be a whole number"),
        ("/campaigns/demo/log?zone=Atlantis", 400, "unknown zone 'Atlantis'"),
        ("/campaigns/demo/log?nation=Narnia", 400, "unknown nation 'Narnia'"),
        ("/campaigns/demo/log?kind=Nothing", 400, "unknown event kind 'Nothing'"),
        ("/campaigns/demo/log?turn=99999999999", 400, "turn must be a whole number"),
        # Digits Python's str.isdigit() takes and int() does not (a superscript two) were a
        # 500; other scripts' digits (Arabic-Indic three) were read as a number.
        ("/campaigns/demo/board?turn=%C2%B2", 400, "turn must be a whole number"),
        ("/campaigns/demo/board?turn=%D9%A3", 400, "turn must be a whole number"),
        ("/campaigns/demo/events/%C2%B2", 400, "event must be a whole number"),
        ("/campaigns/demo/battles/%C2%B9", 400, "battle must be a whole number"),
        ("/campaigns/demo/battles/%D9%A1", 400, "battle must be a whole number"),
        ("/campaigns/demo/log?battle=%C2%B2", 400, "battle must be a whole number"),
        # The timeline of a turn not played yet: not there, as that turn's board says.
        ("/campaigns/demo/log?turn=2147483647", 404, "turn 2147483647 has not been played"),
        ("/no/such/page", 404, "no page at /no/such/page"),
    ],
)
def test_a_bad_url_is_a_one_line_error_page(server: Reader, path: str, status: int, message: str) -> None:
    got, html = page(server, path)
    assert got == status, html[:500]
    error = re.search(r'<p class="error" id="error">(.*?)</p>', html, re.DOTALL)
    assert error and message in unescape(error.group(1)) and "\n" not in error.group(1)
    assert "Traceback" not in html
    assert "Traceback" not in server.log()


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/campaigns/demo/", "/campaigns/demo"),
        ("/campaigns/demo/board/", "/campaigns/demo/board"),
        ("/campaigns/demo/log/?turn=2", "/campaigns/demo/log?turn=2"),
        ("/campaigns/demo/battles//", "/campaigns/demo/battles"),
        # Never to another host: one leading slash, whatever was sent.
        ("//campaigns/demo/board/", "/campaigns/demo/board"),
        ("/no/such/page/", None),
        ("//evil.example/", None),
    ],
)
def test_a_page_asked_for_with_a_slash_after_it_goes_to_the_page(
    server: Reader, path: str, location: str | None
) -> None:
    import http.client

    conn = http.client.HTTPConnection(urllib.parse.urlsplit(server.url).netloc, timeout=60)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {server.token}"})
        resp = conn.getresponse()
        resp.read()
    finally:
        conn.close()
    if location is None:
        assert resp.status == 404
    else:
        assert (resp.status, resp.getheader("location")) == (307, location)
        assert page(server, location)[0] == 200


def test_names_typed_by_players_are_escaped(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    name = "<b>bold</b> & co"
    with Tracker(db) as t:
        t.create(name, "north-sea-1914")
        # A public campaign: read without a token.
        Players(t.engine).set_public(str(t.campaign_id(name)), True)
    with served(db, workdir=tmp_path) as s:
        status, html = anonymous_page(s.url, "/")
        assert status == 200 and "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt; &amp; co" in html
        status, html = anonymous_page(s.url, "/campaigns/" + urllib.parse.quote(name, safe="") + "/board")
        assert status == 200 and "<b>bold</b>" not in html


def test_the_timeline_of_a_campaign_of_one_event_says_one_event(tmp_path: Path) -> None:
    """A campaign just created read "autumn, 1 events"."""
    from starlette.testclient import TestClient

    from tracker.server.app import create_app
    from tracker.service.players import LEAGUE

    db = str(tmp_path / "x.db")
    with Tracker(db) as t:
        rita = Players(t.engine).add(LEAGUE, "rita", [], True)
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client:
        # Created through the server, the campaign's seed is in the key store: one event.
        asked = {"args": ["new", "autumn", "--scenario", "north-sea-1914"]}
        assert client.post("/api/command", json=asked, headers={"Authorization": f"Bearer {rita}"}).status_code == 200
        html = client.get("/campaigns/autumn/log", headers={"Authorization": f"Bearer {rita}"}).text
    heading = re.search(r"<h1>Timeline <span[^>]*>(.*?)</span>", html)
    assert heading and heading.group(1) == "autumn, 1 event"


def test_the_timeline_of_a_battle_fought_lists_its_events(server: Reader, demo_db: str) -> None:
    status, html = page(server, "/campaigns/demo/log?battle=1")
    args = ["--db", demo_db, "log", "--battle", "1", "--json"]
    expected = [r["seq"] for r in json.loads(CliRunner().invoke(cli, args).stdout)]
    assert status == 200 and [int(s) for s in re.findall(r'<tr data-seq="(\d+)"', html)] == expected and expected


@pytest.mark.parametrize(("name", "segment"), [("..", "..%20"), (".", ".%20")])
def test_a_campaign_named_as_a_dot_segment_is_reached_by_its_links_and_its_stream(
    tmp_path: Path, name: str, segment: str
) -> None:
    """A browser folds "/campaigns/../board" into "/board" (and "%2E%2E" as well): such a name is
    written with a trailing %20 in the viewer's links and scripts (no name ends in a space)."""
    db = str(tmp_path / "dots.db")
    with Tracker(db) as t:
        t.create(name, "north-sea-1914")
        Players(t.engine).set_public(str(t.campaign_id(name)), True)
    with served(db, workdir=tmp_path) as s:
        status, html = anonymous_page(s.url, "/")
        assert status == 200 and f'href="/campaigns/{segment}/board"' in html
        status, html = anonymous_page(s.url, f"/campaigns/{segment}/board")
        assert status == 200 and f'href="/campaigns/{segment}/log"' in html
        assert f'data-stream="/api/campaigns/{segment}/events/stream"' in html
        assert f"/campaigns/{name}/" not in html
        status, html = anonymous_page(s.url, f"/campaigns/{segment}/log")
        assert status == 200 and f'href="/campaigns/{segment}/events/1"' in html
        with urllib.request.urlopen(f"{s.url}/api/campaigns/{segment}/events/stream", timeout=60) as stream:
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            assert stream.readline() == b"event: recorded\n"
        assert s.get(f"/api/campaigns/{segment}/state")[1]["campaign"] == name
        # The campaign's bare address sends the browser to its board, written the same way.
        request = urllib.request.Request(f"{s.url}/campaigns/{segment}", method="HEAD")
        opener = urllib.request.build_opener(NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as moved:
            opener.open(request, timeout=60)
        assert moved.value.headers["Location"] == f"/campaigns/{segment}/board"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_a_large_map_opens_on_the_acting_fleet_or_the_open_battle(tmp_path: Path) -> None:
    from tracker.reports.board_map import map_focus, map_layout
    from tracker.server.viewer import board_data

    with Tracker(str(tmp_path / "w.db")) as t:
        t.create("war", "great-war-1914")
        data = board_data(t, "war", None, None, None)
        scenario = t.load(t.campaign_id("war")).scenario
    positions = map_layout(scenario).positions
    # Round 1, Germany: the High Seas Fleet lies in the Heligoland Bight.
    assert data["board"]["nation"] == "Germany" and data["focus"] == positions["Heligoland Bight"]
    assert map_focus(data["board"], scenario, [{"zone": "Arabian Sea"}]) == positions["Arabian Sea"]
    nobody = {**data["board"], "units": [u for u in data["board"]["units"] if u["nation"] != "Germany"]}
    assert map_focus(nobody, scenario, []) is None


@pytest.mark.postgres
def test_the_viewer_on_postgresql_draws_the_board_and_refuses_bad_urls(
    pg_url: str, unique_name: str, tmp_path: Path
) -> None:
    with Tracker(pg_url) as t:
        t.create(unique_name, "north-sea-1914")
    for args in (["next", "--to", "combat_movement"], ["move", "DE-SS3", "--to", "Skagerrak"]):
        result = CliRunner().invoke(cli, ["--db", pg_url, "--campaign", unique_name, *args])
        assert result.exit_code == 0, result.output
    board = json.loads(CliRunner().invoke(cli, ["--db", pg_url, "--campaign", unique_name, "state", "--json"]).stdout)
    token = spectator_token(pg_url, unique_name)
    with served(pg_url, "--keys", str(tmp_path / "keys.db"), workdir=tmp_path) as plain:
        s = Reader(plain, token)
        status, html = page(s, f"/campaigns/{unique_name}/board")
        assert status == 200
        with Tracker(pg_url) as t:
            scenario = t.load(t.campaign_id(unique_name)).scenario
        assert_map_shows(svg_of(html), board, scenario, load_ruleset("twtea-3e")[0])
        status, html = page(s, f"/campaigns/{unique_name}/log?zone=skagerrak&kind=UnitsMoved")
        assert status == 200 and len(re.findall(r'<tr data-seq="', html)) == 1
        assert page(s, f"/campaigns/{unique_name}/board?turn={10**30}")[0] == 400
        assert page(s, f"/campaigns/{unique_name}/events/{2**31 - 1}")[0] == 404


def test_f8_the_board_steps_over_a_neutral_nations_turn_passed_over(tmp_path: Path) -> None:
    """great-war-1914, round 1: the Ottoman Empire (turn 5) and Italy (turn 7) are neutral, their
    turns passed over, each board a 404. The previous and next turn links go to the turns
    played around them, and the turn selector offers them disabled."""
    db = str(tmp_path / "w.db")
    with Tracker(db) as t:
        t.create("war", "great-war-1914", dice="auto")
    while state(db)["turn"] < 8:
        result = CliRunner().invoke(cli, ["--db", db, "next"])
        assert result.exit_code == 0, result.output
    with served(db, "--keys", str(tmp_path / "keys.db"), workdir=tmp_path) as plain:
        s = Reader(plain, spectator_token(db, "war"))
        status, html = page(s, "/campaigns/war/board?turn=5")
        # The 404 page links to the board then (turn 4's), not a command to type.
        assert status == 404 and '<a href="/campaigns/war/board?turn=4">the board then: turn 4</a>' in html
        assert "tracker state" not in html
        status, html = page(s, "/campaigns/war/board?turn=6")
        assert status == 200
        prev = re.search(r'id="prev-turn" href="([^"]+)"', html)
        after = re.search(r'id="next-turn" href="([^"]+)"', html)
        assert prev and prev.group(1) == "/campaigns/war/board?turn=4"
        assert after and after.group(1) == "/campaigns/war/board?turn=8"
        assert '<option value="5" disabled>5 (Ottoman Empire, round 1, passed over)</option>' in html
        assert '<option value="7" disabled>7 (Italy, round 1, passed over)</option>' in html
        for link in (prev.group(1), after.group(1)):
            assert page(s, link)[0] == 200
        # Now (turn 8, Japan): the previous turn played is 6.
        status, html = page(s, "/campaigns/war/board")
        prev = re.search(r'id="prev-turn" href="([^"]+)"', html)
        assert prev and prev.group(1) == "/campaigns/war/board?turn=6"


def test_a_long_campaigns_turn_pickers_are_number_fields(
    demo_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A menu of every turn of a long league (9,595 on a campaign of 200,000 events) made most
    of the board page's bytes and is scrolled through, not read: past `TURN_MENU` turns the
    board's and the timeline's turn pickers are number fields."""
    import asyncio

    import httpx

    from tracker.server import create_app, viewer

    with Tracker(demo_db) as t:
        token = Players(t.engine).add(str(t.campaign_id("demo")), "long-reader", [], False, spectator=True)
    app = create_app(demo_db, keys=str(tmp_path / "keys.db"))

    def fetch(path: str) -> str:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://league") as client:
                return await client.get(path, headers={"Authorization": f"Bearer {token}"})

        response = asyncio.run(go())
        assert response.status_code == 200, response.text
        return response.text

    try:
        assert '<select name="turn" id="turn-select">' in fetch("/campaigns/demo/board")
        assert '<select name="turn" id="filter-turn">' in fetch("/campaigns/demo/log")
        monkeypatch.setattr(viewer, "TURN_MENU", 2)
        board = fetch("/campaigns/demo/board?turn=2")
        assert '<input type="number" name="turn" id="turn-select" min="1"' in board and 'value="2"' in board
        assert '<option value="1"' not in board
        log = fetch("/campaigns/demo/log")
        assert '<input type="number" name="turn" id="filter-turn" min="1"' in log
    finally:
        app.state.service.close()


def test_a_phase_with_the_turn_left_at_now_is_that_phase_of_the_turn_now(server: Reader, demo_db: str) -> None:
    # The board's form defaults its turn to "now": a phase chosen with it was a 400.
    now = state(demo_db)["turn"]
    status, html = page(server, "/campaigns/demo/board?turn=&phase=research")
    assert status == 200, html[-400:]
    same_status, same = page(server, f"/campaigns/demo/board?turn={now}&phase=research")
    assert same_status == 200
    assert svg_of(html) == svg_of(same)
    heading = re.search(r"Board [^:]*:", html)
    assert heading and f"turn {now}" in heading.group(0) and "research" in heading.group(0).lower(), heading
