"""The viewer in a real browser: Debian's chromium, headless, driven by selenium through
Debian's chromedriver, against a real `tracker serve`. Board content, navigation (turn and
phase, timeline filters, battles, explain) and the live update when the CLI records an
action while the page is open.

Without chromium, chromedriver or selenium the tests are skipped with the reason, except in
CI (`CI=true`), where that is an error. No browser is ever downloaded: selenium is given the
installed driver, so its driver manager is never asked.

Reads need a token (issue 24): each test opens the link with a spectator's token first, as a
player opens the one their referee sends; the browser keeps it in an HttpOnly cookie.

The module's tests share one chromium (`chromium`), each in a fresh window of it with no cookie
(`tab`); `browser`, a chromium of a test's own, is for the other modules' tests that need one."""

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
from tests.support import TRACKER, Server, cli_on, served
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
WINDOW = (1280, 1000)  # the window's size as chromium starts (--window-size)
WAIT = 60  # seconds a page may take to show what a test waits for, on a loaded machine
POLL = 0.1  # seconds between two looks at what a test waits for (one round trip to the browser each)


def _missing() -> str | None:
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (apt-get install {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install '.[test]')"
    return None


def _chromium(profile: Path) -> Any:
    """Debian's headless chromium under selenium, with its profile in `profile`; skipped with
    the reason where it is missing (an error in CI)."""
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the browser tests")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=DriverService(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    return driver


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A chromium of the test's own, with a fresh profile."""
    # Selenium's driver manager stays offline even if something asked it.
    monkeypatch.setenv("SE_OFFLINE", "true")
    driver = _chromium(tmp_path / "profile")
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One chromium for the module's tests (each gets a fresh window of it: `tab`)."""
    with pytest.MonkeyPatch.context() as patch:
        # Selenium's driver manager stays offline even if something asked it.
        patch.setenv("SE_OFFLINE", "true")
        driver = _chromium(tmp_path_factory.mktemp("chromium") / "profile")
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def tab(chromium: Any) -> Any:
    """The module's chromium as a test of its own would find it: one new window at the size it
    starts with (nothing of the windows before: their pages, session storage, CDP overrides),
    no cookie (a token kept by an earlier test), nothing cached, no console message left."""
    driver = chromium
    before = driver.window_handles
    driver.switch_to.new_window("window")
    fresh = driver.current_window_handle
    for handle in before:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(fresh)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.set_window_size(*WINDOW)
    driver.get_log("browser")
    assert driver.get_cookies() == [] and driver.window_handles == [fresh]
    return driver


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


def cli(db: str, *args: str) -> str:
    """The output of `tracker --db DB ARGS...` run in this process (no interpreter to start):
    for a campaign set up before its server starts. `tracker` runs a process of its own, as a
    player's shell does."""
    return cli_on(db)(*args)


def spectator(db: str) -> str:
    """A spectator's token for the database's only campaign, added in this process."""
    return cli(db, "players", "add", "watcher", "--spectator").strip().splitlines()[-1]


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
    return WebDriverWait(driver, WAIT, poll_frequency=POLL, ignored_exceptions=ignored).until(condition)


def test_the_board_shows_each_nations_units_in_their_zones(tab: Any, demo: tuple[str, Server]) -> None:
    import json

    db, server = demo
    sign_in(tab, server.url, server.token)
    tab.get(f"{server.url}/campaigns/demo/board?turn=2")
    board = json.loads(cli(db, "state", "--turn", "2", "--json"))
    shown = map_on_page(tab)
    want = expected_units(board, load_ruleset("twtea-3e")[0])
    assert {z: set(n) for z, n in shown.items()} == {z: set(n) for z, n in want.items()}
    for zone, nations in want.items():
        for nation, counts in nations.items():
            assert parsed_units(shown[zone][nation]) == counts, (zone, nation)
    ntr = tab.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('svg.board-map g[data-zone]')]"
        ".map(g => [g.dataset.zone, (g.querySelector('text.ntr tspan:last-child') || {}).textContent || '']));"
    )
    assert ntr["Western Approaches"] == "GB " + str(board["ntr"]["Britain"]["Western Approaches"])
    assert tab.find_element("id", "position").text.startswith("Board at the end of turn 2")


