"""Benchmark of the tracker's SQLite event store: action throughput and load time versus log length.

Run as ``python bench/bench_store.py [--events N] [--db-dir DIR] [--json]`` (default N = 200000).
It only measures and prints; nothing is asserted.

(a) Actions recorded per second through the application with ONE transaction per action:
    ``Tracker.execute`` loads the campaign (latest snapshot plus the events after it), runs one
    command and saves its events. Measured on a sample of ``--sample-actions`` actions of a
    synthetic campaign (north-sea-1914: every phase advanced, a unit moved out and back in each
    nation's movement phases, occasional research and NTR placement). Next to it, stdlib
    ``sqlite3`` inserts the very rows the application stored for that sample (same table DDL and
    unique index, same originator ids, versions, topics and state bytes), one transaction per
    row, into a fresh file database in WAL mode with the application's ``PRAGMA synchronous``.
    Target: app actions/s >= 0.5 x raw rows/s.

(b) Time of ``Tracker.load(campaign_id)`` for a campaign of about 2,000 events and one of about
    N events, both in the same database file (so only the campaign's log length differs). The
    bulk of those logs is recorded through the same application and the same commands, but with
    ``--batch`` actions per save (one transaction per batch) so that N = 200k finishes in minutes;
    snapshots are taken every 200 events exactly as in normal use. Each load is timed in a fresh
    process (first load of a new Tracker: what one CLI call pays) and, in the same process, on
    further loads with the Tracker warm. Loads are measured at the first version >= the target
    (right after a snapshot for multiples of 200) and again about 190 events later (close to the
    worst case of replaying 199 events after the snapshot). Target: large load <= 2 x small load.

Progress goes to stderr; ``--profile N`` adds a cProfile of extra, untimed actions.
"""

from __future__ import annotations

import argparse
import collections
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
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from uuid import UUID

from domain.campaign import Campaign, one_action
from domain.dice import DiceSource
from domain.errors import TrackerError
from tracker.service import actions
from tracker.service.application import SNAPSHOT_INTERVAL, Tracker

SCENARIO = "north-sea-1914"
# The shipped scenarios the campaign-scale benchmark builds its campaigns on (issue 26: every
# target holds on the whole-war board too).
SCENARIOS = ("north-sea-1914", "great-war-1914")
# One unit per nation that shuttles between two adjacent sea zones: out in combat movement,
# back in non-combat movement (one step each, within every unit's allowance), never into enemy
# surface ships (NC1 would make a battle due). Hand-picked for north-sea-1914; other scenarios
# get theirs from `pick_movers`.
MOVERS = {
    "Germany": ("DE-SS1", "Central North Sea", "Heligoland Bight"),
    "Britain": ("GB-SS1", "Heligoland Bight", "Central North Sea"),
    "Austria-Hungary": ("AH-SS1", "Skagerrak", "Heligoland Bight"),
    "France": ("FR-DD1", "English Channel", "Western Approaches"),
}
# The unit types a mover is chosen from, in order of preference (the lightest first: a
# submarine's moves also give the convoy passes of CV1 their share of the log).
MOVER_TYPES = ("submarine", "destroyer", "cruiser", "transport", "battleship", "aircraft_carrier")
TAIL_EVENTS = 190  # the second load point: this many events past the first (snapshots every 200)
DB_FILES = ("bench_actions.db", "bench_raw.db", "bench_loads.db")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ----- the synthetic campaign -----


def pick_movers(c: Campaign) -> dict[str, tuple[str, str, str]]:
    """One shuttling unit per nation on a fresh campaign: a naval unit in a sea zone with an
    adjacent sea zone, both holding no unit of another side and neither used by another
    side's mover, so the shuttles never meet an enemy (no battle stops `next`)."""
    scenario, game_map = c.scenario, c.scenario.game_map
    sides_at: dict[str, set[str]] = collections.defaultdict(set)
    for unit in c.units.values():
        sides_at[unit["at"]].add(scenario.side_of(unit["nation"]))
    movers: dict[str, tuple[str, str, str]] = {}
    for nation in scenario.turn_order:
        side = scenario.side_of(nation)

        def clear(zone: str, side: str = side) -> bool:
            return game_map.is_sea(zone) and sides_at[zone] <= {side}

        own = sorted(
            (MOVER_TYPES.index(u["type"]), uid)
            for uid, u in c.units.items()
            if u["nation"] == nation and u["type"] in MOVER_TYPES and clear(u["at"])
        )
        for _, uid in own:
            home = c.units[uid]["at"]
            away = next((z for z in sorted(game_map.adjacency[home]) if clear(z)), None)
            if away is not None:
                movers[nation] = (uid, home, away)
                sides_at[home].add(side)
                sides_at[away].add(side)
                break
    return movers


