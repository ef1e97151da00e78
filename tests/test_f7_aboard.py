"""F7, SM2, AS1, NC1: an air unit at sea takes part in a search or battle only where it flew this
turn or aboard a carrier of its side with room; one whose carrier was sunk sits out until it
lands. F7, PU2: any friendly carrier with room holds it, an ally's too (landing, placement,
adjustments, and sailing with the carrier). A campaign recorded before the ruleset said so
(`aircraft_need_a_carrier`, `friendly_carriers`) keeps the rule it was refereed by.

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
from domain.rules.economy import Adjustment
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing

NNS = "Northern North Sea"
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
BEFORE_THE_KEY = copy.deepcopy(RULESET)
del BEFORE_THE_KEY["naval_combat"]["aircraft_need_a_carrier"]
OWN_CARRIERS_ONLY = copy.deepcopy(RULESET)
del OWN_CARRIERS_ONLY["naval_combat"]["friendly_carriers"]
CHANNEL = "English Channel"


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
    assert "flown there in combat movement or aboard its carriers" in refused.value.reason
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


def french_carrier(c: Campaign, zone: str = CHANNEL) -> None:
    # Direct setup: a French carrier (room for two) the scenario does not have.
    c.units["FR-CV9"] = {"type": "aircraft_carrier", "nation": "France", "at": zone, "damage": 0, "moved": 0}


def test_f7_an_air_unit_lands_on_an_allys_carrier_with_room() -> None:
    c = at("Britain", "noncombat_movement")
    french_carrier(c)
    c.move("Britain", ["GB-BM1"], [CHANNEL])
    assert c.units["GB-BM1"]["at"] == CHANNEL and c.stranded_aircraft() == []


def test_f7_an_allys_carrier_holds_only_its_room() -> None:
    c = at("Britain", "noncombat_movement")
    french_carrier(c)
    c.units["FR-FT9"] = {"type": "fighter", "nation": "France", "at": CHANNEL, "damage": 0, "moved": 0}
    c.units["FR-FT8"] = {"type": "fighter", "nation": "France", "at": CHANNEL, "damage": 0, "moved": 0}
    with pytest.raises(RuleViolation) as refused:
        c.move("Britain", ["GB-BM1"], [CHANNEL])
    assert refused.value.rule == "F7" and "friendly carriers in English Channel hold 2, 2 already aboard" in str(
        refused.value
    )


def test_f7_before_the_key_only_the_nations_own_carriers_held_its_aircraft() -> None:
    c = at("Britain", "noncombat_movement", OWN_CARRIERS_ONLY)
    assert not c.ruleset.friendly_carriers
    french_carrier(c)
    with pytest.raises(RuleViolation) as refused:
        c.move("Britain", ["GB-BM1"], [CHANNEL])
    assert "Britain carriers in English Channel hold 0" in str(refused.value)


def test_f7_an_allys_carrier_sails_with_the_aircraft_aboard_it() -> None:
    c = at("France", "combat_movement")
    french_carrier(c)
    c.units["GB-BM1"]["at"] = CHANNEL  # direct setup: GB-BM1 landed on FR-CV9 on Britain's turn
    plan = c.move("France", ["FR-CV9"], ["Bay of Biscay"])
    assert plan.carried == ("GB-BM1",)
    assert c.units["GB-BM1"]["at"] == "Bay of Biscay"


def test_f7_an_allys_aircraft_keeps_the_place_left_behind_and_the_nations_own_sail() -> None:
    c = at("Britain", "combat_movement")
    french_carrier(c, NNS)  # beside GB-CV1 (GB-FT1 aboard): four places, two aircraft
    c.units["FR-FT9"] = {"type": "fighter", "nation": "France", "at": NNS, "damage": 0, "moved": 0}
    plan = c.move("Britain", ["GB-CV1"], ["Central North Sea"])
    assert plan.carried == ()  # FR-CV9 stays and holds both
    c = at("Britain", "combat_movement")
    c.units["FR-FT9"] = {"type": "fighter", "nation": "France", "at": NNS, "damage": 0, "moved": 0}
    c.units["FR-FT8"] = {"type": "fighter", "nation": "France", "at": NNS, "damage": 0, "moved": 0}
    french_carrier(c, NNS)
    c.units["GB-CV2"] = {"type": "aircraft_carrier", "nation": "Britain", "at": NNS, "damage": 0, "moved": 0}
    c.units["GB-FT2"] = {"type": "fighter", "nation": "Britain", "at": NNS, "damage": 0, "moved": 0}
    plan = c.move("Britain", ["GB-CV1", "GB-CV2"], ["Central North Sea"])
    assert plan.carried == ("GB-FT1", "GB-FT2")  # the French fighters keep FR-CV9's two places


def test_pu2_an_air_unit_is_placed_on_an_allys_carrier() -> None:
    c = at("Britain", "purchase")
    french_carrier(c)
    c.buy("Britain", "fighter", 1)
    while c.phase != "placement":
        advance_passing(c)
    (placed,) = c.place("Britain", "fighter", CHANNEL)
    assert c.units[placed]["at"] == CHANNEL


def test_ad1_f7_a_carrier_and_its_aircraft_are_added_together() -> None:
    c = at("Britain", "noncombat_movement")
    c.adjust(
        Adjustment(add=(("France", "aircraft_carrier", CHANNEL, 1), ("Britain", "fighter", CHANNEL, 2))),
        "a French carrier with two British fighters aboard",
    )
    assert sorted(u["type"] for u in c.units.values() if u["at"] == CHANNEL and u["nation"] != "France") == [
        "fighter",
        "fighter",
    ]
    with pytest.raises(RuleViolation) as refused:
        c.adjust(Adjustment(add=(("Britain", "fighter", CHANNEL, 1),)), "one too many")
    assert refused.value.rule == "F7"
