"""The viewer in a real browser: Debian's chromium, headless, driven by selenium through
Debian's chromedriver, against a real `tracker serve`. Board content, navigation (turn and
phase, timeline filters, battles, explain) and the live update when the CLI records an
action while the page is open.

Without chromium, chromedriver or selenium the tests are skipped with the reason, except in
CI (`CI=true`), where that is an error. No browser is ever downloaded: selenium is given the
installed driver, so its driver manager is never asked.

Reads need a token (issue 24): each test opens the link with a spectator's token first, as a
player opens the one their referee sends; the browser keeps it in an HttpOnly cookie."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from domain.ruleset import load_ruleset
from tests.map_svg import expected_units, parsed_units
from tests.support import TRACKER, Server, served
from tracker.cli.demo import run_demo

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
)
WAIT = 60  # seconds a page may take to show what a test waits for, on a loaded machine


def _missing() -> str | None:
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (apt-get install {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install '.[test]')"
    return None


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the browser tests")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    # Selenium's driver manager stays offline even if something asked it.
    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(service=DriverService(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Server]]:
    db = str(tmp_path_factory.mktemp("browser") / "demo.db")
    run_demo(db, lambda line: None)
    token = spectator(db)
    with served(db, workdir=tmp_path_factory.mktemp("served")) as server:
        server.token = token  # type: ignore[attr-defined]
        yield db, server


def tracker(db: str, *args: str) -> str:
    result = subprocess.run([*TRACKER, "--db", db, *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def spectator(db: str) -> str:
    """A spectator's token for the database's only campaign."""
    return tracker(db, "players", "add", "watcher", "--spectator").strip().splitlines()[-1]


def sign_in(driver: Any, url: str, token: str) -> None:
    """Open the link a referee sends (`/?token=...`): the browser keeps the token and lands on
    the campaign list without it in the address."""
    driver.get(f"{url}/?token={token}")
    wait(driver, lambda d: d.current_url == f"{url}/")


def map_on_page(driver: Any) -> dict[str, dict[str, str]]:
    """Per zone, the text of each nation's line(s) as the browser renders the map."""
    rows: list[dict[str, str]] = driver.execute_script(
        """
        const out = [];
        for (const g of document.querySelectorAll('svg.board-map g[data-zone]')) {
          for (const t of g.querySelectorAll('text[data-nation]')) {
            const spans = t.querySelectorAll('tspan');
            out.push({zone: g.dataset.zone, nation: t.dataset.nation, units: spans[1].textContent});
          }
        }
        return out;
        """
    )
    shown: dict[str, dict[str, str]] = {}
    for r in rows:
        line = shown.setdefault(r["zone"], {})
        line[r["nation"]] = (line.get(r["nation"], "") + " " + r["units"]).strip()
    return shown


