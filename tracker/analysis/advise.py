"""Odds that advise (`tracker odds need`): from the units that can reach a sea zone this phase,
the cheapest force (by the ruleset's costs) whose exact chance of taking the zone, or of holding
it (`--hold`), meets a bound. Every answer is a position `tracker odds naval` computes alike.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import product
from typing import NotRequired, TypedDict

from domain.board import Unit
from domain.errors import InputError, TrackerError
from domain.memory import collector_paused
from domain.procedures.base import Context
from domain.procedures.odds import Odds, State, TooManyPositions, exact_odds
from domain.procedures.odds import Shared as OneContext
from domain.text import listed, phase_name, plural, possessive
from tracker.analysis import odds as view
from tracker.analysis.reach import (
    Question,
    Reach,
    counted,
    force_text,
    full_force,
    full_force_of,
    pick,
    pick_from,
    tech_texts,
)

# The most compositions of the reachable units a search may weigh: each is an exact enumeration.
MAX_CHOICES = 4096
# The positions a whole search may enumerate, in --max-positions: a bound on its time (some
# seconds at the default), on a server too, where --max-positions cannot be raised.
BUDGET_BATTLES = 2


class SearchTooLong(TrackerError):
    """A search for the cheapest force stopped at its budget of positions before proving it."""


Composition = tuple[int, ...]


class OddsBattle(TypedDict):
    """One battle of an answer, as `tracker odds naval` arguments (`against`: the enemy nation
    it is fought against, with `--hold`); in an answer, with the technology and the command."""

    attacker: tuple[str, ...]
    defender: tuple[str, ...]
    against: str | None
    tech: NotRequired[tuple[str, ...]]
    command: NotRequired[str]


class Reachable(TypedDict):
    """A unit that can be in the zone, `steps` moves away (0: there)."""

    unit: str
    type: str
    at: str
    steps: int


class Intercepted(TypedDict):
    """A submarine not counted on: its way passes `zone`, where the enemy may intercept it (SM2)."""

    unit: str
    at: str
    zone: str


class ForceUnit(TypedDict):
    unit: str
    at: str
    steps: int


class Lost(TypedDict):
    """Expected units lost: the chosen side's (with its allies) and the enemy's."""

    own: float
    enemy: float


class Force(TypedDict):
    """The force of an answer: counts by type, cost, chance, its units, the units of the nation
    in the zone left out of it, and (with a battle to fight) the expected losses."""

    counts: dict[str, int]
    cost: int
    chance: float
    units: list[ForceUnit]
    damaged: list[str]
    leave: list[str]
    expected_lost: NotRequired[Lost]


class NeedAnswer(TypedDict):
    """`tracker odds need --json`."""

    zone: str
    nation: str
    view: str
    bound: float
    round: int
    phase: str
    reachable: list[Reachable]
    intercepted: list[Intercepted]
    allies: list[str]
    enemies: dict[str, list[str]]
    whole_enemy: bool  # false with --enemy-type: only part of the enemy is weighed
    enemy_types: list[str]  # --enemy-type: the enemy types weighed (empty: all)
    enemies_left_out: dict[str, list[str]]  # the enemy units not weighed, by nation
    found: bool
    force: Force
    weighed: int
    battles: list[OddsBattle]


@dataclass(frozen=True)
class Found:
    """The cheapest force found: counts by type, its cost, its chance and the odds behind it."""

    counts: dict[str, int]
    cost: int
    chance: float
    odds: Odds | None  # None: no battle to fight (no enemy can reach the zone to hold)
    weighed: int  # compositions whose odds were enumerated


def battles(q: Question, counts: Mapping[str, int]) -> list[OddsBattle]:
    """The positions a composition stands for, as `tracker odds naval` arguments: one battle
    (`need`), or one per enemy nation that can strike (`--hold`). A damaged capital ship
    fights as one, one hit from sinking (F3, NC5: "battleship (damaged)")."""
    chosen = {q.nation: as_fought(q.pool, counts)} if any(counts.values()) else {}
    if not q.hold:
        attackers, defenders_by = chosen, {n: fought_by_nation(us)[n] for n, us in q.others.items()}
        return [{"attacker": _texts(attackers), "defender": _texts(defenders_by), "against": None}]
    defending = fought_by_nation(q.allies)
    for t, n in chosen.get(q.nation, {}).items():
        defending.setdefault(q.nation, {})[t] = n
    return [
        {"attacker": _texts(fought_by_nation(us)), "defender": _texts(defending), "against": enemy}
        for enemy, us in sorted(q.others.items())
    ]


def as_fought(pool: list[Reach], counts: Mapping[str, int]) -> dict[str, int]:
    """F3, NC5: the counts with the damaged capital ships among the units standing for them
    (`pick_from`) counted apart, as "battleship (damaged)"; units beyond the pool (a unit
    imagined bought) are undamaged."""
    out = dict(counts)
    for r in pick_from(pool, counts):
        if r.unit.damage:
            out[r.unit.type] -= 1
            out[r.unit.type + view.DAMAGED] = out.get(r.unit.type + view.DAMAGED, 0) + 1
    return {t: n for t, n in out.items() if n}


def fought_by_nation(units: list[Unit]) -> dict[str, dict[str, int]]:
    """Units by nation and type, the damaged capital ships apart (F3, NC5: `as_fought`)."""
    out: dict[str, dict[str, int]] = {}
    for u in units:
        key = u.type + view.DAMAGED if u.damage else u.type
        counts = out.setdefault(u.nation, {})
        counts[key] = counts.get(key, 0) + 1
    return out


def _texts(forces: Mapping[str, Mapping[str, int]]) -> tuple[str, ...]:
    return tuple(force_text(n, c) for n, c in sorted(forces.items()) if any(c.values()))


def took(odds: Odds, hold: bool) -> float:
    """The chance that counts: the attacker wins (the zone is his, NC1), or with `hold` the
    defender still has units in the zone when the battle ends."""
    if hold:
        return float(odds.probability(lambda o: o.holder in ("defender", "both")))
    return float(odds.probability(lambda o: o.result == "attacker_wins"))


def evaluate(
    q: Question, counts: Mapping[str, int], limit: int, shared: Shared | None = None, bound: float | None = None
) -> tuple[float, Odds | None]:
    """The chance of a composition, and the odds of its worst battle (None: nothing to fight,
    or no force). `shared`: the enumerations of a search (`Shared`); `bound`: once a battle
    falls short of it, the battles left are not weighed and that battle's chance is given (the
    composition falls short whatever they give)."""
    worst: tuple[float, Odds | None] = (1.0, None) if q.hold else (0.0, None)
    if not q.hold and not any(counts.values()):
        return worst
    if q.hold and q.others:
        types = [t for t, n in counts.items() if n] + [u.type for u in q.allies]
        if not any(q.board.ruleset.units[t].is_naval for t in types):
            return 0.0, None  # aircraft alone hold no sea zone: the enemy needs no battle (NC1)
    every = battles(q, counts)
    if shared is not None:
        every = shared.in_order(every)
    for battle in every:
        if shared is not None:
            odds = shared.odds(q, battle, limit)
        else:
            state, ctx, rounds = position(q, battle)
            odds = enumerated(battle, state, ctx, rounds, limit)
        p = took(odds, q.hold)
        if worst[1] is None or p < worst[0]:
            worst = (p, odds)
        if bound is not None and p < bound:
            if shared is not None:
                shared.fell_short(battle)
            break
    return worst


def position(q: Question, battle: OddsBattle) -> tuple[State, Context, int]:
    """A battle of an answer as `tracker odds naval` sets it up: (state, context, rounds fought)."""
    nations = {f.partition(":")[0] for f in battle["attacker"] + battle["defender"]}
    return view.hypothetical(
        "naval", q.board.ruleset, battle["attacker"], battle["defender"], tech_texts(q.board, nations), None, False
    )


def enumerated(
    battle: OddsBattle, state: State, ctx: Context, rounds: int, limit: int, shared: OneContext | None = None
) -> Odds:
    """The odds of one battle (with `shared`, among the others of its search), refused in
    terms of the battle beyond `limit` positions."""
    try:
        if shared is not None:
            return shared.odds(state, rounds, limit)
        return exact_odds(state, ctx, None, rounds, exact=False, limit=limit)
    except TooManyPositions as e:
        against = " + ".join(battle["attacker"]) + " against " + " + ".join(battle["defender"])
        raise TooManyPositions(
            e.limit, f"{against}; weigh fewer types (--type, --enemy-type) or raise --max-positions"
        ) from None


class Shared:
    """The battles of one search enumerated together: the battles against one enemy (the
    same nations on each side, the same technology) share one engine, so that a position met
    in one is worked out once for all (`domain.procedures.odds.Shared`); and the battle that
    last fell short of the bound is weighed first (against several enemies, `--hold`)."""

    def __init__(self, q: Question, most: Mapping[str, int]) -> None:
        self.q = q
        self.most = dict(most)  # the largest force weighed: its units name every unit
        self.by_sides: dict[tuple[tuple[str, ...], ...], OneContext | None] = {}
        self.first: str | None = None

    def in_order(self, every: list[OddsBattle]) -> list[OddsBattle]:
        return sorted(every, key=lambda b: b["against"] != self.first)

    def fell_short(self, battle: OddsBattle) -> None:
        self.first = battle["against"]

    def odds(self, q: Question, battle: OddsBattle, limit: int) -> Odds:
        state, ctx, rounds = position(q, battle)
        return enumerated(battle, state, ctx, rounds, limit, self._context(battle))

    def _context(self, battle: OddsBattle) -> OneContext | None:
        key = self._sides(battle)
        if key not in self.by_sides:
            # The battle against the same enemy with the largest force names every unit;
            # battles of other nations (a force without the nation's units) go on their own.
            largest = next(b for b in battles(self.q, self.most) if b["against"] == battle["against"])
            try:
                state, ctx, _ = position(self.q, largest)
            except InputError:  # more units than `tracker odds` takes: each battle on its own
                self.by_sides[key] = None
            else:
                self.by_sides[key] = OneContext(state, ctx) if self._sides(largest) == key else None
        return self.by_sides[key]

    @staticmethod
    def _sides(battle: OddsBattle) -> tuple[tuple[str, ...], ...]:
        def nations(forces: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(f.partition(":")[0] for f in forces)

        return nations(battle["attacker"]), nations(battle["defender"]), (battle["against"] or "",)


def compositions(pool: Mapping[str, int]) -> Iterator[Composition]:
    """Every sub-multiset of the pool as counts in the pool's type order."""
    return product(*(range(n + 1) for n in pool.values()))


