"""Hit allocation (HA4-HA7): the hits a unit can still take and what losing it costs, the
tiers non-selective hits fall on, every outcome of placing them one at a time in any order
(HA7), the cheapest of those as the default and the checking of an owner's choice, as pure
functions. A ruleset whose `placement` is "class-order" (HA7 as first written, which
campaigns recorded before the amendment keep) is refereed by `ClassOrder` instead, through
the same `Placing`. Selective targets and screening (HA1-HA3) are in `targets`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from domain.board import Board, Unit
from domain.errors import RuleViolation
from domain.text import plural


def hits_to_sink(board: Board, unit: Unit) -> int:
    """F3, NC5: hits a unit can still take before it sinks."""
    return board.unit_type(unit).hits - unit.damage


def capacity(board: Board, candidates: list[Unit]) -> int:
    return sum(hits_to_sink(board, u) for u in candidates)


def unit_cost(board: Board, unit: Unit) -> int:
    """A unit's purchase price: what losing it costs (HA7) and what it is worth as a target."""
    return board.unit_type(unit).cost


def default_casualties(board: Board, candidates: list[Unit], hits: int) -> list[str]:
    """HA7: the cheapest legal choice: hits that only damage capital ships first, then the
    cheapest units; a unit appears once per hit it takes."""
    hits = min(hits, capacity(board, candidates))
    chosen: list[str] = []
    remaining = {u.id: hits_to_sink(board, u) for u in candidates}
    by_id = {u.id: u for u in candidates}
    while len(chosen) < hits:
        # A hit that leaves the unit afloat costs nothing; otherwise lose the cheapest unit.
        afloat = [uid for uid, left in remaining.items() if left > 1]
        if afloat:
            pick = min(afloat, key=lambda uid: (-board.unit_type(by_id[uid]).cost, uid))
        else:
            pick = min(
                (uid for uid, left in remaining.items() if left > 0),
                key=lambda uid: (board.unit_type(by_id[uid]).cost, uid),
            )
        chosen.append(pick)
        remaining[pick] -= 1
    return chosen


def check_casualties(
    board: Board, rule: str, owner: str, candidates: list[Unit], hits: int, chosen: list[str]
) -> list[str]:
    """HA7: the owner's choice must name exactly the hits that can be taken, among the
    candidates the rules allow, no unit more often than it has hits left."""
    by_id = {u.id: u for u in candidates}
    needed = min(hits, capacity(board, candidates))
    for uid in chosen:
        if uid not in by_id:
            if uid in board.units and board.units[uid].nation != owner:
                raise RuleViolation(
                    "HA7", f"{uid} belongs to {board.units[uid].nation}; {owner} chooses its own losses"
                )
            if uid not in board.units:
                raise board.unknown_unit(uid)
            legal = ", ".join(sorted(by_id)) or "none"
            raise RuleViolation(rule, f"{uid} cannot take these hits (legal: {legal})")
    if len(chosen) != needed:
        raise RuleViolation(
            "HA7",
            f"{owner} must assign {plural(needed, 'hit')}, got {len(chosen)} (legal: {', '.join(sorted(by_id))})",
        )
    for uid, n in Counter(chosen).items():
        if n > hits_to_sink(board, by_id[uid]):
            raise RuleViolation(
                "HA7", f"{uid} can take {plural(hits_to_sink(board, by_id[uid]), 'more hit')}, assigned {n}"
            )
    return chosen


# ----- non-selective hits in naval battles (HA4-HA7) -----


def priority_rule(firing_class: str) -> str:
    """The rule behind a firing class's order of casualties."""
    return {"capital": "HA5", "escort": "HA6"}.get(firing_class, "HA4")


