"""`next` says what the phase it opened waits for (T4): a naval battle due (NC1), a convoy attack
the enemy may declare (CV1), each with the command that answers it, as after any other action;
with --to only where the steps stopped, and never in --json output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

SNS = "Southern North Sea"


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "w.db")
    run(path, "new", "w", "--scenario", "north-sea-1914", "--dice", "manual")
    return path


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.stdout


def waiting_lines(db: str) -> list[str]:
    """What `pending` holds that keeps the phase open, as an action's "Waiting:" lines say it
    (the battles the phasing nation may start but need not are `pending`'s to list)."""
    items: list[dict[str, Any]] = json.loads(run(db, "pending", "--json"))
    lines = []
    for item in [i for i in items if i["blocking"]]:
        lines.append(f"Waiting: {item['text']}")
        lines.append(f"  next: {item['command']}")
    return lines


def test_t4_nc1_next_into_naval_combat_says_the_battle_due_and_its_command(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-SS3", "--to", SNS)
    out = run(db, "next").splitlines()
    assert out[0] == "round 1, Germany: naval combat   [T2]"
    assert out[1].startswith(f"Waiting: naval battle due in {SNS}: ") and out[1].endswith("[NC1]")
    assert out[2] == f"  next: tracker battle start --zone '{SNS}'"
    assert out[1:] == waiting_lines(db)


def test_t4_cv1_next_into_collect_resources_says_the_enemy_may_declare_a_convoy_attack(db: str) -> None:
    run(db, "next", "--to", "placement")
    out = run(db, "next").splitlines()
    assert out[0] == "round 1, Germany: collect resources   [T2]"
    assert out[1] == (
        "Waiting: Britain may declare a convoy attack on Germany's NTR in Heligoland Bight, or pass [CV1]"
    )
    assert out[2].startswith("  next: tracker convoy declare --by Britain --zone 'Heligoland Bight'")
    assert out[1:] == waiting_lines(db)


def test_t4_next_to_says_what_waits_only_where_it_stopped(db: str) -> None:
    out = run(db, "next", "--to", "collect_resources").splitlines()
    phases = ["purchase", "combat_movement", "naval_combat", "land_combat", "noncombat_movement", "placement"]
    # The phases in words, as the log says them; `--to` took the ID.
    steps = [f"round 1, Germany: {p.replace('_', ' ')}   [T2]" for p in [*phases, "collect_resources"]]
    assert out == steps + waiting_lines(db)
    assert sum(line.startswith("Waiting:") for line in out) == 1


def test_t4_next_into_a_phase_nothing_holds_open_prints_only_its_step(db: str) -> None:
    assert run(db, "next") == "round 1, Germany: purchase   [T2]\n"


def test_next_json_carries_no_waiting_lines(db: str) -> None:
    run(db, "next", "--to", "placement")
    out = run(db, "next", "--json")
    assert "Waiting:" not in out
    json.loads(out)
