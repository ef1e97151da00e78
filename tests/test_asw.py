"""ASW combat on one's own turn (AS1-AS5), with TE3-TE5 and the submarines' return fire (HA1, HA2).

Every test drives the Campaign aggregate with manual dice. Scenario north-sea-1914: in the
Heligoland Bight Germany has DE-DD1, DE-DD2, DE-CA1 (and battleships), Britain GB-SS1 and
GB-SS2; DE-BM1 is in Flanders, two steps away. In the Central North Sea Britain has GB-DD1,
GB-DD2, GB-CA1 against DE-SS1 and DE-SS2; GB-BM1 (England), GB-TP1 (Scotland) and GB-FT1 (on
GB-CV1 in the Northern North Sea) are one step away. Direct setups say so.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import InputError, RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing

HB, CNS = "Heligoland Bight", "Central North Sea"
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")


def campaign(nation: str = "Germany", ruleset: dict[str, Any] | None = None) -> Campaign:
    """A manual-dice campaign at round 1, `nation`'s naval_combat phase; Germany's Flanders bomber
    flew to the Heligoland Bight in combat_movement, Britain's bomber, transport plane and
    fighter to the Central North Sea (AS1, F7)."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, ruleset or RULESET, "manual", commitment(new_seed()))
    while (c.nation, c.phase) != (nation, "naval_combat"):
        if (c.nation, c.phase) == ("Germany", "combat_movement") and nation == "Germany":
            c.move("Germany", ["DE-BM1"], ["Northern Germany", HB])
        if (c.nation, c.phase) == ("Britain", "combat_movement") and nation == "Britain":
            for air in ("GB-BM1", "GB-TP1", "GB-FT1"):
                c.move("Britain", [air], [CNS])
        advance_passing(c)
    return c


def dice(*values: int) -> ManualDice:
    return ManualDice(list(values))


def state(c: Campaign) -> tuple[Any, ...]:
    return (c.version, c.roll_count, c.battle_count, copy.deepcopy(c.units), copy.deepcopy(c.battles), c.pending())


def refused(c: Campaign, error: type[Exception], action: Any, rule: str | None = None) -> Any:
    before = state(c)
    with pytest.raises(error) as info:
        action()
    if rule is not None:
        assert info.value.rule == rule, str(info.value)
    assert state(c) == before
    return info.value


def events(c: Campaign, kind: str, since: int = 0) -> list[Any]:
    return [e for e in c.pending_events if e.originator_version > since and type(e).__name__ == kind]


def rolls(c: Campaign, since: int = 0) -> list[Any]:
    return events(c, "DiceRolled", since)


def step(c: Campaign, battle: int) -> tuple[str, list[str], str]:
    b = c.battles[str(battle)]
    return b["step"], b["waiting"], b["rule"]


def targets_chosen(c: Campaign, since: int = 0) -> list[tuple[str, dict[str, str], bool, str]]:
    return [(e.nation, e.targets, e.default, e.rule) for e in events(c, "TargetsChosen", since)]


def to_fire(c: Campaign, b: int) -> None:
    """Default targets (and screens) for both sides."""
    while c.battles[str(b)]["step"] in ("targets", "screening"):
        nation = c.battles[str(b)]["waiting"][0]
        if c.battles[str(b)]["step"] == "targets":
            c.choose_targets(b, nation, None)
        else:
            c.choose_screens(b, nation, None)
    assert step(c, b)[0] == "fire"


# ----- AS1: who may start it, where, when -----


def test_as1_asw_combat_is_started_in_ones_own_naval_combat_phase() -> None:
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    while c.phase != "combat_movement":
        advance_passing(c)
    err = refused(c, RuleViolation, lambda: c.asw_start("Germany", HB), "T3")
    # The phases in words, as `pending` says them; `next --to naval_combat` takes the ID.
    assert err.reason == "ASW combat is legal in naval combat; it is Germany's combat movement phase"
    c.move("Germany", ["DE-BM1"], ["Northern Germany", HB])
    advance_passing(c)
    refused(c, RuleViolation, lambda: c.asw_start("Britain", CNS), "T3")
    b = c.asw_start("Germany", HB)
    started = events(c, "AswCombatStarted")[-1]
    assert (started.nation, started.defender, started.zone, started.submarines) == (
        "Germany",
        "Britain",
        HB,
        ["GB-SS1", "GB-SS2"],
    )
    assert step(c, b) == ("search", ["Germany"], "AS2")
    assert "DE-BM1 at 3, DE-CA1 at 2, DE-DD1 at 2, DE-DD2 at 2" in c.pending()[0]["text"]
    err = refused(c, RuleViolation, c.advance, "T4")
    assert "[AS2]" in err.reason


