"""Luck: for each nation and turn, what its dice should have brought against what they brought,
read from the log (`tracker luck`, and the luck section of the reports).

Each recorded roll counts at the odds of that moment: a search or a shot at its recorded
target number (D2), the convoy table from its recorded modifiers with the NTR in the zone
(CV5). Units sunk and lost are weighted by the exact odds of the battle from its first roll
(a convoy battle with the searchers its owner picked, CV3), which also gives the percentile of
the battle's outcome for its attacker (0.5: as expected); a battle counts once it has ended.
Each unit lost is its owner's, each sinking the nation's whose hit sank it, though a side may
be allied nations (`luck_credit`). Undone rolls do not count."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict
from uuid import UUID

from domain.dice import clamp_target
from domain.ruleset import Ruleset

if TYPE_CHECKING:
    from domain.procedures.base import Decision
    from domain.procedures.odds import Number, Policy, State

SEARCHES = frozenset({"CV3", "SM3", "AS2"})
# A battle's log records with their data, by its number (`LuckTally`).
BattleLog = Callable[[int], Sequence[Mapping[str, Any]]]
SHOTS = frozenset({"CV4", "SM4", "AS4", "NC2", "NC3"})
METRICS = (
    ("ntr_destroyed", "NTR destroyed by its submarines"),
    ("ntr_lost", "NTR it lost"),
    ("units_sunk", "enemy units it sank"),
    ("units_lost", "its units lost"),
    ("searches", "searches succeeded"),
    ("hits", "hits scored"),
)
# Exact odds of a battle from its first roll are skipped beyond this many units a side, or
# beyond this many positions by type and damage (a bound: a mixed 10 v 10 naval battle has
# some 280,000, reaches about 3,500 with dice to roll and takes most of a second of CPU;
# every turn report carries the battles' luck), or when the enumeration meets more than
# MAX_ENUMERATED positions with dice to roll after all.
MAX_UNITS = 20
MAX_POSITIONS = 100_000
MAX_ENUMERATED = 5_000


class Figures(TypedDict):
    """One metric: what the dice should have brought, and what they brought."""

    expected: float
    actual: float


class TurnLuck(TypedDict):
    turn: int
    round: int
    metrics: dict[str, Figures]


class NationLuck(TypedDict):
    """A nation's luck, turn by turn (the turns it rolled in) and in total."""

    turns: list[TurnLuck]
    total: dict[str, Figures]


class _Battle(TypedDict):
    """What a battle's luck says besides its expected values."""

    battle: int
    kind: str
    zone: str
    attacker: str
    defender: str
    from_seq: int
    actual: dict[str, int]
    percentile: float
    turn: NotRequired[int]


class BattleLuck(_Battle):
    """A battle's units lost (and NTR destroyed) against the exact odds at its first roll, and
    the percentile of its outcome for the attacker."""

    expected: dict[str, float]


class _BattleOdds(_Battle):
    """`BattleLuck` while it is counted: the expected values as the odds give them."""

    expected: dict[str, Number]


class Luck(TypedDict):
    """`tracker luck --json` and the reports' luck: the metrics with their words, each nation's
    luck, and each battle's."""

    metrics: dict[str, str]
    nations: dict[str, NationLuck]
    battles: list[BattleLuck]


def positions(ruleset: Ruleset, units: Iterable[Any]) -> int:
    """A bound on the positions a battle among `units` can reach: per nation and type, how
    many of them are left and how many of those damaged (F3)."""
    counts: dict[tuple[str, str], int] = {}
    for u in units:
        counts[(u.nation, u.type)] = counts.get((u.nation, u.type), 0) + 1
    total = 1
    for (_, unit_type), n in counts.items():
        total *= (n + 1) * (n + 2) // 2 if ruleset.units[unit_type].hits > 1 else n + 1
    return total


def _success_chance(roll: dict[str, Any]) -> Fraction | None:
    if roll.get("target") is None or roll.get("success_when", "at_most") != "at_most":
        return None
    return Fraction(clamp_target(int(roll["target"]), int(roll["faces"])), int(roll["faces"]))


