"""`tracker luck` nation by nation: each unit lost is its owner's, each sinking the nation's whose
hit sank it, though a side is several allied nations (NC1's defenders, the submarines under
ASW combat, AS1); the side's totals are what the battle's odds and log give the side."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.analysis.luck_credit import sinkings
from tracker.cli.main import cli

SIDES = {"Germany": "Central Powers", "Austria-Hungary": "Central Powers", "Japan": "Entente"}


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


def yellow_sea(tmp_path: Path, dice: str) -> dict[str, Any]:
    """Japan attacks AH-CA3 and DE-DD6 in the Yellow Sea (great-war-1914, national turn 8)."""
    db = str(tmp_path / "l.db")
    run(db, "new", "r", "--scenario", "great-war-1914", "--dice", "manual")
    run(db, "next", "--to", "naval_combat", "--nation", "japan")
    run(db, "battle", "start", "--zone", "Yellow Sea")
    run(db, "battle", "auto", "1", "--dice", dice)
    data: dict[str, Any] = json.loads(run(db, "luck", "--json"))
    data["text"] = run(db, "luck")
    return data


def totals(data: dict[str, Any], nation: str) -> dict[str, tuple[float, float]]:
    t = data["nations"][nation]["total"]
    return {m: (t[m]["expected"], t[m]["actual"]) for m in ("units_sunk", "units_lost")}


def side_sums(data: dict[str, Any], nations: tuple[str, ...], metric: str) -> tuple[float, float]:
    cells = [data["nations"][n]["total"][metric] for n in nations]
    return sum(c["expected"] for c in cells), sum(c["actual"] for c in cells)


def check_side_totals(data: dict[str, Any]) -> None:
    """Germany's and Austria-Hungary's figures add up to their side's, Japan's are the attacker's."""
    (battle,) = data["battles"]
    ex, act = battle["expected"], battle["actual"]
    cp = ("Germany", "Austria-Hungary")
    lost, sunk = (
        (ex["defender_units_lost"], act["defender_units_lost"]),
        (ex["attacker_units_lost"], act["attacker_units_lost"]),
    )
    # The nations' figures are rounded to 4 places, the battle's are not.
    assert side_sums(data, cp, "units_lost") == pytest.approx(lost, abs=1e-4)
    assert side_sums(data, cp, "units_sunk") == pytest.approx(sunk, abs=1e-4)
    assert totals(data, "Japan")["units_lost"] == pytest.approx(sunk, abs=1e-4)
    assert totals(data, "Japan")["units_sunk"] == pytest.approx(lost, abs=1e-4)


def test_each_unit_lost_is_its_owners_NC1(tmp_path: Path) -> None:
    """The user's report: JP-BB3 sinks DE-DD6, then AH-CA3. Germany lost one of the one it
    had there (a destroyer: the odds lose it for certain), Austria-Hungary one of one."""
    data = yellow_sea(tmp_path, "7,10,10,10,10,10,10,1,10,10,10,10,10")
    assert totals(data, "Germany")["units_lost"] == (1.0, 1.0)
    assert totals(data, "Austria-Hungary")["units_lost"] == (1.0, 1.0)
    assert totals(data, "Japan")["units_sunk"] == (2.0, 2.0)
    check_side_totals(data)
    lines = data["text"].splitlines()
    assert next(x for x in lines if x.split()[:2] == ["Germany", "total"]).split()[5] == "1.00/1"
    assert next(x for x in lines if x.split()[:2] == ["Austria-Hungary", "total"]).split()[5] == "1.00/1"


