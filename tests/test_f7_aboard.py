"""F7, SM2, AS1, NC1: an air unit at sea takes part in a search or battle only where it flew this
turn or aboard a carrier of its side with room; one whose carrier was sunk sits out until it
lands. A campaign recorded before the ruleset said so (`aircraft_need_a_carrier`) keeps the
rule it was refereed by.

Scenario north-sea-1914: GB-CV1 with GB-FT1 aboard, GB-BB1 and GB-BB2 in the Northern North
Sea. Setups the scenario does not offer are made by setting the in-memory state directly; each
such line says so.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.dice import commitment, new_seed
from domain.errors import RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing

NNS = "Northern North Sea"
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
BEFORE_THE_KEY = copy.deepcopy(RULESET)
del BEFORE_THE_KEY["naval_combat"]["aircraft_need_a_carrier"]


def at(nation: str, phase: str, ruleset: dict[str, Any] | None = None) -> Campaign:
    """A manual-dice campaign at round 1 in `nation`'s `phase`, Britain with Advanced ASW (TE4:
    every air unit searches), so that only F7 can keep GB-FT1 out."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, ruleset or RULESET, "manual", commitment(new_seed()))
    while (c.nation, c.phase) != (nation, phase):
        advance_passing(c)
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup: Advanced ASW acquired
    return c


def sink_the_carrier(c: Campaign) -> None:
    del c.units["GB-CV1"]  # direct setup: GB-CV1 sunk on Germany's turn; GB-FT1 stays at sea


def test_f7_as1_an_air_unit_aboard_its_carrier_searches_on_its_own_turn() -> None:
    c = at("Britain", "naval_combat")
    c.units["DE-SS1"]["at"] = NNS  # direct setup: a U-boat beside GB-CV1
    c.asw_start("Britain", NNS)
    assert "GB-FT1 at 4" in c.pending()[0]["text"]


def test_f7_as1_an_air_unit_whose_carrier_was_sunk_does_not_search() -> None:
    c = at("Britain", "naval_combat")
    c.units["DE-SS1"]["at"] = NNS  # direct setup
    sink_the_carrier(c)
    before = (c.version, len(c.pending_events))
    with pytest.raises(RuleViolation) as refused:
        c.asw_start("Britain", NNS)
    assert refused.value.rule == "AS1"
    assert "flown there in combat_movement or aboard its carriers" in refused.value.reason
    assert (c.version, len(c.pending_events)) == before, "a refused action records nothing"


def test_f7_an_air_unit_that_flew_in_searches_though_no_carrier_is_there() -> None:
    c = at("Britain", "naval_combat")
    c.units["DE-SS1"]["at"] = NNS  # direct setup
    sink_the_carrier(c)
    c.units["GB-FT1"]["moved"] = 1  # direct setup: GB-FT1 flew there in combat_movement
    c.asw_start("Britain", NNS)
    assert "GB-FT1 at 4" in c.pending()[0]["text"]


def test_f7_nc1_an_air_unit_whose_carrier_was_sunk_starts_no_naval_battle() -> None:
    c = at("Britain", "naval_combat")
    for uid in ("GB-BB1", "GB-BB2"):
        del c.units[uid]  # direct setup: only GB-FT1 is left there, its carrier sunk
    sink_the_carrier(c)
    c.units["DE-DD1"]["at"] = NNS  # direct setup: a German destroyer beside it
    with pytest.raises(RuleViolation) as refused:
        c.naval_start("Britain", NNS)
    assert refused.value.rule == "F7"
    assert "GB-FT1" in refused.value.reason and "carrier" in refused.value.reason


def test_f7_sm2_te4_an_air_unit_whose_carrier_was_sunk_searches_no_interception() -> None:
    c = at("Germany", "combat_movement")
    sink_the_carrier(c)
    # The battleships keep the zone hostile (SM1), but nothing there may search now.
    c.move("Germany", ["DE-SS1"], [NNS, "Norwegian Sea"])
    assert not c.battles and c.units["DE-SS1"]["at"] == "Norwegian Sea"


def test_f7_an_allied_carrier_with_room_holds_the_air_unit() -> None:
    c = at("Britain", "naval_combat")
    c.units["DE-SS1"]["at"] = NNS  # direct setup
    sink_the_carrier(c)
    c.units["FR-CV9"] = {"type": "aircraft_carrier", "nation": "France", "at": NNS, "damage": 0, "moved": 0}
    c.asw_start("Britain", NNS)  # F7: "aboard a carrier of its side"
    assert "GB-FT1 at 4" in c.pending()[0]["text"]


def test_f7_before_the_key_an_air_unit_whose_carrier_was_sunk_still_searched() -> None:
    c = at("Britain", "naval_combat", BEFORE_THE_KEY)
    assert not c.ruleset.aircraft_need_a_carrier
    c.units["DE-SS1"]["at"] = NNS  # direct setup
    sink_the_carrier(c)
    c.asw_start("Britain", NNS)
    assert "GB-FT1 at 4" in c.pending()[0]["text"]
