"""Line charts drawn straight as SVG from a report's figures (a line per nation, a point per round
or national turn): the positions are worked out here and the elements written out, every text
escaped."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import escape

WIDTH, HEIGHT = 560, 300
FONT = 11  # tick labels and legend; the title is a little larger
CHAR = 0.6 * FONT  # the width of an average character of a sans-serif font, to place text
# Markers on the points while they stay apart; a longer line is read by its shape.
FEW_POINTS = 40
MOST_X_TICKS, MOST_Y_TICKS = 12, 6
TOP, BOTTOM = 30, 44  # the title above the plot; the tick labels and the axis label below it
LEGEND_ROW = 15


@dataclass(frozen=True)
class Line:
    """One nation's line: its points' y values (one per x of the chart)."""

    label: str
    color: str
    ys: Sequence[float]
    dashed: bool = False


@dataclass(frozen=True)
class LineChart:
    """What one chart shows. `key` names the chart's element IDs (unique on a page holding
    several charts); x ticks fall on whole numbers, written by `x_tick_label`."""

    key: str
    title: str
    xlabel: str
    ylabel: str
    xs: Sequence[float]
    lines: Sequence[Line]
    x_tick_label: Callable[[int], str] = str
    integer_y: bool = True
    zero_line: bool = False  # a line across at 0 (the axis always holds 0)
    legend_title: str = "nation"


def nice_step(span: float, most: int, integer: bool = False) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that cuts `span` into at most `most`
    steps (a whole number when `integer`)."""
    raw = span / max(1, most)
    if raw <= 0:
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        step = m * magnitude
        if step >= raw * (1 - 1e-9) and (not integer or (step >= 1 and step == round(step))):
            return float(round(step)) if integer else step
    return max(1.0, 10 * magnitude) if integer else 10 * magnitude


def nice_ticks(lo: float, hi: float, most: int = MOST_Y_TICKS, integer: bool = False) -> list[float]:
    """Round tick values from a multiple of the step at or below `lo` to one at or above `hi`,
    so the axis ends on ticks."""
    if hi <= lo:
        hi = lo + 1
    step = nice_step(hi - lo, most, integer)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(k * step, 10) for k in range(first, last + 1)]


def integer_ticks(lo: float, hi: float, most: int = MOST_X_TICKS) -> list[int]:
    """Whole-number ticks between `lo` and `hi` (both included when whole), spaced by a round
    step so that there are at most `most` of them."""
    step = int(nice_step(max(hi - lo, 1), most, integer=True))
    first = math.ceil(lo / step - 1e-9) * step
    return list(range(first, math.floor(hi + 1e-9) + 1, step))


def tick_text(value: float, step: float) -> str:
    """A tick's label with as many decimals as its step needs, and a true minus sign."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if round(step * 10**decimals, 9) != round(step * 10**decimals):
        decimals += 1  # a step of 2.5 or 0.25
    text = f"{value:.{decimals}f}"
    return "\u2212" + text[1:] if text.startswith("-") else text


def element_id(key: str) -> str:
    """The prefix of a chart's element IDs: its key, kept to the characters an ID may hold."""
    return "chart-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)


def _y_axis(chart: LineChart, values: Collection[float]) -> list[float]:
    """The y ticks of a chart whose lines take `values`."""
    # 0 always shows: counts start from it, and a running difference is read against it.
    lo = min(0.0, min(values)) if values else 0.0
    hi = max(0.0, max(values)) if values else 0.0
    return nice_ticks(lo, hi, MOST_Y_TICKS, chart.integer_y)


def _x_ticks(chart: LineChart, x0: float, x1: float, width: float) -> list[int]:
    """As many whole-number ticks as their labels leave room for, at most MOST_X_TICKS."""
    most = MOST_X_TICKS
    while True:
        ticks = integer_ticks(x0, x1, most)
        widest = max((len(chart.x_tick_label(k)) for k in ticks), default=1) * CHAR + 8
        if most == 1 or len(ticks) * widest <= width:
            return ticks
        most -= 1