def test_as1_f7_an_air_unit_fights_on_its_own_turn_only_where_it_flew_in_combat_movement() -> None:
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    while c.phase != "naval_combat":
        advance_passing(c)
    b = c.asw_start("Germany", HB)
    assert "DE-BM1" not in c.pending()[0]["text"]  # it stayed in Flanders
    err = refused(c, RuleViolation, lambda: c.asw_search(b, ["DE-BM1"], dice(1, 1)), "F7")
    assert "where it flew in combat movement" in err.reason


def test_as1_f7_an_air_unit_aboard_its_carrier_takes_part_and_refusals_say_so() -> None:
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    while (c.nation, c.phase) != ("Britain", "naval_combat"):
        advance_passing(c)
    nns = "Northern North Sea"
    c.units["DE-SS1"]["at"] = nns  # direct setup: a U-boat beside GB-CV1, GB-FT1 aboard it
    # Without TE4 a fighter cannot search (AS2): the refusal names both ways aboard air takes part.
    err = refused(c, RuleViolation, lambda: c.asw_start("Britain", nns), "AS1")
    assert "aboard its carriers" in err.reason and "Advanced ASW" in err.reason
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    b = c.asw_start("Britain", nns)
    assert "GB-FT1 at 4" in c.pending()[0]["text"]  # it never flew: it is aboard GB-CV1 (AS1, F7)
    err = refused(c, RuleViolation, lambda: c.asw_search(b, ["GB-BM1"], dice(1)), "F7")
    assert "or aboard its carriers" in err.reason


def test_f7_an_air_unit_takes_part_in_at_most_one_search_or_battle_per_phase() -> None:
    c = campaign()
    b = c.asw_start("Germany", HB)
    c.asw_search(b, ["DE-BM1"], dice(9, 9))  # nothing found: the combat ends
    assert not c.battles
    assert "DE-BM1" in c.committed
    c.units["GB-SS3"] = dict(c.units["GB-SS1"], at=HB)  # direct setup: another zone to hunt in is not needed:
    c.fought.clear()  # the same zone again, as if it were a second combat
    b2 = c.asw_start("Germany", HB)
    err = refused(c, RuleViolation, lambda: c.asw_search(b2, ["DE-BM1"], dice(1, 1, 1)), "F7")
    assert "already taken part" in err.reason


def test_as1_needs_enemy_submarines_and_own_escorts_or_aircraft_in_reach() -> None:
    c = campaign()
    err = refused(c, RuleViolation, lambda: c.asw_start("Germany", "Skagerrak"), "AS1")
    assert "no enemy submarines" in err.reason  # Austria-Hungary's are allies
    c.units["GB-SS1"]["at"] = "Norwegian Sea"  # direct setup: a lone British submarine far out
    del c.units["DE-BM1"]  # direct setup: no German bomber anywhere
    err = refused(c, RuleViolation, lambda: c.asw_start("Germany", "Norwegian Sea"), "AS1")
    assert "no destroyer or cruiser" in err.reason
    refused(c, RuleViolation, lambda: c.asw_start("Germany", "Scotland"), "AS1")
    refused(c, InputError, lambda: c.asw_start("Germany", "Atlantis"))


def test_as1_once_per_zone_per_phase() -> None:
    c = campaign()
    b = c.asw_start("Germany", HB)
    c.asw_search(b, ["DE-DD1"], dice(9, 9))
    assert not c.battles
    err = refused(c, RuleViolation, lambda: c.asw_start("Germany", HB), "AS1")
    assert "already fought ASW combat in Heligoland Bight" in err.reason


# ----- AS2: search -----


