"""The report's line charts, drawn as SVG by `tracker.reports.charts`: well-formed, a line per
nation through every point, whole-number x ticks, IDs unique on a page, names escaped."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tests.support import contrast
from tracker.reports.charts import Line, LineChart, integer_ticks, layout, nice_ticks, render_chart, tick_text
from tracker.reports.html import chart_svgs, figure_chart

SVG = "{http://www.w3.org/2000/svg}"


def chart(
    key: str = "units", lines: Mapping[str, Sequence[float]] | None = None, xs: Sequence[float] | None = None
) -> LineChart:
    """A chart of the given lines, or of two nations' (the second, an enemy, dashed)."""
    lines = lines if lines is not None else {"Germany": [3, 4, 2, 0, 1], "Britain": [5, 5, 6, 7, 9]}
    xs = xs if xs is not None else [float(k) for k in range(len(next(iter(lines.values()))))]
    return LineChart(
        key=key,
        title="Fleet strength (units)",
        xlabel="round",
        ylabel="units",
        xs=xs,
        lines=[
            Line(name, color, ys, dashed=i > 0)
            for i, ((name, ys), color) in enumerate(zip(lines.items(), ("#0072B2", "#D55E00"), strict=False))
        ],
    )


def polylines(svg: str) -> dict[str, list[tuple[float, float]]]:
    """Each line's points, by the nation it is drawn for."""
    return {
        p.get("data-nation", ""): [
            (float(x), float(y)) for x, y in (pt.split(",") for pt in p.get("points", "").split())
        ]
        for p in ET.fromstring(svg).iter(f"{SVG}polyline")
    }


def x_tick_labels(svg: str, key: str) -> list[str]:
    (axis,) = [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("id") == f"chart-{key}-x-axis"]
    return [t.text or "" for t in axis.iter(f"{SVG}text") if t.get("class") == "tick"]


def test_a_chart_is_one_svg_element_with_one_polyline_per_nation_through_every_point() -> None:
    svg = render_chart(chart())
    root = ET.fromstring(svg)  # well-formed XML, no prologue: it goes inline in a page
    assert root.tag == f"{SVG}svg" and svg.startswith("<svg")
    lines = polylines(svg)
    assert list(lines) == ["Germany", "Britain"]
    assert all(len(points) == 5 for points in lines.values())
    # x grows along each line, one point per x of the chart.
    for points in lines.values():
        assert [x for x, _ in points] == sorted({x for x, _ in points})
    legend = [t.text for g in root.iter(f"{SVG}g") if g.get("id") == "chart-units-legend" for t in g.iter(f"{SVG}text")]
    assert legend == ["nation", "Germany", "Britain"]
    assert root.findtext(f"{SVG}title") == "Fleet strength (units)"  # named for screen readers


def test_the_enemy_line_is_dashed_in_the_plot_and_in_the_legend() -> None:
    root = ET.fromstring(render_chart(chart()))
    dashed = {p.get("data-nation"): p.get("stroke-dasharray") is not None for p in root.iter(f"{SVG}polyline")}
    assert dashed == {"Germany": False, "Britain": True}
    legend_lines = [
        ln for g in root.iter(f"{SVG}g") if g.get("id") == "chart-units-legend" for ln in g.iter(f"{SVG}line")
    ]
    assert [ln.get("stroke-dasharray") is not None for ln in legend_lines] == [False, True]


def test_higher_values_are_drawn_higher_and_equal_values_level() -> None:
    values = {"Germany": [0, 3, 1, 7, 7, -2, 12]}
    (points,) = polylines(render_chart(chart(lines=values))).values()
    ys = values["Germany"]
    for i in range(len(ys)):
        for j in range(len(ys)):
            # SVG's y grows downwards.
            assert (ys[i] < ys[j]) == (points[i][1] > points[j][1])
            assert (ys[i] == ys[j]) == (points[i][1] == points[j][1])


def test_every_point_lies_inside_the_plot_frame() -> None:
    drawn = layout(chart(lines={"Germany": [-3.5, 0.25, 17.0, 4.0]}))
    plot = drawn["plot"]
    for x, y in (map(float, pt.split(",")) for pt in drawn["lines"][0]["points"].split()):
        assert plot["left"] <= x <= plot["right"] and plot["top"] - 0.05 <= y <= plot["bottom"] + 0.05


