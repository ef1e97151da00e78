"""What a volley may leave of one side, with the chances, for the odds enumeration
(`domain.procedures.engine`): its enemies' dice that hit it, grouped by the units they leave.
With the tracker's default casualties the remains are worked out in two steps: the selective
hits first, then every firing class's hits together on what those left (`volley.left_after`:
HA7's default depends on the units' hits left alone, but on the hits of every class at once,
since the order they are placed in changes what is lost), each step kept by what it starts
from so that sides hit alike share it. A campaign whose ruleset places hits in class order
(HA7 as first written) gets that rule's default from the same steps: `Placing.cheapest`
follows the board's ruleset."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from itertools import product
from typing import Any

from domain.procedures import volley
from domain.procedures.base import Context, Decision, DieGroup, Piece, Side, evolve
from domain.procedures.canon import Canon
from domain.procedures.chances import Number, branches, pooled
from domain.rules.hits import Placing

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
    tables: dict[tuple[Any, ...], dict[tuple[int, ...], tuple[Piece, ...]]]
    joint: dict[tuple[Any, ...], list[tuple[tuple[Piece, ...], Number]]]
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
        """`remains_of` with the tracker's default casualties, in two steps: the selective hits
        first, then the firing classes' hits together on what the selective hits left
        (`volley.left_after`). What each step leaves is worked out once per units and hits,
        and the steps add up chances instead of multiplying the results of every group."""
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
        if len(classes) == 1:
            cls, d = classes[0]
            key = (id(dist), cls, id(d))
            found = steps.get(key)
            if found is None:
                found = steps[key] = self.class_step(f, side, prefix, dist, cls, d)
            dist = found
        elif classes:
            key = (id(dist), tuple((cls, id(d)) for cls, d in classes))
            found = steps.get(key)
            if found is None:
                found = steps[key] = self.classes_step(f, side, prefix, dist, classes, one)
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
            if len(row) <= most:
                placing = volley.placing_of(f, self.ctx, side, here, ((cls, most),))
                while len(row) <= most:
                    row.append(self.intern(volley.left_of(here, placing.cheapest((len(row),)), self.ctx)))
            for n, q in hits:
                # `add_chance`, inline: this is the enumeration's innermost loop.
                left = row[n]
                slot = after.get(id(left))
                if slot is None:
                    after[id(left)] = [left, p * q]
                else:
                    slot[1] += p * q
        return [(left, p) for left, p in after.values()]

    def classes_step(
        self,
        f: Any,
        side: Side,
        prefix: tuple[str, ...],
        dist: list[tuple[tuple[Piece, ...], Number]],
        classes: list[tuple[str, tuple[Number, ...]]],
        one: Number,
    ) -> list[tuple[tuple[Piece, ...], Number]]:
        """What the hits of several firing classes (each with the chance of each number of its
        hits, `classes`) may leave of each of the units in `dist`, placed on them together by
        default (HA7: the order that loses least depends on every class's hits)."""
        names = tuple(cls for cls, _ in classes)
        combos: list[tuple[tuple[int, ...], Number]] | None = None
        chances = tuple(id(d) for _, d in classes)
        after: dict[int, list[Any]] = {}
        for here, p in dist:
            # What these hits may leave of these units, each with its chance: kept per units
            # and chances (sides hit alike share it), made from what each number of hits per
            # class leaves (kept per units and classes).
            joint_key = (prefix, id(here), names, chances)
            joint = self.joint.get(joint_key)
            if joint is None:
                if combos is None:
                    combos = self.combos(classes, one)
                joint = self.joint[joint_key] = self.classes_left(f, side, prefix, here, names, combos)
            for left, q in joint:
                slot = after.get(id(left))
                if slot is None:
                    after[id(left)] = [left, p * q]
                else:
                    slot[1] += p * q
        return [(left, p) for left, p in after.values()]

    @staticmethod
    def combos(classes: list[tuple[str, tuple[Number, ...]]], one: Number) -> list[tuple[tuple[int, ...], Number]]:
        """Every number of hits per class that may come (its chance the product of each's)."""
        out: list[tuple[tuple[int, ...], Number]] = []
        for combo in product(*([(n, q) for n, q in enumerate(d) if q] for _, d in classes)):
            q = one
            for _, chance in combo:
                q *= chance
            out.append((tuple(n for n, _ in combo), q))
        return out

    def classes_left(
        self,
        f: Any,
        side: Side,
        prefix: tuple[str, ...],
        here: tuple[Piece, ...],
        names: tuple[str, ...],
        combos: list[tuple[tuple[int, ...], Number]],
    ) -> list[tuple[tuple[Piece, ...], Number]]:
        """What each of `combos` (hits per class of `names`, with its chance) leaves of `here`
        by default, the chances of the same remains added up."""
        table_key = (prefix, id(here), names)
        table = self.tables.get(table_key)
        if table is None:
            table = self.tables[table_key] = {}
        # The rules' view of the units, once per set of classes that hit; what is left, once
        # per outcome (`Placing.cheapest` gives one object per outcome).
        placings: dict[tuple[int, ...], Placing] = {}
        lefts: dict[int, tuple[Piece, ...]] = {}
        out: dict[int, list[Any]] = {}
        for hits, q in combos:
            left = table.get(hits)
            if left is None:
                firing = tuple(i for i, n in enumerate(hits) if n)
                left = here
                if firing:
                    placing = placings.get(firing)
                    if placing is None:
                        placed = tuple((names[i], hits[i]) for i in firing)
                        placing = placings[firing] = volley.placing_of(f, self.ctx, side, here, placed)
                    taken = placing.cheapest(tuple(hits[i] for i in firing))
                    found = lefts.get(id(taken))
                    if found is None:
                        found = lefts[id(taken)] = self.intern(volley.left_of(here, taken, self.ctx))
                    left = found
                table[hits] = left
            add_chance(out, left, q)
        return [(left, q) for left, q in out.values()]

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