def _table_distribution(ruleset: Ruleset, roll: dict[str, Any]) -> dict[int, Fraction]:
    """CV5: NTR a convoy-table die destroys, by its faces and the recorded modifiers (TE3)."""
    faces = int(roll["faces"])
    add = sum(int(m.get("add") or 0) for m in roll.get("modifiers", []))
    out: dict[int, Fraction] = {}
    for face in range(1, faces + 1):
        value = ruleset.convoy_result(max(1, min(faces, face + add)))
        out[value] = out.get(value, Fraction(0)) + Fraction(1, faces)
    return out


def _capped_mean(dists: Iterable[dict[int, Fraction]], cap: int) -> Fraction:
    """E[min(total, cap)] of independent dice (CV5: the total is capped at the NTR present)."""
    total: dict[int, Fraction] = {0: Fraction(1)}
    for d in dists:
        nxt: dict[int, Fraction] = {}
        for a, p in total.items():
            for b, q in d.items():
                nxt[min(a + b, cap)] = nxt.get(min(a + b, cap), Fraction(0)) + p * q
        total = nxt
    return sum((p * v for v, p in total.items()), Fraction(0))


class _Ledger:
    def __init__(self) -> None:
        # Expected and actual per metric: exact, but a battle's expected units lost come from
        # odds enumerated in floats.
        self.cells: dict[tuple[str, int], dict[str, list[Number]]] = {}

    def add(self, nation: str, turn: int, metric: str, expected: Number, actual: int | Fraction) -> None:
        cell = self.cells.setdefault((nation, turn), {m: [Fraction(0), Fraction(0)] for m, _ in METRICS})
        cell[metric][0] += expected
        cell[metric][1] += Fraction(actual)


def _side(sides: dict[str, str], battle: dict[str, Any], nation: str) -> str:
    return "attacker" if sides.get(nation) == sides.get(battle["attacker"]) else "defender"


def build_luck(
    t: Any,
    cid: UUID,
    report: dict[str, Any],
    battles: bool = True,
    ruleset: Ruleset | None = None,
    battle_log: BattleLog | None = None,
) -> Luck:
    """The luck of every nation in the turns of `report` (see `tracker.report.build_report`):
    {"metrics", "nations": {nation: {"turns": [{turn, round, metrics: {m: {expected, actual}}}],
    "total": {m: {expected, actual}}}}, "battles": [...]}; with `battles`, units sunk and lost
    and the percentile of each battle come from the exact odds at its first roll; `battle_log`
    gives a battle's log records with their data (`LuckTally`)."""
    tally = LuckTally(t, cid, report["campaign"], battles, ruleset, battle_log)
    for turn in report["turns"]:
        tally.add(turn)
    return tally.result()


