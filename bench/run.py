"""The campaign-scale benchmark: every performance target of the tracker, measured in one run
and printed side by side (value, reference, ratio, target, met).

Run as ``python bench/run.py [--quick] [--db-dir DIR] [--scenario NAME]``. It builds (or
reuses, in --db-dir) synthetic campaigns of 2k, 20k and 200k events with the generator of
``bench_store.py`` (``--quick``: 2k and 20k only, under two minutes once built) on each shipped
scenario, north-sea-1914 and the whole-war great-war-1914 (``--scenario`` picks one; repeat it
for several), and prints a table per scenario. It only measures and prints; nothing is
asserted, and no test times anything.

Targets:
 1. turn-level reads cost the same in a long log: report --turn N (Markdown and HTML), state
    --turn N, explain SEQ, log --turn N at the largest size <= 2x their cost at 2k; one
    catch-up per command; the HTML one-turn report (charts included) <= 1.3x the Markdown one.
 2. whole-log commands are linear: report --all, export, verify, stats at 200k <= 12x 20k
    (--quick: 20k against 2k, <= 12x as well); and in bounded memory: report --all, export
    and verify each run in a fresh process at every size built, peak RSS <= 150 MiB.
 3. one recorded action, one transaction each, >= 0.5x raw sqlite3 inserting the same rows
    one transaction each (same journal mode and synchronous setting, interleaved rounds in the
    same run, medians); import's write path >= 0.5x raw sqlite3 inserting the same rows in one
    batch, and the whole import with its checks (chain, dice, every action re-refereed, the
    projections built) >= 0.2x of that raw batch.
 4. projection rebuild >= 0.3x raw sqlite3 select + json.loads of the same rows (rounds of
    a raw read, the rebuild and a raw read again; median ratio, with the CPU-time ratio beside).
 5. start-up, in CPU (user + system) of fresh processes, --rounds interleaved rounds, median
    ratio, every side run from compiled bytecode (as an installed tracker is, even where the
    environment sets PYTHONDONTWRITEBYTECODE): `tracker --help` <= 1.5x `python -c "import
    click"`; a cold `tracker state` on the 2k campaign <= 1.1x importing sqlalchemy.orm and
    eventsourcing.application, the least any command reading the database pays; `--help`
    and `--version` import no storage.
 6. <= 700 bytes per event in the database, projections included.
 7. a one-turn HTML report of the 20k campaign < 1 MB.
 8. with --odds: the exact odds (``bench_odds.py``) at least 10x faster than a Monte Carlo
    through the referee on every reference position (10,000 battles each; --quick: 1,000),
    and a 10 v 10 naval battle, destroyers or mixed forces, under 1 s of CPU.
 9. the viewer's board page of the largest campaign, served by a real `tracker serve` on a
    copy of it (``bench_viewer.py``): the first page after the server starts under 1 s.

Commands are timed in this process through click's CliRunner, each with a new Tracker as the
CLI makes (imports are paid once, not per call): the median of --runs calls after a warm-up.

``--only 5`` (or ``--only 1,6``) measures just those targets, building only the campaigns they
need: ``--only 5 --db-dir DIR`` is the quick loop on start-up once the 2k campaign is built.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_projections import campaign_name as name_of  # noqa: E402
from bench_projections import count_events, measure_raw_read, prepare  # noqa: E402
from bench_store import SCENARIO, SCENARIOS, log, measure_interleaved, remove_db  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from eventsourcing.persistence import StoredEvent  # noqa: E402

from projections import board as projection_board  # noqa: E402
from tracker.cli.main import cli  # noqa: E402
from tracker.service.application import Tracker  # noqa: E402

SIZES = (2_000, 20_000, 200_000)
# What any command reading the database must import: SQLAlchemy's ORM and eventsourcing's
# application (the tracker's own modules, the storage adapter and the command are on top).
STORAGE_IMPORT = "import sqlalchemy.orm, eventsourcing.application"
SECTIONS = range(1, 10)


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, ...]] = []

    def add(self, what: str, value: str, reference: str, ratio: float | None, target: str, met: bool | None) -> None:
        shown = "" if ratio is None else f"{ratio:.2f}x"
        self.rows.append((what, value, reference, shown, target, {True: "yes", False: "NO"}.get(met, "-")))

    def render(self) -> str:
        header = ("target", "value", "reference", "ratio", "target", "met")
        widths = [max(len(r[i]) for r in [header, *self.rows]) for i in range(6)]
        line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
        out = [line, "-" * len(line)]
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in self.rows]
        return "\n".join(out)


def run_cli(db: Path, name: str, args: list[str]) -> Any:
    result = CliRunner().invoke(cli, ["--db", str(db), "--campaign", name, *args], catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"{' '.join(args)} failed: {result.output}")
    return result


def timed_cli(db: Path, name: str, args: list[str], runs: int) -> tuple[float, Any]:
    runner = CliRunner()
    argv = ["--db", str(db), "--campaign", name, *args]
    result = run_cli(db, name, args)  # warm-up (and catch-up)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = runner.invoke(cli, argv, catch_exceptions=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def html_against_md(db: Path, name: str, turn: int, rounds: int) -> tuple[float, float, list[float]]:
    """The one-turn report as HTML and as Markdown, timed alternately (warm), so that both see
    the same load: the medians of each, and each round's ratio."""
    md_args, html_args = ["report", "--turn", str(turn)], ["report", "--turn", str(turn), "--format", "html"]
    runner, argv = CliRunner(), ["--db", str(db), "--campaign", name]
    run_cli(db, name, md_args)
    run_cli(db, name, html_args)
    md_times, html_times = [], []
    for _ in range(rounds):
        for args, times in ((md_args, md_times), (html_args, html_times)):
            t0 = time.perf_counter()
            runner.invoke(cli, [*argv, *args], catch_exceptions=False)
            times.append(time.perf_counter() - t0)
    ratios = [h / m for h, m in zip(html_times, md_times, strict=True)]
    return statistics.median(html_times), statistics.median(md_times), ratios


