"""The HTML report's map of a board too wide for the page opens where the turn happened: on its
moves, battles and NTR, or else on the fleet of the nation whose turn it was, not on the
board's top-left corner (the North East Pacific on great-war-1914)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_viewer_browser import browser as browser  # noqa: F401  (the fixture)
from tests.test_viewer_browser import cli, wait
from tracker.reports.report import map_focus

POSITIONS = {"A": (100.0, 100.0), "B": (300.0, 100.0), "C": (300.0, 500.0), "Far": (4000.0, 2000.0)}


def _turn(**entries: Any) -> dict[str, Any]:
    return {"nation": "Germany", "moves": [], "battles": [], "ntr_placed": [], "ntr_lost": [], **entries}


def test_the_map_opens_amid_the_turns_moves_and_battles_not_those_undone() -> None:
    turn = _turn(
        moves=[
            {"path": ["A", "B"], "undone_by": None},
            {"path": ["A", "Far"], "undone_by": 40},
        ],
        battles=[{"zone": "B", "undone_by": None}],
    )
    assert map_focus(POSITIONS, [turn], {"units": []}) == [300.0, 100.0]


def test_without_moves_the_map_opens_where_most_of_the_nations_units_are() -> None:
    units = [
        {"nation": "Germany", "at": "C"},
        {"nation": "Germany", "at": "C"},
        {"nation": "Germany", "at": "Far"},
        {"nation": "Britain", "at": "A"},
    ]
    # A lone cruiser on the far side of the world does not pull the view into the empty sea.
    assert map_focus(POSITIONS, [_turn()], {"units": units}) == [300.0, 500.0]


def test_with_nothing_to_show_the_map_opens_as_it_is() -> None:
    assert map_focus(POSITIONS, [_turn()], {"units": [{"nation": "Britain", "at": "A"}]}) is None


def test_the_world_map_opens_on_the_nations_fleet_in_a_browser(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """great-war-1914, turn 3 (Austria-Hungary, no move): the map's frame is scrolled to the
    Adriatic, where its fleet lies, and the Northern Adriatic's box is in view."""
    from selenium.webdriver.common.by import By

    db = str(tmp_path / "w.db")
    cli(db, "demo", "--scenario", "great-war-1914")
    page = tmp_path / "t3.html"
    cli(db, "report", "--turn", "3", "--format", "html", "-o", str(page))
    browser.set_window_size(1280, 900)
    browser.get(page.as_uri())
    wait(browser, lambda d: d.execute_script("return document.readyState") == "complete")
    frame = browser.find_element(By.CSS_SELECTOR, ".map-scroll")
    assert browser.execute_script("return arguments[0].scrollLeft", frame) > 0
    box = browser.find_element(By.CSS_SELECTOR, '.map-scroll [data-zone="Northern Adriatic"]')
    inside = browser.execute_script(
        "const f = arguments[0].getBoundingClientRect(), b = arguments[1].getBoundingClientRect();"
        "return b.left >= f.left && b.right <= f.right && b.top >= f.top && b.bottom <= f.bottom;",
        frame,
        box,
    )
    assert inside
