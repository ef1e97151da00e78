"""Purchases that advise (`tracker odds buy`): for each unit type the nation whose turn it is can
buy (PU1, PU3) and place (PU2), what one more unit of it is worth next turn against the enemy
units on the board now, per resource of its cost, every figure an exact enumeration.

A unit bought this turn is placed at the end of it and acts on the nation's next turn with a
full move. Its worth is the best gain, in resources, over three measures:

- convoy: in each sea zone holding the nation's NTR with enemy submarines within a full move
  (SM1), the expected NTR lost (CV1-CV7) with the searchers able to be there next turn
  (`tracker odds escorts`' second window), less the same with one more unit of the type (a
  searcher, CV3, that can be there from a zone it may be placed in);
- win: in each sea zone holding enemy naval units (not submarines alone: ASW combat, AS1), the
  chance that the nation's naval and air units able to reach it next turn win the battle
  against every enemy unit there (NC1), with and without one more unit of the type, the
  difference times the cost of the enemy force; a damaged capital ship fights one hit from
  sinking (F3, NC5);
- trade: in the same battles, the expected cost of the enemy units sunk less the expected cost
  of the nation's own units lost, with and without it.

The type's value is its best gain divided by its cost; types are ranked by it. Every figure
names the `tracker odds` lines that compute it. A battle or convoy attack with more than
MOST_PER_SIDE units a side, or beyond the budget of positions, is not weighed; the answer
names it as too large to weigh.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NotRequired, TypedDict

from domain.board import Board, Unit
from domain.errors import RuleViolation
from domain.procedures.odds import Odds, TooManyPositions
from domain.rules.convoy import air_can_join
from domain.rules.economy import placement_zones, unit_cap
from domain.text import phase_name, plural, possessive, type_name
from tracker.analysis import advise, escorts, reach

# The most units a side in a battle weighed: the sizes the bench times under a second.
MOST_PER_SIDE = 10
MEASURES = ("convoy", "win", "trade")
# What one enumeration costs beyond its positions, in positions: setting up a battle takes
# about as long as enumerating 50 of its positions, and a board offers many small ones.
SETUP = 50
# The positions one answer may enumerate (setups counted): about a second of CPU on both
# campaigns (bench/bench_odds.py), so that a page or a command never waits long.
BUDGET = 8_000
# The id of the unit imagined bought: no unit of a scenario carries it.
NEW = "NEW-1"


class Weigher:
    """The battles and convoy attacks of one answer, each enumerated once, within a budget of
    positions (`budget`) over all of them; what went beyond it is remembered by zone."""

    def __init__(self, limit: int, budget: int) -> None:
        self.limit = limit
        self.budget = budget
        self.spent = 0
        self.memo: dict[Any, Any] = {}
        self.too_large: dict[str, str] = {}  # zone -> why it was not weighed

    def charge(self, positions: int) -> None:
        self.spent += positions + SETUP

    def refuse(self, zone: str, size: int) -> None:
        """Remember a zone not weighed: over MOST_PER_SIDE units a side, or beyond the budget."""
        if size > MOST_PER_SIDE:
            self.too_large[zone] = f"{size} units a side"
        else:
            self.too_large.setdefault(zone, "beyond the budget of positions")

    def left(self) -> int:
        """The most positions the next enumeration may take: what is left of the budget, so
        that an answer never goes far beyond it."""
        return max(1, min(self.limit, self.budget - self.spent))


@dataclass
class Candidate:
    """One measure of one type at one zone: the figures before and after one more unit."""

    type: str
    measure: str
    zone: str  # where the measure is taken (the battle's or the convoys' zone)
    place: list[str]  # the zones the unit may be placed in (PU2) to be there next turn
    before: float
    after: float
    gain: float  # in resources
    commands: dict[str, list[str]] = field(default_factory=dict)  # `before`/`after`: tracker odds lines
    forces: dict[str, dict[str, int]] = field(default_factory=dict)  # `before`/`after`: the nation's units
    enemy_cost: int = 0  # attacks: the cost of the enemy force in the zone


class Figure(TypedDict):
    """A candidate of `tracker odds buy --json`: one measure of one type at one zone (see
    `Candidate`); `enemy_cost` for an attack only."""

    type: str
    measure: str
    zone: str
    place: list[str]
    before: float
    after: float
    gain: float
    commands: dict[str, list[str]]
    forces: dict[str, dict[str, int]]
    enemy_cost: NotRequired[int]


class Ranked(TypedDict):
    """A type in the ranking: its cost, its best gain, the gain per resource and the figure
    behind it (None: no gain against the threats now)."""

    type: str
    cost: int
    gain: float
    value: float
    best: Figure | None


class BuyAnswer(TypedDict):
    """`tracker odds buy --json`."""

    nation: str
    round: int
    phase: str
    budget: int
    measures: list[str]
    ranking: list[Ranked]
    candidates: list[Figure]
    not_weighed: dict[str, str]
    too_large: dict[str, str]
    positions: int


def buyable(board: Board, nation: str, budget: int) -> tuple[list[str], dict[str, str]]:
    """PU1-PU3: the naval and air types the nation can buy within `budget` and place this turn;
    the others with why not."""
    out, not_weighed = [], {}
    for name, ut in board.ruleset.units.items():
        cap = unit_cap(board, nation, name)
        have = sum(1 for u in board.units.values() if u.nation == nation and u.type == name)
        if not (ut.is_naval or ut.is_air):
            not_weighed[name] = "is no naval or air unit: the tracker weighs no land combat"
        elif ut.cost > budget:
            not_weighed[name] = f"costs {ut.cost}, over the budget of {budget} (PU1)"
        elif cap is not None and have >= cap:
            not_weighed[name] = f"is at its cap: {nation} has {have} of at most {cap} (PU3)"
        elif not placement_zones(board, nation, name):
            not_weighed[name] = f"has nowhere to be placed: {nation} owns no port for it (PU2)"
        else:
            out.append(name)
    return out, not_weighed


def imagined(board: Board, nation: str, unit_type: str, zone: str) -> tuple[Board, Unit]:
    """The board with one more unit of the type placed in `zone`, with a full move."""
    unit = Unit(NEW, unit_type, nation, zone)
    return replace(board, units={**board.units, NEW: unit}), unit


def attack_reaches(board: Board, unit_type: str, places: list[str], nation: str, zone: str) -> list[str]:
    """F4, F7, SM1: the placement zones from which a unit of the type reaches `zone` next turn."""
    move = board.ruleset.units[unit_type].move
    found = []
    for place in places:
        there, unit = imagined(board, nation, unit_type, place)
        steps = reach.steps_to(there, unit, zone)
        if steps is not None and steps <= move:
            found.append(place)
    return found


def convoy_reaches(board: Board, unit_type: str, places: list[str], nation: str, zone: str) -> list[str]:
    """CV3, F4, F7: the placement zones from which a unit of the type searches in `zone` next turn."""
    found = []
    for place in places:
        there, unit = imagined(board, nation, unit_type, place)
        if not escorts.escort_or_aircraft(there, unit):
            return []
        if there.unit_type(unit).is_air:
            if air_can_join(there, unit, zone, frozenset()):
                found.append(place)
            continue
        steps = reach.steps_to(there, unit, zone)
        if steps is not None and steps <= there.unit_type(unit).move:
            found.append(place)
    return found


def with_one(counts: Mapping[str, int], unit_type: str) -> dict[str, int]:
    return {**counts, unit_type: counts.get(unit_type, 0) + 1}


def cost_of(board: Board, left: tuple[tuple[str, int], ...]) -> int:
    """The cost of units left by type ("battleship (damaged)" counts as a battleship)."""
    return sum(n * board.ruleset.units[t.removesuffix(" (damaged)")].cost for t, n in left)


def battle_figures(
    q: reach.Question, counts: Mapping[str, int], w: Weigher, shared: advise.Shared | None = None
) -> tuple[float, float] | None:
    """NC1: the attack on every enemy unit in the zone by `counts`: (chance of winning, expected
    cost sunk less expected own cost lost); None when too large to weigh. `shared`: the
    enumerations of the zone's other attacks, shared (`advise.Shared`)."""
    key = ("battle", q.zone, tuple(sorted((t, n) for t, n in counts.items() if n)))
    if key in w.memo:
        known: tuple[float, float] | None = w.memo[key]
        return known
    size = max(sum(counts.values()), sum(len(us) for us in q.others.values()))
    if size > MOST_PER_SIDE or w.spent >= w.budget:
        w.refuse(q.zone, size)
        return None
    try:
        chance, odds = advise.evaluate(q, counts, w.left(), shared)
    except TooManyPositions:
        w.charge(w.left())  # the time it took counts
        w.refuse(q.zone, 0)
        return None
    figures = (chance, trade(q, counts, odds))
    w.charge(odds.states if odds is not None else 0)
    w.memo[key] = figures
    return figures