def wait(driver: Any, condition: Any) -> Any:
    """Poll `condition` until it holds. The page redraws itself when the stream says the
    campaign moved, so an element found a moment ago may be replaced while it is read: that
    is one more poll, not a failure."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (StaleElementReferenceException,)
    return WebDriverWait(driver, WAIT, poll_frequency=0.2, ignored_exceptions=ignored).until(condition)


def test_the_board_shows_each_nations_units_in_their_zones(browser: Any, demo: tuple[str, Server]) -> None:
    import json

    db, server = demo
    sign_in(browser, server.url, server.token)
    browser.get(f"{server.url}/campaigns/demo/board?turn=2")
    board = json.loads(tracker(db, "state", "--turn", "2", "--json"))
    shown = map_on_page(browser)
    want = expected_units(board, load_ruleset("twtea-3e")[0])
    assert {z: set(n) for z, n in shown.items()} == {z: set(n) for z, n in want.items()}
    for zone, nations in want.items():
        for nation, counts in nations.items():
            assert parsed_units(shown[zone][nation]) == counts, (zone, nation)
    ntr = browser.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('svg.board-map g[data-zone]')]"
        ".map(g => [g.dataset.zone, (g.querySelector('text.ntr tspan:last-child') || {}).textContent || '']));"
    )
    assert ntr["Western Approaches"] == "GB " + str(board["ntr"]["Britain"]["Western Approaches"])
    assert browser.find_element("id", "position").text.startswith("Board at the end of turn 2")


def test_navigation_turn_and_phase_timeline_battle_and_explain(browser: Any, demo: tuple[str, Server]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _, server = demo
    sign_in(browser, server.url, server.token)
    browser.get(f"{server.url}/campaigns/demo/board")
    Select(browser.find_element(By.ID, "turn-select")).select_by_value("1")
    Select(browser.find_element(By.ID, "phase-select")).select_by_value("combat_movement")
    browser.find_element(By.ID, "show").click()
    wait(browser, lambda d: "turn=1" in d.current_url and "phase=combat_movement" in d.current_url)
    assert "end of combat movement of turn 1" in browser.find_element(By.ID, "position").text
    browser.find_element(By.ID, "next-turn").click()
    wait(browser, lambda d: d.current_url.endswith("turn=2"))

    browser.find_element(By.LINK_TEXT, "Timeline").click()
    wait(browser, lambda d: d.find_elements(By.ID, "filters"))
    Select(browser.find_element(By.ID, "filter-nation")).select_by_visible_text("Germany")
    Select(browser.find_element(By.ID, "filter-kind")).select_by_visible_text("UnitsMoved")
    browser.find_element(By.ID, "apply").click()
    wait(browser, lambda d: "kind=UnitsMoved" in d.current_url)
    rows = browser.find_elements(By.CSS_SELECTOR, "#events tbody tr")
    assert rows and all(r.find_elements(By.TAG_NAME, "td")[4].text == "UnitsMoved" for r in rows)
    assert all(r.find_elements(By.TAG_NAME, "td")[2].text == "Germany" for r in rows)

    browser.find_element(By.LINK_TEXT, "Battles").click()
    wait(browser, lambda d: d.find_elements(By.ID, "battles"))
    browser.find_element(By.CSS_SELECTOR, "#battles tbody tr a").click()
    heading = wait(browser, lambda d: d.find_elements(By.TAG_NAME, "h1") and d.find_element(By.TAG_NAME, "h1"))
    assert heading.text.startswith(("Interception", "Convoy battle", "ASW combat", "Naval battle"))
    first_roll = browser.find_element(By.CSS_SELECTOR, "#rolls tbody tr td:last-child a")
    seq = first_roll.text
    first_roll.click()
    wait(browser, lambda d: d.current_url.endswith(f"/events/{seq}"))
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Event {seq}: DiceRolled"
    assert "Dice" in browser.find_element(By.ID, "explain").text
    browser.find_element(By.ID, "next-event").click()
    wait(browser, lambda d: d.current_url.endswith(f"/events/{int(seq) + 1}"))


def test_the_board_follows_an_action_recorded_by_the_cli(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    db = str(tmp_path / "live.db")
    # A name that needs quoting in every URL, "/" included: the page and its stream must follow it.
    tracker(db, "new", "north/sea 1914", "--scenario", "north-sea-1914")
    live = quote("north/sea 1914", safe="")
    tracker(db, "next", "--to", "combat_movement")
    token = spectator(db)
    with served(db, workdir=tmp_path) as server:
        sign_in(browser, server.url, token)
        browser.get(f"{server.url}/campaigns/{live}/board")
        wait(browser, lambda d: d.find_element(By.ID, "live").text == "live")
        before = map_on_page(browser)
        assert parsed_units(before["Skagerrak"]["Germany"]) == Counter(TR=1)
        assert parsed_units(before["Heligoland Bight"]["Germany"])["SS"] == 3
        marker = browser.execute_script("window.notReloaded = true; return window.notReloaded;")
        assert marker is True

        tracker(db, "move", "DE-SS3", "--to", "Skagerrak")

        # No refresh from the test: the page hears the stream and redraws itself.
        wait(browser, lambda d: parsed_units(map_on_page(d).get("Skagerrak", {}).get("Germany", ""))["SS"] == 1)
        after = map_on_page(browser)
        assert parsed_units(after["Heligoland Bight"]["Germany"])["SS"] == 2
        assert browser.execute_script("return window.notReloaded === undefined;"), "the page reloaded itself"

        # A page pinned to an earlier point says something new happened instead of moving.
        browser.get(f"{server.url}/campaigns/{live}/board?turn=1&phase=research")
        wait(browser, lambda d: d.find_element(By.ID, "live").text == "live")
        news = browser.find_element(By.ID, "news")
        assert not news.is_displayed()
        tracker(db, "move", "DE-SS4", "--to", "Skagerrak")
        wait(browser, lambda d: d.find_element(By.ID, "news").is_displayed())
        assert "turn=1" in browser.current_url


def test_a_campaign_named_dot_dot_is_reached_from_the_list_and_followed_live(browser: Any, tmp_path: Path) -> None:
    """A browser folds "/campaigns/../board" into "/board", and "%2E%2E" too: the list's link and
    the page's stream must still reach the campaign named ".."."""
    from selenium.webdriver.common.by import By

    db = str(tmp_path / "dots.db")
    tracker(db, "new", "..", "--scenario", "north-sea-1914")
    tracker(db, "campaign", "public", "on")
    with served(db, workdir=tmp_path) as server:
        browser.get(f"{server.url}/")
        wait(browser, lambda d: d.find_elements(By.LINK_TEXT, ".."))
        browser.find_element(By.LINK_TEXT, "..").click()
        wait(browser, lambda d: d.current_url == f"{server.url}/campaigns/..%20/board")
        assert not browser.find_elements(By.ID, "error")
        wait(browser, lambda d: d.find_element(By.ID, "live").text == "live")
        browser.find_element(By.LINK_TEXT, "Timeline").click()
        wait(browser, lambda d: d.current_url == f"{server.url}/campaigns/..%20/log")
        assert browser.find_elements(By.CSS_SELECTOR, "tr[data-seq]")


