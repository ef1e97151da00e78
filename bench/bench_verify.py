"""`tracker verify` on a long campaign: re-refereeing every recorded action against a plain replay.

Run as ``python bench/bench_verify.py [--events 20000] [--db-dir DIR] [--runs 3] [--tree DIR]``.
It builds (or reuses) a synthetic north-sea-1914 campaign with the script of ``bench_store.py``
and prints, side by side: the median time of `tracker verify`, the time to read and fold the
same log once (decode every event and apply it: a replay), their ratio and the target (verify,
which folds once and re-runs each action on a copy of the state before it, within 4x a replay).
``--tree`` runs another checkout's code on its own campaign (to compare with an earlier
version); nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--db-dir", help="Keep (and reuse) the campaign database here.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", help="Source checkout whose code to measure (default: this one).")
    args = parser.parse_args()
    tree = Path(args.tree).resolve() if args.tree else Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(tree), str(tree / "bench")]

    from bench_projections import campaign_name, prepare
    from click.testing import CliRunner

    from tracker.cli.main import cli
    from tracker.service.application import Tracker

    directory = Path(args.db_dir) if args.db_dir else Path(tempfile.mkdtemp(prefix="bench-verify-"))
    directory.mkdir(parents=True, exist_ok=True)
    db = directory / f"verify-{args.events}.db"
    built = prepare(db, args.events, 200)
    name = campaign_name(args.events)

    def verify() -> float:
        started = time.perf_counter()
        result = CliRunner().invoke(cli, ["--db", str(db), "--campaign", name, "verify"], catch_exceptions=False)
        elapsed = time.perf_counter() - started
        if result.exit_code != 0:
            raise SystemExit(f"verify failed: {result.output}")
        return elapsed

    def replay() -> float:
        with Tracker(str(db)) as t:
            started = time.perf_counter()
            agg = None
            for event in t.events(built["cid"]):
                agg = event.mutate(agg)
            return time.perf_counter() - started

    verify()  # warm-up: imports, the views caught up
    value = statistics.median(verify() for _ in range(args.runs))
    reference = statistics.median(replay() for _ in range(args.runs))
    last = CliRunner().invoke(cli, ["--db", str(db), "--campaign", name, "verify"]).output.strip().splitlines()
    ratio = value / reference
    header = ("measure", "value", "reference", "ratio", "target", "met")
    row = (
        f"verify, {built['events']:,} events",
        f"{value:.2f} s",
        f"replay {reference:.2f} s",
        f"{ratio:.2f}x",
        "<= 4x a replay",
        "yes" if ratio <= 4 else "NO",
    )
    widths = [max(len(a), len(b)) for a, b in zip(header, row, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    print(f"code: {tree}")
    for line in last[:2]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