def trade(q: reach.Question, counts: Mapping[str, int], odds: Odds | None) -> float:
    """The expected cost of the enemy units sunk less that of the attacker's own units lost."""
    if odds is None:
        return 0.0
    board = q.board
    ours = sum(n * board.ruleset.units[t].cost for t, n in counts.items())
    theirs = sum(board.unit_type(u).cost for us in q.others.values() for u in us)
    total = 0.0
    for o, m in odds.outcomes.items():
        sunk = theirs - cost_of(board, o.defender_left)
        lost = ours - cost_of(board, o.attacker_left)
        total += float(m[0]) * (sunk - lost)
    return total


@dataclass(frozen=True)
class Target:
    """A zone where one more unit may tell: an attack on the enemy units there (`win` and
    `trade`) or the nation's convoys there (`convoy`), with the force it has for it now."""

    kind: str  # "attack" or "convoy"
    zone: str
    size: int  # units of the larger side, one more unit counted
    question: reach.Question | escorts.Convoys
    base: dict[str, int]  # the nation's units that can be there next turn, by type
    value: int  # the cost of the enemy force (attacks)


def attack_targets(board: Board, nation: str) -> list[Target]:
    """NC1: every sea zone holding enemy naval units, against the nation's naval and air units
    that can reach it next turn (F4, F7, SM1); not enemy submarines alone: they call for ASW
    combat (AS1), the referee starts no naval battle there (no zone of them is hostile, SM1,
    so no submarine of the nation is ever stopped there to attack, SM5)."""
    out = []
    for zone in sorted(board.scenario.game_map.sea):
        enemies = [u for u in board.units_at(zone) if board.enemies(nation, u.nation)]
        if not any(board.unit_type(u).is_naval for u in enemies) or submarines_alone(board, enemies):
            continue
        others: dict[str, list[Unit]] = {}
        for u in enemies:
            others.setdefault(u.nation, []).append(u)
        pool = reach.reach(board, nation, zone, next_turn=True)
        q = reach.Question(board, zone, nation, False, pool, others)
        value = sum(board.unit_type(u).cost for u in enemies)
        out.append(Target("attack", zone, max(len(pool) + 1, len(enemies)), q, reach.full_force_of(pool), value))
    return out


