"""What the odds enumeration (`domain.procedures.odds`) keeps, checked structurally (no times, no
memory thresholds): the exact walk keeps each position's edges as integers over one
denominator and lets them go once pushed; `Canon` keeps no position it renamed; the walk in
floats makes its edges and adds them up a run of positions at a time, giving the very
floats it gives in one step.

The rules enumerated are those of naval battles (NC3: every round's hits taken together, HA7
the casualties), convoy battles (CV3 the search) and ASW combat (AS3)."""

from __future__ import annotations

import gc
import weakref
from fractions import Fraction
from typing import Any

import pytest

from domain.procedures import flat, flow, odds
from domain.procedures.canon import Canon
from domain.procedures.engine import Edges
from tests.odds_positions import asw_combat, context, convoy_battle, naval_battle

MIXED = ({"battleship": 1, "cruiser": 1, "destroyer": 2}, {"cruiser": 2, "destroyer": 2, "submarine": 1})


def test_an_exact_enumeration_keeps_no_fraction_per_edge_NC3_HA7() -> None:
    """Each position's edges are integers over the position's common denominator (`Edges`),
    the same chances as fractions."""
    ctx = context()
    state = naval_battle(ctx, *MIXED)
    engine = odds.Engine(ctx, None)
    engine.canon = Canon(state)
    root, _ = engine.settle(state)
    engine.order(root)
    assert len(engine.edges) > 10
    for edges in engine.edges.values():
        assert isinstance(edges, Edges)
        assert edges.denominator > 0 and all(type(n) is int for n in edges.chances)
        pairs = list(edges)
        assert all(type(p) is Fraction for _, p in pairs)
        assert sum(p for _, p in pairs) == 1


def test_the_exact_walk_lets_each_positions_edges_go_once_pushed_NC3(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the mass of a position has gone on to its children, its edges are released: at the
    end of the walk the engine keeps none."""
    engines: list[odds.Engine] = []

    class Kept(odds.Engine):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            engines.append(self)

    monkeypatch.setattr(odds, "Engine", Kept)
    ctx = context()
    result = odds.exact_odds(naval_battle(ctx, *MIXED), ctx, rounds=1)
    assert result.truncated == 0 and sum(m[0] for m in result.outcomes.values()) == 1
    (engine,) = engines
    assert result.states > 10 and engine.edges == {}


def test_canon_keeps_no_position_it_renamed_NC3() -> None:
    """`Canon` remembers nothing per position: a position renamed, dropped by its caller, is
    freed (a memo kept hundreds of thousands of an ASW combat's positions alive, AS3)."""
    ctx = context()
    canon = Canon(naval_battle(ctx, {"destroyer": 3}, {"cruiser": 2}))
    # Fewer destroyers, named as the first of the root's: renamed to its last names.
    raw = naval_battle(ctx, {"destroyer": 2}, {"cruiser": 2})
    renamed = canon(raw)
    assert renamed != raw and canon(raw) == renamed
    gone = weakref.ref(raw)
    gone_renamed = weakref.ref(renamed)
    del raw, renamed
    gc.collect()
    assert gone() is None and gone_renamed() is None


def _outcomes(state: Any, ctx: Any) -> dict[Any, tuple[Any, ...]]:
    return odds.exact_odds(state, ctx, None, 0, exact=False).outcomes


@pytest.mark.parametrize(
    "build",
    [
        lambda ctx: naval_battle(ctx, *MIXED),
        lambda ctx: convoy_battle(ctx, 3, {"destroyer": 2, "cruiser": 1}, 3),
        lambda ctx: asw_combat(ctx, {"destroyer": 2, "bomber": 1}, 3),
    ],
    ids=["naval-NC3", "convoy-CV3", "asw-AS3"],
)
def test_the_flow_in_runs_gives_the_very_floats_of_one_run_NC3_CV3(monkeypatch: pytest.MonkeyPatch, build: Any) -> None:
    """Edges written and added up a few at a time (`flow.CHUNK`) give every float the one step
    over all of them gives, to the last bit: a run's sums go on from the last run's in order."""
    ctx = context()
    whole = _outcomes(build(ctx), ctx)
    for size in (1, 7):
        monkeypatch.setattr(flow, "CHUNK", size)
        ctx = context()
        assert _outcomes(build(ctx), ctx) == whole


def test_shared_walks_give_the_same_floats_in_runs_NC3(monkeypatch: pytest.MonkeyPatch) -> None:
    """Walks sharing an engine (`Shared`: edges an earlier walk found, reused) give the same
    floats whether the edges go a few or all at once."""
    attackers, defenders = MIXED
    smaller = {"destroyer": 2, "cruiser": 1}

    def both() -> list[dict[Any, tuple[Any, ...]]]:
        ctx = context()
        shared = odds.Shared(naval_battle(ctx, attackers, defenders), ctx)
        return [shared.odds(naval_battle(ctx, force, defenders)).outcomes for force in (attackers, smaller)]

    whole = both()
    monkeypatch.setattr(flow, "CHUNK", 3)
    assert both() == whole


def test_the_float_walk_never_holds_every_edge_at_once_NC3(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk in floats keeps a volley's edges as its rows and columns (`Walk.edges_of`
    makes them a run of positions at a time): no array as long as all of them, and the
    same odds as ever."""
    ctx = context()
    whole = _outcomes(naval_battle(ctx, *MIXED), ctx)
    made: list[int] = []
    edges_of = flat.Walk.edges_of

    def counted(self: flat.Walk, run: Any) -> Any:
        found = edges_of(self, run)
        made.append(len(found[0]))
        return found

    monkeypatch.setattr(flat.Walk, "edges_of", counted)
    monkeypatch.setattr(flow, "CHUNK", 4)
    ctx = context()
    assert _outcomes(naval_battle(ctx, *MIXED), ctx) == whole
    # Every edge is made twice (counted, then added up), a run of at most 4 or one position's.
    total = sum(made) // 2
    assert total > 400 and max(made) < total / 10
