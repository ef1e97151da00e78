"""CV3 in the exact odds: a convoy search by alike searchers (one nation, type and damage, with
IDs in a row) is enumerated by how many of them detect, N + 1 results rather than 2**N, and
gives the very fractions every searcher's die on its own gives."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from math import comb
from typing import Any

import pytest

from domain.procedures import convoy, odds
from domain.procedures.base import Context, Decision, Piece, hypothetical_scenario
from domain.procedures.canon import Canon
from domain.procedures.engine import Engine
from tests.odds_positions import RULESET, TOP, context, convoy_battle, fleet

ALLIED = {"Germany": "Central Powers", "Britain": "Entente", "France": "Entente"}


def both_ways(
    monkeypatch: pytest.MonkeyPatch, ctx: Context, state: Any, policy: odds.Policy | None = None, exact: bool = True
) -> tuple[odds.Odds, odds.Odds]:
    """The odds with the search counted (now) and with every searcher's die on its own."""
    counted = odds.exact_odds(state, ctx, policy, exact=exact)
    with monkeypatch.context() as m:
        m.setattr(Engine, "count_searchers", False)
        each = odds.exact_odds(state, ctx, policy, exact=exact)
    return counted, each


def britain(counts: dict[str, int]) -> tuple[Piece, ...]:
    return fleet("Britain", counts)


def battle(ctx: Context, subs: int, searching: tuple[Piece, ...], ntr: int = 3) -> convoy.ConvoyBattle:
    zone_subs = fleet("Germany", {"submarine": subs})
    return convoy.start(ctx, "Germany", "Britain", tuple(p.id for p in zone_subs), zone_subs, searching, ntr)


DAMAGED = (
    Piece("GB-BB1", "battleship", "Britain"),
    Piece("GB-BB2", "battleship", "Britain", 1),
    Piece("GB-BB3", "battleship", "Britain"),
    Piece("GB-BB4", "battleship", "Britain"),
    *britain({"destroyer": 2}),
)
# A cruiser's ID between two destroyers': no run of alike units, nothing renamed (`Canon`).
INTERLEAVED = (
    Piece("GB-X1", "destroyer", "Britain"),
    Piece("GB-X2", "cruiser", "Britain"),
    Piece("GB-X3", "destroyer", "Britain"),
    Piece("GB-X4", "destroyer", "Britain"),
)
# The allies' destroyers next to Britain's in the order of IDs (FR-DD2, GB-DD1).
ALLIES = (*britain({"destroyer": 2}), Piece("FR-DD1", "destroyer", "France"), Piece("FR-DD2", "destroyer", "France"))


@pytest.mark.parametrize(
    "tech,subs,searching",
    [
        ({}, 1, britain({"destroyer": 3})),
        ({}, 2, britain({"destroyer": 3, "cruiser": 2})),
        ({}, 2, britain({"destroyer": 2, "cruiser": 2, "bomber": 1, "fighter": 1})),
        ({"Germany": {"advanced_submarine": TOP["advanced_submarine"]}}, 2, britain({"destroyer": 4, "cruiser": 2})),
        ({"Britain": {"advanced_asw": TOP["advanced_asw"]}}, 3, britain({"destroyer": 3, "battleship": 2})),
        ({}, 2, DAMAGED),
        ({}, 2, INTERLEAVED),
    ],
    ids=["3-destroyers", "destroyers-cruisers", "mixed-with-aircraft", "TE3", "TE4", "damaged", "interleaved"],
)
def test_a_search_counted_by_how_many_detect_gives_every_die_on_its_own_CV3_CV4(
    monkeypatch: pytest.MonkeyPatch, tech: dict[str, Any], subs: int, searching: tuple[Piece, ...]
) -> None:
    ctx = context(tech)
    counted, each = both_ways(monkeypatch, ctx, battle(ctx, subs, searching))
    assert counted.truncated == each.truncated == 0
    assert {o: m[0] for o, m in counted.outcomes.items()} == {o: m[0] for o, m in each.outcomes.items()}
    assert all(isinstance(m[0], Fraction) for m in counted.outcomes.values())
    for o, m in counted.outcomes.items():
        assert m[1:] == pytest.approx(each.outcomes[o][1:], rel=1e-12)


def test_allies_searching_together_are_counted_apart_by_nation_CV3(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = Context(RULESET, hypothetical_scenario(ALLIED))
    state = battle(ctx, 2, ALLIES)
    assert [p.id for p in state.eligible] == ["FR-DD1", "FR-DD2", "GB-DD1", "GB-DD2"]
    assert convoy.alike_runs(state.eligible, (p.id for p in state.eligible + state.zone_subs)) == [[0, 1], [2, 3]]
    counted, each = both_ways(monkeypatch, ctx, state)
    assert {o: m[0] for o, m in counted.outcomes.items()} == {o: m[0] for o, m in each.outcomes.items()}


def test_searchers_picked_in_their_own_order_are_counted_alike_CV3_CV4(monkeypatch: pytest.MonkeyPatch) -> None:
    # A campaign recorded before CV4's amendment rolls the searchers in the order named: the
    # dice are not in the order of the IDs, and some eligible units do not search.
    ctx = replace(context(), ruleset=replace(RULESET, search_order="named"))
    state = battle(ctx, 2, britain({"destroyer": 4, "cruiser": 3}))
    picked = ("GB-CA2", "GB-DD4", "GB-DD1", "GB-CA1", "GB-DD2")

    def choose(s: Any, d: Decision) -> object | None:
        return picked if d.kind == "searchers" else None

    counted, each = both_ways(monkeypatch, ctx, state, choose)
    assert {o: m[0] for o, m in counted.outcomes.items()} == {o: m[0] for o, m in each.outcomes.items()}
    # GB-DD3 does not search: GB-DD1, GB-DD2 are one run, GB-DD4 another.
    s = odds.roll(state, ctx, ((1, 0),))[0]  # merchant defence sinks none (CV2)
    s = odds.decide(s, ctx, picked)[0]
    assert [p.id for p in s.searchers] == list(picked)
    named = {p.id for p in s.eligible + s.zone_subs}
    assert convoy.alike_runs(s.searchers, named) == [[3, 0], [2, 4], [1]]


def test_floats_agree_with_every_die_on_its_own_CV3(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context()
    counted, each = both_ways(monkeypatch, ctx, battle(ctx, 2, britain({"destroyer": 4, "cruiser": 3})), exact=False)
    assert counted.outcomes.keys() == each.outcomes.keys()
    for o, m in counted.outcomes.items():
        assert m == pytest.approx(each.outcomes[o], rel=1e-9)


@pytest.mark.parametrize("n", [1, 6])
def test_a_search_by_n_alike_searchers_has_n_plus_one_results_CV3(n: int) -> None:
    ctx = context()
    state = convoy_battle(ctx, 1, {"destroyer": n}, 2)
    engine = Engine(ctx, None)
    engine.canon = Canon(state)
    s, _ = engine.settle(state)
    while s.step is not convoy.ConvoyStep.SEARCH:
        # Merchant defence: the branch where the submarine is left.
        s = next(c for (c, _), _p in engine.expand(s) if c.step is convoy.ConvoyStep.SEARCH)
    edges = engine.expand(s)
    # Each result is how many detect, with its binomial chance (a destroyer detects on 4).
    hit = Fraction(4, RULESET.faces_for("convoy_search"))
    assert sorted(p for _, p in edges) == sorted(comb(n, k) * hit**k * (1 - hit) ** (n - k) for k in range(n + 1))
