"""Crashes and concurrent writers, on SQLite and PostgreSQL: a writer killed with SIGKILL at a
random point never leaves half an action, and four writers at once lose and duplicate nothing."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any

from tracker.service.application import Tracker
from tracker.service.verify import verify_campaign

# Records actions until killed: a convoy battle declared and resolved in one action where
# one can be, a research roll in research phases, otherwise the next phase. Prints "ready"
# once it has recorded something, so the kill lands while it records.
_RECORDER = """
import sys
from domain.errors import TrackerError
from tracker.service.application import Tracker

def convoy(c, d):
    number = c.declare_convoy_attack("Germany", "Central North Sea", None)
    c.convoy_auto(number, d)

def research(c, d):
    c.research(c.nation, "advanced_submarine" if c.nation == "Germany" else "advanced_asw", d)

def advance(c, d):
    for nation in c.convoy_attacks_open():
        c.convoy_pass(nation)  # CV1, T4: an enemy that may attack convoys passes first
    c.advance()

with Tracker(sys.argv[1]) as t:
    cid = t.campaign_id(sys.argv[2])
    announced = False
    while True:
        for step in (convoy, research, advance):
            try:
                t.execute(cid, step)
                break
            except TrackerError:
                continue
        else:
            sys.exit("no action possible")
        if not announced:
            print("ready", flush=True)
            announced = True
"""

_WRITER = """
import sys
from tracker.service.application import Tracker
from tracker.service.performing import ConflictError

def advance(c, d):
    for nation in c.convoy_attacks_open():
        c.convoy_pass(nation)  # CV1, T4: an enemy that may attack convoys passes first
    c.advance()

done = conflicts = 0
with Tracker(sys.argv[1]) as t:
    cid = t.campaign_id(sys.argv[2])
    print("ready", flush=True)
    sys.stdin.readline()  # every writer starts at once
    while done < int(sys.argv[3]):
        try:
            t.execute(cid, advance)
            done += 1
        except ConflictError:
            conflicts += 1  # told it was not recorded: try again
print(done, conflicts)
"""


def _env() -> dict[str, str]:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _actions(events: list[Any]) -> dict[int, list[str]]:
    groups: dict[int, list[str]] = defaultdict(list)
    for e in events:
        groups[e.action].append(type(e).__name__)
    return groups


def _check_whole_actions(t: Tracker, cid: Any) -> int:
    """Every action is whole: a declared convoy battle ends in the same action, a research
    roll is paid for, and every action's events are contiguous from its first."""
    events = t.events(cid)  # the log read and decoded once, for both checks
    groups = _actions(events)
    seen: list[int] = []
    for e in events:
        if not seen or seen[-1] != e.action:
            assert e.action not in seen, f"action {e.action} is split"
            assert e.action == e.originator_version, f"action {e.action} begins at event {e.originator_version}"
            seen.append(e.action)
    for action, kinds in groups.items():
        if kinds[0] == "ConvoyAttackDeclared":
            assert kinds[-1] == "BattleEnded", f"action {action} stopped half-way: {kinds}"
        if "ResearchPaid" in kinds:
            assert "DiceRolled" in kinds, f"action {action} paid for research without its roll: {kinds}"
    return len(groups)


def test_kill_9_at_random_points_never_leaves_half_an_action(
    db_url: str, unique_name: str, figures: Any, size: Any
) -> None:
    kills = size(6, 40)
    backend = "PostgreSQL" if db_url.startswith("postgresql") else "SQLite"
    with Tracker(db_url) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="auto").id
    rng = random.Random(unique_name)
    for _ in range(kills):
        worker = subprocess.Popen(
            [sys.executable, "-c", _RECORDER, db_url, unique_name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        assert worker.stdout is not None
        line = worker.stdout.readline()
        assert line.strip() == "ready", (line, worker.stderr.read() if worker.stderr else "")
        time.sleep(rng.uniform(0, 0.3))
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
        assert worker.returncode == -signal.SIGKILL
        with Tracker(db_url) as t:
            report = verify_campaign(t, cid)
            assert report.ok, report.problem
            _check_whole_actions(t, cid)
    with Tracker(db_url) as t:
        actions = _check_whole_actions(t, cid)
        events = len(t.stored_events(cid))
        assert verify_campaign(t, cid, projections=True).ok
    figures.add(f"kill -9 ({backend})", kills=kills, actions=actions, events=events, half_recorded=0)


def test_four_concurrent_writers_lose_and_duplicate_nothing(
    db_url: str, unique_name: str, figures: Any, size: Any
) -> None:
    per_writer = size(50, 200)
    backend = "PostgreSQL" if db_url.startswith("postgresql") else "SQLite"
    with Tracker(db_url) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="manual").id
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, db_url, unique_name, str(per_writer)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for _ in range(4)
    ]
    for w in writers:
        assert w.stdout is not None and w.stdout.readline().strip() == "ready"
    for w in writers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.flush()
    done = conflicts = 0
    for w in writers:
        out, err = w.communicate(timeout=600)
        assert w.returncode == 0, err
        d, c = map(int, out.split())
        done, conflicts = done + d, conflicts + c
    with Tracker(db_url) as t:
        recorded = [e for e in t.events(cid) if type(e).__name__ == "PhaseAdvanced"]
        assert verify_campaign(t, cid).ok
    lost = done - len(recorded) if done > len(recorded) else 0
    duplicated = len(recorded) - done if len(recorded) > done else 0
    assert (lost, duplicated) == (0, 0)
    figures.add(
        f"concurrent writers ({backend})",
        writers=4,
        actions=done,
        conflicts_reported=conflicts,
        lost=lost,
        duplicated=duplicated,
    )
