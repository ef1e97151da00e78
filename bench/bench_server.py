"""The league server under load: 20 clients x 100 actions over 10 campaigns against two
`tracker serve` processes on one PostgreSQL database; 0 lost, 0 duplicated; latency.

Run as ``python bench/bench_server.py [--clients 20] [--actions 100] [--campaigns 10]
[--pg postgresql+psycopg://postgres@127.0.0.1:5432/test]``. It makes a database of its own
(dropped at the end), records the campaigns and a referee token for each, starts two server
processes on free 127.0.0.1 ports and sends each client's actions to one of them, two clients
per campaign so that writers collide. Each client, in turn, passes the convoy attacks the
phase waits for or ends the phase (`convoy pass`, `next`) through POST /api/command.

Afterwards every campaign's log is read back: each action answered 200 must be one recorded
action (lost: answered but not in the log; duplicated: in the log more often than answered).
The reference is the same action recorded in this process on the same database with the
application service, one writer, no HTTP. It only measures and prints; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

PG = os.environ.get("TRACKER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
TRACKER = [sys.executable, "-c", "from tracker.cli.main import main; main()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call(url: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method="GET" if body is None else "POST")
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def start_server(db: str, keys: str, work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    out = (work / f"server-{port}.log").open("wb")
    proc = subprocess.Popen(
        [*TRACKER, "serve", "--db", db, "--keys", keys, "--port", str(port)],
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=work,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"tracker serve exited: {(work / f'server-{port}.log').read_text()}")
        try:
            if call(url, "/api/health")[0] == 200:
                return proc, url
        except OSError:
            time.sleep(0.2)
    raise SystemExit("tracker serve did not answer")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def client(url: str, campaign: str, token: str, actions: int, lock: threading.Lock, results: list[Any]) -> None:
    mine: list[tuple[float, int, str]] = []
    for _ in range(actions):
        _status, pending = call(url, f"/api/campaigns/{campaign}/pending")
        opened = [i for i in pending if i["kind"] == "convoy_open"]
        args = ["convoy", "pass", "--by", opened[0]["nation"]] if opened else ["next"]
        started = time.perf_counter()
        status, body = call(url, "/api/command", {"args": args, "campaign": campaign}, token)
        mine.append((time.perf_counter() - started, status, body.get("error", "") if isinstance(body, dict) else ""))
    with lock:
        results.extend(mine)


def reference(db: str, samples: int = 100) -> list[float]:
    """One writer recording `next` / `convoy pass` through the application service directly."""
    from tracker.service.application import Tracker

    times = []
    with Tracker(db) as t:
        t.create("reference", "north-sea-1914", dice="auto")
        cid = t.campaign_id("reference")
        for _ in range(samples):
            def act(c: Any, _d: Any) -> None:
                opened = c.convoy_attacks_open()
                if opened:
                    c.convoy_pass(next(iter(opened)))
                else:
                    c.advance()

            started = time.perf_counter()
            t.execute(cid, act)
            times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--actions", type=int, default=100)
    parser.add_argument("--campaigns", type=int, default=10)
    parser.add_argument("--pg", default=PG)
    opts = parser.parse_args()

    import psycopg
    from sqlalchemy.engine import make_url

    admin = opts.pg.replace("postgresql+psycopg://", "postgresql://")
    name = f"bench_server_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        conn.execute(f'CREATE DATABASE "{name}_keys"')
    db = make_url(opts.pg).set(database=name).render_as_string(hide_password=False)
    keys = make_url(opts.pg).set(database=f"{name}_keys").render_as_string(hide_password=False)
    work = Path(tempfile.mkdtemp(prefix="bench-server-"))
    servers: list[subprocess.Popen[bytes]] = []
    try:
        from tracker.service.application import Tracker
        from tracker.service.players import Players

        tokens: dict[str, str] = {}
        with Tracker(db) as t:
            players = Players(t.engine)
            for i in range(opts.campaigns):
                campaign = f"league-{i}"
                t.create(campaign, "north-sea-1914", dice="auto")
                tokens[campaign] = players.add(str(t.campaign_id(campaign)), "referee", [], True)
        urls = []
        for _ in range(2):
            proc, url = start_server(db, keys, work)
            servers.append(proc)
            urls.append(url)
        print(
            f"{opts.clients} clients x {opts.actions} actions over {opts.campaigns} campaigns, "
            "2 server processes, PostgreSQL",
            flush=True,
        )
        results: list[tuple[float, int, str]] = []
        lock = threading.Lock()
        started = time.perf_counter()
        with ThreadPoolExecutor(opts.clients) as pool:
            for i in range(opts.clients):
                campaign = f"league-{i % opts.campaigns}"
                pool.submit(client, urls[i % 2], campaign, tokens[campaign], opts.actions, lock, results)
        wall = time.perf_counter() - started
        recorded = 0
        for campaign in tokens:
            _status, log = call(urls[0], f"/api/campaigns/{campaign}/log", token=tokens[campaign])
            recorded += len({r["data"]["action"] for r in log if r["kind"] != "Created"})
        answered = sum(1 for _t, status, _e in results if status == 200)
        refused = [e for _t, status, e in results if status != 200]
        lost, duplicated = max(0, answered - recorded), max(0, recorded - answered)
        latencies = [t for t, _s, _e in results]
        ref = reference(db)
        p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
        ref50, ref95 = percentile(ref, 50), percentile(ref, 95)
        rows = [
            ("actions answered 200 / recorded", f"{answered} / {recorded}", "-", "-", "equal", answered == recorded),
            ("lost (answered, not recorded)", str(lost), "-", "-", "0", lost == 0),
            ("duplicated (recorded twice)", str(duplicated), "-", "-", "0", duplicated == 0),
            ("refused (409: a gate the other client opened)", str(len(refused)), "-", "-", "-", None),
            ("latency p50", f"{p50 * 1000:.0f} ms", f"{ref50 * 1000:.0f} ms", f"{p50 / ref50:.1f}x", "-", None),
            ("latency p95", f"{p95 * 1000:.0f} ms", f"{ref95 * 1000:.0f} ms", f"{p95 / ref95:.1f}x", "< 2 s", p95 < 2),
            ("throughput", f"{len(results) / wall:.1f} actions/s", "-", "-", "-", None),
        ]
        header = ("figure", "value", "reference (in-process, 1 writer)", "ratio", "target", "met")
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(5)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=False)) + "  met")
        for r in rows:
            met = {True: "yes", False: "NO"}.get(r[5], "-")  # type: ignore[arg-type]
            print("  ".join(str(v).ljust(w) for v, w in zip(r[:5], widths, strict=False)) + f"  {met}")
        kinds: dict[str, int] = {}
        for e in refused:
            kinds[e.split(":")[0]] = kinds.get(e.split(":")[0], 0) + 1
        if kinds:
            print("refusals by rule:", ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())))
    finally:
        for proc in servers:
            stop(proc)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'DROP DATABASE IF EXISTS "{name}_keys" WITH (FORCE)')


if __name__ == "__main__":
    main()