def submarines_alone(board: Board, enemies: list[Unit]) -> bool:
    """NC1, AS1: the enemy units of a zone are submarines alone, which call for ASW combat."""
    return board.ruleset.submarines_alone_call_for_asw and all(board.unit_type(u).is_submarine for u in enemies)


def convoy_targets(board: Board, nation: str) -> list[Target]:
    """CV1, SM1: every zone holding the nation's NTR with enemy submarines within a full move,
    against its searchers that can be there at next turn's window (CV3, F7)."""
    out = []
    for zone in sorted(z for z, n in board.ntr.get(nation, {}).items() if n > 0):
        q = escorts.convoy_question(board, zone)
        window = q.windows[-1]
        if not window.threats:
            continue
        ours = len(window.pool) + 1 + sum(sum(c.values()) for c in q.allies.values())
        size = max(ours, *window.threats.values())
        out.append(Target("convoy", zone, size, q, reach.full_force_of(window.pool), 0))
    return out


def weigh(board: Board, nation: str, types: list[str], target: Target, w: Weigher) -> list[Candidate]:
    """The candidates of each type at one target: its figures without and with one more unit."""
    out = []
    zone, base = target.zone, target.base
    # The zone's battles with one unit more of each type share their enumerations: the force
    # with one more of every type weighed there names every unit of them (of the searchers
    # alone at convoys, CV3).
    shared: advise.Shared | None = None
    convoys: escorts.Shared | None = None
    if isinstance(target.question, reach.Question):
        shared = advise.Shared(target.question, {**base, **{t: base.get(t, 0) + 1 for t in types}})
    else:
        searching = [t for t in types if escorts.guards(board.ruleset.units[t])]
        most = {**base, **{t: base.get(t, 0) + 1 for t in searching}}
        convoys = escorts.Shared(target.question, target.question.windows[-1], most)
    for t in types:
        if target.kind == "convoy":
            q = target.question
            assert isinstance(q, escorts.Convoys)
            places = convoy_reaches(board, t, placement_zones(board, nation, t), nation, zone)
            lost = (
                (convoy_loss(q, base, w, convoys), convoy_loss(q, with_one(base, t), w, convoys))
                if places
                else (None, None)
            )
            if lost[0] is None or lost[1] is None:
                continue
            window = q.windows[-1]
            lines = {"before": escorts.by_hand(q, window, base), "after": escorts.by_hand(q, window, with_one(base, t))}
            forces = {"before": base, "after": with_one(base, t)}
            out.append(Candidate(t, "convoy", zone, places, lost[0], lost[1], lost[0] - lost[1], lines, forces))
            continue
        a = target.question
        assert isinstance(a, reach.Question)
        places = attack_reaches(board, t, placement_zones(board, nation, t), nation, zone)
        before, after = (
            (battle_figures(a, base, w, shared), battle_figures(a, with_one(base, t), w, shared))
            if places
            else (None, None)
        )
        if before is None or after is None:
            continue
        lines = {"before": by_hand(a, base), "after": by_hand(a, with_one(base, t))}
        gain = (after[0] - before[0]) * target.value
        forces = {"before": base, "after": with_one(base, t)}
        value = target.value
        out.append(Candidate(t, "win", zone, places, before[0], after[0], gain, lines, forces, value))
        out.append(Candidate(t, "trade", zone, places, before[1], after[1], after[1] - before[1], lines, forces, value))
    return out


