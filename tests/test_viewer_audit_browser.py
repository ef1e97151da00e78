"""The board's turn picker in a real browser (chromium, headless, as `tests.test_viewer_browser`
drives it): a reader picks a turn by the nation and round it names (T1), and the board shown
is that nation's turn. Without chromium, chromedriver or selenium the test is skipped with the
reason (the `browser` fixture)."""

from __future__ import annotations

import json
from typing import Any

from tests.support import Server
from tests.test_viewer_browser import browser as browser  # noqa: F401  (the fixture)
from tests.test_viewer_browser import demo as demo  # noqa: F401  (the demo campaign served, module-scoped)
from tests.test_viewer_browser import sign_in, tracker, wait


def test_t1_a_turn_picked_by_its_nation_and_round_shows_that_nations_board(
    browser: Any,  # noqa: F811
    demo: tuple[str, Server],  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    db, server = demo
    then = json.loads(tracker(db, "state", "--turn", "3", "--json"))
    sign_in(browser, server.url, server.token)  # type: ignore[attr-defined]
    browser.get(f"{server.url}/campaigns/demo/board")
    picker = Select(wait(browser, lambda d: d.find_element(By.ID, "turn-select")))
    picker.select_by_visible_text(f"3 ({then['nation']}, round {then['round']})")
    browser.find_element(By.ID, "show").click()
    wait(browser, lambda d: d.current_url.endswith("/campaigns/demo/board?turn=3&phase="))
    position = browser.find_element(By.ID, "position").text
    assert f"round {then['round']} · turn 3 · {then['nation']}" in position
