"""The viewer on a phone, in a real browser (chromium, headless, as `tests.test_viewer_browser`
drives it): the pending panel at widths around a phone's 390 px never breaks a unit's ID at its
hyphen ("DE-" at the end of one line, "SS1" on the next). Without chromium, chromedriver or
selenium the test is skipped with the reason (the `browser` fixture)."""

from __future__ import annotations

from typing import Any

from tests.test_server import Reader
from tests.test_viewer_browser import browser as browser  # noqa: F401  (the fixture)
from tests.test_viewer_browser import sign_in, wait
from tests.test_viewer_table_words import table as table  # noqa: F401  (a battle waiting for a volley, served)

# Per unit ID in the pending panel's text: how many line boxes the browser draws it on.
LINES_PER_ID = """
const out = [];
const walker = document.createTreeWalker(document.getElementById('waiting'), NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  for (const m of node.textContent.matchAll(/[A-Z]{2}-[A-Z]{2}\\d+/g)) {
    const range = document.createRange();
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    out.push([m[0], tops.size]);
  }
}
return out;
"""


def test_unit_ids_in_the_pending_panel_stay_whole_on_a_phone(
    browser: Any,  # noqa: F811
    table: tuple[str, Reader],  # noqa: F811
) -> None:
    _, reader = table
    sign_in(browser, reader.url, reader.token)
    browser.get(f"{reader.url}/campaigns/autumn/board")
    wait(browser, lambda d: d.find_element("id", "waiting"))
    for width in range(340, 440, 8):
        browser.set_window_size(width, 844)
        drawn = browser.execute_script(LINES_PER_ID)
        assert drawn, "the panel lists the battle's units"
        split = [unit for unit, lines in drawn if lines > 1]
        assert not split, f"split over two lines at {width} px: {split}"
