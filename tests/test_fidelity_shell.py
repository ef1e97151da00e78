"""A session of commands in one process (`tracker shell`) and the same commands, each in a
process of its own, print the same: what one command leaves in the process (the state of a
battle its last step made) is what the next process reads back from the log. The script
includes the CV4 case: searchers named out of ID order, whose round goes straight to its dice.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support import TRACKER, cli_on
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session

SEARCH = "convoy search 1 --units GB-DD1,GB-BM1 --dice 1,1"  # CV3: named out of ID order
# DE-SS2 leaves the Central North Sea, so that DE-SS1 fights alone there: with one submarine
# and one detecting ship, every shot of the round has a single target and the search goes
# straight on to the round's dice.
SCRIPT = [
    "next --to combat_movement --nation Germany",
    'move DE-SS2 --to "Heligoland Bight"',
    "next --to collect_resources --nation Germany",
    "convoy pass --by Britain",
    "next --to collect_resources --nation Britain",
    'convoy declare --by Germany --zone "Central North Sea" --subs DE-SS1',
    "pending --json",
    "convoy roll 1 --dice 1,1",
    SEARCH,
    "pending --json",
    "state --json",
    # The first die decides: 5 hits for the bomber (6), misses for the destroyer (3).
    "battle fire 1 --dice 5,9,9",
    "pending --json",
    "state --json",
]


def new_campaign(db: Path) -> None:
    """The campaign the script plays, made before it (by the CLI, in this process: no
    interpreter to start)."""
    cli_on(db)("new", "cv4", "--scenario", "north-sea-1914", "--dice", "manual")


def in_processes(db: Path) -> list[tuple[int, str]]:
    """Each line of the script in a process of its own: (exit status, output)."""
    outputs = []
    for line in SCRIPT:
        done = subprocess.run([*TRACKER, "--db", str(db), *shlex.split(line)], capture_output=True, text=True)
        outputs.append((done.returncode, done.stdout + done.stderr))
    return outputs


def in_one_session(db: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[int, str]]:
    """The script as `tracker shell` runs it: every line in this process, on one database
    kept open."""
    obj = Context(str(db), None)
    session = Session(cli, obj)
    outputs = []
    try:
        for line in SCRIPT:
            code = session.dispatch(line)
            captured = capsys.readouterr()
            outputs.append((code, captured.out + captured.err))
    finally:
        obj.close()
    return outputs


def test_cv4_a_shell_session_and_separate_processes_print_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    apart, together = tmp_path / "apart.db", tmp_path / "together.db"
    new_campaign(apart)
    new_campaign(together)
    # The processes run one after another while this one plays the session on its own database.
    with ThreadPoolExecutor(max_workers=1) as processes:
        running = processes.submit(in_processes, apart)
        session = in_one_session(together, capsys)
        separate = running.result()
    for line, (code, out), (code_in_shell, out_in_shell) in zip(SCRIPT, separate, session, strict=True):
        assert code == code_in_shell == 0, f"{line}: {out} | {out_in_shell}"
        assert out_in_shell == out, f"`{line}` prints otherwise in a shell than in a process of its own"
    # CV4 as amended: the detecting units by ID, then the submarine; the dice went so (the
    # first die, a 5, was the bomber's: a hit that sank DE-SS1).
    searched = SCRIPT.index(SEARCH)
    assert (
        "3 dice, one per firing unit in this order: GB-BM1, GB-DD1, DE-SS1; Britain records them, Germany's too [CV4]"
        in session[searched][1]
    )
    (item,) = json.loads(session[searched + 1][1])
    assert item["dice"]["order"] == ["GB-BM1", "GB-DD1", "DE-SS1"]
    state = json.loads(session[-1][1])
    assert "DE-SS1" not in {u["id"] for u in state["units"]}
