"""Exact odds of a procedure from any state: every decision taken by a policy (the tracker's
defaults unless given), every roll step enumerated with the dice grouped by what they decide
(binomial and multinomial chances), memoised on the hashable state (`engine`).

A volley is enumerated side by side: each side's losses depend only on the hits on it (HA7)
and the hits are taken together (F3, NC3), so what may be left of each side is worked out
once (`remains`) and the results are the pairs of those. Positions that differ only in which
unit of a type is which are one state (`Canon`). Probabilities are fractions with `exact`,
walked here one edge at a time; else floats, pushed through the positions as arrays (`flat`).

Many positions of one procedure in one context (the forces a search weighs) may be enumerated
with one engine (`Shared`), each position met once for all of them.

A round without effect leads back to the same state; that loop is summed exactly as a
geometric series (so a battle that could go on forever needs no cut-off). Only mass caught
in a loop that can never be left would be lost; it is reported as `truncated`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import Any

from domain.memory import collector_paused
from domain.procedures import naval
from domain.procedures.base import Context, Ended, Roll, evolve
from domain.procedures.canon import Canon, pieces_in
from domain.procedures.chances import Number
from domain.procedures.engine import (
    EXPANDED,
    Engine,
    Odds,
    Policy,
    State,
    TooManyPositions,
    decide,
    module_of,
    need,
    roll,
    waits,
)
from domain.procedures.flat import Known, flowed

__all__ = [
    "Engine",
    "Number",
    "Odds",
    "Policy",
    "Roll",
    "Shared",
    "State",
    "TooManyPositions",
    "decide",
    "exact_odds",
    "need",
    "roll",
]


def exact_odds(
    state: State,
    ctx: Context,
    policy: Policy | None = None,
    rounds: int = 0,
    exact: bool = True,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Odds:
    """The distribution of outcomes from `state` (`rounds`: rounds fought already), every
    branch enumerated. With `exact` the probabilities are fractions; otherwise floats (the
    same enumeration, several times faster on big battles, good to about 1e-15).

    `limit`: the most positions with a roll to enumerate (TooManyPositions beyond; time and
    memory grow with them); `progress` is told how many so far, now and then."""
    # The engine's tables hold no cycles; a full collection in between would walk them all.
    # Its memo of the rules' results is its own, freed with it inside the pause: left in the
    # caller's context, the first collection after would walk every object made here.
    token = EXPANDED.set(_every_256(progress, EXPANDED.get())) if progress is not None else None
    try:
        with collector_paused():
            return _enumerated(state, replace(ctx, memo={}), policy, rounds, exact, limit)
    finally:
        if token is not None:
            EXPANDED.reset(token)


def _every_256(progress: Callable[[int], None], outer: Callable[[], None] | None) -> Callable[[], None]:
    """What the engines tell of each position they expand (`EXPANDED`), told to `progress` as
    a count every 256 positions, and still to whoever counted before."""
    count = 0

    def expanded() -> None:
        nonlocal count
        count += 1
        if outer is not None:
            outer()
        if count % 256 == 0:
            progress(count)

    return expanded


class Shared:
    """Enumerations in floats of positions of one procedure in one context, made by one
    engine: what one works out (positions, their edges, each side's remains) the others find
    done. Each gives the odds `exact_odds(state, ctx, policy, rounds, exact=False)` gives.

    `names`: a position naming every unit the positions enumerated will name (the largest
    forces), so that positions alike but for names are named alike in all of them (`Canon`).
    A naval battle's starting counts are read only to count each side's losses at the end
    (`naval.outcome`): every battle is enumerated as if both sides began with none, so that
    battles of other sizes share their positions, and its losses are counted from its own
    starting counts afterwards."""

    def __init__(self, names: State, ctx: Context, policy: Policy | None = None) -> None:
        self.ctx = replace(ctx, memo={})
        self.engine = Engine(self.ctx, policy, exact=False)
        self.engine.canon = Canon(self._as_shared(names)[0])
        self.kinds = {u: (p.nation, p.type) for u, p in pieces_in(names).items()}
        self.known = Known()

    def odds(self, state: State, rounds: int = 0, limit: int | None = None) -> Odds:
        """The odds from `state` (`rounds` fought already); a position naming a unit `names`
        does not (or another kind under its name) is enumerated on its own (`exact_odds`)."""
        pieces = pieces_in(state)
        if any(self.kinds.get(u) != (p.nation, p.type) for u, p in pieces.items()):
            return exact_odds(state, self.ctx, self.engine.policy, rounds, exact=False, limit=limit)
        shared, began = self._as_shared(state)
        engine = self.engine
        engine.limit = limit
        with collector_paused():
            root, more = engine.settle(shared)
            odds = flowed(engine, root, rounds + more, module_of(state).__name__.rsplit(".", 1)[-1], self.known)
        if began is None:
            return odds
        out: dict[Any, tuple[Number, float, float]] = {}
        for o, m in odds.outcomes.items():
            lost = (o.attacker_units_lost + began[0], o.defender_units_lost + began[1])
            out[replace(o, attacker_units_lost=lost[0], defender_units_lost=lost[1])] = m
        odds.outcomes = out
        return odds

    @staticmethod
    def _as_shared(state: State) -> tuple[State, tuple[int, int] | None]:
        """A naval battle as if both sides began with no units, and its starting counts."""
        if isinstance(state, naval.NavalBattle):
            return evolve(state, started=(0, 0)), state.started
        return state, None


def _enumerated(
    state: State,
    ctx: Context,
    policy: Policy | None,
    rounds: int,
    exact: bool,
    limit: int | None,
) -> Odds:
    engine = Engine(ctx, policy, exact)
    engine.canon = Canon(state)
    engine.limit = limit
    root, more = engine.settle(state)
    start = rounds + more
    if not exact:
        return flowed(engine, root, start, module_of(state).__name__.rsplit(".", 1)[-1], forget=True)
    one: Number = Fraction(1)
    # The moments of the rounds (for their mean and deviation) are floats, which keeps the
    # fractions to one per edge. Keyed by identity: the states of the walk are interned
    # (`Engine.order`).
    mass: dict[int, list[Any]] = {id(root): [one, float(start), float(start * start)]}
    result = Odds(procedure=module_of(state).__name__.rsplit(".", 1)[-1], truncated=one - one)
    order = engine.order(root)
    # Every position's edges are found: the walk reads nothing else of the engine's.
    engine.forget()
    result.states = len(order)
    for s in order:
        m0, m1, m2 = mass.pop(id(s))
        if waits(s) == "ended":
            n = need(s, ctx)
            assert isinstance(n, Ended)
            old = result.outcomes.get(n.outcome, (one - one, 0.0, 0.0))
            result.outcomes[n.outcome] = (old[0] + m0, old[1] + m1, old[2] + m2)
            continue
        # Released once pushed: nothing reads a position's edges after its mass has gone on.
        edges = engine.edges.pop(s)
        reached, numerators, denominator = edges.reached, edges.chances, edges.denominator
        # Each chance is an integer over the position's denominator (`Edges`); as a float,
        # that quotient is the fraction's own (both correctly rounded).
        looped = 0
        a = b = 0.0
        leaves = False
        for (child, d), n in zip(reached, numerators, strict=True):
            if child is s:
                looped += n
                pf = n / denominator
                a += pf * d
                b += pf * d * d
            else:
                leaves = True
        if not leaves:
            result.truncated += m0  # a loop nothing can leave
            continue
        if looped:
            # The loop back to this state, summed over any number of passes (I - T)^-1.
            r = 1 / (1 - Fraction(looped, denominator))
            m0 = m0 * r
            rf, m0f = float(r), float(m0)
            m1 = (m1 + a * m0f) * rf
            m2 = (m2 + 2 * a * m1 + b * m0f) * rf
        m0f = float(m0)
        # p * m0 for every edge as n * (m0 / denominator): one division a position.
        unit = m0 / denominator
        for (child, d), n in zip(reached, numerators, strict=True):
            if child is s:
                continue
            pf = n / denominator
            pm = unit * n
            acc = mass.get(id(child))
            if acc is None:
                mass[id(child)] = [pm, pf * (m1 + d * m0f), pf * (m2 + 2 * d * m1 + d * d * m0f)]
            else:
                acc[0] += pm
                acc[1] += pf * (m1 + d * m0f)
                acc[2] += pf * (m2 + 2 * d * m1 + d * d * m0f)
    return result
