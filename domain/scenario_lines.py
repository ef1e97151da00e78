"""Lines between adjacent zones kept from under other zones' boxes on a computed map
(`domain.scenario_layout`): which line passes under which box or crosses which line, and the
search that moves zones about the layout's grid cells to lessen both."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

# The search moving zones about the grid to keep lines from under other zones' boxes
# (`untangled`): a map of more zones is left as the grid has it (its tables of every line by
# every box and line grow as the square); its passes over the zones and zones tried in all
# (a try takes a few milliseconds: a map of 150 zones makes 400, one of 300 three times as
# many); how many cells away a zone is tried, across and down (further strays from the shape).
UNTANGLE_MOST = 300
UNTANGLE_PASSES = 6
UNTANGLE_TRIES = 500
UNTANGLE_REACH = 2
# What the search weighs against a line under an unrelated box (one): two lines crossing, and
# a box's width of line length (worth a short detour to avoid a box, not one across the map).
CROSSING_COST = 0.3
LENGTH_COST = 0.1


def untangled(
    free_at: dict[str, tuple[float, float]],
    typed: dict[str, tuple[int, int]],
    cells: dict[tuple[int, int], tuple[float, float]],
    half: tuple[float, float],
    unit: float,
    adjacency: Mapping[str, frozenset[str]],
) -> dict[str, tuple[float, float]]:
    """The free zones, each at one of the `cells`, moved about them a zone at a time, to an
    empty cell or swapping with another free zone at most UNTANGLE_REACH cells away, where the
    lines between adjacent zones pass under fewest boxes (`half` their width and height as
    drawn) of zones other than their ends, then cross each other least, then are shortest (in
    boxes `unit` wide) (`Tangle`); until no move helps, or for UNTANGLE_PASSES passes. The
    typed zones stay. On a map of more than UNTANGLE_MOST zones, as they are."""
    import numpy as np

    free = list(free_at)
    if not free or len(free) + len(typed) > UNTANGLE_MOST:
        return free_at
    # The free zones first: a zone's number in the tangle is its number in `free`.
    tangle = Tangle({**free_at, **typed}, half, unit, adjacency)
    key_of = {centre: key for key, centre in cells.items()}
    cell_of = [key_of[free_at[z]] for z in free]
    reach = range(-UNTANGLE_REACH, UNTANGLE_REACH + 1)
    tries = itertools.count(1)
    for _ in range(UNTANGLE_PASSES):
        moved = False
        for i in tangle.tangled(len(free)):
            c, r = cell_of[i]
            near = [(c + dc, r + dr) for dr in reach for dc in reach if (dc or dr) and (c + dc, r + dr) in cells]
            if not near or next(tries) > UNTANGLE_TRIES:
                continue
            # A zone in the cell swaps places with this one; an empty cell has it alone.
            held = {key: n for n, key in enumerate(cell_of)}
            partners = [held.get(key, i) for key in near]
            gains = tangle.gains(i, np.array([cells[key] for key in near]), partners)
            best = int(np.argmax(gains))
            if gains[best] > 1e-9:
                j = partners[best]
                tangle.move(i, cells[near[best]], j)
                cell_of[j], cell_of[i] = cell_of[i], near[best]
                moved = True
        if not moved:
            break
    return {z: cells[cell_of[i]] for i, z in enumerate(free)}


class Tangle:
    """Zones where they are, the lines between adjacent ones, and what `untangled` weighs:
    which line passes under which zone's box as drawn (`under`, line by zone), which crosses
    which (`crossed`, line by line), and each line's length; kept as zones move."""

    def __init__(
        self,
        at: Mapping[str, tuple[float, float]],
        half: tuple[float, float],
        unit: float,
        adjacency: Mapping[str, frozenset[str]],
    ) -> None:
        import numpy as np

        zones = list(at)
        index = {z: i for i, z in enumerate(zones)}
        pairs = sorted(
            {(index[a], index[b]) for a in zones for b in adjacency.get(a, ()) if index.get(b, -1) > index[a]}
        )
        self.at = np.array([at[z] for z in zones], dtype=float).reshape(-1, 2)
        self.ends = np.array(pairs, dtype=int).reshape(-1, 2)
        self.half = np.array(half)
        self.unit = unit
        lines = np.arange(len(pairs))
        self.touches = np.zeros((len(pairs), len(zones)), dtype=bool)
        self.touches[lines, self.ends[:, 0]] = self.touches[lines, self.ends[:, 1]] = True
        # Lines that meet at a zone do not cross there.
        self.meets = (self.touches.astype(np.int32) @ self.touches.T.astype(np.int32)) > 0
        self.lines_of = [np.flatnonzero(self.touches[:, z]) for z in range(len(zones))]
        p, q = self.at[self.ends[:, 0]], self.at[self.ends[:, 1]]
        self.under = passes_under(p[:, None], q[:, None], self.at[None], self.half) & ~self.touches
        self.crossed = crossing(p[:, None], q[:, None], p[None], q[None]) & ~self.meets
        self.length = np.hypot(*(q - p).T)

    def tangled(self, free: int) -> list[int]:
        """The first `free` zones that a move may help: those whose box a line passes under, or
        at the end of a line passing under a box or crossing another."""
        import numpy as np

        bad = self.under.any(axis=1) | self.crossed.any(axis=1)
        involved = self.under.any(axis=0) | self.touches[bad].any(axis=0)
        return [int(z) for z in np.flatnonzero(involved[:free])]

    def gains(self, i: int, targets: Any, partners: list[int]) -> Any:
        """What moving zone `i` to each of `targets` would gain (less weight: `untangled`), the
        zone `partners[k]` (unless `i` itself) moving to where `i` is."""
        import numpy as np

        js = np.array(partners)
        ni, nj = targets, np.where((js != i)[:, None], self.at[i], targets)
        # The lines each candidate moves: zone i's, and its partner's but the one they share.
        own = self.lines_of[i].tolist()
        moved = [own if j == i else own + [e for e in self.lines_of[j].tolist() if e not in own] for j in partners]
        count = np.array([len(m) for m in moved])
        rows = np.array([e for m in moved for e in m], dtype=int)
        of = np.repeat(np.arange(len(js)), count)

        def placed(zones: Any, cand: Any) -> Any:
            """Where candidate `cand` puts `zones` (arrays alike)."""
            pos = np.where((zones == js[cand])[:, None], nj[cand], self.at[zones])
            return np.where((zones == i)[:, None], ni[cand], pos)

        p, q = placed(self.ends[rows, 0], of), placed(self.ends[rows, 1], of)
        # Only the boxes and lines within half a box of where the moved lines are, before the
        # move and after, can pass under them or cross them: on a large map, a small part of it.
        points = np.concatenate((p, q, targets, self.at[i : i + 1]))
        low, high = points.min(axis=0) - self.half, points.max(axis=0) + self.half
        boxes = np.flatnonzero(((self.at > low) & (self.at < high)).all(axis=1))
        a, b = self.at[self.ends[:, 0]], self.at[self.ends[:, 1]]
        lines = np.flatnonzero(((np.minimum(a, b) <= high) & (np.maximum(a, b) >= low)).all(axis=1))
        a, b = a[lines], b[lines]
        box_i, box_j = np.searchsorted(boxes, i), np.searchsorted(boxes, js)
        under = passes_under(p[:, None], q[:, None], self.at[boxes][None], self.half)
        every = np.arange(len(rows))
        either = passes_under(p[:, None], q[:, None], np.stack((nj[of], ni[of]), axis=1), self.half)
        under[every, box_j[of]], under[every, box_i] = either[:, 0], either[:, 1]
        under &= ~self.touches[np.ix_(rows, boxes)]
        # Each moved line against every line near where it is, then the pairs both moved.
        crossed = crossing(p[:, None], q[:, None], a[None], b[None])
        # Every pair of rows of one candidate: row `pr` against the line of row `pc`.
        start, pairs = np.cumsum(count) - count, count * count
        cand = np.repeat(np.arange(len(js)), pairs)
        nth = np.arange(pairs.sum()) - np.repeat(np.cumsum(pairs) - pairs, pairs)
        pr, pc = start[cand] + nth // count[cand], rows[start[cand] + nth % count[cand]]
        r, s = placed(self.ends[pc, 0], of[pr]), placed(self.ends[pc, 1], of[pr])
        pc = np.searchsorted(lines, pc)
        crossed[pr, pc] = crossing(p[pr], q[pr], r, s)
        crossed &= ~self.meets[np.ix_(rows, lines)]
        was = self.crossed[np.ix_(rows, lines)]
        # A pair of lines both moved is met from either: each counts half.
        twice = np.zeros(crossed.shape)
        twice[pr, pc] = 0.5
        new = under.sum(1) + CROSSING_COST * (crossed.sum(1) - (crossed * twice).sum(1))
        old = self.under[rows].sum(1) + CROSSING_COST * (was.sum(1) - (was * twice).sum(1))
        length = LENGTH_COST * (self.length[rows] - np.hypot(*(q - p).T)) / self.unit
        gain = np.bincount(of, old - new + length, minlength=len(js))
        # The lines not moved, under the boxes moved: zone i's and each partner's.
        still = ~(self.touches[lines, i][:, None] | self.touches[np.ix_(lines, js)])
        still = np.hstack((still, still))
        now = passes_under(a[:, None], b[:, None], np.concatenate((ni, nj))[None], self.half) & still
        before = self.under[np.ix_(lines, np.concatenate((np.full(len(js), i), js)))] & still
        change = before.sum(0) - now.sum(0)
        return gain + change[: len(js)] + np.where(js != i, change[len(js) :], 0)

    def move(self, i: int, to: tuple[float, float], j: int) -> None:
        """Zone `i` moved to `to`, and zone `j` (unless `i` itself) to where `i` was."""
        import numpy as np

        if j != i:
            self.at[j] = self.at[i]
        self.at[i] = to
        lines = np.union1d(self.lines_of[i], self.lines_of[j]).astype(int)
        p, q = self.at[self.ends[lines, 0]], self.at[self.ends[lines, 1]]
        self.under[lines] = passes_under(p[:, None], q[:, None], self.at[None], self.half) & ~self.touches[lines]
        a, b = self.at[self.ends[:, 0]], self.at[self.ends[:, 1]]
        for zone in {i, j}:
            self.under[:, zone] = passes_under(a, b, self.at[zone], self.half) & ~self.touches[:, zone]
        crossed = crossing(p[:, None], q[:, None], a[None], b[None]) & ~self.meets[lines]
        self.crossed[lines] = crossed
        self.crossed[:, lines] = crossed.T
        self.length[lines] = np.hypot(*(q - p).T)