def cheapest(
    pool: Mapping[str, int],
    costs: Mapping[str, int],
    chance: Callable[[Composition], float],
    bound: float,
    exhaustive: bool = False,
) -> tuple[Composition, float, int] | None:
    """The cheapest composition of the pool (counts in its type order) whose chance meets
    `bound`, with its chance and how many compositions were weighed; None: none does. Among
    forces of one cost: the higher chance, then the fewer units, then the first in type order.

    Compositions are weighed by increasing cost up to the end of the first cost that has an
    answer (`exhaustive`: every one). Nothing is taken for granted: a unit more can lower the
    chance (an aircraft added to two cruisers and a submarine against a destroyer and two
    battleships takes the chance of winning from 88% to 76%, tests/test_odds_advise.py), so no
    force is passed over for what a bigger or a smaller one did."""
    types = list(pool)

    def key(c: Composition, p: float) -> tuple[int, float, int, Composition]:
        return (_cost(c, types, costs), -p, sum(c), c)

    best: tuple[Composition, float] | None = None
    weighed = 0
    for c in sorted(compositions(pool), key=lambda c: _cost(c, types, costs)):
        if not exhaustive and best is not None and _cost(c, types, costs) > _cost(best[0], types, costs):
            break
        p = chance(c)
        weighed += 1
        if p >= bound and (best is None or key(c, p) < key(*best)):
            best = (c, p)
    return (best[0], best[1], weighed) if best is not None else None