def hit_tiers(board: Board, firing_class: str, units: list[Unit], nc6: bool = True) -> list[list[Unit]]:
    """HA4-HA6: the units a non-selective hit from `firing_class` may fall on, tier by tier.

    Naval classes follow the ruleset's priority for the firing class; naval classes it does
    not list (submarines) come after them; aircraft come last (HA4). Submarines take hits only
    from escorts (NC6)."""
    rs = board.ruleset
    naval = sorted(
        (
            u
            for u in units
            if board.unit_type(u).is_naval
            and (not nc6 or firing_class == "escort" or not board.unit_type(u).is_submarine)
        ),
        key=lambda u: u.id,
    )
    air = sorted((u for u in units if board.unit_type(u).is_air), key=lambda u: u.id)
    tiers: list[list[Unit]] = []
    listed: set[str] = set()
    for classes in rs.hit_priority.get(firing_class, ()):
        tiers.append([u for u in naval if board.unit_type(u).unit_class in classes])
        listed.update(classes)
    tiers.append([u for u in naval if board.unit_type(u).unit_class not in listed])
    if rs.naval_hits_naval_before_air:
        tiers.append(air)
    else:
        tiers[-1] = tiers[-1] + air
    return [t for t in tiers if t]


def _class_words(firing_class: str) -> str:
    return {"capital": "battleships and carriers", "escort": "cruisers and destroyers"}.get(
        firing_class, f"{firing_class} units"
    )


Key = Callable[[str, int], tuple[object, ...]]  # (unit, hits it can still take) -> rank: the lowest takes a hit
Score = Callable[[Counter[str]], tuple[object, ...]]  # hits per unit -> rank of a choice: the lowest is picked
Layout = tuple[tuple[tuple[int, ...], ...], ...]  # per firing class, its tiers as pools
Placed = list[tuple[str, tuple[str, ...]]]  # per hit: its firing class, the units of its tier with hits left


def cheapest_key(board: Board) -> Key:
    """HA7's default within a pool: a hit that leaves a capital ship afloat costs nothing (F3,
    NC5; the costliest such ship first), else the cheapest unit is lost; the lowest ID on ties."""

    def key(uid: str, left: int) -> tuple[object, ...]:
        cost = unit_cost(board, board.units[uid])
        return (left <= 1, cost if left <= 1 else -cost, uid)

    return key


def lost_units(hits: Counter[str], remaining: dict[str, int]) -> list[str]:
    """The units these hits sink: every hit they can still take."""
    return [uid for uid, n in hits.items() if n >= remaining[uid]]


def cheapest_score(board: Board, remaining: dict[str, int]) -> Score:
    """HA7's default between orders: the fewest resources lost, then the fewest units lost, then
    the fewest hits taken (more hits lost, less damage)."""

    def score(hits: Counter[str]) -> tuple[object, ...]:
        lost = lost_units(hits, remaining)
        return (sum(unit_cost(board, board.units[u]) for u in lost), len(lost), sum(hits.values()))

    return score


