"""Benchmark of `tracker shell`: command latency in one session against a cold `tracker` process.

Run as ``python bench/bench_shell.py [--events N] [--db-dir DIR] [--json]`` (default N = 20000).
It only measures and prints; nothing is asserted.

A campaign of about N events is built with the synthetic script of ``bench_store`` (every phase
advanced, a unit shuttled in the movement phases, occasional research and NTR placement;
``--batch`` actions per save). Then each of ``state``, ``pending``, ``next`` and ``log --tail 5``
is timed:

- in a shell session: the lines go through ``Session.dispatch``, the same function the
  interactive shell calls for every line typed, on one open database (output to a buffer);
  median of ``--runs`` calls after one warm-up call;
- as a cold process: ``tracker --db DB COMMAND`` in a fresh Python process, output discarded;
  median of ``--process-runs`` calls (what a player pays per command without the shell).

Value: the shell's median; reference: the cold process's median; target: 30 ms per command.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import SCENARIO, Script, build_batched, check_scenario, log  # noqa: E402

from tracker.cli.common import Context  # noqa: E402
from tracker.cli.main import cli  # noqa: E402
from tracker.cli.shell import Session  # noqa: E402
from tracker.service.application import Tracker  # noqa: E402

COMMANDS = ("state", "pending", "next", "log --tail 5")
TARGET_MS = 30.0


def build(db: Path, events: int, batch: int) -> int:
    log(f"building a campaign of {events:,} events in {db} ({batch} actions per save) ...")
    with Tracker(str(db)) as t:
        cid = t.create("bench-shell", SCENARIO, dice="auto").id
        check_scenario(t, cid)
        c = t.load(cid)
        build_batched(t, c, events, batch, Script(), "campaign")
        t.catch_up(cid)  # the projections are kept up to date in normal use too
        return int(c.version)


def time_session(db: Path, runs: int) -> dict[str, dict[str, Any]]:
    obj = Context(str(db), None)
    session = Session(cli, obj)
    results: dict[str, dict[str, Any]] = {}
    try:
        for line in COMMANDS:
            codes: list[int] = []
            samples: list[float] = []
            for i in range(runs + 1):
                buffer = io.StringIO()
                with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                    t0 = time.perf_counter()
                    code = session.dispatch(line)
                    elapsed = time.perf_counter() - t0
                if i:  # the first call is the warm-up
                    samples.append(elapsed)
                    codes.append(code)
            results[line] = {"median_ms": statistics.median(samples) * 1000, "refused": sum(1 for c in codes if c)}
    finally:
        obj.close()
    return results


def time_process(db: Path, runs: int) -> dict[str, dict[str, Any]]:
    exe = shutil.which("tracker", path=str(Path(sys.executable).parent)) or "tracker"
    results: dict[str, dict[str, Any]] = {}
    for line in COMMANDS:
        samples: list[float] = []
        refused = 0
        for _ in range(runs):
            t0 = time.perf_counter()
            done = subprocess.run([exe, "--db", str(db), *line.split()], capture_output=True)
            samples.append(time.perf_counter() - t0)
            refused += done.returncode != 0
        results[line] = {"median_ms": statistics.median(samples) * 1000, "refused": refused}
    return results


def table(events: int, shell: dict[str, Any], cold: dict[str, Any]) -> str:
    lines = [
        f"tracker shell against a cold tracker process, campaign of {events:,} events (median per command)",
        "",
        f"{'command':<14} {'value (shell)':>14} {'reference (cold)':>17} {'ratio':>7} {'target':>8} {'met':>4}",
    ]
    for line in COMMANDS:
        value, reference = shell[line]["median_ms"], cold[line]["median_ms"]
        met = "yes" if value <= TARGET_MS else "no"
        lines.append(
            f"{line:<14} {value:>11.1f} ms {reference:>14.1f} ms {value / reference:>7.3f} "
            f"{TARGET_MS:>5.0f} ms {met:>4}"
        )
    refused = {k: v["refused"] for k, v in shell.items() if v["refused"]}
    if refused:
        lines.append(f"note: refused calls (exit != 0) in the shell: {refused} (a phase gate; still timed)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="events of the campaign (default 20000)")
    parser.add_argument("--db-dir", help="folder for the database (default: temporary, removed)")
    parser.add_argument("--batch", type=int, default=10, help="actions per save when building (default 10)")
    parser.add_argument("--runs", type=int, default=30, help="timed shell calls per command (default 30)")
    parser.add_argument("--process-runs", type=int, default=5, help="cold processes per command (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    folder = Path(args.db_dir) if args.db_dir else Path(tempfile.mkdtemp(prefix="bench_shell_"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"bench_shell_{args.events}.db"
    try:
        if db.exists() and args.db_dir:
            with Tracker(str(db)) as t:
                events = t.load(t.campaign_id(None)).version
            log(f"reusing {db} ({events:,} events)")
        else:
            events = build(db, args.events, args.batch)
        log("timing the shell session ...")
        shell = time_session(db, args.runs)
        log("timing cold processes ...")
        cold = time_process(db, args.process_runs)
    finally:
        if not args.db_dir:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(
            json.dumps(
                {
                    "events": events,
                    "target_ms": TARGET_MS,
                    "commands": {
                        line: {
                            "value_ms": shell[line]["median_ms"],
                            "reference_ms": cold[line]["median_ms"],
                            "ratio": shell[line]["median_ms"] / cold[line]["median_ms"],
                            "met": shell[line]["median_ms"] <= TARGET_MS,
                        }
                        for line in COMMANDS
                    },
                },
                indent=2,
            )
        )
    else:
        print(table(events, shell, cold))


if __name__ == "__main__":
    main()