class LuckTally:
    """`build_luck` a turn at a time, in turn order: a report streamed turn by turn adds each
    turn as it is built and lets it go; only the luck itself is kept."""

    def __init__(
        self,
        t: Any,
        cid: UUID,
        campaign: dict[str, Any],
        battles: bool = True,
        ruleset: Ruleset | None = None,
        battle_log: BattleLog | None = None,
    ) -> None:
        self.t, self.cid, self.battles, self.ruleset = t, cid, battles, ruleset
        # A battle's log records with their data (`tracker.service.history.log_records`), by
        # which its sinkings are credited nation by nation; given by the report, a room up.
        self.battle_log: BattleLog = battle_log or (lambda _battle: [])
        self.sides: dict[str, str] = campaign["sides"]
        self.turn_order: list[str] = campaign["turn_order"]
        self.ledger = _Ledger()
        self.battle_rows: list[_BattleOdds] = []
        self.rounds: dict[int, int] = {}

    def add(self, turn: dict[str, Any]) -> None:
        """Count the rolls and battles of one reported turn (a TURN entry)."""
        ledger, sides = self.ledger, self.sides
        k = turn["turn"]
        self.rounds[k] = turn["round"]
        by_battle = {b["battle"]: b for b in turn["battles"]}
        for roll in turn["rolls"]:
            if roll.get("undone_by"):
                continue
            chance = _success_chance(roll)
            rule, roller = roll["rule"], roll["roller"]
            if chance is not None and rule in SEARCHES:
                hit = sum(1 for v in roll["values"] if v <= roll["target"])
                ledger.add(roller, k, "searches", chance * len(roll["values"]), hit)
            elif chance is not None and rule in SHOTS:
                hit = sum(1 for v in roll["values"] if v <= roll["target"])
                ledger.add(roller, k, "hits", chance * len(roll["values"]), hit)
        for b in turn["battles"]:
            if b.get("undone_by") or b["kind"] != "convoy":
                continue
            table = [r for r in b["rolls"] if r["rule"] == "CV5" and not r.get("undone_by")]
            if not table:
                continue
            if self.ruleset is None:
                self.ruleset = self.t.load(self.cid).ruleset
            expected = _capped_mean((_table_distribution(self.ruleset, r) for r in table), int(b.get("ntr") or 0))
            actual = int(b.get("ntr_destroyed") or 0)
            ledger.add(b["attacker"], k, "ntr_destroyed", expected, actual)
            ledger.add(b["defender"], k, "ntr_lost", expected, actual)
        if self.battles:
            for _, b in sorted(by_battle.items()):
                found = _battle_luck(self.t, self.cid, b, sides, self.battle_log)
                if found is None:
                    continue
                row, by_nation = found
                row["turn"] = k
                self.battle_rows.append(row)
                # Each nation of either side, not the side's lead nation: its own units lost,
                # the units its hits sank (`luck_credit`).
                for who, figures in by_nation.items():
                    for metric, (e, a) in figures.items():
                        ledger.add(who, k, metric, e, a)

    def result(self) -> Luck:
        """The luck of the turns added (the shape `build_luck` gives)."""
        nations: dict[str, NationLuck] = {}
        for nation in self.turn_order:
            rows: list[TurnLuck] = []
            total: dict[str, list[Number]] = {m: [Fraction(0), Fraction(0)] for m, _ in METRICS}
            for k in sorted(self.rounds):
                cell = self.ledger.cells.get((nation, k))
                if cell is None:
                    continue
                for m, _ in METRICS:
                    total[m][0] += cell[m][0]
                    total[m][1] += cell[m][1]
                rows.append({"turn": k, "round": self.rounds[k], "metrics": _plain(cell)})
            nations[nation] = {"turns": rows, "total": _plain(total)}
        return {
            "metrics": {m: words for m, words in METRICS},
            "nations": nations,
            "battles": [{**r, "expected": {k: float(v) for k, v in r["expected"].items()}} for r in self.battle_rows],
        }


def _plain(cell: dict[str, list[Number]]) -> dict[str, Figures]:
    return {m: {"expected": round(float(e), 4), "actual": round(float(a), 4)} for m, (e, a) in cell.items()}


def _searchers_chosen(b: dict[str, Any], rolls: list[dict[str, Any]]) -> Policy | None:
    """CV3: a convoy battle's owner picks its searchers after its first roll (merchant defence,
    CV2). Which of its units search is its choice, not luck: the battle's odds take the
    searchers it picked (none: no search), where the default would have every eligible unit
    search. None for other battles, and for a convoy battle ended by merchant defence. Each
    searcher picked rolls one search die (CV3), in the order picked: the rolls name them."""
    if b["kind"] != "convoy" or all(r["rule"] == "CV2" for r in rolls):
        return None
    picked = tuple(r["unit"] for r in sorted(rolls, key=lambda r: r["seq"]) if r["rule"] == "CV3")

    def choose(state: State, d: Decision) -> object | None:
        return picked if d.kind == "searchers" else None

    return choose


