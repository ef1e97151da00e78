"""Turn reports in HTML, with their charts as inline SVG, drawn from the report dict of
`tracker.report.build_report`."""

from __future__ import annotations

import io
import math
import re
from typing import TYPE_CHECKING, Any

from tracker.reports.text import (
    BATTLE_RULES,
    battle_declaration,
    battle_heading,
    battle_result,
    dice_text,
    fleet_rows,
    has_actions,
    move_text,
    phase_name,
    report_meta,
    research_result,
    target_text,
    tech_name,
    trade_rows,
    turn_title,
    type_name,
    undo_text,
    undone_listing,
)

if TYPE_CHECKING:
    import jinja2

# Colour-blind safe (Okabe-Ito), one per nation in turn order.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

CHARTS = (
    ("ntr_at_sea", "NTR at sea", "NTR"),
    ("balance", "Resources (balance)", "resources"),
    ("units", "Fleet strength (units)", "units"),
    ("fleet_cost", "Fleet strength (total cost)", "cost"),
)

# ----- HTML -----


def _line_style(report: dict[str, Any], nation: str) -> dict[str, Any]:
    """A nation's line in every chart: its colour, solid for the first nation's side, dashed
    for its enemies."""
    nations = report["campaign"]["turn_order"]
    sides = report["campaign"]["sides"]
    return {
        "color": PALETTE[nations.index(nation) % len(PALETTE)],
        "linestyle": "-" if sides[nation] == sides[nations[0]] else "--",
        "label": nation,
    }


