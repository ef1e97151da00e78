"""The whole war (`great-war-1914`) at one table, round two: an air unit that must land (F7) is
told the flight that lands it wherever the game says what it waits for, not only by `pending`
and `next`: after a move, in the refusal of `next`, in a recording command's --json."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import cli_on

LANDING = "tracker move DE-BM1 --path 'Heligoland Bight,Northwest Germany'"


@pytest.fixture
def run(tmp_path: Path) -> Callable[..., str]:
    """DE-BM1 flew two of its six zones out to the Skagerrak, and noncombat_movement is open."""
    run = cli_on(tmp_path / "war.db")
    run("new", "war", "--scenario", "great-war-1914")
    run("next", "--to", "combat_movement")
    run("move", "DE-BM1", "--path", "Heligoland Bight,Skagerrak")
    run("next", "--to", "noncombat_movement")
    return run


def _suggested(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("  next: ")]
    return line.removeprefix("  next: ")


def test_f7_a_move_is_followed_by_the_flight_that_lands_the_bomber(run: Callable[..., str]) -> None:
    # It was `tracker move DE-BM1 --to ZONE` after any move of the phase: refused as typed.
    out = run("move", "DE-SS1", "--to", "Dogger Bank")
    assert _suggested(out) == f"{LANDING}, or tracker next --confirm-losses"


def test_f7_the_refusal_of_next_names_the_flight(run: Callable[..., str]) -> None:
    out = run("next", code=1)
    assert f"to close it: {LANDING}, or tracker next --confirm-losses" in out
    assert "--to ZONE" not in out
    # Copied as it stands, the flight lands the bomber, and the phase may end.
    assert "Northwest Germany" in run(*shlex.split(LANDING)[1:])
    assert "Germany: placement" in run("next")


def test_f7_a_recording_commands_json_names_the_flight(run: Callable[..., str]) -> None:
    recorded = json.loads(run("move", "DE-SS1", "--to", "Dogger Bank", "--json"))
    (item,) = [i for i in recorded["pending"] if i["kind"] == "air_landing"]
    assert item["landing"] == {"unit": "DE-BM1", "path": ["Heligoland Bight", "Northwest Germany"]}
    assert item["command"] == f"{LANDING}, or tracker next --confirm-losses"


def test_f7_the_landing_is_no_part_of_what_is_recorded(run: Callable[..., str]) -> None:
    # The pending item is worked out from the board each time: no event holds it.
    run("move", "DE-SS1", "--to", "Dogger Bank")
    log = json.loads(run("log", "--json"))
    assert not [e for e in log if "landing" in json.dumps(e.get("data", {}))]