def movers_for(c: Campaign) -> dict[str, tuple[str, str, str]]:
    return MOVERS if c.scenario.name == SCENARIO else pick_movers(c)


class Script:
    """Chooses one action from the campaign's state and records it by name (what was asked
    first, as the CLI does); refused candidates fall through to `next`."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.movers: dict[str, tuple[str, str, str]] | None = None

    def candidates(self, c: Campaign) -> Iterator[tuple[str, dict[str, Any]]]:
        if self.movers is None:
            self.movers = movers_for(c)
        nation, phase = c.nation, c.phase
        if phase == "research":
            rs = c.ruleset
            if not c.research_rolls and c.round % 2 == 0 and c.balances[nation] >= 2 * rs.research_cost:
                for technology, level in c.tech[nation].items():
                    if level < rs.research_levels:
                        yield "research", {"technology": technology}
                        break
        elif phase in ("combat_movement", "noncombat_movement") and nation in self.movers:
            uid, home, away = self.movers[nation]
            unit = c.units[uid]
            if phase == "combat_movement" and unit["at"] == home and unit["moved"] == 0:
                yield "move", {"units": [uid], "path": [away]}
            elif phase == "noncombat_movement" and unit["at"] == away:
                yield "move", {"units": [uid], "path": [home]}
        elif phase == "placement" and c.round % 3 == 0:
            limits = c.scenario.nations[nation].ntr_max
            for zone, most in limits.items():
                if c.ntr.get(nation, {}).get(zone, 0) < most:
                    yield "ntr place", {"zone": zone}
                    break
        # T4: a phase ends only once every enemy that may attack convoys passed (CV1).
        for enemy in c.convoy_attacks_open():
            yield "convoy pass", {"by": enemy}
            break
        yield "next", {}

    def __call__(self, c: Campaign, dice: DiceSource) -> str:
        for name, given in self.candidates(c):
            action = actions.get(name)
            inputs = action.validate(given)
            try:
                with one_action(c):
                    c.ask(name, inputs, c.version)
                    action.perform(c, dice, inputs, None)  # type: ignore[arg-type]  # these need no log
            except TrackerError:
                self.counts["refused " + name] += 1
                continue
            self.counts[name] += 1
            return name
        raise AssertionError("next was refused")


def check_scenario(t: Tracker, cid: UUID) -> None:
    c = t.load(cid)
    game_map = c.scenario.game_map
    movers = movers_for(c)
    for nation, (uid, home, away) in movers.items():
        unit = c.units.get(uid)
        if unit is None or unit["nation"] != nation or unit["at"] != home or not game_map.adjacent(home, away):
            raise SystemExit(f"scenario {c.scenario.name} changed: {uid} no longer shuttles {home} <-> {away}")
    if not movers:
        raise SystemExit(f"scenario {c.scenario.name}: no unit can shuttle between two quiet sea zones")


def build_batched(t: Tracker, c: Campaign, target: int, batch: int, script: Script, label: str) -> float:
    """Record actions on a held campaign, `batch` actions per save, until version >= target."""
    dice = t.dice_for(c)
    start_version, started = c.version, time.perf_counter()
    next_report = started + 15
    while c.version < target:
        for _ in range(batch):
            if c.version >= target:
                break
            script(c, dice)
        t.app.save(c)
        now = time.perf_counter()
        if now >= next_report:
            rate = (c.version - start_version) / (now - started)
            log(f"  {label}: {c.version:,}/{target:,} events ({rate:,.0f} events/s)")
            next_report = now + 15
    return time.perf_counter() - started


# ----- (a) per-action throughput -----


def measure_actions(db: Path, sample: int, warmup: int, profile_top: int) -> dict[str, Any]:
    t = Tracker(str(db))
    try:
        cid = t.create("bench-actions", SCENARIO, dice="auto").id
        check_scenario(t, cid)
        script = Script()
        for _ in range(warmup):
            t.execute(cid, script)
        engine = t.app.factory.datastore.engine  # type: ignore[attr-defined]
        with engine.connect() as conn:
            first_id = conn.exec_driver_sql("SELECT max(id) FROM tracker_events").scalar() + 1
            synchronous = conn.exec_driver_sql("PRAGMA synchronous").scalar()
            journal_mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
        v0 = t.load(cid).version
        script.counts.clear()
        refused = 0
        latencies = []
        started = time.perf_counter()
        for _ in range(sample):
            t0 = time.perf_counter()
            try:
                t.execute(cid, script)
            except TrackerError:
                refused += 1
            latencies.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - started
        v1 = t.load(cid).version
        mix = dict(script.counts)
        breakdown = measure_breakdown(t, cid, script, max(200, sample // 6))
        profile_actions = min(sample, 1000)
        if profile_top:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(profile_actions):
                t.execute(cid, script)
            profiler.disable()
    finally:
        t.close()
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT originator_id, originator_version, topic, state FROM tracker_events"
            " WHERE id >= ? ORDER BY id LIMIT ?",
            (first_id, v1 - v0),
        ).fetchall()
        ddl = [
            r[0]
            for r in conn.execute(
                "SELECT sql FROM sqlite_master WHERE tbl_name = 'tracker_events' AND sql IS NOT NULL ORDER BY type DESC"
            )
        ]
    latencies.sort()
    result = {
        "actions": sample - refused,
        "refused": refused,
        "events": v1 - v0,
        "seconds": elapsed,
        "actions_per_s": (sample - refused) / elapsed,
        "events_per_s": (v1 - v0) / elapsed,
        "latency_ms": {
            "p50": 1000 * latencies[len(latencies) // 2],
            "p95": 1000 * latencies[int(len(latencies) * 0.95)],
            "max": 1000 * latencies[-1],
        },
        "action_mix": mix,
        "breakdown_ms": breakdown,
        "app_synchronous": synchronous,
        "app_journal_mode": journal_mode,
        "rows": rows,
        "ddl": ddl,
    }
    if profile_top:
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(profile_top)
        stats.sort_stats("cumulative").print_stats(profile_top)
        result["profile"] = f"{profile_actions} further actions, untimed pass\n" + out.getvalue()
    return result


def measure_breakdown(t: Tracker, cid: UUID, script: Script, actions: int) -> dict[str, float]:
    """The steps of `Tracker.execute`, timed one by one (no conflicts here, so no retries)."""
    parts: dict[str, list[float]] = {"load": [], "dice_for": [], "command": [], "save": []}
    for _ in range(actions):
        t0 = time.perf_counter()
        c = t.load(cid)
        t1 = time.perf_counter()
        dice = t.dice_for(c)
        t2 = time.perf_counter()
        script(c, dice)
        t3 = time.perf_counter()
        t.app.save(c)
        t4 = time.perf_counter()
        for key, value in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            value_ms = 1000 * value
            parts[key].append(value_ms)
    means = {key: statistics.fmean(values) for key, values in parts.items()}
    means["actions"] = actions
    return means


def measure_raw(db: Path, rows: list[tuple[Any, ...]], ddl: list[str], synchronous: int, runs: int) -> dict[str, Any]:
    """Stdlib sqlite3: the same rows, one transaction per row, fresh WAL file each run."""
    rates = []
    checked: dict[str, Any] = {}
    for _ in range(runs):
        remove_db(db)
        conn = sqlite3.connect(db, isolation_level=None)
        try:
            checked["journal_mode"] = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            conn.execute(f"PRAGMA synchronous={int(synchronous)}")
            checked["synchronous"] = conn.execute("PRAGMA synchronous").fetchone()[0]
            for statement in ddl:
                conn.execute(statement)
            insert = "INSERT INTO tracker_events (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)"
            started = time.perf_counter()
            for row in rows:
                conn.execute("BEGIN")
                conn.execute(insert, row)
                conn.execute("COMMIT")
            rates.append(len(rows) / (time.perf_counter() - started))
        finally:
            conn.close()
    return {"rows": len(rows), "runs": runs, "rows_per_s": statistics.median(rates), "rates": rates, **checked}


def measure_interleaved(
    scratch: Path, actions: int, rounds: int, warmup: int = 50, scenario: str = SCENARIO
) -> dict[str, Any]:
    """Recording against raw sqlite3, interleaved in one run so both see the same disk and load.

    Each round records `actions // rounds` actions through `Tracker.execute` (one transaction
    per action), then inserts the very rows they stored into a raw sqlite3 file with the same
    DDL, journal mode and `PRAGMA synchronous`, one transaction per row. A round's ratio is
    its actions/s over its raw rows/s; the figures are the medians over the rounds.
    """
    app_db, raw_db = scratch / "interleaved_app.db", scratch / "interleaved_raw.db"
    remove_db(app_db)
    remove_db(raw_db)
    t = Tracker(str(app_db))
    raw = sqlite3.connect(raw_db, isolation_level=None)
    try:
        cid = t.create("bench-actions", scenario, dice="auto").id
        check_scenario(t, cid)
        script = Script()
        for _ in range(warmup):
            t.execute(cid, script)
        engine = t.app.factory.datastore.engine  # type: ignore[attr-defined]
        with engine.connect() as conn:
            synchronous = int(conn.exec_driver_sql("PRAGMA synchronous").scalar())
            journal_mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
            ddl = [
                r[0]
                for r in conn.exec_driver_sql(
                    "SELECT sql FROM sqlite_master WHERE tbl_name = 'tracker_events' AND sql IS NOT NULL"
                    " ORDER BY type DESC"
                )
            ]
        raw.execute(f"PRAGMA journal_mode={journal_mode}")
        raw.execute(f"PRAGMA synchronous={synchronous}")
        for statement in ddl:
            raw.execute(statement)
        insert = "INSERT INTO tracker_events (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)"
        per_round = max(1, actions // rounds)
        app_rates, raw_rates, ratios, refused = [], [], [], 0
        for _ in range(rounds):
            with engine.connect() as conn:
                after = int(conn.exec_driver_sql("SELECT coalesce(max(id), 0) FROM tracker_events").scalar())
            t0 = time.perf_counter()
            for _ in range(per_round):
                try:
                    t.execute(cid, script)
                except TrackerError:
                    refused += 1
            app_s = time.perf_counter() - t0
            with engine.connect() as conn:
                rows = conn.exec_driver_sql(
                    "SELECT originator_id, originator_version, topic, state FROM tracker_events"
                    " WHERE id > ? ORDER BY id",
                    (after,),
                ).fetchall()
            t0 = time.perf_counter()
            for row in rows:
                raw.execute("BEGIN")
                raw.execute(insert, tuple(row))
                raw.execute("COMMIT")
            raw_s = time.perf_counter() - t0
            app_rates.append(per_round / app_s)
            raw_rates.append(len(rows) / raw_s)
            ratios.append(app_rates[-1] / raw_rates[-1])
    finally:
        raw.close()
        t.close()
    remove_db(app_db)
    remove_db(raw_db)
    return {
        "rounds": rounds,
        "actions": per_round * rounds,
        "refused": refused,
        "synchronous": synchronous,
        "journal_mode": journal_mode,
        "actions_per_s": statistics.median(app_rates),
        "raw_rows_per_s": statistics.median(raw_rates),
        "ratio": statistics.median(ratios),
        "ratios": ratios,
    }


# ----- (b) load time versus log length -----


def load_worker(db: str, cid: str, warm: int) -> None:
    """Run in a fresh process: time the first load of a new Tracker, then `warm` more loads."""
    t = Tracker(db)
    try:
        t0 = time.perf_counter()
        c = t.load(UUID(cid))
        cold = time.perf_counter() - t0
        warm_times = []
        for _ in range(warm):
            t0 = time.perf_counter()
            t.load(UUID(cid))
            warm_times.append(time.perf_counter() - t0)
    finally:
        t.close()
    print(json.dumps({"cold": cold, "warm": warm_times, "version": c.version}))


def measure_loads(db: Path, cid: UUID, processes: int, warm: int) -> dict[str, Any]:
    cold, warm_medians, version = [], [], None
    for _ in range(processes):
        proc = subprocess.run(
            [sys.executable, __file__, "--load-worker", str(db), str(cid), str(warm)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"load worker failed (exit {proc.returncode}):\n{proc.stderr.strip()}")
        figures = json.loads(proc.stdout.strip().splitlines()[-1])
        cold.append(figures["cold"])
        warm_medians.append(statistics.median(figures["warm"]))
        version = figures["version"]
    with closing(sqlite3.connect(db)) as conn:
        snapshot = conn.execute(
            "SELECT max(originator_version) FROM tracker_snapshots WHERE originator_id = ?", (cid.bytes,)
        ).fetchone()[0]
    return {
        "events": version,
        "snapshot_version": snapshot,
        "replayed": version - (snapshot or 0),
        "cold_ms": 1000 * statistics.median(cold),
        "warm_ms": 1000 * statistics.median(warm_medians),
        "cold_all_ms": [1000 * x for x in cold],
    }


def build_and_load(db: Path, small: int, large: int, batch: int, processes: int, warm: int) -> dict[str, Any]:
    script = Script()
    t = Tracker(str(db))
    campaigns = {}
    build: dict[str, Any] = {}
    try:
        for label, target in (("small", small), ("large", large)):
            cid = t.create(f"bench-{label}", SCENARIO, dice="auto").id
            check_scenario(t, cid)
            c = t.load(cid)
            seconds = build_batched(t, c, target, batch, script, f"{label} campaign")
            campaigns[label] = cid
            build[label] = {"events": c.version, "seconds": seconds, "events_per_s": c.version / seconds}
    finally:
        t.close()
    points: dict[str, dict[str, Any]] = {}
    log("measuring loads right after a snapshot ...")
    points["at_target"] = {label: measure_loads(db, cid, processes, warm) for label, cid in campaigns.items()}
    t = Tracker(str(db))
    try:
        for label, cid in campaigns.items():
            c = t.load(cid)
            build_batched(t, c, c.version + TAIL_EVENTS, batch, script, f"{label} tail")
    finally:
        t.close()
    log(f"measuring loads about {TAIL_EVENTS} events after a snapshot ...")
    points["tail"] = {label: measure_loads(db, cid, processes, warm) for label, cid in campaigns.items()}
    with closing(sqlite3.connect(db)) as conn:
        mix = {
            topic.rsplit(".", 1)[-1]: count
            for topic, count in conn.execute(
                "SELECT topic, count(*) FROM tracker_events WHERE originator_id = ? GROUP BY topic ORDER BY 2 DESC",
                (campaigns["large"].bytes,),
            )
        }
    return {
        "build": build,
        "points": points,
        "large_event_mix": mix,
        "action_mix": dict(script.counts),
        "db_bytes": sum(p.stat().st_size for p in db.parent.glob(db.name + "*")),
    }


# ----- output -----


def source_stamps() -> dict[str, float]:
    """Modification times of the application's sources: a run is only meaningful if they hold still."""
    import domain
    import tracker

    stamps = {}
    for package in (domain, tracker):
        for path in Path(package.__file__).parent.rglob("*.py"):
            stamps[str(path)] = path.stat().st_mtime
    return stamps


def remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def report(r: dict[str, Any]) -> str:
    a, raw, ld = r["actions"], r["raw"], r["loads"]
    lines: list[str] = []
    add = lines.append

    def note(label: str, text: str) -> None:
        lines.extend(textwrap.wrap(text, 110, initial_indent=f"  {label:5} ", subsequent_indent=" " * 8))

    add(f"bench_store: Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs")
    add(f"databases in {r['db_dir']}; total runtime {r['runtime_s']:.0f} s")
    if r["source_files_changed_during_run"]:
        add("WARNING: application sources changed during the run, figures may mix versions:")
        lines.extend(f"  {path}" for path in r["source_files_changed_during_run"])
    add("")
    add("(a) actions recorded per second, one transaction per action")
    add(f"  {'':44} {'rate':>10}     {'count':>7} {'seconds':>8}")
    add(
        f"  {'app: Tracker.execute (load, command, save)':44} {a['actions_per_s']:>10,.0f} act/s"
        f" {a['actions']:>7,} {a['seconds']:>8.1f}"
    )
    add(f"  {'     same sample, events stored':44} {a['events_per_s']:>10,.0f} evt/s {a['events']:>7,}")
    add(
        f"  {'raw: sqlite3 INSERT, one row per transaction':44} {raw['rows_per_s']:>10,.0f} row/s"
        f" {raw['rows']:>7,}  (median of {raw['runs']} runs)"
    )
    ratio = a["actions_per_s"] / raw["rows_per_s"]
    add(f"  ratio app actions/s : raw rows/s = {ratio:.3f}x   (target >= 0.5x: {'met' if ratio >= 0.5 else 'NOT met'})")
    add(f"  ratio app events/s  : raw rows/s = {a['events_per_s'] / raw['rows_per_s']:.3f}x")
    lat = a["latency_ms"]
    add(f"  app latency per action: p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms, max {lat['max']:.2f} ms")
    b = a["breakdown_ms"]
    total = b["load"] + b["dice_for"] + b["command"] + b["save"]
    add(
        f"  mean ms per action by step of Tracker.execute ({b['actions']} more actions, timed step by step):"
        f" load {b['load']:.2f}, dice_for {b['dice_for']:.2f}, command {b['command']:.2f}, save {b['save']:.2f}"
        f" = {total:.2f}"
    )
    add(f"  action mix of the sample: {', '.join(f'{k} {v:,}' for k, v in sorted(a['action_mix'].items()))}")
    note(
        "how:",
        f"app: {a['actions']:,} consecutive actions of a synthetic {SCENARIO} campaign (after {r['warmup']}"
        f" untimed warm-up actions), each its own Tracker.execute call and transaction, wall-clock time of the"
        f" loop. The application's database is journal_mode={a['app_journal_mode']},"
        f" synchronous={a['app_synchronous']} (PRAGMAs read on the application's own engine).",
    )
    note(
        "",
        f"raw: the {raw['rows']:,} tracker_events rows the application stored for that sample (same table DDL and"
        f" unique index, same originator ids, versions, topics and state bytes), inserted with stdlib sqlite3,"
        f" BEGIN/INSERT/COMMIT per row, into a fresh file with journal_mode={raw['journal_mode']},"
        f" synchronous={raw['synchronous']}. The raw side does no reads and writes no snapshots.",
    )
    add("")
    add("(b) Tracker.load(campaign_id); both campaigns in one database file")
    add(f"  {'campaign':10} {'events':>9} {'snapshot':>9} {'replayed':>9} {'cold ms':>9} {'warm ms':>9}")
    for point in ("at_target", "tail"):
        for label in ("small", "large"):
            p = ld["points"][point][label]
            add(
                f"  {label:10} {p['events']:>9,} {p['snapshot_version']:>9,} {p['replayed']:>9,}"
                f" {p['cold_ms']:>9.2f} {p['warm_ms']:>9.2f}"
            )
        small, large = ld["points"][point]["small"], ld["points"][point]["large"]
        cold_ratio = large["cold_ms"] / small["cold_ms"]
        warm_ratio = large["warm_ms"] / small["warm_ms"]
        add(
            f"  ratio large/small: cold {cold_ratio:.2f}x, warm {warm_ratio:.2f}x"
            f"   (target <= 2x: {'met' if max(cold_ratio, warm_ratio) <= 2 else 'NOT met'})"
        )
        add("")
    note(
        "how:",
        f"cold = the first load of a new Tracker in a fresh python process (imports and opening the database not"
        f" timed), median of {r['load_processes']} processes; warm = median of {r['warm_loads']} further loads on"
        f" the same Tracker in each process, median over the processes. OS page cache warm. Snapshots every"
        f" {SNAPSHOT_INTERVAL} events; 'replayed' = events applied after the latest snapshot. First block: at the"
        f" first version >= the target size (right after a snapshot when the target is a multiple of"
        f" {SNAPSHOT_INTERVAL}); second block: about {TAIL_EVENTS} events"
        f" later (near the worst case of 199 replayed events).",
    )
    build = ld["build"]
    note(
        "",
        f"The logs were recorded through the same application and commands as in (a), but {r['batch']} actions"
        f" per save (one transaction per batch) on a held Campaign: small {build['small']['events']:,} events in"
        f" {build['small']['seconds']:.1f} s, large {build['large']['events']:,} events in"
        f" {build['large']['seconds']:.1f} s ({build['large']['events_per_s']:,.0f} events/s).",
    )
    note("", "Large campaign event mix: " + ", ".join(f"{k} {v:,}" for k, v in ld["large_event_mix"].items()))
    note("", f"Database size: {ld['db_bytes'] / 1e6:.1f} MB.")
    if "profile" in a:
        add("")
        add("cProfile of Tracker.execute (not part of the figures above):")
        lines.extend("  " + line.rstrip() for line in a["profile"].strip().splitlines() if line.strip())
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000, help="events of the large campaign (default 200000)")
    parser.add_argument("--small-events", type=int, default=2_000, help="events of the small campaign (default 2000)")
    parser.add_argument("--db-dir", help="folder for the benchmark databases (kept); default: a temporary folder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of the table")
    parser.add_argument("--sample-actions", type=int, default=3_000, help="timed actions (default 3000)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed actions before the sample (default 50)")
    parser.add_argument("--raw-runs", type=int, default=3, help="runs of the raw sqlite3 baseline (default 3)")
    parser.add_argument("--batch", type=int, default=10, help="actions per save when building logs (default 10)")
    parser.add_argument("--load-processes", type=int, default=7, help="fresh processes per load figure (default 7)")
    parser.add_argument("--warm-loads", type=int, default=5, help="warm loads in each process (default 5)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="profile extra actions, print top N")
    parser.add_argument("--load-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_worker:
        db, cid, warm = args.load_worker
        load_worker(db, cid, int(warm))
        return
    if args.events < args.small_events or args.small_events < 1 or args.sample_actions < 20:
        parser.error("need --events >= --small-events >= 1 and --sample-actions >= 20")

    started = time.perf_counter()
    stamps = source_stamps()
    if args.db_dir:
        db_dir = Path(args.db_dir).resolve()
        db_dir.mkdir(parents=True, exist_ok=True)
        cleanup = False
    else:
        db_dir = Path(tempfile.mkdtemp(prefix="bench_store_"))
        cleanup = True
    for name in DB_FILES:
        remove_db(db_dir / name)
    try:
        log(f"(a) {args.sample_actions:,} actions through Tracker.execute, one transaction each ...")
        actions = measure_actions(db_dir / "bench_actions.db", args.sample_actions, args.warmup, args.profile)
        rows, ddl = actions.pop("rows"), actions.pop("ddl")
        log(f"(a) raw sqlite3: {len(rows):,} rows, one transaction each, {args.raw_runs} runs ...")
        raw = measure_raw(db_dir / "bench_raw.db", rows, ddl, actions["app_synchronous"], args.raw_runs)
        log(f"(b) building campaigns of {args.small_events:,} and {args.events:,} events ...")
        loads = build_and_load(
            db_dir / "bench_loads.db", args.small_events, args.events, args.batch, args.load_processes, args.warm_loads
        )
    finally:
        if cleanup:
            shutil.rmtree(db_dir, ignore_errors=True)
    after = source_stamps()
    changed = sorted(path for path in stamps.keys() | after.keys() if stamps.get(path) != after.get(path))
    results = {
        "source_files_changed_during_run": changed,
        "db_dir": str(db_dir) if not cleanup else f"{db_dir} (removed)",
        "events": args.events,
        "small_events": args.small_events,
        "warmup": args.warmup,
        "batch": args.batch,
        "load_processes": args.load_processes,
        "warm_loads": args.warm_loads,
        "actions": actions,
        "raw": raw,
        "loads": loads,
        "runtime_s": time.perf_counter() - started,
    }
    results["ratios"] = {
        "app_actions_per_raw_rows": actions["actions_per_s"] / raw["rows_per_s"],
        "load_large_per_small_cold": {
            point: v["large"]["cold_ms"] / v["small"]["cold_ms"] for point, v in loads["points"].items()
        },
        "load_large_per_small_warm": {
            point: v["large"]["warm_ms"] / v["small"]["warm_ms"] for point, v in loads["points"].items()
        },
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(report(results))


if __name__ == "__main__":
    main()