def test_as2_each_searcher_rolls_once_against_each_submarine_detections_are_pooled() -> None:
    c = campaign()
    b = c.asw_start("Germany", HB)
    # Bomber: 3 (GB-SS1), 4 (GB-SS2); DE-DD1: 9, 9; DE-DD2: 9, 2.
    assert c.asw_search(b, ["DE-BM1", "DE-DD1", "DE-DD2"], dice(3, 4, 9, 9, 9, 2)) == ["GB-SS1", "GB-SS2"]
    assert [(r.unit, r.purpose.split(" searches for ")[1][:6], r.target, r.outcome) for r in rolls(c)] == [
        ("DE-BM1", "GB-SS1", 3, "success"),
        ("DE-BM1", "GB-SS2", 3, "failure"),
        ("DE-DD1", "GB-SS1", 2, "failure"),
        ("DE-DD1", "GB-SS2", 2, "failure"),
        ("DE-DD2", "GB-SS1", 2, "failure"),
        ("DE-DD2", "GB-SS2", 2, "success"),
    ]
    assert all(r.rule == "AS2" and r.kind == "asw_search" for r in rolls(c))
    found = events(c, "SubmarinesDetected")[-1]
    assert (found.detected, found.undetected, found.rule) == (["GB-SS1", "GB-SS2"], [], "AS2")
    # AS3: every escort taking part fights, though DE-DD1 found nothing.
    assert c.battles[str(b)]["hunters"] == ["DE-BM1", "DE-DD1", "DE-DD2"]
    assert step(c, b) == ("targets", ["Germany", "Britain"], "AS3")


def test_as2_without_a_detection_the_combat_ends() -> None:
    c = campaign()
    b = c.asw_start("Germany", HB)
    c.asw_search(b, None, dice(*[9] * 8))  # four searchers, two submarines
    ended = events(c, "BattleEnded")[-1]
    assert (ended.battle, ended.rule, ended.survivors) == (b, "AS2", ["GB-SS1", "GB-SS2"])
    assert not c.battles


def test_as2_searchers_are_own_escorts_in_the_zone_and_own_aircraft_in_range() -> None:
    ruleset = copy.deepcopy(RULESET)
    ruleset["units"]["bomber"]["move"] = 1  # a house rule: short-ranged bombers
    c = campaign("Britain", ruleset)
    b = c.asw_start("Britain", CNS)
    refused(c, RuleViolation, lambda: c.asw_search(b, ["GB-DD3"], dice(1, 1)), "AS1")  # in the Southern North Sea
    refused(c, RuleViolation, lambda: c.asw_search(b, ["FR-BM1"], dice(1, 1)), "AS1")  # an ally's
    refused(c, RuleViolation, lambda: c.asw_search(b, ["GB-FT1"], dice(1, 1)), "AS2")  # fighters: TE4 only
    refused(c, RuleViolation, lambda: c.asw_search(b, ["GB-BB1"], dice(1, 1)), "AS2")
    refused(c, RuleViolation, lambda: c.asw_search(b, [], dice()), "AS2")
    c.units["GB-BM1"]["at"] = "Irish Sea"  # direct setup: it never flew to the Central North Sea
    err = refused(c, RuleViolation, lambda: c.asw_search(b, ["GB-BM1"], dice(1, 1)), "F7")
    assert "fights only where it flew in combat movement" in err.reason
    c.asw_search(b, ["GB-TP1"], dice(3, 4))  # a transport plane in Scotland searches at 3
    assert [r.target for r in rolls(c)] == [3, 3]


def test_as2_a_refused_searcher_is_named_by_its_type_in_words() -> None:
    c = campaign("Britain")
    c.units["GB-CV1"]["at"] = CNS  # direct setup: a carrier where the U-boats are
    b = c.asw_start("Britain", CNS)
    err = refused(c, RuleViolation, lambda: c.asw_search(b, ["GB-CV1"], dice(1, 1)), "AS2")
    assert err.reason.startswith("GB-CV1 (aircraft carrier) cannot search for submarines: ")


def test_as2_te4_every_air_unit_searches_at_4_escorts_at_3_te3_one_less() -> None:
    c = campaign("Britain")
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    b = c.asw_start("Britain", CNS)
    c.asw_search(b, ["GB-DD1", "GB-FT1", "GB-TP1"], dice(*[10] * 6))
    assert [r.target for r in rolls(c)] == [3, 3, 4, 4, 4, 4]
    c = campaign("Britain")
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup: TE5, both apply
    b = c.asw_start("Britain", CNS)
    c.asw_search(b, ["GB-BM1", "GB-DD1"], dice(*[10] * 4))
    assert [(r.base_target, r.target) for r in rolls(c)] == [(3, 3), (3, 3), (2, 2), (2, 2)]
    assert [m["rule"] for m in rolls(c)[0].modifiers] == ["TE4", "TE3"]


