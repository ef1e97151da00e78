"""The viewer as a player following a great-war-1914 campaign sees it: who is at war (F8), every
page on a phone without scrolling sideways, no error in the browser's console, the map pinched,
keyed and tapped as well as dragged, and no "connecting" where no script runs.

The browser tests drive Debian's headless chromium as tests/test_viewer_browser.py does (its
`tab` fixture, a fresh window of one chromium for the module; `browser`, a chromium of the test's
own, where what a test counts is the browser's since it started): without chromium, chromedriver
or selenium they are skipped with the reason.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support import Server
from tests.test_viewer_browser import browser as browser  # noqa: F401  (the fixture: a chromium of the test's own)
from tests.test_viewer_browser import chromium as chromium  # noqa: F401  (the module's chromium)
from tests.test_viewer_browser import demo as demo  # noqa: F401  (the demo campaign served, module-scoped)
from tests.test_viewer_browser import sign_in, view_box, wait
from tests.test_viewer_browser import tab as tab  # noqa: F401  (a fresh window of the module's chromium)
from tests.test_viewer_browser import war as war  # noqa: F401  (a great-war-1914 campaign served, module-scoped)
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.players import Players

WORLD = "great-war-1914"


def fetch(db: str, tmp_path: Path, path: str) -> str:
    """A page of the database's campaigns, read in-process by a spectator of `war`."""
    import httpx

    from tracker.server import create_app

    with Tracker(db) as t:
        token = Players(t.engine).add(str(t.campaign_id("war")), "reader", [], False, spectator=True)
    app = create_app(db, keys=str(tmp_path / "keys.db"))

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://league") as client:
            return await client.get(path, headers={"Authorization": f"Bearer {token}"})

    try:
        response = asyncio.run(go())
    finally:
        app.state.service.close()
    assert response.status_code == 200, response.text
    return response.text


def test_f8_the_board_says_which_nations_are_neutral_as_state_does(tmp_path: Path) -> None:
    """F8: in round 1 the Ottoman Empire, Italy and the United States are neutral; `tracker
    state` says so, and the board's table of nations showed only the side each will join."""
    db = str(tmp_path / "w.db")
    with Tracker(db) as t:
        t.create("war", WORLD, dice="auto")
    neutral = json.loads(CliRunner().invoke(cli, ["--db", db, "state", "--json"]).stdout)["neutral"]
    assert neutral == ["Ottoman Empire", "Italy", "United States"]
    html = fetch(db, tmp_path, "/campaigns/war/board")
    rows = dict(re.findall(r'<tr data-nation="([^"]+)"(?: data-neutral-until="(\d+)")?>', html))
    assert {n for n, until in rows.items() if until} == set(neutral)
    assert rows["Italy"] == "4" and rows["United States"] == "11" and rows["Germany"] == ""
    assert "neutral until round 11 (F8)" in html


def test_a_page_read_without_its_script_does_not_say_it_is_connecting(tmp_path: Path) -> None:
    """The "connecting" beside the navigation is the script's to write: a browser without
    JavaScript showed it for ever."""
    db = str(tmp_path / "w.db")
    with Tracker(db) as t:
        t.create("war", WORLD, dice="auto")
    html = fetch(db, tmp_path, "/campaigns/war/log")
    live = re.search(r'<span id="live"[^>]*>([^<]*)</span>', html)
    assert live is not None and live.group(1) == ""


# ----- in the browser -----


PAGES = ("board", "board?turn=2", "log", "battles", "battles/1", "events/1", "charts", "zones/Heligoland%20Bight")


def test_no_page_scrolls_sideways_on_a_phone(tab: Any, demo: tuple[str, Server]) -> None:  # noqa: F811
    """At 390x844 the timeline's table was 1,145 pixels wide, the nations', rolls' and battles'
    tables, the charts and an event's hash wider than the phone: the whole page scrolled
    sideways. A wide table scrolls in its own box; the rest fits."""
    _, server = demo
    sign_in(tab, server.url, server.token)  # type: ignore[attr-defined]
    tab.set_window_size(390, 844)
    try:
        wide = {}
        for path in PAGES:
            tab.get(f"{server.url}/campaigns/demo/{path}")
            page, window = tab.execute_script(
                "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];"
            )
            if page > window:
                wide[path] = page
        assert wide == {}
    finally:
        tab.set_window_size(1280, 1000)


