"""Turn reports in HTML, with their charts as inline SVG (`tracker.reports.charts`), drawn from
the report dict of `tracker.reports.report.build_report`."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from domain.text import plural
from tracker.reports.charts import Line, LineChart, render_chart
from tracker.reports.palette import LINE_CONTRAST, colour_of, ink
from tracker.reports.text import (
    BATTLE_RULES,
    battle_declaration,
    battle_heading,
    battle_result,
    campaign_turns,
    dice_text,
    entries_line,
    fleet_rows,
    has_actions,
    move_text,
    neutral_line,
    numbered_span,
    override_notice,
    passed_over_turns,
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
    from markupsafe import Markup


CHARTS = (
    ("ntr_at_sea", "NTR at sea", "NTR"),
    ("balance", "Resources (balance)", "resources"),
    ("units", "Fleet strength (units)", "units"),
    ("fleet_cost", "Fleet strength (total cost)", "cost"),
)
LUCK_TITLE = "Luck: actual minus expected, cumulative"

# ----- HTML -----


def _line_styles(report: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """Each nation's line in every chart: its colour, and whether it is dashed (solid for the
    first nation's side, dashed for its enemies)."""
    nations = report["campaign"]["turn_order"]
    sides = report["campaign"]["sides"]
    return {
        nation: (ink(colour_of(i), ("#ffffff",), LINE_CONTRAST), sides[nation] != sides[nations[0]])
        for i, nation in enumerate(nations)
    }


def _round_label(k: int) -> str:
    # Named as players say them: the start, then R1, R2, ...
    return f"R{k}" if k else "start"


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _so_far(entry: dict[str, Any]) -> str:
    """A point of the turn reported: its end, or where it stands when it is still being played."""
    return f"turn {entry['turn']} so far" if entry.get("complete") is False else f"the end of turn {entry['turn']}"


