"""NC1 as written: "A naval battle is due in every sea zone where the moving nation moved naval
or air units in combat_movement into a zone holding enemy surface ships". Submarines are naval
units (F1): moved in among enemy surface ships, they make a battle due there, as in the house
rules' "continue movement to their original destination (which may involve combat)". One whose
move an interception ended (SM4: it submerged or retreated) did not move in to attack. A zone
holding only enemy submarines still calls for optional ASW combat (AS1).

A campaign recorded before the ruleset said so (`[naval_combat] submarines_arriving_fight`)
keeps the rule it was refereed by: its submarines lay among enemy ships without a battle.
"""

from __future__ import annotations

import copy
import gzip
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.errors import RuleViolation
from domain.ruleset import load_ruleset
from tests import test_interception as sm
from tests.support import advance as advance_passing
from tracker.cli.main import cli
from tracker.service.application import Tracker

_, RULESET = load_ruleset("twtea-3e")
FIXTURE = Path(__file__).parent / "fixtures" / "submarines-lying-in.jsonl.gz"
SNS = "Southern North Sea"


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def before_the_key() -> dict[str, Any]:
    data = copy.deepcopy(RULESET)
    del data["naval_combat"]["submarines_arriving_fight"]
    return data


def to_naval_combat(c: Any) -> None:
    while c.phase != "naval_combat":
        advance_passing(c)


def test_nc1_submarines_moved_in_among_enemy_surface_ships_make_a_battle_due(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "t", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "de-ss1", "de-ss2", "--to", SNS)  # GB-CA2, GB-DD3-5 are there
    run(db, "next")
    assert "naval battle due in Southern North Sea" in run(db, "pending")
    events = len(run(db, "log").splitlines())
    out = run(db, "next", code=1)
    assert out.startswith("Error: T4: naval combat cannot end yet: naval battle due in Southern North Sea"), out
    assert len(run(db, "log").splitlines()) == events, "a refused action records nothing"
    run(db, "battle", "start", "--zone", SNS)
    assert "Re-refereed" in run(db, "verify")


def test_nc1_a_submarine_that_submerged_in_an_interception_did_not_move_in_to_attack() -> None:
    c = sm.campaign()
    b = sm.detected_round(c, sm.THREE, ["DE-SS4", "DE-SS5"])
    c.battle_auto(b, sm.dice(9, 9, 9, 9))  # both submerge (SM4) in the Southern North Sea
    assert sm.at(c, *sm.THREE) == [sm.DOVER, SNS, SNS] and c.movement_ended["DE-SS4"] == "SM4"
    to_naval_combat(c)
    assert c.due_naval_battles() == []


def test_nc1_a_zone_holding_only_enemy_submarines_calls_for_no_battle() -> None:
    c = sm.campaign()
    for uid in [u for u, x in c.units.items() if x["at"] == SNS]:
        c.units[uid]["at"] = "England"  # direct setup: the British ships leave
    c.units["GB-SS1"]["at"] = SNS  # direct setup: a British submarine alone
    c.move("Germany", ["DE-SS1"], [SNS])
    to_naval_combat(c)
    assert c.due_naval_battles() == []


def test_nc1_before_the_key_submarines_lay_among_enemy_ships_without_a_battle() -> None:
    c = sm.campaign(before_the_key())
    c.move("Germany", ["DE-SS1", "DE-SS2"], [SNS])
    to_naval_combat(c)
    assert c.due_naval_battles() == []
    advance_passing(c)  # T4 does not hold the phase open
    assert c.phase == "land_combat"


def test_nc1_a_log_recorded_before_the_key_imports_and_verifies(tmp_path: Path) -> None:
    """The fixture is the export of a campaign played by the tracker before the key: Germany
    moved DE-SS1 and DE-SS2 into the Southern North Sea among British ships and ended
    naval_combat without a battle, as it then could."""
    export = tmp_path / "old.jsonl"
    export.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    db = str(tmp_path / "old.db")
    run(db, "import", str(export))
    assert "Re-refereed" in run(db, "verify")
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert not c.ruleset.submarines_arriving_fight
        assert "submarines_arriving_fight" not in c.ruleset_data["naval_combat"]
        assert c.units["DE-SS1"]["at"] == SNS and not c.fought


def test_nc1_refused_without_the_battle_on_the_aggregate() -> None:
    c = sm.campaign()
    c.move("Germany", ["DE-SS1"], [SNS])
    to_naval_combat(c)
    assert c.due_naval_battles() == [SNS]
    with pytest.raises(RuleViolation) as info:
        advance_passing(c)
    assert info.value.rule == "T4"


# ----- NC1, AS1: enemy submarines alone call for ASW combat -----


def submarine_alone(ruleset: dict[str, Any] | None = None) -> Any:
    """Germany's naval_combat with DE-DD1 beside GB-SS1, alone in the Southern North Sea."""
    c = sm.campaign(ruleset)
    for uid in [u for u, x in c.units.items() if x["at"] == SNS]:
        c.units[uid]["at"] = "England"  # direct setup: the British ships leave
    c.units["GB-SS1"]["at"] = SNS  # direct setup: a British submarine alone
    c.units["DE-DD1"]["at"] = SNS  # direct setup: a German destroyer beside it
    to_naval_combat(c)
    return c


def test_nc1_as1_a_naval_battle_on_enemy_submarines_alone_is_refused_for_asw_combat() -> None:
    c = submarine_alone()
    before = c.version, len(c.pending_events)
    with pytest.raises(RuleViolation) as refused:
        c.naval_start("Germany", SNS)
    assert refused.value.rule == "NC1"
    assert str(refused.value).endswith(
        "Southern North Sea holds only enemy submarines (GB-SS1): that calls for ASW combat (AS1), not a naval "
        "battle: tracker asw start --zone 'Southern North Sea'"
    )
    assert (c.version, len(c.pending_events)) == before, "a refused action records nothing"
    c.asw_start("Germany", SNS)
    assert c.battles["1"]["kind"] == "asw"


def test_nc1_nc6_submarines_that_stopped_to_attack_fight_enemy_submarines_alone() -> None:
    c = submarine_alone()
    c.units["DE-SS1"]["at"] = SNS
    c.attack_zones.append(SNS)  # direct setup: DE-SS1 stopped there to attack (SM5)
    assert c.due_naval_battles() == [SNS]
    c.naval_start("Germany", SNS)
    assert c.battles["1"]["kind"] == "naval"


def test_nc1_before_the_key_a_naval_battle_on_submarines_alone_could_start() -> None:
    data = copy.deepcopy(RULESET)
    del data["naval_combat"]["submarines_alone_call_for_asw"]
    c = submarine_alone(data)
    assert not c.ruleset.submarines_alone_call_for_asw
    c.naval_start("Germany", SNS)
    assert c.battles["1"]["kind"] == "naval"
