"""The viewer's campaign list on a phone, in a real browser (chromium, headless, as
`tests.test_viewer_browser` drives it): at a phone's width every row is a card read without
scrolling sideways, each of its cells named by its column's label; on a wide screen it is the
table it always was. Without chromium, chromedriver or selenium the test is skipped with the
reason (the `browser` fixture)."""

from __future__ import annotations

from typing import Any

from tests.test_server import Reader
from tests.test_viewer_browser import browser as browser  # noqa: F401  (the fixture)
from tests.test_viewer_browser import sign_in, wait
from tests.test_viewer_table_words import table as table  # noqa: F401  (a campaign, served)

# Per cell of the list: its text, the label drawn before it, and where its box ends; with the
# page's width and how wide its content is.
LAYOUT = """
const page = document.documentElement;
const cells = [...document.querySelectorAll('#campaigns tbody td')].map(td => {
  const box = td.getBoundingClientRect();
  const label = getComputedStyle(td, '::before').content;
  return [td.textContent.trim(), td.dataset.label || null, label, Math.round(box.left), Math.round(box.right)];
});
const list = document.getElementById('campaigns').parentElement;
return {width: page.clientWidth, scrolled: page.scrollWidth, list: [list.clientWidth, list.scrollWidth],
        header: document.querySelector('#campaigns thead').getBoundingClientRect().height, cells: cells};
"""


def test_the_campaign_list_reads_without_scrolling_sideways_on_a_phone(
    browser: Any,  # noqa: F811
    table: tuple[str, Reader],  # noqa: F811
) -> None:
    _, reader = table
    sign_in(browser, reader.url, reader.token)
    wait(browser, lambda d: d.find_element("id", "campaigns"))
    for width in (320, 360, 390, 430):
        browser.set_window_size(width, 844)
        drawn = browser.execute_script(LAYOUT)
        assert drawn["scrolled"] <= drawn["width"], f"the page scrolls sideways at {width} px"
        # It was a table scrolled in its box: Phase and Events began off the screen.
        assert drawn["list"][1] <= drawn["list"][0], f"the list scrolls sideways at {width} px"
        off = [text for text, _, _, left, right in drawn["cells"] if left < 0 or right > drawn["width"]]
        assert not off, f"off the screen at {width} px: {off}"
        # Each cell but the name and the title is named by its column's label.
        labels = [(column, drawn_label) for _, column, drawn_label, _, _ in drawn["cells"] if column]
        assert {column for column, _ in labels} == {"Round", "Nation", "Phase", "Events"}
        assert all(drawn_label == f'"{column} "' for column, drawn_label in labels), labels
        assert ["Phase", "naval combat"] in [[column, text] for text, column, _, _, _ in drawn["cells"]]
    # A wide screen keeps the table, its header row shown.
    browser.set_window_size(1200, 900)
    drawn = browser.execute_script(LAYOUT)
    assert drawn["header"] > 10 and all(drawn_label == "none" for _, _, drawn_label, _, _ in drawn["cells"])
