"""The flow of probability through the positions of an enumeration in floats, as arrays: each
position's mass and the first two moments of the rounds fought to reach it, pushed along the
edges a level at a time (Kahn's order: a position goes once every edge into it has; each
level takes its positions' edges, made a run of positions at a time), for the odds
enumeration (`domain.procedures.odds`). The exact enumeration walks the same edges one at a
time in fractions; a big battle has millions of them, which arrays add up a run at a time
(kept all at once, they were most of its memory).

A position's loop back to itself (a round without effect) is summed exactly, as the geometric
series the exact walk sums; mass caught in a loop it can never leave is reported apart."""

from __future__ import annotations

from collections.abc import Callable
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


# The most edges a pass over all of them takes at once: its temporary arrays stay a few MiB,
# where a big battle's whole set of edges (millions) would take as many again per array.
CHUNK = 1 << 16


def chunks(size: Ints) -> list[tuple[int, int]]:
    """The positions 0..n-1 in runs [lo, hi) of about `CHUNK` edges each (a position's edges
    never split), `size` the edges of each."""
    n, most = len(size), CHUNK
    bounds = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(size, out=bounds[1:])
    out: list[tuple[int, int]] = []
    lo = 0
    while lo < n:
        # The first position whose edges end past `most` more, taken whole.
        hi = int(np.searchsorted(bounds, bounds[lo] + most, side="right")) - 1
        hi = min(max(hi, lo + 1), n)
        out.append((lo, hi))
        lo = hi
    return out


# The edges of a run of positions (increasing), each position's in order, one after another:
# the position reached, the chance, the rounds started on the way.
EdgesOf = Callable[[Ints], tuple[Ints, Floats, npt.NDArray[np.integer]]]


def flow(n: int, size: Ints, edges_of: EdgesOf, start: int) -> Flow:
    """The mass of each of the positions 0..n-1 from position 0 (reached with `start` rounds
    fought), given every edge: `size[k]` leave position k, and `edges_of` makes those of a
    run of positions when asked (a big battle has millions: they are made a run at a time,
    never all at once). A position's edges are added up in their order.

    Raises ValueError when positions lead back to one another (other than a position to
    itself): no order adds up every edge into a position before leaving it."""
    # A loop back to the same position: its chance and the moments of the rounds it starts;
    # the edges leaving each position other than loops, and those into each.
    q = np.zeros(n)
    a = np.zeros(n)
    b = np.zeros(n)
    out = np.zeros(n, dtype=np.int64)
    waiting = np.zeros(n, dtype=np.int64)  # edges into each position not yet added
    for lo, hi in chunks(size):
        dst, chances, rounds = edges_of(np.arange(lo, hi, dtype=np.int64))
        src = np.repeat(np.arange(hi - lo, dtype=np.int64), size[lo:hi])
        loop = dst == src + lo
        on = ~loop
        if loop.any():
            ls, lp, ld = src[loop], chances[loop], rounds[loop].astype(np.float64)
            q[lo:hi] = np.bincount(ls, weights=lp, minlength=hi - lo)
            a[lo:hi] = np.bincount(ls, weights=lp * ld, minlength=hi - lo)
            b[lo:hi] = np.bincount(ls, weights=lp * ld**2, minlength=hi - lo)
        out[lo:hi] = np.bincount(src[on], minlength=hi - lo)
        waiting += np.bincount(dst[on], minlength=n)
    has_edges = size > 0
    leaves = out > 0
    trapped = has_edges & ~leaves
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
        # The level's edges: each of its positions' slice of the edges, loops left out, a run
        # of positions at a time (a level of a big battle has a million edges). Each run's
        # are added in order to the level's sums (`add.at`, as `bincount` adds them), so the
        # sums are those of the whole level at once, to the last bit.
        many = size[frontier]
        ends = np.cumsum(many)
        s0, s1, s2 = np.zeros(n), np.zeros(n), np.zeros(n)
        lo = 0
        while lo < frontier.size:
            done_before = int(ends[lo - 1]) if lo else 0
            hi = min(max(int(np.searchsorted(ends, done_before + CHUNK, side="right")), lo + 1), frontier.size)
            run, count = frontier[lo:hi], many[lo:hi]
            ed, ep, er = edges_of(run)
            es = np.repeat(run, count)
            on = ed != es
            es, ed, ep, er = es[on], ed[on], ep[on], er[on].astype(np.float64)
            x0, x1, x2 = m0[es], m1[es], m2[es]
            np.add.at(s0, ed, ep * x0)
            np.add.at(s1, ed, ep * (x1 + er * x0))
            np.add.at(s2, ed, ep * (x2 + 2 * er * x1 + er * er * x0))
            waiting -= np.bincount(ed, minlength=n)
            lo = hi
        m0 += s0
        m1 += s1
        m2 += s2
        frontier = np.flatnonzero((waiting == 0) & ~done)
    if not done.all():
        raise ValueError("the procedure can come back to an earlier state: no exact odds")
    return Flow(m0, m1, m2, truncated)