def by_hand(q: reach.Question, counts: Mapping[str, int]) -> list[str]:
    """The `tracker odds naval` line of an attack (none without a force)."""
    lines = []
    for battle in advise.battles(q, counts):
        if battle["attacker"] and battle["defender"]:
            nations = {f.partition(":")[0] for f in battle["attacker"] + battle["defender"]}
            lines.append(advise.command({**battle, "tech": reach.tech_texts(q.board, nations)}))
    return lines


def convoy_loss(
    q: escorts.Convoys, counts: Mapping[str, int], w: Weigher, shared: escorts.Shared | None = None
) -> float | None:
    """CV1-CV7: the expected NTR lost at the next turn's window with `counts` searching; None
    when too large to weigh. `shared`: the zone's other attacks, enumerated together."""
    window = q.windows[-1]
    key = ("convoy", q.zone, tuple(sorted((t, n) for t, n in counts.items() if n)))
    if key in w.memo:
        lost: float | None = w.memo[key]
        return lost
    size = max(sum(counts.values()) + sum(sum(c.values()) for c in q.allies.values()), *window.threats.values())
    if size > MOST_PER_SIDE or w.spent >= w.budget:
        w.refuse(q.zone, size)
        return None
    try:
        lost, positions = escorts.loss(q, window, counts, w.left(), shared)
    except TooManyPositions:
        w.charge(w.left())  # the time it took counts
        w.refuse(q.zone, 0)
        return None
    w.charge(positions)
    w.memo[key] = lost
    return lost


def require_purchase(board: Board) -> None:
    """PU1, PU2: units bought now are placed this turn only up to the purchase phase."""
    phases = board.ruleset.phases
    if "purchase" in phases and phases.index(board.phase) > phases.index("purchase"):
        raise RuleViolation(
            "PU1",
            f"{board.nation} buys in its purchase phase and it is at {phase_name(board.phase)}: "
            "what it buys now would not be placed this turn",
        )


def nothing_to_buy(board: Board, spend: int, not_weighed: Mapping[str, str]) -> RuleViolation:
    """PU1, PU2, PU3: why no type can be weighed, naming the cheapest naval or air type."""
    ships = [t for t, ut in board.ruleset.units.items() if ut.is_naval or ut.is_air]
    cheapest = min(ships, key=lambda t: board.ruleset.units[t].cost)
    rule = not_weighed[cheapest].rpartition("(")[2].rstrip(")")
    return RuleViolation(
        rule,
        f"{board.nation} can buy and place no naval or air unit with {spend} resources: {type_name(cheapest)} "
        f"{not_weighed[cheapest].rpartition(' (')[0]}",
    )


def answer(board: Board, budget: int | None, limit: int, budget_positions: int = BUDGET) -> BuyAnswer:
    """The JSON shape of `tracker odds buy`: each type's best candidate and value per resource,
    ranked, with every candidate weighed and the zones too large to weigh."""
    require_purchase(board)
    nation = board.nation
    spend = board.balances.get(nation, 0) if budget is None else budget
    types, not_weighed = buyable(board, nation, spend)
    if not types:
        raise nothing_to_buy(board, spend, not_weighed)
    w = Weigher(limit, budget_positions)
    # The smallest battles first: when the budget runs out, the most zones have been weighed.
    targets = sorted(attack_targets(board, nation) + convoy_targets(board, nation), key=lambda t: (t.size, t.zone))
    candidates = [c for target in targets for c in weigh(board, nation, types, target, w)]
    ranking: list[Ranked] = []
    for t in types:
        cost = board.ruleset.units[t].cost
        own = [c for c in candidates if c.type == t]
        best = max(own, key=lambda c: (c.gain, c.measure == "convoy", c.zone), default=None)
        gain = best.gain if best is not None and best.gain > 0 else 0.0
        ranking.append({"type": t, "cost": cost, "gain": gain, "value": gain / cost, "best": _shown(best, gain)})
    ranking.sort(key=lambda r: (-r["value"], r["cost"], r["type"]))
    return {
        "nation": nation,
        "round": board.round,
        "phase": board.phase,
        "budget": spend,
        "measures": list(MEASURES),
        "ranking": ranking,
        "candidates": [_candidate(c) for c in candidates],
        "not_weighed": not_weighed,
        "too_large": dict(sorted(w.too_large.items())),
        "positions": w.spent,
    }


