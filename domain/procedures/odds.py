"""Exact odds of a procedure from any state: every decision taken by a policy (the tracker's
defaults unless given), every roll step enumerated with the dice grouped by what they decide
(binomial and multinomial chances), memoised on the hashable state.

A volley is enumerated side by side: each side's losses depend only on the hits on it (HA7)
and the hits are taken together (F3, NC3), so what may be left of each side is worked out
once and the results are the pairs of those. With the default casualties a side's remains
are worked out a step at a time: its selective hits, then each firing class's hits in the
order they are placed (`volley.left_after`). Positions that differ only in which unit of a
type is which are one state (`Canon`). Probabilities are fractions with `exact`, else floats.

A round without effect leads back to the same state; that loop is summed exactly as a
geometric series (so a battle that could go on forever needs no cut-off). Only mass caught
in a loop that can never be left would be lost; it is reported as `truncated`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import product
from math import lcm
from types import ModuleType
from typing import Any

import numpy as np

from domain.errors import TrackerError
from domain.memory import collector_paused
from domain.procedures import asw, convoy, interception, naval, volley
from domain.procedures.base import (
    Context,
    Decision,
    DieGroup,
    Ended,
    Facts,
    Need,
    Outcome,
    Piece,
    Roll,
    Side,
    evolve,
)
from domain.procedures.canon import Canon
from domain.procedures.chances import Number, branches, pooled
from domain.procedures.flow import Floats, Ints, flow

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


def _volley_sides(state: State, groups: tuple[DieGroup, ...]) -> list[tuple[Side, list[int]]] | None:
    """The groups of a volley's roll by the side their hits fall on; None for other rolls."""
    f = getattr(state, "fight", None)
    if f is None or state.step.value != "volley" or f.step != volley.VolleyStep.FIRE:
        return None
    split: dict[Side, list[int]] = {}
    attackers = {p.id for p in f.attackers}
    for i, g in enumerate(groups):
        if g.effect[0] == "unit":
            side: Side = "attacker" if g.effect[1] in attackers else "defender"
        elif g.effect[0] == "class":
            side = "attacker" if g.effect[1] == "attacker" else "defender"
        else:
            return None
        split.setdefault(side, []).append(i)
    return sorted(split.items())


def rounds_in(facts: Facts) -> int:
    return sum(1 for f in facts if f.kind == "round")


@dataclass
class Odds:
    """The distribution of a procedure's outcomes, with the moments of the rounds fought.

    `outcomes` maps each outcome to (probability, E[rounds; outcome], E[rounds^2; outcome]),
    the probability a fraction when computed exactly (else a float), the moments of the rounds
    as floats."""

    procedure: str
    outcomes: dict[Outcome, tuple[Number, float, float]] = field(default_factory=dict)
    truncated: Number = Fraction(0)
    states: int = 0

    @property
    def exact(self) -> bool:
        return isinstance(self.truncated, Fraction)

    def probability(self, test: Callable[[Outcome], bool]) -> Number:
        return sum((m[0] for o, m in self.outcomes.items() if test(o)), self.truncated * 0)

    def expected(self, value: Callable[[Outcome], int]) -> tuple[Number, Number]:
        """Expected value and variance of a quantity of the outcome."""
        zero = self.truncated * 0
        mean = sum((m[0] * value(o) for o, m in self.outcomes.items()), zero)
        square = sum((m[0] * value(o) ** 2 for o, m in self.outcomes.items()), zero)
        return mean, square - mean**2

    def rounds(self) -> tuple[float, float]:
        """Mean and variance of the rounds fought."""
        mean = sum(m[1] for m in self.outcomes.values())
        square = sum(m[2] for m in self.outcomes.values())
        return mean, square - mean**2


