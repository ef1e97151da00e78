"""F8 in turn reports: the nations neutral at the end of the turns reported (as `tracker state`
says it, entries brought forward by adjustments counted) and the nations at war from a round,
told on the first turn played in it.

A nation's entry into the war (WarEntered) is recorded by the `next` that opens its entry
round, so it lies in the last turn played before that round; a reader of the round's reports
looks for it in the round's first turn, which is where `war_entries` puts it. A log recorded
before the ruleset recorded entries (`entries_recorded`) holds no such event: its entries are
told from the scenario's entry rounds, as the referee let them happen, less the entries an
adjustment had brought forward by then (AD1), which its adjustment already told."""

from __future__ import annotations

from typing import Any

from projections.positions import turn_position
from projections.views import Views
from tracker.reports.context import ReportContext
from tracker.service import read_models
from tracker.service.history import log_records


def neutral_at(ctx: ReportContext, v: Views, seq: int, round_: int) -> list[dict[str, Any]]:
    """F8: the nations neutral after event `seq` of round `round_`, in turn order, each with the
    round its scenario has it enter the war: {nation, until}. The entries brought forward by
    adjustments by then are those `state --turn` counts (`read_models.neutral_at`)."""
    scenario = ctx.scenario
    return [
        {"nation": n, "until": scenario.nations[n].entry_round}
        for n in read_models.neutral_at(ctx.t, v, seq, scenario, round_)
    ]


def war_entries(
    ctx: ReportContext,
    v: Views,
    round_: int,
    before: tuple[int, int] | None,
) -> list[dict[str, Any]]:
    """F8: the nations at war from round `round_` by their entry round, for a turn of that round
    played first in it (else none): {nation, round, seq}, `seq` the WarEntered event, or None
    where the log records no entries and the scenario tells them. `before` is (number, last
    event) of the turn played last before the turn, or None."""
    before_round = 0 if before is None else turn_position(ctx.turn_order, before[0])[0]
    if before_round >= round_ or round_ < 2:
        return []
    rounds = range(before_round + 1, round_ + 1)
    if not ctx.ruleset.entries_recorded:
        entered = ctx.t.adjusted_at(v, before[1] if before else 1, ctx.scenario)[1]
        nations = ctx.scenario.nations
        return [
            {"nation": n, "round": nations[n].entry_round, "seq": None}
            for n in ctx.turn_order
            if nations[n].entry_round in rounds and n not in entered
        ]
    if before is None:
        return []
    # Recorded by the `next` that ended the turn played before: read from that turn alone,
    # through the index of turns (never a search of the whole log).
    records = log_records(ctx.t, ctx.cid, turn=before[0], kind="WarEntered", with_data=True, views=v)
    return [
        {"nation": r["data"]["nation"], "round": r["data"]["round"], "seq": r["seq"]}
        for r in records
        if r["seq"] <= ctx.version and not r["undone_by"] and r["data"]["round"] in rounds
    ]