def layout(chart: LineChart) -> dict[str, Any]:
    """Every position of the chart, in SVG user units: the plot frame, the ticks and grid, the
    lines' point lists and the legend beside the plot (never over a line)."""
    # Each distinct y is placed and written once (below), and bounds the axis.
    distinct = {y for line in chart.lines for y in line.ys}
    y_ticks = _y_axis(chart, distinct)
    y_step = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else 1.0
    y_labels = [tick_text(v, y_step) for v in y_ticks]
    legend_width = 34 + CHAR * max([len(chart.legend_title), *(len(line.label) for line in chart.lines)])
    height = max(HEIGHT, TOP + BOTTOM + LEGEND_ROW * (len(chart.lines) + 2))
    left = 22 + CHAR * max(len(t) for t in y_labels) + 8
    right = WIDTH - legend_width - 12
    top, bottom = TOP, height - BOTTOM
    x0 = chart.xs[0] if chart.xs else 0
    x1 = max(chart.xs[-1] if chart.xs else 1, x0 + 1)
    pad = 0.03 * (x1 - x0)

    def px(x: float) -> float:
        return left + (x - x0 + pad) / (x1 - x0 + 2 * pad) * (right - left)

    def py(y: float) -> float:
        return bottom - (y - y_ticks[0]) / (y_ticks[-1] - y_ticks[0]) * (bottom - top)

    few = len(chart.xs) <= FEW_POINTS
    prefix = element_id(chart.key)
    # Every line has a point at each x, and a figure keeps its value for many points: each x
    # and each distinct y is placed and written once, and a line's points are filled in from
    # them. `px` and `py` written out, the same arithmetic, and the numbers written by one
    # %-format: a chart of balances has hundreds of distinct ys.
    x_span, plot_width = x1 - x0 + 2 * pad, right - left
    xs = _one_decimal([left + (x - x0 + pad) / x_span * plot_width for x in chart.xs])
    y0, y_span, plot_height = y_ticks[0], y_ticks[-1] - y_ticks[0], bottom - top
    ordered = list(distinct)
    ys = dict(zip(ordered, _one_decimal([bottom - (y - y0) / y_span * plot_height for y in ordered]), strict=True))
    # A line's points: each x with a slot for its y.
    slots = " ".join(f"{x},%s" for x in xs)

    def points(values: Sequence[float]) -> str:
        if len(values) != len(xs):
            raise ValueError(f"a line of {len(values)} values on a chart of {len(xs)} points")
        return slots % tuple(map(ys.__getitem__, values))

    lines = [
        {
            "id": f"{prefix}-line-{i}",
            "marker": f"{prefix}-marker-{i}" if few else None,
            "label": line.label,
            "color": line.color,
            "dashed": line.dashed,
            "points": points(line.ys),
            "legend_y": top + LEGEND_ROW * (i + 1.5),
        }
        for i, line in enumerate(chart.lines)
    ]
    return {
        "id": prefix,
        "width": WIDTH,
        "height": height,
        "font": FONT,
        "plot": {"left": left, "right": right, "top": top, "bottom": bottom},
        "title": chart.title,
        "xlabel": chart.xlabel,
        "ylabel": chart.ylabel,
        "x_ticks": [{"x": px(k), "label": chart.x_tick_label(k)} for k in _x_ticks(chart, x0, x1, right - left)],
        "y_ticks": [{"y": py(v), "label": label} for v, label in zip(y_ticks, y_labels, strict=True)],
        "zero": py(0.0) if chart.zero_line and y_ticks[0] < 0 < y_ticks[-1] else None,
        "lines": lines,
        "line_width": 1.4 if few else 1.0,
        "legend": {"x": right + 12, "title": chart.legend_title},
    }


def _one_decimal(values: list[float]) -> list[str]:
    """Each number written to one decimal, as f"{value:.1f}" writes it."""
    return ("%.1f\n" * len(values) % tuple(values)).split("\n")[:-1]


# The nations' names and colours, escaped once a process: every chart of a page draws them.
# Typed: a name already escaped (Markup) equals, as a key, the plain text it reads as.
_escaped = functools.lru_cache(maxsize=1024, typed=True)(escape)


def render_chart(chart: LineChart) -> str:
    """The chart as one `<svg>` element, to put inline in a page (no XML prologue)."""
    return "\n".join(_svg_lines(layout(chart)))


def _svg_lines(c: dict[str, Any]) -> list[str]:
    """The elements of a chart laid out by `layout`, a line each: every text escaped, every
    position written to one decimal."""
    # Written straight out (a page holds five charts of up to CHART_POINTS points a line, and
    # a template drew them several times slower).
    e = escape
    key, font, p = c["id"], c["font"], c["plot"]  # the ID needs no escaping (`element_id`)
    left, right = p["left"], p["right"]
    width, height = c["width"], c["height"]
    title = e(c["title"])
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{key}-svg" class="chart" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{key}-title" font-family="sans-serif" '
        f'font-size="{font}">',
        f'<title id="{key}-title">{title}</title>',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    lines = c["lines"]
    if lines and lines[0]["marker"]:
        out.append("<defs>")
        out.extend(
            f'<marker id="{line["marker"]}" markerUnits="userSpaceOnUse" markerWidth="7" markerHeight="7" '
            f'refX="3.5" refY="3.5"><circle cx="3.5" cy="3.5" r="2.4" fill="{_escaped(line["color"])}"/></marker>'
            for line in lines
        )
        out.append("</defs>")
    out.append(
        f'<text class="chart-title" x="{(left + right) / 2:.1f}" y="18" text-anchor="middle" '
        f'font-size="{font + 2}">{title}</text>'
    )
    out.extend(_svg_axes(c))
    out.extend(_svg_series(c))
    out.append("</svg>")
    return out