def _battle_luck(
    t: Any, cid: UUID, b: dict[str, Any], sides: dict[str, str], battle_log: BattleLog
) -> tuple[_BattleOdds, dict[str, dict[str, tuple[Number, Fraction]]]] | None:
    """The exact odds of one battle from its first roll, its actual result and percentile, and
    each nation's units sunk and lost in it (`luck_credit.battle_by_nation`)."""
    from domain.procedures.canon import pieces_in
    from domain.procedures.odds import TooManyPositions, exact_odds
    from domain.procedures.position import from_battle
    from tracker.analysis.luck_credit import battle_by_nation
    from tracker.analysis.odds import MAX_SEARCH_RESULTS, search_results

    rolls = [r for r in b["rolls"] if not r.get("undone_by")]
    if b.get("undone_by") or not rolls or b["kind"] not in ("convoy", "naval", "asw", "interception"):
        return None
    # A battle still being fought has no outcome yet: its losses so far set against the whole
    # battle's odds would read as luck that its next rolls may undo. It counts once it ends.
    if b.get("ended") is False:
        return None
    first = min(r["seq"] for r in rolls)
    c = t.load(cid, version=first - 1)
    state_b = c.battles.get(str(b["battle"]))
    if state_b is None:
        return None
    board = c.board()
    here = [u for u in board.units.values() if u.at == state_b["zone"]]
    if sum(1 for u in here if u.nation == b["attacker"]) > MAX_UNITS or len(here) > 2 * MAX_UNITS:
        return None
    if positions(board.ruleset, here) > MAX_POSITIONS:
        return None
    state, ctx, done = from_battle(board, state_b, frozenset(c.committed))
    # CV3: a search's results (how many of each kind of searcher detect) are all worked out
    # before any position counts against the limit: a battle whose search has too many is
    # skipped, as one of too many units is.
    # The searchers picked are those whose rolls name them (the odds take that pick).
    picked = {r["unit"] for r in rolls if r["rule"] == "CV3"}
    if search_results(state, picked or None) > MAX_SEARCH_RESULTS:
        return None
    try:
        odds = exact_odds(state, ctx, _searchers_chosen(b, rolls), done, exact=False, limit=MAX_ENUMERATED)
    except TooManyPositions:
        return None
    actual = {"attacker_units_lost": 0, "defender_units_lost": 0}
    for cas in b["casualties"]:
        if cas.get("undone_by") or cas["result"] not in ("sunk", "shot down") or cas["seq"] < first:
            continue
        actual[f"{_side(sides, b, cas['nation'])}_units_lost"] += 1
    ntr = int(b.get("ntr_destroyed") or 0)

    def score(o: Any) -> int:
        return int(o.defender_units_lost - o.attacker_units_lost + o.ntr_destroyed)

    mine = actual["defender_units_lost"] - actual["attacker_units_lost"] + ntr
    below = odds.probability(lambda o: score(o) < mine)
    equal = odds.probability(lambda o: score(o) == mine)
    expected = {
        "attacker_units_lost": odds.expected(lambda o: o.attacker_units_lost)[0],
        "defender_units_lost": odds.expected(lambda o: o.defender_units_lost)[0],
        "ntr_destroyed": odds.expected(lambda o: o.ntr_destroyed)[0],
    }
    row: _BattleOdds = {
        "battle": b["battle"],
        "kind": b["kind"],
        "zone": b["zone"],
        "attacker": b["attacker"],
        "defender": b["defender"],
        "from_seq": first,
        "expected": expected,
        "actual": {**actual, "ntr_destroyed": ntr},
        "percentile": round(float(below + equal / 2), 4),
    }
    pieces = pieces_in(state).values()
    records = battle_log(int(b["battle"]))
    by_nation = battle_by_nation(records, b, first, pieces, odds, expected, lambda n: _side(sides, b, n))
    return row, by_nation


def rows_for(luck: Luck, nation: str | None = None) -> list[list[str]]:
    """A table: nation, turn, then expected / actual per metric (and the total per nation)."""
    out = []
    for n, data in luck["nations"].items():
        if nation is not None and n != nation:
            continue
        for turn, metrics in [*((str(t["turn"]), t["metrics"]) for t in data["turns"]), ("total", data["total"])]:
            cells = [n, turn]
            for m in luck["metrics"]:
                v = metrics[m]
                cells.append(f"{v['expected']:.2f} / {v['actual']:g}")
            out.append(cells)
    return out


def cumulative(luck: Luck, nation: str, turns: list[int]) -> tuple[list[int], list[float]]:
    """The running sum of actual minus expected over every metric that is good for the nation
    (NTR destroyed, units sunk, searches, hits) less those that are bad (NTR and units lost):
    above 0, luckier than the odds. One point before the first of `turns` (the national turns
    reported, in order; 0 is the start), then one at the end of each of them, a turn without
    rolls of the nation keeping the sum it had."""
    good = ("ntr_destroyed", "units_sunk", "searches", "hits")
    bad = ("ntr_lost", "units_lost")
    by_turn = {row["turn"]: row["metrics"] for row in luck["nations"][nation]["turns"]}
    xs, ys, run = [turns[0] - 1 if turns else 0], [0.0], 0.0
    for k in turns:
        m = by_turn.get(k)
        if m is not None:
            run += sum(m[g]["actual"] - m[g]["expected"] for g in good) - sum(
                m[b]["actual"] - m[b]["expected"] for b in bad
            )
        xs.append(k)
        ys.append(run)
    return xs, ys
