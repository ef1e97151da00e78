"""Line charts drawn straight as SVG from a report's figures (a line per nation, a point per round
or national turn): the positions are worked out here, the elements written by `chart.svg.j2`,
which escapes every text."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

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


def _y_axis(chart: LineChart) -> list[float]:
    values = [y for line in chart.lines for y in line.ys]
    # 0 always shows: counts start from it, and a running difference is read against it.
    lo, hi = min([0.0, *values]), max([0.0, *values])
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
    y_ticks = _y_axis(chart)
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
    lines = [
        {
            "id": f"{prefix}-line-{i}",
            "marker": f"{prefix}-marker-{i}" if few else None,
            "label": line.label,
            "color": line.color,
            "dashed": line.dashed,
            "points": " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(chart.xs, line.ys, strict=True)),
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


@functools.cache
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("tracker.reports", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def render_chart(chart: LineChart) -> str:
    """The chart as one `<svg>` element, to put inline in a page (no XML prologue)."""
    return _environment().get_template("chart.svg.j2").render(c=layout(chart)).strip()
