"""The short cuts of the HTML turn report give what the long way gave: the figures tables written
in Python draw what the template's macro drew, numbers written by one %-format read as f-strings
write them, the four figure charts built together are those built one by one, the map's layout
found by its map, and only the zones holding something listed for the map."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import jinja2
import pytest
from markupsafe import Markup

from domain.ruleset import load_ruleset
from domain.scenario import read_scenario, scenario_from_dict
from tests.map_svg import drawn
from tracker.reports import board_map
from tracker.reports.context import ReportContext
from tracker.reports.html import CHARTS, figure_chart
from tracker.reports.report import build_report
from tracker.service.application import Tracker

# The figures table as the page's template drew it before it was written in Python.
MACRO = """{% macro simple_table(header, rows) %}
<table>
  <thead><tr>{% for h in header %}<th{% if not loop.first and h not in ("NTR by zone",) %} class="num"{% endif %}>{{ h }}</th>{% endfor %}</tr></thead>
  <tbody>
  {% for row in rows %}
    <tr>{% for cell in row %}{% if loop.first %}<th><span class="swatch" style="background: {{ palette.get(cell, '#999') }}"></span>{{ cell }}</th>{% elif header[loop.index0] == "NTR by zone" %}<td>{{ cell }}</td>{% else %}<td class="num">{{ cell }}</td>{% endif %}{% endfor %}</tr>
  {% endfor %}
  </tbody>