def _shown(best: Candidate | None, gain: float) -> Figure | None:
    return _candidate(best) if best is not None and gain > 0 else None


def _candidate(c: Candidate) -> Figure:
    figure: Figure = {
        "type": c.type,
        "measure": c.measure,
        "zone": c.zone,
        "place": c.place,
        "before": c.before,
        "after": c.after,
        "gain": c.gain,
        "commands": c.commands,
        "forces": c.forces,
    }
    if c.measure != "convoy":
        figure["enemy_cost"] = c.enemy_cost
    return figure


HEADER = ("type", "cost", "value", "gain", "measure", "zone", "before", "after", "place in")


def title(data: BuyAnswer) -> str:
    """`tracker odds buy`'s first line; its table is `table_rows` under HEADER, then `notes`."""
    return (
        f"{possessive(data['nation'])} purchases with {data['budget']} resources (round {data['round']}, "
        f"{phase_name(data['phase'])}): what one more unit is worth next turn, per resource"
    )


def table_rows(data: BuyAnswer) -> list[tuple[str, ...]]:
    """The ranked table's rows, in the columns of HEADER."""
    rows: list[tuple[str, ...]] = []
    for r in data["ranking"]:
        b = r["best"]
        if b is None:
            rows.append(
                (type_name(r["type"]), str(r["cost"]), "0", "0", "-", "no gain against the threats now", "", "", "")
            )
            continue
        rows.append(
            (
                type_name(r["type"]),
                str(r["cost"]),
                f"{r['value']:.3f}",
                f"{r['gain']:.2f}",
                b["measure"],
                b["zone"],
                _figure(b["measure"], b["before"]),
                _figure(b["measure"], b["after"]),
                ", ".join(b["place"][:2]) + (f" (+{len(b['place']) - 2})" if len(b["place"]) > 2 else ""),
            )
        )
    return rows


def notes(data: BuyAnswer) -> list[str]:
    """What follows the table: the measures' words, the lines behind each figure, what was
    not weighed and why."""
    lines = ["", "gain: convoy = expected NTR lost before less after; win = chance gained x the enemy force's cost;"]
    lines.append("trade = expected enemy cost sunk less own cost lost, after less before. value = gain / cost.")
    lines += by_hand_lines(data)
    if data["too_large"]:
        zones = ", ".join(f"{z} ({why})" for z, why in data["too_large"].items())
        lines += ["", f"Too large to weigh here (at most {MOST_PER_SIDE} units a side, a budget of positions): {zones}"]
    if data["not_weighed"]:
        lines += ["", "Not weighed: " + "; ".join(f"{type_name(t)} {why}" for t, why in data["not_weighed"].items())]
    weighed = plural(len(data["candidates"]), "figure")
    lines += ["", f"{weighed} weighed exactly ({data['positions']:,} positions)."]
    return lines


def by_hand_lines(data: BuyAnswer) -> list[str]:
    """The `tracker odds` lines behind each type's best figure, each zone's force now once."""
    shown = [(r["type"], best) for r in data["ranking"] if (best := r["best"]) is not None]
    if not shown:
        return []
    lines = ["", "The same figures by hand (tracker odds; --json gives each outcome):"]
    seen: set[str] = set()
    for unit_type, best in shown:
        for c in best["commands"]["before"]:
            if c not in seen:
                seen.add(c)
                lines += [f"  {best['zone']}, as it is:", f"    {c}"]
        for c in best["commands"]["after"]:
            # The command on a line of its own: copied whole, never wrapped.
            lines += [f"  {best['zone']}, one {type_name(unit_type)} more:", f"    {c}"]
    return lines


def _figure(measure: str, x: float) -> str:
    return f"{x:.2%}" if measure == "win" else f"{x:.3f}"
