"""Benchmark of the exact odds (`tracker odds`) against a Monte Carlo through the referee.

Run as ``python bench/bench_odds.py [--runs N] [--json]`` (default N = 10000). For each
reference position (one per procedure, with and without technology: tests/odds_referee.py) it
times the enumeration as `tracker odds` runs it (CPU seconds, a fresh context so nothing is
cached) and N battles played through the Campaign aggregate with auto dice, and prints the
Monte Carlo's largest error against the enumerated probabilities of the outcomes. Then two 10
v 10 naval battles are timed alone: 10 destroyers a side, and mixed forces (battleships, a
carrier, cruisers, destroyers, submarines and a fighter), each also with --exact (fractions)
for information. Last, `tracker odds need` (the cheapest force to take a zone, and with --hold
to hold it, at a chance of 0.9) on every sea zone of the north-sea-1914 and great-war-1914
campaigns at Germany's first combat movement where at most 10 units a side take part, each
campaign's answers in a fresh process, as a player's command runs: the slowest answer of each
campaign (a search beyond its budget of positions is counted apart). It only measures and
prints; nothing is asserted. Then `tracker odds escorts --ntr-loss 1` on every zone holding
Germany's NTR, and `tracker odds buy` (every type Germany can buy with its resources at its
first purchase phase, battles of at most 10 units a side, within the answer's budget of
positions). `bench/run.py --odds` prints the same rows in its table.

Targets: the enumeration at least 10x faster than the N-run Monte Carlo on every position;
each 10 v 10 naval battle in under 1 s of CPU; each `odds need`, `odds escorts` and `odds buy`
answer in under 1 s of CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from domain.errors import TrackerError  # noqa: E402
from domain.procedures.odds import exact_odds  # noqa: E402
from tests.odds_positions import context, naval_battle  # noqa: E402
from tests.odds_referee import POSITIONS, Position, Table, play_many  # noqa: E402

SPEEDUP = 10.0
BIG_TARGET_S = 1.0
ADVICE_CAMPAIGNS = ("north-sea-1914", "great-war-1914")
ADVICE_UNITS = 10  # the most units a side in the answers timed
ADVICE_CHANCE = 0.9
# For information: the north-sea zones where the fleets meet, 13 German units able to reach each.
ADVICE_FLEETS = {
    # Not Heligoland Bight: British submarines alone there are no naval battle to weigh (NC1, AS1).
    "north-sea-1914": ("Central North Sea", "Southern North Sea", "Northern North Sea")
}
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
    advice = {name: advice_in_a_fresh_process(name) for name in ADVICE_CAMPAIGNS} if big else {}
    return {"runs": runs, "positions": rows, "big": bigs, "advice": advice}


def advice_in_a_fresh_process(scenario: str) -> dict[str, Any]:
    """`advice_times` in a process of its own, as a player's `tracker odds need` runs: the
    Monte Carlo battles and the fraction enumerations measured before leave hundreds of MiB
    of the allocator's pages and caches behind, which made each later answer a third slower."""
    import subprocess

    done = subprocess.run([sys.executable, __file__, "--advice", scenario], capture_output=True, text=True, check=True)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def advice_board(scenario: str, phase: str = "combat_movement") -> Any:
    """The campaign's board at Germany's first `phase` (in memory, no database)."""
    import uuid

    from domain.campaign import Campaign
    from domain.dice import commitment
    from domain.ruleset import load_ruleset
    from domain.scenario import read_scenario
    from tests.support import advance

    data, _ = read_scenario(scenario)
    _, ruleset = load_ruleset(data["scenario"]["ruleset"])
    c = Campaign.create(uuid.uuid4(), "bench", data, ruleset, "auto", commitment("00" * 32))
    while (c.nation, c.phase) != ("Germany", phase):
        advance(c)
    return c.board()


def buy_time(scenario: str) -> dict[str, Any]:
    """`tracker odds buy` at Germany's first purchase phase: CPU seconds, the figures weighed
    and the zones named too large to weigh."""
    from tracker.analysis import buy

    board = advice_board(scenario, "purchase")
    start = time.process_time()
    data = buy.answer(board, None, 20_000)
    elapsed = time.process_time() - start
    best = data["ranking"][0]
    return {
        "value_s": elapsed,
        "figures": len(data["candidates"]),
        "positions": data["positions"],
        "too_large": len(data["too_large"]),
        "first": f"{best['type']} {best['value']:.3f} per resource",
        "met": elapsed < BIG_TARGET_S,
    }