class _Engine:
    def __init__(self, ctx: Context, policy: Policy | None, exact: bool = True) -> None:
        self.ctx = ctx
        self.policy = policy
        self.exact = exact
        self.settled: dict[State, tuple[State, int]] = {}
        self.edges: dict[State, list[tuple[tuple[State, int], Number]]] = {}
        self.sides: dict[Any, tuple[Piece, ...]] = {}
        self.remains: dict[Any, list[tuple[tuple[Piece, ...], Number]]] = {}
        self.scored: dict[Any, tuple[Piece, ...]] = {}
        self.placed: dict[Any, tuple[Piece, ...]] = {}
        self.steps: dict[tuple[Any, ...], list[tuple[tuple[Piece, ...], Number]]] = {}
        self.rows: dict[tuple[Any, ...], list[tuple[Piece, ...]]] = {}
        self.pooled_of: dict[tuple[DieGroup, ...], tuple[Number, ...]] = {}
        # What follows a volley: context, then attackers, then defenders left, by identity.
        self.followed: dict[int, dict[int, dict[int, tuple[State, int]]]] = {}
        self.interned: dict[Any, Any] = {}
        self.branched: dict[tuple[Any, ...], list[tuple[tuple[tuple[int, ...], ...], Number]]] = {}
        self.canon: Canon | None = None
        # The float walk's: positions by index, and what follows a volley per rest of position.
        self.positions: list[State] = []
        self.indexed: dict[int, int] = {}
        self.grids: dict[int, _Grid] = {}
        self.limit: int | None = None
        self.progress: Callable[[int], None] | None = None

    def chances(self, groups: tuple[DieGroup, ...]) -> list[tuple[tuple[tuple[int, ...], ...], Number]]:
        """`branches`, once per roll alike, in the engine's numbers. Rolls alike but for what
        their groups' effects name (which unit a shot lands on, which side a class hits) share
        it: the counts per result depend only on which groups pool together, so the effects are
        keyed by their first place."""
        first: dict[tuple[str, ...], int] = {}
        shape = tuple(
            (first.setdefault(g.effect, i), g.count, g.faces, g.kind, g.target, g.dice, g.table, g.cap)
            for i, g in enumerate(groups)
        )
        found = self.branched.get(shape)
        if found is None:
            found = self.branched[shape] = branches(groups, self.exact)
        return found

    def settle(self, state: State, named: bool = False) -> tuple[State, int]:
        """Take every decision up to the next roll (or the end); the rounds started on the way.
        `named`: `state` is named canonically already, and decisions name no new unit, so the
        position reached is too (were it not, only a sharing would be missed)."""
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
        if self.canon is not None and not named:
            here = self.canon(here)
        # One object per position, so that the walk and the loop test compare identities.
        here = self.intern(here)
        self.settled[state] = (here, rounds)
        return here, rounds

    def expand(self, state: State) -> list[tuple[tuple[State, int], Number]]:
        """The positions a roll leads to (settled, with the rounds started on the way) and
        their chances; one position may come more than once (its chances add up)."""
        n = need(state, self.ctx)
        assert isinstance(n, Roll)
        split = _volley_sides(state, n.groups)
        if split:
            return self.expand_volley(state, n.groups, split)
        out: dict[tuple[State, int], Number] = {}
        for counts, p in self.chances(n.groups):
            child, facts = roll(state, self.ctx, counts)
            settled, more = self.settle(child)
            key = (settled, rounds_in(facts) + more)
            out[key] = out.get(key, 0) + p
        return list(out.items())

    def expand_volley(
        self, state: State, groups: tuple[DieGroup, ...], split: list[tuple[Side, list[int]]]
    ) -> list[tuple[tuple[State, int], Number]]:
        """A volley's roll by what is left of each side: HA7, each side's losses depend only on
        the hits on it, and F3, NC3, the volley's hits are taken together. So the results are
        the pairs of each side's possible remains, each worked out once."""
        context, apart, attackers_left, defenders_left = self.volley_sides(state, groups, split)
        denominator = 0
        if self.exact:
            # Each side's chances over one common denominator: the pairs then multiply and add
            # integers, and each result is made a fraction once (exact all the same).
            da = lcm(*(p.denominator for _, p in attackers_left))  # type: ignore[union-attr]
            dd = lcm(*(p.denominator for _, p in defenders_left))  # type: ignore[union-attr]
            attackers_left = [(x, p.numerator * (da // p.denominator)) for x, p in attackers_left]  # type: ignore[union-attr]
            defenders_left = [(x, p.numerator * (dd // p.denominator)) for x, p in defenders_left]  # type: ignore[union-attr]
            denominator = da * dd
        # Keyed by identities: the pairs are many, and what follows is interned (one object per
        # position and rounds). One table per context and attackers, looked up once per row.
        rows = self.followed.setdefault(context, {})
        columns = [(id(defenders), defenders, pd) for defenders, pd in defenders_left]
        # A pair's chance is one product (integers over the common denominator with fractions).
        edges: list[tuple[tuple[State, int], Any]] = []
        for attackers, pa in attackers_left:
            row = rows.setdefault(id(attackers), {})
            for d, defenders, pd in columns:
                found = row.get(d)
                if found is None:
                    found = row[d] = self.intern(self.follow(state, attackers, defenders, apart))
                edges.append((found, pa * pd))
        if not denominator:
            # Floats: pairs reaching the same position (rare: each side's remains are
            # distinct) are added up by the walk itself.
            return edges
        # Fractions: the pairs reaching one position are added up first, as integers, so that
        # each edge makes one fraction.
        acc: dict[int, list[Any]] = {}
        for found, n in edges:
            _add(acc, found, n)
        return [(found, Fraction(n, denominator)) for found, n in acc.values()]

    def volley_sides(
        self, state: State, groups: tuple[DieGroup, ...], split: list[tuple[Side, list[int]]]
    ) -> tuple[int, bool, list[tuple[tuple[Piece, ...], Number]], list[tuple[tuple[Piece, ...], Number]]]:
        """What a volley's roll may leave of each side, with the chances, and what the pairs
        share: the identity of the rest of the position (what follows a volley depends on it
        and on what is left of each side, not on the volley's shots) and whether each side's
        remains are named on their own (`Canon.apart`)."""
        f = state.fight
        base = evolve(f, attackers=(), defenders=(), opening=(), step=volley.VolleyStep.DONE)
        base = evolve(base, waiting=(), shots=(), hits=(), groups=(), chosen=())
        whole = self.intern((evolve(state, fight=base), f.opening))
        rest, opening = whole
        # Where nothing else names units of the sides' kinds, each side's remains are named
        # canonically on their own, so that remains alike but for names are one.
        apart = self.canon is not None and not opening and self.canon.apart(rest, (f.attackers, f.defenders))
        remains = {side: self.remains_of(state, groups, side, members, apart) for side, members in split}
        one: Number = Fraction(1) if self.exact else 1.0
        attackers_left = remains.get("attacker") or [(self.intern(f.attackers), one)]
        defenders_left = remains.get("defender") or [(self.intern(f.defenders), one)]
        return id(whole), apart, attackers_left, defenders_left

    def expand_flat(self, state: State) -> tuple[Ints, Floats, Ints]:
        """`expand` in floats as arrays, the positions by their index (`index_of`): for each
        edge the position reached, its chance and the rounds started on the way. A volley's
        pairs are one product of each side's chances, their positions looked up in a grid per
        rest of the position (`_Grid`), only new pairs worked out one at a time."""
        n = need(state, self.ctx)
        assert isinstance(n, Roll)
        split = _volley_sides(state, n.groups)
        if not split:
            edges = self.expand(state)
            return (
                np.array([self.index_of(c) for (c, _), _p in edges], dtype=np.int64),
                np.array([float(p) for _, p in edges]),
                np.array([d for (_, d), _p in edges], dtype=np.int64),
            )
        context, apart, attackers_left, defenders_left = self.volley_sides(state, n.groups, split)
        grid = self.grids.get(context)
        if grid is None:
            grid = self.grids[context] = _Grid()
        rows = np.array([grid.row(a) for a, _ in attackers_left], dtype=np.int64)
        columns = np.array([grid.column(d) for d, _ in defenders_left], dtype=np.int64)
        grid.fit()
        children = grid.child[rows[:, None], columns]
        if children.min() < 0:
            for i, j in zip(*np.nonzero(children < 0), strict=True):
                settled, more = self.follow(state, attackers_left[i][0], defenders_left[j][0], apart)
                k = self.index_of(settled)
                grid.child[rows[i], columns[j]] = children[i, j] = k
                grid.rounds[rows[i], columns[j]] = more
        pa = np.array([p for _, p in attackers_left])
        pd = np.array([p for _, p in defenders_left])
        return children.ravel(), (pa[:, None] * pd).ravel(), grid.rounds[rows[:, None], columns].ravel()

    def index_of(self, state: State) -> int:
        """The index of an interned position among those met (`positions`), a new one first
        met at the end."""
        k = self.indexed.get(id(state))
        if k is None:
            k = self.indexed[id(state)] = len(self.positions)
            self.positions.append(state)
        return k

    def follow(
        self, state: State, attackers: tuple[Piece, ...], defenders: tuple[Piece, ...], named: bool = False
    ) -> tuple[State, int]:
        """The procedure once its volley left these units (F3, NC3: every hit taken together),
        settled up to its next roll, and the rounds started on the way. `named`: the units are
        named canonically already, and nothing else in the position names one."""
        f = state.fight
        alive = {x.id for x in attackers} | {x.id for x in defenders}
        done = evolve(
            f,
            attackers=attackers,
            defenders=defenders,
            opening=tuple(u for u in f.opening if u in alive),
            step=volley.VolleyStep.DONE,
            waiting=(),
            shots=(),
            hits=(),
            groups=(),
            chosen=(),
        )
        taken = evolve(state, fight=done)
        if self.canon is not None and not named:
            # Named canonically before going on, so that parents naming the same position
            # differently share what follows.
            taken = self.canon(taken)
        child, facts = module_of(state).after_volley(taken, self.ctx)
        settled, more = self.settle(child, named)
        return settled, rounds_in(facts) + more

    def intern(self, value: Any) -> Any:
        """One object per equal value, so that the memo of what follows a volley can key on
        identities (the objects interned stay alive in this table)."""
        return self.interned.setdefault(value, value)

    def remains_of(
        self, state: State, groups: tuple[DieGroup, ...], side: Side, members: list[int], apart: bool = False
    ) -> list[tuple[tuple[Piece, ...], Number]]:
        """What may be left of `side` after the volley, with the chances: its enemies' dice that
        hit it, grouped by the units they leave (with `apart`, as named by `Canon.side`)."""
        f = state.fight
        own = self.intern(f.side(side))
        sub = tuple(groups[i] for i in members)
        key = (f.kind, f.nation(side), side, id(own), sub, apart)
        found = self.remains.get(key)
        if found is not None:
            return found
        if self.policy is None:
            found = self.remains[key] = self.placed_remains(f, side, own, sub, apart)
            return found
        effects = [g.effect for g in sub]
        sides = self.sides
        classes: dict[int, list[Any]] = {}
        for counts, p in self.chances(sub):
            hits = tuple((e, c[1]) for e, c in zip(effects, counts, strict=True) if c[1])
            if not hits:
                left = own
            else:
                hit_key = (key[:4], hits)
                left = sides.get(hit_key)
                if left is None:
                    # The volley scores hits per effect (`volley._scored`), whatever the groups
                    # they came from: rolls alike in the hits on this side share what is left.
                    total: dict[tuple[str, ...], int] = {}
                    for e, n in hits:
                        total[e] = total.get(e, 0) + n
                    same = (key[:4], tuple(sorted(total.items())))
                    left = self.scored.get(same)
                    if left is None:
                        left = self.scored[same] = self.intern(self.side_left(state, groups, side, members, counts))
                    sides[hit_key] = left
                if apart:
                    left = self.intern(self.canon.side(left))  # type: ignore[union-attr]
            _add(classes, left, p)
        found = self.remains[key] = [(left, p) for left, p in classes.values()]
        return found

    def placed_remains(
        self, f: Any, side: Side, own: tuple[Piece, ...], sub: tuple[DieGroup, ...], apart: bool
    ) -> list[tuple[tuple[Piece, ...], Number]]:
        """`remains_of` with the tracker's default casualties, a step at a time: the selective
        hits first, then each firing class's hits in the order they are placed, each on what
        the step before left (`volley.left_after`: HA4-HA7 give the same as placing them all
        together). What each step leaves is worked out once per units, class and hits, and
        the steps add up chances instead of multiplying the results of every group."""
        one: Number = Fraction(1) if self.exact else 1.0
        prefix = (f.kind, f.nation(side), side)
        by_effect: dict[tuple[str, ...], list[DieGroup]] = {}
        for g in sub:
            by_effect.setdefault(g.effect, []).append(g)
        shots = [(e[1], self.pooled(tuple(gs))) for e, gs in by_effect.items() if e[0] == "unit"]
        classes = sorted(
            ((e[2], self.pooled(tuple(gs))) for e, gs in by_effect.items() if e[0] == "class"),
            key=lambda axis: volley.placing_order(self.ctx, axis[0]),
        )
        # Each step's result is kept by what it starts from (the units, or the result of the
        # step before, by identity) and the chances of its hits: sides hit alike share steps.
        steps = self.steps
        key: tuple[Any, ...] = (prefix, id(own), tuple((uid, id(d)) for uid, d in shots))
        dist = steps.get(key)
        if dist is None:
            dist = steps[key] = self.selective_step(f, side, prefix, own, shots, one)
        for cls, d in classes:
            key = (id(dist), cls, id(d))
            found = steps.get(key)
            if found is None:
                found = steps[key] = self.class_step(f, side, prefix, dist, cls, d)
            dist = found
        if apart:
            key = (id(dist),)
            found = steps.get(key)
            if found is None:
                named: dict[int, list[Any]] = {}
                for left, p in dist:
                    _add(named, self.intern(self.canon.side(left)), p)  # type: ignore[union-attr]
                found = steps[key] = [(left, p) for left, p in named.values()]
            dist = found
        return dist

    def selective_step(
        self,
        f: Any,
        side: Side,
        prefix: tuple[str, ...],
        own: tuple[Piece, ...],
        shots: list[tuple[str, tuple[Number, ...]]],
        one: Number,
    ) -> list[tuple[tuple[Piece, ...], Number]]:
        """What the selective hits (HA1, HA3) may leave of `own`: each shot's chances of its
        hits on its unit, all together."""
        placed = self.placed
        dist: dict[int, list[Any]] = {}
        for combo in product(*(list(enumerate(d)) for _, d in shots)):
            p = one
            landed: list[str] = []
            for (uid, _), (n, q) in zip(shots, combo, strict=True):
                p *= q
                landed += [uid] * n
            if not p:
                continue
            step_key = (prefix, id(own), tuple(sorted(landed)))
            left = placed.get(step_key)
            if left is None:
                left = placed[step_key] = self.intern(volley.left_after(f, self.ctx, side, own, step_key[2], ()))
            _add(dist, left, p)
        return [(left, p) for left, p in dist.values()]

    def class_step(
        self,
        f: Any,
        side: Side,
        prefix: tuple[str, ...],
        dist: list[tuple[tuple[Piece, ...], Number]],
        cls: str,
        d: tuple[Number, ...],
    ) -> list[tuple[tuple[Piece, ...], Number]]:
        """What a firing class's hits (HA4-HA7, `d`: the chance of each number of hits) may
        leave of each of the units in `dist`, placed on them by default."""
        rows = self.rows
        after: dict[int, list[Any]] = {}
        for here, p in dist:
            # What 0, 1, 2, ... hits of the class leave of these units, as far as needed yet.
            row_key = (prefix, id(here), cls)
            row = rows.get(row_key)
            if row is None:
                row = rows[row_key] = [here]
            for n, q in enumerate(d):
                if not q:
                    continue
                while len(row) <= n:
                    hit = ((cls, len(row)),)
                    row.append(self.intern(volley.left_after(f, self.ctx, side, here, (), hit)))
                # `_add`, inline: this is the enumeration's innermost loop.
                left = row[n]
                slot = after.get(id(left))
                if slot is None:
                    after[id(left)] = [left, p * q]
                else:
                    slot[1] += p * q
        return [(left, p) for left, p in after.values()]

    def pooled(self, groups: tuple[DieGroup, ...]) -> tuple[Number, ...]:
        """`chances.pooled` once per groups alike, in the engine's numbers."""
        found = self.pooled_of.get(groups)
        if found is None:
            # Interned by value: groups alike but for their cap (a side's capacity, beyond the
            # dice) give one chance per number of hits, so the steps that use it are shared.
            found = self.pooled_of[groups] = self.intern(pooled(groups, self.exact))
        return found

    def side_left(
        self,
        state: State,
        groups: tuple[DieGroup, ...],
        side: Side,
        members: list[int],
        counts: tuple[tuple[int, ...], ...],
    ) -> tuple[Piece, ...]:
        """What is left of `side` after the volley when only its enemies' dice in `counts` hit:
        the volley's own roll and, where the owner chooses, its casualties by the policy (the
        defaults go through `placed_remains`)."""
        assert self.policy is not None
        f = state.fight
        full: list[tuple[int, ...]] = [(g.count, 0) for g in groups]
        for i, c in zip(members, counts, strict=True):
            full[i] = c
        fight, _ = volley.roll(f, self.ctx, tuple(full))
        while fight.step == volley.VolleyStep.CASUALTIES:
            asked = volley.need(fight, self.ctx)
            assert isinstance(asked, Decision)
            fight, _ = volley.decide(fight, self.ctx, self.policy(evolve(state, fight=fight), asked))
        return fight.side(side)

    def order(self, root: State) -> list[State]:
        """The roll states reachable from `root`, parents before children (self-loops aside).
        Every state here is interned (one object per position), so the walk keys on
        identities rather than hashing each state at every edge."""
        done: set[int] = set()
        on_path: set[int] = set()
        post: list[State] = []
        stack: list[tuple[State, Iterator[State]]] = []

        def children(s: State) -> Iterator[State]:
            if waits(s) == "ended":
                return iter(())
            if s not in self.edges:
                if self.limit is not None and len(self.edges) >= self.limit:
                    raise TooManyPositions(self.limit)
                self.edges[s] = self.expand(s)
                if self.progress is not None and len(self.edges) % 256 == 0:
                    self.progress(len(self.edges))
            return iter([c for (c, _), _p in self.edges[s] if c is not s])

        on_path.add(id(root))
        stack.append((root, children(root)))
        while stack:
            s, it = stack[-1]
            child = next(it, None)
            if child is None:
                stack.pop()
                on_path.discard(id(s))
                done.add(id(s))
                post.append(s)
            elif id(child) in on_path:
                raise ValueError("the procedure can come back to an earlier state: no exact odds")
            elif id(child) not in done:
                on_path.add(id(child))
                stack.append((child, children(child)))
        return post[::-1]


class _Grid:
    """What follows a volley in one rest of the position: the index of the position reached
    (-1 until worked out) and the rounds started on the way, by what is left of each side
    (rows: the attackers' remains, columns: the defenders', by identity)."""

    def __init__(self) -> None:
        self.rows: dict[int, int] = {}
        self.columns: dict[int, int] = {}
        self.child: Ints = np.full((8, 8), -1, dtype=np.int64)
        self.rounds: Ints = np.zeros((8, 8), dtype=np.int64)

    def row(self, attackers: tuple[Piece, ...]) -> int:
        return self.rows.setdefault(id(attackers), len(self.rows))

    def column(self, defenders: tuple[Piece, ...]) -> int:
        return self.columns.setdefault(id(defenders), len(self.columns))

    def fit(self) -> None:
        """Room for every row and column named so far (doubling, so that growing is rare)."""
        shape = self.child.shape
        need = (len(self.rows), len(self.columns))
        if need[0] <= shape[0] and need[1] <= shape[1]:
            return
        grown = tuple(n if wanted <= n else max(2 * n, wanted) for n, wanted in zip(shape, need, strict=True))
        child = np.full(grown, -1, dtype=np.int64)
        rounds = np.zeros(grown, dtype=np.int64)
        child[: shape[0], : shape[1]] = self.child
        rounds[: shape[0], : shape[1]] = self.rounds
        self.child, self.rounds = child, rounds


def _add(dist: dict[int, list[Any]], value: Any, p: Number) -> None:
    """Add the chance `p` of an interned `value` to `dist` (keyed by identity)."""
    slot = dist.get(id(value))
    if slot is None:
        dist[id(value)] = [value, p]
    else:
        slot[1] += p


class TooManyPositions(TrackerError):
    """An enumeration stopped at its limit of positions (each with a roll to enumerate)."""

    def __init__(self, limit: int, hint: str = "") -> None:
        message = f"this battle reaches over {limit:,} positions with dice to roll, the limit of exact odds"
        super().__init__(f"{message}: {hint}" if hint else message)
        self.limit = limit


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
    with collector_paused():
        return _enumerated(state, replace(ctx, memo={}), policy, rounds, exact, limit, progress)


def _enumerated(
    state: State,
    ctx: Context,
    policy: Policy | None,
    rounds: int,
    exact: bool,
    limit: int | None,
    progress: Callable[[int], None] | None,
) -> Odds:
    engine = _Engine(ctx, policy, exact)
    engine.canon = Canon(state)
    engine.limit, engine.progress = limit, progress
    root, more = engine.settle(state)
    start = rounds + more
    if not exact:
        return _flowed(engine, root, start, module_of(state).__name__.rsplit(".", 1)[-1])
    one: Number = Fraction(1) if exact else 1.0
    # The moments of the rounds (for their mean and deviation) are floats either way, which
    # keeps the fractions to one per edge.
    # Keyed by identity: the states of the walk are interned (`_Engine.order`).
    mass: dict[int, list[Any]] = {id(root): [one, float(start), float(start * start)]}
    result = Odds(procedure=module_of(state).__name__.rsplit(".", 1)[-1], truncated=one - one)
    order = engine.order(root)
    result.states = len(order)
    for s in order:
        m0, m1, m2 = mass.pop(id(s))
        if waits(s) == "ended":
            n = need(s, ctx)
            assert isinstance(n, Ended)
            old = result.outcomes.get(n.outcome, (one - one, 0.0, 0.0))
            result.outcomes[n.outcome] = (old[0] + m0, old[1] + m1, old[2] + m2)
            continue
        edges = engine.edges[s]
        q: Number = one - one
        a = b = 0.0
        leaves = False
        for (child, d), p in edges:
            if child is s:
                q += p
                a += float(p) * d
                b += float(p) * d * d
            else:
                leaves = True
        if not leaves:
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
        for (child, d), p in edges:
            if child is s:
                continue
            pf = float(p)
            acc = mass.get(id(child))
            if acc is None:
                mass[id(child)] = [p * m0, pf * (m1 + d * m0f), pf * (m2 + 2 * d * m1 + d * d * m0f)]
            else:
                acc[0] += p * m0
                acc[1] += pf * (m1 + d * m0f)
                acc[2] += pf * (m2 + 2 * d * m1 + d * d * m0f)
    return result


def _flowed(engine: _Engine, root: State, start: int, procedure: str) -> Odds:
    """The enumeration in floats: every position reached expanded once (the limit counting
    those with a roll), then the mass pushed through them as arrays (`flow`)."""
    engine.index_of(root)
    counts: list[int] = []
    children: list[Ints] = []
    chances: list[Floats] = []
    rounds: list[Ints] = []
    expanded = 0
    k = 0
    while k < len(engine.positions):
        s = engine.positions[k]
        k += 1
        if waits(s) == "ended":
            counts.append(0)
            continue
        if engine.limit is not None and expanded >= engine.limit:
            raise TooManyPositions(engine.limit)
        c, p, d = engine.expand_flat(s)
        expanded += 1
        if engine.progress is not None and expanded % 256 == 0:
            engine.progress(expanded)
        counts.append(len(c))
        children.append(c)
        chances.append(p)
        rounds.append(d)
    empty_i = np.zeros(0, dtype=np.int64)
    moved = flow(
        np.array(counts, dtype=np.int64),
        np.concatenate(children) if children else empty_i,
        np.concatenate(chances) if chances else np.zeros(0),
        np.concatenate(rounds) if rounds else empty_i,
        start,
    )
    result = Odds(procedure=procedure, truncated=moved.truncated, states=len(engine.positions))
    for k, s in enumerate(engine.positions):
        if waits(s) != "ended":
            continue
        n = need(s, engine.ctx)
        assert isinstance(n, Ended)
        old = result.outcomes.get(n.outcome, (0.0, 0.0, 0.0))
        m = (float(moved.mass[k]), float(moved.first[k]), float(moved.second[k]))
        result.outcomes[n.outcome] = (old[0] + m[0], old[1] + m[1], old[2] + m[2])
    return result
