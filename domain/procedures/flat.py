"""The odds enumeration in floats (`exact_odds` without `exact`): every position reached is
expanded once, then the mass is pushed through them as arrays (`domain.procedures.flow`).

A volley's edges are the pairs of what it may leave of each side (`Engine.volley_sides`). Each
position keeps its pairs as the rows and columns of a grid per rest of the position (`Grid`),
and the edges are made into arrays from those a run of positions at a time, as the flow asks
for them (`Walk.edges_of`); only the pairs met for the first time are worked out
(`Engine.follow`), one at a time.

Walks that share an engine may share their positions' edges too (`Known`): a position another
walk expanded takes its edges from there (`domain.procedures.odds.Shared`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from domain.procedures.base import Ended, Piece, Roll
from domain.procedures.engine import EXPANDED, Engine, Odds, State, TooManyPositions, need, volley_split, waits
from domain.procedures.flow import Floats, Ints, flow

Small = npt.NDArray[np.int8]  # the rounds an edge starts (a few at most)
# The positions reached, their identities, the chances and the rounds started on the way.
Edges = tuple[tuple[State, ...], list[int], Floats, Small]


class Known:
    """What walks of one engine found, for the walks after them: each position's edges and
    what follows each volley's remains (`Engine.follow`), by identities (the engine interns
    the positions and the remains, and keeps them alive)."""

    def __init__(self) -> None:
        self.edges: dict[int, Edges] = {}
        # Context, attackers left, defenders left (identities), named apart -> what follows.
        self.follows: dict[tuple[int, int, int, bool], tuple[State, int]] = {}


class Grid:
    """What follows a volley in one rest of the position: the index of the position reached
    and the rounds started on the way, by what is left of each side (rows: the attackers'
    remains, columns: the defenders', by identity); `filled[r]`: the columns of row r worked
    out so far, as the bits of an integer."""

    def __init__(self, number: int) -> None:
        self.number = number  # its place among the walk's grids
        self.rows: dict[int, int] = {}
        self.columns: dict[int, int] = {}
        self.filled: list[int] = []
        self.child: Ints = np.zeros((8, 8), dtype=np.int64)
        # 8 bits, as the edges keep them: a Python int beyond raises, rather than wrap.
        self.rounds: Small = np.zeros((8, 8), dtype=np.int8)

    def row(self, attackers: tuple[Piece, ...]) -> int:
        r = self.rows.get(id(attackers))
        if r is None:
            r = self.rows[id(attackers)] = len(self.filled)
            self.filled.append(0)
        return r

    def column(self, defenders: tuple[Piece, ...]) -> int:
        return self.columns.setdefault(id(defenders), len(self.columns))

    def fit(self) -> None:
        """Room for every row and column named so far (doubling, so that growing is rare)."""
        shape = self.child.shape
        need = (len(self.rows), len(self.columns))
        if need[0] <= shape[0] and need[1] <= shape[1]:
            return
        grown = tuple(n if wanted <= n else max(2 * n, wanted) for n, wanted in zip(shape, need, strict=True))
        child = np.zeros(grown, dtype=np.int64)
        rounds = np.zeros(grown, dtype=np.int8)
        child[: shape[0], : shape[1]] = self.child
        rounds[: shape[0], : shape[1]] = self.rounds
        self.child, self.rounds = child, rounds


class Walk:
    """The positions of a float enumeration by index, and their edges as they are found: a
    volley's as its rows, columns and each side's chances; any other roll's one by one."""

    def __init__(self, engine: Engine, known: Known | None = None) -> None:
        self.engine = engine
        self.follows = known.follows if known is not None else None
        self.positions: list[State] = []
        self.indexed: dict[int, int] = {}
        self.grids: dict[int, Grid] = {}
        # A volley's edges: the position, its grid, and each side's rows (columns) and chances.
        self.volleys: list[tuple[int, int, int, int]] = []  # position, grid, rows, columns
        self.grid_order: list[Grid] = []
        self.rows: list[int] = []
        self.columns: list[int] = []
        self.row_chances: list[float] = []
        self.column_chances: list[float] = []
        # Any other roll's edges, one at a time.
        self.sources: list[int] = []
        self.children: list[int] = []
        self.chances: list[float] = []
        self.started: list[int] = []
        # Edges known from earlier walks: source, positions reached, chances, rounds started.
        self.known: list[tuple[int, Ints, Floats, Small]] = []

    def index_of(self, state: State) -> int:
        """The index of an interned position, a new one first met at the end."""
        k = self.indexed.get(id(state))
        if k is None:
            k = self.indexed[id(state)] = len(self.positions)
            self.positions.append(state)
        return k

    def expand(self, k: int) -> None:
        """Find the edges of position `k` (one with a roll)."""
        engine, state = self.engine, self.positions[k]
        n = need(state, engine.ctx)
        assert isinstance(n, Roll)
        split = volley_split(state, n.groups)
        if not split:
            for (child, d), p in engine.expand(state):
                self.sources.append(k)
                self.children.append(self.index_of(child))
                self.chances.append(float(p))
                self.started.append(d)
            return
        context, apart, attackers_left, defenders_left = engine.volley_sides(state, n.groups, split)
        grid = self.grids.get(context)
        if grid is None:
            grid = self.grids[context] = Grid(len(self.grid_order))
            self.grid_order.append(grid)
        # Looked up inline first; a miss (or row 0, which reads as false) goes to `row`.
        known_rows, known_columns = grid.rows, grid.columns
        rows = [known_rows.get(id(a)) or grid.row(a) for a, _ in attackers_left]
        columns = [known_columns.get(id(d)) or grid.column(d) for d, _ in defenders_left]
        bits = 0
        for c in columns:
            bits |= 1 << c
        filled = grid.filled
        new = [(i, r, missing) for i, r in enumerate(rows) if (missing := bits & ~filled[r])]
        if new:
            grid.fit()
            where = {c: j for j, c in enumerate(columns)}
            for i, r, missing in new:
                filled[r] |= missing
                while missing:
                    low = missing & -missing
                    missing ^= low
                    c = low.bit_length() - 1
                    left = (attackers_left[i][0], defenders_left[where[c]][0])
                    if self.follows is None:
                        settled, more = engine.follow(state, *left, apart)
                    else:
                        key = (context, id(left[0]), id(left[1]), apart)
                        hit = self.follows.get(key)
                        if hit is None:
                            hit = self.follows[key] = engine.follow(state, *left, apart)
                        settled, more = hit
                    grid.child[r, c] = self.index_of(settled)
                    grid.rounds[r, c] = more
        self.volleys.append((k, grid.number, len(rows), len(columns)))
        self.rows += rows
        self.columns += columns
        self.row_chances += [float(p) for _, p in attackers_left]
        self.column_chances += [float(p) for _, p in defenders_left]

    def reuse(self, k: int, edges: Edges) -> None:
        """Position `k`'s edges as an earlier walk found them."""
        indexed = self.indexed
        found = [indexed.get(i) for i in edges[1]]
        if None in found:
            found = [self.index_of(c) if j is None else j for c, j in zip(edges[0], found, strict=True)]
        self.known.append((k, np.array(found, dtype=np.int64), edges[2], edges[3]))

    def ready(self) -> Ints:
        """Once every position is expanded: the edges kept as arrays, as `edges_of` reads them,
        and the number of edges leaving each position (loops included). A volley's edges
        stay its rows and columns in its grid: they are made only a run of positions at a
        time (`edges_of`), never all at once (a big battle has millions)."""
        n = len(self.positions)
        volleys = np.array(self.volleys, dtype=np.int64).reshape(-1, 4)
        source, self.grid_of, self.na, self.nd = volleys.T
        self.volley_of = np.full(n, -1, dtype=np.int64)
        self.volley_of[source] = np.arange(len(source))
        self.row_at = np.cumsum(self.na) - self.na  # where each volley's rows start
        self.column_at = np.cumsum(self.nd) - self.nd
        self.all_rows = np.array(self.rows, dtype=np.int64)
        self.all_columns = np.array(self.columns, dtype=np.int64)
        self.all_row_chances = np.array(self.row_chances)
        self.all_column_chances = np.array(self.column_chances)
        self.rows, self.columns, self.row_chances, self.column_chances = [], [], [], []
        # Any other roll's edges: each position's one after another, positions in order.
        others = np.array(self.sources, dtype=np.int64)
        self.other_count = np.bincount(others, minlength=n)
        self.other_at = np.searchsorted(others, np.arange(n))
        self.other_children = np.array(self.children, dtype=np.int64)
        self.other_chances = np.array(self.chances)
        self.other_started = np.array(self.started, dtype=np.int8)
        self.sources, self.children, self.chances, self.started = [], [], [], []
        self.known_of = {k: (c, p, r) for k, c, p, r in self.known}
        size = self.other_count.copy()
        size[source] += self.na * self.nd
        for k, (c, _, _) in self.known_of.items():
            size[k] += len(c)
        self.size = size
        return size

    def edges_of(self, run: Ints) -> tuple[Ints, Floats, Small]:
        """The edges of the positions `run` (in increasing order), each position's in the
        order found, one after another: the position reached, the chance, the rounds started
        on the way (`ready` first). A volley's are its rows by its columns, the attackers'
        remains outer."""
        sizes = self.size[run]
        offsets = np.cumsum(sizes) - sizes
        total = int(sizes.sum())
        children = np.empty(total, dtype=np.int64)
        chances = np.empty(total)
        started = np.empty(total, dtype=np.int8)
        v = self.volley_of[run]
        on_volley = v >= 0
        if on_volley.any():
            vs = v[on_volley]
            na, nd = self.na[vs], self.nd[vs]
            # Each of a volley's rows once per column, then its columns once per row.
            width = np.repeat(nd, na)
            row_index = _ranges(self.row_at[vs], na)
            rows = np.repeat(self.all_rows[row_index], width)
            p = np.repeat(self.all_row_chances[row_index], width)
            column_index = _ranges(np.repeat(self.column_at[vs], na), width)
            columns = self.all_columns[column_index]
            p *= self.all_column_chances[column_index]
            at = _ranges(offsets[on_volley], na * nd)
            chances[at] = p
            on = np.repeat(self.grid_of[vs], na * nd)
            for g in np.unique(on).tolist():
                table = self.grid_order[g]
                here = on == g
                children[at[here]] = table.child[rows[here], columns[here]]
                started[at[here]] = table.rounds[rows[here], columns[here]]
        count = self.other_count[run]
        on_other = count > 0
        if on_other.any():
            index = _ranges(self.other_at[run[on_other]], count[on_other])
            at = _ranges(offsets[on_other], count[on_other])
            children[at] = self.other_children[index]
            chances[at] = self.other_chances[index]
            started[at] = self.other_started[index]
        if self.known_of:
            for i, k in enumerate(run.tolist()):
                found = self.known_of.get(k)
                if found is not None:
                    c, p, r = found
                    at0 = int(offsets[i])
                    children[at0 : at0 + len(c)] = c
                    chances[at0 : at0 + len(c)] = p
                    started[at0 : at0 + len(c)] = r
        return children, chances, started

    def keep(self, known: Known, fresh: list[int]) -> None:
        """Put the edges of the positions this walk expanded (`fresh`) in `known`."""
        kept = known.edges
        positions = self.positions
        bounds = np.cumsum(self.size[fresh])
        children, chances, started = self.edges_of(np.array(fresh, dtype=np.int64))
        lo = 0
        for k, hi in zip(fresh, bounds.tolist(), strict=True):
            reached = tuple(positions[i] for i in children[lo:hi].tolist())
            kept[id(positions[k])] = (reached, [id(c) for c in reached], chances[lo:hi], started[lo:hi])
            lo = hi


def _ranges(starts: Ints, counts: Ints) -> Ints:
    """The integers of the ranges [starts[i], starts[i] + counts[i]), one range after another."""
    return np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()), dtype=np.int64)


