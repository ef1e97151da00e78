"""Rules audit on the world board, great-war-1914: what the referee says when a player asks for
something the rules send elsewhere must be a way forward the referee then accepts."""

from __future__ import annotations

import copy
import uuid

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
EAST_CHINA_SEA = "East China Sea"


def at_japans_naval_combat(*add: tuple[str, str, str, int]) -> Campaign:
    """Round 1, Japan's naval_combat, a U-boat beside JP-SS1 in the East China Sea (only
    submarines there) and whatever else `add` puts on the board."""
    c = Campaign.create(
        uuid.uuid4(), "audit", copy.deepcopy(WORLD), copy.deepcopy(RULESET), "manual", commitment(new_seed())
    )
    c.adjust(Adjustment(add=(("Germany", "submarine", EAST_CHINA_SEA, 1), *add)), "a test: a U-boat off Shanghai")
    while (c.nation, c.phase) != ("Japan", "naval_combat"):
        advance(c)
    return c


def nc1_refusal(c: Campaign) -> str:
    before = c.version
    with pytest.raises(RuleViolation) as refusal:
        c.naval_start("Japan", EAST_CHINA_SEA)
    assert refusal.value.rule == "NC1"
    assert c.version == before
    return str(refusal.value)


def test_nc1_as1_submarines_alone_name_no_asw_command_the_nation_cannot_give() -> None:
    """Japan has only JP-SS1 there: `asw start` would be refused (AS1), so the NC1 refusal says
    why instead of naming it."""
    c = at_japans_naval_combat()
    message = nc1_refusal(c)
    assert "asw start" not in message
    assert "Japan has nothing there that may start it (AS1" in message
    with pytest.raises(RuleViolation) as asw:
        c.asw_start("Japan", EAST_CHINA_SEA)
    assert asw.value.rule == "AS1"


def test_nc1_as1_submarines_alone_name_the_asw_command_where_it_is_accepted() -> None:
    c = at_japans_naval_combat(("Japan", "destroyer", EAST_CHINA_SEA, 1))
    assert "tracker asw start --zone 'East China Sea'" in nc1_refusal(c)
    c.asw_start("Japan", EAST_CHINA_SEA)


def test_nc1_as1_submarines_alone_after_the_asw_combat_there_name_no_second_one() -> None:
    c = at_japans_naval_combat(("Japan", "destroyer", EAST_CHINA_SEA, 1))
    battle = c.asw_start("Japan", EAST_CHINA_SEA)
    c.asw_search(battle, None, ManualDice([10]))
    assert "Japan has already fought ASW combat there this phase (AS1)" in nc1_refusal(c)


WESTERN_APPROACHES = "Western Approaches"


def with_a_neutral_carrier() -> Campaign:
    """Round 1: an American carrier (the United States neutral until round 11) in the Western
    Approaches, and Britain at its purchase phase."""
    c = Campaign.create(
        uuid.uuid4(), "audit", copy.deepcopy(WORLD), copy.deepcopy(RULESET), "manual", commitment(new_seed())
    )
    c.adjust(
        Adjustment(add=(("United States", "aircraft_carrier", WESTERN_APPROACHES, 1),)),
        "a test: an American carrier off Ireland",
    )
    while (c.nation, c.phase) != ("Britain", "purchase"):
        advance(c)
    return c


def refused(c: Campaign, rule: str, command: object, *args: object) -> str:
    before = c.version
    with pytest.raises(RuleViolation) as refusal:
        command(*args)  # type: ignore[operator]
    assert refusal.value.rule == rule, str(refusal.value)
    assert c.version == before
    return str(refusal.value)


def test_pu2_f8_placing_on_a_neutrals_carrier_names_the_neutral() -> None:
    """PU2 lets air units onto a friendly carrier; a neutral's is nobody's (F8): the refusal says
    so rather than leave the carrier unexplained."""
    c = with_a_neutral_carrier()
    c.buy("Britain", "fighter")
    while c.phase != "placement":
        advance(c)
    message = refused(c, "PU2", c.place, "Britain", "fighter", WESTERN_APPROACHES)
    assert "US-CV1 of United States, neutral in round 1, carry no other nation's aircraft (F8)" in message


def test_f7_f8_landing_on_a_neutrals_carrier_names_the_neutral() -> None:
    c = with_a_neutral_carrier()
    while c.phase != "noncombat_movement":
        advance(c)
    message = refused(c, "F7", c.move, "Britain", ["GB-BM2"], ["English Channel", WESTERN_APPROACHES])
    assert "friendly carriers in Western Approaches hold 0, 0 already aboard" in message
    assert "US-CV1 of United States, neutral in round 1, carry no other nation's aircraft (F8)" in message
