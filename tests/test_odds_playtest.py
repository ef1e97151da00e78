"""Defects found by checking `tracker odds` and `tracker luck` against an independent simulation
of the rules: each test fails on the code before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def test_asw_odds_name_the_detected_submarines_sunk_not_a_convoy_rule_AS4(tmp_path: Path) -> None:
    """An ASW combat that sank every detected submarine (an undetected one may be left) is not
    CV7's convoy battle with "no taking-part submarine left"."""
    forces = ["--attacker", "Britain:destroyer=2", "--defender", "Germany:submarine=2"]
    out = run(str(tmp_path / "none.db"), "odds", "asw", *forces)
    assert "CV7" not in out and "taking-part" not in out, out
    assert "the detected submarines sunk (AS4): attacker left: 2 destroyers; defender left: 1 submarine" in out, out


def test_escorts_weigh_the_battleships_that_search_too_CV3(tmp_path: Path) -> None:
    """CV3: battleships search convoys (at 2) and then fight (CV4). Germany's two battleships in
    Heligoland Bight bring the expected loss of its 2 NTR to 1.091, under 1.1, which the escorts
    and aircraft alone cannot (1.248): the advice must not say that nothing does."""
    db = str(tmp_path / "ns.db")
    run(db, "new", "a", "--scenario", "north-sea-1914")
    out = run(db, "odds", "escorts", "--zone", "Heligoland Bight", "--ntr-loss", "1.1")
    assert "no choice" not in out and "searching ships and aircraft" in out, out
    assert "2 battleships, 1 bomber, 1 cruiser, 2 destroyers (cost 80): expected NTR lost 1.091" in out, out


def test_one_position_enumerated_reads_in_the_singular(tmp_path: Path) -> None:
    """Two transports cannot hit each other (NC6): one position, not "1 positions"."""
    forces = ["--attacker", "Germany:transport=1", "--defender", "Britain:transport=1"]
    out = run(str(tmp_path / "none.db"), "odds", "naval", *forces)
    assert "1 position enumerated; nothing truncated." in out and "1 positions" not in out, out


def test_a_convoy_without_escorts_has_its_odds_CV2(tmp_path: Path) -> None:
    """CV2: the NTR owner rolls merchant defence whether or not it has ships there, so an
    unescorted convoy is named by its owner alone; two U-boats on 3 NTR destroy
    0.99 * E[min(X1 + X2, 3)] + 0.01 * 1.3 = 2.1514 expected (CV5)."""
    db = str(tmp_path / "none.db")
    for owner in ("Britain", "Britain:"):
        forces = ["--attacker", "Germany:submarine=2", "--defender", owner, "--ntr", "3"]
        data = json.loads(run(db, "odds", "convoy", *forces, "--json"))
        assert data["expected"]["ntr_destroyed"] == pytest.approx(2.1514, abs=1e-12), owner
        assert data["expected"]["attacker_units_lost"] == pytest.approx(0.01, abs=1e-12), owner
    out = run(db, "odds", "convoy", "--attacker", "Germany:submarine=2", "--ntr", "3", code=2)
    assert out.count("\n") == 1 and "--defender NATION, the NTR owner" in out, out
    # Elsewhere a side without units is still refused in one line.
    out = run(db, "odds", "naval", "--attacker", "Germany:submarine=2", "--defender", "Britain", code=2)
    assert out.strip() == "Error: a force is NATION:TYPE=N[,TYPE=N...], got 'Britain'", out


def test_need_counts_only_aircraft_that_can_land_after_the_battle_F7(tmp_path: Path) -> None:
    """DE-FT1 (Northern Germany, range 4) reaches the Irish Sea in 4 moves and then has no range
    left to land, so it is lost for certain (F7): the advice offered it as "1 fighter (cost 10):
    100%". DE-BM1 (Flanders, range 6) flies 3 there and 3 back."""
    db = str(tmp_path / "ns.db")
    run(db, "new", "a", "--scenario", "north-sea-1914")
    data = json.loads(run(db, "odds", "need", "--zone", "Irish Sea", "--win", "0.5", "--json"))
    assert [(r["unit"], r["steps"]) for r in data["reachable"]] == [("DE-BM1", 3)]
    assert data["force"]["counts"] == {"bomber": 1}