def test_a_link_with_a_token_leaves_it_in_an_httponly_cookie_only(browser: Any, demo: tuple[str, Server]) -> None:
    from selenium.webdriver.common.by import By

    _, server = demo
    browser.get(f"{server.url}/campaigns/demo/board")
    assert "no such campaign" in browser.find_element(By.ID, "error").text
    browser.get(f"{server.url}/campaigns/demo/board?turn=2&token={server.token}")
    wait(browser, lambda d: d.current_url == f"{server.url}/campaigns/demo/board?turn=2")
    assert browser.find_element(By.ID, "position").text.startswith("Board at the end of turn 2")
    # The page's own script cannot read the token, and the stream it follows is let in by it.
    assert server.token not in browser.execute_script("return document.cookie;")
    wait(browser, lambda d: d.find_element(By.ID, "live").text == "live")
    cookie = browser.get_cookie("tracker_token")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["value"] == server.token
    assert server.token not in server.log()


@contextmanager
def board_page(browser: Any, tmp_path: Path, name: str, scenario: str) -> Iterator[Any]:
    """A new campaign of `scenario` served and its board page open at 1280x900 for a
    spectator: the map's <svg> element."""
    from selenium.webdriver.common.by import By

    db = str(tmp_path / f"{name}.db")
    tracker(db, "new", name, "--scenario", scenario)
    token = spectator(db)
    with served(db, workdir=tmp_path) as server:
        browser.set_window_size(1280, 900)
        sign_in(browser, server.url, token)
        browser.get(f"{server.url}/campaigns/{name}/board")
        yield wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#map svg.board-map"))


def view_box(browser: Any, svg: Any) -> list[float]:
    """The part of the map the page shows, as its viewBox: x, y, width, height in map units."""
    box: str = browser.execute_script("return arguments[0].getAttribute('viewBox');", svg)
    return [float(v) for v in box.split()]