class Placing:
    """HA4-HA7: one side's non-selective hits of a volley and the units they may fall on.

    Units that every firing class's rule ranks alike (the same tier for each class) form a pool:
    the owner places a hit on any unit of the pool it falls on, so orders of placing the hits
    differ only in how many hits each pool takes (`outcomes`). Units with no hit left to take,
    or in no tier of any class hitting (NC6), are in no pool."""

    def __init__(
        self,
        board: Board,
        groups: list[tuple[str, int]],
        units: list[Unit],
        taken: Counter[str],
        nc6: bool = True,
        tiers: dict[str, list[list[Unit]]] | None = None,
    ) -> None:
        self.board = board
        merged: dict[str, int] = {}
        for firing_class, n in groups:
            merged[firing_class] = merged.get(firing_class, 0) + n
        self.classes = tuple(merged)
        self.hits = tuple(merged.values())
        self.remaining = {u.id: max(0, hits_to_sink(board, u) - taken[u.id]) for u in units}
        ranks = [tiers[c] if tiers is not None else hit_tiers(board, c, units, nc6) for c in self.classes]
        signature: dict[str, list[int]] = {}
        for i, order in enumerate(ranks):
            for t, tier in enumerate(order):
                for u in tier:
                    if self.remaining[u.id]:
                        signature.setdefault(u.id, [-1] * len(ranks))[i] = t
        by_signature: dict[tuple[int, ...], list[str]] = {}
        for uid in sorted(signature):
            by_signature.setdefault(tuple(signature[uid]), []).append(uid)
        # Pools in the order of their signatures, so that sides alike share `_finals`' cache.
        keys = sorted(by_signature)
        self.pools = tuple(tuple(by_signature[k]) for k in keys)
        self.pool_of = {uid: p for p, pool in enumerate(self.pools) for uid in pool}
        self.rooms = tuple(sum(self.remaining[uid] for uid in pool) for pool in self.pools)
        layout: list[tuple[tuple[int, ...], ...]] = []
        for i, order in enumerate(ranks):
            pooled = (tuple(p for p, k in enumerate(keys) if k[i] == t) for t in range(len(order)))
            layout.append(tuple(tier for tier in pooled if tier))
        self.layout: Layout = tuple(layout)
        self.key, self.score = cheapest_key(board), cheapest_score(board, self.remaining)
        self.spreads: dict[tuple[int, int], list[str]] = {}
        self.taken: dict[tuple[int, ...], Counter[str]] = {}
        # Campaigns recorded under HA7 before its amendment keep being refereed by it.
        self.by_class = (
            ClassOrder(board, groups, units, self.remaining, {c: ranks[i] for i, c in enumerate(self.classes)})
            if board.ruleset.hit_placement == "class-order"
            else None
        )

    def outcomes(self, hits: tuple[int, ...] | None = None) -> tuple[tuple[int, ...], ...]:
        """HA7: the hits each pool takes, for every order of placing the hits (each outcome
        once); `hits`: per firing class, other numbers than the volley's."""
        return _outcomes(self.rooms, self.hits if hits is None else hits, self.layout)

    def spread(self, pool: int, n: int, key: Key) -> list[str]:
        """`n` hits on the units of a pool, each on the unit `key` ranks lowest (a list not to
        be changed: the default's are kept, an enumeration asks for them again and again)."""
        if key is not self.key:
            return self._spread(pool, n, key)
        found = self.spreads.get((pool, n))
        if found is None:
            found = self.spreads[(pool, n)] = self._spread(pool, n, key)
        return found

    def _spread(self, pool: int, n: int, key: Key) -> list[str]:
        left = {uid: self.remaining[uid] for uid in self.pools[pool]}
        out: list[str] = []
        for _ in range(n):
            pick = min((uid for uid, k in left.items() if k), key=lambda uid: key(uid, left[uid]))
            left[pick] -= 1
            out.append(pick)
        return out

    def choose(
        self, key: Key, score: Score, hits: tuple[int, ...] | None = None
    ) -> tuple[tuple[int, ...], list[list[str]]]:
        """The outcome `score` ranks lowest over every order, each pool's hits spread by `key`,
        the lowest IDs on ties: the hits each pool takes, and the units taking them per pool."""
        outcomes = self.outcomes(hits)
        if len(outcomes) == 1:
            # One outcome whatever the order (the usual case): nothing to rank.
            return outcomes[0], [self.spread(p, n, key) for p, n in enumerate(outcomes[0])]
        found: tuple[tuple[object, ...], list[str], tuple[int, ...], list[list[str]]] | None = None
        for absorbed in outcomes:
            spread = [self.spread(p, n, key) for p, n in enumerate(absorbed)]
            taken = Counter(uid for units in spread for uid in units)
            rank, ids = score(taken), sorted(taken.elements())
            if found is None or (rank, ids) < (found[0], found[1]):
                found = (rank, ids, absorbed, spread)
        assert found is not None
        return found[2], found[3]

    def best(self, key: Key, score: Score) -> list[str]:
        """`choose` for the volley's hits: one entry per hit taken, in an order that places them so."""
        if self.by_class is not None:
            return self.by_class.place(key)
        return self.in_order(*self.choose(key, score))

    def default(self) -> list[str]:
        """HA7's default: the cheapest choice over every order, in an order that places it."""
        if self.by_class is not None:
            return self.by_class.default()
        return self.best(self.key, self.score)

    def cheapest(self, hits: tuple[int, ...]) -> Counter[str]:
        """HA7's default for other numbers of hits of the same classes (`default` in any order):
        the hits each unit takes (one object per outcome, not to be changed: numbers of hits
        that lead to the same outcome share it)."""
        if self.by_class is not None:
            return self.by_class.cheapest(hits, self.classes)
        outcomes = _outcomes(self.rooms, hits, self.layout)
        if len(outcomes) > 1:
            absorbed, spread = self.choose(self.key, self.score, hits)
        else:
            absorbed, spread = outcomes[0], None
        found = self.taken.get(absorbed)
        if found is None:
            if spread is None:
                spread = [self.spread(p, n, self.key) for p, n in enumerate(absorbed)]
            found = self.taken[absorbed] = Counter(uid for units in spread for uid in units)
        return found

    def in_order(self, absorbed: tuple[int, ...], spread: list[list[str]]) -> list[str]:
        """The units taking the volley's hits in an order of placing them that leads to
        `absorbed` (each pool's units taken in the order given)."""
        final = tuple(r - n for r, n in zip(self.rooms, absorbed, strict=True))
        queues = [list(units) for units in spread]
        out: list[str] = []
        for pool in _witness(self.rooms, self.hits, self.layout, final):
            if pool is not None:
                out.append(queues[pool].pop(0))
        return out

    def forced(self) -> bool:
        """True when every order and every choice within a pool leaves the same units hit."""
        if self.by_class is not None:
            return self.by_class.forced()
        absorbed = self.outcomes()
        if len(absorbed) > 1:
            return False
        return all(n in (0, self.rooms[p]) or len(self.pools[p]) == 1 for p, n in enumerate(absorbed[0]))

    def words(self) -> str:
        """'1 hit from battleships and carriers and 2 from cruisers and destroyers'."""
        given = [(c, n) for c, n in zip(self.classes, self.hits, strict=True) if n]
        return " and ".join(
            f"{plural(n, 'hit') if i == 0 else n} from {_class_words(c)}" for i, (c, n) in enumerate(given)
        )

    def describe(self, absorbed: tuple[int, ...]) -> str:
        """An outcome in the words of `--units`: the units taking hits, or how many among a pool."""
        named: list[str] = []
        parts: list[str] = []
        for p, n in enumerate(absorbed):
            if not n:
                continue
            pool = self.pools[p]
            if n == self.rooms[p] or len(pool) == 1:
                named += [uid for uid in pool for _ in range(min(n, self.remaining[uid]))]
            else:
                parts.append(f"{plural(n, 'hit')} among {'/'.join(pool)}")
        lost = sum(self.hits) - sum(absorbed)
        text = ", ".join(sorted(named) + parts) or "nothing"
        return f"{text} ({plural(lost, 'hit')} lost)" if lost else text

    def legal(self) -> list[str]:
        """HA7: what `check` takes, in the words of `describe` (the first 8 outcomes, then "...")."""
        outcomes = self.outcomes()
        return [self.describe(a) for a in outcomes[:8]] + (["..."] if len(outcomes) > 8 else [])

    def check(self, owner: str, chosen: list[str], board: Board) -> list[str]:
        """HA7: the owner's choice (one entry per hit taken, in any order; a hit lost is left
        out) must be what some order of placing the hits leads to. `board` names units
        outside the fight."""
        if self.by_class is not None:
            return self.by_class.check(owner, chosen, board)
        shown = f"input: {','.join(chosen) or 'none'}"
        legal_units = ", ".join(sorted(uid for uid, left in self.remaining.items() if left)) or "none"
        for uid in chosen:
            if uid in self.remaining:
                continue
            unit = board.units.get(uid)
            if unit is None:
                raise board.unknown_unit(uid)
            if unit.nation != owner and board.enemies(owner, unit.nation):
                raise RuleViolation(
                    "HA7", f"{uid} belongs to {unit.nation}; {owner} chooses its own side's losses ({shown})"
                )
            raise RuleViolation(
                "HA7", f"{uid} is not in this battle or is already lost ({shown}; legal: {legal_units})"
            )
        total = sum(self.hits)
        if len(chosen) > total:
            raise RuleViolation("HA7", f"{owner} has {plural(total, 'hit')} to place, got {len(chosen)} ({shown})")
        counts = Counter(chosen)
        for uid, n in counts.items():
            if n > self.remaining[uid]:
                raise RuleViolation(
                    "HA7", f"{uid} can take {plural(self.remaining[uid], 'more hit')}, assigned {n} ({shown})"
                )
        outcomes = list(self.outcomes())
        tail = f"legal: {' | '.join(self.legal())}; default: {','.join(self.default()) or 'none'}"
        for uid in counts:
            if uid not in self.pool_of:
                raise RuleViolation(
                    "HA7", f"none of the {self.words()} may fall on {uid} (HA4-HA6, NC6) ({shown}; {tail})"
                )
        absorbed = tuple(sum(counts[uid] for uid in pool) for pool in self.pools)
        if absorbed not in outcomes:
            raise RuleViolation(
                "HA7",
                f"{owner} cannot take the {self.words()} so ({shown}): {self.why_not(absorbed, outcomes)}; "
                f"the hits go one at a time in the order the owner likes, each to the highest tier its firer's "
                f"rule still finds afloat and not yet hit, and one is lost only when none is left ({tail})",
            )
        return list(chosen)

    def why_not(self, absorbed: tuple[int, ...], outcomes: list[tuple[int, ...]]) -> str:
        """Why no order leads to `absorbed`: a pool that takes more (or fewer) hits in every order."""
        for p, n in enumerate(absorbed):
            names = ", ".join(self.pools[p])
            low = min(a[p] for a in outcomes)
            if n < low:
                top = sorted(
                    {priority_rule(c) for c, t in zip(self.classes, self.layout, strict=True) if t and p in t[0]}
                )
                falls = "falls" if low == 1 else "fall"
                return (
                    f"in every order at least {plural(low, 'hit')} {falls} on {names} ({', '.join(top) or 'HA4-HA6'})"
                )
            high = max(a[p] for a in outcomes)
            if n > high:
                return f"in any order at most {plural(high, 'hit')} can fall on {names} (HA4-HA6, NC6)"
        return "no order of placing them leads there"