def _svg_axes(c: dict[str, Any]) -> list[str]:
    """A chart's axes with their grid, ticks and labels, its zero line and its frame."""
    e = escape
    key, font, p = c["id"], c["font"], c["plot"]  # the ID needs no escaping (`element_id`)
    left, right, top, bottom = p["left"], p["right"], p["top"], p["bottom"]
    height = c["height"]
    out: list[str] = []
    out.append(f'<g id="{key}-y-axis" class="axis">')
    # What every tick repeats, written once.
    grid = f'<line class="grid" x1="{left:.1f}" x2="{right:.1f}" y1="'
    label = f'<text class="tick" x="{left - 5:.1f}" y="'
    for t in c["y_ticks"]:
        y = f"{t['y']:.1f}"
        out.append(f'{grid}{y}" y2="{y}" stroke="#dddddd" stroke-width="0.8"/>')
        out.append(f'{label}{t["y"] + font * 0.35:.1f}" text-anchor="end">{e(t["label"])}</text>')
    out.append(
        f'<text class="axis-label" transform="translate(12 {(top + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle">{e(c["ylabel"])}</text>'
    )
    out.append("</g>")
    out.append(f'<g id="{key}-x-axis" class="axis">')
    grid = f'" y1="{top:.1f}" y2="{bottom:.1f}" stroke="#dddddd" stroke-width="0.8"/>'
    mark = f'" y1="{bottom:.1f}" y2="{bottom + 4:.1f}" stroke="#444444"/>'
    label = f'" y="{bottom + 6 + font:.1f}" text-anchor="middle">'
    for t in c["x_ticks"]:
        x = f"{t['x']:.1f}"
        out.append(f'<line class="grid" x1="{x}" x2="{x}{grid}')
        out.append(f'<line x1="{x}" x2="{x}{mark}')
        out.append(f'<text class="tick" x="{x}{label}{e(t["label"])}</text>')
    out.append(
        f'<text class="axis-label" x="{(left + right) / 2:.1f}" y="{height - 8}" text-anchor="middle">'
        f"{e(c['xlabel'])}</text>"
    )
    out.append("</g>")
    if c["zero"] is not None:
        out.append(
            f'<line class="zero" x1="{left:.1f}" x2="{right:.1f}" y1="{c["zero"]:.1f}" y2="{c["zero"]:.1f}" '
            'stroke="#888888" stroke-width="0.8"/>'
        )
    out.append(
        f'<rect class="frame" x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" height="{bottom - top:.1f}" '
        'fill="none" stroke="#444444" stroke-width="0.8"/>'
    )
    return out


def _svg_series(c: dict[str, Any]) -> list[str]:
    """A chart's lines, then its legend: each name and colour escaped once for both."""
    # IDs (`element_id`, markers) and points (numbers) hold no character to escape.
    e = _escaped
    key, font, top = c["id"], c["font"], c["plot"]["top"]
    lines = c["lines"]
    out = [f'<g id="{key}-lines" fill="none" stroke-width="{c["line_width"]}" stroke-linejoin="round">']
    legend_x = c["legend"]["x"]
    # The legend after the lines, drawn alongside them.
    legend = [
        f'<g id="{key}-legend" class="legend">',
        f'<text x="{legend_x:.1f}" y="{top + 8:.1f}" font-weight="bold">{e(c["legend"]["title"])}</text>',
    ]
    # What every entry of the legend repeats, written once.
    swatch = f'<line x1="{legend_x:.1f}" x2="{legend_x + 22:.1f}" y1="'
    name = f'<text x="{legend_x + 28:.1f}" y="'
    for line in lines:
        dash = ' stroke-dasharray="5 3"' if line["dashed"] else ""
        marker = line["marker"]
        label, color = e(line["label"]), e(line["color"])
        if marker:
            url = f"url(#{marker})"
            marks = f' marker-start="{url}" marker-mid="{url}" marker-end="{url}"'
        else:
            marks = ""
        out.append(
            f'<polyline id="{line["id"]}" data-nation="{label}" stroke="{color}"{dash}'
            f'{marks} points="{line["points"]}"/>'
        )
        y = f"{line['legend_y']:.1f}"
        legend.append(f'{swatch}{y}" y2="{y}" stroke="{color}" stroke-width="1.6"{dash}/>')
        legend.append(f'{name}{line["legend_y"] + font * 0.35:.1f}">{label}</text>')
    out.append("</g>")
    out.extend(legend)
    out.append("</g>")
    return out