# ----- AS3, AS4: targets, then every attack die, return fire -----


def test_as3_without_te4_air_units_search_but_do_not_attack() -> None:
    c = campaign()
    b = c.asw_start("Germany", HB)
    before = c.version
    c.asw_search(b, ["DE-BM1", "DE-DD1"], dice(1, 9, 9, 9))  # only the bomber finds GB-SS1
    assert c.battles[str(b)]["detected"] == ["GB-SS1"]
    # Each firer has a single legal target, so both are chosen for the players: DE-DD1 at
    # GB-SS1 (the bomber picks none), and GB-SS1 fires back at a naval unit taking part: DE-DD1,
    # never the bomber (HA2).
    assert targets_chosen(c, before) == [
        ("Germany", {"DE-DD1": "GB-SS1"}, True, "AS3"),
        ("Britain", {"GB-SS1": "DE-DD1"}, True, "AS3"),
    ]
    assert step(c, b) == ("fire", ["Germany", "Britain"], "AS4")
    before = c.version
    assert c.fire(b, dice(2, 3)) == 2
    assert [(r.unit, r.base_target, r.target, r.rule) for r in rolls(c, before)] == [
        ("DE-DD1", 2, 2, "AS4"),
        ("GB-SS1", 3, 3, "AS4"),  # at its defense value
    ]
    # Casualties together: both sink.
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit", before)] == [("GB-SS1", True), ("DE-DD1", True)]
    assert events(c, "BattleEnded")[-1].rule == "AS5" and not c.battles
    # Where there is a choice (the bomber finds both submarines), the same refusals apply.
    c = campaign()
    b = c.asw_start("Germany", HB)
    c.asw_search(b, ["DE-BM1", "DE-DD1", "DE-DD2"], dice(1, 1, 9, 9, 9, 9))
    assert step(c, b) == ("targets", ["Germany", "Britain"], "AS3")
    err = refused(
        c,
        RuleViolation,
        lambda: c.choose_targets(b, "Germany", {"DE-BM1": "GB-SS1", "DE-DD1": "GB-SS1", "DE-DD2": "GB-SS2"}),
    )
    assert "DE-BM1 does not choose a target" in err.reason
    refused(c, RuleViolation, lambda: c.fire(b, dice(1, 1, 1, 1)), "AS3")  # all targets before any attack die
    c.choose_targets(b, "Germany", {"DE-DD1": "GB-SS1", "DE-DD2": "GB-SS2"})
    # The submarines fire back at naval units taking part, never the bomber (HA2).
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-SS1": "DE-BM1", "GB-SS2": "DE-DD2"}), "HA2")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-SS1": "DE-CA1", "GB-SS2": "DE-DD2"}))
    c.choose_targets(b, "Britain", {"GB-SS1": "DE-DD1", "GB-SS2": "DE-DD2"})
    assert step(c, b) == ("screening", ["Germany"], "HA1")


def test_as4_te4_escorts_attack_at_3_air_at_4_te3_one_less_and_return_fire_plus_one() -> None:
    c = campaign("Britain")
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    b = c.asw_start("Britain", CNS)
    since = c.version
    c.asw_search(b, ["GB-DD1", "GB-BM1"], dice(1, 1, 9, 9))
    # The submarines' only legal target is GB-DD1 (HA2): chosen for Germany; Britain chooses.
    assert targets_chosen(c, since) == [("Germany", {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}, True, "AS3")]
    assert step(c, b) == ("targets", ["Britain"], "AS3")
    c.choose_targets(b, "Britain", {"GB-DD1": "DE-SS1", "GB-BM1": "DE-SS2"})  # TE4: the bomber attacks
    before = c.version
    c.fire(b, dice(10, 10, 10, 10))
    assert [(r.unit, r.target) for r in rolls(c, before)] == [
        ("GB-BM1", 4),
        ("GB-DD1", 3),
        ("DE-SS1", 3),
        ("DE-SS2", 3),
    ]
    c = campaign("Britain")
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup
    b = c.asw_start("Britain", CNS)
    c.asw_search(b, ["GB-DD1", "GB-BM1"], dice(1, 1, 9, 9))
    assert step(c, b) == ("targets", ["Britain"], "AS3")
    c.choose_targets(b, "Britain", None)
    before = c.version
    c.fire(b, dice(10, 10, 10, 10))
    assert [(r.unit, r.target) for r in rolls(c, before)] == [
        ("GB-BM1", 3),
        ("GB-DD1", 2),
        ("DE-SS1", 4),  # TE3: defense +1
        ("DE-SS2", 4),
    ]


