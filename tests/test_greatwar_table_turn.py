"""The whole war (`great-war-1914`) played at one table: the commands `next:` suggests,
followed literally as a player copies them."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import cli_on


@pytest.fixture
def run(tmp_path: Path) -> Callable[..., str]:
    run = cli_on(tmp_path / "war.db")
    run("new", "war", "--scenario", "great-war-1914")
    run("next", "--to", "combat_movement")
    return run


def _suggested(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("  next: ")]
    return line.removeprefix("  next: ")


def test_f7_the_landing_suggested_for_a_stranded_bomber_is_a_flight_that_lands_it(run: Callable[..., str]) -> None:
    # It was `tracker move DE-BM1 --to ZONE`: typed as it stands, refused ("unknown zone
    # 'ZONE' (did you mean 'Panama Canal Zone'?"); and no zone beside Skagerrak is one to land on.
    run("move", "DE-BM1", "--path", "Heligoland Bight,Skagerrak")
    landing = "tracker move DE-BM1 --path 'Heligoland Bight,Northwest Germany'"
    assert _suggested(run("next", "--to", "noncombat_movement")) == f"{landing}, or tracker next --confirm-losses"
    assert _suggested(run("pending")) == f"{landing}, or tracker next --confirm-losses"
    assert "Skagerrak -> Heligoland Bight -> Northwest Germany" in run(*shlex.split(landing)[1:])
    assert "round 1, Germany: placement" in run("next")


def test_f7_with_no_range_left_the_landing_keeps_the_form_to_fill_in(run: Callable[..., str]) -> None:
    # All six zones of its range flown, out at sea: no flight lands it, the loss is confirmed.
    run("move", "DE-BM1", "--path", "Heligoland Bight,Skagerrak,Heligoland Bight,Skagerrak,Heligoland Bight,Skagerrak")
    out = run("next", "--to", "noncombat_movement")
    assert _suggested(out) == "tracker move DE-BM1 --to ZONE, or tracker next --confirm-losses"
    assert "DE-BM1" in run("next", "--confirm-losses")


def test_pu2_show_names_a_sea_zones_ports_as_ports(run: Callable[..., str]) -> None:
    # "Coast: Crimea" for a sea zone that touches Northern Anatolia and the Caucasus too.
    out = run("show", "Eastern Black Sea")
    assert "Ports (PU2): Crimea" in out
    assert "Coast" not in out
    assert "Ships placed in (PU2): " in run("show", "Crimea")