def test_a_map_opens_with_no_name_cut_at_an_edge_and_its_tools_off_the_map(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    with board_page(browser, tmp_path, "sea", "north-sea-1914") as svg:
        box = view_box(browser, svg)
        whole = [float(svg.get_dom_attribute(k)) for k in ("width", "height")]
        # Wider than the map, the view shows all of it across, centred; not as tall, it stays
        # within it: no name cut at an edge that could show (a west zone's, say).
        assert box[0] <= 0.5 and box[0] + box[2] >= whole[0] - 0.5
        assert box[1] >= -0.5 and box[1] + box[3] <= whole[1] + 0.5
        tools = browser.find_element(By.ID, "map-tools").rect
        drawn = svg.rect
        assert tools["y"] + tools["height"] <= drawn["y"] + 1, "the zoom buttons stand over the map"


def test_a_world_map_opens_legible_and_pans_and_zooms_by_its_viewbox(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By

    with board_page(browser, tmp_path, "war", "great-war-1914") as svg:
        assert len(svg.find_elements(By.CSS_SELECTOR, "g[data-zone]")) == 148

        def name_px() -> float:
            """The height on screen of the 11.5-unit zone names, as the view scales them."""
            return float(browser.execute_script("return 11.5 * arguments[0].getScreenCTM().a;", svg))

        # The whole map is the SVG's own size; the page opens on a part of it, names legible,
        # centred on the fleet of the nation whose turn it is (Germany's, in the Heligoland Bight).
        whole = [float(svg.get_dom_attribute(k)) for k in ("width", "height")]
        opened = view_box(browser, svg)
        assert opened[2] < whole[0] and name_px() >= 9
        bight = svg.find_element(By.CSS_SELECTOR, 'g[data-zone="Heligoland Bight"] rect')
        x, y, w, h = (float(bight.get_dom_attribute(k)) for k in ("x", "y", "width", "height"))
        assert opened[0] + opened[2] / 2 == pytest.approx(x + w / 2, abs=1)
        assert opened[1] + opened[3] / 2 == pytest.approx(y + h / 2, abs=1)

        browser.find_element(By.ID, "zoom-in").click()
        closer = view_box(browser, svg)
        assert closer[2] == pytest.approx(opened[2] / 1.5, rel=0.01) and name_px() > 13

        # A drag that starts on a zone (a link to its events) moves the map and stays on the page.
        zone = browser.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return [...arguments[0].querySelectorAll('a rect')].find(e => {"
            "  const b = e.getBoundingClientRect();"
            "  return b.left > r.left + 50 && b.right < r.right - 250"
            "    && b.top > r.top + 50 && b.bottom < r.bottom - 100;"
            "});",
            svg,
        )
        assert zone is not None, "a whole zone in view"
        ActionChains(browser).drag_and_drop_by_offset(zone, 200, 80).perform()
        moved = view_box(browser, svg)
        assert moved[0] < closer[0] and moved[1] < closer[1]
        assert browser.current_url.endswith("/campaigns/war/board"), "a drag is not a click on a zone"

        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(svg), 0, 300).perform()
        wait(browser, lambda d: view_box(browser, svg)[2] > moved[2])

        browser.find_element(By.ID, "zoom-fit").click()
        fitted = view_box(browser, svg)
        assert fitted[2] >= whole[0] - 1 and fitted[3] >= whole[1] - 1

        # A reload (as when the campaign moves) keeps the view.
        browser.find_element(By.ID, "zoom-in").click()
        kept = view_box(browser, svg)
        browser.refresh()
        svg = wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#map svg.board-map"))
        assert view_box(browser, svg) == pytest.approx(kept, abs=0.2)


def test_every_zone_name_of_the_world_map_stays_inside_its_box(browser: Any, tmp_path: Path) -> None:
    """Measured by the browser in its own font: "German South West Africa DE" ran 16 units
    past its box's edge at the names' full size."""
    with board_page(browser, tmp_path, "war", "great-war-1914") as svg:
        outside = browser.execute_script(
            "return [...arguments[0].querySelectorAll('g[data-zone]')].flatMap(g => {"
            "  const r = g.querySelector('rect'), right = +r.getAttribute('x') + +r.getAttribute('width');"
            "  return [...g.querySelectorAll('text')]"
            "    .filter(t => { const b = t.getBBox(); return b.x + b.width > right - 2; })"
            "    .map(t => t.textContent);"
            "});",
            svg,
        )
        assert outside == []


def test_a_zone_page_with_a_long_odds_line_does_not_scroll_sideways(browser: Any, demo: tuple[str, Server]) -> None:
    """The odds panel's long lines (a `tracker odds` command) scroll in their own block."""
    from selenium.webdriver.common.by import By

    _, server = demo
    sign_in(browser, server.url, server.token)  # type: ignore[attr-defined]
    browser.set_window_size(800, 900)
    try:
        browser.get(f"{server.url}/campaigns/demo/zones/Heligoland%20Bight")
        wait(browser, lambda d: d.find_element(By.ID, "odds"))
        odds = browser.execute_script(
            "return Math.max(...[...document.querySelectorAll('pre.odds')].map(p => p.scrollWidth));"
        )
        page, window = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];"
        )
        assert odds > window, "the test needs an odds line wider than the window"
        assert page <= window
    finally:
        browser.set_window_size(1280, 1000)


def test_a_zone_reached_with_the_tab_key_is_brought_into_the_maps_view(browser: Any, tmp_path: Path) -> None:
    """The world map opens on a part of itself; Tab goes through every zone's link, and each
    one, once it has the focus, is inside the view (the viewBox), not focused out of sight."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    with board_page(browser, tmp_path, "war", "great-war-1914") as svg:
        browser.find_element(By.ID, "zoom-in").click()
        browser.find_element(By.ID, "zoom-in").click()
        zones = len(svg.find_elements(By.CSS_SELECTOR, "a g[data-zone]"))
        browser.execute_script("document.getElementById('zoom-fit').focus();")
        out_of_view = []
        for _ in range(zones):
            ActionChains(browser).send_keys(Keys.TAB).perform()
            zone, inside = browser.execute_script(
                "const a = document.activeElement, r = a.querySelector && a.querySelector('rect');"
                "if (!r) { return [a.tagName, false]; }"
                "const [x, y, w, h] = ['x', 'y', 'width', 'height'].map(k => +r.getAttribute(k));"
                "const [vx, vy, vw, vh] = arguments[0].getAttribute('viewBox').split(' ').map(Number);"
                "return [a.querySelector('g').dataset.zone,"
                "        x >= vx - 0.5 && y >= vy - 0.5 && x + w <= vx + vw + 0.5 && y + h <= vy + vh + 0.5];",
                svg,
            )
            if not inside:
                out_of_view.append(zone)
        assert out_of_view == []
