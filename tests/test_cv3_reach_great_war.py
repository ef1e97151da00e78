"""CV3, F7: which aircraft reach a convoy battle, on the world map (great-war-1914).

F7: outside combat movement an air unit joins "from where it is, if the zone is within the
range it has left this turn"; an air unit of a nation other than the phasing one has its whole
range (`others_fly_afresh`). A bomber (range 6) in Venetia or in the Eastern United States is
6 map steps from Dogger Bank, so it searches in a convoy battle there in Britain's
collect_resources phase; one a step further is not offered, and is refused naming F7.

F7, `aircraft_need_a_carrier`: an air unit at sea takes part in a search or battle only aboard
a carrier of its side; one whose carrier was sunk sits out until it lands, in a convoy search
as in a naval battle, an ASW combat or an interception. A campaign recorded before the key
keeps the reading it was refereed by.
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
DOGGER = "Dogger Bank"
BISCAY = "Bay of Biscay"


def campaign(ruleset: dict[str, Any] = RULESET) -> Campaign:
    return Campaign.create(uuid.uuid4(), "t", copy.deepcopy(WORLD), ruleset, "manual", commitment(new_seed()))


def to(c: Campaign, nation: str, phase: str) -> None:
    while (c.nation, c.phase) != (nation, phase):
        advance(c)


def added(c: Campaign, nation: str, unit_type: str, zone: str) -> str:
    """The ID of the unit of that nation and type an adjustment just added in the zone."""
    before = set(c.units)
    c.adjust(Adjustment(add=((nation, unit_type, zone, 1),)), "a test")
    (uid,) = set(c.units) - before
    return uid


def at_dogger_bank_search(bombers: list[tuple[str, str]]) -> tuple[Campaign, int, list[str]]:
    """Italy and the United States at war from the start, a bomber of each in `bombers`
    (nation, place), and in Britain's collect_resources a U-boat attacking Britain's NTR in
    Dogger Bank whose merchant defence fails: the search is next (CV3)."""
    c = campaign()
    c.adjust(Adjustment(enter=("Italy", "United States")), "a test: both at war from the start")
    ids = [added(c, nation, "bomber", place) for nation, place in bombers]
    c.adjust(Adjustment(add=(("Germany", "submarine", DOGGER, 1),)), "a test: a U-boat on the Dogger Bank")
    to(c, "Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", DOGGER)
    c.convoy_roll(b, ManualDice([1, 1]))
    assert c.battles[str(b)]["step"] == "search"
    return c, b, ids


def test_cv3_f7_bombers_as_far_as_their_range_reach_dogger_bank_with_their_whole_range() -> None:
    c, b, (italian, american) = at_dogger_bank_search(
        [("Italy", "Venetia"), ("United States", "Eastern United States")]
    )
    board = c.board()
    for uid in (italian, american):
        unit = board.units[uid]
        # The map's distance is the bomber's whole range: in reach, and only just.
        assert board.air_distance(unit, DOGGER) == board.unit_type(unit).move == board.range_left(unit)
    eligible = c.pending()[0]["eligible"]
    assert italian in eligible and american in eligible
    assert c.convoy_search(b, [italian, american], ManualDice([1, 1])) == [italian, american]
    assert (c.units[italian]["at"], c.units[american]["at"]) == ("Venetia", "Eastern United States")  # nothing moves


def test_cv3_f7_a_bomber_one_step_beyond_its_range_is_not_offered_and_is_refused() -> None:
    c, b, (italian, american) = at_dogger_bank_search([("Italy", "Apulia"), ("United States", "Western United States")])
    board = c.board()
    eligible = c.pending()[0]["eligible"]
    for uid in (italian, american):
        unit = board.units[uid]
        move = board.unit_type(unit).move
        assert board.air_distance(unit, DOGGER) == move + 1
        assert uid not in eligible
        with pytest.raises(RuleViolation) as refusal:
            c.convoy_search(b, [uid], ManualDice([1]))
        assert refusal.value.rule == "F7"
        # (The Ottoman Empire is neutral in round 1: the way avoids its territory, F8.)
        assert refusal.value.reason.startswith(f"{uid} in {unit.at} is {move + 1} steps from {DOGGER}")
        assert refusal.value.reason.endswith(f"beyond the range it has left ({move} of {move})")


def at_french_search_with_a_british_bomber_adrift(ruleset: dict[str, Any]) -> tuple[Campaign, int, str]:
    """After Britain's turn a British bomber sits on a British carrier in the Bay of Biscay; the
    carrier is lost (recorded as an adjustment, as a battle would sink it) and the bomber stays
    at sea with no carrier; in France's collect_resources a U-boat attacks France's NTR there."""
    c = campaign(ruleset)
    to(c, "France", "research")
    carrier = added(c, "Britain", "aircraft_carrier", BISCAY)
    bomber = added(c, "Britain", "bomber", BISCAY)
    c.adjust(Adjustment(add=(("Germany", "submarine", BISCAY, 1),)), "a test: a U-boat off Brest")
    c.adjust(Adjustment(remove=(carrier,)), "a test: the carrier is sunk")
    to(c, "France", "collect_resources")
    b = c.declare_convoy_attack("Germany", BISCAY)
    c.convoy_roll(b, ManualDice([1, 1]))
    return c, b, bomber


def test_f7_an_air_unit_whose_carrier_was_sunk_sits_out_a_convoy_search() -> None:
    c, b, bomber = at_french_search_with_a_british_bomber_adrift(RULESET)
    assert c.units[bomber]["at"] == BISCAY
    assert bomber not in c.pending()[0]["eligible"]
    with pytest.raises(RuleViolation) as refusal:
        c.convoy_search(b, [bomber], ManualDice([1]))
    assert refusal.value.rule == "F7"
    assert refusal.value.reason == (
        f"{bomber} is at sea in {BISCAY} and no carrier of Britain's side there has room for it: an air unit "
        "whose carrier was sunk sits out until it lands"
    )


def test_f7_recorded_before_aircraft_need_a_carrier_an_air_unit_adrift_searched() -> None:
    before = copy.deepcopy(RULESET)
    del before["naval_combat"]["aircraft_need_a_carrier"]
    c, b, bomber = at_french_search_with_a_british_bomber_adrift(before)
    assert bomber in c.pending()[0]["eligible"]
    assert c.convoy_search(b, [bomber], ManualDice([1])) == [bomber]
