"""Allies' aircraft: CV3, F7 searching in a convoy battle on another nation's NTR; PU2, F7 placed
on an ally's carrier.

F7: outside combat movement an air unit joins from where it is, "if the zone is within the
range it has left this turn". A turn is one nation's (T1), so an ally's air unit, which flies
only in its own nation's turn, has its whole range in the NTR owner's collect_resources phase:
what it flew in its own turn earlier in the round is not taken off. A campaign recorded before
the ruleset said so (`[naval_combat] others_fly_afresh`) keeps the rule it was refereed by, so
its log verifies as recorded.

PU2: air units are placed on a friendly carrier with room, an ally's too; a placement beyond
the room names the friendly carriers, not the placing nation's own (it may have none there).
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import RuleViolation
from domain.rules.economy import Adjustment
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance

RULESET = load_ruleset("twtea-3e")[1]
WORLD = read_scenario("great-war-1914")[0]
BISCAY = "Bay of Biscay"
KEY = "others_fly_afresh"


def campaign(ruleset: dict[str, Any]) -> Campaign:
    return Campaign.create(uuid.uuid4(), "t", copy.deepcopy(WORLD), ruleset, "manual", commitment(new_seed()))


def to(c: Campaign, nation: str, phase: str) -> None:
    while (c.nation, c.phase) != (nation, phase):
        advance(c)


def at_french_convoy_search(ruleset: dict[str, Any]) -> tuple[Campaign, int]:
    """A British fighter flies its whole range (4) in Britain's noncombat_movement and lands
    where it began, Southern England, two steps from the Bay of Biscay; in France's
    collect_resources a U-boat attacks France's NTR there and merchant defence fails."""
    c = campaign(ruleset)
    c.adjust(
        Adjustment(add=(("Britain", "fighter", "Southern England", 1), ("Germany", "submarine", BISCAY, 1))),
        "a test: a British fighter at home and a U-boat off Brest",
    )
    to(c, "Britain", "noncombat_movement")
    c.move("Britain", ["GB-FT1"], ["English Channel", "Southern England", "English Channel", "Southern England"])
    assert (c.units["GB-FT1"]["at"], c.units["GB-FT1"]["moved"]) == ("Southern England", 4)
    to(c, "France", "collect_resources")
    b = c.declare_convoy_attack("Germany", BISCAY)
    c.convoy_roll(b, ManualDice([1, 1]))
    return c, b


def test_cv3_f7_an_allys_aircraft_searches_with_its_whole_range_in_another_nations_turn() -> None:
    c, b = at_french_convoy_search(RULESET)
    assert "GB-FT1 at 1" in c.pending()[0]["text"]
    assert c.convoy_search(b, ["GB-FT1"], ManualDice([1])) == ["GB-FT1"]
    assert c.units["GB-FT1"]["at"] == "Southern England"  # nothing moves (F7)


def test_cv3_f7_recorded_before_the_key_an_allys_aircraft_kept_what_it_flew_in_its_own_turn() -> None:
    before = copy.deepcopy(RULESET)
    del before["naval_combat"][KEY]
    c, b = at_french_convoy_search(before)
    assert "GB-FT1" not in c.pending()[0]["text"]
    with pytest.raises(RuleViolation) as refusal:
        c.convoy_search(b, ["GB-FT1"], ManualDice([1]))
    assert refusal.value.rule == "F7"
    assert refusal.value.reason.endswith("beyond the range it has left (0 of 4)")


def test_cv3_f7_the_phasing_nations_own_aircraft_still_count_what_they_flew_this_turn() -> None:
    c = campaign(RULESET)
    c.adjust(
        Adjustment(add=(("France", "fighter", "Brittany", 1), ("Germany", "submarine", BISCAY, 1))),
        "a test: a French fighter in Brittany and a U-boat off Brest",
    )
    to(c, "France", "noncombat_movement")
    c.move("France", ["FR-FT1"], [BISCAY, "Brittany", BISCAY, "Brittany"])
    to(c, "France", "collect_resources")
    b = c.declare_convoy_attack("Germany", BISCAY)
    c.convoy_roll(b, ManualDice([1, 1]))
    with pytest.raises(RuleViolation) as refusal:
        c.convoy_search(b, ["FR-FT1"], ManualDice([1]))
    assert refusal.value.reason == (
        "FR-FT1 in Brittany is 1 steps from Bay of Biscay without flying over a neutral's territory (F8), "
        "beyond the range it has left (0 of 4)"
    )


def test_pu2_f7_placing_on_an_allys_carrier_beyond_its_room_names_the_friendly_carriers() -> None:
    # GB-CV1 in the Southern North Sea carries GB-BM1 and has room for one more air unit.
    c = campaign(RULESET)
    to(c, "France", "purchase")
    c.buy("France", "fighter", 2)
    to(c, "France", "placement")
    with pytest.raises(RuleViolation) as refusal:
        c.place("France", "fighter", "Southern North Sea", 2)
    assert (refusal.value.rule, refusal.value.reason) == (
        "F7",
        "the friendly carriers in Southern North Sea have room for 1 more air unit",
    )
    assert c.place("France", "fighter", "Southern North Sea") == ["FR-FT1"]