def flowed(
    engine: Engine, root: State, start: int, procedure: str, known: Known | None = None, forget: bool = False
) -> Odds:
    """The enumeration in floats from the settled `root` (reached with `start` rounds fought):
    every position reached expanded once (the engine's limit counting those with a roll),
    then the mass pushed through them. `known`: edges of earlier walks of the same engine,
    taken from there, and this walk's added to it. `forget`: the engine is this walk's
    alone, and lets go of its tables once every position is expanded (`Engine.forget`)."""
    walk = Walk(engine, known)
    walk.index_of(root)
    told = EXPANDED.get()
    limit = engine.limit
    # Positions found with a roll, each to be expanded in turn: beyond the limit, the walk
    # stops as soon as they are found rather than after expanding as many (a big battle's
    # positions take milliseconds each, and it finds them far faster than it expands them).
    found_rolling = scanned = 0
    fresh: list[int] = []
    k = 0
    while k < len(walk.positions):
        if waits(walk.positions[k]) != "ended":
            if limit is not None:
                while scanned < len(walk.positions):
                    found_rolling += waits(walk.positions[scanned]) != "ended"
                    scanned += 1
                if found_rolling > limit:
                    raise TooManyPositions(limit)
            found = known.edges.get(id(walk.positions[k])) if known is not None else None
            if found is None:
                walk.expand(k)
                fresh.append(k)
            else:
                walk.reuse(k, found)
            if told is not None:
                told()
        k += 1
    if forget:
        # Before the edges' arrays are made: the tables are as big as the arrays.
        engine.forget()
    size = walk.ready()
    if known is not None and fresh:
        walk.keep(known, fresh)
    moved = flow(len(walk.positions), size, walk.edges_of, start)
    result = Odds(procedure=procedure, truncated=moved.truncated, states=len(walk.positions))
    for k, s in enumerate(walk.positions):
        if waits(s) != "ended":
            continue
        n = need(s, engine.ctx)
        assert isinstance(n, Ended)
        old = result.outcomes.get(n.outcome, (0.0, 0.0, 0.0))
        m = (float(moved.mass[k]), float(moved.first[k]), float(moved.second[k]))
        result.outcomes[n.outcome] = (old[0] + m[0], old[1] + m[1], old[2] + m[2])
    return result