def _chart_figure(report: dict[str, Any], key: str, title: str, ylabel: str) -> Any:
    """One line chart of a per-nation figure at the end of each round (a matplotlib Figure, no
    pyplot): x is in rounds, so a point per round, and a long campaign's rounds are grouped."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    nations = report["campaign"]["turn_order"]
    per_round = max(1, len(nations))
    entries = report.get("chart") or report["series"]
    xs = [0.0] + [e["turn"] / per_round for e in entries]
    points = [report["start"]["nations"]] + [e["nations"] for e in entries]
    few = len(xs) <= 40
    fig = Figure(figsize=(5.6, 3.0), layout="constrained")
    ax = fig.subplots()
    for nation in nations:
        ax.plot(
            xs,
            [p[nation][key] for p in points],
            # Markers only while they stay apart; a long line is read by its shape.
            marker="o" if few else None,
            markersize=3.5,
            linewidth=1.4 if few else 1.0,
            **_line_style(report, nation),
        )
    ax.set_title(title)
    ax.set_xlabel("round (0 = start; each point: the end of a round)" if few else "round (0 = start)")
    ax.set_ylabel(ylabel)
    # Whole rounds on the x axis, named as players say them: the start, then R1, R2, ...
    rounds = max(1, math.ceil(xs[-1]))
    step = max(1, math.ceil(rounds / 12))
    ax.set_xticks(list(range(0, rounds + 1, step)), ["start"] + [f"R{r}" for r in range(step, rounds + 1, step)])
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(-0.05 * max(xs[-1], 1), max(xs[-1], 1) * 1.03)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    # Beside the plot, never over a line.
    fig.legend(fontsize=7, loc="outside right upper", title="nation", title_fontsize=7)
    return fig


_SVG_ID = re.compile(r'(\bid="|\bhref="#|url\(#)([^")]+)')


def _scoped_ids(svg: str, prefix: str) -> str:
    """Prefix every element ID of one chart (and the references to them): matplotlib numbers
    its groups `figure_1`, `axes_1`, ... in every chart, and one page needs unique IDs."""
    return _SVG_ID.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)


def chart_svgs(report: dict[str, Any]) -> list[dict[str, str]]:
    """The charts as inline SVG elements (text kept as text, no metadata, no XML prologue)."""
    import matplotlib

    charts = []
    for key, title, ylabel in CHARTS:
        # A fixed salt keeps the generated element IDs, and so the page, the same from run to run.
        with matplotlib.rc_context({"svg.hashsalt": f"twtea-{key}", "svg.fonttype": "none", "font.size": 9}):
            fig = _chart_figure(report, key, title, ylabel)
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
        svg = buf.getvalue()
        charts.append({"key": key, "title": title, "svg": _scoped_ids(svg[svg.index("<svg") :], key)})
    if report.get("luck"):
        with matplotlib.rc_context({"svg.hashsalt": "twtea-luck", "svg.fonttype": "none", "font.size": 9}):
            fig = _luck_figure(report)
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
        svg = buf.getvalue()
        title = "Luck: actual minus expected, cumulative"
        charts.append({"key": "luck", "title": title, "svg": _scoped_ids(svg[svg.index("<svg") :], "luck")})
    return charts


def luck_points(report: dict[str, Any]) -> tuple[list[int], dict[str, list[float]]]:
    """The luck chart's points: the national turns (the one before the first reported, 0 for
    the start, then each reported turn) and per nation its running luck at the end of each."""
    from tracker.analysis.luck import cumulative

    turns = [t["turn"] for t in report["turns"]]
    xs, lines = [turns[0] - 1, *turns], {}
    for nation in report["campaign"]["turn_order"]:
        xs, lines[nation] = cumulative(report["luck"], nation, turns)
    return xs, lines


def _luck_figure(report: dict[str, Any]) -> Any:
    """Per nation, the running sum of actual minus expected (hits, searches, NTR destroyed,
    less NTR lost) at the end of each national turn reported: above 0, luckier than the odds of
    its rolls. x counts national turns in whole numbers, as the other charts count rounds."""
    from matplotlib.figure import Figure

    xs, lines = luck_points(report)
    few = len(xs) <= 40
    fig = Figure(figsize=(5.6, 3.0), layout="constrained")
    ax = fig.subplots()
    for nation, ys in lines.items():
        ax.plot(
            xs,
            ys,
            # As in the other charts: markers while they stay apart, one style per side.
            marker="o" if few else None,
            markersize=3.5,
            linewidth=1.3 if few else 1.0,
            **_line_style(report, nation),
        )
    ax.axhline(0, color="#888888", linewidth=0.8)
    ax.set_title("Luck: actual minus expected, cumulative")
    start = "0 = start; " if xs[0] == 0 else ""
    ax.set_xlabel(f"national turn ({start}each point: the end of a turn)")
    ax.set_ylabel("successes above the odds")
    # Whole national turns only (a fraction of a turn means nothing), the start named as in the
    # other charts; a long campaign's ticks are spaced out.
    step = max(1, math.ceil((xs[-1] - xs[0]) / 12))
    ticks = list(range(xs[0], xs[-1] + 1, step))
    ax.set_xticks(ticks, ["start" if k == 0 else str(k) for k in ticks])
    span = max(xs[-1] - xs[0], 1)
    ax.set_xlim(xs[0] - 0.05 * span, xs[0] + span * 1.03)
    ax.grid(True, alpha=0.3)
    fig.legend(fontsize=7, loc="outside right upper", title="nation", title_fontsize=7)
    return fig


def template_environment(package: str = "tracker.reports") -> jinja2.Environment:
    """The templates of a room (the reports here, the browser viewer's pages in the server): every
    name they use defined, with the names of phases, technologies and unit types. HTML-escaped,
    except forum-post templates (`*.post.j2`, Markdown or BBCode), whose dialect escapes players'
    text with a filter of its own (`tracker.reports.post`)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=lambda name: not (name or "").endswith(".post.j2"),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(phase_name=phase_name, tech_name=tech_name, type_name=type_name)
    return env


def render_html(report: dict[str, Any]) -> str:
    from markupsafe import Markup

    env = template_environment()
    env.globals.update(
        target_text=lambda r: target_text(r, ascii_only=False),
        dice_text=dice_text,
        move_text=move_text,
        research_result=research_result,
        undo_text=undo_text,
        undone_listing=undone_listing,
        battle_heading=battle_heading,
        battle_declaration=battle_declaration,
        battle_rule=lambda b: BATTLE_RULES.get(b["kind"], "CV1"),
        battle_result=battle_result,
        fleet_rows=fleet_rows,
        trade_rows=trade_rows,
        turn_title=turn_title,
        has_actions=has_actions,
        report_meta=lambda r: report_meta(r, str),
    )
    # The SVG comes from matplotlib, which escapes every text it draws; it is trusted markup.
    charts = [{**c, "svg": Markup(c["svg"])} for c in chart_svgs(report)]
    palette = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(report["campaign"]["turn_order"])}
    # The map SVG is built by tracker.board_map, which escapes every name it draws.
    board_map = {**report["map"], "svg": Markup(report["map"]["svg"])} if "map" in report else None
    template = env.get_template("report.html.j2")
    return template.render(report=report, charts=charts, palette=palette, board_map=board_map)