def passes_under(p: Any, q: Any, centre: Any, half: Any) -> Any:
    """Whether the line from `p` to `q` passes under the box of `half` its width and height
    around `centre` (numpy arrays, x and y last, the rest broadcast): it does where the box and
    the line's extent overlap both ways and the box's corners lie on both sides of it."""
    import numpy as np

    p, q, centre = np.broadcast_arrays(p, q, centre)
    found = ((np.minimum(p, q) < centre + half) & (np.maximum(p, q) > centre - half)).all(axis=-1)
    # The rest only where the extents overlap: most pairs on a map are far apart.
    at = np.nonzero(found)
    p, q, centre = p[at], q[at], centre[at]
    d = q - p
    side = d[:, 0] * (centre[:, 1] - p[:, 1]) - d[:, 1] * (centre[:, 0] - p[:, 0])
    found[at] = np.abs(side) < np.abs(d[:, 0]) * half[1] + np.abs(d[:, 1]) * half[0]
    return found


def crossing(p: Any, q: Any, r: Any, s: Any) -> Any:
    """Whether the line from `p` to `q` crosses the one from `r` to `s` (as `passes_under`)."""
    import numpy as np

    p, q, r, s = np.broadcast_arrays(p, q, r, s)
    found = ((np.minimum(p, q) < np.maximum(r, s)) & (np.maximum(p, q) > np.minimum(r, s))).all(axis=-1)
    at = np.nonzero(found)
    p, q, r, s = p[at], q[at], r[at], s[at]

    def turn(a: Any, b: Any, c: Any) -> Any:
        return np.sign((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))

    found[at] = (turn(p, q, r) * turn(p, q, s) < 0) & (turn(r, s, p) * turn(r, s, q) < 0)
    return found