class ClassOrder:
    """HA4-HA7 as first written (ruleset `placement = "class-order"`): each firing class's hits
    placed in turn, in the ruleset's placing order, each on the first tier still afloat; the
    owner names exactly the hits that can be taken, and those the units cannot take are lost
    whatever the owner chooses. Campaigns recorded under it are refereed by it again, so its
    choices, checks and messages stay as they were."""

    def __init__(
        self,
        board: Board,
        groups: list[tuple[str, int]],
        units: list[Unit],
        remaining: dict[str, int],
        tiers: dict[str, list[list[Unit]]],
    ) -> None:
        self.board = board
        self.groups = list(groups)
        self.by_id = {u.id: u for u in units}
        self.remaining = remaining
        self.tiers = tiers
        self.taken: dict[tuple[int, ...], Counter[str]] = {}

    def place(self, key: Key, groups: list[tuple[str, int]] | None = None, seen: Placed | None = None) -> list[str]:
        """The hits, class by class, each on the unit of the first tier afloat `key` ranks lowest
        (and in `seen`, what `check` lets each hit fall on, as `Placed`)."""
        remaining = dict(self.remaining)
        placed: list[str] = []
        for firing_class, n in self.groups if groups is None else groups:
            for _ in range(n):
                tier = next((t for t in self.tiers[firing_class] if any(remaining[u.id] for u in t)), None)
                if tier is None:
                    break  # every unit is already sunk: the hit is lost
                if seen is not None:
                    seen.append((firing_class, tuple(u.id for u in tier if self.remaining[u.id])))
                pick = min((u.id for u in tier if remaining[u.id]), key=lambda uid: key(uid, remaining[uid]))
                remaining[pick] -= 1
                placed.append(pick)
        return placed

    def key(self, uid: str, left: int) -> tuple[object, ...]:
        """The default within a tier: a hit that only damages a capital ship first (the costliest
        such ship), else the cheapest unit; the lowest ID on ties."""
        cost = unit_cost(self.board, self.by_id[uid])
        return (0, -cost, uid) if left > 1 else (1, cost, uid)

    def default(self) -> list[str]:
        return self.place(self.key)

    def cheapest(self, hits: tuple[int, ...], classes: tuple[str, ...]) -> Counter[str]:
        """The default for other numbers of hits of `classes` (in the placing order)."""
        found = self.taken.get(hits)
        if found is None:
            found = self.taken[hits] = Counter(self.place(self.key, list(zip(classes, hits, strict=True))))
        return found

    def forced(self) -> bool:
        """Every tier a hit falls on takes all it can or has a single unit afloat."""
        placed = Counter(self.default())
        seen: set[tuple[str, ...]] = set()
        for firing_class, _ in self.groups:
            for tier in self.tiers[firing_class]:
                ids = tuple(u.id for u in tier)
                if ids in seen:
                    continue
                seen.add(ids)
                hits = sum(placed[uid] for uid in ids)
                afloat = [uid for uid in ids if self.remaining[uid]]
                if hits and len(afloat) > 1 and hits < sum(self.remaining[uid] for uid in afloat):
                    return False
        return True

    def check(self, owner: str, chosen: list[str], board: Board) -> list[str]:
        """The owner's choice: exactly the hits the units can take, each class's on its first
        tier still afloat."""
        remaining = dict(self.remaining)
        legal = ", ".join(sorted(uid for uid, left in remaining.items() if left))
        for uid in chosen:
            if uid not in self.by_id:
                unit = board.units.get(uid)
                if unit is None:
                    raise board.unknown_unit(uid)
                if unit.nation != owner and board.enemies(owner, unit.nation):
                    raise RuleViolation("HA7", f"{uid} belongs to {unit.nation}; {owner} chooses its own side's losses")
                raise RuleViolation("HA7", f"{uid} is not in this battle or is already lost (legal: {legal or 'none'})")
        needed = min(sum(n for _, n in self.groups), sum(remaining.values()))
        if len(chosen) != needed:
            raise RuleViolation(
                "HA7", f"{owner} must assign {plural(needed, 'hit')}, got {len(chosen)} (legal: {legal})"
            )
        pool = Counter(chosen)
        for uid, n in pool.items():
            if n > remaining[uid]:
                raise RuleViolation("HA7", f"{uid} can take {plural(remaining[uid], 'more hit')}, assigned {n}")
        for firing_class, n in self.groups:
            for _ in range(n):
                tier = next((t for t in self.tiers[firing_class] if any(remaining[u.id] for u in t)), None)
                if tier is None:
                    break
                options = [u.id for u in tier if remaining[u.id]]
                found = [uid for uid in options if pool[uid]]
                if not found:
                    raise RuleViolation(
                        priority_rule(firing_class),
                        f"a hit from {_class_words(firing_class)} must fall on {', '.join(options)} first; "
                        f"{', '.join(sorted(pool.elements()))} cannot take it (legal: {', '.join(options)})",
                    )
                pool[found[0]] -= 1
                remaining[found[0]] -= 1
        return list(chosen)


