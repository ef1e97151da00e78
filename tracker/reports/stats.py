"""Per-turn statistics (`tracker stats`): each nation's figures at the end of every played turn,
as rows and as CSV, read from the projections like a report's series."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from tracker.reports.context import ReportContext
from tracker.service.application import Tracker

STAT_FIELDS = (
    "turn",
    "round",
    "turn_nation",
    "seq",
    "complete",
    "nation",
    "balance",
    "ntr_at_sea",
    "ntr_lost",
    "units",
    "damaged",
    "fleet_cost",
)


def stats_rows(t: Tracker, cid: UUID) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per nation per played turn (the figures at the end of the turn), and the
    technology columns (`tech_<id>`). A turn passed over (F8) has none."""
    ctx = ReportContext(t, cid)
    tech_columns = [f"tech_{tech}" for tech in ctx.techs]
    rows = []
    with t.views(cid) as v:
        ends = ctx.played(v, ctx.current)
        # F8: turn 1 passed over as the campaign was created has events, the creation's, but
        # its nation played none of them: left out like every other turn passed over (which
        # has no events), not listed as a turn that neutral played.
        turns = [k for k in sorted(ends) if not (k == 1 and ctx.first_passed_over)]
        series, _ = ctx.series(v, turns, sweep=True, ends=ends)
    for entry in series:
        for nation, f in entry["nations"].items():
            rows.append(
                {
                    "turn": entry["turn"],
                    "round": entry["round"],
                    "turn_nation": entry["nation"],
                    "seq": entry["seq"],
                    "complete": entry["complete"],
                    "nation": nation,
                    "balance": f["balance"],
                    "ntr_at_sea": f["ntr_at_sea"],
                    "ntr_lost": f["ntr_lost"],
                    "units": f["units"],
                    "damaged": f["damaged"],
                    "fleet_cost": f["fleet_cost"],
                    **{f"tech_{tech}": f["tech"][tech] for tech in ctx.techs},
                }
            )
    return rows, tech_columns


def stats_csv(rows: Iterable[dict[str, Any]], tech_columns: list[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*STAT_FIELDS, *tech_columns], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "complete": "yes" if row["complete"] else "no"})
    return out.getvalue()
