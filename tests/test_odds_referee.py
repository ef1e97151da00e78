"""The exact odds against the real referee: battles played through the Campaign aggregate (in
memory, auto dice, a fresh seed for every battle) from positions of each procedure, with and
without technology, agree with `tracker odds` within 4 standard errors.

By default each position plays 500 battles (seconds). `TRACKER_RELIABILITY=heavy` (CI) plays
20,000 battles from each of the six convoy, ASW and interception positions and 5,000 from each
naval one: a naval battle through the referee costs about four times as much, and 20,000 of
both would add some ten minutes to the suite."""

from __future__ import annotations

import math
import os
import zlib
from fractions import Fraction
from typing import Any

import pytest

from domain.procedures.odds import exact_odds
from tests.odds_referee import BY_NAME, POSITIONS, Table, play_many

HEAVY = os.environ.get("TRACKER_RELIABILITY", "").lower() == "heavy"
RUNS = 20_000 if HEAVY else 500
NAVAL_RUNS = 5_000 if HEAVY else 500


def exact_distribution(name: str) -> tuple[dict[tuple[Any, ...], Fraction], Any]:
    state, ctx, rounds = Table(BY_NAME[name]).pure()
    odds = exact_odds(state, ctx, None, rounds)
    assert odds.truncated == 0
    dist: dict[tuple[Any, ...], Fraction] = {}
    for o, m in odds.outcomes.items():
        key = (o.attacker_left, o.defender_left, o.ntr_destroyed)
        dist[key] = dist.get(key, Fraction(0)) + m[0]
    return dist, odds


@pytest.mark.parametrize("name", [p.name for p in POSITIONS])
def test_referee_agrees_with_the_exact_odds_within_4_standard_errors(name: str) -> None:
    """Rule families NC, CV, AS, SM with TE3/TE4: every outcome the referee reaches is one the
    odds know, each outcome's frequency and the mean losses (and NTR) lie within 4 standard
    errors of the exact values."""
    dist, odds = exact_distribution(name)
    runs = NAVAL_RUNS if BY_NAME[name].procedure == "naval" else RUNS
    seen = play_many(BY_NAME[name], runs, seed=zlib.crc32(name.encode()))
    assert sum(seen.values()) == runs
    unknown = set(seen) - set(dist)
    assert not unknown, f"the referee reached outcomes the odds call impossible: {sorted(unknown)[:3]}"
    rare = Fraction(0)
    rare_seen = 0
    for key, p in dist.items():
        if p * runs < 20:
            # Outcomes too rare to test one by one are tested together.
            rare += p
            rare_seen += seen[key]
            continue
        se = math.sqrt(float(p * (1 - p)) / runs)
        assert abs(seen[key] / runs - float(p)) <= 4 * se, (key, seen[key] / runs, float(p))
    if rare * runs >= 5:
        se = math.sqrt(float(rare * (1 - rare)) / runs)
        assert abs(rare_seen / runs - float(rare)) <= 4 * se + 1 / runs
    for index, measure in ((0, "attacker"), (1, "defender")):
        mean = sum((p * _count(k[index]) for k, p in dist.items()), Fraction(0))
        variance = sum((p * _count(k[index]) ** 2 for k, p in dist.items()), Fraction(0)) - mean**2
        observed = sum(n * _count(k[index]) for k, n in seen.items()) / runs
        assert abs(observed - float(mean)) <= 4 * math.sqrt(float(variance) / runs) + 1e-12, measure
    if BY_NAME[name].procedure == "convoy":
        mean, variance = odds.expected(lambda o: o.ntr_destroyed)
        observed = sum(n * k[2] for k, n in seen.items()) / runs
        assert abs(observed - float(mean)) <= 4 * math.sqrt(float(variance) / runs)


def _count(left: tuple[tuple[str, int], ...]) -> int:
    return sum(n for _, n in left)