def _cost(c: Composition, types: list[str], costs: Mapping[str, int]) -> int:
    return sum(n * costs[t] for n, t in zip(c, types, strict=True))


def search(
    q: Question,
    bound: float,
    limit: int,
    exhaustive: bool = False,
    memo: dict[Composition, tuple[float, Odds | None]] | None = None,
    most_forces: int | None = None,
) -> Found | None:
    """`cheapest` over the question's pool, each composition's odds enumerated once (`memo`,
    by counts in the order of `types_of`, keeps them for the caller: a composition falling
    short may have only the chance of its first battle short of the bound, `evaluate`);
    `most_forces`: stop (SearchTooLong) rather than weigh more compositions than that.

    The compositions share their enumerations (`Shared`); the answer's chance and odds are
    enumerated once more on their own, as `tracker odds` computes them, so that they are the
    same to the last digit."""
    pool = full_force_of(q.pool)
    require_few_choices(pool, q.zone)
    _require_exact_sizes(q, sum(pool.values()))
    types = list(pool)
    memo = {} if memo is None else memo
    spent = [0]
    shared = Shared(q, pool)

    def chance(c: Composition) -> float:
        if c not in memo:
            too_many(len(memo), most_forces)
            memo[c] = evaluate(q, dict(zip(types, c, strict=True)), limit, shared, bound)
            odds = memo[c][1]
            spent[0] += odds.states if odds is not None else 0
            if spent[0] > BUDGET_BATTLES * limit:
                raise SearchTooLong(
                    f"the search for the cheapest force weighed {len(memo)} forces ({spent[0]:,} positions) "
                    f"without an answer, over its budget of {BUDGET_BATTLES * limit:,} positions: weigh fewer "
                    "types (--type, --enemy-type) or raise --max-positions"
                )
        return memo[c][0]

    costs = {t: q.board.ruleset.units[t].cost for t in types}
    with collector_paused():
        if q.fixed:  # every unit there fights (NC1): nothing to choose
            full = tuple(pool.values())
            found = (full, chance(full), 1) if chance(full) >= bound else None
        else:
            found = cheapest(pool, costs, chance, bound, exhaustive)
    if found is None:
        return None
    c, _, weighed = found
    counts = {t: n for t, n in zip(types, c, strict=True) if n}
    p, odds = evaluate(q, counts, limit)
    return Found(counts, _cost(c, types, costs), p, odds, weighed)