def count_catch_ups(db: Path, name: str, args: list[str]) -> int:
    calls = [0]
    original = projection_board.BoardProjector.catch_up

    def counting(self: Any, *a: Any, **k: Any) -> int:
        calls[0] += 1
        return original(self, *a, **k)

    projection_board.BoardProjector.catch_up = counting  # type: ignore[method-assign]
    try:
        CliRunner().invoke(cli, ["--db", str(db), "--campaign", name, *args], catch_exceptions=False)
    finally:
        projection_board.BoardProjector.catch_up = original  # type: ignore[method-assign]
    return calls[0]


def middle(db: Path, name: str) -> tuple[int, int]:
    """The national turn holding the campaign's middle event, and that event."""
    with Tracker(str(db)) as t:
        cid = t.campaign_id(name)
        version = t.load(cid).version
        with t.views(cid) as v:
            seq = version // 2
            position = v.position(seq)
            return int(position.turn), seq


def db_bytes(db: Path) -> int:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]
        return int(pages * conn.execute("PRAGMA page_size").fetchone()[0])


def peak_rss_mib(argv: list[str]) -> float:
    """The peak resident memory of a command run in a fresh process, in MiB (read by a
    fresh measuring process of its own, so earlier children do not count)."""
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "if done.returncode:\n"
        "    sys.exit(done.stderr.decode(errors='replace') or done.stdout.decode(errors='replace'))\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv[3:])} failed: {proc.stderr.strip()}")
    return int(proc.stdout.strip()) / 1024  # ru_maxrss is in KiB on Linux


def measure_peaks(db: Path, name: str, scratch: Path) -> dict[str, float]:
    """Peak RSS of the whole-log commands on one campaign, each in a fresh process."""
    base = [sys.executable, "-m", "tracker", "--db", str(db), "--campaign", name]
    commands = {
        "report --all (md)": ["report", "--all", "-o", str(scratch / "peak_all.md")],
        "export": ["export", str(scratch / "peak_export.jsonl")],
        "verify": ["verify"],
    }
    return {label: peak_rss_mib([*base, *argv]) for label, argv in commands.items()}


