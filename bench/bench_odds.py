"""Benchmark of the exact odds (`tracker odds`) against a Monte Carlo through the referee.

Run as ``python bench/bench_odds.py [--runs N] [--json]`` (default N = 10000). For each
reference position (one per procedure, with and without technology: tests/odds_referee.py)
it times the enumeration as `tracker odds` runs it (CPU seconds, a fresh context so nothing
is cached) and N battles played through the Campaign aggregate with auto dice, and prints the
Monte Carlo's largest error against the enumerated probabilities of the outcomes. Then two
10 v 10 naval battles are timed alone: 10 destroyers a side, and mixed forces (battleships,
a carrier, cruisers, destroyers, submarines and a fighter), each also with --exact (fractions)
for information. It only measures and prints; nothing is asserted. `bench/run.py --odds`
prints the same rows in its table.

Targets: the enumeration at least 10x faster than the N-run Monte Carlo on every position;
each 10 v 10 naval battle in under 1 s of CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from domain.procedures.odds import exact_odds  # noqa: E402
from tests.odds_positions import context, naval_battle  # noqa: E402
from tests.odds_referee import POSITIONS, Position, Table, play_many  # noqa: E402

SPEEDUP = 10.0
BIG_TARGET_S = 1.0
BIG = {
    "naval 10 v 10 DD": ({"destroyer": 10}, {"destroyer": 10}),
    "naval 10 v 10 mixed": (
        {"battleship": 2, "cruiser": 2, "destroyer": 3, "submarine": 2, "fighter": 1},
        {"battleship": 1, "aircraft_carrier": 1, "cruiser": 2, "destroyer": 3, "submarine": 2, "fighter": 1},
    ),
}


def enumeration_time(position: Position) -> tuple[float, dict[Any, float]]:
    state, ctx, rounds = Table(position).pure()
    start = time.process_time()
    odds = exact_odds(state, ctx, None, rounds, exact=False)
    elapsed = time.process_time() - start
    dist: dict[Any, float] = {}
    for o, m in odds.outcomes.items():
        key = (o.attacker_left, o.defender_left, o.ntr_destroyed)
        dist[key] = dist.get(key, 0.0) + float(m[0])
    return elapsed, dist


def measure(runs: int, big: bool = True) -> dict[str, Any]:
    """Every figure of the benchmark: the positions against `runs` Monte Carlo battles each,
    and (with `big`) the 10 v 10 naval battles."""
    rows = []
    for position in POSITIONS:
        exact_s, dist = enumeration_time(position)
        start = time.process_time()
        seen = play_many(position, runs, seed=1)
        mc_s = time.process_time() - start
        error = max(abs(seen.get(k, 0) / runs - p) for k, p in dist.items())
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
    bigs = {}
    for name, (attackers, defenders) in BIG.items() if big else ():
        figures: dict[str, Any] = {}
        for exact in (False, True):
            ctx = context()
            state = naval_battle(ctx, attackers, defenders)
            start = time.process_time()
            odds = exact_odds(state, ctx, None, 1, exact=exact)
            figures["exact_s" if exact else "value_s"] = time.process_time() - start
            figures["states"] = odds.states
        figures |= {
            "reference_s": BIG_TARGET_S,
            "ratio": figures["value_s"] / BIG_TARGET_S,
            "target": f"< {BIG_TARGET_S:g} s CPU",
            "met": figures["value_s"] < BIG_TARGET_S,
        }
        bigs[name] = figures
    return {"runs": runs, "positions": rows, "big": bigs}


def table_rows(summary: dict[str, Any]) -> list[tuple[str, str, str, float | None, str, bool | None]]:
    """(what, value, reference, ratio, target, met) for `bench/run.py`'s table."""
    out: list[tuple[str, str, str, float | None, str, bool | None]] = []
    for r in summary["positions"]:
        out.append(
            (
                f"odds {r['position']} vs {summary['runs']:,} MC",
                f"{1000 * r['value_exact_s']:.0f} ms",
                f"{r['reference_monte_carlo_s']:.1f} s",
                r["ratio"],
                r["target"],
                r["met"],
            )
        )
    for name, b in summary["big"].items():
        out.append(
            (f"odds {name}", f"{b['value_s']:.2f} s", f"{b['reference_s']:g} s", b["ratio"], b["target"], b["met"])
        )
        out.append((f"odds {name} --exact", f"{b['exact_s']:.2f} s", "", None, "-", None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    summary = measure(args.runs)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"the enumeration (tracker odds) against {args.runs:,} battles through the referee (CPU seconds)")
    print(
        f"{'position':<22} {'value (odds)':>13} {'reference (MC)':>15} {'ratio':>8} {'target':>10} {'met':>4}"
        f" {'MC largest error':>17}"
    )
    for r in summary["positions"]:
        print(
            f"{r['position']:<22} {r['value_exact_s']:>11.3f} s {r['reference_monte_carlo_s']:>13.1f} s "
            f"{r['ratio']:>7.0f}x {r['target']:>10} {'yes' if r['met'] else 'no':>4} "
            f"{r['monte_carlo_largest_error']:>17.4f}"
        )
    for name, b in summary["big"].items():
        print(
            f"{name:<22} {b['value_s']:>11.3f} s {b['reference_s']:>13.1f} s {b['ratio']:>7.2f}x "
            f"{b['target']:>10} {'yes' if b['met'] else 'no':>4} "
            f"{'(' + str(b['states']) + ' states; --exact ' + format(b['exact_s'], '.2f') + ' s)':>17}"
        )


if __name__ == "__main__":
    main()
