"""Exact odds of a procedure from any state: every decision taken by a policy (the tracker's
defaults unless given), every roll step enumerated with the dice grouped by what they decide
(binomial and multinomial chances as fractions), memoised on the hashable state.

A round without effect leads back to the same state; that loop is summed exactly as a
geometric series (so a battle that could go on forever needs no cut-off). Only mass caught
in a loop that can never be left would be lost; it is reported as `truncated`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from itertools import product
from math import comb, factorial
from types import ModuleType
from typing import Any

from domain.procedures import asw, convoy, interception, naval
from domain.procedures.base import Context, Decision, DieGroup, Ended, Facts, Need, Outcome, Roll

State = Any  # one of the procedure states: NavalBattle, ConvoyBattle, AswCombat, Interception
Policy = Callable[[State, Decision], object | None]  # None: the tracker's default

_MODULES: dict[type, ModuleType] = {
    naval.NavalBattle: naval,
    convoy.ConvoyBattle: convoy,
    asw.AswCombat: asw,
    interception.Interception: interception,
}


def module_of(state: State) -> ModuleType:
    return _MODULES[type(state)]


def need(state: State, ctx: Context) -> Need:
    return module_of(state).need(state, ctx)


def decide(state: State, ctx: Context, choice: object | None) -> tuple[State, Facts]:
    return module_of(state).decide(state, ctx, choice)


def roll(state: State, ctx: Context, counts: tuple[tuple[int, ...], ...]) -> tuple[State, Facts]:
    return module_of(state).roll(state, ctx, counts)


_ROLL_STEPS = frozenset({"merchant_defence", "search", "convoy_table"})


def waits(state: State) -> str:
    """ "decision", "roll" or "ended": what `need` would return, without building it."""
    step = state.step.value
    if step == "ended":
        return "ended"
    if step == "volley":
        return "roll" if state.fight.step.value == "fire" else "decision"
    return "roll" if step in _ROLL_STEPS else "decision"


def rounds_in(facts: Facts) -> int:
    return sum(1 for f in facts if f.kind == "round")


@cache
def _binomial(n: int, p: Fraction) -> tuple[Fraction, ...]:
    q = 1 - p
    return tuple(comb(n, k) * p**k * q ** (n - k) for k in range(n + 1))


def _convolve(a: tuple[Fraction, ...], b: tuple[Fraction, ...], cap: int) -> tuple[Fraction, ...]:
    out = [Fraction(0)] * (min(len(a) + len(b) - 2, cap) + 1)
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


def branches(groups: tuple[DieGroup, ...]) -> list[tuple[tuple[tuple[int, ...], ...], Fraction]]:
    """Every distinguishable result of a roll step with its exact chance: the dice of each
    group counted per result. Success-or-failure groups with the same effect are pooled (only
    their total matters), and totals beyond what can change anything are merged."""
    pools: dict[tuple[str, ...], list[int]] = {}
    for i, g in enumerate(groups):
        if g.kind != "table":
            pools.setdefault(g.effect, []).append(i)
    axes: list[list[tuple[dict[int, tuple[int, ...]], Fraction]]] = []
    for effect, members in pools.items():
        total = sum(groups[i].count for i in members)
        cap = min([total, *(limit for i in members if (limit := groups[i].cap) is not None)])
        dist: tuple[Fraction, ...] = (Fraction(1),)
        for i in members:
            dist = _convolve(dist, _binomial(groups[i].count, groups[i].chances[1]), cap)
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
        chances = g.chances
        options = []
        for split in _compositions(g.count, len(chances)):
            p = Fraction(factorial(g.count))
            for k, c in zip(split, chances, strict=True):
                p = p / factorial(k) * c**k
            if p:
                options.append(({i: split}, p))
        axes.append(options)
    result = []
    for combo in product(*axes):
        counts_all: dict[int, tuple[int, ...]] = {}
        p = Fraction(1)
        for counts, q in combo:
            counts_all.update(counts)
            p *= q
        result.append((tuple(counts_all[i] for i in range(len(groups))), p))
    return result


@dataclass
class Odds:
    """The distribution of a procedure's outcomes, with the moments of the rounds fought.

    `outcomes` maps each outcome to (probability, E[rounds; outcome], E[rounds^2; outcome]),
    the probability exact, the moments of the rounds as floats."""

    procedure: str
    outcomes: dict[Outcome, tuple[Fraction, float, float]] = field(default_factory=dict)
    truncated: Fraction = Fraction(0)
    states: int = 0

    def probability(self, test: Callable[[Outcome], bool]) -> Fraction:
        return sum((m[0] for o, m in self.outcomes.items() if test(o)), Fraction(0))

    def expected(self, value: Callable[[Outcome], int]) -> tuple[Fraction, Fraction]:
        """Expected value and variance of a quantity of the outcome."""
        mean = sum((m[0] * value(o) for o, m in self.outcomes.items()), Fraction(0))
        square = sum((m[0] * value(o) ** 2 for o, m in self.outcomes.items()), Fraction(0))
        return mean, square - mean**2

    def rounds(self) -> tuple[float, float]:
        """Mean and variance of the rounds fought."""
        mean = sum(m[1] for m in self.outcomes.values())
        square = sum(m[2] for m in self.outcomes.values())
        return mean, square - mean**2


class _Engine:
    def __init__(self, ctx: Context, policy: Policy | None) -> None:
        self.ctx = ctx
        self.policy = policy
        self.settled: dict[State, tuple[State, int]] = {}
        self.edges: dict[State, dict[tuple[State, int], Fraction]] = {}

    def settle(self, state: State) -> tuple[State, int]:
        """Take every decision up to the next roll (or the end); the rounds started on the way."""
        hit = self.settled.get(state)
        if hit is not None:
            return hit
        here, rounds = state, 0
        while True:
            if self.policy is None:
                # The defaults need no look at the decision itself.
                if waits(here) != "decision":
                    break
                here, facts = decide(here, self.ctx, None)
            else:
                n = need(here, self.ctx)
                if not isinstance(n, Decision):
                    break
                here, facts = decide(here, self.ctx, self.policy(here, n))
            rounds += rounds_in(facts)
        self.settled[state] = (here, rounds)
        return here, rounds

    def expand(self, state: State) -> dict[tuple[State, int], Fraction]:
        n = need(state, self.ctx)
        assert isinstance(n, Roll)
        out: dict[tuple[State, int], Fraction] = {}
        for counts, p in branches(n.groups):
            child, facts = roll(state, self.ctx, counts)
            settled, more = self.settle(child)
            key = (settled, rounds_in(facts) + more)
            out[key] = out.get(key, Fraction(0)) + p
        return out

    def order(self, root: State) -> list[State]:
        """The roll states reachable from `root`, parents before children (self-loops aside)."""
        done: set[State] = set()
        on_path: set[State] = set()
        post: list[State] = []
        stack: list[tuple[State, Iterator[State]]] = []

        def children(s: State) -> Iterator[State]:
            if isinstance(need(s, self.ctx), Ended):
                return iter(())
            if s not in self.edges:
                self.edges[s] = self.expand(s)
            return iter([c for c, _ in self.edges[s] if c != s])

        on_path.add(root)
        stack.append((root, children(root)))
        while stack:
            s, it = stack[-1]
            child = next(it, None)
            if child is None:
                stack.pop()
                on_path.discard(s)
                done.add(s)
                post.append(s)
            elif child in on_path:
                raise ValueError("the procedure can come back to an earlier state: no exact odds")
            elif child not in done:
                on_path.add(child)
                stack.append((child, children(child)))
        return post[::-1]


def exact_odds(state: State, ctx: Context, policy: Policy | None = None, rounds: int = 0) -> Odds:
    """The exact distribution of outcomes from `state` (`rounds`: rounds fought already)."""
    engine = _Engine(ctx, policy)
    root, more = engine.settle(state)
    start = rounds + more
    # Probabilities are exact; the moments of the rounds (for their mean and deviation) are
    # floats, which keeps the fractions to one per edge.
    mass: dict[State, tuple[Fraction, float, float]] = {root: (Fraction(1), float(start), float(start * start))}
    result = Odds(procedure=module_of(state).__name__.rsplit(".", 1)[-1])
    order = engine.order(root)
    result.states = len(order)
    for s in order:
        m0, m1, m2 = mass.pop(s)
        n = need(s, ctx)
        if isinstance(n, Ended):
            old = result.outcomes.get(n.outcome, (Fraction(0), 0.0, 0.0))
            result.outcomes[n.outcome] = (old[0] + m0, old[1] + m1, old[2] + m2)
            continue
        edges = engine.edges[s]
        q = Fraction(0)
        a = b = 0.0
        for (child, d), p in edges.items():
            if child == s:
                q += p
                a += float(p) * d
                b += float(p) * d * d
        if q == 1:
            result.truncated += m0  # a loop nothing can leave
            continue
        if q:
            # The loop back to this state, summed over any number of passes (I - T)^-1.
            r = 1 / (1 - q)
            m0 = m0 * r
            rf, m0f = float(r), float(m0)
            m1 = (m1 + a * m0f) * rf
            m2 = (m2 + 2 * a * m1 + b * m0f) * rf
        m0f = float(m0)
        for (child, d), p in edges.items():
            if child == s:
                continue
            pf = float(p)
            acc = mass.get(child)
            moments = (p * m0, pf * (m1 + d * m0f), pf * (m2 + 2 * d * m1 + d * d * m0f))
            mass[child] = moments if acc is None else (acc[0] + moments[0], acc[1] + moments[1], acc[2] + moments[2])
    return result
