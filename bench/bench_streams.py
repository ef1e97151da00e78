"""Event streams that cost little: 200 open streams on one campaign against a real
`tracker serve`, and the server's CPU time per second idle and per recorded action.

Run as ``python bench/bench_streams.py [--streams 200] [--idle 10] [--actions 20]
[--pg postgresql+psycopg://postgres@127.0.0.1:5432/test]``. Without --pg the campaign is in a
SQLite file; with it, in a PostgreSQL database of its own (dropped at the end). The streams
are plain sockets held open by this process; the actions are recorded by this process
straight into the database (as another server process or the command line would), so the
server's CPU goes to noticing them and telling every stream. Afterwards each stream's bytes
are read: every stream must have been told the last version.

The reference is the figure of the tracker before the shared watch (each open stream polled
the database twice every 0.5 s), measured with this script on the same machine; the ratio is
value / reference. It only measures and prints; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

PG = os.environ.get("TRACKER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
TRACKER = [sys.executable, "-c", "from tracker.cli.main import main; main()"]
TICKS = os.sysconf("SC_CLK_TCK")
# Before the shared watch (every stream polled the database twice every 0.5 s): 200 streams
# on one campaign, (CPU seconds per second idle, CPU seconds per action), measured with this
# script against the tracker as it was, on a 2-core machine.
BEFORE = {"sqlite": (0.239, 0.0353), "postgresql": (0.418, 0.0319)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_server(db: str, work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    out = (work / "server.log").open("wb")
    proc = subprocess.Popen(
        [*TRACKER, "serve", "--db", db, "--keys", str(work / "keys.db"), "--port", str(port)],
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=work,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"tracker serve exited: {(work / 'server.log').read_text()}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5):
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


class Streams:
    """`count` event streams held open on raw sockets; their bytes drained as they come."""

    def __init__(self, url: str, path: str, token: str, count: int) -> None:
        host, port = url.removeprefix("http://").split(":")
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n"
        ).encode()
        self.selector = selectors.DefaultSelector()
        self.received: dict[socket.socket, bytearray] = {}
        for _ in range(count):
            sock = socket.create_connection((host, int(port)))
            sock.sendall(request)
            sock.setblocking(False)
            self.selector.register(sock, selectors.EVENT_READ)
            self.received[sock] = bytearray()

    def drain(self, seconds: float) -> None:
        """Read whatever the streams send for `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            for key, _ in self.selector.select(timeout=min(left, 0.2)):
                sock: Any = key.fileobj
                try:
                    chunk = sock.recv(65536)
                except BlockingIOError:
                    continue
                self.received[sock] += chunk

    def last_versions(self) -> list[int]:
        """The last version each stream was told (0 for none)."""
        out = []
        for data in self.received.values():
            seen = re.findall(rb'data: \{"version": (\d+)\}', bytes(data))
            out.append(int(seen[-1]) if seen else 0)
        return out

    def close(self) -> None:
        for sock in self.received:
            self.selector.unregister(sock)
            sock.close()


def act(t: Any, cid: Any) -> None:
    """One action that is always legal: pass the convoy attacks the phase waits for, or end it."""

    def step(c: Any, _d: Any) -> None:
        opened = c.convoy_attacks_open()
        if opened:
            c.convoy_pass(next(iter(opened)))
        else:
            c.advance()

    t.execute(cid, step)


def measure(db: str, opts: argparse.Namespace, work: Path) -> dict[str, Any]:
    from tracker.service.application import Tracker
    from tracker.service.players import Players

    with Tracker(db) as t:
        t.create("watched", "north-sea-1914", dice="auto")
        cid = t.campaign_id("watched")
        token = Players(t.engine).add(str(cid), "watcher", [], False, spectator=True)
        proc, url = start_server(db, work)
        streams = None
        try:
            streams = Streams(url, "/api/campaigns/watched/events/stream", token, opts.streams)
            streams.drain(3.0)  # every stream subscribed and told the version once
            before = cpu_seconds(proc.pid)
            started = time.monotonic()
            streams.drain(opts.idle)
            idle = (cpu_seconds(proc.pid) - before) / (time.monotonic() - started)
            before = cpu_seconds(proc.pid)
            started = time.monotonic()
            for _ in range(opts.actions):
                act(t, cid)
                streams.drain(opts.gap)
            streams.drain(2.0)
            spent = cpu_seconds(proc.pid) - before - idle * (time.monotonic() - started)
            last = t.recorder.last_version(cid)
            told = sum(1 for v in streams.last_versions() if v == last)
        finally:
            if streams is not None:
                streams.close()
            stop(proc)
    return {"idle": idle, "action": spent / opts.actions, "told": told}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds measured idle")
    parser.add_argument("--actions", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between actions")
    parser.add_argument("--pg", nargs="?", const=PG, default=None, help="PostgreSQL server URL")
    opts = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-streams-"))
    admin = name = None
    if opts.pg:
        import psycopg
        from sqlalchemy.engine import make_url

        admin = opts.pg.replace("postgresql+psycopg://", "postgresql://")
        name = f"bench_streams_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        db = make_url(opts.pg).set(database=name).render_as_string(hide_password=False)
    else:
        db = str(work / "streams.db")
    kind = "postgresql" if opts.pg else "sqlite"
    try:
        got = measure(db, opts, work)
    finally:
        if admin and name:
            import psycopg

            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(f"{opts.streams} open streams on one campaign, one `tracker serve` process, {kind}", flush=True)
    sys.path.insert(0, str(Path(__file__).parent))
    from run import Table  # the house table: value, reference, ratio, target, met

    idle_ref, action_ref = BEFORE[kind]
    table = Table()
    table.add(
        "server CPU per second, idle",
        f"{got['idle'] * 1000:.0f} ms/s",
        f"{idle_ref * 1000:.0f} ms/s",
        got["idle"] / idle_ref,
        "< 1/10 of before",
        got["idle"] < idle_ref / 10,
    )
    table.add(
        "server CPU per recorded action",
        f"{got['action'] * 1000:.1f} ms",
        f"{action_ref * 1000:.1f} ms",
        got["action"] / action_ref,
        "< before",
        got["action"] < action_ref,
    )
    table.add(
        "streams told the last version",
        f"{got['told']} / {opts.streams}",
        "-",
        None,
        "all",
        got["told"] == opts.streams,
    )
    print(table.render())
    print(json.dumps({k: round(v, 4) for k, v in got.items()}))


if __name__ == "__main__":
    main()
