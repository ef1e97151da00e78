"""Benchmark of the board projections: answering `state --turn T` from the read models versus
replaying the log, and the throughput of building the projections.

Run as ``python bench/bench_projections.py [--events N] [--db-dir DIR] [--json]`` (default N = 200000).
It only measures and prints; nothing is asserted. Progress goes to stderr.

The subject is one synthetic north-sea-1914 campaign of about N events, recorded through the
application with the script of ``bench/bench_store.py`` (every phase advanced, a unit moved out
and back in each nation's movement phases, occasional research and NTR placement), ``--batch``
actions per save, snapshots every 200 events as in normal use. Building 200k events takes about
four minutes; with ``--db-dir`` the database (``bench_projections_<N>.db``) is kept and reused on
the next run when it already holds that campaign (an interrupted build is resumed). Only the
event log is reused: the projection tables are dropped and rebuilt on every run.

(a) Time to answer ``state --turn T`` for the national turn T containing the campaign's middle
    event, with the projections caught up: ``Tracker.board_at(cid, turn=T)`` (its ``catch_up``
    is then a no-op query), split into its parts, and the CLI path (``tracker --db DB state
    --turn T --json`` through ``click.testing.CliRunner`` in this process, and as a fresh
    process). Next to it: replaying the log without snapshots, i.e. selecting every stored event
    of the campaign from event 1 to the last event of turn T (``recorder.select_events``),
    decoding each (``Tracker.decode``) and applying it (``event.mutate``). The replayed board is
    compared with the projected one. Target: projections >= 50x faster than the replay.

(b) ``Tracker.projector.rebuild()`` over the whole log from empty views (events/s), next to
    stdlib ``sqlite3`` selecting the same rows of ``tracker_events`` and ``json.loads`` of each
    state (rows/s). Target: rebuild >= 0.3x the raw rate. Also: the rebuild rate along the log,
    the cost of clearing full views (the first step of ``tracker projections rebuild`` on a
    used database), the incremental ``catch_up()`` after ~2,000 more actions recorded through
    ``Tracker.execute`` (done on a scratch copy of the database, so the kept log stays at N
    events), and a cProfile of a rebuild of the first ``--profile-events`` events.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import zlib
from contextlib import closing
from pathlib import Path
from typing import Any
from uuid import UUID

from bench_store import SCENARIO, Script, build_batched, check_scenario, log, remove_db
from click.testing import CliRunner
from sqlalchemy import delete, func, select

from domain.errors import InputError
from projections import board as projection_board
from projections import schema as projection_schema
from projections import views as projection_views
from projections.board import BoardProjector
from projections.schema import VIEWS, tracking
from projections.views import seq_at_end_of
from tracker.reports.views import board_now
from tracker.service.application import SNAPSHOT_INTERVAL, Tracker

RAW_SQL = "SELECT id, originator_id, originator_version, topic, state FROM tracker_events ORDER BY id"
BOARD_KEYS = ("seq", "turn", "round", "nation", "phase", "units", "ntr", "balances", "ntr_lost", "tech")


def campaign_name(n: int, scenario: str = SCENARIO) -> str:
    return f"bench-projections-{n}" if scenario == SCENARIO else f"bench-{scenario}-{n}"


def count_events(db: Path) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT count(*) FROM tracker_events").fetchone()[0])


# ----- the campaign: build, resume or reuse -----


def prepare(db: Path, n: int, batch: int, scenario: str = SCENARIO) -> dict[str, Any]:
    """A database holding exactly one campaign of at least n events on `scenario`, reused when
    possible."""
    name = campaign_name(n, scenario)
    script = Script()
    status = "built"
    if db.exists():
        try:
            with Tracker(str(db)) as t:
                cid = t.campaign_id(name)
                c = t.load(cid)
                if count_events(db) != c.version:
                    raise InputError("the database holds other events too")
                if c.version >= n:
                    log(f"reusing {db}: campaign {name} has {c.version:,} events")
                    return {"cid": cid, "status": "reused", "events": c.version, "build_seconds": None}
                log(f"resuming the build of {name} at {c.version:,} events")
                seconds = build_batched(t, c, n, batch, script, "campaign")
                return {"cid": cid, "status": "resumed", "events": c.version, "build_seconds": seconds}
        except Exception as e:  # noqa: BLE001 - anything unusable is simply built again
            log(f"cannot reuse {db} ({type(e).__name__}: {e}); building it again")
            remove_db(db)
    log(f"building campaign {name} of {n:,} events in {db} ({batch} actions per save) ...")
    with Tracker(str(db)) as t:
        cid = t.create(name, scenario, dice="auto").id
        check_scenario(t, cid)
        c = t.load(cid)
        seconds = build_batched(t, c, n, batch, script, "campaign")
        return {"cid": cid, "status": status, "events": c.version, "build_seconds": seconds}


def drop_projections(db: Path) -> None:
    """Drop the projection tables (also copes with a schema changed since the last run)."""
    with Tracker(str(db)) as t:
        projection_schema.metadata.drop_all(t.engine)


# ----- (b) rebuild and raw read -----


def measure_rebuild(t: Tracker, total: int) -> dict[str, Any]:
    marks: list[tuple[float, int]] = []
    done = 0
    next_report = time.perf_counter() + 15

    def progress(count: int) -> None:
        nonlocal done, next_report
        done += count
        now = time.perf_counter()
        marks.append((now, done))
        if now >= next_report:
            log(f"  rebuild: {done:,}/{total:,} events ({done / (now - started):,.0f} events/s)")
            next_report = now + 15

    projector = t.projector  # created (tables checked) before the clock starts
    started = time.perf_counter()
    marks.append((started, 0))
    projected = projector.rebuild(progress)
    seconds = time.perf_counter() - started
    # Throughput along the log, by tenth (batch boundaries nearest to each tenth).
    tenths = []
    for i in range(10):
        lo, hi = total * i // 10, total * (i + 1) // 10
        a = min(marks, key=lambda m: abs(m[1] - lo))
        b = min(marks, key=lambda m: abs(m[1] - hi))
        if b[1] > a[1]:
            tenths.append((b[1] - a[1]) / (b[0] - a[0]))
    return {"events": projected, "seconds": seconds, "events_per_s": projected / seconds, "by_tenth": tenths}


def raw_json(state: bytes) -> bytes:
    """A stored state's JSON, as any reader of the events table must read it: the rare state
    stored compressed (a campaign's first event, see `tracker.storage.mapper`) inflated."""
    return zlib.decompress(state[5:]) if state.startswith(b"zlib:") else state


def measure_raw_read(db: Path, runs: int) -> dict[str, Any]:
    rates, cpus, rows = [], [], 0
    for _ in range(runs):
        with closing(sqlite3.connect(db)) as conn:
            started, cpu = time.perf_counter(), time.process_time()
            rows = 0
            for _id, _oid, _version, _topic, state in conn.execute(RAW_SQL):
                json.loads(raw_json(state))
                rows += 1
            rates.append(rows / (time.perf_counter() - started))
            cpus.append(time.process_time() - cpu)
    return {
        "rows": rows,
        "runs": runs,
        "rows_per_s": statistics.median(rates),
        "rates": rates,
        "cpu_s": statistics.median(cpus),
    }


def view_rows(t: Tracker) -> dict[str, int]:
    with t.engine.connect() as conn:
        return {table.name: int(conn.execute(select(func.count()).select_from(table)).scalar_one()) for table in VIEWS}


def measure_stages(t: Tracker, db: Path, cap: int) -> dict[str, Any]:
    """The rebuild's reading and decoding steps alone, unprofiled, over the first `cap` events:
    cumulative stages, so each line is a ceiling for the rebuild rate."""
    recorder, decode = t.app.recorder, t.app.mapper.to_domain_event
    rows_of = getattr(projection_board, "_rows_of", None)
    t0 = time.perf_counter()
    notifications: list[Any] = []
    start = 1
    while True:
        page = [n for n in recorder.select_notifications(start, projection_board.BATCH) if n.id <= cap]
        if not page:
            break
        notifications.extend(page)
        start = page[-1].id + 1
    read = time.perf_counter() - t0

    def run(mutate: bool, rows: bool) -> float:
        agg: Any = None
        t0 = time.perf_counter()
        for n in notifications:
            event = decode(n)
            if mutate:
                agg = event.mutate(agg)
                if rows and rows_of is not None:
                    rows_of(agg)
        return time.perf_counter() - t0

    decode_s, mutate_s = run(False, False), run(True, False)
    rows_s = run(True, True) if rows_of is not None else None
    with closing(sqlite3.connect(db)) as conn:
        t0 = time.perf_counter()
        for row in conn.execute(RAW_SQL.replace("ORDER BY", "WHERE id <= ? ORDER BY"), (cap,)):
            json.loads(raw_json(row[4]))
        raw = time.perf_counter() - t0
    count = len(notifications)
    us = 1e6 / count
    return {
        "events": count,
        "us_per_event": {
            "raw sqlite3 SELECT + json.loads": raw * us,
            "recorder.select_notifications (pages of BATCH)": read * us,
            "+ mapper.to_domain_event": (read + decode_s) * us,
            "+ event.mutate": (read + mutate_s) * us,
            "+ _rows_of(agg) (the whole board, every event)": None if rows_s is None else (read + rows_s) * us,
        },
    }


def measure_board_growth(t: Tracker, cid: UUID, version: int, repeats: int) -> dict[str, float]:
    """projections.views.board_at after events at several points of the log (best of `repeats`)."""
    out = {}
    with t.engine.connect() as conn:
        for fraction in (0.01, 0.1, 0.5, 0.9, 1.0):
            seq = max(1, int(version * fraction))
            times, _ = timed(lambda seq=seq: projection_views.board_at(conn, cid, seq), repeats)
            out[str(seq)] = 1000 * min(times)
    return out


# ----- (a) state --turn T -----


def timed(fn: Any, repeats: int) -> tuple[list[float], Any]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def ms(times: list[float]) -> dict[str, float]:
    return {
        "median": 1000 * statistics.median(times),
        "min": 1000 * min(times),
        "max": 1000 * max(times),
        "n": len(times),
    }


def measure_state(t: Tracker, db: Path, cid: UUID, name: str, version: int, args: argparse.Namespace) -> dict[str, Any]:
    with t.engine.connect() as conn:
        middle = max(1, version // 2)
        position = projection_views.Views(conn, cid).position(middle)
        assert position is not None
        turn = int(position.turn)
        seq = seq_at_end_of(conn, cid, turn, None)
    assert seq is not None

    # Tracker.board_at, as `state --turn T` calls it, and its parts.
    t.board_at(cid, turn=turn)  # warm-up
    board_times, projected = timed(lambda: t.board_at(cid, turn=turn), args.repeats)
    catch_up_times, _ = timed(lambda: t.catch_up(cid), args.repeats)

    def seq_query() -> int | None:
        with t.engine.connect() as conn:
            return seq_at_end_of(conn, cid, turn, None)

    def board_query() -> dict[str, Any]:
        with t.engine.connect() as conn:
            return projection_views.board_at(conn, cid, seq)

    seq_times, _ = timed(seq_query, args.repeats)
    query_times, _ = timed(board_query, args.repeats)

    # The CLI, in this process (a new Tracker per call, as the CLI makes) and as a fresh process.
    from tracker.cli.main import cli

    argv = ["--db", str(db), "--campaign", name, "state", "--turn", str(turn), "--json"]
    runner = CliRunner()
    cli_times: list[float] = []
    cli_board: dict[str, Any] | None = None
    cli_error = None
    for _ in range(args.cli_runs):
        t0 = time.perf_counter()
        result = runner.invoke(cli, argv, catch_exceptions=True)
        cli_times.append(time.perf_counter() - t0)
        if result.exit_code != 0:
            cli_error = f"exit {result.exit_code}: {result.output.strip()[:300]} {result.exception!r}"
            break
        cli_board = json.loads(result.output)
    process_times: list[float] = []
    for _ in range(args.process_runs):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", "from tracker.cli.main import main; main()", *argv], capture_output=True, text=True
        )
        process_times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            cli_error = f"process exit {proc.returncode}: {proc.stderr.strip()[:300]}"
            break

    # Replaying the log up to the last event of turn T, no snapshots.
    replay_runs = []
    replayed = None
    for _ in range(args.replay_runs):
        t0 = time.perf_counter()
        stored = t.app.recorder.select_events(cid, lte=seq)
        t1 = time.perf_counter()
        agg: Any = None
        for s in stored:
            agg = t.decode(s).mutate(agg)
        t2 = time.perf_counter()
        replay_runs.append((t2 - t0, t1 - t0, t2 - t1, len(stored)))
        replayed = agg
        del stored
    replay = min(replay_runs)
    replayed_board = board_now(replayed)
    differs = [k for k in BOARD_KEYS if replayed_board[k] != projected[k]]
    cli_differs = None
    if cli_board is not None:
        cli_differs = [k for k in BOARD_KEYS if cli_board.get(k) != json.loads(json.dumps(projected[k]))]

    # For reference: the application's own load at that version (latest snapshot + the rest).
    snapshot_times, _ = timed(lambda: t.load(cid, version=seq), args.repeats)

    board_median = statistics.median(board_times)
    return {
        "turn": turn,
        "middle_event": middle,
        "seq": seq,
        "board_at_ms": ms(board_times),
        "parts_ms": {
            "catch_up (no-op)": ms(catch_up_times),
            "seq_at_end_of": ms(seq_times),
            "projections.views.board_at": ms(query_times),
        },
        "units": len(projected["units"]),
        "cli_runner_ms": ms(cli_times) if cli_times else None,
        "process_ms": ms(process_times) if process_times else None,
        "cli_error": cli_error,
        "cli_differs": cli_differs,
        "replay": {
            "events": replay[3],
            "seconds": replay[0],
            "select_seconds": replay[1],
            "decode_mutate_seconds": replay[2],
            "events_per_s": replay[3] / replay[0],
            "runs_seconds": [r[0] for r in replay_runs],
        },
        "replay_differs": differs,
        "snapshot_load_ms": ms(snapshot_times),
        "ratio_replay_per_board_at": replay[0] / board_median,
        "ratio_replay_per_cli_runner": replay[0] / statistics.median(cli_times)
        if cli_times and not cli_error
        else None,
    }


# ----- (b) incremental catch-up and profile, on a scratch copy -----


def copy_db(src: Path, dst: Path) -> None:
    remove_db(dst)
    with closing(sqlite3.connect(src)) as a, closing(sqlite3.connect(dst)) as b:
        a.backup(b)


def catch_up_timed(t: Tracker) -> tuple[float, int]:
    t0 = time.perf_counter()
    done = t.projector.catch_up()
    return time.perf_counter() - t0, done


def measure_incremental(scratch: Path, name: str, actions: int, profile_events: int, top: int) -> dict[str, Any]:
    script = Script()
    out: dict[str, Any] = {"actions": actions}
    with Tracker(str(scratch)) as t:
        cid = t.campaign_id(name)
        t.execute(cid, script)
        t.projector.catch_up()  # the projector now follows the campaign in memory
        started = time.perf_counter()
        for _ in range(actions):
            t.execute(cid, script)
        out["execute_seconds"] = time.perf_counter() - started
        seconds, done = catch_up_timed(t)
        out["same_process"] = {"events": done, "seconds": seconds, "events_per_s": done / seconds}
        noop_times, _ = timed(t.projector.catch_up, 20)
        out["noop_ms"] = ms(noop_times)
        for _ in range(actions):
            t.execute(cid, script)
    with Tracker(str(scratch)) as t:
        seconds, done = catch_up_timed(t)
        out["fresh_tracker"] = {"events": done, "seconds": seconds, "events_per_s": done / seconds}
        rows = view_rows(t)
        with t.engine.begin() as conn:
            t0 = time.perf_counter()
            for table in VIEWS:
                conn.execute(delete(table))
            conn.execute(delete(tracking))
        out["clear_views"] = {"seconds": time.perf_counter() - t0, "rows": sum(rows.values()), "by_table": rows}

        def capped(start: int, limit: int) -> list[Any]:
            if start > profile_events:
                return []
            page = t.app.recorder.select_notifications(start, limit)
            return [n for n in page if n.id <= profile_events]

        projector = BoardProjector(t.engine, capped, t.app.mapper.to_domain_event, lambda c, v: t.load(c, version=v))
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        profiler.enable()
        done = projector.rebuild()
        profiler.disable()
        seconds = time.perf_counter() - t0
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
        out["profile"] = {"events": done, "seconds": seconds, "text": text.getvalue()}
    return out


# ----- output -----


def source_stamps() -> dict[str, float]:
    import domain
    import projections
    import tracker

    stamps = {}
    for package in (domain, projections, tracker):
        for path in Path(package.__file__).parent.rglob("*.py"):
            stamps[str(path)] = path.stat().st_mtime
    return stamps


def fmt_ms(m: dict[str, float] | None) -> str:
    if m is None:
        return "n/a"
    return f"{m['median']:8.2f} ms  (min {m['min']:.2f}, max {m['max']:.2f}, n={m['n']})"


def report(r: dict[str, Any]) -> str:
    lines: list[str] = []
    add = lines.append

    def note(label: str, text: str) -> None:
        lines.extend(textwrap.wrap(text, 110, initial_indent=f"  {label:5} ", subsequent_indent=" " * 8))

    c, a, b, raw, inc = r["campaign"], r["state"], r["rebuild"], r["raw"], r["incremental"]
    add(f"bench_projections: Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs")
    add(f"database {r['db']}; total runtime {r['runtime_s']:.0f} s")
    if r["source_files_changed_during_run"]:
        add("WARNING: application sources changed during the run, figures may mix versions:")
        lines.extend(f"  {path}" for path in r["source_files_changed_during_run"])
    build = f" in {c['build_seconds']:.0f} s" if c["build_seconds"] else ""
    add(
        f"campaign {r['name']}: {c['events']:,} events ({c['status']}{build}); log of the database: {r['log']:,} events"
    )
    add("")
    add(
        f"(a) state --turn {a['turn']} (the national turn of event {a['middle_event']:,};"
        f" it ends at event {a['seq']:,})"
    )
    add(f"  {'Tracker.board_at(cid, turn=T), caught up':46} {fmt_ms(a['board_at_ms'])}")
    for part, m in a["parts_ms"].items():
        add(f"  {'  of which ' + part:46} {fmt_ms(m)}")
    add(f"  {'CLI via CliRunner (new Tracker per call)':46} {fmt_ms(a['cli_runner_ms'])}")
    add(f"  {'CLI as a fresh python process':46} {fmt_ms(a['process_ms'])}")
    rp = a["replay"]
    label = f"replay without snapshots, events 1..{a['seq']:,}"
    add(
        f"  {label:46} {1000 * rp['seconds']:8.0f} ms  ({rp['events']:,} events, {rp['events_per_s']:,.0f} events/s;"
        f" select {rp['select_seconds']:.2f} s + decode/mutate {rp['decode_mutate_seconds']:.2f} s; best of"
        f" {len(rp['runs_seconds'])})"
    )
    add(f"  {'(reference: Tracker.load(cid, version=seq))':46} {fmt_ms(a['snapshot_load_ms'])}")
    ratio = a["ratio_replay_per_board_at"]
    add(f"  ratio replay : board_at = {ratio:,.0f}x   (target >= 50x: {'met' if ratio >= 50 else 'NOT met'})")
    if a["ratio_replay_per_cli_runner"] is not None:
        add(f"  ratio replay : CLI (CliRunner) = {a['ratio_replay_per_cli_runner']:,.1f}x")
    growth = ", ".join(f"{int(k):,}: {v:.2f}" for k, v in a["board_at_by_seq_ms"].items())
    add(f"  projections.views.board_at alone, after event (ms, best of 10): {growth}")
    same = "identical" if not a["replay_differs"] else "DIFFER in " + ", ".join(a["replay_differs"])
    add(f"  replayed board vs projected board ({a['units']} units): {same}")
    if a["cli_differs"] is not None:
        same = "identical" if not a["cli_differs"] else "DIFFER in " + ", ".join(a["cli_differs"])
        add(f"  CLI JSON vs Tracker.board_at: {same}")
    if a["cli_error"]:
        add(f"  CLI FAILED: {a['cli_error']}")
    note(
        "how:",
        f"medians of {r['repeats']} calls after one warm-up call, OS page cache warm, projections caught up. The"
        " CLI figures include opening the database and Tracker.load of the current state (the `state` command"
        " loads it for the campaign name); the fresh process also pays imports. The replay selects the stored"
        " events with the recorder, then decodes (Tracker.decode) and applies (event.mutate) each one.",
    )
    add("")
    add("(b) projection rebuild versus raw read of the log")
    add(
        f"  {'Tracker.projector.rebuild(), empty views':46} {b['events_per_s']:10,.0f} events/s"
        f"  ({b['events']:,} events in {b['seconds']:.1f} s)"
    )
    add(
        f"  {'raw sqlite3 SELECT + json.loads(state)':46} {raw['rows_per_s']:10,.0f} rows/s"
        f"    ({raw['rows']:,} rows, median of {raw['runs']} runs)"
    )
    ratio = b["events_per_s"] / raw["rows_per_s"]
    add(f"  ratio rebuild : raw = {ratio:.3f}x   (target >= 0.3x: {'met' if ratio >= 0.3 else 'NOT met'})")
    add("  rebuild rate by tenth of the log (events/s): " + ", ".join(f"{x:,.0f}" for x in b["by_tenth"]))
    add(f"  view rows after the rebuild: {', '.join(f'{k} {v:,}' for k, v in r['view_rows'].items())}")
    st = r["stages"]
    add(
        f"  rebuild rate {1e6 / b['events_per_s']:.0f} us/event; its reading steps alone, cumulative, first"
        f" {st['events']:,} events, unprofiled (us/event -> ceiling events/s):"
    )
    for label, us in st["us_per_event"].items():
        if us is not None:
            add(f"    {label:50} {us:7.1f} us  -> {1e6 / us:10,.0f} /s")
    cv = inc["clear_views"]
    add(
        f"  clearing full views first (as `tracker projections rebuild` does on a used database):"
        f" {cv['seconds']:.2f} s for {cv['rows']:,} rows (measured on the scratch copy)"
    )
    add("")
    add(f"  incremental catch_up() after {inc['actions']:,} more actions through Tracker.execute (scratch copy):")
    for key, label in (("same_process", "same Tracker, projector following"), ("fresh_tracker", "fresh Tracker")):
        x = inc[key]
        add(
            f"    {label:44} {x['events_per_s']:10,.0f} events/s  ({x['events']:,} events in"
            f" {1000 * x['seconds']:.0f} ms)"
        )
    add(f"    {'catch_up() with nothing to do':44} {fmt_ms(inc['noop_ms'])}")
    add(
        f"    (recording the {inc['actions']:,} actions took {inc['execute_seconds']:.1f} s:"
        f" {inc['actions'] / inc['execute_seconds']:,.0f} actions/s)"
    )
    p = inc["profile"]
    add("")
    add(
        f"cProfile of BoardProjector.rebuild() over the first {p['events']:,} events"
        f" ({p['seconds']:.1f} s under the profiler; not part of the figures above):"
    )
    lines.extend("  " + line.rstrip() for line in p["text"].strip().splitlines() if line.strip())
    add("")
    note(
        "note:",
        f"the campaign was recorded with {r['batch']} actions per save, snapshots every {SNAPSHOT_INTERVAL}"
        " events; event mix: " + ", ".join(f"{k} {v:,}" for k, v in r["event_mix"].items()) + ".",
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000, help="events of the campaign (default 200000)")
    parser.add_argument("--db-dir", help="folder for the benchmark database (kept and reused); default: temporary")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of the table")
    parser.add_argument("--batch", type=int, default=10, help="actions per save when building (default 10)")
    parser.add_argument("--repeats", type=int, default=30, help="timed calls per board_at figure (default 30)")
    parser.add_argument("--cli-runs", type=int, default=5, help="CliRunner calls (default 5)")
    parser.add_argument("--process-runs", type=int, default=3, help="fresh-process CLI calls (default 3)")
    parser.add_argument("--replay-runs", type=int, default=2, help="replays of the log (best taken, default 2)")
    parser.add_argument("--raw-runs", type=int, default=3, help="raw sqlite3 reads (median, default 3)")
    parser.add_argument("--incremental-actions", type=int, default=2_000, help="actions before catch_up (2000)")
    parser.add_argument("--profile-events", type=int, default=20_000, help="events of the profiled rebuild (20000)")
    parser.add_argument("--profile-top", type=int, default=25, help="functions printed per profile listing (25)")
    args = parser.parse_args()
    if args.events < 1000 or args.repeats < 1 or args.cli_runs < 1 or args.replay_runs < 1 or args.raw_runs < 1:
        parser.error("need --events >= 1000 and at least one run of everything")

    started = time.perf_counter()
    stamps = source_stamps()
    if args.db_dir:
        db_dir = Path(args.db_dir).resolve()
        db_dir.mkdir(parents=True, exist_ok=True)
        cleanup = False
    else:
        db_dir = Path(tempfile.mkdtemp(prefix="bench_projections_"))
        cleanup = True
    db = db_dir / f"bench_projections_{args.events}.db"
    scratch = db_dir / f"bench_projections_{args.events}_scratch.db"
    name = campaign_name(args.events)
    try:
        campaign = prepare(db, args.events, args.batch)
        cid = campaign["cid"]
        drop_projections(db)
        total = count_events(db)
        with Tracker(str(db)) as t:
            log(f"(b) rebuilding the projections over {total:,} events ...")
            rebuild = measure_rebuild(t, total)
            rows = view_rows(t)
            log(f"(b) raw sqlite3 read of {total:,} rows, {args.raw_runs} runs ...")
            raw = measure_raw_read(db, args.raw_runs)
            log("(a) state --turn T: board_at, CLI, replay ...")
            state = measure_state(t, db, cid, name, campaign["events"], args)
            state["board_at_by_seq_ms"] = measure_board_growth(t, cid, campaign["events"], 10)
            log(f"(b) rebuild stages over the first {args.profile_events:,} events ...")
            stages = measure_stages(t, db, args.profile_events)
            with t.engine.connect() as conn:
                mix = {
                    topic.rsplit(".", 1)[-1]: count
                    for topic, count in conn.exec_driver_sql(
                        "SELECT topic, count(*) FROM tracker_events GROUP BY topic ORDER BY 2 DESC"
                    )
                }
        log(f"(b) incremental catch-up and profile on a scratch copy ({scratch.name}) ...")
        copy_db(db, scratch)
        try:
            incremental = measure_incremental(
                scratch, name, args.incremental_actions, args.profile_events, args.profile_top
            )
        finally:
            remove_db(scratch)
    finally:
        if cleanup:
            shutil.rmtree(db_dir, ignore_errors=True)
    after = source_stamps()
    changed = sorted(path for path in stamps.keys() | after.keys() if stamps.get(path) != after.get(path))
    campaign["cid"] = str(cid)
    results = {
        "source_files_changed_during_run": changed,
        "db": str(db) if not cleanup else f"{db} (removed)",
        "name": name,
        "log": total,
        "batch": args.batch,
        "repeats": args.repeats,
        "campaign": campaign,
        "event_mix": mix,
        "state": state,
        "rebuild": rebuild,
        "stages": stages,
        "view_rows": rows,
        "raw": raw,
        "incremental": incremental,
        "runtime_s": time.perf_counter() - started,
    }
    results["ratios"] = {
        "replay_per_board_at": state["ratio_replay_per_board_at"],
        "rebuild_per_raw": rebuild["events_per_s"] / raw["rows_per_s"],
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(report(results))


if __name__ == "__main__":
    main()
