"""`tracker verify`: the head it prints and checks, what it says about snapshots, views and
the dice seed on an honest campaign (the tampering it catches: tests/reliability/test_tamper.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import advance as advance_passing
from tracker.cli.main import cli
from tracker.service.application import SNAPSHOT_INTERVAL, Tracker


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.output


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "v.db"
    assert run(path, "new", "autumn", "--scenario", "north-sea-1914")[0] == 0
    assert run(path, "research", "advanced_submarine")[0] == 0
    assert run(path, "next")[0] == 0
    return path


def test_verify_prints_the_head_and_checks_it_later(db: Path) -> None:
    code, out = run(db, "verify")
    assert code == 0, out
    head = out.strip().splitlines()[-1].removeprefix("Head: ")
    seq, digest = head.split(":")
    report = json.loads(run(db, "verify", "--json")[1])
    assert report["head"] == {"seq": int(seq), "hash": digest} and report["ok"]
    assert run(db, "next")[0] == 0
    # The log grew: the head posted earlier is still in it, full or abbreviated.
    for posted in (head, f"{seq}:{digest[:16]}"):
        code, out = run(db, "verify", "--head", posted)
        assert code == 0 and f"Matches the posted head: event {seq}" in out, out


@pytest.mark.parametrize("bad", ["42", "x:abc", "3:xyz0123456789abcdef", "3:abc", f"{2**63}:{'a' * 64}"])
def test_a_malformed_head_is_bad_usage(db: Path, bad: str) -> None:
    code, out = run(db, "verify", "--head", bad)
    assert code == 2 and out.startswith("Error: --head") and out.count("\n") == 1, out


def test_export_and_reports_print_the_head(db: Path, tmp_path: Path) -> None:
    head = run(db, "verify")[1].strip().splitlines()[-1].removeprefix("Head: ")
    code, out = run(db, "export", str(tmp_path / "e.jsonl"))
    assert code == 0 and f"head {head}" in out, out
    code, out = run(db, "report", "--turn", "1")
    assert code == 0 and f"`{head}`" in out and "tracker verify --head" in out, out


def test_snapshots_and_views_of_an_honest_campaign_match(tmp_path: Path, unique_name: str) -> None:
    path = tmp_path / "long.db"
    with Tracker(str(path)) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="manual").id
        for _ in range(SNAPSHOT_INTERVAL * 2 + 10):
            t.execute(cid, lambda c, d: advance_passing(c))
        t.catch_up(cid)
    code, out = run(path, "verify", "--projections")
    assert code == 0, out
    assert "2 snapshot(s) match the log" in out and "view rows match a rebuild of the log" in out


def test_an_imported_auto_campaign_verifies_without_its_seed(db: Path, tmp_path: Path) -> None:
    export = tmp_path / "e.jsonl"
    assert run(db, "export", str(export))[0] == 0
    other = tmp_path / "other.db"
    assert run(other, "import", str(export))[0] == 0
    code, out = run(other, "verify")
    assert code == 0 and "Imported campaign: its dice seed stayed with the exported copy" in out, out