def test_a_sinking_is_the_nation_whose_hit_sank_it_HA6(tmp_path: Path) -> None:
    """AH-CA3 hits (a 1) and DE-DD6 misses: the hit sinks JP-DD2, Austria-Hungary's sinking,
    not Germany's. The side's expected sinkings are shared by the hits each nation's shots
    should have scored: AH-CA3 two shots at 5 (1.0), DE-DD6 one at 3 (0.3)."""
    data = yellow_sea(tmp_path, "7,10,10,10,10,1,10,1,10,10,10,10")
    ah, de = totals(data, "Austria-Hungary"), totals(data, "Germany")
    assert ah["units_sunk"][1] == 1.0 and de["units_sunk"][1] == 0.0
    assert ah["units_lost"] == (1.0, 1.0) and de["units_lost"] == (1.0, 1.0)
    (battle,) = data["battles"]
    side = battle["expected"]["attacker_units_lost"]
    assert ah["units_sunk"][0] == pytest.approx(side * 10 / 13, abs=1e-4)
    assert de["units_sunk"][0] == pytest.approx(side * 3 / 13, abs=1e-4)
    check_side_totals(data)
    row = next(x for x in data["text"].splitlines() if x.split()[:2] == ["Austria-Hungary", "total"])
    assert row.split()[4].endswith("/1")


def record(seq: int, kind: str, **data: Any) -> dict[str, Any]:
    return {"seq": seq, "kind": kind, "undone_by": None, "data": data}


def shot(seq: int, unit: str, nation: str, value: int, target: int = 5, rule: str = "NC3") -> dict[str, Any]:
    return record(seq, "DiceRolled", unit=unit, roller=nation, rule=rule, values=[value], target=target, faces=10)


def credit(records: list[dict[str, Any]], nation_of: dict[str, str]) -> dict[int, dict[str, Fraction]]:
    def side(n: str) -> str:
        return SIDES[n]

    def lead(n: str) -> str:
        return "Japan" if SIDES[n] == "Central Powers" else "Germany"

    return sinkings(records, nation_of, side, lead)


UNITS = {"JP-DD2": "Japan", "JP-CA2": "Japan", "DE-DD6": "Germany", "AH-CA3": "Austria-Hungary", "DE-SS1": "Germany"}


def test_pooled_hits_are_shared_by_the_hits_each_nation_scored_in_the_volley_HA7() -> None:
    """Two pooled hits, one Austro-Hungarian and one German: the log does not say whose sank
    which, so each sinking is half each; a volley later, the hits of that volley alone count."""
    records = [
        record(1, "BattleAdvanced", step="fire"),
        shot(2, "AH-CA3", "Austria-Hungary", 1),
        shot(3, "DE-DD6", "Germany", 2, target=3),
        record(4, "NavalHitsScored", side="attacker", hits=2),
        record(5, "BattleAdvanced", step="casualties"),
        record(6, "UnitHit", unit="JP-DD2", sunk=True),
        record(7, "UnitHit", unit="JP-CA2", sunk=True),
        record(8, "BattleAdvanced", step="fire"),
        shot(9, "AH-CA3", "Austria-Hungary", 10),
        shot(10, "DE-DD6", "Germany", 1, target=3),
        record(11, "UnitHit", unit="JP-BB3", sunk=False),
    ]
    half = Fraction(1, 2)
    assert credit(records, UNITS) == {
        6: {"Austria-Hungary": half, "Germany": half},
        7: {"Austria-Hungary": half, "Germany": half},
    }


def test_a_selective_hit_is_its_firers_and_undone_rolls_do_not_count_HA1() -> None:
    """DE-SS1's shot (selective, HA1) sinks JP-DD2 in the same volley as AH-CA3's pooled hit
    sinks JP-CA2; an undone roll of DE-DD6 is no hit."""
    undone = {**shot(4, "DE-DD6", "Germany", 1, target=3), "undone_by": 9}
    records = [
        record(1, "BattleAdvanced", step="fire"),
        shot(2, "DE-SS1", "Germany", 1, target=4),
        shot(3, "AH-CA3", "Austria-Hungary", 1),
        undone,
        record(5, "TargetHit", firer="DE-SS1", target="JP-CA2", unit="JP-DD2"),
        record(6, "UnitHit", unit="JP-DD2", sunk=True),
        record(7, "UnitHit", unit="JP-CA2", sunk=True),
    ]
    assert credit(records, UNITS) == {6: {"Germany": 1}, 7: {"Austria-Hungary": 1}}


