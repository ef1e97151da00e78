"""Turn reports (Markdown, HTML, JSON) and per-turn statistics, read from the projections.

A report covers one national turn (`build_report(t, cid, turn=N)`) or the whole campaign
(`build_report(t, cid)`). It is built once as a JSON-ready dict, and the Markdown and HTML
renderings are drawn from that dict, so the three formats always tell the same story.
The figures at the end of every turn come from the projections, nothing is replayed: a
series over many turns is built in one pass over the history views, a few points (a one-turn
report, the charts) by one board query each, so a one-turn Markdown or HTML report costs the
same in a long campaign as in a short one. The charts show the figures at the end of every
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
    start       the opening figures, after event 1: {seq, nations: {nation: FIGURES}}.
    series      one entry per played turn from 1 to the last turn reported (the Markdown and
                HTML renderings of one turn build only the turns they show):
                {turn, round, nation, seq, phase, complete, nations: {nation: FIGURES}}, where
                seq is the last event of the turn (phase: its phase) and complete is false for
                the turn still being played.
    turns       the turns reported, oldest first (one entry for `--turn N`): TURN.
    luck        the reported turns' rolls against their odds (see `tracker.luck.build_luck`,
                without the battles' odds): {metrics: {id: words}, nations: {nation: {turns:
                [{turn, round, metrics: {id: {expected, actual}}}], total}}, battles: []}.

FIGURES (one nation at one point): {balance, ntr_at_sea, ntr: {zone: count}, ntr_lost
(cumulative since the start), units, damaged, fleet_cost (sum of the unit types' costs),
by_type: {type: count}, tech: {technology: level}}.

TURN:
    turn, round, nation     the national turn and the phasing nation.
    complete                false while the turn is still being played.
    first_seq, last_seq     the span of its events.
    events      every event: {seq, phase, kind, rule, summary, undone_by}.
    moves       {seq, phase, nation, units, path, hostile_passed, carried, undone_by}.
    ntr_placed  {seq, nation, zone, count, undone_by}.
    research    {seq, nation, technology, cost, roll: ROLL | null, success, level (after a
                success, else null), acquired, undone_by}.
    battles     {battle, kind, zone, attacker, defender, submarines, ntr (NTR present when
                declared), seq, undone_by, rolls: [ROLL], steps: [{seq, kind, rule, summary,
                undone_by}], casualties: [CASUALTY], ntr_destroyed, ended, survivors}.
    rolls       every dice roll of the turn (battle and research rolls included): ROLL.
    casualties  CASUALTY: {seq, unit, type, nation, result ("sunk" or "damaged"), battle,
                rule, undone_by}.
    ntr_lost    {seq, nation, zone, count, rolled, battle, undone_by}.
    resources   {seq, nation, ntr_value, income, lost, collected, balance, undone_by}.
    undos       undos recorded in this turn or undoing events of it: {seq, turn, undone_from,
                undone_to, override, reason, rolls (roll numbers taken back), agreed_by (the
                nations that agreed to an override, RK3), summary, undone_by,
                undone_events: [{seq, turn, phase, kind, rule, summary}] (every event taken back,
                in whichever turn it was)}.
    purchases   units bought and placed (PU1, PU2): {seq, kind, rule, summary, undone_by}.
    unplaced    units bought in the turn and not placed (yet): {nation: {type: count}}.
    adjustments adjustments (AD1): {seq, kind, rule, summary, reason, undone_by}.
    dice_record dice source switches, typed-dice overrides and rerolls (D4, RK3): {seq, kind, rule,
                summary, undone_by}.
    other       events of no section above (creation, seed reveals): {seq, kind, rule,
                summary, undone_by}.
    end         the figures at the end of the turn: {seq, phase, nations: {nation: FIGURES}, hash (the
                log's hash after event seq, or null when that event is outside the report)}.

ROLL: {seq, roll, roller, unit, rule, purpose, kind, faces, values, target, base_target,
success_when ("at_most", "at_least" or "total"), modifiers: [{rule, technology, holder, set,
add}], outcome, source ("auto" or "manual"), reference, battle, undone_by}.
"""

from __future__ import annotations

import csv
import heapq
import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import Any
from uuid import UUID

from domain.errors import InputError
from projections.board import Views, event_index, turn_number
from tracker.application import Tracker
from tracker.history import TECH_NAMES, log_records

# At most this many points per chart line: a long campaign's rounds are grouped.
CHART_POINTS = 60

SCHEMA = 1
FORMATS = ("md", "bbcode", "html", "json")

# Colour-blind safe (Okabe-Ito), one per nation in turn order.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

CHARTS = (
    ("ntr_at_sea", "NTR at sea", "NTR"),
    ("balance", "Resources (balance)", "resources"),
    ("units", "Fleet strength (units)", "units"),
    ("fleet_cost", "Fleet strength (total cost)", "cost"),
)

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


# ----- the campaign and its figures -----


def tech_name(tech: str) -> str:
    return TECH_NAMES.get(tech, tech.replace("_", " ").title())


def phase_name(phase: str) -> str:
    return phase.replace("_", " ")


def type_name(unit_type: str) -> str:
    return unit_type.replace("_", " ")