</table>
{% endmacro %}
{{ simple_table(header, rows) }}
"""  # noqa: E501 - the macro's lines as they were


@pytest.mark.parametrize(
    ("header", "rows"),
    [
        (
            ["Nation", "submarine", "destroyer", "Units", "Cost"],
            [["Germany", 4, 0, 4, 40], ["Britain", 5, 7, 12, 95]],
        ),
        (
            ["Nation", "Resources", "NTR at sea", "NTR by zone", "NTR lost"],
            [["Germany", 12, 3, "North Sea 2, Baltic 1", 0], ["<b>Ruritania</b> & 'co'", -3, 0, '<i>"x"</i>', 1]],
        ),
        (["Nation", "NTR by zone"], [[Markup("<em>Kept</em>"), "-"]]),
        (["Nation", "Units"], []),
    ],
)
def test_the_figures_table_is_drawn_as_the_templates_macro_drew_it(header: list[str], rows: list[list[Any]]) -> None:
    from tracker.reports.html import _simple_table

    palette = {"Germany": "#0072B2", "Britain": "#D55E00"}
    env = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    expected = env.from_string(MACRO).render(header=header, rows=rows, palette=palette)
    drawn_now = _simple_table(header, rows, palette)
    assert isinstance(drawn_now, Markup)
    assert drawn_now == expected


def test_numbers_written_by_one_format_read_as_fstrings_write_them() -> None:
    from tracker.reports.charts import _one_decimal

    # Halves either side of a rounding, negative zero, large and tiny numbers, and what is not
    # a number at all.
    values = [0.0, -0.0, 0.05, 0.15, 0.25, 0.35, 2.5, -2.45, 1e-9, 123456789.25, 255.95, -1e20, 7]
    values += [k / 20 for k in range(-200, 200)] + [math.inf, -math.inf, math.nan]
    assert _one_decimal(values) == [f"{v:.1f}" for v in values]
    assert _one_decimal([]) == []


@pytest.fixture(scope="module")
def html_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.support import perform_advance

    db = Path(tmp_path_factory.mktemp("html")) / "c.db"
    with Tracker(str(db)) as t:
        cid = t.create("c", "north-sea-1914", dice="auto").id
        for change in ("-5", "+3"):
            t.perform(cid, "adjust", {"reason": "trade", "resources": [f"Germany={change}"]})
            t.perform(cid, "adjust", {"reason": "a raid", "add": ["Britain:destroyer:Irish Sea"]})
            start = t.load(cid).round
            while t.load(cid).round == start:
                perform_advance(t, cid, confirm_losses=True)
        return build_report(t, cid, ReportContext(t, cid).current, "html")


def test_the_figure_charts_built_together_are_those_built_one_by_one(html_report: dict[str, Any]) -> None:
    from tracker.reports.html import figure_charts

    together = figure_charts(html_report)
    assert [c.key for c in together] == [key for key, _title, _label in CHARTS]
    assert together == [figure_chart(html_report, *chart) for chart in CHARTS]
    assert len(together[0].xs) >= 3


def test_a_maps_layout_is_found_by_its_map_not_worked_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    rs = load_ruleset("twtea-3e")[0]
    sc = scenario_from_dict(read_scenario("great-war-1914")[0], "great-war-1914", rs)
    calls = []
    laid_out = board_map._laid_out

    def counted(*args: Any) -> board_map.MapLayout:
        calls.append(args)
        return laid_out(*args)

    monkeypatch.setattr(board_map, "_laid_out", counted)
    first = board_map.map_layout(sc)
    assert board_map.map_layout(sc) is first
    # Its key (every zone's neighbours, sorted) was worked out once, on the first call only.
    assert len(calls) == 1
    # Another map of the same zones is laid out alike.
    again = scenario_from_dict(read_scenario("great-war-1914")[0], "great-war-1914", rs)
    assert board_map.map_layout(again) == first and len(calls) == 2


def test_only_the_zones_holding_something_are_listed_and_every_zone_is_drawn() -> None:
    rs = load_ruleset("twtea-3e")[0]
    sc = scenario_from_dict(read_scenario("north-sea-1914")[0], "north-sea-1914", rs)
    board = {
        "units": [
            {"id": "DE-SS2", "type": "submarine", "nation": "Germany", "at": "Central North Sea", "damage": 0},
            {"id": "DE-SS10", "type": "submarine", "nation": "Germany", "at": "Central North Sea", "damage": 1},
            {"id": "GB-DD1", "type": "destroyer", "nation": "Britain", "at": "Central North Sea", "damage": 0},
            {"id": "GB-DD3", "type": "destroyer", "nation": "Britain", "at": "Atlantis", "damage": 0},
        ],
        "ntr": {"Britain": {"Irish Sea": 2, "Skagerrak": 0}},
        "owners": dict(sc.game_map.land),
    }
    contents = board_map.zone_contents(board, sc, rs)
    assert set(contents) == {"Central North Sea", "Irish Sea"}
    assert contents["Central North Sea"]["units"] == {
        "Germany": [{"type": "submarine", "abbr": "SS", "count": 2, "damaged": 1}],
        "Britain": [{"type": "destroyer", "abbr": "DD", "count": 1, "damaged": 0}],
    }
    assert contents["Central North Sea"]["ids"] == {"Germany": ["DE-SS2", "DE-SS10"], "Britain": ["GB-DD1"]}
    assert contents["Irish Sea"]["ntr"] == {"Britain": 2}
    svg = board_map.board_svg(board, sc, rs)
    assert set(drawn(svg)) == set(sc.game_map.adjacency)
    # The IDs on hover in the players' order, nations in turn order.
    assert "<title>Central North Sea\nDE-SS2, DE-SS10\nGB-DD1</title>" in svg


def test_a_name_escaped_once_for_every_chart_is_never_escaped_twice() -> None:
    from tracker.reports.charts import Line, LineChart, render_chart

    def chart(label: str) -> str:
        return render_chart(LineChart("units", "t", "x", "y", [0.0, 1.0], [Line(label, "#0072B2", [1, 2])]))

    # The same text, plain and already escaped: the names' cache tells them apart.
    assert 'data-nation="A&amp;amp;B"' in chart("A&amp;B")
    assert 'data-nation="A&amp;B"' in chart(Markup("A&amp;B"))
    assert 'data-nation="A&amp;amp;B"' in chart("A&amp;B")