def test_x_ticks_are_whole_numbers_even_where_the_points_fall_between_them() -> None:
    # Rounds of a four-nation game: a point at the end of every second round and one mid-round.
    xs = [0.0, 2.0, 4.0, 6.0, 6.75]
    svg = render_chart(chart(lines={"Germany": [1, 2, 3, 4, 5]}, xs=xs))
    labels = x_tick_labels(svg, "units")
    assert labels == ["0", "1", "2", "3", "4", "5", "6"]


def test_a_long_campaign_gets_few_round_ticks_and_a_plain_line() -> None:
    """Hundreds of turns (a campaign of 20,000 events): at most 12 ticks on a round step, no
    markers, one polyline point per turn."""
    n = 900
    svg = render_chart(chart(key="luck", lines={"Germany": [k % 7 - 3.0 for k in range(n)]}, xs=list(range(n))))
    labels = [int(t) for t in x_tick_labels(svg, "luck")]
    assert 2 <= len(labels) <= 12
    steps = {b - a for a, b in zip(labels, labels[1:], strict=False)}
    assert len(steps) == 1 and re.fullmatch(r"(1|2|5)0*", str(steps.pop()))
    assert "<marker" not in svg and "<circle" not in svg
    (points,) = polylines(svg).values()
    assert len(points) == n


def test_few_points_are_marked() -> None:
    svg = render_chart(chart())
    root = ET.fromstring(svg)
    markers = {m.get("id") for m in root.iter(f"{SVG}marker")}
    for line in root.iter(f"{SVG}polyline"):
        assert line.get("marker-mid", "")[5:-1] in markers  # url(#...)


def test_element_ids_are_unique_across_the_charts_of_one_page() -> None:
    page = f"<div>{render_chart(chart('units'))}{render_chart(chart('fleet_cost'))}</div>"
    root = ET.fromstring(page)
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert len(ids) == len(set(ids)) and len(ids) > 10
    # Every reference points at an element of its own chart.
    for svg in root.iter(f"{SVG}svg"):
        own = {e.get("id") for e in svg.iter() if e.get("id")}
        refs = {m for e in svg.iter() for v in e.attrib.values() for m in re.findall(r"url\(#([^)]+)\)", v)}
        refs |= {v for e in svg.iter() for v in [e.get("aria-labelledby")] if v}
        assert refs and refs <= own


def test_nine_nations_draw_nine_lines_each_its_own_colour_and_each_seen_on_white() -> None:
    nations = ["Germany", "Britain", "Austria-Hungary", "France", "Ottoman Empire", "Russia", "Italy", "Japan", "US"]
    central = {"Germany", "Austria-Hungary", "Ottoman Empire"}
    start = {n: {"units": 1} for n in nations}
    report: dict[str, Any] = {
        "campaign": {"turn_order": nations, "sides": {n: "Central" if n in central else "Allies" for n in nations}},
        "start": {"nations": start},
        "series": [{"turn": 9, "nations": start}],
    }
    root = ET.fromstring(render_chart(figure_chart(report, "units", "Fleet strength (units)", "units")))
    strokes = {line.get("data-nation"): line.get("stroke") for line in root.iter(f"{SVG}polyline")}
    assert set(strokes) == set(nations) and len(set(strokes.values())) == len(nations), strokes

    # WCAG's contrast for graphics, 3:1 on the chart's white: Italy's yellow was 1.3:1.
    faint = {n: c for n, c in strokes.items() if c and contrast(c, "#ffffff") < 3}
    assert not faint, faint


def test_names_and_titles_are_escaped() -> None:
    name = '<script>"Dummy" & Co</script>'
    plain = LineChart(
        key="units",
        title="A & <b>",
        xlabel="x < 3",
        ylabel="y > 2",
        xs=[0, 1],
        lines=[Line(name, "#000000", [1, 2])],
    )
    svg = render_chart(plain)
    assert "<script>" not in svg and "<b>" not in svg
    assert "&lt;script&gt;" in svg
    root = ET.fromstring(svg)
    texts = {t.text for t in root.iter(f"{SVG}text")}
    assert {name, "A & <b>", "x < 3", "y > 2"} <= texts
    assert [p.get("data-nation") for p in root.iter(f"{SVG}polyline")] == [name]


