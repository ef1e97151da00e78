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

``--sqlite`` measures one `tracker serve` process on a SQLite file instead (default 4 clients x
25 actions, a campaign each, every action POSTed to /api/campaigns/NAME/actions and chosen
from the previous answer's pending list: one request an action). In the same run, the same
clients send as many requests to a bare Starlette endpoint under the same ASGI server, which
does one INSERT (one transaction, same journal mode and synchronous setting) per request: the
reference. Targets: >= 0.5x the bare endpoint's requests/s, p95 latency <= 50 ms. ``--profile
FILE`` runs the tracker server under cProfile and writes its statistics to FILE.
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
        _status, pending = call(url, f"/api/campaigns/{campaign}/pending", token=token)
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


# The reference of --sqlite: a bare endpoint, one INSERT (one transaction) per request.
BARE_APP = """
import sys, threading, sqlite3, anyio, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
db, port, synchronous = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
local = threading.local()
setup = sqlite3.connect(db, isolation_level=None)
setup.execute("PRAGMA journal_mode=WAL")
setup.execute("CREATE TABLE IF NOT EXISTS actions (id INTEGER PRIMARY KEY, campaign TEXT, body BLOB)")
setup.close()
def write(campaign, body):
    conn = getattr(local, "conn", None)
    if conn is None:
        conn = local.conn = sqlite3.connect(db, isolation_level=None, timeout=60)
        conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO actions (campaign, body) VALUES (?, ?)", (campaign, body))
    conn.execute("COMMIT")
async def health(request):
    return JSONResponse({"ok": True})
async def pending(request):
    return JSONResponse([])
async def act(request):
    body = await request.body()
    await anyio.to_thread.run_sync(write, request.path_params["name"], body)
    return JSONResponse({"pending": []})
app = Starlette(routes=[
    Route("/api/health", health),
    Route("/api/campaigns/{name}/pending", pending),
    Route("/api/campaigns/{name}/actions", act, methods=["POST"]),
])
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
"""


def start(argv: list[str], work: Path, label: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server process on a free port (`{port}` in argv) and wait until it answers."""
    port = free_port()
    out = (work / f"{label}-{port}.log").open("wb")
    proc = subprocess.Popen(
        [a.replace("{port}", str(port)) for a in argv], stdout=out, stderr=subprocess.STDOUT, cwd=work
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{label} exited: {(work / f'{label}-{port}.log').read_text()}")
        try:
            if call(url, "/api/health")[0] == 200:
                return proc, url
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{label} did not answer")


def action_client(url: str, campaign: str, token: str, actions: int, lock: threading.Lock, results: list[Any]) -> None:
    """One request an action: `convoy pass` while a convoy attack is open, else `next`, chosen
    from the previous answer's pending list."""
    mine: list[tuple[float, int, str]] = []
    _status, pending = call(url, f"/api/campaigns/{campaign}/pending", token=token)
    for _ in range(actions):
        opened = [i for i in pending if i.get("kind") == "convoy_open"] if isinstance(pending, list) else []
        asked = {"action": "convoy pass", "inputs": {"by": opened[0]["nation"]}} if opened else {"action": "next"}
        started = time.perf_counter()
        status, body = call(url, f"/api/campaigns/{campaign}/actions", asked, token)
        mine.append((time.perf_counter() - started, status, body.get("error", "") if isinstance(body, dict) else ""))
        pending = body.get("pending", []) if isinstance(body, dict) else []
    with lock:
        results.extend(mine)


def load(url: str, clients: int, actions: int, tokens: dict[str, str]) -> tuple[list[tuple[float, int, str]], float]:
    """Every client's actions on its campaign at once; (latency, status, error) each, and the wall time."""
    results: list[tuple[float, int, str]] = []
    lock = threading.Lock()
    names = list(tokens)
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        chosen = [names[i % len(names)] for i in range(clients)]
        futures = [pool.submit(action_client, url, c, tokens[c], actions, lock, results) for c in chosen]
    for future in futures:
        future.result()  # a client's own failure, raised here
    return results, time.perf_counter() - started


def recorded_actions(url: str, tokens: dict[str, str]) -> int:
    """The actions the campaigns' logs hold (each recorded action names its own id)."""
    total = 0
    for campaign, token in tokens.items():
        _status, log = call(url, f"/api/campaigns/{campaign}/log", token=token)
        total += len({r["data"]["action"] for r in log if r["kind"] != "Created"})
    return total


def sqlite_main(opts: argparse.Namespace) -> None:
    """One `tracker serve` on SQLite against a bare endpoint doing one INSERT per request."""
    from tracker.service.application import Tracker
    from tracker.service.players import Players

    work = Path(tempfile.mkdtemp(prefix="bench-server-sqlite-"))
    db, keys = work / "league.db", work / "keys.db"
    tokens: dict[str, str] = {}
    with Tracker(str(db)) as t:
        players = Players(t.engine)
        for i in range(opts.campaigns):
            campaign = f"league-{i}"
            t.create(campaign, opts.scenario, dice="auto")
            tokens[campaign] = players.add(str(t.campaign_id(campaign)), "referee", [], True)
        with t.engine.connect() as conn:
            synchronous = int(conn.exec_driver_sql("PRAGMA synchronous").scalar() or 0)
            journal = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
    serve = [*TRACKER, "serve", "--db", str(db), "--keys", str(keys), "--port", "{port}", "--log-level", "warning"]
    if opts.profile:
        # The requests' work runs in worker threads, one at a time on a slot's tracker: profile
        # each slot's call (cProfile follows one thread).
        code = (
            "import cProfile, signal, sys, threading\n"
            "from tracker.cli.main import main\n"
            "from tracker.server import app\n"
            "p, lock, run = cProfile.Profile(), threading.Lock(), app.Slot.run\n"
            "def profiled(self, fn):\n"
            "    def call(t):\n"
            "        with lock:\n"
            "            return p.runcall(fn, t)\n"
            "    return run(self, call)\n"
            "app.Slot.run = profiled\n"
            "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\n"
            f"try: main()\nfinally: p.dump_stats({str(Path(opts.profile).resolve())!r})"
        )
        serve = [sys.executable, "-c", code, *serve[3:]]
    bare = [sys.executable, "-c", BARE_APP, str(work / "bare.db"), "{port}", str(synchronous)]
    runs: dict[str, list[tuple[list[tuple[float, int, str]], float]]] = {"tracker": [], "bare": []}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        server, url = start(serve, work, "tracker")
        procs.append(server)
        reference_proc, bare_url = start(bare, work, "bare")
        procs.append(reference_proc)
        bare_tokens = {f"bare-{i}": "" for i in range(opts.campaigns)}
        # Warm-up (imports, first connections), then the two sides interleaved round by round.
        warmup = 3
        load(url, 1, warmup, dict(list(tokens.items())[:1]))
        load(bare_url, 1, warmup, dict(list(bare_tokens.items())[:1]))
        before = recorded_actions(url, tokens)
        per_round = max(1, opts.actions // opts.rounds)
        for _ in range(opts.rounds):
            runs["tracker"].append(load(url, opts.clients, per_round, tokens))
            runs["bare"].append(load(bare_url, opts.clients, per_round, bare_tokens))
        recorded = recorded_actions(url, tokens) - before
    finally:
        for proc in procs:
            stop(proc)
    results = [r for rs, _ in runs["tracker"] for r in rs]
    bare_results = [r for rs, _ in runs["bare"] for r in rs]
    rate = len(results) / sum(w for _, w in runs["tracker"])
    bare_rate = len(bare_results) / sum(w for _, w in runs["bare"])
    ratios = [len(a) / wa / (len(b) / wb) for (a, wa), (b, wb) in zip(runs["tracker"], runs["bare"], strict=True)]
    ratio = sorted(ratios)[len(ratios) // 2]
    p95 = percentile([r[0] for r in results], 95)
    bare95 = percentile([r[0] for r in bare_results], 95)
    answered = sum(1 for _t, status, _e in results if status == 200)
    refused = [e for _t, status, e in results if status != 200]
    what = f"{opts.clients} x {per_round * opts.rounds}"
    rows = [
        (f"server on SQLite, {what} actions", f"{rate:.1f} act/s", f"{bare_rate:.0f} req/s bare", f"{ratio:.2f}x",
         ">= 0.5x", ratio >= 0.5),
        (f"server on SQLite, {what}, p95", f"{p95 * 1000:.0f} ms", f"{bare95 * 1000:.0f} ms bare", "", "<= 50 ms",
         p95 <= 0.05),
        ("actions answered 200 / recorded", f"{answered} / {recorded}", "", "", "equal", answered == recorded),
    ]  # fmt: skip
    header = ("target", "value", "reference", "ratio", "target", "met")
    shown = [(*r[:5], {True: "yes", False: "NO"}[r[5]]) for r in rows]
    widths = [max(len(str(r[i])) for r in [header, *shown]) for i in range(6)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    print(f"tracker serve on SQLite (journal {journal}, synchronous {synchronous} on both sides), {opts.scenario}")
    print(line)
    print("-" * len(line))
    for r in shown:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)))
    p50 = percentile([r[0] for r in results], 50)
    print(f"round ratios {', '.join(f'{r:.2f}' for r in ratios)}; p50 {p50 * 1000:.0f} ms")
    if refused:
        print(f"refused: {len(refused)} ({refused[0]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, help="concurrent clients (default 20; --sqlite: 4)")
    parser.add_argument("--actions", type=int, help="actions a client (default 100; --sqlite: 25)")
    parser.add_argument("--campaigns", type=int, help="campaigns (default 10; --sqlite: one a client)")
    parser.add_argument("--pg", default=PG)
    parser.add_argument("--sqlite", action="store_true", help="one server on SQLite against a bare endpoint")
    parser.add_argument("--rounds", type=int, default=5, help="--sqlite: interleaved rounds of both sides (default 5)")
    parser.add_argument("--scenario", default="north-sea-1914", help="--sqlite: the campaigns' scenario")
    parser.add_argument("--profile", metavar="FILE", help="--sqlite: profile the tracker server into FILE")
    opts = parser.parse_args()
    if opts.sqlite:
        opts.clients = opts.clients or 4
        opts.actions = opts.actions or 25
        opts.campaigns = opts.campaigns or opts.clients
        sqlite_main(opts)
        return
    opts.clients = opts.clients or 20
    opts.actions = opts.actions or 100
    opts.campaigns = opts.campaigns or 10

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
            futures = [
                pool.submit(client, urls[i % 2], f"league-{i % opts.campaigns}", tokens[f"league-{i % opts.campaigns}"],
                            opts.actions, lock, results)
                for i in range(opts.clients)
            ]  # fmt: skip
            for future in futures:
                future.result()  # a client's failure is shown, not swallowed
        wall = time.perf_counter() - started
        recorded = 0
        for campaign in tokens:
            _status, log = call(urls[0], f"/api/campaigns/{campaign}/log", token=tokens[campaign])
            # The server's own action at start (its key store takes over the seed the database
            # held, revealing it: D5) was asked by no client.
            recorded += len({r["data"]["action"] for r in log if r["kind"] not in ("Created", "SeedRevealed")})
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