def test_the_pages_leave_no_error_in_the_console(browser: Any, demo: tuple[str, Server]) -> None:  # noqa: F811
    """Every page asked for /favicon.ico, and its 404 was an error in the browser's console."""
    # A chromium of its own: one that has been to this server already may not ask for the icon.
    _, server = demo
    # From the first page on: chromium asks a server for its icon once.
    sign_in(browser, server.url, server.token)  # type: ignore[attr-defined]
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    for path in PAGES:
        browser.get(f"{server.url}/campaigns/demo/{path}")
        wait(browser, lambda d: d.execute_script("return document.readyState") == "complete")
        errors += [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


@pytest.fixture
def world_board(tab: Any, war: tuple[str, str]) -> Any:  # noqa: F811
    """A new great-war-1914 campaign served (the module's: these tests only look at it), its
    board open in a fresh window: the map's <svg> element."""
    from selenium.webdriver.common.by import By

    url, token = war
    sign_in(tab, url, token)
    tab.get(f"{url}/campaigns/war/board")
    return wait(tab, lambda d: d.find_element(By.CSS_SELECTOR, "#map svg.board-map"))


def touch(browser: Any, kind: str, *points: tuple[float, float]) -> None:
    browser.execute_cdp_cmd(
        "Input.dispatchTouchEvent",
        {"type": kind, "touchPoints": [{"x": x, "y": y, "id": i} for i, (x, y) in enumerate(points)]},
    )


def test_two_fingers_spread_on_the_map_zoom_it_in(tab: Any, world_board: Any) -> None:  # noqa: F811
    """A pinch, the phone's zoom, moved the map sideways as a one-finger drag (the map takes
    every touch, so the page did not zoom either)."""
    svg = world_board
    before = view_box(tab, svg)
    box = tab.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return [r.x, r.y, r.width, r.height];", svg
    )
    x, y = box[0] + box[2] / 2, box[1] + box[3] / 2
    touch(tab, "touchStart", (x - 20, y), (x + 20, y))
    for step in range(1, 9):
        touch(tab, "touchMove", (x - 20 - 10 * step, y), (x + 20 + 10 * step, y))
    touch(tab, "touchEnd")
    after = view_box(tab, svg)
    # The fingers ended 200 pixels apart, from 40: the view shows a fifth as much, about the same middle.
    assert after[2] == pytest.approx(before[2] / 5, rel=0.02)
    assert after[0] + after[2] / 2 == pytest.approx(before[0] + before[2] / 2, abs=before[2] / 50)
    assert tab.current_url.endswith("/campaigns/war/board"), "a pinch is not a tap on a zone"


def test_the_maps_buttons_are_a_fingers_size_on_a_touch_screen(tab: Any, world_board: Any) -> None:  # noqa: F811
    """+, - and fit were 33 by 28 pixels on a phone: 44 is a finger's size (WCAG 2.5.5)."""
    from selenium.webdriver.common.by import By

    tab.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
    )
    tab.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    tab.refresh()
    buttons = wait(tab, lambda d: d.find_elements(By.CSS_SELECTOR, "#map-tools button"))
    assert tab.execute_script("return matchMedia('(pointer: coarse)').matches")
    assert [(b.rect["width"] >= 44, b.rect["height"] >= 44) for b in buttons] == [(True, True)] * 3


def test_the_arrow_keys_move_the_map_and_plus_minus_and_0_zoom_it(tab: Any, world_board: Any) -> None:  # noqa: F811
    """Without a mouse the map could be zoomed by its buttons but moved only by tabbing from
    zone to zone: with a zone or a map button focused, the arrows move it a fifth of the view."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    svg = world_board
    tab.execute_script("document.getElementById('zoom-in').focus();")
    opened = view_box(tab, svg)
    ActionChains(tab).send_keys(Keys.ARROW_RIGHT).perform()
    moved = view_box(tab, svg)
    assert moved[0] == pytest.approx(opened[0] + opened[2] / 5, abs=0.5) and moved[1:] == opened[1:]
    ActionChains(tab).send_keys(Keys.TAB, Keys.ARROW_DOWN).perform()  # a zone has the focus
    down = view_box(tab, svg)
    assert down[1] > moved[1] and down[2] == moved[2]
    ActionChains(tab).send_keys("+").perform()
    assert view_box(tab, svg)[2] == pytest.approx(down[2] / 1.5, rel=0.01)
    ActionChains(tab).send_keys("0").perform()
    whole = [float(svg.get_dom_attribute(k)) for k in ("width", "height")]
    fitted = view_box(tab, svg)
    assert fitted[2] >= whole[0] - 1 and fitted[3] >= whole[1] - 1


def connections_to(port: int) -> int:
    """Established TCP connections to `port` on this machine (the browser's, to the server)."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for r in rows if r.split()[2].endswith(f":{port:04X}") and r.split()[3] == "01")


def test_pages_left_behind_close_their_streams(browser: Any, demo: tuple[str, Server]) -> None:  # noqa: F811
    """Chromium kept each page left (back-forward cache) with its event stream open: after six
    pages every connection it allows one server was held, and the seventh page clicked waited
    about a minute. A page closes its stream when it is left."""
    # A chromium of its own: one that has been to this server keeps idle connections to it.
    from urllib.parse import urlparse

    _, server = demo
    sign_in(browser, server.url, server.token)  # type: ignore[attr-defined]
    port = urlparse(server.url).port
    assert port is not None
    for path in PAGES[:6]:
        browser.get(f"{server.url}/campaigns/demo/{path}")
        wait(browser, lambda d: d.find_element("id", "live").text == "live")
    # This page's stream, and at most one idle connection kept for the next request.
    assert connections_to(port) <= 2