def cpu_of(argv: list[str], runs: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, capture_output=True, check=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(times)


def measure_starts(db: Path, rounds: int) -> dict[str, list[float]]:
    """CPU of fresh processes: `tracker --help` beside `import click`, and a cold `tracker state`
    beside the storage stack's import, the four interleaved in every round (a busy moment of
    the machine weighs on both sides of a ratio alike)."""
    argvs = {
        "help": [sys.executable, "-m", "tracker", "--help"],
        "click": [sys.executable, "-c", "import click"],
        "state": [sys.executable, "-m", "tracker", "--db", str(db), "state"],
        "stack": [sys.executable, "-c", STORAGE_IMPORT],
    }
    # Installed packages run from compiled bytecode (pip writes it; the storage stack has
    # it): let the tracker's own modules have theirs too, written by a first, untimed run.
    for argv in argvs.values():
        cpu_of(argv, 1)
    times: dict[str, list[float]] = {k: [] for k in argvs}
    for _ in range(rounds):
        for key, argv in argvs.items():
            times[key].append(cpu_of(argv, 1))
    return times


def start_rows(table: Table, notes: list[str], times: dict[str, list[float]]) -> None:
    pairs = (
        ("5 tracker --help (CPU)", "help", "click", "import click", 1.5),
        ("5 cold tracker state (CPU)", "state", "stack", "storage import", 1.1),
    )
    for what, side, reference, named, target in pairs:
        ratios = [a / b for a, b in zip(times[side], times[reference], strict=True)]
        ratio = statistics.median(ratios)
        table.add(
            what,
            f"{1000 * statistics.median(times[side]):.0f} ms",
            f"{1000 * statistics.median(times[reference]):.0f} ms {named}",
            ratio,
            f"<= {target}x",
            ratio <= target,
        )
        notes.append(f"{side} round ratios {', '.join(f'{r:.2f}' for r in ratios)}")


def help_imports_storage(args: list[str]) -> list[str]:
    probe = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
        f"sys.argv = ['tracker', *{args!r}]\n"
        "from tracker.cli.main import main\nmain()\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    modules = json.loads(proc.stderr.strip().splitlines()[-1])
    roots = ("sqlalchemy", "eventsourcing.persistence", "eventsourcing.application", "eventsourcing_sqlalchemy")
    roots += ("psycopg",)
    return [m for m in modules if any(m == r or m.startswith(r + ".") for r in roots)]


def measure_import(export_file: Path, scratch: Path, rounds: int) -> dict[str, Any]:
    """`import` of an export: the whole command once (its checks, the write, the snapshot and
    the projections caught up), then its write path alone (`Tracker.record_log`, one
    transaction) on fresh files, each round interleaved with raw sqlite3 inserting the same
    rows in one batch (same DDL, journal mode and synchronous setting); medians."""
    from tracker.interchange import format as export_format

    target_db = scratch / "import.db"
    remove_db(target_db)
    phases: dict[str, float] = {}
    original_append = Tracker.append_log
    original_record = Tracker.record_log

    def timed_append(self: Tracker, *a: Any, **k: Any) -> None:
        t0 = time.perf_counter()
        original_append(self, *a, **k)
        phases["append"] = time.perf_counter() - t0

    def timed_record(self: Tracker, *a: Any, **k: Any) -> None:
        t0 = time.perf_counter()
        original_record(self, *a, **k)
        phases["write"] = time.perf_counter() - t0

    Tracker.append_log = timed_append  # type: ignore[method-assign]
    Tracker.record_log = timed_record  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        result = CliRunner().invoke(cli, ["--db", str(target_db), "import", str(export_file)], catch_exceptions=False)
        import_s = time.perf_counter() - t0
    finally:
        Tracker.append_log = original_append  # type: ignore[method-assign]
        Tracker.record_log = original_record  # type: ignore[method-assign]
    if result.exit_code != 0:
        raise SystemExit(f"import failed: {result.output}")
    with closing(sqlite3.connect(target_db)) as conn:
        ddl = [
            r[0]
            for r in conn.execute(
                "SELECT sql FROM sqlite_master WHERE tbl_name = 'tracker_events' AND sql IS NOT NULL ORDER BY type DESC"
            )
        ]
        journal_mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    with Tracker(str(target_db)) as t:
        synchronous = int(t.engine.connect().exec_driver_sql("PRAGMA synchronous").scalar())
    with open(export_file, "rb") as f:
        parsed = export_format.parse_export(f, str(export_file))
        rows = parsed.read_all()
    write_rates, raw_rates, ratios = [], [], []
    for i in range(rounds):
        db = scratch / f"write_{i}.db"
        remove_db(db)
        with Tracker(str(db)) as t:
            cid = uuid.uuid4()
            stored = [
                StoredEvent(originator_id=cid, originator_version=r.seq, topic=r.topic, state=r.state.encode("utf-8"))
                for r in rows
            ]
            t0 = time.perf_counter()
            t.record_log(cid, f"write-{i}", stored, False)
            write_rates.append(len(stored) / (time.perf_counter() - t0))
        remove_db(db)
        raw_db = scratch / "raw_batch.db"
        remove_db(raw_db)
        conn = sqlite3.connect(raw_db, isolation_level=None)
        try:
            conn.execute(f"PRAGMA journal_mode={journal_mode}")
            conn.execute(f"PRAGMA synchronous={synchronous}")
            for statement in ddl:
                conn.execute(statement)
            values = [(s.originator_id.bytes, s.originator_version, s.topic, s.state) for s in stored]
            t0 = time.perf_counter()
            conn.execute("BEGIN")
            conn.executemany(
                "INSERT INTO tracker_events (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)",
                values,
            )
            conn.execute("COMMIT")
            raw_rates.append(len(values) / (time.perf_counter() - t0))
        finally:
            conn.close()
        remove_db(raw_db)
        ratios.append(write_rates[-1] / raw_rates[-1])
    events = len(rows)
    return {
        "events": events,
        "import_s": import_s,
        "import_rate": events / import_s,
        "write_s": phases["write"],
        "after_s": phases["append"] - phases["write"],
        "check_s": import_s - phases["append"],
        "write_rate": statistics.median(write_rates),
        "raw_rate": statistics.median(raw_rates),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
    }


def measure_rebuild(db: Path, rounds: int) -> dict[str, Any]:
    """`projections rebuild` against raw sqlite3 reading and decoding the same rows: each round
    a raw read, the rebuild and a raw read again (the reference is their mean, so a busy moment
    of the machine weighs on both sides), in wall-clock and CPU time; medians of the rounds."""
    rates, raw_rates, ratios, cpu_ratios = [], [], [], []
    for _ in range(rounds):
        before = measure_raw_read(db, 1)
        with Tracker(str(db)) as t:
            projector = t.projector
            t0, c0 = time.perf_counter(), time.process_time()
            done = projector.rebuild()
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        after = measure_raw_read(db, 1)
        rates.append(done / seconds)
        raw_rates.append((before["rows_per_s"] + after["rows_per_s"]) / 2)
        ratios.append(rates[-1] / raw_rates[-1])
        cpu_ratios.append((before["cpu_s"] + after["cpu_s"]) / 2 / cpu * done / before["rows"])
    return {
        "rate": statistics.median(rates),
        "raw_rate": statistics.median(raw_rates),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
        "cpu_ratio": statistics.median(cpu_ratios),
    }


def sections_of(text: str) -> set[int]:
    """`--only 5` or `--only 1,6`: target numbers of the list in this module's docstring."""
    try:
        chosen = {int(part) for part in text.split(",") if part.strip()}
    except ValueError:
        chosen = set()
    if not chosen or not chosen <= set(SECTIONS):
        raise argparse.ArgumentTypeError(f"targets are numbers from 1 to {SECTIONS[-1]}, comma-separated: {text!r}")
    return chosen


def db_file(db_dir: Path, scenario: str, n: int) -> Path:
    """The kept campaign of n events on a scenario (north-sea-1914's under its first name)."""
    return db_dir / (f"bench_projections_{n}.db" if scenario == SCENARIO else f"bench_{scenario}_{n}.db")


def measure(
    scenario: str,
    args: argparse.Namespace,
    sizes: tuple[int, ...],
    needed: set[int],
    db_dir: Path,
    scratch: Path,
    table: Table,
    notes: list[str],
) -> None:
    """Every chosen target on the campaigns of one scenario, as rows of `table`."""
    only: set[int] = args.only
    small, large = sizes[0], sizes[-1]
    lin = sizes[-2:]
    mid = lin[1]
    scratch.mkdir(parents=True, exist_ok=True)

    def campaign_name(n: int) -> str:
        return name_of(n, scenario)

    dbs: dict[int, Path] = {}
    for n in sizes:
        dbs[n] = db_file(db_dir, scenario, n)
        if n not in needed:
            continue
        prepare(dbs[n], n, 10, scenario)
        with Tracker(str(dbs[n])) as t:
            log(f"{scenario}: catching up the projections of {n:,} events ...")
            t.catch_up()

    # 1. turn-level reads
    turn_costs: dict[str, dict[int, float]] = {}
    html_bytes: dict[int, int] = {}
    for n in sizes if 1 in only else ():
        name = campaign_name(n)
        turn, seq = middle(dbs[n], name)
        commands = {
            "report --turn N (md)": ["report", "--turn", str(turn)],
            "report --turn N (html)": ["report", "--turn", str(turn), "--format", "html"],
            "state --turn N": ["state", "--turn", str(turn), "--json"],
            "explain SEQ": ["explain", str(seq)],
            "log --turn N": ["log", "--turn", str(turn)],
        }
        for label, argv in commands.items():
            log(f"{n:,}: {label} ...")
            seconds, result = timed_cli(dbs[n], name, argv, args.runs)
            turn_costs.setdefault(label, {})[n] = seconds
            if label.endswith("(html)"):
                html_bytes[n] = len(result.output.encode("utf-8"))
    for label, costs in turn_costs.items():
        ratio = costs[large] / costs[small]
        table.add(
            f"1 {label}",
            f"{1000 * costs[large]:.0f} ms @{large // 1000}k",
            f"{1000 * costs[small]:.0f} ms @{small // 1000}k",
            ratio,
            "<= 2x",
            ratio <= 2,
        )
    if 1 in only:
        name = campaign_name(large)
        turn, _ = middle(dbs[large], name)
        catch_ups = count_catch_ups(dbs[large], name, ["report", "--turn", str(turn), "--format", "html"])
        table.add("1 catch-ups per report --turn", str(catch_ups), "", None, "1", catch_ups == 1)
    if 1 in only:
        # Alternately, round by round: two medians taken minutes apart moved with the load.
        page, md, pairs = html_against_md(
            dbs[large], campaign_name(large), middle(dbs[large], campaign_name(large))[0], args.rounds
        )
        ratio = statistics.median(pairs)
        table.add(
            "1 report --turn N, html vs md",
            f"{1000 * page:.0f} ms @{large // 1000}k",
            f"{1000 * md:.0f} ms (md)",
            ratio,
            "<= 1.3x",
            ratio <= 1.3,
        )
        notes.append(
            f"html vs md: {args.rounds} alternating rounds; round ratios {', '.join(f'{r:.2f}' for r in pairs)}"
        )

    # 2. whole-log commands
    whole: dict[str, dict[int, float]] = {}
    for n in lin if 2 in only else ():
        name = campaign_name(n)
        out = scratch / f"export_{n}.jsonl"
        commands = {
            "report --all (md)": ["report", "--all", "-o", str(scratch / f"all_{n}.md")],
            "export": ["export", str(out)],
            "verify": ["verify"],
            "stats --csv": ["stats", "--csv", "-o", str(scratch / f"stats_{n}.csv")],
        }
        for label, argv in commands.items():
            log(f"{n:,}: {label} ...")
            runs = 1 if n >= 200_000 else max(1, args.runs - 1)
            whole.setdefault(label, {})[n] = timed_cli(dbs[n], name, argv, runs)[0]
    for label, costs in whole.items():
        ratio = costs[lin[1]] / costs[lin[0]]
        table.add(
            f"2 {label}",
            f"{costs[lin[1]]:.2f} s @{lin[1] // 1000}k",
            f"{costs[lin[0]]:.2f} s @{lin[0] // 1000}k",
            ratio,
            "<= 12x",
            ratio <= 12,
        )
    peaks: dict[str, dict[int, float]] = {}
    for n in sizes if 2 in only else ():
        log(f"{n:,}: peak memory of report --all, export, verify (fresh processes) ...")
        for label, mib in measure_peaks(dbs[n], campaign_name(n), scratch).items():
            peaks.setdefault(label, {})[n] = mib
    for label, by_size in peaks.items():
        for n, mib in by_size.items():
            table.add(
                f"2 {label} peak RSS @{n // 1000}k",
                f"{mib:.0f} MiB",
                f"{by_size[small]:.0f} MiB @{small // 1000}k",
                mib / by_size[small],
                "<= 150 MiB",
                mib <= 150,
            )

    # 3. recording and import
    if 3 in only:
        log(f"recording {args.actions:,} actions one by one, interleaved with raw sqlite3 ...")
        rec = measure_interleaved(scratch, args.actions, args.rounds, scenario=scenario)
        table.add(
            "3 one action, one transaction",
            f"{rec['actions_per_s']:,.0f} act/s",
            f"{rec['raw_rows_per_s']:,.0f} raw rows/s",
            rec["ratio"],
            ">= 0.5x",
            rec["ratio"] >= 0.5,
        )
        notes.append(
            f"recording: median of {rec['rounds']} interleaved rounds ({rec['actions']} actions, "
            f"journal {rec['journal_mode']}, synchronous {rec['synchronous']} on both sides); round ratios "
            + ", ".join(f"{r:.2f}" for r in rec["ratios"])
        )
        export_file = scratch / f"export_{mid}.jsonl"
        if not export_file.exists():  # made by target 2 when it runs
            run_cli(dbs[mid], campaign_name(mid), ["export", str(export_file)])
        imp = measure_import(export_file, scratch, 3)
        table.add(
            f"3 import write path ({mid // 1000}k events)",
            f"{imp['write_rate']:,.0f} ev/s",
            f"{imp['raw_rate']:,.0f} raw rows/s batched",
            imp["ratio"],
            ">= 0.5x",
            imp["ratio"] >= 0.5,
        )
        whole_ratio = imp["import_rate"] / imp["raw_rate"]
        table.add(
            f"3 import, whole ({mid // 1000}k, checked)",
            f"{imp['import_rate']:,.0f} ev/s",
            f"{imp['raw_rate']:,.0f} raw rows/s batched",
            whole_ratio,
            ">= 0.2x",
            whole_ratio >= 0.2,
        )
        notes.append(
            f"import of {imp['events']:,} events: {imp['import_s']:.2f} s in all = checks {imp['check_s']:.2f} s "
            f"+ write {imp['write_s']:.3f} s + snapshot and projections caught up {imp['after_s']:.2f} s; "
            f"write-path round ratios {', '.join(f'{r:.2f}' for r in imp['ratios'])}"
        )

    # 4. rebuild
    if 4 in only:
        log(f"rebuilding the projections of {large:,} events, interleaved with raw reads ...")
        reb = measure_rebuild(dbs[large], 3 if large >= 200_000 else 5)
        table.add(
            f"4 projection rebuild @{large // 1000}k",
            f"{reb['rate']:,.0f} ev/s",
            f"{reb['raw_rate']:,.0f} raw rows/s",
            reb["ratio"],
            ">= 0.3x",
            reb["ratio"] >= 0.3,
        )
        notes.append(
            f"rebuild: median of {len(reb['ratios'])} rounds, each a rebuild between two raw reads; round ratios "
            + ", ".join(f"{r:.3f}" for r in reb["ratios"])
            + f"; in CPU time {reb['cpu_ratio']:.3f}x"
        )

    # 5. start-up
    if 5 in only:
        log("start-up: --help and cold state, interleaved ...")
        start_rows(table, notes, measure_starts(dbs[small], args.rounds))
        for flag in ("--help", "--version"):
            found = help_imports_storage([flag])
            table.add(f"5 tracker {flag} storage modules", str(len(found)), "", None, "0", not found)

    # 6. size
    for n in sizes if 6 in only else ():
        per_event = db_bytes(dbs[n]) / count_events(dbs[n])
        table.add(f"6 bytes per event @{n // 1000}k", f"{per_event:.0f} B", "", None, "<= 700 B", per_event <= 700)

    # 7. report size
    if 7 in only and 20_000 in sizes and 20_000 not in html_bytes:
        name = campaign_name(20_000)
        turn, _ = middle(dbs[20_000], name)
        result = run_cli(dbs[20_000], name, ["report", "--turn", str(turn), "--format", "html"])
        html_bytes[20_000] = len(result.output.encode("utf-8"))
    if 7 in only and 20_000 in html_bytes:
        b = html_bytes[20_000]
        table.add("7 one-turn HTML @20k", f"{b / 1e6:.2f} MB", "", None, "< 1 MB", b < 1e6)
    if html_bytes:
        notes.append(
            f"html bytes by size: {', '.join(f'{n // 1000}k {b / 1e3:.0f} kB' for n, b in html_bytes.items())}"
        )

    # 8. exact odds
    if args.odds and 8 in only and scenario == (args.scenario or SCENARIOS)[0]:  # no campaign: measured once
        import bench_odds

        runs = 1_000 if args.quick else 10_000
        log(f"exact odds against {runs:,} battles through the referee a position ...")
        for row in bench_odds.table_rows(bench_odds.measure(runs)):
            table.add(f"8 {row[0]}", *row[1:])

    # 9. the viewer's board page
    if 9 in only:
        import bench_viewer

        log(f"{large:,}: the viewer's board page, served ...")
        page = bench_viewer.measure(dbs[large], campaign_name(large), scratch, args.runs)
        table.add(
            f"9 viewer board page @{large // 1000}k, first",
            f"{page['first_s'] * 1000:.0f} ms",
            "",
            None,
            "< 1 s",
            page["first_s"] < 1,
        )
        notes.append(
            f"viewer board page: {page['bytes'] / 1e3:.0f} kB; then the median of {page['runs']}: now "
            f"{page['now_s'] * 1000:.0f} ms, turn {page['turn']} {page['then_s'] * 1000:.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2k and 20k campaigns only (under two minutes once built)")
    parser.add_argument("--db-dir", help="folder for the campaigns (kept and reused); default: a temporary folder")
    parser.add_argument("--runs", type=int, default=3, help="timed calls per command (median; default 3)")
    parser.add_argument("--actions", type=int, default=1400, help="recorded actions timed one by one (default 1400)")
    parser.add_argument(
        "--rounds", type=int, default=7, help="interleaved rounds of recording and raw, and of start-ups (default 7)"
    )
    parser.add_argument("--odds", action="store_true", help="also target 8, the exact odds (bench_odds.py)")
    parser.add_argument(
        "--only",
        type=sections_of,
        default=set(SECTIONS),
        metavar="N[,N...]",
        help="measure only these targets (numbers as in the list above; 8 also needs --odds)",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=SCENARIOS,
        help="build the campaigns on this scenario (repeatable; default: each shipped scenario, a table each)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    sizes = SIZES[:2] if args.quick else SIZES
    only: set[int] = args.only
    small, large = sizes[0], sizes[-1]
    lin = sizes[-2:]
    # The campaigns the chosen targets read.
    needed: set[int] = set()
    if only & {1, 6}:
        needed.update(sizes)
    if 2 in only:
        needed.update(sizes)
    if only & {2, 3}:
        needed.update(lin)
    if only & {4, 9}:
        needed.add(large)
    if 5 in only:
        needed.add(small)
    if 7 in only and 20_000 in sizes:
        needed.add(20_000)
    db_dir = Path(args.db_dir).resolve() if args.db_dir else Path(tempfile.mkdtemp(prefix="tracker_bench_"))
    db_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tracker_bench_scratch_"))
    tables: list[tuple[str, Table, list[str]]] = []
    try:
        for scenario in args.scenario or SCENARIOS:
            table = Table()
            notes: list[str] = []
            measure(scenario, args, sizes, needed, db_dir, scratch / scenario, table, notes)
            tables.append((scenario, table, notes))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if not args.db_dir:
            shutil.rmtree(db_dir, ignore_errors=True)
    print(f"tracker benchmark: Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs")
    chosen = "" if only == set(SECTIONS) else f"; targets {', '.join(map(str, sorted(only)))} only"
    print(f"sizes {', '.join(f'{n:,}' for n in sizes)} events{chosen}; runtime {time.perf_counter() - started:.0f} s")
    for scenario, table, notes in tables:
        print()
        print(f"campaigns on {scenario}")
        print(table.render())
        for note in notes:
            print(note)


if __name__ == "__main__":
    main()