def _moves(
    rooms: tuple[int, ...], hits: tuple[int, ...], layout: Layout
) -> list[tuple[int | None, tuple[int, ...], tuple[int, ...]]]:
    """HA7: where the next hit may go (a pool, or None: lost), for each class with hits left in
    the order the classes are given, with the rooms and hits after it."""
    out: list[tuple[int | None, tuple[int, ...], tuple[int, ...]]] = []
    for c, n in enumerate(hits):
        if not n:
            continue
        after = hits[:c] + (n - 1,) + hits[c + 1 :]
        tier = next((t for t in layout[c] if any(rooms[p] for p in t)), None)
        if tier is None:
            out.append((None, rooms, after))  # no legal target left: the hit is lost
            continue
        for p in tier:
            if rooms[p]:
                out.append((p, rooms[:p] + (rooms[p] - 1,) + rooms[p + 1 :], after))
    return out


@lru_cache(maxsize=1 << 14)
def _outcomes(rooms: tuple[int, ...], hits: tuple[int, ...], layout: Layout) -> tuple[tuple[int, ...], ...]:
    """`Placing.outcomes`: the hits each pool takes, sorted (a pure function of numbers: cached)."""
    return tuple(
        sorted(tuple(r - f for r, f in zip(rooms, final, strict=True)) for final in _finals(rooms, hits, layout))
    )


