"""What a turn report reads once per command: the campaign, its turn spans and the figures at
the end of every turn, from the projections (see `tracker.report`)."""

from __future__ import annotations

import heapq
import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from domain.errors import InputError
from projections.positions import turn_number
from projections.views import BoardView, UnitOnBoard, Views
from tracker.reports.text import tech_name
from tracker.service.application import Tracker
from tracker.service.passed_over import passed_over

# At most this many points per chart line: a long campaign's rounds are grouped.
CHART_POINTS = 60


class ReportContext:
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
        # F8: turn 1 passed over as the campaign was created (its nation neutral in round 1):
        # its events are the creation's, reported as such, not as a turn that nation played.
        self.first_passed_over = passed_over(campaign, 1) is not None
        self.unit_info: dict[str, tuple[str, str]] = {}
        # Whole boards read for the figures (`figures_at`), by event: the map reuses them.
        self.boards: dict[int, BoardView] = {}
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
            played = "turn 1" if self.current == 1 else f"turns 1-{self.current}"
            raise InputError(
                f"turn {turn} has not been played in campaign {self.name!r} "
                f"(played: {played}; the current turn is {self.current})"
            )

    def figures(self, board: BoardView) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for u in board["units"]:
            self.unit_info[u["id"]] = (u["type"], u["nation"])
        units_of: dict[str, list[UnitOnBoard]] = {n: [] for n in self.turn_order}
        for u in board["units"]:
            units_of.setdefault(u["nation"], []).append(u)
        for nation in self.turn_order:
            units = units_of[nation]
            by_type = Counter(u["type"] for u in units)
            out[nation] = self.nation_figures(
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

    def nation_figures(
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
        """One nation's FIGURES (see `tracker.report`) from what the board or the history holds."""
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

    def figures_at(
        self, v: Views, seqs: list[int], sweep: bool, boards: Iterable[int] = ()
    ) -> dict[int, dict[str, dict[str, Any]]]:
        """The figures of every nation after each of these events: for a bounded number of
        points, counted in the database at all points together (a few ranged queries, whatever
        the log's length; the points in `boards` from their whole boards, so that their units
        are known by ID), or with `sweep` one pass over the history views (every turn of the
        campaign: linear in the log)."""
        wanted = sorted(set(seqs))
        if sweep:
            return self._sweep(v, wanted)
        whole = {seq for seq in boards if seq in wanted}
        self.boards.update(v.boards_at(whole))
        out = {seq: self.figures(self.boards[seq]) for seq in sorted(whole)}
        for seq, tally in v.tallies_at([seq for seq in wanted if seq not in whole]).items():
            out[seq] = self.tallied(tally)
        return out

    def tallied(self, tally: dict[str, list[tuple[Any, ...]]]) -> dict[str, dict[str, Any]]:
        """Every nation's figures from `Views.tallies_at` counts."""
        by_type: dict[str, Counter[str]] = {n: Counter() for n in self.turn_order}
        damaged: Counter[str] = Counter()
        for nation, type_, hurt, count in tally["units"]:
            by_type.setdefault(nation, Counter())[type_] += count
            damaged[nation] += count if hurt else 0
        ntr: dict[str, dict[str, int]] = {}
        for nation, zone, count in sorted(tally["ntr"]):
            if count:
                ntr.setdefault(nation, {})[zone] = count
        rows = {nation: (balance, lost, tech) for nation, balance, lost, tech in tally["nation"]}
        out = {}
        for nation in self.turn_order:
            balance, lost, tech = rows.get(nation, (0, 0, "{}"))
            types = by_type[nation]
            out[nation] = self.nation_figures(
                balance,
                ntr.get(nation, {}),
                lost,
                sum(types.values()),
                damaged[nation],
                sum(self.costs.get(t, 0) * n for t, n in types.items()),
                types,
                json.loads(tech),
            )
        return out

    def _sweep(self, v: Views, wanted: list[int]) -> dict[int, dict[str, dict[str, Any]]]:
        """Walk the history rows once in event order, keeping each nation's figures up to date,
        and take them at each wanted event."""
        sweep = _Sweep(self)
        rows = v.history(wanted[-1])
        pending = next(rows, None)
        out: dict[int, dict[str, dict[str, Any]]] = {}
        for point in wanted:
            while pending is not None and pending[1].from_seq <= point:
                sweep.open(*pending)
                pending = next(rows, None)
            sweep.settle(point)
            out[point] = sweep.figures()
        return out

    def played(self, v: Views, upto: int, near: list[int] | None = None) -> dict[int, tuple[int, int, str, str]]:
        """The ends of the played national turns up to `upto` (see `Views.turn_ends`): all of
        them, or for each turn in `near` only the last played within a round up to it (what
        `latest_played` picks there, in one bounded query). A turn without events is a neutral
        nation's, passed over (F8)."""
        if near is None:
            return v.turn_ends(upto)
        return v.latest_turn_ends(upto, [k for k in near if k >= 1], len(self.turn_order))

    def latest_played(self, ends: dict[int, Any], turn: int) -> int | None:
        """The last played turn at or before `turn` among `ends` (of `played` near `turn`)."""
        window = range(turn, max(0, turn - len(self.turn_order)), -1)
        return next((k for k in window if k in ends), None)

    def unplayed(self, turn: int) -> InputError:
        """The error for a one-turn report of a turn with no events."""
        said = self.t.passed_over(self.cid, turn)
        if said is not None:
            # Its TurnPassedOver is recorded by the `next` that ended the turn played last
            # before it, so that turn's report tells it (as `log --turn` and `state --turn` say).
            return InputError(
                f"turn {turn} ({said.nation}, round {said.round}) has no events in campaign {self.name!r}: "
                f"a neutral nation's turn is passed over (F8); the report of turn {said.logged} tells it "
                f"(tracker report --turn {said.logged})"
            )
        return InputError(f"turn {turn} has not been played in campaign {self.name!r}")

    def series(
        self,
        v: Views,
        turns: list[int],
        sweep: bool,
        ends: dict[int, tuple[int, int, str, str]] | None = None,
        detail: Iterable[int] = (),
    ) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
        """The series entries of these played turns, and the figures after every event they end
        (and after event 1, the start); `ends` as `played` read them, when it did; the turns in
        `detail` read from their whole boards (see `figures_at`)."""
        if ends is None:
            ends = v.turn_ends(max(turns) if turns else 0, None if sweep else turns)
        missing = [k for k in turns if k not in ends]
        if missing:
            raise self.unplayed(missing[0])
        figures = self.figures_at(v, [1, *(ends[k][0] for k in turns)], sweep, [ends[k][0] for k in detail])
        return [self._entry(k, ends[k], figures[ends[k][0]]) for k in turns], figures

    def _entry(self, turn: int, end: tuple[int, int, str, str], nations: dict[str, Any]) -> dict[str, Any]:
        """One series entry: a played turn, where it ended, and each nation's figures there."""
        seq, round_, nation, phase = end
        return {
            "turn": turn,
            "round": round_,
            "nation": nation,
            "seq": seq,
            "complete": turn < self.current,
            "passed_over": turn == 1 and self.first_passed_over,
            "phase": phase,
            "nations": nations,
        }

    def chart_series(
        self, v: Views, turns: list[int], ends: dict[int, tuple[int, int, str, str]]
    ) -> list[dict[str, Any]]:
        """Series entries of these played turns (`ends` as `played` read them) holding only what
        the charts draw of each nation (NTR at sea, balance, units, fleet cost), summed in the
        database at all points together: a chart of many points costs a few grouped queries,
        never every unit of every point."""
        sums = v.sums_at([ends[k][0] for k in turns])
        entries = []
        for k in turns:
            at = sums[ends[k][0]]
            units_of, at_sea, balance = at["units"].get, at["ntr"].get, at["balance"].get
            nations = {}
            for n in self.turn_order:
                units, cost = units_of(n, (0, 0))
                nations[n] = {"ntr_at_sea": at_sea(n, 0), "balance": balance(n, 0), "units": units, "fleet_cost": cost}
            entries.append(self._entry(k, ends[k], nations))
        return entries

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


class _Sweep:
    """The history rows valid at one point of a walk through the log in event order, and the
    figures of every nation they make: a row opens at its `from_seq` and closes at its `to_seq`
    (if any), and only the nations a change touched are summed up again."""

    def __init__(self, ctx: ReportContext) -> None:
        self.ctx = ctx
        self.units: dict[str, tuple[str, str, int]] = {}  # unit -> (type, nation, damage)
        self.count: Counter[str] = Counter()
        self.damaged: Counter[str] = Counter()
        self.cost: Counter[str] = Counter()
        self.by_type: dict[str, Counter[str]] = {n: Counter() for n in ctx.turn_order}
        self.ntr: dict[str, dict[str, int]] = {n: {} for n in ctx.turn_order}
        self.nation_rows: dict[str, tuple[int, int, dict[str, int]]] = {}
        self.current: dict[tuple[str, Any], Any] = {}  # (kind, key) -> the row now valid
        self.closing: list[tuple[int, int, tuple[str, Any]]] = []  # (to_seq, serial, key), a heap
        self.serial = 0
        self.dirty = set(ctx.turn_order)
        self.last: dict[str, dict[str, Any]] = {}

    def open(self, kind: str, row: Any) -> None:
        """A row becomes valid at its `from_seq` (rows that closed by then close first)."""
        self.settle(row.from_seq)
        key = _key_of(kind, row)
        self.current[key] = row
        self.apply(kind, row, True)
        if row.to_seq is not None:
            self.serial += 1
            heapq.heappush(self.closing, (row.to_seq, self.serial, key))

    def settle(self, upto: int) -> None:
        """Close the rows whose validity ended by event `upto` (unless a newer row replaced them)."""
        while self.closing and self.closing[0][0] <= upto:
            _, _, key = heapq.heappop(self.closing)
            row = self.current.get(key)
            if row is not None and row.to_seq is not None and row.to_seq <= upto:
                del self.current[key]
                self.apply(key[0], row, False)

    def apply(self, kind: str, row: Any, valid: bool) -> None:
        if kind == "unit":
            self.unit_change(row.unit_id, (row.type, row.nation, row.damage) if valid else None)
        elif kind == "ntr":
            zones = self.ntr.setdefault(row.nation, {})
            if valid and row.count:
                zones[row.zone] = row.count
            else:
                zones.pop(row.zone, None)
            self.dirty.add(row.nation)
        elif valid:
            self.nation_rows[row.nation] = (row.balance, row.ntr_lost, json.loads(row.tech))
            self.dirty.add(row.nation)
        else:
            self.nation_rows.pop(row.nation, None)
            self.dirty.add(row.nation)

    def unit_change(self, uid: str, value: tuple[str, str, int] | None) -> None:
        old = self.units.pop(uid, None)
        if old is not None:
            t, n, d = old
            self.count[n] -= 1
            self.damaged[n] -= 1 if d else 0
            self.cost[n] -= self.ctx.costs.get(t, 0)
            self.by_type.setdefault(n, Counter())[t] -= 1
            self.dirty.add(n)
        if value is not None:
            t, n, d = value
            self.units[uid] = value
            self.ctx.unit_info[uid] = (t, n)
            self.count[n] += 1
            self.damaged[n] += 1 if d else 0
            self.cost[n] += self.ctx.costs.get(t, 0)
            self.by_type.setdefault(n, Counter())[t] += 1
            self.dirty.add(n)

    def figures(self) -> dict[str, dict[str, Any]]:
        """Every nation's figures now (the same dicts as last time for a nation nothing touched)."""
        for n in self.dirty:
            balance, lost, tech = self.nation_rows.get(n, (0, 0, {}))
            zones = self.ntr.get(n, {})
            self.last[n] = self.ctx.nation_figures(
                balance,
                dict(sorted((z, c) for z, c in zones.items() if c)),
                lost,
                self.count[n],
                self.damaged[n],
                self.cost[n],
                self.by_type.get(n, Counter()),
                tech,
            )
        self.dirty.clear()
        return {n: self.last[n] for n in self.ctx.turn_order}


def _key_of(kind: str, row: Any) -> tuple[str, Any]:
    """What a history row is the state of: a unit, a nation's NTR in a zone, or a nation."""
    if kind == "unit":
        return (kind, row.unit_id)
    if kind == "ntr":
        return (kind, (row.nation, row.zone))
    return (kind, row.nation)