def test_navigation_turn_and_phase_timeline_battle_and_explain(tab: Any, demo: tuple[str, Server]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _, server = demo
    sign_in(tab, server.url, server.token)
    tab.get(f"{server.url}/campaigns/demo/board")
    Select(tab.find_element(By.ID, "turn-select")).select_by_value("1")
    Select(tab.find_element(By.ID, "phase-select")).select_by_value("combat_movement")
    tab.find_element(By.ID, "show").click()
    wait(tab, lambda d: "turn=1" in d.current_url and "phase=combat_movement" in d.current_url)
    assert "end of combat movement of turn 1" in tab.find_element(By.ID, "position").text
    tab.find_element(By.ID, "next-turn").click()
    wait(tab, lambda d: d.current_url.endswith("turn=2"))

    tab.find_element(By.LINK_TEXT, "Timeline").click()
    wait(tab, lambda d: d.find_elements(By.ID, "filters"))
    Select(tab.find_element(By.ID, "filter-nation")).select_by_visible_text("Germany")
    Select(tab.find_element(By.ID, "filter-kind")).select_by_visible_text("UnitsMoved")
    tab.find_element(By.ID, "apply").click()
    wait(tab, lambda d: "kind=UnitsMoved" in d.current_url)
    rows = tab.find_elements(By.CSS_SELECTOR, "#events tbody tr")
    assert rows and all(r.find_elements(By.TAG_NAME, "td")[4].text == "UnitsMoved" for r in rows)
    assert all(r.find_elements(By.TAG_NAME, "td")[2].text == "Germany" for r in rows)

    tab.find_element(By.LINK_TEXT, "Battles").click()
    wait(tab, lambda d: d.find_elements(By.ID, "battles"))
    tab.find_element(By.CSS_SELECTOR, "#battles tbody tr a").click()
    heading = wait(tab, lambda d: d.find_elements(By.TAG_NAME, "h1") and d.find_element(By.TAG_NAME, "h1"))
    assert heading.text.startswith(("Interception", "Convoy battle", "ASW combat", "Naval battle"))
    first_roll = tab.find_element(By.CSS_SELECTOR, "#rolls tbody tr td:last-child a")
    seq = first_roll.text
    first_roll.click()
    wait(tab, lambda d: d.current_url.endswith(f"/events/{seq}"))
    assert tab.find_element(By.TAG_NAME, "h1").text == f"Event {seq}: DiceRolled"
    assert "Dice" in tab.find_element(By.ID, "explain").text
    tab.find_element(By.ID, "next-event").click()
    wait(tab, lambda d: d.current_url.endswith(f"/events/{int(seq) + 1}"))


def test_the_board_follows_an_action_recorded_by_the_cli(tab: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    db = str(tmp_path / "live.db")
    # A name that needs quoting in every URL, "/" included: the page and its stream must follow it.
    cli(db, "new", "north/sea 1914", "--scenario", "north-sea-1914")
    live = quote("north/sea 1914", safe="")
    cli(db, "next", "--to", "combat_movement")
    token = spectator(db)
    with served(db, workdir=tmp_path) as server:
        sign_in(tab, server.url, token)
        tab.get(f"{server.url}/campaigns/{live}/board")
        wait(tab, lambda d: d.find_element(By.ID, "live").text == "live")
        before = map_on_page(tab)
        assert parsed_units(before["Skagerrak"]["Germany"]) == Counter(TR=1)
        assert parsed_units(before["Heligoland Bight"]["Germany"])["SS"] == 3
        marker = tab.execute_script("window.notReloaded = true; return window.notReloaded;")
        assert marker is True

        tracker(db, "move", "DE-SS3", "--to", "Skagerrak")

        # No refresh from the test: the page hears the stream and redraws itself.
        wait(tab, lambda d: parsed_units(map_on_page(d).get("Skagerrak", {}).get("Germany", ""))["SS"] == 1)
        after = map_on_page(tab)
        assert parsed_units(after["Heligoland Bight"]["Germany"])["SS"] == 2
        assert tab.execute_script("return window.notReloaded === undefined;"), "the page reloaded itself"

        # A page pinned to an earlier point says something new happened instead of moving.
        tab.get(f"{server.url}/campaigns/{live}/board?turn=1&phase=research")
        wait(tab, lambda d: d.find_element(By.ID, "live").text == "live")
        news = tab.find_element(By.ID, "news")
        assert not news.is_displayed()
        tracker(db, "move", "DE-SS4", "--to", "Skagerrak")
        wait(tab, lambda d: d.find_element(By.ID, "news").is_displayed())
        assert "turn=1" in tab.current_url


def test_a_campaign_named_dot_dot_is_reached_from_the_list_and_followed_live(tab: Any, tmp_path: Path) -> None:
    """A browser folds "/campaigns/../board" into "/board", and "%2E%2E" too: the list's link and
    the page's stream must still reach the campaign named ".."."""
    from selenium.webdriver.common.by import By

    db = str(tmp_path / "dots.db")
    cli(db, "new", "..", "--scenario", "north-sea-1914")
    cli(db, "campaign", "public", "on")
    with served(db, workdir=tmp_path) as server:
        tab.get(f"{server.url}/")
        wait(tab, lambda d: d.find_elements(By.LINK_TEXT, ".."))
        tab.find_element(By.LINK_TEXT, "..").click()
        wait(tab, lambda d: d.current_url == f"{server.url}/campaigns/..%20/board")
        assert not tab.find_elements(By.ID, "error")
        wait(tab, lambda d: d.find_element(By.ID, "live").text == "live")
        tab.find_element(By.LINK_TEXT, "Timeline").click()
        wait(tab, lambda d: d.current_url == f"{server.url}/campaigns/..%20/log")
        assert tab.find_elements(By.CSS_SELECTOR, "tr[data-seq]")


def test_a_link_with_a_token_leaves_it_in_an_httponly_cookie_only(tab: Any, demo: tuple[str, Server]) -> None:
    from selenium.webdriver.common.by import By

    _, server = demo
    tab.get(f"{server.url}/campaigns/demo/board")
    assert "no such campaign" in tab.find_element(By.ID, "error").text
    tab.get(f"{server.url}/campaigns/demo/board?turn=2&token={server.token}")
    wait(tab, lambda d: d.current_url == f"{server.url}/campaigns/demo/board?turn=2")
    assert tab.find_element(By.ID, "position").text.startswith("Board at the end of turn 2")
    # The page's own script cannot read the token, and the stream it follows is let in by it.
    assert server.token not in tab.execute_script("return document.cookie;")
    wait(tab, lambda d: d.find_element(By.ID, "live").text == "live")
    cookie = tab.get_cookie("tracker_token")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["value"] == server.token
    assert server.token not in server.log()


def open_board(browser: Any, url: str, token: str, name: str) -> Any:
    """Campaign `name`'s board page open at 1280x900 for a spectator: the map's <svg> element."""
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    sign_in(browser, url, token)
    browser.get(f"{url}/campaigns/{name}/board")
    return wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#map svg.board-map"))


@contextmanager
def board_page(browser: Any, tmp_path: Path, name: str, scenario: str) -> Iterator[Any]:
    """A new campaign of `scenario` served and its board page open at 1280x900 for a
    spectator: the map's <svg> element."""
    db = str(tmp_path / f"{name}.db")
    cli(db, "new", name, "--scenario", scenario)
    token = spectator(db)
    with served(db, workdir=tmp_path) as server:
        yield open_board(browser, server.url, token, name)


@pytest.fixture(scope="module")
def war(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A new great-war-1914 campaign named "war", served for the module's tests that only look
    at its board (none records anything): the server's URL and a spectator's token."""
    work = tmp_path_factory.mktemp("war")
    db = str(work / "war.db")
    cli(db, "new", "war", "--scenario", "great-war-1914")
    token = spectator(db)
    with served(db, workdir=work) as server:
        yield server.url, token


def view_box(browser: Any, svg: Any) -> list[float]:
    """The part of the map the page shows, as its viewBox: x, y, width, height in map units."""
    box: str = browser.execute_script("return arguments[0].getAttribute('viewBox');", svg)
    return [float(v) for v in box.split()]


def test_a_map_opens_with_no_name_cut_at_an_edge_and_its_tools_off_the_map(tab: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    with board_page(tab, tmp_path, "sea", "north-sea-1914") as svg:
        box = view_box(tab, svg)
        whole = [float(svg.get_dom_attribute(k)) for k in ("width", "height")]
        # Wider than the map, the view shows all of it across, centred; not as tall, it stays
        # within it: no name cut at an edge that could show (a west zone's, say).
        assert box[0] <= 0.5 and box[0] + box[2] >= whole[0] - 0.5
        assert box[1] >= -0.5 and box[1] + box[3] <= whole[1] + 0.5
        tools = tab.find_element(By.ID, "map-tools").rect
        drawn = svg.rect
        assert tools["y"] + tools["height"] <= drawn["y"] + 1, "the zoom buttons stand over the map"


def test_a_world_map_opens_legible_and_pans_and_zooms_by_its_viewbox(tab: Any, war: tuple[str, str]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By

    svg = open_board(tab, *war, "war")
    assert len(svg.find_elements(By.CSS_SELECTOR, "g[data-zone]")) == 148

    def name_px() -> float:
        """The height on screen of the 11.5-unit zone names, as the view scales them."""
        return float(tab.execute_script("return 11.5 * arguments[0].getScreenCTM().a;", svg))

    # The whole map is the SVG's own size; the page opens on a part of it, names legible,
    # centred on the fleet of the nation whose turn it is (Germany's, in the Heligoland Bight).
    whole = [float(svg.get_dom_attribute(k)) for k in ("width", "height")]
    opened = view_box(tab, svg)
    assert opened[2] < whole[0] and name_px() >= 9
    bight = svg.find_element(By.CSS_SELECTOR, 'g[data-zone="Heligoland Bight"] rect')
    x, y, w, h = (float(bight.get_dom_attribute(k)) for k in ("x", "y", "width", "height"))
    assert opened[0] + opened[2] / 2 == pytest.approx(x + w / 2, abs=1)
    assert opened[1] + opened[3] / 2 == pytest.approx(y + h / 2, abs=1)

    tab.find_element(By.ID, "zoom-in").click()
    closer = view_box(tab, svg)
    assert closer[2] == pytest.approx(opened[2] / 1.5, rel=0.01) and name_px() > 13

    # A drag that starts on a zone (a link to its events) moves the map and stays on the page.
    zone = tab.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return [...arguments[0].querySelectorAll('a rect')].find(e => {"
        "  const b = e.getBoundingClientRect();"
        "  return b.left > r.left + 50 && b.right < r.right - 250"
        "    && b.top > r.top + 50 && b.bottom < r.bottom - 100;"
        "});",
        svg,
    )
    assert zone is not None, "a whole zone in view"
    ActionChains(tab).drag_and_drop_by_offset(zone, 200, 80).perform()
    moved = view_box(tab, svg)
    assert moved[0] < closer[0] and moved[1] < closer[1]
    assert tab.current_url.endswith("/campaigns/war/board"), "a drag is not a click on a zone"

    ActionChains(tab).scroll_from_origin(ScrollOrigin.from_element(svg), 0, 300).perform()
    wait(tab, lambda d: view_box(tab, svg)[2] > moved[2])

    tab.find_element(By.ID, "zoom-fit").click()
    fitted = view_box(tab, svg)
    assert fitted[2] >= whole[0] - 1 and fitted[3] >= whole[1] - 1

    # A reload (as when the campaign moves) keeps the view.
    tab.find_element(By.ID, "zoom-in").click()
    kept = view_box(tab, svg)
    tab.refresh()
    svg = wait(tab, lambda d: d.find_element(By.CSS_SELECTOR, "#map svg.board-map"))
    assert view_box(tab, svg) == pytest.approx(kept, abs=0.2)


def test_every_zone_name_of_the_world_map_stays_inside_its_box(tab: Any, war: tuple[str, str]) -> None:
    """Measured by the browser in its own font: "German South West Africa DE" ran 16 units
    past its box's edge at the names' full size."""
    svg = open_board(tab, *war, "war")
    outside = tab.execute_script(
        "return [...arguments[0].querySelectorAll('g[data-zone]')].flatMap(g => {"
        "  const r = g.querySelector('rect'), right = +r.getAttribute('x') + +r.getAttribute('width');"
        "  return [...g.querySelectorAll('text')]"
        "    .filter(t => { const b = t.getBBox(); return b.x + b.width > right - 2; })"
        "    .map(t => t.textContent);"
        "});",
        svg,
    )
    assert outside == []


def test_a_zone_page_with_a_long_odds_line_does_not_scroll_sideways(tab: Any, demo: tuple[str, Server]) -> None:
    """The odds panel's long lines (a `tracker odds` command) scroll in their own block."""
    from selenium.webdriver.common.by import By

    _, server = demo
    sign_in(tab, server.url, server.token)  # type: ignore[attr-defined]
    tab.set_window_size(800, 900)
    try:
        tab.get(f"{server.url}/campaigns/demo/zones/Heligoland%20Bight")
        wait(tab, lambda d: d.find_element(By.ID, "odds"))
        odds = tab.execute_script(
            "return Math.max(...[...document.querySelectorAll('pre.odds')].map(p => p.scrollWidth));"
        )
        page, window = tab.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];"
        )
        assert odds > window, "the test needs an odds line wider than the window"
        assert page <= window
    finally:
        tab.set_window_size(1280, 1000)


def test_a_zone_reached_with_the_tab_key_is_brought_into_the_maps_view(tab: Any, war: tuple[str, str]) -> None:
    """The world map opens on a part of itself; Tab goes through every zone's link, and each
    one, once it has the focus, is inside the view (the viewBox), not focused out of sight."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    svg = open_board(tab, *war, "war")
    tab.find_element(By.ID, "zoom-in").click()
    tab.find_element(By.ID, "zoom-in").click()
    zones = len(svg.find_elements(By.CSS_SELECTOR, "a g[data-zone]"))
    tab.execute_script("document.getElementById('zoom-fit').focus();")
    # Where the focus is as each Tab comes up: the key went down and moved the focus (the page
    # brings a zone into view as it gets it) before the page hears the key come up. The Tabs go
    # in one chain of keys, each heard by the page as the test's own round trip would see it.
    tab.execute_script(
        "window.tabbed = [];"
        "window.addEventListener('keyup', e => {"
        "  if (e.key !== 'Tab') { return; }"
        "  const a = document.activeElement, r = a.querySelector && a.querySelector('rect');"
        "  if (!r) { window.tabbed.push([a.tagName, false]); return; }"
        "  const [x, y, w, h] = ['x', 'y', 'width', 'height'].map(k => +r.getAttribute(k));"
        "  const [vx, vy, vw, vh] = arguments[0].getAttribute('viewBox').split(' ').map(Number);"
        "  window.tabbed.push([a.querySelector('g').dataset.zone,"
        "    x >= vx - 0.5 && y >= vy - 0.5 && x + w <= vx + vw + 0.5 && y + h <= vy + vh + 0.5]);"
        "}, true);",
        svg,
    )
    ActionChains(tab).send_keys(*[Keys.TAB] * zones).perform()
    tabbed = tab.execute_script("return window.tabbed;")
    assert len(tabbed) == zones, "each Tab heard"
    out_of_view = [zone for zone, inside in tabbed if not inside]
    assert out_of_view == []