def points_caption(report: dict[str, Any], per_round: int) -> str:
    """What a point of the figure charts is, as `ReportContext.chart_turns` picks them: the end
    of each round, of every k-th round in a long campaign, and last the turn reported (the
    whole campaign: the turn being played, so far) unless that ends a round. A report without
    `chart` points draws its series: a point per national turn."""
    chart = report.get("chart")
    if not chart:
        series = report["series"]
        last = f"; the last: {_so_far(series[-1])}" if series and series[-1].get("complete") is False else ""
        return f"each point: the end of a national turn{last}"
    *ends, last = chart
    # Every point but the last ends a round: the first ends round k, k the rounds a point stands
    # for (a long campaign's are grouped; a passed-over turn, F8, is charted as the last turn
    # played before it). The last is the turn reported itself: one more of them if it ends a
    # round k, k*2, ...
    every = (ends[0].get("round") or -(-ends[0]["turn"] // per_round)) if ends else 1
    turn = last["turn"]
    if last.get("complete", True) and turn % per_round == 0 and turn // per_round % every == 0:
        ends.append(last)
    if not ends:
        return f"the point: {_so_far(last)}"
    points = "each point: the end of a round" if every == 1 else f"each point: the end of every {_ordinal(every)} round"
    return points if ends[-1] is last else f"{points}; the last: {_so_far(last)}"


def figure_chart(report: dict[str, Any], key: str, title: str, ylabel: str) -> LineChart:
    """One line chart of a per-nation figure at the end of each round: x is in rounds, so a
    point per round, and a long campaign's rounds are grouped (the report's `chart` turns);
    the caption says what the points are (`points_caption`)."""
    return figure_charts(report, [(key, title, ylabel)])[0]


def figure_charts(report: dict[str, Any], charts: Iterable[tuple[str, str, str]] = CHARTS) -> list[LineChart]:
    """The `figure_chart` of each (key, title, y label), their points, caption and lines' styles
    worked out once for all."""
    nations = report["campaign"]["turn_order"]
    per_round = max(1, len(nations))
    entries = report.get("chart") or report["series"]
    xs = [0.0] + [e["turn"] / per_round for e in entries]
    xlabel = f"round (0 = start; {points_caption(report, per_round)})"
    points = [report["start"]["nations"]] + [e["nations"] for e in entries]
    # Each nation's figures at every point, read once for every chart.
    figures = {n: [p[n] for p in points] for n in nations}
    styles = _line_styles(report)
    return [
        LineChart(
            key=key,
            title=title,
            xlabel=xlabel,
            ylabel=ylabel,
            xs=xs,
            lines=[Line(n, styles[n][0], [f[key] for f in figures[n]], dashed=styles[n][1]) for n in nations],
            x_tick_label=_round_label,
        )
        for key, title, ylabel in charts
    ]


def luck_points(report: dict[str, Any]) -> tuple[list[int], dict[str, list[float]]]:
    """The luck chart's points: the national turns (the one before the first reported, 0 for
    the start, then each reported turn) and per nation its running luck at the end of each."""
    from tracker.analysis.luck import cumulative

    turns = [t["turn"] for t in report["turns"]]
    xs, lines = [turns[0] - 1, *turns], {}
    for nation in report["campaign"]["turn_order"]:
        xs, lines[nation] = cumulative(report["luck"], nation, turns)
    return xs, lines


def luck_chart(report: dict[str, Any]) -> LineChart:
    """Per nation, the running sum of actual minus expected (hits, searches, NTR destroyed and
    enemy units sunk, less NTR and units lost) at the end of each national turn reported:
    above 0, luckier than the odds of its rolls. x counts national turns in whole numbers, as
    the other charts count rounds."""
    xs, lines = luck_points(report)
    styles = _line_styles(report)
    start = "0 = start; " if xs[0] == 0 else ""
    playing = report["turns"][-1].get("complete") is False
    return LineChart(
        key="luck",
        title=LUCK_TITLE,
        xlabel=f"national turn ({start}each point: the end of a turn{', the last so far' if playing else ''})",
        ylabel="successes above the odds",
        xs=xs,
        lines=[Line(nation, styles[nation][0], ys, dashed=styles[nation][1]) for nation, ys in lines.items()],
        # Whole national turns only (a fraction of a turn means nothing), the start named as in
        # the other charts.
        x_tick_label=lambda k: str(k) if k else "start",
        integer_y=False,
        zero_line=True,
    )


def chart_svgs(report: dict[str, Any]) -> list[dict[str, str]]:
    """The charts as inline SVG elements (every text escaped, no XML prologue), each with its
    key and title."""
    charts = figure_charts(report)
    if report.get("luck"):
        charts.append(luck_chart(report))
    return [{"key": c.key, "title": c.title, "svg": render_chart(c)} for c in charts]


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
    # `plural` says a unit type in words too: "2 aircraft carriers", as the log's summaries do.
    env.globals.update(phase_name=phase_name, tech_name=tech_name, type_name=type_name, plural=plural)
    return env


def _undone_badge(item: dict[str, Any]) -> Markup:
    """After a row's last cell: the event that undid it, if one did."""
    from markupsafe import Markup

    by = item["undone_by"]
    return Markup(' <span class="badge undone-by">undone by event {}</span>').format(by) if by else Markup("")


def _row_class(item: dict[str, Any]) -> Markup:
    """A row's class attribute: struck through when undone."""
    from markupsafe import Markup

    return Markup(' class="undone"') if item["undone_by"] else Markup("")


def _outcome(text: str | None) -> Markup:
    """A roll's outcome, coloured when it is a success or a failure."""
    from markupsafe import Markup, escape

    if text in ("success", "failure"):
        return Markup('<span class="{0}">{0}</span>').format(text)
    return escape(text or "-")


# A figures table's column of text, not numbers (left-aligned, as its header).
_TEXT_COLUMNS = ("NTR by zone",)


def _simple_table(header: list[str], rows: list[list[Any]], palette: dict[str, str]) -> Markup:
    """A figures table (`fleet_rows`, `trade_rows`): a row per nation, its name with its colour
    first, numbers right-aligned. Written here rather than as a template macro: a template
    draws its cells several times slower, and a turn's page holds two tables of every nation."""
    from markupsafe import Markup, escape

    heads = "".join(
        f'<th class="num">{escape(h)}</th>' if i and h not in _TEXT_COLUMNS else f"<th>{escape(h)}</th>"
        for i, h in enumerate(header)
    )
    out = [f"<table>\n  <thead><tr>{heads}</tr></thead>\n  <tbody>\n"]
    for row in rows:
        first, *rest = row
        cells = "".join(
            f"<td>{escape(cell)}</td>" if header[i] in _TEXT_COLUMNS else f'<td class="num">{escape(cell)}</td>'
            for i, cell in enumerate(rest, 1)
        )
        swatch = f'<span class="swatch" style="background: {escape(palette.get(first, "#999"))}"></span>'
        out.append(f"    <tr><th>{swatch}{escape(first)}</th>{cells}</tr>\n")
    out.append("  </tbody>\n</table>\n")
    return Markup("".join(out))


@functools.cache
def _html_environment() -> jinja2.Environment:
    """The page template's environment, made once a process: a template compiles the first time
    it is drawn, and a long-running process (the server) draws many reports."""
    env = template_environment()
    # Drawn on every row of the page: Python functions, several times cheaper to call than
    # template macros.
    env.globals.update(undone_badge=_undone_badge, row_class=_row_class, outcome=_outcome, simple_table=_simple_table)
    env.globals.update(
        target_text=lambda r: target_text(r, ascii_only=False),
        dice_text=dice_text,
        move_text=move_text,
        research_result=research_result,
        undo_text=undo_text,
        undone_listing=undone_listing,
        override_notice=override_notice,
        battle_heading=battle_heading,
        battle_declaration=battle_declaration,
        battle_rule=lambda b: BATTLE_RULES.get(b["kind"], "CV1"),
        battle_result=battle_result,
        fleet_rows=fleet_rows,
        trade_rows=trade_rows,
        turn_title=turn_title,
        campaign_turns=campaign_turns,
        numbered_span=numbered_span,
        has_actions=has_actions,
        report_meta=lambda r: report_meta(r, str),
        neutral_line=neutral_line,
        entries_line=entries_line,
        passed_over_turns=passed_over_turns,
    )
    return env


# A map wider than this (px) is drawn at its own size in a frame that scrolls: fitted to the
# page (1100 px) its 11 px labels would shrink below what can be read (great-war-1914: 4258 px).
WIDE_MAP = 1600


def render_html(report: dict[str, Any]) -> str:
    from markupsafe import Markup

    env = _html_environment()
    # charts.py escapes every text it draws (names included): its SVG is trusted markup.
    charts = [{**c, "svg": Markup(c["svg"])} for c in chart_svgs(report)]
    palette = {n: colour_of(i) for i, n in enumerate(report["campaign"]["turn_order"])}
    # The map SVG is built by tracker.board_map, which escapes every name it draws.
    board_map = None
    if "map" in report:
        board_map = {**report["map"], "svg": Markup(report["map"]["svg"]), "wide": report["map"]["width"] > WIDE_MAP}
    template = env.get_template("report.html.j2")
    return template.render(report=report, charts=charts, palette=palette, board_map=board_map)