def advice_times(scenario: str) -> dict[str, Any]:
    """`tracker odds need` (and --hold) on every sea zone of the campaign where at most
    ADVICE_UNITS units a side can fight: CPU seconds of each answer, the slowest named."""
    from tracker.analysis import advise, reach

    board = advice_board(scenario)
    times: list[tuple[float, str, int]] = []
    refused = 0
    for zone in sorted(board.scenario.game_map.sea):
        for view, ask in (("need", reach.attack_question), ("hold", reach.hold_question)):
            try:
                q = ask(board, "Germany", zone)
            except TrackerError:
                continue  # no battle to weigh there
            sizes = [len(q.pool) + len(q.allies), *(len(us) for us in q.others.values())]
            if max(sizes) > ADVICE_UNITS or not q.pool:
                continue
            start = time.process_time()
            try:
                found = advise.search(q, ADVICE_CHANCE, 20_000)
            except TrackerError:
                refused += 1  # beyond the search's budget: counted apart
                continue
            times.append((time.process_time() - start, f"{view} {zone}", found.weighed if found else 0))
    times.sort()
    slowest = times[-1] if times else (0.0, "-", 0)
    fleets = {}
    for zone in ADVICE_FLEETS.get(scenario, ()):
        q = reach.attack_question(board, "Germany", zone)
        start = time.process_time()
        try:
            found = advise.search(q, ADVICE_CHANCE, 20_000)
            answer: Any = found.counts if found else None
        except TrackerError as e:
            found, answer = None, f"refused: {e}"
        fleets[zone] = {
            "value_s": time.process_time() - start,
            "reachable": len(q.pool),
            "force": answer,
            "weighed": found.weighed if found else 0,
        }
    escorts = escort_times(board)
    return {
        "escorts": escorts,
        "buy": buy_time(scenario),
        "fleets": fleets,
        "answers": len(times),
        "value_s": slowest[0],
        "slowest": slowest[1],
        "over_target": sum(1 for t, _, _ in times if t >= BIG_TARGET_S),
        "refused": refused,
        "total_s": sum(t for t, _, _ in times),
        "reference_s": BIG_TARGET_S,
        "ratio": slowest[0] / BIG_TARGET_S,
        "target": f"< {BIG_TARGET_S:g} s CPU",
        "met": slowest[0] < BIG_TARGET_S,
    }


def escort_times(board: Any) -> dict[str, Any]:
    """`tracker odds escorts --ntr-loss 1` on every zone holding Germany's NTR: CPU seconds of
    the slowest answer (a search beyond the limits of exact odds is counted apart)."""
    from tracker.analysis import escorts

    times: list[tuple[float, str]] = []
    refused = 0
    for zone in sorted(board.ntr.get("Germany", {})):
        if board.ntr["Germany"][zone] <= 0:
            continue
        start = time.process_time()
        try:
            escorts.answer(escorts.convoy_question(board, zone), 1.0, 20_000)
        except TrackerError:
            refused += 1
            continue
        times.append((time.process_time() - start, zone))
    times.sort()
    slowest = times[-1] if times else (0.0, "-")
    return {"answers": len(times), "refused": refused, "value_s": slowest[0], "slowest": slowest[1]}


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
    for name, a in summary.get("advice", {}).items():
        out.append(
            (
                f"odds need, {name}, slowest of {a['answers']}",
                f"{a['value_s']:.2f} s",
                f"{a['reference_s']:g} s",
                a["ratio"],
                a["target"],
                a["met"],
            )
        )
        e = a["escorts"]
        out.append(
            (
                f"odds escorts, {name}, slowest of {e['answers']}",
                f"{e['value_s']:.2f} s",
                f"{BIG_TARGET_S:g} s",
                e["value_s"] / BIG_TARGET_S,
                f"< {BIG_TARGET_S:g} s CPU",
                e["value_s"] < BIG_TARGET_S,
            )
        )
        b = a["buy"]
        out.append(
            (
                f"odds buy, {name}",
                f"{b['value_s']:.2f} s",
                f"{BIG_TARGET_S:g} s",
                b["value_s"] / BIG_TARGET_S,
                f"< {BIG_TARGET_S:g} s CPU",
                b["met"],
            )
        )
        for zone, f in a["fleets"].items():
            out.append((f"odds need {zone} ({f['reachable']} units)", f"{f['value_s']:.2f} s", "", None, "-", None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--advice", metavar="SCENARIO", help="only the advice answers on SCENARIO, as JSON")
    args = parser.parse_args()
    if args.advice:
        print(json.dumps(advice_times(args.advice)))
        return
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
    print(f"\ntracker odds need (and --hold) at a chance of {ADVICE_CHANCE:g}, at most {ADVICE_UNITS} units a side")
    for name, a in summary["advice"].items():
        print(
            f"{name:<22} {a['value_s']:>11.3f} s {a['reference_s']:>13.1f} s {a['ratio']:>7.2f}x "
            f"{a['target']:>10} {'yes' if a['met'] else 'no':>4} "
            f"  slowest of {a['answers']} answers: {a['slowest']}; {a['over_target']} over the target, "
            f"{a['refused']} beyond the search's budget; all {a['total_s']:.2f} s"
        )
        e = a["escorts"]
        print(
            f"  escorts: slowest of {e['answers']} answers {e['value_s']:.3f} s ({e['slowest']}); "
            f"{e['refused']} beyond the limits of exact odds"
        )
        b = a["buy"]
        print(
            f"  buy: {b['value_s']:.3f} s ({'met' if b['met'] else 'NOT met'}); {b['figures']} figures, "
            f"{b['positions']:,} positions, {b['too_large']} zones too large to weigh; first: {b['first']}"
        )
        for zone, f in a["fleets"].items():
            print(
                f"  need {zone}: {f['value_s']:.3f} s ({f['reachable']} units can reach it; "
                f"{f['weighed']} forces weighed; the answer {f['force']})"
            )


if __name__ == "__main__":
    main()