@lru_cache(maxsize=1 << 16)
def _finals(rooms: tuple[int, ...], hits: tuple[int, ...], layout: Layout) -> frozenset[tuple[int, ...]]:
    """HA7: the rooms left in each pool once the hits are placed, over every order (a pure
    function of numbers: cached across sides and battles alike)."""
    if not any(hits):
        return frozenset((rooms,))
    out: set[tuple[int, ...]] = set()
    for _, after_rooms, after_hits in _moves(rooms, hits, layout):
        out |= _finals(after_rooms, after_hits, layout)
    return frozenset(out)


def _witness(rooms: tuple[int, ...], hits: tuple[int, ...], layout: Layout, final: tuple[int, ...]) -> list[int | None]:
    """An order of placing the hits that leaves `final`: the pool each hit goes to (None: lost),
    the classes tried in the order given (the ruleset's placing order)."""
    path: list[int | None] = []
    while any(hits):
        pool, rooms, hits = next(m for m in _moves(rooms, hits, layout) if final in _finals(m[1], m[2], layout))
        path.append(pool)
    return path


def allocate(
    board: Board,
    owner: str,
    groups: list[tuple[str, int]],
    units: list[Unit],
    taken: Counter[str],
    chosen: list[str] | None,
    nc6: bool = True,
    tiers: dict[str, list[list[Unit]]] | None = None,
) -> list[str]:
    """HA4-HA7: the units taking a side's non-selective hits (one entry per hit taken).

    `groups` holds the hits per firing class in the ruleset's placing order; `taken` counts
    hits already landing on these units this round (selective hits), which they can no longer
    absorb. With `chosen` None: the cheapest choice over every order of placing the hits
    (fewest resources lost, then fewest units, then fewest hits taken, then the lowest IDs; in
    each pool a hit that only damages a capital ship first, then the cheapest unit), in an order
    that places them so. Otherwise the owner's choice is checked (`Placing.check`; `board` names
    units outside the fight) and returned. `tiers` holds `hit_tiers` of these units per firing
    class when the caller has them already."""
    placing = Placing(board, groups, units, taken, nc6, tiers)
    return placing.default() if chosen is None else placing.check(owner, chosen, board)


def allocation_is_forced(
    board: Board,
    groups: list[tuple[str, int]],
    units: list[Unit],
    taken: Counter[str],
    nc6: bool = True,
    tiers: dict[str, list[list[Unit]]] | None = None,
) -> bool:
    """True when the rules leave the owner no choice: every order of placing the hits, and
    every choice within a tier, leaves the same units hit (HA7 then asks nobody)."""
    return Placing(board, groups, units, taken, nc6, tiers).forced()