@pytest.mark.parametrize(
    ("lo", "hi", "integer"),
    [
        (0, 0, True),
        (0, 3, True),
        (0, 17, True),
        (0, 2600, True),
        (-0.46, 0.31, False),
        (0, 0.001, False),
        (-7, -2, True),
    ],
)
def test_y_ticks_are_round_numbers_covering_the_values(lo: float, hi: float, integer: bool) -> None:
    ticks = nice_ticks(lo, hi, 6, integer)
    assert ticks[0] <= lo and ticks[-1] >= hi and 2 <= len(ticks) <= 8
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1
    (step,) = steps
    mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
    assert round(mantissa, 6) in (1, 2, 2.5, 5)
    if integer:
        assert all(t == int(t) for t in ticks)
    labels = [tick_text(t, step) for t in ticks]
    assert len(set(labels)) == len(labels)  # enough decimals to tell them apart


def test_integer_ticks_hold_whole_numbers_only() -> None:
    assert integer_ticks(0, 3) == [0, 1, 2, 3]
    assert integer_ticks(441, 442) == [441, 442]
    assert integer_ticks(0.0, 6.75) == [0, 1, 2, 3, 4, 5, 6]
    assert integer_ticks(0, 110) == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110]
    assert tick_text(-2.0, 1) == "\u22122"


def report_with(rounds: int, nations: dict[str, str]) -> dict[str, Any]:
    """A report dict as `build_report` makes it, with only what the charts read."""
    order = list(nations)

    def figures(k: int) -> dict[str, dict[str, int]]:
        return {
            n: {"ntr_at_sea": k + i, "balance": 10 * k, "units": 5 - i, "fleet_cost": 40} for i, n in enumerate(order)
        }

    series = [{"turn": r * len(order), "nations": figures(r)} for r in range(1, rounds + 1)]
    return {
        "campaign": {"turn_order": order, "sides": nations},
        "start": {"seq": 1, "nations": figures(0)},
        "series": series,
        "turns": [],
        "luck": None,
    }


def test_report_charts_have_a_point_per_round_from_the_start() -> None:
    report = report_with(3, {"Germany": "Central Powers", "Britain": "Entente", "Austria-Hungary": "Central Powers"})
    charts = chart_svgs(report)
    assert [c["key"] for c in charts] == ["ntr_at_sea", "balance", "units", "fleet_cost"]
    for c in charts:
        lines = polylines(c["svg"])
        assert list(lines) == ["Germany", "Britain", "Austria-Hungary"]
        assert all(len(points) == 4 for points in lines.values())
        assert x_tick_labels(c["svg"], c["key"]) == ["start", "R1", "R2", "R3"]
    built = figure_chart(report, "ntr_at_sea", "NTR at sea", "NTR")
    assert [line.ys for line in built.lines] == [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5]]
    assert [line.dashed for line in built.lines] == [False, True, False]  # the first nation's side solid


def test_the_round_charts_caption_says_what_each_point_is() -> None:
    """A point is the end of a round (of every k-th round in a long campaign, see
    `chart_turns`); the last is the turn reported, or the one being played so far, when that
    does not end a round. Drawn from the series alone, a point is a national turn."""
    nations = {"Germany": "Central Powers", "Britain": "Entente"}

    def caption(turns: list[int], playing: bool = False, chart: bool = True) -> str:
        report = report_with(0, nations)
        entries = [
            {**report["start"], "turn": k, "round": -(-k // 2), "complete": not (playing and k == turns[-1])}
            for k in turns
        ]
        report["chart" if chart else "series"] = entries
        return figure_chart(report, "units", "Fleet strength (units)", "units").xlabel

    assert caption([2, 4, 6]) == "round (0 = start; each point: the end of a round)"
    assert caption([2, 4, 5], playing=True) == (
        "round (0 = start; each point: the end of a round; the last: turn 5 so far)"
    )
    assert caption([2, 4, 6], playing=True) == (
        "round (0 = start; each point: the end of a round; the last: turn 6 so far)"
    )
    assert caption([2, 3]) == "round (0 = start; each point: the end of a round; the last: the end of turn 3)"
    assert caption([3]) == "round (0 = start; the point: the end of turn 3)"
    assert caption([4, 8, 9], playing=True) == (
        "round (0 = start; each point: the end of every 2nd round; the last: turn 9 so far)"
    )
    assert caption([6, 12]) == "round (0 = start; each point: the end of every 3rd round)"
    assert caption([4, 8, 10]) == (
        "round (0 = start; each point: the end of every 2nd round; the last: the end of turn 10)"
    )
    assert caption([1, 2, 3], playing=True, chart=False) == (
        "round (0 = start; each point: the end of a national turn; the last: turn 3 so far)"
    )


def test_charts_need_no_plotting_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    report = report_with(2, {"Germany": "Central Powers", "Britain": "Entente"})
    assert len(chart_svgs(report)) == 4
