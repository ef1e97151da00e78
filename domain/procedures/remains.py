"""What a volley may leave of one side, with the chances, for the odds enumeration
(`domain.procedures.engine`): its enemies' dice that hit it, grouped by the units they leave.
With the tracker's default casualties the remains are worked out a step at a time: the
selective hits first, then each firing class's hits in the order they are placed
(`volley.left_after`: HA4-HA7 give the same as placing them all together), each step kept by
what it starts from so that sides hit alike share it."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from itertools import product
from typing import Any

from domain.procedures import volley
from domain.procedures.base import Context, Decision, DieGroup, Piece, Side, evolve
from domain.procedures.canon import Canon
from domain.procedures.chances import Number, branches, pooled

State = Any  # one of the procedure states: NavalBattle, ConvoyBattle, AswCombat, Interception
Policy = Callable[[State, Decision], object | None]  # None: the tracker's default


class Remains:
    """The engine's part that works out a side's remains (`remains_of`), with the chances of a
    roll's results and the interning it shares; the engine makes the tables and says the
    numbers (`exact`: fractions, else floats)."""

    ctx: Context
    policy: Policy | None
    exact: bool
    canon: Canon | None
    sides: dict[Any, tuple[Piece, ...]]
    remains: dict[Any, list[tuple[tuple[Piece, ...], Number]]]
    scored: dict[Any, tuple[Piece, ...]]
    placed: dict[Any, tuple[Piece, ...]]
    steps: dict[tuple[Any, ...], list[tuple[tuple[Piece, ...], Number]]]
    rows: dict[tuple[Any, ...], list[tuple[Piece, ...]]]
    pooled_of: dict[tuple[DieGroup, ...], tuple[Number, ...]]
    interned: dict[Any, Any]
    names: dict[int, tuple[Piece, ...]]
    by_identity: dict[int, tuple[tuple[Piece, ...], tuple[Piece, ...]]]
    order_of: dict[str, tuple[int, str]]
    branched: dict[tuple[Any, ...], list[tuple[tuple[tuple[int, ...], ...], Number]]]

    def intern(self, value: Any) -> Any:
        """One object per equal value, so that the memo of what follows a volley can key on
        identities (the objects interned stay alive in this table)."""
        return self.interned.setdefault(value, value)

    def interned_side(self, pieces: tuple[Piece, ...]) -> tuple[Piece, ...]:
        """`intern` for a side's units, looked up first by identity (a position's sides are
        mostly objects interned already, and hashing one walks every unit); the entry keeps
        the object alive, so its identity stays its own."""
        slot = self.by_identity.get(id(pieces))
        if slot is not None and slot[0] is pieces:
            return slot[1]
        found: tuple[Piece, ...] = self.interned.setdefault(pieces, pieces)
        self.by_identity[id(pieces)] = (pieces, found)
        return found

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

    def remains_of(
        self, state: State, groups: tuple[DieGroup, ...], side: Side, members: list[int], apart: bool = False
    ) -> list[tuple[tuple[Piece, ...], Number]]:
        """What may be left of `side` after the volley, with the chances: its enemies' dice that
        hit it, grouped by the units they leave (with `apart`, as named by `Canon.side`)."""
        f = state.fight
        own = self.interned_side(f.side(side))
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
            left: tuple[Piece, ...] | None
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
                assert left is not None
                if apart:
                    left = self.named(left)
            add_chance(classes, left, p)
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
            key=lambda axis: self.placing_order(axis[0]),
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
                    add_chance(named, self.named(left), p)
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
            add_chance(dist, left, p)
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
        hits = [(n, q) for n, q in enumerate(d) if q]
        most = hits[-1][0] if hits else 0
        for here, p in dist:
            # What 0, 1, 2, ... hits of the class leave of these units, as far as needed yet.
            row_key = (prefix, id(here), cls)
            row = rows.get(row_key)
            if row is None:
                row = rows[row_key] = [here]
            while len(row) <= most:
                hit = ((cls, len(row)),)
                row.append(self.intern(volley.left_after(f, self.ctx, side, here, (), hit)))
            for n, q in hits:
                # `add_chance`, inline: this is the enumeration's innermost loop.
                left = row[n]
                slot = after.get(id(left))
                if slot is None:
                    after[id(left)] = [left, p * q]
                else:
                    slot[1] += p * q
        return [(left, p) for left, p in after.values()]

    def placing_order(self, firing_class: str) -> tuple[int, str]:
        """`volley.placing_order`, once per firing class."""
        found = self.order_of.get(firing_class)
        if found is None:
            found = self.order_of[firing_class] = volley.placing_order(self.ctx, firing_class)
        return found

    def named(self, left: tuple[Piece, ...]) -> tuple[Piece, ...]:
        """An interned side's units as `Canon.side` names them, interned, once per side (by
        identity: what it names is interned, so alive)."""
        found = self.names.get(id(left))
        if found is None:
            found = self.names[id(left)] = self.intern(self.canon.side(left))  # type: ignore[union-attr]
        return found

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


def add_chance(dist: dict[int, list[Any]], value: Any, p: Number) -> None:
    """Add the chance `p` of an interned `value` to `dist` (keyed by identity)."""
    slot = dist.get(id(value))
    if slot is None:
        dist[id(value)] = [value, p]
    else:
        slot[1] += p
