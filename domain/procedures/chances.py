"""The chances of a roll step's results: its dice grouped by what they decide, each group's
count of results with its binomial or multinomial chance (`branches`), for the odds
enumeration (`domain.procedures.odds`)."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from itertools import product
from math import comb, factorial

from domain.procedures.base import DieGroup

Number = Fraction | float  # a probability: exact, or a float when exactness is not asked for


@cache
def _binomial(n: int, p: Number, exact: bool) -> tuple[Number, ...]:
    # `exact` is part of the key: 1/2 and 0.5 are equal keys, and a float must not come back
    # where a fraction was asked for.
    q = 1 - p
    return tuple(comb(n, k) * p**k * q ** (n - k) for k in range(n + 1))


def _convolve(a: tuple[Number, ...], b: tuple[Number, ...], cap: int) -> tuple[Number, ...]:
    out = [a[0] * 0] * (min(len(a) + len(b) - 2, cap) + 1)
    for i, x in enumerate(a):
        if not x:
            continue
        for j, y in enumerate(b):
            if y:
                out[min(i + j, cap)] += x * y
    return tuple(out)


def _compositions(n: int, parts: int) -> Iterator[tuple[int, ...]]:
    if parts == 1:
        yield (n,)
        return
    for k in range(n + 1):
        for rest in _compositions(n - k, parts - 1):
            yield (k, *rest)


def pooled(groups: tuple[DieGroup, ...], exact: bool = True) -> tuple[Number, ...]:
    """The chance of each total of successes of success-or-failure groups with one effect
    (only their total matters), totals beyond what can change anything (the groups' cap)
    merged into the last."""
    one: Number = Fraction(1) if exact else 1.0
    total = sum(g.count for g in groups)
    cap = min([total, *(g.cap for g in groups if g.cap is not None)])
    dist: tuple[Number, ...] = (one,)
    for g in groups:
        dist = _convolve(dist, _binomial(g.count, g.chances[1] * one, exact), cap)
    return dist


def branches(groups: tuple[DieGroup, ...], exact: bool = True) -> list[tuple[tuple[tuple[int, ...], ...], Number]]:
    """Every distinguishable result of a roll step with its chance (a fraction, or with `exact`
    false a float): the dice of each group counted per result. Success-or-failure groups with
    the same effect are pooled (only their total matters), and totals beyond what can change
    anything are merged."""
    one: Number = Fraction(1) if exact else 1.0
    pools: dict[tuple[str, ...], list[int]] = {}
    for i, g in enumerate(groups):
        if g.kind != "table":
            pools.setdefault(g.effect, []).append(i)
    axes: list[list[tuple[dict[int, tuple[int, ...]], Number]]] = []
    for effect, members in pools.items():
        dist = pooled(tuple(groups[i] for i in members), exact)
        options = []
        for t, p in enumerate(dist):
            if not p:
                continue
            counts: dict[int, tuple[int, ...]] = {}
            left = t
            for i in members:
                k = min(left, groups[i].count)
                counts[i] = (groups[i].count - k, k)
                left -= k
            options.append((counts, p))
        axes.append(options)
        del effect
    for i, g in enumerate(groups):
        if g.kind != "table":
            continue
        chances = tuple(c * one for c in g.chances)
        options = []
        for split in _compositions(g.count, len(chances)):
            p = factorial(g.count) * one
            for k, c in zip(split, chances, strict=True):
                p = p / factorial(k) * c**k
            if p:
                options.append(({i: split}, p))
        axes.append(options)
    result = []
    for combo in product(*axes):
        counts_all: dict[int, tuple[int, ...]] = {}
        p = one
        for counts, q in combo:
            counts_all.update(counts)
            p *= q
        result.append((tuple(counts_all[i] for i in range(len(groups))), p))
    return result
