"""The viewer's board page of a long campaign, served by a real `tracker serve`: the page a
player opens (`/campaigns/NAME/board`, the map drawn as SVG with every unit), timed from the
request to the last byte of the answer.

Run as ``python bench/bench_viewer.py DB CAMPAIGN [--runs 5]``, or through bench/run.py
(target 9). The database is copied into a scratch folder first: the server takes the dice
seed the database holds into its own key store at the first use of the campaign, which would
add an action to a campaign the other targets reuse. Figures: the first page after the server
starts (its caches cold, the read models caught up from the log if they lag), then the
median of `runs` more of the board now and of a past turn's board. Target: the first page
under a second. It only measures and prints; nothing is asserted.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

TRACKER = [sys.executable, "-c", "from tracker.cli.main import main; main()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch(url: str, token: str) -> tuple[float, int]:
    """Seconds from the request to the answer's last byte, and the answer's size in bytes."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as answer:
        body = answer.read()
        if answer.status != 200:
            raise SystemExit(f"{url}: {answer.status}")
    return time.perf_counter() - started, len(body)


def referee_token(db: Path, name: str) -> tuple[str, int]:
    """A referee's token for the campaign (every page may be read with it), and a past turn:
    the one holding the middle event (a turn played, not one passed over, F8)."""
    from tracker.service.application import Tracker
    from tracker.service.players import Players

    with Tracker(str(db)) as t:
        cid = t.campaign_id(name)
        with t.views(cid) as v:
            turn = int(v.position(t.load(cid).version // 2).turn)
        return Players(t.engine).add(str(cid), "bench-referee", [], True), turn


def measure(db: Path, name: str, scratch: Path, runs: int = 5) -> dict[str, Any]:
    """The board page's times against a served copy of `db` (see the module's docstring)."""
    work = Path(tempfile.mkdtemp(prefix="viewer_", dir=scratch))
    copy = work / "league.db"
    shutil.copyfile(db, copy)
    token, turn = referee_token(copy, name)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (work / "server.log").open("wb")
    proc = subprocess.Popen(
        [*TRACKER, "serve", "--db", str(copy), "--port", str(port), "--keys", str(work / "keys.db")],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=work,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"tracker serve exited: {(work / 'server.log').read_text()}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("tracker serve did not answer within 120 s") from None
                time.sleep(0.1)
        page = f"{url}/campaigns/{urllib.parse.quote(name)}/board"
        first, size = fetch(page, token)
        now = [fetch(page, token)[0] for _ in range(runs)]
        then = [fetch(f"{page}?turn={turn}", token)[0] for _ in range(runs)]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(work, ignore_errors=True)
    return {
        "first_s": first,
        "now_s": statistics.median(now),
        "then_s": statistics.median(then),
        "turn": turn,
        "bytes": size,
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", help="a SQLite file of bench/run.py's campaigns (it is copied, never changed)")
    parser.add_argument("campaign")
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench_viewer_"))
    try:
        r = measure(Path(opts.db), opts.campaign, scratch, opts.runs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(
        f"board page: first {r['first_s'] * 1000:.0f} ms ({r['bytes'] / 1e3:.0f} kB), then the median of {r['runs']}: "
        f"now {r['now_s'] * 1000:.0f} ms, turn {r['turn']} {r['then_s'] * 1000:.0f} ms; target: first < 1 s"
    )


if __name__ == "__main__":
    main()
