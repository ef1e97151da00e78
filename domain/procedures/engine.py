"""The odds enumeration's engine (`domain.procedures.odds`): the procedures' own transitions
with every decision taken by a policy (the tracker's defaults unless given) up to the next roll,
and the positions each roll leads to with their chances. A volley is worked out side by side
(`domain.procedures.remains`): each side's losses depend only on the hits on it (HA7) and the
hits are taken together (F3, NC3), so what may be left of each side is worked out once and the
results are the pairs of those. A convoy search is worked out by how many of each run of alike
searchers detect (CV3, `Engine.searched`), not by which. Positions that differ only in which
unit of a type is which are one state (`Canon`); each position is one object (interned), so the
walks key on identities."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import product
from math import comb, lcm
from types import ModuleType
from typing import Any

from domain.errors import TrackerError
from domain.procedures import asw, convoy, interception, naval, volley
from domain.procedures.base import (
    Context,
    Decision,
    DieGroup,
    Facts,
    Need,
    Outcome,
    Piece,
    Roll,
    Side,
    evolve,
)
from domain.procedures.canon import Canon, pieces_in
from domain.procedures.chances import Number
from domain.procedures.fight import Fight
from domain.procedures.remains import Policy as Policy
from domain.procedures.remains import Remains, add_chance
from domain.procedures.remains import State as State

_MODULES: dict[type, ModuleType] = {
    naval.NavalBattle: naval,
    convoy.ConvoyBattle: convoy,
    asw.AswCombat: asw,
    interception.Interception: interception,
}

# Whoever waits on long work may set this around it (a terminal's running count): it is told,
# by every engine of the work, each time a position with a roll is expanded. The first
# positions of a big battle can take a second each, long before any count of them is round.
EXPANDED: ContextVar[Callable[[], None] | None] = ContextVar("expanded", default=None)


def module_of(state: State) -> ModuleType:
    return _MODULES[type(state)]


def need(state: State, ctx: Context) -> Need:
    asked: Need = module_of(state).need(state, ctx)
    return asked


def decide(state: State, ctx: Context, choice: object | None) -> tuple[State, Facts]:
    after: tuple[State, Facts] = module_of(state).decide(state, ctx, choice)
    return after


def roll(state: State, ctx: Context, counts: tuple[tuple[int, ...], ...]) -> tuple[State, Facts]:
    after: tuple[State, Facts] = module_of(state).roll(state, ctx, counts)
    return after


_ROLL_STEPS = frozenset({"merchant_defence", "search", "convoy_table"})


def waits(state: State) -> str:
    """ "decision", "roll" or "ended": what `need` would return, without building it."""
    # `_value_`, the member's value without the `value` property's lookup: this runs at
    # every decision of an enumeration.
    step = state.step._value_
    if step == "ended":
        return "ended"
    if step == "volley":
        return "roll" if state.fight.step._value_ == "fire" else "decision"
    return "roll" if step in _ROLL_STEPS else "decision"


def volley_split(state: State, groups: tuple[DieGroup, ...]) -> list[tuple[Side, list[int]]] | None:
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
    """The rounds these facts start."""
    n = 0
    for f in facts:
        if f.kind == "round":
            n += 1
    return n


class Edges:
    """The edges of a position with a roll, as the walks keep them: the positions reached
    (settled, with the rounds started on the way; one may come more than once) and their
    chances. With fractions each chance is kept as an integer over the position's common
    `denominator` (one fraction an edge, with its two integers, was most of the memory of an
    exact enumeration: a big battle has hundreds of edges a position); with floats
    (`denominator` 0) the chances are the probabilities. Iterated, (reached, chance) pairs."""

    __slots__ = ("chances", "denominator", "reached")

    def __init__(self, reached: tuple[tuple[State, int], ...], chances: tuple[Any, ...], denominator: int) -> None:
        self.reached = reached
        self.chances = chances
        self.denominator = denominator

    @classmethod
    def of(cls, pairs: list[tuple[tuple[State, int], Number]], exact: bool) -> Edges:
        """The edges `expand` gives, kept so (fractions, with `exact`, over their lcm)."""
        reached = tuple(x for x, _ in pairs)
        if not exact:
            return cls(reached, tuple(p for _, p in pairs), 0)
        chances = [Fraction(p) for _, p in pairs]
        denominator = lcm(*(p.denominator for p in chances))
        return cls(reached, tuple(p.numerator * (denominator // p.denominator) for p in chances), denominator)

    def __len__(self) -> int:
        return len(self.reached)

    def __iter__(self) -> Iterator[tuple[tuple[State, int], Number]]:
        d = self.denominator
        if not d:
            return zip(self.reached, self.chances, strict=True)
        return ((x, Fraction(n, d)) for x, n in zip(self.reached, self.chances, strict=True))


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


class Engine(Remains):
    """The transitions of one enumeration and what it has worked out: positions settled,
    each roll's edges, each side's remains, one object per equal value."""

    def __init__(self, ctx: Context, policy: Policy | None, exact: bool = True) -> None:
        self.ctx = ctx
        self.policy = policy
        self.exact = exact
        self.settled: dict[State, tuple[State, int]] = {}
        self.edges: dict[State, Edges] = {}
        self.sides: dict[Any, tuple[Piece, ...]] = {}
        self.remains: dict[Any, list[tuple[tuple[Piece, ...], Number]]] = {}
        self.scored: dict[Any, tuple[Piece, ...]] = {}
        self.placed: dict[Any, tuple[Piece, ...]] = {}
        self.steps: dict[tuple[Any, ...], list[tuple[tuple[Piece, ...], Number]]] = {}
        self.rows: dict[tuple[Any, ...], list[tuple[Piece, ...]]] = {}
        self.tables: dict[tuple[Any, ...], dict[tuple[int, ...], tuple[Piece, ...]]] = {}
        self.joint: dict[tuple[Any, ...], list[tuple[tuple[Piece, ...], Number]]] = {}
        self.pooled_of: dict[tuple[DieGroup, ...], tuple[Number, ...]] = {}
        # What follows a volley: context, then attackers, then defenders left, by identity.
        self.followed: dict[int, dict[int, dict[int, tuple[State, int]]]] = {}
        self.interned: dict[Any, Any] = {}
        self.names: dict[int, tuple[Piece, ...]] = {}
        self.by_identity: dict[int, tuple[tuple[Piece, ...], tuple[Piece, ...]]] = {}
        self.order_of: dict[str, tuple[int, str]] = {}
        self.branched: dict[tuple[Any, ...], list[tuple[tuple[tuple[int, ...], ...], Number]]] = {}
        self.canon: Canon | None = None
        self.limit: int | None = None

    def forget(self) -> None:
        """Let go of what working out the positions remembered (positions settled, each side's
        remains, what follows each volley, the interning, the rules' memo of this context):
        once every position's edges are found, the walk reads none of it. Only for an
        engine and context of one enumeration (`Shared` goes on using its tables)."""
        for table in (
            self.settled,
            self.sides,
            self.remains,
            self.scored,
            self.placed,
            self.steps,
            self.rows,
            self.tables,
            self.joint,
            self.pooled_of,
            self.followed,
            self.interned,
            self.names,
            self.by_identity,
            self.branched,
        ):
            table.clear()
        if self.canon is not None:
            self.canon.forget()
        self.ctx.memo.clear()

    # CV3: a convoy search enumerated by how many alike searchers detect (`searched`); off,
    # every searcher's die on its own (2**N results), as a check of the counts.
    count_searchers = True

    def settle(self, state: State, named: bool = False) -> tuple[State, int]:
        """Take every decision up to the next roll (or the end); the rounds started on the way.
        `named`: `state` is named canonically already, and decisions name no new unit, so the
        position reached is too (were it not, only a sharing would be missed)."""
        hit = self.settled.get(state)
        if hit is None:
            hit = self.settled[state] = self.settled_from(state, named)
        return hit

    def settled_from(self, state: State, named: bool = False) -> tuple[State, int]:
        """`settle` without its memo (for positions met once: what follows a volley is kept
        by what it left of each side)."""
        here, rounds = state, 0
        ctx, policy, step = self.ctx, self.policy, module_of(state).decide
        while True:
            if policy is None:
                # The defaults need no look at the decision itself.
                if waits(here) != "decision":
                    break
                here, facts = step(here, ctx, None)
            else:
                n = need(here, ctx)
                if not isinstance(n, Decision):
                    break
                here, facts = step(here, ctx, policy(here, n))
            if facts:
                rounds += rounds_in(facts)
        if self.canon is not None and not named:
            here = self.canon(here)
        # One object per position, so that the walk and the loop test compare identities.
        return self.intern(here), rounds

    def expand(self, state: State) -> list[tuple[tuple[State, int], Number]]:
        """The positions a roll leads to (settled, with the rounds started on the way) and
        their chances; one position may come more than once (its chances add up)."""
        n = need(state, self.ctx)
        assert isinstance(n, Roll)
        split = volley_split(state, n.groups)
        if split:
            return list(self.expand_volley(state, n.groups, split))
        return self.rolled(state, n.groups)

    def expanded(self, state: State) -> Edges:
        """`expand`, kept as the walks keep it (`Edges`: each chance an integer over the
        position's common denominator with fractions)."""
        n = need(state, self.ctx)
        assert isinstance(n, Roll)
        split = volley_split(state, n.groups)
        if split:
            return self.expand_volley(state, n.groups, split)
        return Edges.of(self.rolled(state, n.groups), self.exact)

    def rolled(self, state: State, groups: tuple[DieGroup, ...]) -> list[tuple[tuple[State, int], Number]]:
        """`expand` for any roll but a volley's: each result rolled and settled."""
        out: dict[tuple[State, int], Number] = {}
        results = self.searched(state, groups) if self.count_searchers else None
        for counts, p in self.chances(groups) if results is None else results:
            child, facts = roll(state, self.ctx, counts)
            settled, more = self.settle(child)
            key = (settled, rounds_in(facts) + more)
            out[key] = out.get(key, 0) + p
        return list(out.items())

    def searched(
        self, state: State, groups: tuple[DieGroup, ...]
    ) -> list[tuple[tuple[tuple[int, ...], ...], Number]] | None:
        """CV3: a convoy search's results by how many of each run of alike searchers detect
        (`convoy.alike_runs`: which ones changes nothing but names), the first of the run
        detecting, with the binomial chance of that many: N + 1 results for N alike searchers
        rather than 2**N. None for any other roll, or dice not one per searcher."""
        if not isinstance(state, convoy.ConvoyBattle) or state.step is not convoy.ConvoyStep.SEARCH:
            return None
        searchers = state.searchers
        if len(groups) != len(searchers) or any(
            g.effect != ("detects", u.id) or g.count != 1 or g.kind != "at_most"
            for g, u in zip(groups, searchers, strict=True)
        ):
            return None
        one: Number = Fraction(1) if self.exact else 1.0
        axes: list[list[tuple[list[int], int, Number]]] = []
        for run in convoy.alike_runs(searchers, pieces_in(state)):
            # Alike units roll alike (CV3 reads nation and type); split where a die does not.
            parts: list[list[int]] = []
            for i in run:
                if parts and _same_die(groups[parts[-1][-1]], groups[i]):
                    parts[-1].append(i)
                else:
                    parts.append([i])
            for part in parts:
                n, hit_chance = len(part), groups[part[0]].chances[1] * one
                chances = (comb(n, k) * hit_chance**k * (1 - hit_chance) ** (n - k) for k in range(n + 1))
                axes.append([(part, k, q) for k, q in enumerate(chances) if q])
        miss, hit = (1, 0), (0, 1)
        results: list[tuple[tuple[tuple[int, ...], ...], Number]] = []
        for combo in product(*axes):
            counts = [miss] * len(groups)
            p = one
            for part, k, q in combo:
                for i in part[:k]:
                    counts[i] = hit
                p *= q
            results.append((tuple(counts), p))
        return results

    def expand_volley(self, state: State, groups: tuple[DieGroup, ...], split: list[tuple[Side, list[int]]]) -> Edges:
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
            return Edges(tuple(found for found, _ in edges), tuple(p for _, p in edges), 0)
        # Fractions: the pairs reaching one position are added up first, as integers, and
        # kept so (`Edges`): no fraction per edge.
        acc: dict[int, list[Any]] = {}
        for found, n in edges:
            add_chance(acc, found, n)
        slots = acc.values()
        return Edges(tuple(found for found, _ in slots), tuple(n for _, n in slots), denominator)

    def volley_sides(
        self, state: State, groups: tuple[DieGroup, ...], split: list[tuple[Side, list[int]]]
    ) -> tuple[int, bool, list[tuple[tuple[Piece, ...], Number]], list[tuple[tuple[Piece, ...], Number]]]:
        """What a volley's roll may leave of each side, with the chances, and what the pairs
        share: the identity of the rest of the position (what follows a volley depends on it
        and on what is left of each side, not on the volley's shots) and whether each side's
        remains are named on their own (`Canon.apart`)."""
        f = state.fight
        whole = self.intern((evolve(state, fight=_over(f, (), (), ())), f.opening))
        rest, opening = whole
        # Where nothing else names units of the sides' kinds, each side's remains are named
        # canonically on their own, so that remains alike but for names are one.
        apart = self.canon is not None and not opening and self.canon.apart(rest, (f.attackers, f.defenders))
        remains = {side: self.remains_of(state, groups, side, members, apart) for side, members in split}
        one: Number = Fraction(1) if self.exact else 1.0
        attackers_left = remains.get("attacker") or [(self.interned_side(f.attackers), one)]
        defenders_left = remains.get("defender") or [(self.interned_side(f.defenders), one)]
        return id(whole), apart, attackers_left, defenders_left

    def follow(
        self, state: State, attackers: tuple[Piece, ...], defenders: tuple[Piece, ...], named: bool = False
    ) -> tuple[State, int]:
        """The procedure once its volley left these units (F3, NC3: every hit taken together),
        settled up to its next roll, and the rounds started on the way. `named`: the units are
        named canonically already, and nothing else in the position names one."""
        f = state.fight
        opening = f.opening
        if opening:
            alive = {x.id for x in attackers} | {x.id for x in defenders}
            opening = tuple(u for u in opening if u in alive)
        taken = evolve(state, fight=_over(f, attackers, defenders, opening))
        if self.canon is not None and not named:
            # Named canonically before going on, so that parents naming the same position
            # differently share what follows.
            taken = self.canon(taken)
        child, facts = module_of(state).after_volley(taken, self.ctx)
        settled, more = self.settled_from(child, named)
        return settled, rounds_in(facts) + more

    def order(self, root: State) -> list[State]:
        """The roll states reachable from `root`, parents before children (self-loops aside).
        Every state here is interned (one object per position), so the walk keys on
        identities rather than hashing each state at every edge."""
        self.expand_all(root)
        done: set[int] = set()
        on_path: set[int] = set()
        post: list[State] = []
        stack: list[tuple[State, Iterator[State]]] = []

        def children(s: State) -> Iterator[State]:
            if waits(s) == "ended":
                return iter(())
            return iter([c for c, _ in self.edges[s].reached if c is not s])

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

    def expand_all(self, root: State) -> None:
        """Expand every position with a roll reachable from `root`, breadth first. Each one
        found is expanded in turn, so beyond the limit the walk stops as soon as it has found
        that many, not after expanding as many: a big battle's positions take milliseconds
        each, and the walk finds them far faster than it expands them."""
        expanded, limit = EXPANDED.get(), self.limit
        found: set[int] = {id(root)}
        queue = [root]
        rolling = int(waits(root) != "ended")
        for s in queue:
            if waits(s) == "ended":
                continue
            edges = self.edges.get(s)
            if edges is None:
                edges = self.edges[s] = self.expanded(s)
                if expanded is not None:
                    expanded()
            for c, _ in edges.reached:
                if id(c) not in found:
                    found.add(id(c))
                    queue.append(c)
                    if waits(c) != "ended":
                        rolling += 1
                        if limit is not None and rolling > limit:
                            raise TooManyPositions(limit)


def _same_die(a: DieGroup, b: DieGroup) -> bool:
    """Two groups whose dice have the same chances (all but what they decide)."""
    return (a.faces, a.kind, a.target, a.dice, a.table, a.cap) == (b.faces, b.kind, b.target, b.dice, b.table, b.cap)


def _over(f: Fight, attackers: tuple[Piece, ...], defenders: tuple[Piece, ...], opening: tuple[str, ...]) -> Fight:
    """The fight with its volley over, these units left (F3, NC3: every hit taken together)."""
    return evolve(
        f,
        attackers=attackers,
        defenders=defenders,
        opening=opening,
        step=volley.VolleyStep.DONE,
        waiting=(),
        shots=(),
        hits=(),
        groups=(),
        chosen=(),
    )


class TooManyPositions(TrackerError):
    """An enumeration stopped at its limit of positions (each with a roll to enumerate)."""

    def __init__(self, limit: int, hint: str = "") -> None:
        message = f"this battle reaches over {limit:,} positions with dice to roll, the limit of exact odds"
        super().__init__(f"{message}: {hint}" if hint else message)
        self.limit = limit