def test_merchant_defence_sinks_for_the_ntr_owner_CV2() -> None:
    records = [
        record(1, "BattleAdvanced", step="merchant_defence"),
        record(
            2,
            "DiceRolled",
            roller="Japan",
            rule="CV2",
            values=[10, 10],
            target=20,
            faces=10,
            success_when="total",
            outcome="success",
        ),  # fmt: skip
        record(3, "BattleAdvanced", step="merchant_casualty"),
        record(4, "UnitHit", unit="DE-SS1", sunk=True),
    ]
    assert credit(records, UNITS) == {4: {"Japan": 1}}


ASW_BOARD = """
[scenario]
name = "asw-two-nations"
title = "ASW against two nations' U-boats"
ruleset = "twtea-3e"
dice = "manual"
turn_order = ["Britain", "Germany", "Austria-Hungary"]

[sides]
"Central Powers" = ["Germany", "Austria-Hungary"]
"Entente" = ["Britain"]

[nations.Germany]
code = "DE"
resources = 10

[nations.Austria-Hungary]
code = "AH"
resources = 10

[nations.Britain]
code = "GB"
resources = 10

[map.sea."North Sea"]
adjacent = ["England"]

[map.land."England"]
owner = "Britain"

[[units]]
nation = "Germany"
type = "submarine"
at = "North Sea"

[[units]]
nation = "Austria-Hungary"
type = "submarine"
at = "North Sea"

[[units]]
nation = "Britain"
type = "destroyer"
at = "North Sea"
"""


def test_asw_each_submarine_is_its_owners_and_its_hit_its_own_AS4_HA1(tmp_path: Path) -> None:
    """GB-DD1 finds both U-boats (AS2) and sinks AH-SS1; AH-SS1's shot (HA1) sinks GB-DD1,
    DE-SS1 misses. Austria-Hungary lost AH-SS1 and sank GB-DD1; Germany, the side's lead,
    neither. The two submarines share the side's expected losses (one of each nation)."""
    (tmp_path / "asw.toml").write_text(ASW_BOARD)
    db = str(tmp_path / "asw.db")
    run(db, "new", "asw", "--scenario", str(tmp_path / "asw.toml"))
    run(db, "next", "--to", "naval_combat")
    run(db, "asw", "start", "--zone", "North Sea")
    run(db, "asw", "search", "1", "--units", "gb-dd1", "--dice", "1,1")
    run(db, "battle", "targets", "1", "--targets", "GB-DD1=AH-SS1")
    run(db, "battle", "fire", "1", "--dice", "1,1,10")
    data = json.loads(run(db, "luck", "--json"))
    ah, de, gb = (totals(data, n) for n in ("Austria-Hungary", "Germany", "Britain"))
    assert ah["units_lost"][1] == 1.0 and de["units_lost"][1] == 0.0
    assert ah["units_sunk"][1] == 1.0 and de["units_sunk"][1] == 0.0
    assert ah["units_lost"][0] == pytest.approx(de["units_lost"][0], abs=1e-4)
    (battle,) = data["battles"]
    ex = battle["expected"]
    cp = ("Germany", "Austria-Hungary")
    assert side_sums(data, cp, "units_lost") == pytest.approx((ex["defender_units_lost"], 1), abs=1e-4)
    assert side_sums(data, cp, "units_sunk") == pytest.approx((ex["attacker_units_lost"], 1), abs=1e-4)
    assert gb["units_lost"] == pytest.approx((ex["attacker_units_lost"], 1), abs=1e-4)
    assert gb["units_sunk"] == pytest.approx((ex["defender_units_lost"], 1), abs=1e-4)
