"""`tracker projections rebuild` and `tracker export` killed with SIGKILL at random moments
(issue 24 §4), on SQLite and PostgreSQL: `verify` passes after each kill; the projections read
after it, and after a rerun, are those of a clean rebuild; an export file is never left
partial (it is written to a temporary file and renamed), and a rerun writes the whole export."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any
from uuid import UUID

from sqlalchemy import create_engine, select, text
from sqlalchemy.pool import NullPool

from projections.schema import VIEWS, campaigns
from tests.support import TRACKER
from tracker.service.application import Tracker
from tracker.service.verify import verify_campaign


def campaign_with_a_long_log(db_url: str, name: str, actions: int) -> UUID:
    """`actions` times `advance` as `tests.support.perform_advance` records it (each pass and
    the phase end an action by name, each in its own transaction), in one Tracker: the convoy
    attacks open are asked of the campaign as the action before left it (its `Outcome`), the
    state a load of the log would give, so the log is not loaded again before each action."""
    with Tracker(db_url) as t:
        campaign = t.create(name, "north-sea-1914", dice="manual")
        cid = campaign.id
        for _ in range(actions):
            for nation in campaign.convoy_attacks_open():
                t.perform(cid, "convoy pass", {"by": nation})
            campaign = t.perform(cid, "next", {"confirm_losses": False}).campaign
    return cid


def views_of(t: Tracker, cid: UUID) -> dict[str, list[tuple[Any, ...]]]:
    """Every view row of the campaign, its surrogate key left out (a rebuild may number it anew)."""
    with t.engine.connect() as conn:
        key = conn.execute(select(campaigns.c.key).where(campaigns.c.campaign_id == str(cid))).scalar_one()
        rows: dict[str, list[tuple[Any, ...]]] = {}
        for table in VIEWS:
            if table is campaigns:
                query = select(*(c for c in table.c if c.name != "key")).where(table.c.key == key)
            else:
                query = select(*(c for c in table.c if c.name != "c")).where(table.c.c == key)
            rows[table.name] = sorted(tuple(r) for r in conn.execute(query))
    return rows


def run(db_url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TRACKER, "--db", db_url, *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def killed_at_random(db_url: str, args: list[str], cwd: Path, rng: random.Random, span: float) -> bool:
    """Run `tracker ARGS`, SIGKILL it at a random moment around the end of `span` seconds (a
    clean run's time, mostly start-up: the kills aim at the work after it); whether the kill
    found it still running."""
    proc = subprocess.Popen(
        [*TRACKER, "--db", db_url, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd
    )
    time.sleep(rng.uniform(span * 0.5, span * 1.1))
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    settled(db_url)
    return proc.returncode == -signal.SIGKILL


def settled(db_url: str, timeout: float = 60.0) -> None:
    """Wait until the killed process's PostgreSQL backend has finished what it was doing.

    A COMMIT the process sent just before the kill is still carried out by its backend after
    the process is gone: read before that, the views are those before the commit, and the
    commit (a rebuild emptying the views) lands under the reads that follow. A user's next
    command sees one state or the other, whole; the test compares views, so it waits."""
    if not db_url.startswith("postgresql"):
        return
    engine = create_engine(db_url, poolclass=NullPool)
    try:
        deadline = time.monotonic() + timeout
        with engine.connect() as conn:
            while True:
                busy = conn.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
                        "AND state IS DISTINCT FROM 'idle'"
                    )
                ).scalar_one()
                conn.rollback()
                if not busy:
                    return
                assert time.monotonic() < deadline, f"{busy} backend(s) still busy {timeout:.0f} s after the kill"
                time.sleep(0.01)
    finally:
        engine.dispose()


def timed(db_url: str, args: list[str], cwd: Path) -> float:
    start = time.monotonic()
    done = run(db_url, *args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return time.monotonic() - start


def backend(db_url: str) -> str:
    return "PostgreSQL" if db_url.startswith("postgresql") else "SQLite"


def test_kill_9_of_projections_rebuild_leaves_views_a_rerun_makes_whole(
    db_url: str, unique_name: str, tmp_path: Path, figures: Any, size: Any
) -> None:
    kills = size(5, 40)
    cid = campaign_with_a_long_log(db_url, unique_name, size(300, 2000))
    span = timed(db_url, ["projections", "rebuild"], tmp_path)
    with Tracker(db_url) as t:
        clean = views_of(t, cid)
    rng = random.Random(unique_name)
    interrupted = mid_rebuild = 0
    for _ in range(kills):
        interrupted += killed_at_random(db_url, ["projections", "rebuild"], tmp_path, rng, span)
        # One Tracker, opened after the kill, for every read of this round (the rerun is
        # another process; the views are read on a fresh connection each time).
        with Tracker(db_url) as t:
            mid_rebuild += t.projector.position_now() < t.max_notification_id()
            # What every read does first: the views catch up from where the kill left them.
            t.catch_up(cid)
            report = verify_campaign(t, cid, projections=True)
            assert report.ok, report.problem
            assert views_of(t, cid) == clean
            again = run(db_url, "projections", "rebuild", cwd=tmp_path)
            assert again.returncode == 0 and again.stderr == "", again.stderr
            assert views_of(t, cid) == clean
    figures.add(
        f"kill -9 rebuild ({backend(db_url)})",
        kills=kills,
        kills_survived=kills,
        interrupted=interrupted,
        views_left_behind=mid_rebuild,
        views_differing_after_rerun=0,
    )


def whole_export(path: Path) -> list[str]:
    """The export's event lines, after checking the file is whole: as many events as its first
    line says, the last one with the head hash it names."""
    lines = path.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    events = lines[1:]
    assert len(events) == head["events"], f"{path.name}: {len(events)} of {head['events']} events"
    assert json.loads(events[-1])["hash"] == head["last_hash"]
    return events


def test_kill_9_of_export_never_leaves_a_partial_file(
    db_url: str, unique_name: str, tmp_path: Path, figures: Any, size: Any
) -> None:
    kills = size(5, 40)
    cid = campaign_with_a_long_log(db_url, unique_name, size(300, 2000))
    args = ["--campaign", unique_name, "export", "out.jsonl"]
    span = timed(db_url, args, tmp_path)
    clean = whole_export(tmp_path / "out.jsonl")
    rng = random.Random(unique_name)
    interrupted = new_files = 0
    for number in range(kills):
        # Half the kills over an earlier export, half with no file there yet.
        target = tmp_path / "out.jsonl"
        if number % 2:
            target.unlink()
        interrupted += killed_at_random(db_url, args, tmp_path, rng, span)
        if target.exists():
            assert whole_export(target) == clean
        else:
            new_files += 1
        with Tracker(db_url) as t:
            report = verify_campaign(t, cid)
            assert report.ok, report.problem
        again = run(db_url, *args, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert whole_export(target) == clean
    # A kill leaves its temporary file (hidden, beside the target); never the target half-written.
    leftovers = [p.name for p in tmp_path.glob(".out.jsonl.*.part")]
    figures.add(
        f"kill -9 export ({backend(db_url)})",
        kills=kills,
        kills_survived=kills,
        interrupted=interrupted,
        no_file_yet=new_files,
        partial_exports=0,
        temporary_files_left=len(leftovers),
    )
