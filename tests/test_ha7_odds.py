"""`tracker odds` under HA7 as amended: the hits of a volley placed one at a time in the order
the owner likes, the default the cheapest over every order. The exact odds against two Monte
Carlos where that order matters: a simulator written from RULES.md alone (tests/odds_simulator.py,
no code shared with the tracker) and the referee itself with random dice; and each roll step of
such battles against every face of the dice through the referee's own steps.

Seeds are fixed, so each run is the same. Each outcome's frequency must lie within 5 standard
errors of its exact probability (rare outcomes pooled): with the outcomes of a battle a true
agreement fails that by chance for a few seeds in 100,000, while the odds of the rule before its
amendment (61.1% instead of 75.4% for the attacker in the audit's battle) miss it by far more,
and the simulator placing the battleships' hits first disagrees with the odds on every battle."""

from __future__ import annotations

import math
import zlib
from collections import Counter
from dataclasses import replace
from fractions import Fraction
from itertools import product
from typing import Any

import pytest

from domain.procedures import odds
from domain.procedures.base import Context, Decision, Ended, hypothetical_scenario
from domain.procedures.canon import Canon
from domain.procedures.odds import Odds, exact_odds
from tests import odds_simulator
from tests.odds_positions import RULESET, SIDES, context, naval_battle
from tests.odds_referee import Position, play_many

Key = tuple[Any, ...]


def distribution(result: Odds) -> dict[Key, float]:
    dist: dict[Key, float] = {}
    for o, m in result.outcomes.items():
        key = (o.attacker_left, o.defender_left)
        dist[key] = dist.get(key, 0.0) + float(m[0])
    return dist


def disagreements(dist: dict[Key, float], seen: Counter[Key], runs: int, sigmas: float = 5.0) -> list[str]:
    """The outcomes (and the pool of the rare ones) whose frequency lies further than `sigmas`
    standard errors from the exact probability, and any outcome the odds call impossible."""
    out = [f"{k}: seen {n}, impossible by the odds" for k, n in seen.items() if k not in dist]
    rare, rare_seen = 0.0, 0
    for key, p in dist.items():
        if p * runs < 20:
            rare += p
            rare_seen += seen[key]
            continue
        se = math.sqrt(p * (1 - p) / runs)
        if abs(seen[key] / runs - p) > sigmas * se:
            out.append(f"{key}: seen {seen[key] / runs:.4f}, exact {p:.4f}")
    if rare * runs >= 5:
        se = math.sqrt(rare * (1 - rare) / runs)
        if abs(rare_seen / runs - rare) > sigmas * se + 1 / runs:
            out.append(f"rare outcomes: seen {rare_seen / runs:.4f}, exact {rare:.4f}")
    return out


# ----- against a simulator written from the rules' text -----

# Submarines that fire nothing (a house table, F4): every choice left in these battles is HA7's.
SILENT = replace(
    RULESET,
    units={
        **RULESET.units,
        "submarine": replace(RULESET.units["submarine"], attack=0, defense=0),
    },
)

ORDER_MATTERS = [
    # RULES.md HA7's example: the destroyer's hit on the cruiser first leaves the battleship's
    # nothing to hit (NC6).
    ({"battleship": 1, "destroyer": 1}, {"cruiser": 1, "submarine": 1}),
    ({"battleship": 1, "cruiser": 1, "destroyer": 1}, {"battleship": 1, "destroyer": 1, "submarine": 2}),
    ({"battleship": 2, "destroyer": 1}, {"cruiser": 1, "transport": 1, "submarine": 2}),
]


@pytest.mark.parametrize(("german", "british"), ORDER_MATTERS, ids=["HA7-example", "mixed", "transport"])
def test_odds_agree_with_a_simulator_written_from_the_rules_HA7_NC6(
    german: dict[str, int], british: dict[str, int]
) -> None:
    ctx = Context(SILENT, hypothetical_scenario(SIDES), {})
    result = exact_odds(naval_battle(ctx, german, british), ctx, None, 1, exact=False)
    assert abs(sum(m[0] for m in result.outcomes.values()) - 1) < 1e-9
    dist = distribution(result)
    runs = 20_000
    seen = odds_simulator.play_many(german, british, runs, seed=zlib.crc32(repr((german, british)).encode()))
    assert not disagreements(dist, seen, runs)


