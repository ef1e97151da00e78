"""Turn reports (Markdown, HTML, JSON) and per-turn statistics, read from the projections.

A report covers one national turn (`build_report(t, cid, turn=N)`) or the whole campaign
(`build_report(t, cid)`). It is built once as a JSON-ready dict, and the Markdown and HTML
renderings are drawn from that dict by the templates in `templates/` (Markdown and BBCode from
one template, in two markups), so every format tells the same story.
A TURN entry is filed by `tracker.reports.turn_entry`, and the per-turn statistics
(`stats_rows`, `stats_csv`) live in `tracker.reports.stats`; both are imported from here.
The figures at the end of every turn come from the projections, nothing is replayed: a
series over many turns is built in one pass over the history views, a few points (a one-turn
report, the charts) together by a few ranged queries, so a one-turn Markdown or HTML report
costs the same in a long campaign as in a short one. Only played turns are reported: a neutral
nation's turns are passed over with no events (F8). The charts show the figures at the end of every
round (of every few rounds in a long campaign), so they stay readable.

Events undone later are kept and marked (`undone_by` is the sequence number of the undo
event), never dropped; the boards at turn ends already reflect every undo.

JSON shape (`tracker report --format json`), `"schema": 1`:

Top level:
    schema      1; bumped when a key changes meaning or disappears.
    scope       "turn" (one national turn) or "campaign" (`--all`).
    campaign    {name, scenario, scenario_title, ruleset, dice_mode, turn_order: [nation],
                 sides: {nation: side}, technologies: [id], tech_names: {id: name},
                 unit_types: {type: {abbr, category, cost}}}
    position    the campaign now: {seq, turn, round, nation, phase}.
    neutral     the nations neutral at the end of the last turn reported (F8), as `tracker state
                --turn` lists them (entries brought forward by adjustments counted): {turn, seq,
                nations: [{nation, until (its scenario's entry round)}]}.
    start       the opening figures, after event 1: {seq, nations: {nation: FIGURES}}.
    series      one entry per played turn from 1 to the last turn reported (the Markdown and
                HTML renderings of one turn build only the turns they show):
                {turn, round, nation, seq, phase, complete, passed_over, nations: {nation:
                FIGURES}}, where seq is the last event of the turn (phase: its phase), complete
                is false for the turn still being played and passed_over (as in TURN) true for
                turn 1 alone, when it was passed over as the campaign was created.
    turns       the turns reported, oldest first (one entry for `--turn N`): TURN.
    luck        the reported turns' rolls and battles against their odds (as `tracker luck`,
                see `tracker.luck.build_luck`): {metrics: {id: words}, nations: {nation:
                {turns: [{turn, round, metrics: {id: {expected, actual}}}], total}}, battles:
                [{battle, turn, kind, zone, attacker, defender, from_seq, expected: {
                attacker_units_lost, defender_units_lost, ntr_destroyed}, actual: {same},
                percentile}]}; each battle at its odds from its first roll, the percentile of
                its outcome for the attacker (0.5: as expected, above: luckier).

FIGURES (one nation at one point): {balance, ntr_at_sea, ntr: {zone: count}, ntr_lost
(cumulative since the start), units, damaged, fleet_cost (sum of the unit types' costs),
by_type: {type: count}, tech: {technology: level}}.

TURN:
    turn, round, nation     the national turn and the phasing nation.
    complete                false while the turn is still being played.
    passed_over             true for turn 1 when its nation was neutral in round 1 (F8): passed
                            over as the campaign was created, its events are the creation's, not
                            that nation's; false for every other turn reported (the others
                            passed over have no events, so no entry).
    first_seq, last_seq     the span of its events.
    events      every event: {seq, phase, kind, rule, summary, undone_by}.
    moves       {seq, phase, nation, units, path, hostile_passed, carried, undone_by}.
    ntr_placed  {seq, nation, zone, count, undone_by}.
    research    {seq, nation, technology, cost, roll: ROLL | null, success, level (after a
                success, else null), acquired, undone_by}.
    battles     {battle, kind, zone, attacker, defender, defending_nations (`defender` first,
                then the other nations of a naval battle's units attacked; empty for a convoy
                battle), submarines, ntr (NTR present when declared), seq, undone_by, rolls:
                [ROLL], steps: [{seq, kind, rule, summary, undone_by}], casualties:
                [CASUALTY], ntr_destroyed, ended, survivors,
                went_on: [{units, zone, seq}] (an interception's submarines that went on, SM5:
                the zone their move of event seq reached; empty for other battles)}.
    rolls       every dice roll of the turn (battle and research rolls included): ROLL.
    casualties  CASUALTY: {seq, unit, type, nation, result ("sunk", "shot down" for an air unit, or "damaged"), battle,
                rule, undone_by}.
    ntr_lost    {seq, nation, zone, count, rolled, battle, undone_by}.
    resources   {seq, nation, ntr_value, income, lost, collected, balance, undone_by}.
    undos       undos recorded in this turn or undoing events of it: {seq, turn, undone_from,
                undone_to, override, reason, rolls (roll numbers taken back), agreed_by (the
                nations that agreed to an override, RK3), summary, undone_by,
                undone_events: [{seq, turn, phase, kind, rule, summary, stays}] (every event
                taken back, in whichever turn it was; `stays` says what holds all the same, as
                a dice seed revealed stays public (D5), else null)}.
    purchases   units bought and placed (PU1, PU2): {seq, kind, rule, summary, undone_by}.
    unplaced    units bought in the turn and not placed (yet): {nation: {type: count}}.
    adjustments adjustments (AD1): {seq, kind, rule, summary, reason, undone_by}.
    dice_record dice source switches, typed-dice overrides and rerolls (D4, RK3): {seq, kind, rule,
                summary, undone_by}.
    neutrality  neutral nations' turns passed over and entries into the war recorded in this turn
                (TurnPassedOver, WarEntered; F8): {seq, kind, rule, summary, undone_by}.
    other       events of no section above (creation, seed reveals): {seq, kind, rule,
                summary, undone_by}.
    war_entries on the first turn played in a round, the nations at war from that round by their
                entry round (F8), wherever the log recorded the entry (in the turn played
                before): [{nation, round, seq}], seq the WarEntered event, or null in a log
                recorded before entries were (the scenario's entry round tells them); else [].
    end         the figures at the end of the turn: {seq, phase, nations: {nation: FIGURES}, hash (the
                log's hash after event seq, or null when that event is outside the report)}.

ROLL: {seq, roll, roller, unit, rule, purpose, kind, faces, values, target, base_target,
success_when ("at_most", "at_least" or "total"), modifiers: [{rule, technology, holder, set,
add}], outcome, source ("auto" or "manual"), reference, battle, undone_by}.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, cast
from uuid import UUID

from sqlalchemy import select

from domain.errors import InputError
from projections.schema import event_index
from projections.views import Views
from tracker.reports.context import ReportContext
from tracker.reports.neutral import neutral_at, war_entries
from tracker.reports.stats import STAT_FIELDS, stats_csv, stats_rows
from tracker.reports.turn_entry import file_turn, stays_note, undo_entry
from tracker.service.application import Tracker
from tracker.service.history import log_records

__all__ = [
    "FORMATS",
    "SCHEMA",
    "STAT_FIELDS",
    "build_report",
    "render",
    "render_json",
    "stats_csv",
    "stats_rows",
    "stream_report",
]

SCHEMA = 1
FORMATS = ("md", "discord", "bbcode", "html", "json")


# ----- reading the turns -----


def _events_between(v: Views, first: int, last: int) -> list[dict[str, Any]]:
    """The index rows of events first..last: what an undo took back, whichever turn they were in."""
    rows = v.index_rows([event_index.c.seq >= first, event_index.c.seq <= last])
    return [
        {
            "seq": r.seq,
            "turn": r.turn,
            "phase": r.phase,
            "kind": r.kind,
            "rule": r.rule or "",
            "summary": r.summary,
            # D5: what the undo took back but could not unmake, or None.
            "stays": stays_note(r.kind),
        }
        for r in rows
    ]


def _turn_records(t: Tracker, cid: UUID, v: Views, ctx: ReportContext, turn: int | None) -> list[dict[str, Any]]:
    """The records of one turn (of every turn: None), with their data."""
    # Events recorded by another writer after the campaign was read wait for the next report.
    # The report reads records as plain dictionaries of the JSON it renders.
    records = log_records(t, cid, turn=turn, with_data=True, views=v)
    return [cast(dict[str, Any], r) for r in records if r["seq"] <= ctx.version]


def _undos(t: Tracker, cid: UUID, v: Views, seqs: Iterable[int]) -> dict[int, dict[str, Any]]:
    undos: dict[int, dict[str, Any]] = {}
    for seq in sorted(seqs):
        for r in log_records(t, cid, seq=seq, with_data=True, views=v):
            undos[seq] = undo_entry(r)
    return undos


def _records_by_turn(
    t: Tracker, cid: UUID, v: Views, ctx: ReportContext, turn: int
) -> tuple[dict[int, list[dict[str, Any]]], dict[int, dict[str, Any]]]:
    """The records of a turn reported, and the undos recorded in another turn that took back
    events of it (by their sequence numbers)."""
    records = _turn_records(t, cid, v, ctx, turn)
    local = {r["seq"] for r in records}
    outside = {r["undone_by"] for r in records if r["undone_by"] and r["undone_by"] not in local}
    return {turn: records}, _undos(t, cid, v, outside)


def _undos_outside_the_log(t: Tracker, cid: UUID, v: Views, ctx: ReportContext) -> dict[int, dict[str, Any]]:
    """For the whole campaign: the undos that took back reported events but are themselves
    no record of it (recorded after the campaign was read), found without reading every record."""
    index = event_index
    listed = index.c.kind != "ActionAsked"
    named = {
        int(s)
        for s in v.conn.execute(
            select(index.c.undone_by).where(index.c.c == v.key, index.c.undone_by.is_not(None), listed).distinct()
        ).scalars()
        if s
    }
    if not named:
        return {}
    present = set(
        v.conn.execute(
            select(index.c.seq).where(index.c.c == v.key, index.c.seq.in_(named), index.c.seq <= ctx.version, listed)
        ).scalars()
    )
    return _undos(t, cid, v, named - present)


def _add_undone_events(v: Views, turns: list[dict[str, Any]]) -> None:
    """What every undo took back, even from a turn the campaign has not reached again."""
    taken: dict[int, list[dict[str, Any]]] = {}
    for section in turns:
        for u in section["undos"]:
            if u["seq"] not in taken:
                taken[u["seq"]] = _events_between(v, u["undone_from"], u["undone_to"])
            u["undone_events"] = taken[u["seq"]]


def _battle_log(t: Tracker, cid: UUID) -> Callable[[int], Sequence[Mapping[str, Any]]]:
    """A battle's log records with their data, by which `tracker luck` credits its sinkings
    nation by nation (`tracker.analysis.luck_credit`)."""
    return lambda battle: log_records(t, cid, battle=battle, with_data=True)


def _turns(
    t: Tracker,
    cid: UUID,
    v: Views,
    ctx: ReportContext,
    wanted: list[int],
    by_turn: dict[int, list[dict[str, Any]]],
    undos: dict[int, dict[str, Any]],
    by_number: dict[int, dict[str, Any]],
    ends: dict[int, tuple[int, int, str, str]],
    tick: Callable[[int], None],
) -> Iterator[dict[str, Any]]:
    """The TURN entries of the turns `wanted`, built one at a time: the records of a turn not
    in `by_turn` are read when its entry is asked for, and let go once it is filed; `ends` as
    `ReportContext.played` read them (the turn played before each among them)."""
    for k in wanted:
        records = by_turn[k] if k in by_turn else _turn_records(t, cid, v, ctx, k)
        elsewhere = [undos[s] for s in sorted({r["undone_by"] for r in records if r["undone_by"] in undos})]
        entry = file_turn(ctx, k, records, elsewhere, by_number[k])
        del records
        # F8: the first turn played in a round tells who is at war from it, wherever the log
        # recorded the entry (in the turn played before).
        before = ctx.latest_played(ends, k - 1)
        entry["war_entries"] = war_entries(ctx, v, ends[k][1], None if before is None else (before, ends[before][0]))
        tick(1)
        yield entry


class _TurnsAsBuilt:
    """A campaign report's `turns` for a template drawing it piece by piece: its length is
    known at once; iterating builds each turn, hands it to the luck tally and lets it go, and
    once the last turn is drawn puts the luck in the report (the template reads it after the
    turns)."""

    def __init__(self, count: int, entries: Iterator[dict[str, Any]], report: dict[str, Any], tally: Any) -> None:
        self.count, self.entries, self.report, self.tally = count, entries, report, tally

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for entry in self.entries:
            self.tally.add(entry)
            yield entry
        self.report["luck"] = self.tally.result()


def stream_report(
    t: Tracker,
    cid: UUID,
    fmt: str = "md",
    progress: Callable[[int], AbstractContextManager[Callable[[int], None]]] | None = None,
) -> Iterator[str]:
    """The whole campaign's report in Markdown, Discord's or BBCode (`fmt` "md", "discord" or "bbcode") as pieces of
    text, each turn read, filed, drawn and let go in turn: memory holds the figures at every
    turn's end and the luck, never the records or the text of every turn (a long log's report
    is written as it is drawn). Joined, the pieces are `render(build_report(t, cid, None, "md"),
    fmt)`; `progress` as for `build_report`."""
    from tracker.analysis.luck import LuckTally
    from tracker.reports.bbcode import BBCODE
    from tracker.reports.markdown import DISCORD, MARKDOWN
    from tracker.reports.post import stream_post

    dialect = {"md": MARKDOWN, "discord": DISCORD, "bbcode": BBCODE}.get(fmt)
    if dialect is None:
        raise InputError(f"a campaign report is drawn piece by piece in md, discord or bbcode, not {fmt!r}")
    ctx = ReportContext(t, cid)
    with t.views(cid) as v:
        ends = ctx.played(v, ctx.current)
        wanted = sorted(ends)
        series, figures = ctx.series(v, wanted, sweep=True, ends=ends)
        by_number = {e["turn"]: e for e in series}
        undos = _undos_outside_the_log(t, cid, v, ctx)
        report: dict[str, Any] = {
            "schema": SCHEMA,
            "scope": "campaign",
            "campaign": ctx.campaign,
            "position": ctx.position,
            "neutral": _neutral(ctx, v, wanted, ends),
            "start": {"seq": 1, "nations": figures[1]},
            "series": series,
        }
        ticking = nullcontext(lambda _n: None) if progress is None else progress(len(wanted))
        with ticking as tick:

            def entries() -> Iterator[dict[str, Any]]:
                for entry in _turns(t, cid, v, ctx, wanted, {}, undos, by_number, ends, tick):
                    # What each undo took back, turn by turn (`_add_undone_events` on the lot).
                    _add_undone_events(v, [entry])
                    yield entry

            tally = LuckTally(t, cid, ctx.campaign, ruleset=ctx.ruleset, battle_log=_battle_log(t, cid))
            report["turns"] = _TurnsAsBuilt(len(wanted), entries(), report, tally)
            yield from stream_post(report, dialect)


def _neutral(
    ctx: ReportContext, v: Views, wanted: list[int], ends: dict[int, tuple[int, int, str, str]]
) -> dict[str, Any]:
    """F8: the nations neutral at the end of the last turn reported, as `tracker state --turn`
    lists them."""
    last = wanted[-1]
    seq, round_ = ends[last][0], ends[last][1]
    return {"turn": last, "seq": seq, "nations": neutral_at(ctx, v, seq, round_)}


def _board_map(t: Tracker, v: Views, ctx: ReportContext, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """The map of the board at the end of the (last) turn reported, as inline SVG, from the views
    the report already caught up."""
    from tracker.reports.board_map import board_svg, map_layout

    end = turns[-1]["end"]["seq"]
    board = ctx.boards[end] if end in ctx.boards else v.board_at(end)
    board = {**board, "owners": t.owners_at(v, end, ctx.scenario)}
    svg = board_svg(board, ctx.scenario, ctx.ruleset)
    layout = map_layout(ctx.scenario)
    return {"seq": end, "svg": svg, "width": layout.width, "focus": map_focus(layout.positions, turns, board)}


def map_focus(
    positions: Mapping[str, tuple[float, float]], turns: list[dict[str, Any]], board: Mapping[str, Any]
) -> list[float] | None:
    """Where a map too wide for the page opens (its centre, in the map's units): amid the zones
    of the last turn reported's moves, battles and NTR placed or lost (none undone), or else
    the zones holding its nation's units, where most of them are; None when there are none."""
    turn = turns[-1]
    zones: list[str] = []
    for move in turn.get("moves") or ():
        if not move.get("undone_by") and move.get("path"):
            zones += [move["path"][0], move["path"][-1]]
    for key in ("battles", "ntr_placed", "ntr_lost"):
        zones += [e["zone"] for e in turn.get(key) or () if not e.get("undone_by") and e.get("zone")]
    if not zones:
        units = board.get("units") or {}
        found = units.values() if isinstance(units, Mapping) else units
        zones = [u["at"] for u in found if u.get("nation") == turn.get("nation") and u.get("at")]
    points = [positions[z] for z in zones if z in positions]
    if not points:
        return None
    # The median, a zone counted once for each thing there: the main fleet, not the middle of
    # the sea between it and a lone cruiser on the far side of the world.
    return [statistics.median_low(p[0] for p in points), statistics.median_low(p[1] for p in points)]


def build_report(
    t: Tracker,
    cid: UUID,
    turn: int | None = None,
    fmt: str = "json",
    progress: Callable[[int], AbstractContextManager[Callable[[int], None]]] | None = None,
) -> dict[str, Any]:
    """The report of national turn `turn`, or of the whole campaign when `turn` is None.

    For `fmt` "md" and "html" a one-turn report holds only the series entries it shows (the
    turn and the one before it), and HTML adds `chart`: the chart points (see `chart_turns`;
    series entries, those of a one-turn report besides the turns shown holding of each nation
    only the figures the charts draw, see `ReportContext.chart_series`), and `map`: {seq, svg, width},
    the board map after the last event of the last turn reported.

    `progress(total)`, when given, is a context manager (such as `tracker.cli_common.progress`
    with its label bound) yielding `tick(n)`: it gets the number of turns reported and a tick
    per turn built. It changes nothing in the report."""
    ctx = ReportContext(t, cid)
    if turn is not None:
        ctx.check_turn(turn)
    upto = ctx.current if turn is None else turn
    full = turn is None or fmt == "json"
    with t.views(cid) as v:
        # Played turns only: a neutral nation's turns are passed over with no events (F8). A
        # chart point or the turn before stands for the last turn played by then.
        charted_at = ctx.chart_turns(upto) if fmt == "html" else []
        ends = ctx.played(v, upto, None if full else [upto - 1, upto, *charted_at])
        if turn is not None and turn not in ends:
            raise ctx.unplayed(turn)
        wanted = sorted(ends) if turn is None else [turn]
        before = None if full or turn is None else ctx.latest_played(ends, turn - 1)
        shown = sorted(ends) if full else [k for k in (before, turn) if k is not None]
        charted = list(dict.fromkeys(k for k in (ctx.latest_played(ends, c) for c in charted_at) if k is not None))
        # The charts' points besides the turns shown need only what the charts draw.
        sketched = [] if full else sorted(set(charted) - set(shown))
        read = sorted(set(shown) | (set(charted) - set(sketched)))
        series, figures = ctx.series(v, read, sweep=full, ends=ends, detail=shown)
        by_number = {e["turn"]: e for e in [*series, *ctx.chart_series(v, sketched, ends)]}
        if turn is not None:
            by_turn, undos = _records_by_turn(t, cid, v, ctx, turn)
        else:
            # The whole campaign: each turn's records are read, filed and let go in turn, so
            # memory holds the report, never every record of a long log at once.
            by_turn, undos = {}, _undos_outside_the_log(t, cid, v, ctx)
        ticking = nullcontext(lambda _n: None) if progress is None else progress(len(wanted))
        with ticking as tick:
            turns = list(_turns(t, cid, v, ctx, wanted, by_turn, undos, by_number, ends, tick))
        _add_undone_events(v, turns)
        report_map = _board_map(t, v, ctx, turns) if fmt == "html" else None
        neutral = _neutral(ctx, v, wanted, ends)
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "scope": "turn" if turn is not None else "campaign",
        "campaign": ctx.campaign,
        "position": ctx.position,
        "neutral": neutral,
        "start": {"seq": 1, "nations": figures[1]},
        "series": [by_number[k] for k in shown],
        "turns": turns,
    }
    from tracker.analysis.luck import build_luck

    report["luck"] = build_luck(t, cid, report, ruleset=ctx.ruleset, battle_log=_battle_log(t, cid))
    if fmt == "html":
        report["chart"] = [by_number[k] for k in charted]
        report["map"] = report_map
    return report


# ----- JSON -----


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def render(report: dict[str, Any], fmt: str) -> str:
    from tracker.reports.html import render_html
    from tracker.reports.markdown import render_markdown

    if fmt == "md":
        return render_markdown(report)
    if fmt == "bbcode":
        from tracker.reports.bbcode import render_bbcode

        return render_bbcode(report)
    if fmt == "discord":
        from tracker.reports.markdown import render_discord

        return render_discord(report)
    if fmt == "html":
        return render_html(report)
    if fmt == "json":
        return render_json(report)
    raise InputError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
