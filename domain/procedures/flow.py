"""The flow of probability through the positions of an enumeration in floats, as arrays: each
position's mass and the first two moments of the rounds fought to reach it, pushed along the
edges a level at a time (Kahn's order: a position goes once every edge into it has; each
level takes its positions' edges as slices of the edges sorted by source), for the
odds enumeration (`domain.procedures.odds`). The exact enumeration walks the same edges one
at a time in fractions; a big battle has hundreds of thousands of them, which arrays add up
in one step per level.

A position's loop back to itself (a round without effect) is summed exactly, as the geometric
series the exact walk sums; mass caught in a loop it can never leave is reported apart."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass
class Flow:
    """Where the mass ends: per position its probability and the first two moments of the
    rounds fought (E[rounds; there], E[rounds^2; there]), and what a loop kept."""

    mass: Floats
    first: Floats
    second: Floats
    truncated: float


def flow(n: int, sources: Ints, children: Ints, chances: Floats, rounds: Ints, start: int) -> Flow:
    """The mass of each of the positions 0..n-1 from position 0 (reached with `start` rounds
    fought), given every edge, in any order: from `sources[e]` to `children[e]` with the
    chance `chances[e]`, starting `rounds[e]` rounds on the way.

    Raises ValueError when positions lead back to one another (other than a position to
    itself): no order adds up every edge into a position before leaving it."""
    src = sources
    d = rounds.astype(np.float64)
    loop = children == src
    # A loop back to the same position: its chance and the moments of the rounds it starts.
    q = np.bincount(src[loop], weights=chances[loop], minlength=n)
    a = np.bincount(src[loop], weights=chances[loop] * d[loop], minlength=n)
    b = np.bincount(src[loop], weights=chances[loop] * d[loop] ** 2, minlength=n)
    has_edges = np.bincount(src, minlength=n) > 0
    on = ~loop
    src, dst, p, d = src[on], children[on], chances[on], d[on]
    if len(src) > 1 and bool((src[1:] < src[:-1]).any()):
        # By source, so that each level takes its positions' edges as slices.
        by = np.argsort(src, kind="stable")
        src, dst, p, d = src[by], dst[by], p[by], d[by]
    out = np.bincount(src, minlength=n)  # edges leaving each position, other than loops
    first = np.cumsum(out) - out
    leaves = out > 0
    trapped = has_edges & ~leaves
    waiting = np.bincount(dst, minlength=n)  # edges into each position not yet added
    m0 = np.zeros(n)
    m1 = np.zeros(n)
    m2 = np.zeros(n)
    m0[0], m1[0], m2[0] = 1.0, float(start), float(start * start)
    done = np.zeros(n, dtype=bool)
    truncated = 0.0
    frontier = np.flatnonzero(waiting == 0)
    while frontier.size:
        done[frontier] = True
        caught = frontier[trapped[frontier]]
        truncated += float(m0[caught].sum())
        m0[caught] = 0.0
        looping = frontier[(q[frontier] > 0) & leaves[frontier]]
        if looping.size:
            # The loop back, over any number of passes: (I - T)^-1, as the exact walk sums it.
            r = 1 / (1 - q[looping])
            m0[looping] *= r
            m1[looping] = (m1[looping] + a[looping] * m0[looping]) * r
            m2[looping] = (m2[looping] + 2 * a[looping] * m1[looping] + b[looping] * m0[looping]) * r
        # The level's edges: each of its positions' slice of the edges.
        many = out[frontier]
        sel = np.repeat(first[frontier] - (np.cumsum(many) - many), many) + np.arange(int(many.sum()))
        es, ed, ep, er = src[sel], dst[sel], p[sel], d[sel]
        x0, x1, x2 = m0[es], m1[es], m2[es]
        m0 += np.bincount(ed, weights=ep * x0, minlength=n)
        m1 += np.bincount(ed, weights=ep * (x1 + er * x0), minlength=n)
        m2 += np.bincount(ed, weights=ep * (x2 + 2 * er * x1 + er * er * x0), minlength=n)
        waiting -= np.bincount(ed, minlength=n)
        frontier = np.flatnonzero((waiting == 0) & ~done)
    if not done.all():
        raise ValueError("the procedure can come back to an earlier state: no exact odds")
    return Flow(m0, m1, m2, truncated)