def too_many(weighed: int, most: int | None) -> None:
    """Stop a search that would weigh more than `most` compositions (a page's bound on time:
    each composition has a cost of its own, however few its positions)."""
    if most is not None and weighed >= most:
        raise SearchTooLong(f"the search weighed {weighed} forces without an answer, its most")


def require_few_choices(pool: Mapping[str, int], zone: str) -> None:
    """At most MAX_CHOICES compositions of the pool to weigh."""
    total = 1
    for n in pool.values():
        total *= n + 1
    if total > MAX_CHOICES:
        raise InputError(
            f"{sum(pool.values())} units of {len(pool)} types can be in {zone}: {total:,} choices to weigh, "
            f"over {MAX_CHOICES:,}; name fewer with --type"
        )


def _require_exact_sizes(q: Question, pool: int) -> None:
    """Exact odds take at most `view.MAX_UNITS_PER_SIDE` units a side: the nation's force with
    its allies, and the enemy's, all its nations together (NC1) or with --hold each alone."""
    most = view.MAX_UNITS_PER_SIDE
    if pool + len(q.allies) > most:
        raise InputError(
            f"{pool + len(q.allies)} units of {q.nation} and its allies can be in {q.zone}; exact odds take at most "
            f"{most} a side: weigh fewer types (--type)"
        )
    for side in _enemy_sides(q):
        if len(side) > most:
            nations = sorted({u.nation for u in side})
            who = f"{listed(nations)} {'has' if len(nations) == 1 else 'have'}"
            where = "within a full move of" if q.hold else "in"
            raise InputError(
                f"{who} {len(side)} units {where} {q.zone}; exact odds take at most {most} a side"
                + _fewer_enemy_types(q, len(nations) > 1)
            )


def _enemy_sides(q: Question) -> list[list[Unit]]:
    """The enemy side of each battle an answer weighs (`battles`)."""
    if q.hold:
        return [units for _, units in sorted(q.others.items())]
    return [[u for _, units in sorted(q.others.items()) for u in units]]