def test_as4_with_only_aircraft_taking_part_the_submarines_cannot_fire_back() -> None:
    c = campaign("Britain")
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    b = c.asw_start("Britain", CNS)
    since = c.version
    c.asw_search(b, ["GB-BM1"], dice(1, 9))
    # The bomber found DE-SS1 only: its single legal target is chosen for Britain.
    assert targets_chosen(c, since) == [("Britain", {"GB-BM1": "DE-SS1"}, True, "AS3")]
    assert step(c, b) == ("fire", ["Britain"], "AS4")
    since = c.version
    c.fire(b, dice(9))
    assert [r.unit for r in rolls(c, since)] == ["GB-BM1"]


def test_ha1_the_hunting_side_may_screen_its_ships() -> None:
    c = campaign()
    b = c.asw_start("Germany", HB)
    since = c.version
    c.asw_search(b, ["DE-CA1", "DE-DD1"], dice(1, 9, 9, 9))
    # GB-SS1 is the only detected submarine: Germany's targets are chosen for it.
    assert targets_chosen(c, since) == [("Germany", {"DE-CA1": "GB-SS1", "DE-DD1": "GB-SS1"}, True, "AS3")]
    assert step(c, b) == ("targets", ["Britain"], "AS3")
    c.choose_targets(b, "Britain", {"GB-SS1": "DE-CA1"})
    assert step(c, b) == ("screening", ["Germany"], "HA1")
    assert c.choose_screens(b, "Germany", None) == {"GB-SS1": "DE-DD1"}  # cheaper than the cruiser
    before = c.version
    c.fire(b, dice(9, 9, 1))
    (hit,) = events(c, "TargetHit", before)
    assert (hit.target, hit.unit) == ("DE-CA1", "DE-DD1")


# ----- AS5: submerge or another round -----


def test_as5_submarines_submerge_at_the_end_of_a_round_or_fight_another() -> None:
    c = campaign()
    b = c.asw_start("Germany", HB)
    c.asw_search(b, ["DE-DD1", "DE-DD2"], dice(1, 1, 9, 9))
    to_fire(c, b)
    c.fire(b, dice(9, 9, 9, 9))
    assert step(c, b) == ("decide", ["Britain"], "AS5")
    refused(c, RuleViolation, lambda: c.asw_submerge(b, ["DE-SS3"]), "AS5")
    since = c.version
    c.asw_submerge(b, ["GB-SS2"])
    assert c.battles[str(b)]["detected"] == ["GB-SS1"] and c.battles[str(b)]["round"] == 2
    # Only GB-SS1 is left to hunt: both hunters' target is chosen for Germany.
    assert targets_chosen(c, since) == [("Germany", {"DE-DD1": "GB-SS1", "DE-DD2": "GB-SS1"}, True, "AS3")]
    assert step(c, b) == ("targets", ["Britain"], "AS3")
    to_fire(c, b)
    before = c.version
    c.fire(b, dice(9, 9, 9))  # two hunters at GB-SS1, which fires once
    assert len(rolls(c, before)) == 3
    c.asw_submerge(b, [])  # fight on
    assert c.battles[str(b)]["round"] == 3
    to_fire(c, b)
    c.fire(b, dice(9, 9, 9))
    c.asw_submerge(b, None)  # default: all submerge
    ended = events(c, "BattleEnded")[-1]
    assert (ended.rule, ended.survivors) == ("AS5", ["GB-SS1", "GB-SS2"])
    assert events(c, "SubmarinesSubmerged")[-1].default


def test_auto_resolves_asw_combat_with_the_defaults() -> None:
    c = campaign()
    b = c.asw_start("Germany", HB)
    assert c.battle_auto(b, dice(*[9] * 7, 1, 1, 1, 9, 9, 9, 9)) == [b]
    assert not c.battles and "GB-SS1" in c.units
