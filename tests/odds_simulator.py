"""A naval battle simulator written from RULES.md's words alone, sharing no code with the
tracker: the independent Monte Carlo the exact odds are checked against where HA7's order of
placing hits matters.

It plays battles without selective fire (no aircraft, and submarines that fire nothing: a
house table that gives them attack and defense 0, as F4 lets a group do), so that every
choice left is HA7's: round after round (NC3) every unit with a fire value and a target it may
hit (NC6) rolls one D10 (D1, D2) at its attack (attacker) or defense (defender) value (F4); the
hits of battleships and carriers (HA5), and of cruisers and destroyers (HA6), are placed one at
a time in every order the owner could choose, each on a unit of the highest tier its firer's
rule still finds afloat and not yet hit (HA7, a damaged capital ship counting again for its
second hit, F3); the owner takes the choice that loses the fewest resources (F4's costs), then
the fewest units, then the fewest hits, then the lowest IDs (the tracker's default); every hit
is taken together (NC3). The battle ends when a side is gone or no unit left can hit an enemy
(NC1, NC6); nobody retreats or submerges (the tracker's default: fight on).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

# F4, with the house numbers for submarines: (attack, defense, hits, cost).
TABLE = {
    "submarine": (0, 0, 1, 6),
    "destroyer": (3, 3, 1, 8),
    "cruiser": (5, 5, 1, 12),
    "battleship": (7, 7, 2, 20),
    "aircraft_carrier": (2, 4, 2, 16),
    "transport": (0, 0, 1, 7),
}
CAPITAL = ("battleship", "aircraft_carrier")  # F2
ESCORT = ("destroyer", "cruiser")  # F2
# HA5, HA6, NC6: the tiers a firing class's hits go to, in order; submarines only from escorts,
# last.
TIERS = {
    "capital": (CAPITAL, ESCORT, ("transport",)),
    "escort": (ESCORT, CAPITAL, ("transport",), ("submarine",)),
}
ABBR = {
    "submarine": "SS",
    "destroyer": "DD",
    "cruiser": "CA",
    "battleship": "BB",
    "aircraft_carrier": "CV",
    "transport": "TR",
}


@dataclass(frozen=True)
class Ship:
    id: str
    type: str
    damage: int = 0

    @property
    def left(self) -> int:
        return TABLE[self.type][2] - self.damage


def fleet(code: str, counts: dict[str, int]) -> list[Ship]:
    return [Ship(f"{code}-{ABBR[t]}{i + 1}", t) for t, n in counts.items() for i in range(n)]


def firing_class(unit_type: str) -> str | None:
    return "capital" if unit_type in CAPITAL else "escort" if unit_type in ESCORT else None


def may_hit(unit_type: str, enemies: list[Ship]) -> bool:
    """NC6: battleships and carriers never hit submarines."""
    return any(unit_type in ESCORT or e.type != "submarine" for e in enemies)


def place(ships: list[Ship], hits: dict[str, int]) -> Counter[str]:
    """HA7: the hits (per firing class) on `ships`, the cheapest over every order of placing
    them, every unit of the tier tried for each hit."""
    return Counter(dict(_place(tuple(ships), tuple(sorted(hits.items())))))


@cache  # battles meet the same ships and hits again and again
def _place(ships: tuple[Ship, ...], placed: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    hits = dict(placed)
    cost = {s.id: TABLE[s.type][3] for s in ships}
    first = {s.id: s.left for s in ships}
    kind = {s.id: s.type for s in ships}
    classes = sorted(hits)
    finals: set[tuple[tuple[str, int], ...]] = set()
    seen: set[tuple[tuple[tuple[str, int], ...], tuple[int, ...]]] = set()

    def walk(left: dict[str, int], to_place: tuple[int, ...]) -> None:
        key = (tuple(sorted(left.items())), to_place)
        if key in seen:
            return
        seen.add(key)
        if not any(to_place):
            finals.add(key[0])
            return
        for i, c in enumerate(classes):
            if not to_place[i]:
                continue
            rest = to_place[:i] + (to_place[i] - 1,) + to_place[i + 1 :]
            tier = next(
                (
                    [u for u in left if kind[u] in types and left[u]]
                    for types in TIERS[c]
                    if any(kind[u] in types and left[u] for u in left)
                ),
                [],
            )
            if not tier:
                walk(left, rest)  # no legal target left: the hit is lost
            for u in tier:
                walk({**left, u: left[u] - 1}, rest)

    walk(dict(first), tuple(hits[c] for c in classes))

    def rank(final: tuple[tuple[str, int], ...]) -> tuple[object, ...]:
        taken = {u: first[u] - n for u, n in final if first[u] - n}
        sunk = [u for u, n in final if n == 0]
        return (sum(cost[u] for u in sunk), len(sunk), sum(taken.values()), sorted(Counter(taken).elements()))

    best = min(finals, key=rank)
    return tuple((u, first[u] - n) for u, n in best if first[u] - n)


def place_capital_first(ships: list[Ship], hits: dict[str, int]) -> Counter[str]:
    """The rule before HA7's amendment, for contrast: the battleships' and carriers' hits placed
    first (each on the cheapest unit of its tier), then the cruisers' and destroyers'."""
    taken: Counter[str] = Counter()
    for c in sorted(hits):  # "capital" before "escort"
        taken += place(after(ships, taken), {c: hits[c]})
    return taken


def after(ships: list[Ship], taken: Counter[str]) -> list[Ship]:
    out = []
    for s in ships:
        n = taken.get(s.id, 0)
        if n < s.left:
            out.append(Ship(s.id, s.type, s.damage + n))
    return out


Placing = Callable[[list[Ship], dict[str, int]], Counter[str]]


def battle(
    attackers: list[Ship], defenders: list[Ship], rng: random.Random, placing: Placing = place
) -> tuple[list[Ship], list[Ship]]:
    """One battle to its end: what is left of each side (`placing`: HA7 as amended)."""
    while attackers and defenders:
        sides = ((attackers, defenders, 0), (defenders, attackers, 1))
        firing = [
            (s, enemies, value)
            for own, enemies, value in sides
            for s in own
            if TABLE[s.type][value] > 0 and firing_class(s.type) and may_hit(s.type, enemies)
        ]
        if not firing:
            break  # NC1, NC6: no unit left can hit an enemy
        on_defenders: Counter[str] = Counter()
        on_attackers: Counter[str] = Counter()
        for s, enemies, value in firing:
            if rng.randint(1, 10) <= TABLE[s.type][value]:
                target = on_defenders if enemies is defenders else on_attackers
                target[firing_class(s.type) or ""] += 1
        attackers, defenders = (
            after(attackers, placing(attackers, dict(on_attackers))),
            after(defenders, placing(defenders, dict(on_defenders))),
        )
    return attackers, defenders


def left_by_type(ships: list[Ship]) -> tuple[tuple[str, int], ...]:
    """As the tracker's outcomes name them: damaged capital ships apart."""
    return tuple(sorted(Counter(f"{s.type} (damaged)" if s.damage else s.type for s in ships).items()))


def play_many(
    german: dict[str, int], british: dict[str, int], runs: int, seed: int, placing: Placing = place
) -> Counter[tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]]:
    """`runs` battles, Germany attacking: how often each (attackers left, defenders left)."""
    rng = random.Random(seed)
    seen: Counter[tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]] = Counter()
    for _ in range(runs):
        a, d = battle(fleet("DE", german), fleet("GB", british), rng, placing)
        seen[(left_by_type(a), left_by_type(d))] += 1
    return seen