def _fewer_enemy_types(q: Question, several: bool) -> str:
    """The way out of an enemy too large to weigh: weigh fewer of its types (`--enemy-type`),
    with its costliest type that leaves every enemy side at most `view.MAX_UNITS_PER_SIDE`
    units as the example (`several`: the enemy side is of several nations)."""
    its = "their" if several else "its"
    if q.enemy_types:
        return f"; weigh fewer of {its} types with --enemy-type (now {', '.join(q.enemy_types)})"
    sides = _enemy_sides(q)
    counts = [counted(side) for side in sides]
    types = {t for c in counts for t in c}
    fits = [t for t in types if all(c.get(t, 0) <= view.MAX_UNITS_PER_SIDE for c in counts)]
    if not fits:
        return ""  # every one of its types alone is too many: no part of it is weighed exactly
    costs = q.board.ruleset.units
    example = max(fits, key=lambda t: (costs[t].cost, sum(c.get(t, 0) for c in counts), t))
    return f"; weigh fewer of {its} types with --enemy-type, e.g. --enemy-type {shlex.quote(example)}"


def command(battle: OddsBattle) -> str:
    """The `tracker odds` line that computes one battle of an answer."""
    # Quoted for the shell where a nation's name holds a space or a letter outside ASCII
    # ('Deutsches Reich:submarine=2'); "Germany:battleship=1,destroyer=2" stays as it is.
    words = ["tracker odds naval"]
    words += [f"--attacker {shlex.quote(f)}" for f in battle["attacker"]]
    words += [f"--defender {shlex.quote(f)}" for f in battle["defender"]]
    words += [f"--tech {shlex.quote(t)}" for t in battle["tech"]]
    return " ".join(words)


def answer(q: Question, bound: float, limit: int, most_forces: int | None = None) -> NeedAnswer:
    """The JSON shape of `tracker odds need`: the question, the units that can reach the zone,
    and the cheapest force with its chance, expected losses and the battles behind them (or,
    when none meets the bound, the chance of the whole pool)."""
    memo: dict[Composition, tuple[float, Odds | None]] = {}
    found = search(q, bound, limit, memo=memo, most_forces=most_forces)
    counts = found.counts if found is not None else full_force(q)
    chance, odds = (found.chance, found.odds) if found is not None else evaluate(q, counts, limit)
    chosen = {r.unit.id for r in pick(q, counts)}
    # Every unit of the nation in the zone would fight (NC1), those left out by --type too.
    here = [u for u in q.board.units_at(q.zone) if u.nation == q.nation]
    there = sorted(u.id for u in here if u.id not in chosen)
    force: Force = {
        "counts": counts,
        "cost": sum(n * q.board.ruleset.units[t].cost for t, n in counts.items()),
        "chance": chance,
        "units": [{"unit": r.unit.id, "at": r.unit.at, "steps": r.steps} for r in pick(q, counts)],
        "damaged": sorted(r.unit.id for r in pick(q, counts) if r.unit.damage),
        "leave": [] if q.hold else there,
    }
    if odds is not None:
        own, other = ("defender", "attacker") if q.hold else ("attacker", "defender")
        force["expected_lost"] = {
            "own": float(odds.expected(lambda o: getattr(o, f"{own}_units_lost"))[0]),
            "enemy": float(odds.expected(lambda o: getattr(o, f"{other}_units_lost"))[0]),
        }
    every = []
    for battle in battles(q, counts):
        nations = {f.partition(":")[0] for f in battle["attacker"] + battle["defender"]}
        battle["tech"] = tech_texts(q.board, nations)
        battle["command"] = command(battle)
        every.append(battle)
    return {
        "zone": q.zone,
        "nation": q.nation,
        "view": "hold" if q.hold else "take",
        "bound": bound,
        "round": q.board.round,
        "phase": q.board.phase,
        "reachable": [{"unit": r.unit.id, "type": r.unit.type, "at": r.unit.at, "steps": r.steps} for r in q.pool],
        "intercepted": [{"unit": u.id, "at": u.at, "zone": z} for u, z in q.intercepted],
        "allies": [u.id for u in q.allies],
        "enemies": {n: [u.id for u in us] for n, us in sorted(q.others.items())},
        "whole_enemy": not q.enemy_types,
        "enemy_types": list(q.enemy_types),
        "enemies_left_out": {n: [u.id for u in us] for n, us in sorted(q.left_out.items())},
        "found": found is not None,
        "force": force,
        # Without an answer, every force of the pool was weighed (each once, in `memo`).
        "weighed": found.weighed if found is not None else max(len(memo), 1),
        "battles": every,
    }