@pytest.mark.parametrize(("german", "british"), ORDER_MATTERS, ids=["HA7-example", "mixed", "transport"])
def test_the_simulator_tells_the_amended_rule_from_the_fixed_order_of_classes_HA7(
    german: dict[str, int], british: dict[str, int]
) -> None:
    """The comparison has teeth: the simulator placing the battleships' hits first, as the tracker
    did before HA7's amendment, disagrees with the odds on each of these battles."""
    ctx = Context(SILENT, hypothetical_scenario(SIDES), {})
    dist = distribution(exact_odds(naval_battle(ctx, german, british), ctx, None, 1, exact=False))
    seen = odds_simulator.play_many(german, british, 20_000, seed=1, placing=odds_simulator.place_capital_first)
    assert disagreements(dist, seen, 20_000)


# ----- against the referee with random dice -----

# The audit's battle: Britain's battleship and destroyers hit Germany's cruiser and submarines.
AUDIT = Position("audit-HA7", "naval", {"cruiser": 1, "submarine": 2}, {"battleship": 1, "destroyer": 2})


def test_the_audits_battle_gives_the_attacker_what_the_amended_rule_gives_HA7() -> None:
    ctx = context()
    result = exact_odds(naval_battle(ctx, AUDIT.german, AUDIT.british), ctx, None, 1)
    assert result.truncated == 0
    wins = float(result.probability(lambda o: o.result == "attacker_wins"))
    assert round(wins, 3) == 0.754  # 0.611 when the battleship's hits were always placed first


def test_odds_agree_with_the_referee_with_random_dice_where_the_order_matters_HA7() -> None:
    """The referee (the Campaign aggregate, auto dice, a fresh seed per battle) playing the
    audit's battle with its defaults reaches each outcome as often as the exact odds say."""
    from tests.odds_referee import Table

    state, ctx, rounds = Table(AUDIT).pure()
    dist: dict[Key, float] = {}
    for o, m in exact_odds(state, ctx, None, rounds, exact=False).outcomes.items():
        key = (o.attacker_left, o.defender_left, o.ntr_destroyed)
        dist[key] = dist.get(key, 0.0) + float(m[0])
    runs = 1_500
    seen = play_many(AUDIT, runs, seed=zlib.crc32(AUDIT.name.encode()))
    assert not disagreements(dist, seen, runs)
    wins = sum(n for (att, dfd, _), n in seen.items() if att and not dfd) / runs
    assert abs(wins - 0.754) < 5 * math.sqrt(0.754 * 0.246 / runs)


# ----- every roll step against every face of the dice, through the referee's own steps -----


def _every_face(ctx: Context, state: Any, canon: Canon) -> dict[Any, Fraction]:
    """The roll `state` waits for, every die on every face, each child settled by the defaults
    (`volley.roll` and `volley.decide`: the referee's steps) and named as the enumerator names it."""
    n = odds.need(state, ctx)
    assert isinstance(n, odds.Roll)
    dice = [(i, g) for i, g in enumerate(n.groups) for _ in range(g.count)]
    total = math.prod(g.faces**g.dice for _, g in dice)
    out: dict[Any, Fraction] = {}
    for draw in product(*(list(product(range(1, g.faces + 1), repeat=g.dice)) for _, g in dice)):
        counts = [[0] * len(g.values) for g in n.groups]
        for (i, g), faces in zip(dice, draw, strict=True):
            counts[i][g.category(faces)] += 1
        child, _ = odds.roll(state, ctx, tuple(tuple(c) for c in counts))
        while isinstance(odds.need(child, ctx), Decision):
            child, _ = odds.decide(child, ctx, None)
        child = canon(child)
        out[child] = out.get(child, Fraction(0)) + Fraction(1, total)
    return out


@pytest.mark.parametrize(
    ("german", "british"),
    [
        ({"battleship": 1, "destroyer": 1}, {"cruiser": 1, "submarine": 1}),
        ({"cruiser": 1, "submarine": 1}, {"battleship": 1, "destroyer": 1}),
    ],
    ids=["HA7-example", "audit-like"],
)
def test_every_roll_step_where_the_order_matters_equals_every_face_HA7(
    german: dict[str, int], british: dict[str, int]
) -> None:
    """The enumerator's remains of a volley hit by battleships and escorts at once (both classes
    placed together, `Remains.classes_step`) equal rolling every die on every face and taking
    the referee's default casualties."""
    ctx = context()
    state = naval_battle(ctx, german, british)
    engine = odds.Engine(ctx, None)
    engine.canon = canon = Canon(state)
    root, _ = engine.settle(state)
    checked = 0
    for s in engine.order(root):
        if isinstance(odds.need(s, ctx), Ended):
            continue
        grouped: dict[Any, Fraction] = {}
        for (child, _), p in engine.edges[s]:
            grouped[child] = grouped.get(child, Fraction(0)) + p
        assert grouped == _every_face(ctx, s, canon)
        checked += 1
    assert checked >= 2
