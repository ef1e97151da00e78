"""Turn reports in Markdown (and, through it, BBCode), rendered from `templates/report.md.j2`
with the report dict of `tracker.report.build_report`."""

from __future__ import annotations

import re
from typing import Any

from tracker.reports.html import template_environment
from tracker.reports.text import (
    BATTLE_RULES,
    battle_declaration,
    battle_heading,
    battle_result,
    dice_text,
    fleet_rows,
    has_actions,
    move_text,
    report_meta,
    research_result,
    roll_line,
    step_text,
    target_text,
    trade_rows,
    turn_title,
    undo_text,
    undone_listing,
)

# Characters that could start emphasis, code, links, strikethrough, a table cell or (a "<"
# before a letter, "/", "!" or "?") raw HTML and autolinks.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~]|<(?=[A-Za-z/!?]))")


def md(text: object) -> str:
    """Text safe inside Markdown (and a table cell): no markup, no HTML, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def luck_tables(report: dict[str, Any]) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """The rows of the luck table (nation and turn, then expected / actual per metric), leaving
    out the rows with nothing expected and nothing happened, and the battles of the report."""
    from tracker.analysis.luck import rows_for

    luck = report.get("luck")
    if not luck:
        return [], []
    rows = [r for r in rows_for(luck) if any(not c.startswith("0.00 / 0") for c in r[2:])]
    return rows, luck.get("battles", [])


def render_markdown(report: dict[str, Any]) -> str:
    env = template_environment()
    env.filters["md"] = md
    env.globals.update(
        target_text=target_text,
        dice_text=dice_text,
        move_text=move_text,
        research_result=research_result,
        roll_line=roll_line,
        step_text=step_text,
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
        report_meta=lambda r: report_meta(r, md),
        luck_tables=luck_tables,
    )
    text = env.get_template("report.md.j2").render(report=report)
    # One newline at the end, however the template's last section ends.
    return text.rstrip("\n") + "\n"