class _Context:
    """What every part of a report needs to know about the campaign."""

    def __init__(self, t: Tracker, cid: UUID) -> None:
        self.t = t
        self.cid = cid
        campaign = t.load(cid)
        scenario = campaign.scenario
        ruleset = campaign.ruleset
        self.name = t.name_of(campaign)
        self.scenario, self.ruleset = scenario, ruleset
        self.version = campaign.version
        self.turn_order = list(scenario.turn_order)
        self.techs = list(ruleset.technologies)
        self.types = list(ruleset.units)
        self.costs = {name: u.cost for name, u in ruleset.units.items()}
        self.abbr = {u.abbr: name for name, u in ruleset.units.items()}
        self.code = {n.code: name for name, n in scenario.nations.items()}
        self.current = turn_number(self.turn_order, campaign.round, campaign.nation)
        self.unit_info: dict[str, tuple[str, str]] = {}
        self.campaign = {
            "name": self.name,
            "scenario": scenario.name,
            "scenario_title": scenario.title,
            "ruleset": ruleset.name,
            "dice_mode": campaign.dice_mode,
            "turn_order": self.turn_order,
            "sides": {n: scenario.nations[n].side for n in self.turn_order},
            "technologies": self.techs,
            "tech_names": {tech: tech_name(tech) for tech in self.techs},
            "unit_types": {
                name: {"abbr": u.abbr, "category": u.category, "cost": u.cost} for name, u in ruleset.units.items()
            },
        }
        self.position = {
            "seq": campaign.version,
            "turn": self.current,
            "round": campaign.round,
            "nation": campaign.nation,
            "phase": campaign.phase,
        }

    def check_turn(self, turn: int) -> None:
        # Turns after the current one may still have stale rows in the phase index after an
        # undo back into an earlier turn: the campaign's own position decides what was played.
        if turn < 1 or turn > self.current:
            raise InputError(
                f"turn {turn} has not been played in campaign {self.name!r} "
                f"(played: 1-{self.current}; the current turn is {self.current})"
            )

    def figures(self, board: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for u in board["units"]:
            self.unit_info[u["id"]] = (u["type"], u["nation"])
        units_of: dict[str, list[dict[str, Any]]] = {n: [] for n in self.turn_order}
        for u in board["units"]:
            units_of.setdefault(u["nation"], []).append(u)
        for nation in self.turn_order:
            units = units_of[nation]
            by_type = Counter(u["type"] for u in units)
            out[nation] = self._figures(
                board["balances"].get(nation, 0),
                dict(board["ntr"].get(nation, {})),
                board["ntr_lost"].get(nation, 0),
                len(units),
                sum(1 for u in units if u["damage"]),
                sum(self.costs.get(u["type"], 0) for u in units),
                by_type,
                board["tech"].get(nation, {}),
            )
        return out

    def _figures(
        self,
        balance: int,
        ntr: dict[str, int],
        ntr_lost: int,
        units: int,
        damaged: int,
        fleet_cost: int,
        by_type: Counter[str],
        tech: dict[str, int],
    ) -> dict[str, Any]:
        return {
            "balance": balance,
            "ntr_at_sea": sum(ntr.values()),
            "ntr": ntr,
            "ntr_lost": ntr_lost,
            "units": units,
            "damaged": damaged,
            "fleet_cost": fleet_cost,
            "by_type": {name: by_type[name] for name in self.types if by_type[name]},
            "tech": {t: tech.get(t, 0) for t in self.techs},
        }

    def unit(self, uid: str) -> tuple[str, str]:
        """(type, nation) of a unit, from the boards seen or else from its ID (GB-DD1)."""
        if uid in self.unit_info:
            return self.unit_info[uid]
        m = re.fullmatch(r"([A-Za-z]+)-([A-Za-z]+)\d+", uid)
        if m:
            return self.abbr.get(m.group(2), "?"), self.code.get(m.group(1), "?")
        return "?", "?"

    def figures_at(self, v: Views, seqs: list[int], sweep: bool) -> dict[int, dict[str, dict[str, Any]]]:
        """The figures of every nation after each of these events: one board query each (a
        bounded number of points, whatever the log's length), or with `sweep` one pass over
        the history views (every turn of the campaign: linear in the log)."""
        wanted = sorted(set(seqs))
        if not sweep:
            return {seq: self.figures(v.board_at(seq)) for seq in wanted}
        return self._sweep(v, wanted)

    def _sweep(self, v: Views, wanted: list[int]) -> dict[int, dict[str, dict[str, Any]]]:
        """Walk the history rows once in event order, keeping each nation's figures up to date,
        and take them at each wanted event."""
        units: dict[str, tuple[str, str, int]] = {}  # unit -> (type, nation, damage)
        count: Counter[str] = Counter()
        damaged: Counter[str] = Counter()
        cost: Counter[str] = Counter()
        by_type: dict[str, Counter[str]] = {n: Counter() for n in self.turn_order}
        ntr: dict[str, dict[str, int]] = {n: {} for n in self.turn_order}
        nation_rows: dict[str, tuple[int, int, dict[str, int]]] = {}
        current: dict[tuple[str, Any], Any] = {}  # (kind, key) -> the row now valid
        closing: list[tuple[int, int, tuple[str, Any]]] = []
        dirty = set(self.turn_order)
        last: dict[str, dict[str, Any]] = {}
        out: dict[int, dict[str, dict[str, Any]]] = {}

        def unit_change(uid: str, value: tuple[str, str, int] | None) -> None:
            old = units.pop(uid, None)
            if old is not None:
                t, n, d = old
                count[n] -= 1
                damaged[n] -= 1 if d else 0
                cost[n] -= self.costs.get(t, 0)
                by_type.setdefault(n, Counter())[t] -= 1
                dirty.add(n)
            if value is not None:
                t, n, d = value
                units[uid] = value
                self.unit_info[uid] = (t, n)
                count[n] += 1
                damaged[n] += 1 if d else 0
                cost[n] += self.costs.get(t, 0)
                by_type.setdefault(n, Counter())[t] += 1
                dirty.add(n)

        def apply(kind: str, row: Any, valid: bool) -> None:
            if kind == "unit":
                unit_change(row.unit_id, (row.type, row.nation, row.damage) if valid else None)
            elif kind == "ntr":
                zones = ntr.setdefault(row.nation, {})
                if valid and row.count:
                    zones[row.zone] = row.count
                else:
                    zones.pop(row.zone, None)
                dirty.add(row.nation)
            elif valid:
                nation_rows[row.nation] = (row.balance, row.ntr_lost, json.loads(row.tech))
                dirty.add(row.nation)
            else:
                nation_rows.pop(row.nation, None)
                dirty.add(row.nation)

        def key_of(kind: str, row: Any) -> tuple[str, Any]:
            if kind == "unit":
                return (kind, row.unit_id)
            if kind == "ntr":
                return (kind, (row.nation, row.zone))
            return (kind, row.nation)

        def settle(upto: int) -> None:
            while closing and closing[0][0] <= upto:
                _, _, key = heapq.heappop(closing)
                row = current.get(key)
                if row is not None and row.to_seq is not None and row.to_seq <= upto:
                    del current[key]
                    apply(key[0], row, False)

        rows = v.history(wanted[-1])
        pending = next(rows, None)
        serial = 0
        for point in wanted:
            while pending is not None and pending[1].from_seq <= point:
                kind, row = pending
                settle(row.from_seq)
                key = key_of(kind, row)
                current[key] = row
                apply(kind, row, True)
                if row.to_seq is not None:
                    serial += 1
                    heapq.heappush(closing, (row.to_seq, serial, key))
                pending = next(rows, None)
            settle(point)
            for n in dirty:
                balance, lost, tech = nation_rows.get(n, (0, 0, {}))
                zones = ntr.get(n, {})
                last[n] = self._figures(
                    balance,
                    dict(sorted((z, c) for z, c in zones.items() if c)),
                    lost,
                    count[n],
                    damaged[n],
                    cost[n],
                    by_type.get(n, Counter()),
                    tech,
                )
            dirty.clear()
            out[point] = {n: last[n] for n in self.turn_order}
        return out

    def series(self, v: Views, turns: list[int], sweep: bool) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
        """The series entries of these turns, and the figures after every event they end
        (and after event 1, the start)."""
        ends = v.turn_ends(max(turns) if turns else 0, None if sweep else turns)
        missing = [k for k in turns if k not in ends]
        if missing:
            raise InputError(f"turn {missing[0]} has not been played in this campaign")
        figures = self.figures_at(v, [1, *(ends[k][0] for k in turns)], sweep)
        entries = []
        for k in turns:
            seq, round_, nation, phase = ends[k]
            entries.append(
                {
                    "turn": k,
                    "round": round_,
                    "nation": nation,
                    "seq": seq,
                    "complete": k < self.current,
                    "phase": phase,
                    "nations": figures[seq],
                }
            )
        return entries, figures

    def chart_turns(self, upto: int) -> list[int]:
        """The turns a chart shows up to turn `upto`: the last turn of every round (of every
        few rounds in a long campaign), and `upto` itself."""
        per_round = len(self.turn_order)
        rounds = upto // per_round
        step = max(1, -(-rounds // CHART_POINTS))
        turns = [r * per_round for r in range(step, rounds + 1, step)]
        if not turns or turns[-1] != upto:
            turns.append(upto)
        return turns


# ----- one turn -----


def _roll(r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    return {
        "seq": r["seq"],
        "roll": d["roll"],
        "roller": d["roller"],
        "unit": d.get("unit"),
        "rule": d["rule"],
        "purpose": d["purpose"],
        "kind": d["kind"],
        "faces": d["faces"],
        "values": list(d["values"]),
        "target": d.get("target"),
        "base_target": d.get("base_target"),
        "success_when": d.get("success_when", "at_most"),
        "modifiers": list(d.get("modifiers", [])),
        "outcome": d.get("outcome", ""),
        "source": d.get("source", "auto"),
        "reference": d.get("reference"),
        "battle": d.get("battle"),
        "undone_by": r["undone_by"],
    }


def _step(r: dict[str, Any]) -> dict[str, Any]:
    return {"seq": r["seq"], "kind": r["kind"], "rule": r["rule"], "summary": r["summary"], "undone_by": r["undone_by"]}


def _undo(r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    return {
        "seq": r["seq"],
        "turn": r["turn"],
        "undone_from": d["undone_from"],
        "undone_to": d["undone_to"],
        "override": bool(d["override"]),
        "reason": d.get("reason", ""),
        "rolls": list(d.get("rolls", [])),
        "agreed_by": list(d.get("agreed_by", [])),
        "summary": r["summary"],
        "undone_by": r["undone_by"],
        "undone_events": [],
    }


def _events_between(v: Views, first: int, last: int) -> list[dict[str, Any]]:
    """The index rows of events first..last: what an undo took back, whichever turn they were in."""
    rows = v.index_rows([event_index.c.seq >= first, event_index.c.seq <= last])
    return [
        {"seq": r.seq, "turn": r.turn, "phase": r.phase, "kind": r.kind, "rule": r.rule or "", "summary": r.summary}
        for r in rows
    ]


def _casualty(ctx: _Context, r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    unit_type, nation = ctx.unit(d["unit"])
    return {
        "seq": r["seq"],
        "unit": d["unit"],
        "type": unit_type,
        "nation": nation,
        "result": "sunk" if d["sunk"] else "damaged",
        "battle": d.get("battle"),
        "rule": d.get("rule", r["rule"]),
        "undone_by": r["undone_by"],
    }


def _turn(
    ctx: _Context,
    number: int,
    records: list[dict[str, Any]],
    undos_elsewhere: list[dict[str, Any]],
    end: dict[str, Any],
) -> dict[str, Any]:
    first = records[0] if records else None
    section: dict[str, Any] = {
        "turn": number,
        "round": end["round"] if first is None else first["round"],
        "nation": end["nation"] if first is None else first["nation"],
        "complete": number < ctx.current,
        "first_seq": first["seq"] if first else None,
        "last_seq": records[-1]["seq"] if records else None,
        "events": [{**_step(r), "phase": r["phase"]} for r in records],
        "moves": [],
        "ntr_placed": [],
        "research": [],
        "battles": [],
        "rolls": [],
        "casualties": [],
        "ntr_lost": [],
        "resources": [],
        "undos": [],
        "purchases": [],
        "unplaced": {},
        "adjustments": [],
        "dice_record": [],
        "other": [],
        "end": {
            "seq": end["seq"],
            "phase": end["phase"],
            "nations": end["nations"],
            # The log's hash after the turn: posted to the group, it pins this history down.
            "hash": next((r["data"]["hash"] for r in reversed(records) if r["seq"] == end["seq"]), None),
        },
    }
    battles: dict[int, dict[str, Any]] = {}
    research: dict[int, dict[str, Any]] = {}

    def battle_of(r: dict[str, Any]) -> dict[str, Any]:
        number = r["battle"]
        if number not in battles:
            battles[number] = {
                "battle": number,
                "kind": "convoy",
                "zone": r["zones"][0] if r["zones"] else None,
                "attacker": None,
                "defender": None,
                "submarines": [],
                "ntr": None,
                "seq": r["seq"],
                "undone_by": r["undone_by"],
                "rolls": [],
                "steps": [],
                "casualties": [],
                "ntr_destroyed": 0,
                "ended": False,
                "survivors": [],
            }
        return battles[number]

    for r in records:
        kind, d = r["kind"], r.get("data", {})
        if kind == "PhaseAdvanced":
            continue
        if kind in DICE_RECORD:
            section["dice_record"].append(_step(r))
            continue
        if kind == "DiceRolled":
            roll = _roll(r)
            section["rolls"].append(roll)
            if roll["battle"] is not None:
                battle_of(r)["rolls"].append(roll)
            elif roll["kind"] == "research" and d["action"] in research:
                entry = research[d["action"]]
                entry["roll"] = roll
                entry["success"] = roll["outcome"] == "success"
            else:
                section["other"].append(_step(r))
            continue
        if kind == "UnitsMoved":
            section["moves"].append(
                {
                    "seq": r["seq"],
                    "phase": r["phase"],
                    "nation": d["nation"],
                    "units": list(d["units"]),
                    "path": list(d["path"]),
                    "hostile_passed": list(d["hostile_passed"]),
                    "carried": list(d["carried"]),
                    "undone_by": r["undone_by"],
                }
            )
        elif kind == "NtrPlaced":
            section["ntr_placed"].append(
                {
                    "seq": r["seq"],
                    "nation": d["nation"],
                    "zone": d["zone"],
                    "count": d["count"],
                    "undone_by": r["undone_by"],
                }
            )
        elif kind == "ResearchPaid":
            entry = {
                "seq": r["seq"],
                "nation": d["nation"],
                "technology": d["technology"],
                "cost": d["cost"],
                "roll": None,
                "success": False,
                "level": None,
                "acquired": False,
                "undone_by": r["undone_by"],
            }
            research[d["action"]] = entry
            section["research"].append(entry)
        elif kind == "TechnologyAdvanced":
            found = research.get(d["action"])
            if found is not None:
                found["level"], found["acquired"] = d["level"], bool(d["acquired"])
            else:
                section["other"].append(_step(r))
        elif kind == "ResourcesCollected":
            section["resources"].append(
                {
                    "seq": r["seq"],
                    **{k: d[k] for k in ("nation", "ntr_value", "income", "lost", "collected", "balance")},
                    "undone_by": r["undone_by"],
                }
            )
        elif kind == "ActionUndone":
            section["undos"].append(_undo(r))
        elif kind in ("UnitsPurchased", "UnitsPlaced"):
            # PU1, PU2: what was bought and placed, and what still waits to be placed.
            section["purchases"].append(_step(r))
            if not r["undone_by"]:
                waiting = section["unplaced"].setdefault(d["nation"], {})
                change = d["count"] if kind == "UnitsPurchased" else -len(d["units"])
                waiting[d["unit_type"]] = waiting.get(d["unit_type"], 0) + change
        elif kind == "Adjusted":
            section["adjustments"].append({**_step(r), "reason": d["reason"]})
        elif r["battle"] is not None:
            b = battle_of(r)
            if kind == "ConvoyAttackDeclared":
                b.update(
                    zone=d["zone"],
                    attacker=d["attacker"],
                    defender=d["defender"],
                    submarines=list(d["submarines"]),
                    ntr=d["ntr"],
                    seq=r["seq"],
                    undone_by=r["undone_by"],
                )
                continue
            if kind in BATTLE_STARTS:
                b.update(
                    kind=BATTLE_STARTS[kind],
                    zone=d["zone"],
                    attacker=d["nation"],
                    defender=d["defender"],
                    submarines=list(d.get("submarines", [])),
                    seq=r["seq"],
                    undone_by=r["undone_by"],
                )
            if kind != "BattleAdvanced":
                b["steps"].append(_step(r))
            if kind == "UnitHit":
                casualty = _casualty(ctx, r)
                b["casualties"].append(casualty)
                section["casualties"].append(casualty)
            elif kind == "NtrDestroyed":
                lost = {
                    "seq": r["seq"],
                    **{k: d[k] for k in ("nation", "zone", "count", "rolled")},
                    "battle": d["battle"],
                    "undone_by": r["undone_by"],
                }
                section["ntr_lost"].append(lost)
                if not r["undone_by"]:
                    b["ntr_destroyed"] += d["count"]
            elif kind == "BattleEnded":
                b["ended"] = not r["undone_by"]
                b["survivors"] = list(d["survivors"])
        elif kind == "UnitHit":
            section["casualties"].append(_casualty(ctx, r))
        else:
            section["other"].append(_step(r))
    section["unplaced"] = {
        n: {t: c for t, c in sorted(w.items()) if c} for n, w in sorted(section["unplaced"].items()) if any(w.values())
    }
    section["battles"] = [battles[k] for k in sorted(battles)]
    seen = {u["seq"] for u in section["undos"]}
    section["undos"].extend(u for u in undos_elsewhere if u["seq"] not in seen)
    section["undos"].sort(key=lambda u: u["seq"])
    return section


def build_report(
    t: Tracker,
    cid: UUID,
    turn: int | None = None,
    fmt: str = "json",
    progress: Callable[[int], AbstractContextManager[Callable[[int], None]]] | None = None,
) -> dict[str, Any]:
    """The report of national turn `turn`, or of the whole campaign when `turn` is None.

    For `fmt` "md" and "html" a one-turn report holds only the series entries it shows (the
    turn and the one before it), and HTML adds `chart`: the chart points (see `chart_turns`),
    and `map`: {seq, svg}, the board map after the last event of the last turn reported.

    `progress(total)`, when given, is a context manager (such as `tracker.cli_common.progress`
    with its label bound) yielding `tick(n)`: it gets the number of turns reported and a tick
    per turn built. It changes nothing in the report."""
    ctx = _Context(t, cid)
    if turn is not None:
        ctx.check_turn(turn)
        wanted = [turn]
    else:
        wanted = list(range(1, ctx.current + 1))
    with t.views(cid) as v:
        if turn is None or fmt == "json":
            shown = list(range(1, wanted[-1] + 1))
        else:
            shown = [k for k in (turn - 1, turn) if k >= 1]
        charted = ctx.chart_turns(wanted[-1]) if fmt == "html" else []
        full = turn is None or fmt == "json"
        series, figures = ctx.series(v, sorted(set(shown) | set(charted)), sweep=full)
        start = {"seq": 1, "nations": figures[1]}
        by_number = {e["turn"]: e for e in series}
        # Events recorded by another writer after the campaign was read wait for the next report.
        records = [r for r in log_records(t, cid, turn=turn, with_data=True, views=v) if r["seq"] <= ctx.version]
        by_turn: dict[int, list[dict[str, Any]]] = {k: [] for k in wanted}
        for r in records:
            if r["turn"] in by_turn:
                by_turn[r["turn"]].append(r)
        # Undos recorded in another turn that took back events of a reported turn.
        local = {r["seq"] for r in records}
        outside = sorted({r["undone_by"] for r in records if r["undone_by"] and r["undone_by"] not in local})
        undos: dict[int, dict[str, Any]] = {}
        for seq in outside:
            for r in log_records(t, cid, seq=seq, with_data=True, views=v):
                undos[seq] = _undo(r)
        turns = []
        ticking = nullcontext(lambda _n: None) if progress is None else progress(len(wanted))
        with ticking as tick:
            for k in wanted:
                elsewhere = [undos[s] for s in sorted({r["undone_by"] for r in by_turn[k] if r["undone_by"] in undos})]
                turns.append(_turn(ctx, k, by_turn[k], elsewhere, by_number[k]))
                tick(1)
        # What every undo took back, even from a turn the campaign has not reached again.
        taken: dict[int, list[dict[str, Any]]] = {}
        for section in turns:
            for u in section["undos"]:
                if u["seq"] not in taken:
                    taken[u["seq"]] = _events_between(v, u["undone_from"], u["undone_to"])
                u["undone_events"] = taken[u["seq"]]
        if fmt == "html":
            # The map of the board at the end of the (last) turn reported, as inline SVG, from
            # the views this report already caught up.
            from tracker.board_map import board_svg

            end = turns[-1]["end"]["seq"]
            report_map = {"seq": end, "svg": board_svg(t.board_from(v, at=end), ctx.scenario, ctx.ruleset)}
    report = {
        "schema": SCHEMA,
        "scope": "turn" if turn is not None else "campaign",
        "campaign": ctx.campaign,
        "position": ctx.position,
        "start": start,
        "series": [by_number[k] for k in shown],
        "turns": turns,
    }
    from tracker.luck import build_luck

    # The rolls' luck only: the battles' odds are `tracker luck`'s (they replay each battle).
    report["luck"] = build_luck(t, cid, report, battles=False, ruleset=ctx.ruleset)
    if fmt == "html":
        report["chart"] = [by_number[k] for k in charted]
        report["map"] = report_map
    return report


# ----- statistics -----


def stats_rows(t: Tracker, cid: UUID) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per nation per played turn (the figures at the end of the turn), and the
    technology columns (`tech_<id>`)."""
    ctx = _Context(t, cid)
    tech_columns = [f"tech_{tech}" for tech in ctx.techs]
    rows = []
    with t.views(cid) as v:
        series, _ = ctx.series(v, list(range(1, ctx.current + 1)), sweep=True)
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


# ----- shared wording -----


def target_text(roll: dict[str, Any], ascii_only: bool = True) -> str:
    """'<=4 (base 3; TE4 Advanced ASW +1)', '>=9', or '' for a roll with no target."""
    if roll["target"] is None:
        if roll["modifiers"]:
            return "; ".join(_modifier_text(m) for m in roll["modifiers"])
        return ""
    at_most = roll["success_when"] == "at_most"
    op = ("<=" if at_most else ">=") if ascii_only else ("\u2264" if at_most else "\u2265")
    text = f"{op}{roll['target']}"
    if roll["modifiers"]:
        text += f" (base {roll['base_target']}; " + "; ".join(_modifier_text(m) for m in roll["modifiers"]) + ")"
    return text


def _modifier_text(m: dict[str, Any]) -> str:
    change = f"set {m['set']}" if m.get("set") is not None else f"{m.get('add', 0):+d}"
    return f"{m['rule']} {tech_name(m['technology'])} {change}"


def dice_text(roll: dict[str, Any]) -> str:
    text = f"D{roll['faces']}: " + ", ".join(str(v) for v in roll["values"])
    if roll["source"] == "manual":
        text += " (manual" + (f", ref {roll['reference']}" if roll["reference"] else "") + ")"
    return text


def move_text(m: dict[str, Any]) -> str:
    text = f"{m['nation']} moves {', '.join(m['units'])}: {' -> '.join(m['path'])}"
    if m["hostile_passed"]:
        text += f" (through hostile {', '.join(m['hostile_passed'])})"
    if m["carried"]:
        text += f", carrying {', '.join(m['carried'])}"
    return text


def research_result(entry: dict[str, Any]) -> str:
    if entry["roll"] is None:
        return "no roll recorded"
    if entry["success"]:
        level = f"level {entry['level']}" if entry["level"] is not None else "advances"
        return f"success: {level}" + (" (acquired)" if entry["acquired"] else "")
    return "failure"


def undo_text(u: dict[str, Any]) -> str:
    span = (
        f"event {u['undone_from']}"
        if u["undone_from"] == u["undone_to"]
        else f"events {u['undone_from']}-{u['undone_to']}"
    )
    text = f"event {u['seq']} undid {span}"
    if u["rolls"]:
        text += f", taking back dice roll(s) {', '.join(map(str, u['rolls']))}"
    if u.get("agreed_by"):
        text += f", agreed by {', '.join(u['agreed_by'])}"
    return text


def undone_listing(u: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The events an undo took back, phase changes apart (only counted)."""
    events = [e for e in u["undone_events"] if e["kind"] != "PhaseAdvanced"]
    return events, len(u["undone_events"]) - len(events)


# Listed apart, so a group sees every exception to its dice (D4, RK3).
DICE_RECORD = frozenset({"DiceSourceSwitched", "TypedDiceAccepted", "DiceRerolled"})

# The first event of each kind of battle besides convoy battles (SM2, AS1, NC1).
BATTLE_STARTS = {"InterceptionStarted": "interception", "AswCombatStarted": "asw", "NavalBattleStarted": "naval"}
BATTLE_NAMES = {"convoy": "Convoy battle", "interception": "Interception", "asw": "ASW combat", "naval": "Naval battle"}
BATTLE_RULES = {"convoy": "CV1", "interception": "SM2", "asw": "AS1", "naval": "NC1"}


def roll_line(r: dict[str, Any]) -> str:
    """One roll on one line: 'GB-DD1 (destroyer) convoy search: 2 (<=4) -> success'."""
    values = ", ".join(str(v) for v in r["values"])
    if r["source"] == "manual":
        values += " (manual" + (f", ref {r['reference']}" if r["reference"] else "") + ")"
    target = target_text(r)
    text = f"{r['purpose']}: {values}" + (f" ({target})" if target else "")
    return text + (f" -> {r['outcome']}" if r["outcome"] else "")


_BATTLE_PREFIX = re.compile(r"^battle \d+: ")


def step_text(s: dict[str, Any]) -> str:
    """A battle step without the 'battle N: ' its heading already says."""
    return _BATTLE_PREFIX.sub("", s["summary"])


def battle_heading(b: dict[str, Any]) -> str:
    return f"{BATTLE_NAMES.get(b['kind'], 'Battle')} {b['battle']} in {b['zone']}"


def battle_declaration(b: dict[str, Any]) -> str:
    if b["attacker"] is None:
        return "declaration not in this turn"
    if b["kind"] == "interception":
        return f"{b['defender']} may search {b['attacker']}'s {', '.join(b['submarines'])} passing through"
    if b["kind"] == "asw":
        return f"{b['attacker']} hunts {b['defender']}'s {', '.join(b['submarines'])}"
    if b["kind"] == "naval":
        return f"{b['attacker']} attacks {b['defender']}"
    return (
        f"{b['attacker']} attacks {b['defender']}'s {b['ntr']} NTR with {len(b['submarines'])} submarine(s): "
        f"{', '.join(b['submarines'])}"
    )


def battle_result(b: dict[str, Any]) -> str:
    sunk = [c["unit"] for c in b["casualties"] if c["result"] == "sunk" and not c["undone_by"]]
    damaged = [c["unit"] for c in b["casualties"] if c["result"] == "damaged" and not c["undone_by"]]
    parts = [f"sunk: {', '.join(sunk)}" if sunk else "nothing sunk"]
    if damaged:
        parts.append(f"damaged: {', '.join(damaged)}")
    if b["kind"] != "convoy":
        parts.append(f"still there: {', '.join(b['survivors']) or 'none'}" if b["ended"] else "not finished")
        return "; ".join(parts)
    parts.append(f"{b['ntr_destroyed']} NTR destroyed")
    if b["ended"]:
        parts.append(f"surviving submarines: {', '.join(b['survivors']) or 'none'}")
    else:
        parts.append("not finished")
    return "; ".join(parts)


def unit_type_columns(report: dict[str, Any], turn: dict[str, Any]) -> list[str]:
    present = {t for f in turn["end"]["nations"].values() for t in f["by_type"]}
    return [t for t in report["campaign"]["unit_types"] if t in present]


def _change(now: int, before: int | None) -> str:
    if before is None or now == before:
        return str(now)
    return f"{now} ({now - before:+d})"


def _previous(report: dict[str, Any], turn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    k = turn["turn"]
    if k == 1:
        nations: dict[str, dict[str, Any]] = report["start"]["nations"]
        return nations
    series = report["series"]
    # The whole campaign's series holds every turn in order: no search through it per turn.
    candidates = [series[k - 2]] if 0 <= k - 2 < len(series) and series[k - 2]["turn"] == k - 1 else series
    for entry in candidates:
        if entry["turn"] == k - 1:
            previous: dict[str, dict[str, Any]] = entry["nations"]
            return previous
    return {}


def fleet_rows(report: dict[str, Any], turn: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Units per nation and type at the end of a turn, with changes since the turn before."""
    types = unit_type_columns(report, turn)
    before = _previous(report, turn)
    header = ["Nation", *[type_name(t) for t in types], "Units", "Damaged", "Cost"]
    rows = []
    for nation, f in turn["end"]["nations"].items():
        b = before.get(nation, {})
        rows.append(
            [
                nation,
                *[_change(f["by_type"].get(t, 0), b.get("by_type", {}).get(t, 0) if b else None) for t in types],
                _change(f["units"], b.get("units")),
                str(f["damaged"]),
                _change(f["fleet_cost"], b.get("fleet_cost")),
            ]
        )
    return header, rows


def trade_rows(report: dict[str, Any], turn: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """NTR, losses, resources and technology per nation at the end of a turn."""
    techs = report["campaign"]["technologies"]
    names = report["campaign"]["tech_names"]
    before = _previous(report, turn)
    header = ["Nation", "NTR at sea", "NTR by zone", "NTR lost", "Resources", *[names[t] for t in techs]]
    rows = []
    for nation, f in turn["end"]["nations"].items():
        b = before.get(nation, {})
        zones = ", ".join(f"{z} {c}" for z, c in f["ntr"].items()) or "-"
        rows.append(
            [
                nation,
                _change(f["ntr_at_sea"], b.get("ntr_at_sea")),
                zones,
                _change(f["ntr_lost"], b.get("ntr_lost")),
                _change(f["balance"], b.get("balance")),
                *[_change(f["tech"][t], b.get("tech", {}).get(t)) for t in techs],
            ]
        )
    return header, rows


def turn_title(turn: dict[str, Any]) -> str:
    status = "" if turn["complete"] else " (in progress)"
    return f"Turn {turn['turn']}: {turn['nation']}, round {turn['round']}{status}"


def has_actions(turn: dict[str, Any]) -> bool:
    keys = (
        "moves",
        "ntr_placed",
        "research",
        "purchases",
        "adjustments",
        "battles",
        "casualties",
        "ntr_lost",
        "resources",
        "undos",
        "dice_record",
        "other",
    )
    return any(turn[k] for k in keys)


# ----- Markdown -----

# Characters that could start emphasis, code, links, strikethrough, a table cell or (a "<"
# before a letter, "/", "!" or "?") raw HTML and autolinks.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~]|<(?=[A-Za-z/!?]))")


def md(text: object) -> str:
    """Text safe inside Markdown (and a table cell): no markup, no HTML, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _struck(text: str, undone_by: int | None) -> str:
    return f"~~{text}~~ *(undone by event {undone_by})*" if undone_by else text


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _md_cells(cells: list[str], undone_by: int | None) -> list[str]:
    if not undone_by:
        return cells
    out = [f"~~{c}~~" if c else c for c in cells]
    out[-1] += f" *(undone by event {undone_by})*"
    return out


def _md_rolls(rolls: list[dict[str, Any]]) -> list[str]:
    rows = [
        _md_cells(
            [
                str(r["roll"]),
                md(r["roller"]),
                md(r["purpose"]),
                md(r["rule"]),
                md(dice_text(r)),
                md(target_text(r)) or "-",
                md(r["outcome"]) or "-",
            ],
            r["undone_by"],
        )
        for r in rolls
    ]
    return _md_table(["Roll", "By", "Why", "Rule", "Dice", "Target", "Outcome"], rows)


def _md_turn(report: dict[str, Any], turn: dict[str, Any], level: int) -> list[str]:
    h = "#" * level
    out: list[str] = []
    span = f"events {turn['first_seq']}-{turn['last_seq']}" if turn["first_seq"] is not None else "no events"
    if level > 2:  # in a campaign report; a turn report's header line says it
        out.append(f"Phasing nation: **{md(turn['nation'])}** · round {turn['round']} · {span}")
        out.append("")
    if any(u["override"] for u in turn["undos"]):
        out += ["> **Override undo:** dice rolls were taken back in this turn (see *Undos*).", ""]
    if not has_actions(turn):
        out += ["Nothing but phase changes was recorded in this turn.", ""]
    if turn["research"]:
        out += [f"{h} Research", ""]
        rows = [
            _md_cells(
                [
                    md(r["nation"]),
                    md(tech_name(r["technology"])),
                    str(r["cost"]),
                    md(dice_text(r["roll"])) if r["roll"] else "-",
                    md(target_text(r["roll"])) if r["roll"] else "-",
                    md(research_result(r)),
                    str(r["seq"]),
                ],
                r["undone_by"],
            )
            for r in turn["research"]
        ]
        out += _md_table(["Nation", "Technology", "Cost", "Dice", "Needed", "Result", "Event"], rows) + [""]
    if turn["moves"]:
        out += [f"{h} Moves", ""]
        for m in turn["moves"]:
            out.append(
                f"- {md(phase_name(m['phase']))}: {_struck(md(move_text(m)), m['undone_by'])} (event {m['seq']})"
            )
        out.append("")
    if turn["ntr_placed"]:
        out += [f"{h} NTR placed", ""]
        for p in turn["ntr_placed"]:
            text = md(f"{p['nation']} places {p['count']} NTR in {p['zone']}")
            out.append(f"- {_struck(text, p['undone_by'])} (event {p['seq']})")
        out.append("")
    if turn["purchases"]:
        out += [f"{h} Purchases and placement", ""]
        for p in turn["purchases"]:
            out.append(f"- {_struck(md(p['summary']), p['undone_by'])} ({md(p['rule'])}, event {p['seq']})")
        for nation, waiting in turn["unplaced"].items():
            what = ", ".join(f"{c} {t}" for t, c in waiting.items())
            out.append(f"- Bought by {md(nation)} and not yet placed: {md(what)} (PU2)")
        out.append("")
    if turn["adjustments"]:
        out += [f"{h} Adjustments", ""]
        for a in turn["adjustments"]:
            out.append(f"- {_struck(md(a['summary']), a['undone_by'])} (AD1, event {a['seq']})")
        out.append("")
    shown = {b["battle"] for b in turn["battles"]}
    for b in turn["battles"]:
        # Each battle once: its declaration, then every roll and step in the order recorded,
        # one line each, then the result (no separate table of its dice).
        out += [f"{h} {md(battle_heading(b))}", ""]
        rule = BATTLE_RULES.get(b["kind"], "CV1")
        out.append(_struck(md(battle_declaration(b)), b["undone_by"]) + f" ({rule}, event {b['seq']})")
        out.append("")
        lines = [(r["seq"], f"- {_struck(md(roll_line(r)), r['undone_by'])} ({md(r['rule'])})") for r in b["rolls"]]
        lines += [(s["seq"], f"- {_struck(md(step_text(s)), s['undone_by'])} ({md(s['rule'])})") for s in b["steps"]]
        out += [line for _, line in sorted(lines, key=lambda x: x[0])]
        if lines:
            out.append("")
        out += [f"**Result:** {md(battle_result(b))}", ""]
    # Casualties and NTR lost in the battles above are in their results already.
    casualties = [c for c in turn["casualties"] if c["battle"] not in shown]
    if casualties:
        out += [f"{h} Other casualties", ""]
        rows = [
            _md_cells(
                [
                    md(c["unit"]),
                    md(type_name(c["type"])),
                    md(c["nation"]),
                    c["result"],
                    md(c["rule"]),
                    str(c["seq"]),
                ],
                c["undone_by"],
            )
            for c in casualties
        ]
        out += _md_table(["Unit", "Type", "Nation", "Result", "Rule", "Event"], rows) + [""]
    ntr_lost = [n for n in turn["ntr_lost"] if n["battle"] not in shown]
    if ntr_lost:
        out += [f"{h} NTR lost", ""]
        rows = [
            _md_cells(
                [md(n["nation"]), md(n["zone"]), str(n["count"]), str(n["rolled"]), str(n["battle"]), str(n["seq"])],
                n["undone_by"],
            )
            for n in ntr_lost
        ]
        out += _md_table(["Nation", "Zone", "Lost", "Rolled", "Battle", "Event"], rows) + [""]
    if turn["resources"]:
        out += [f"{h} Resources collected", ""]
        rows = [
            _md_cells(
                [
                    md(c["nation"]),
                    str(c["ntr_value"]),
                    str(c["income"]),
                    str(c["lost"]),
                    f"**{c['collected']}**",
                    str(c["balance"]),
                    str(c["seq"]),
                ],
                c["undone_by"],
            )
            for c in turn["resources"]
        ]
        header = ["Nation", "From NTR", "Other income", "NTR lost to convoys", "Collected", "Balance", "Event"]
        out += _md_table(header, rows) + [""]
    if turn["undos"]:
        out += [f"{h} Undos", ""]
        for u in turn["undos"]:
            label = "**OVERRIDE undo**" if u["override"] else "Undo"
            text = f"{label}: {md(undo_text(u))}"
            if u["reason"]:
                text += f". Reason: *{md(u['reason'])}*"
            if u["turn"] != turn["turn"]:
                text += f" (recorded in turn {u['turn']})"
            out.append(f"- {_struck(text, u['undone_by'])}")
            events, phase_changes = undone_listing(u)
            for e in events:
                out.append(
                    f"  - ~~{md(e['summary'])}~~ (turn {e['turn']}, {md(e['rule'] or e['kind'])}, event {e['seq']})"
                )
            if phase_changes:
                out.append(f"  - ~~{phase_changes} phase change(s)~~")
        out.append("")
    if turn["dice_record"]:
        out += [f"{h} Dice switches, overrides and rerolls", ""]
        for o in turn["dice_record"]:
            out.append(f"- {_struck(md(o['summary']), o['undone_by'])} ({md(o['rule'])}, event {o['seq']})")
        out.append("")
    if turn["other"]:
        out += [f"{h} Other events", ""]
        for o in turn["other"]:
            out.append(f"- {_struck(md(o['summary']), o['undone_by'])} ({md(o['rule'])}, event {o['seq']})")
        out.append("")
    where = f"after event {turn['end']['seq']}"
    header, rows = fleet_rows(report, turn)
    out += [f"{h} Forces at the end of the turn ({where})", ""]
    out += _md_table([md(c) for c in header], [[md(c) for c in row] for row in rows]) + [""]
    header, rows = trade_rows(report, turn)
    out += [f"{h} Trade and resources at the end of the turn", ""]
    out += _md_table([md(c) for c in header], [[md(c) for c in row] for row in rows]) + [""]
    if turn["end"].get("hash"):
        head = f"{turn['end']['seq']}:{turn['end']['hash']}"
        out += [f"Log head after event {turn['end']['seq']}: `{head}` (check with `tracker verify --head {head}`)", ""]
    return out


def report_meta(report: dict[str, Any], escape: Any) -> str:
    """The line under the title: what the report covers first, then where the campaign is now."""
    c, pos = report["campaign"], report["position"]
    if report["scope"] == "turn":
        turn = report["turns"][0]
        covers = f"turn {turn['turn']} ({turn['nation']}, round {turn['round']})"
        if turn["first_seq"] is not None:
            covers += f", events {turn['first_seq']}-{turn['last_seq']}"
    else:
        covers = f"turns 1-{len(report['turns'])}"
    now = f"turn {pos['turn']}, {pos['nation']}, {phase_name(pos['phase'])} (event {pos['seq']})"
    return (
        f"Report of {escape(covers)} · {escape(c['scenario_title'])} · ruleset {escape(c['ruleset'])} · "
        f"{escape(c['dice_mode'])} dice · the campaign is now at {escape(now)}"
    )


def render_markdown(report: dict[str, Any]) -> str:
    c = report["campaign"]
    out: list[str] = []
    if report["scope"] == "turn":
        turn = report["turns"][0]
        out += [f"# {md(c['name'])}: {md(turn_title(turn))}", ""]
    else:
        out += [f"# {md(c['name'])}: campaign report, turns 1-{len(report['turns'])}", ""]
    out += [report_meta(report, md), ""]
    if report["scope"] == "turn":
        out += _md_turn(report, report["turns"][0], 2)
    else:
        out += ["## Progress", "", "Each cell: resources / NTR at sea / units at the end of the turn.", ""]
        nations = c["turn_order"]
        rows = []
        for entry in report["series"]:
            cells = [str(entry["turn"]), f"{entry['round']}", md(entry["nation"])]
            for n in nations:
                f = entry["nations"][n]
                cells.append(f"{f['balance']} / {f['ntr_at_sea']} / {f['units']}")
            rows.append(cells)
        out += _md_table(["Turn", "Round", "Phasing", *[md(n) for n in nations]], rows) + [""]
        for turn in report["turns"]:
            out += [f"## {md(turn_title(turn))}", ""]
            out += _md_turn(report, turn, 3)
    out += _md_luck(report)
    return "\n".join(out).rstrip("\n") + "\n"


def _md_luck(report: dict[str, Any]) -> list[str]:
    """The luck table: expected / actual per nation and turn, each roll at its odds."""
    from tracker.luck import rows_for

    luck = report.get("luck")
    if not luck:
        return []
    rows = [r for r in rows_for(luck) if any(not c.startswith("0.00 / 0") for c in r[2:])]
    if not rows:
        return []
    metrics = [m for m in luck["metrics"] if m in ("ntr_destroyed", "ntr_lost", "searches", "hits")]
    keep = [0, 1] + [2 + list(luck["metrics"]).index(m) for m in metrics]
    header = ["Nation", "Turn", *(md(luck["metrics"][m]) for m in metrics)]
    note = "Expected / actual, each roll at its odds when it was rolled (`tracker luck` adds the battles)."
    out = ["## Luck", "", note, ""]
    return out + _md_table(header, [[md(r[i]) for i in keep] for r in rows]) + [""]


# ----- JSON -----


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


# ----- HTML -----


def _chart_figure(report: dict[str, Any], key: str, title: str, ylabel: str) -> Any:
    """One line chart of a per-nation figure at the end of each round (a matplotlib Figure, no
    pyplot): x is in rounds, so a point per round, and a long campaign's rounds are grouped."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    nations = report["campaign"]["turn_order"]
    sides = report["campaign"]["sides"]
    first_side = sides[nations[0]] if nations else None
    per_round = max(1, len(nations))
    entries = report.get("chart") or report["series"]
    xs = [0.0] + [e["turn"] / per_round for e in entries]
    points = [report["start"]["nations"]] + [e["nations"] for e in entries]
    few = len(xs) <= 40
    fig = Figure(figsize=(5.6, 3.0), layout="constrained")
    ax = fig.subplots()
    for i, nation in enumerate(nations):
        ax.plot(
            xs,
            [p[nation][key] for p in points],
            # Markers only while they stay apart; a long line is read by its shape.
            marker="o" if few else None,
            markersize=3.5,
            linewidth=1.4 if few else 1.0,
            color=PALETTE[i % len(PALETTE)],
            linestyle="-" if sides[nation] == first_side else "--",
            label=nation,
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


def _luck_figure(report: dict[str, Any]) -> Any:
    """Per nation, the running sum of actual minus expected (hits, searches, NTR destroyed,
    less NTR lost) by turn: above 0, luckier than the odds of its rolls."""
    from matplotlib.figure import Figure

    from tracker.luck import cumulative

    nations = report["campaign"]["turn_order"]
    fig = Figure(figsize=(5.6, 3.0), layout="constrained")
    ax = fig.subplots()
    for i, nation in enumerate(nations):
        xs, ys = cumulative(report["luck"], nation)
        ax.step(xs, ys, where="post", color=PALETTE[i % len(PALETTE)], linewidth=1.3, label=nation)
    ax.axhline(0, color="#888888", linewidth=0.8)
    ax.set_title("Luck: actual minus expected, cumulative")
    ax.set_xlabel("national turn")
    ax.set_ylabel("successes above the odds")
    ax.grid(True, alpha=0.3)
    fig.legend(fontsize=7, loc="outside right upper", title="nation", title_fontsize=7)
    return fig


def render_html(report: dict[str, Any]) -> str:
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tracker", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(
        phase_name=phase_name,
        tech_name=tech_name,
        type_name=type_name,
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


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "md":
        return render_markdown(report)
    if fmt == "bbcode":
        from tracker.report_bbcode import markdown_to_bbcode

        return markdown_to_bbcode(render_markdown(report))
    if fmt == "html":
        return render_html(report)
    if fmt == "json":
        return render_json(report)
    raise InputError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