def render(data: NeedAnswer) -> str:
    """`tracker odds need` as text."""
    goal = "hold" if data["view"] == "hold" else "take"
    force = data["force"]
    lines = [
        f"{data['nation']} to {goal} {data['zone']} with a chance of at least {data['bound']:.0%} "
        f"(round {data['round']}, {phase_name(data['phase'])}):"
    ]
    if not data["whole_enemy"]:
        lines.append(_part_of_enemy(data))
    can = plural(len(data["reachable"]), "unit")
    if not data["found"] and not data["reachable"]:
        # `--hold` with allies there and no unit of the nation able to join them.
        lines.append(f"  no unit of {data['nation']} can be there; the allies there alone give {force['chance']:.2%}")
    elif not data["found"]:
        lines.append(f"  no force of the {can} that can be there does: all of them give {force['chance']:.2%}")
    elif not force["counts"]:
        lines.append(
            "  nothing needs to be there: " + ("no enemy can reach it" if not data["enemies"] else "the allies hold it")
        )
    else:
        what = ", ".join(plural(n, t) for t, n in sorted(force["counts"].items()))
        lines.append(f"  {what} (cost {force['cost']}): {force['chance']:.2%}")
    if force["units"]:
        lines.append("  units: " + ", ".join(_unit_words(u) for u in force["units"]))
    if force["leave"]:
        lines.append(f"  leaving {data['zone']} (all there would fight, NC1): {', '.join(force['leave'])}")
    if "expected_lost" in force:
        lost = force["expected_lost"]
        ours = "ours and our allies'" if data["allies"] else "ours"
        lines.append(f"  expected units lost: {ours} {lost['own']:.2f}, the enemy's {lost['enemy']:.2f}")
    if data["intercepted"]:
        ways = ", ".join(f"{u['unit']} ({u['at']}, through {u['zone']})" for u in data["intercepted"])
        lines.append(f"  not counted on, the enemy may intercept them on the way (SM2-SM4): {ways}")
    if force["damaged"]:
        lines.append(f"  damaged, counted one hit from sinking (F3, NC5): {', '.join(force['damaged'])}")
    checks = [b for b in data["battles"] if b["attacker"] and b["defender"]]
    if checks:
        lines.append("")
        if data["view"] == "hold":
            lines.append(
                "The same odds by hand, one per enemy (held: the defender has units left, `holder` in --json):"
            )
        else:
            lines.append("The same odds by hand (attacker wins):")
        lines += [f"  {b['command']}" for b in checks]
    lines.append("")
    weighed = plural(data["weighed"], "force")
    lines.append(f"{weighed} weighed exactly, of the {can} that can be there.")
    return "\n".join(lines) + "\n"


def _part_of_enemy(data: NeedAnswer) -> str:
    """`--enemy-type`: the answer weighs only part of the enemy, said before any chance."""
    weighed = {n: len(us) for n, us in data["enemies"].items()}
    left = {n: len(us) for n, us in data["enemies_left_out"].items()}
    parts = []
    for nation in sorted(set(weighed) | set(left)):
        k, total = weighed.get(nation, 0), weighed.get(nation, 0) + left.get(nation, 0)
        parts.append(f"{k} of {possessive(nation)} {total}")
    return (
        f"  only part of the enemy weighed (--enemy-type {', '.join(data['enemy_types'])}): "
        f"{', '.join(parts)} units; the {plural(sum(left.values()), 'unit')} left out fight too, "
        "so against the whole enemy the chance may well be lower"
    )


def _unit_words(u: ForceUnit) -> str:
    if not u["steps"]:
        return f"{u['unit']} (there)"
    return f"{u['unit']} ({u['at']}, {u['steps']} {'move' if u['steps'] == 1 else 'moves'})"
