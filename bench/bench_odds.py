"""Benchmark of the exact odds (`tracker odds`) against a Monte Carlo through the referee.

Run as ``python bench/bench_odds.py [--runs N] [--json]`` (default N = 10000). For each
reference position (one per procedure, with and without technology: tests/odds_referee.py)
it times the exact enumeration (CPU seconds, a fresh context so nothing is cached) and N
battles played through the Campaign aggregate with auto dice, and prints the Monte Carlo's
largest error against the exact probabilities of the outcomes. Then a 10 v 10 naval battle
(10 destroyers a side) is timed alone. It only measures and prints; nothing is asserted.

Targets: the exact odds at least 10x faster than the N-run Monte Carlo on every position;
the 10 v 10 naval battle in under 1 s of CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from domain.procedures.odds import exact_odds  # noqa: E402
from tests.odds_positions import context, naval_battle  # noqa: E402
from tests.odds_referee import POSITIONS, Position, Table, play_many  # noqa: E402

SPEEDUP = 10.0
BIG_TARGET_S = 1.0


def exact_time(position: Position) -> tuple[float, dict[Any, Fraction]]:
    state, ctx, rounds = Table(position).pure()
    start = time.process_time()
    odds = exact_odds(state, ctx, None, rounds)
    elapsed = time.process_time() - start
    dist: dict[Any, Fraction] = {}
    for o, m in odds.outcomes.items():
        key = (o.attacker_left, o.defender_left, o.ntr_destroyed)
        dist[key] = dist.get(key, Fraction(0)) + m[0]
    return elapsed, dist


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for position in POSITIONS:
        exact_s, dist = exact_time(position)
        start = time.process_time()
        seen = play_many(position, args.runs, seed=1)
        mc_s = time.process_time() - start
        error = max(abs(seen.get(k, 0) / args.runs - float(p)) for k, p in dist.items())
        ratio = mc_s / exact_s if exact_s else float("inf")
        rows.append(
            {
                "position": position.name,
                "value_exact_s": exact_s,
                "reference_monte_carlo_s": mc_s,
                "ratio": ratio,
                "target": f">= {SPEEDUP:g}x",
                "met": ratio >= SPEEDUP,
                "monte_carlo_largest_error": error,
                "outcomes": len(dist),
            }
        )
    ctx = context()
    state = naval_battle(ctx, {"destroyer": 10}, {"destroyer": 10})
    start = time.process_time()
    big = exact_odds(state, ctx, None, 1)
    big_s = time.process_time() - start
    summary = {
        "runs": args.runs,
        "positions": rows,
        "naval_10v10": {
            "value_s": big_s,
            "reference_s": BIG_TARGET_S,
            "ratio": big_s / BIG_TARGET_S,
            "target": f"< {BIG_TARGET_S:g} s CPU",
            "met": big_s < BIG_TARGET_S,
            "states": big.states,
        },
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"exact odds against {args.runs:,} battles through the referee (CPU seconds)")
    print(
        f"{'position':<18} {'value (exact)':>14} {'reference (MC)':>15} {'ratio':>8} {'target':>8} {'met':>4}"
        f" {'MC largest error':>17}"
    )
    for r in rows:
        print(
            f"{r['position']:<18} {r['value_exact_s']:>12.3f} s {r['reference_monte_carlo_s']:>13.1f} s "
            f"{r['ratio']:>7.0f}x {r['target']:>8} {'yes' if r['met'] else 'no':>4} "
            f"{r['monte_carlo_largest_error']:>17.4f}"
        )
    b = summary["naval_10v10"]
    print(
        f"{'naval 10 v 10 DD':<18} {b['value_s']:>12.3f} s {b['reference_s']:>13.1f} s {b['ratio']:>7.2f}x "
        f"{'< 1 s':>8} {'yes' if b['met'] else 'no':>4} {'(' + str(b['states']) + ' states)':>17}"
    )


if __name__ == "__main__":
    main()
