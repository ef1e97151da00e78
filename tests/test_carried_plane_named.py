"""An aircraft named in a move together with the carrier it sits on (F4, F7): refused, as naval
and air units move separately, but the refusal says that it is aboard and goes with the carrier,
and gives the command without it (moving the carrier alone says "carrying GB-BM1")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

SNS, DOVER, CHANNEL = "Southern North Sea", "Dover Strait", "English Channel"


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def last_seq(db: str) -> int:
    return int(json.loads(run(db, "state", "--json"))["seq"])


@pytest.fixture
def db(tmp_path: Path) -> str:
    """Great War, round 1, Britain's combat movement: GB-BM1 sits on GB-CV1 in the Southern
    North Sea."""
    path = str(tmp_path / "w.db")
    run(path, "new", "war", "--scenario", "great-war-1914")
    run(path, "next", "--to", "combat_movement", "--nation", "Britain")
    return path


@pytest.mark.parametrize(
    ("where", "command"),
    [
        (["--to", DOVER], "tracker move GB-CV1 --to 'Dover Strait'"),
        (["--path", f"{DOVER},{CHANNEL}"], "tracker move GB-CV1 --path 'Dover Strait,English Channel'"),
    ],
)
def test_f4_a_plane_named_with_its_carrier_is_said_to_go_with_it(db: str, where: list[str], command: str) -> None:
    before = last_seq(db)
    out = run(db, "move", "GB-CV1", "GB-BM1", *where, code=1)
    assert out.strip() == f"Error: F4: GB-BM1 is aboard GB-CV1 and goes with it without being named: {command}"
    assert last_seq(db) == before
    # The command given moves the carrier, and the plane with it.
    assert "carrying GB-BM1" in run(db, "move", "GB-CV1", *where)


def test_f4_a_plane_left_behind_by_the_ships_named_is_still_told_to_move_separately(db: str) -> None:
    out = run(db, "move", "GB-CA4", "GB-BM1", "--to", DOVER, code=1)
    assert out.strip() == "Error: F4: move naval and air units separately"
