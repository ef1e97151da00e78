"""Submarine movement through hostile zones (SM1-SM5): interception searches, the ASW rounds of
detected submarines, submerge / retreat / fight on, and undetected submarines going on.

Every test drives the Campaign aggregate with manual dice. Scenario north-sea-1914 in Germany's
combat_movement phase: DE-SS3..5 in the Heligoland Bight; the Southern North Sea holds GB-DD3,
GB-DD4, GB-DD5 and GB-CA2; the Central North Sea DE-SS1, DE-SS2, GB-DD1, GB-DD2, GB-CA1; the
Northern North Sea GB-BB1, GB-BB2 and GB-CV1 with GB-FT1 aboard. Setups the scenario does not
offer are made by setting the in-memory state directly; each such line says so.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import DiceError, InputError, RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing

HB, SNS, DOVER, CNS, NNS = (
    "Heligoland Bight",
    "Southern North Sea",
    "Dover Strait",
    "Central North Sea",
    "Northern North Sea",
)
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
THREE = ["DE-SS3", "DE-SS4", "DE-SS5"]


def campaign(ruleset: dict[str, Any] | None = None) -> Campaign:
    """A manual-dice campaign at round 1, Germany's combat_movement phase."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, ruleset or RULESET, "manual", commitment(new_seed()))
    while c.phase != "combat_movement":
        advance_passing(c)
    return c


def dice(*values: int) -> ManualDice:
    return ManualDice(list(values))


def state(c: Campaign) -> tuple[Any, ...]:
    return (
        c.version,
        len(c.pending_events),
        c.roll_count,
        c.battle_count,
        copy.deepcopy(c.units),
        copy.deepcopy(c.battles),
        c.pending(),
        (c.round, c.nation, c.phase),
    )


def refused(c: Campaign, error: type[Exception], action: Any, rule: str | None = None) -> Any:
    """The action raises `error` (naming `rule`) and leaves the aggregate exactly as it was (RK2)."""
    before = state(c)
    with pytest.raises(error) as info:
        action()
    if rule is not None:
        assert info.value.rule == rule, str(info.value)
    assert state(c) == before
    return info.value


def events(c: Campaign, kind: str | None = None, since: int = 0) -> list[Any]:
    return [e for e in c.pending_events if e.originator_version > since and (kind is None or type(e).__name__ == kind)]


def rolls(c: Campaign, since: int = 0) -> list[Any]:
    return events(c, "DiceRolled", since)


def step(c: Campaign, battle: int) -> tuple[str, list[str], str]:
    b = c.battles[str(battle)]
    return b["step"], b["waiting"], b["rule"]


def targets_chosen(c: Campaign, since: int = 0) -> list[tuple[str, dict[str, str], bool, str]]:
    return [(e.nation, e.targets, e.default, e.rule) for e in events(c, "TargetsChosen", since)]


def at(c: Campaign, *ids: str) -> list[str]:
    return [c.units[u]["at"] for u in ids]


def intercepted(c: Campaign, subs: list[str] | None = None, path: list[str] | None = None) -> int:
    """Germany moves a U-boat group through the Southern North Sea towards the Dover Strait."""
    c.move("Germany", subs or THREE, path or [SNS, DOVER])
    return c.battle_count


def detected_round(c: Campaign, subs: list[str], found: list[str]) -> int:
    """An interception in which GB-DD3 (and GB-DD4 if two are found) detect `found`; with one
    found, GB-DD3 and it are each other's only legal target, chosen for both sides (SM4)."""
    b = intercepted(c, subs)
    searchers = ["GB-DD3", "GB-DD4"][: len(found)]
    c.intercept_search(b, searchers, dice(*[1] * len(searchers)))
    if c.battles[str(b)]["step"] == "detect":
        c.intercept_detect(b, found)
    assert step(c, b)[0] == ("targets" if len(found) > 1 else "fire")
    return b


# ----- SM1, SM2: where a move pauses -----


def test_sm2_a_submarine_group_pauses_at_a_hostile_zone_where_the_enemy_may_search() -> None:
    c = campaign()
    plan = c.move("Germany", THREE, [SNS, DOVER])
    assert plan.path == (HB, SNS, DOVER)
    moved, started = events(c, "UnitsMoved")[-1], events(c, "InterceptionStarted")[-1]
    assert moved.path == [HB, SNS] and moved.hostile_passed == []
    assert (started.nation, started.defender, started.zone, started.submarines) == ("Germany", "Britain", SNS, THREE)
    assert started.route == [HB, SNS, DOVER] and started.index == 1 and not started.retreat
    assert at(c, *THREE) == [SNS] * 3 and c.units["DE-SS3"]["moved"] == 1
    assert step(c, started.battle) == ("search", ["Britain"], "SM2")
    (item,) = c.pending()
    assert "GB-CA2 at 2, GB-DD3 at 2, GB-DD4 at 2, GB-DD5 at 2" in item["text"]
    # The move completes only when the pause is resolved: no phase change, no other move.
    assert "[SM2]" in refused(c, RuleViolation, c.advance, "T4").reason
    refused(c, RuleViolation, lambda: c.move("Germany", ["DE-DD1"], ["Skagerrak"]), "SM2")


def test_sm2_the_destination_is_not_searched() -> None:
    c = campaign()
    c.move("Germany", ["DE-SS3"], [SNS])
    assert not c.battles and c.units["DE-SS3"]["at"] == SNS


def test_sm1_a_hostile_zone_without_enemy_searchers_is_passed_freely() -> None:
    c = campaign()
    # The Northern North Sea is hostile (battleships, a carrier) but nothing there may search.
    plan = c.move("Germany", ["DE-SS1"], [NNS, "Norwegian Sea"])
    assert plan.hostile_passed == (NNS,) and not c.battles
    assert events(c, "UnitsMoved")[-1].hostile_passed == [NNS]
    assert c.units["DE-SS1"]["at"] == "Norwegian Sea"


def test_sm2_te4_aircraft_on_carriers_may_search_at_4_and_te3_cuts_it_to_3() -> None:
    c = campaign()
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup: Advanced ASW acquired
    c.move("Germany", ["DE-SS1"], [NNS, "Norwegian Sea"])
    b = c.battle_count
    assert c.battles[str(b)]["zone"] == NNS and "GB-FT1 at 4" in c.pending()[0]["text"]
    refused(c, RuleViolation, lambda: c.intercept_search(b, ["GB-BB1"], dice(1)), "SM2")
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup: TE3 against the searcher (TE5)
    c.intercept_search(b, ["GB-FT1"], dice(4))
    (roll,) = rolls(c)
    assert (roll.base_target, roll.target, roll.outcome) == (0, 3, "failure")
    assert [(m["rule"], m["set"], m["add"]) for m in roll.modifiers] == [("TE4", 4, 0), ("TE3", None, -1)]


def test_sm2_the_searchers_must_be_enemy_destroyers_or_cruisers_in_the_zone() -> None:
    c = campaign()
    b = intercepted(c)
    err = refused(c, RuleViolation, lambda: c.intercept_search(b, ["GB-DD1"], dice(1)), "SM2")
    assert err.reason == "GB-DD1 is not in Southern North Sea (it is in Central North Sea)"
    err = refused(c, RuleViolation, lambda: c.intercept_search(b, ["DE-DD1"], dice(1)), "SM2")
    assert "not an enemy of Germany" in err.reason
    c.units["GB-BB1"]["at"] = SNS  # direct setup: a battleship among the searchers' zone
    err = refused(c, RuleViolation, lambda: c.intercept_search(b, ["GB-BB1"], dice(1)), "SM2")
    assert "cannot search" in err.reason and "GB-DD3" in err.reason
    refused(c, InputError, lambda: c.intercept_search(b, ["GB-XX1"], dice(1)))
    refused(c, InputError, lambda: c.intercept_search(b, ["GB-DD3", "GB-DD3"], dice(1, 1)))
    refused(c, InputError, lambda: c.intercept_search(b + 1, None, dice()))


def test_sm2_a_refused_searcher_is_named_by_its_type_in_words() -> None:
    """A unit's type in a refusal as a player reads it ("aircraft carrier"), not its ID in the
    ruleset ("aircraft_carrier"), which commands and JSON keep."""
    c = campaign()
    c.units["GB-CV1"]["at"] = SNS  # direct setup: a carrier in the searchers' zone
    b = intercepted(c)
    err = refused(c, RuleViolation, lambda: c.intercept_search(b, ["GB-CV1"], dice(1)), "SM2")
    assert err.reason.startswith("GB-CV1 (aircraft carrier) cannot search for submarines passing through")


def test_sm2_the_enemy_may_let_the_group_pass_unsearched() -> None:
    c = campaign()
    b = intercepted(c)
    c.intercept_search(b, [], dice())
    assert rolls(c) == [] and step(c, b) == ("continue", ["Germany"], "SM5")
    assert events(c, "SearchesResolved")[-1].found == 0


# ----- SM3: each success finds one submarine -----


def test_sm3_three_destroyers_two_successes_find_two_of_three_submarines() -> None:
    """The house rules' own example."""
    c = campaign()
    b = intercepted(c)
    assert c.intercept_search(b, ["GB-DD3", "GB-DD4", "GB-DD5"], dice(1, 2, 7)) == ["GB-DD3", "GB-DD4"]
    assert [(r.unit, r.target, r.outcome, r.rule) for r in rolls(c)] == [
        ("GB-DD3", 2, "success", "SM3"),
        ("GB-DD4", 2, "success", "SM3"),
        ("GB-DD5", 2, "failure", "SM3"),
    ]
    resolved = events(c, "SearchesResolved")[-1]
    assert (resolved.found_by, resolved.failed, resolved.found) == (["GB-DD3", "GB-DD4"], ["GB-DD5"], 2)
    assert step(c, b) == ("detect", ["Britain"], "SM3")
    err = refused(c, RuleViolation, lambda: c.intercept_detect(b, ["DE-SS4"]), "SM3")
    assert "name 2 of DE-SS3, DE-SS4, DE-SS5" in err.reason
    refused(c, RuleViolation, lambda: c.intercept_detect(b, ["DE-SS4", "DE-SS1"]), "SM3")
    assert c.intercept_detect(b, ["DE-SS4", "DE-SS5"]) == ["DE-SS4", "DE-SS5"]
    found = events(c, "SubmarinesDetected")[-1]
    assert (found.detected, found.undetected, found.default) == (["DE-SS4", "DE-SS5"], ["DE-SS3"], False)
    # The detecting destroyers fight; GB-DD5 (failed) and GB-CA2 (did not search) do not.
    assert c.battles[str(b)]["hunters"] == ["GB-DD3", "GB-DD4"]
    assert step(c, b) == ("targets", ["Germany", "Britain"], "SM4")


def test_sm3_successes_beyond_the_group_size_detect_the_whole_group_automatically() -> None:
    c = campaign()
    b = intercepted(c, ["DE-SS3"])
    c.intercept_search(b, ["GB-CA2", "GB-DD3", "GB-DD4", "GB-DD5"], dice(1, 1, 1, 9))
    found = events(c, "SubmarinesDetected")[-1]
    assert (found.detected, found.default) == (["DE-SS3"], True)
    assert c.battles[str(b)]["hunters"] == ["GB-CA2", "GB-DD3", "GB-DD4"]  # every successful searcher fights
    assert step(c, b)[0] == "targets"


def test_sm3_the_default_finds_the_first_submarines_of_the_group() -> None:
    c = campaign()
    b = intercepted(c)
    c.intercept_search(b, ["GB-DD3"], dice(2))
    assert c.intercept_detect(b, None) == ["DE-SS3"]
    assert events(c, "SubmarinesDetected")[-1].default


def test_sm3_te4_escorts_search_at_3_and_te3_cuts_it_by_one_te5_stacks() -> None:
    c = campaign()
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    b = intercepted(c)
    c.intercept_search(b, ["GB-DD3"], dice(3))
    assert (rolls(c)[-1].target, rolls(c)[-1].outcome) == (3, "success")
    c = campaign()
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup
    b = intercepted(c)
    c.intercept_search(b, ["GB-DD3", "GB-DD4"], dice(2, 3))
    assert [(r.base_target, r.target, r.outcome) for r in rolls(c)] == [(2, 2, "success"), (2, 2, "failure")]
    c = campaign()
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup: TE3 alone, 2 becomes 1
    b = intercepted(c)
    c.intercept_search(b, ["GB-DD3"], dice(2))
    assert (rolls(c)[-1].target, rolls(c)[-1].outcome) == (1, "failure")


# ----- SM4: the ASW rounds of detected submarines -----


def test_sm4_each_detecting_unit_attacks_a_detected_submarine_which_fires_back_at_a_detecting_ship() -> None:
    c = campaign()
    b = detected_round(c, THREE, ["DE-SS4", "DE-SS5"])
    # Targets of the hunters: detected submarines only, never the undetected DE-SS3.
    err = refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-DD3": "DE-SS3", "GB-DD4": "DE-SS4"}))
    assert "detected submarine" in err.reason and err.rule == "SM4"
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-DD3": "DE-SS4"}), "SM4")  # GB-DD4 missing
    # Submarines fire only at detecting ships: GB-DD5 did not detect.
    err = refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", {"DE-SS4": "GB-DD5", "DE-SS5": "GB-DD3"}))
    assert "legal: GB-DD3, GB-DD4" in err.reason
    refused(c, RuleViolation, lambda: c.choose_targets(b, "France", None))
    c.choose_targets(b, "Britain", {"GB-DD3": "DE-SS4", "GB-DD4": "DE-SS4"})
    assert step(c, b) == ("targets", ["Germany"], "SM4")
    c.choose_targets(b, "Germany", {"DE-SS4": "GB-DD3", "DE-SS5": "GB-DD3"})
    assert step(c, b)[0] == "screening"
    c.choose_screens(b, "Britain", {})
    assert step(c, b) == ("fire", ["Germany", "Britain"], "SM4")
    assert "DE-SS4, DE-SS5, GB-DD3, GB-DD4" in c.pending()[0]["text"]
    before = c.version
    c.fire(b, dice(4, 9, 2, 3))
    assert [(r.unit, r.kind, r.base_target, r.target, r.outcome) for r in rolls(c, before)] == [
        ("DE-SS4", "asw_combat", 4, 4, "success"),  # SM4: at its attack value
        ("DE-SS5", "asw_combat", 4, 4, "failure"),
        ("GB-DD3", "asw_combat", 2, 2, "success"),  # AS4 value: 2
        ("GB-DD4", "asw_combat", 2, 2, "failure"),
    ]
    # Casualties after the round, together.
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit", before)] == [("GB-DD3", True), ("DE-SS4", True)]
    assert "GB-DD3" not in c.units and "DE-SS4" not in c.units
    assert c.battles[str(b)]["detected"] == ["DE-SS5"] and c.battles[str(b)]["hunters"] == ["GB-DD4"]
    assert step(c, b) == ("decide", ["Germany"], "SM4")


def test_sm4_te3_and_te4_values_in_the_asw_round() -> None:
    c = campaign()
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup
    b = intercepted(c, ["DE-SS3"])
    before = c.version
    c.intercept_search(b, ["GB-DD3"], dice(1))
    # One submarine, one hunter: each side's single legal target is chosen for it.
    assert targets_chosen(c, before) == [
        ("Germany", {"DE-SS3": "GB-DD3"}, True, "SM4"),
        ("Britain", {"GB-DD3": "DE-SS3"}, True, "SM4"),
    ]
    assert step(c, b) == ("fire", ["Germany", "Britain"], "SM4")
    before = c.version
    c.fire(b, dice(10, 10))
    sub, dd = rolls(c, before)
    assert (sub.base_target, sub.target) == (4, 5)  # TE3: attack +1
    assert (dd.base_target, dd.target) == (2, 2)  # TE4 sets 3, TE3 takes one off (TE5)


def test_ha1_a_detecting_escort_may_screen_another_in_an_interception() -> None:
    c = campaign()
    b = detected_round(c, THREE, ["DE-SS4", "DE-SS5"])
    c.choose_targets(b, "Germany", {"DE-SS4": "GB-DD3", "DE-SS5": "GB-DD3"})
    c.choose_targets(b, "Britain", None)
    refused(c, RuleViolation, lambda: c.choose_screens(b, "Britain", {"DE-SS4": "GB-DD5"}), "HA1")
    c.choose_screens(b, "Britain", {"DE-SS4": "GB-DD4"})
    before = c.version
    c.fire(b, dice(1, 9, 9, 9))
    (hit,) = events(c, "TargetHit", before)
    assert (hit.firer, hit.target, hit.unit, hit.rule) == ("DE-SS4", "GB-DD3", "GB-DD4", "HA1")
    assert "GB-DD4" not in c.units and "GB-DD3" in c.units


def test_sm4_submerge_retreat_or_fight_on_after_each_round() -> None:
    c = campaign()
    b = detected_round(c, THREE, ["DE-SS4", "DE-SS5"])
    c.choose_targets(b, "Germany", None)
    c.choose_targets(b, "Britain", None)
    c.choose_screens(b, "Britain", None)
    c.fire(b, dice(9, 9, 9, 9))
    refused(c, RuleViolation, lambda: c.intercept_decide(b, ["DE-SS3"], None), "SM4")  # undetected
    refused(c, RuleViolation, lambda: c.intercept_decide(b, ["DE-SS4"], ["DE-SS4"]), "SM4")
    # Fight on (nobody named): a second round from target selection.
    c.intercept_decide(b, [], [])
    assert c.battles[str(b)]["round"] == 2 and step(c, b)[0] == "targets"
    c.choose_targets(b, "Germany", None)
    c.choose_targets(b, "Britain", None)
    c.choose_screens(b, "Britain", None)
    c.fire(b, dice(9, 9, 9, 9))
    c.intercept_decide(b, ["DE-SS4"], ["DE-SS5"])
    dive, back = events(c, "SubmarinesSubmerged")[-1], events(c, "SubmarinesRetreated")[-1]
    assert (dive.units, dive.rule, back.units, back.zone) == (["DE-SS4"], "SM4", ["DE-SS5"], HB)
    assert at(c, "DE-SS4", "DE-SS5") == [SNS, HB]
    assert c.units["DE-SS5"]["moved"] == 2  # a step out and a step back
    # Nothing British searches in the Heligoland Bight: no new interception there.
    assert list(c.battles) == [str(b)] and step(c, b) == ("continue", ["Germany"], "SM5")


def test_sm4_the_default_after_a_round_is_to_submerge() -> None:
    c = campaign()
    b = detected_round(c, THREE, ["DE-SS4", "DE-SS5"])
    c.battle_auto(b, dice(9, 9, 9, 9))
    dive = events(c, "SubmarinesSubmerged")[-1]
    assert (dive.units, dive.default) == (["DE-SS4", "DE-SS5"], True)
    assert at(c, *THREE) == [DOVER, SNS, SNS] and not c.battles


def test_sm4_a_retreat_into_a_zone_with_asw_units_may_be_intercepted_there() -> None:
    c = campaign()
    # DE-SS1 and DE-SS2 leave the Central North Sea, where British escorts are, for Dover.
    b = intercepted(c, ["DE-SS1", "DE-SS2"])
    assert events(c, "UnitsMoved")[-1].path == [CNS, SNS]
    c.intercept_search(b, ["GB-DD3", "GB-DD4"], dice(1, 1))
    c.choose_targets(b, "Germany", None)
    c.choose_targets(b, "Britain", None)
    c.choose_screens(b, "Britain", None)
    c.fire(b, dice(9, 9, 9, 9))
    c.intercept_decide(b, ["DE-SS2"], ["DE-SS1"])
    back = c.battle_count
    assert back == b + 1
    started = events(c, "InterceptionStarted")[-1]
    assert (started.zone, started.submarines, started.route, started.index, started.retreat) == (
        CNS,
        ["DE-SS1"],
        [CNS],
        0,
        True,
    )
    assert c.units["DE-SS1"]["at"] == CNS and step(c, back) == ("search", ["Britain"], "SM2")
    assert "GB-CA1 at 2, GB-DD1 at 2, GB-DD2 at 2" in c.describe_waiting(c.battles[str(back)])
    before = c.version
    c.intercept_search(back, ["GB-DD1"], dice(1))
    # DE-SS1 alone against GB-DD1: both targets are chosen for the players.
    assert targets_chosen(c, before) == [
        ("Germany", {"DE-SS1": "GB-DD1"}, True, "SM4"),
        ("Britain", {"GB-DD1": "DE-SS1"}, True, "SM4"),
    ]
    assert step(c, back) == ("fire", ["Germany", "Britain"], "SM4")
    c.fire(back, dice(9, 9))
    # Back where its move began: no zone to retreat to any more.
    err = refused(c, RuleViolation, lambda: c.intercept_decide(back, None, ["DE-SS1"]), "SM4")
    assert "no zone to retreat to" in err.reason
    c.intercept_decide(back, None, None)
    assert str(back) not in c.battles and c.units["DE-SS1"]["at"] == CNS
    assert events(c, "BattleEnded")[-1].rule == "SM4"


# ----- SM5: undetected submarines go on or stop -----


def test_sm5_undetected_submarines_continue_to_their_destination() -> None:
    c = campaign()
    b = detected_round(c, THREE, ["DE-SS4"])
    assert targets_chosen(c) == [
        ("Germany", {"DE-SS4": "GB-DD3"}, True, "SM4"),
        ("Britain", {"GB-DD3": "DE-SS4"}, True, "SM4"),
    ]
    c.battle_auto(b, dice(9, 9))
    assert [r.unit for r in rolls(c) if r.rule == "SM4"] == ["DE-SS4", "GB-DD3"]
    go = events(c, "SubmarinesContinued")[-1]
    assert (go.continuing, go.stopping, go.default) == (["DE-SS3", "DE-SS5"], [], True)
    moved = events(c, "UnitsMoved")[-1]
    assert (moved.units, moved.path, moved.hostile_passed) == (["DE-SS3", "DE-SS5"], [SNS, DOVER], [SNS])
    assert at(c, *THREE) == [DOVER, SNS, DOVER] and c.units["DE-SS3"]["moved"] == 2
    assert not c.battles and c.pending() == []
    advance_passing(c)  # the move is complete: the phase may end


def test_sm5_undetected_submarines_may_stop_in_the_zone() -> None:
    c = campaign()
    b = intercepted(c)
    c.intercept_search(b, [], dice())
    refused(c, RuleViolation, lambda: c.intercept_continue(b, ["DE-SS1"]), "SM5")
    refused(c, InputError, lambda: c.intercept_continue(b, ["DE-SS3", "DE-SS3"]))
    c.intercept_continue(b, ["DE-SS4", "DE-SS5"])
    assert at(c, *THREE) == [DOVER, SNS, SNS]
    assert events(c, "BattleEnded")[-1].survivors == ["DE-SS4", "DE-SS5"]


def test_sm2_a_group_passing_two_hostile_zones_pauses_at_each_in_turn() -> None:
    ruleset = copy.deepcopy(RULESET)
    ruleset["units"]["submarine"]["move"] = 3  # a house rule: submarines move 3
    c = campaign(ruleset)
    c.units["GB-DD1"]["at"] = DOVER  # direct setup: a British destroyer in the Dover Strait too
    c.move("Germany", ["DE-SS3", "DE-SS4"], [SNS, DOVER, "English Channel"])
    first = c.battle_count
    assert c.battles[str(first)]["zone"] == SNS
    c.intercept_search(first, [], dice())
    c.intercept_continue(first, None)
    second = c.battle_count
    assert second == first + 1 and c.battles[str(second)]["zone"] == DOVER
    assert c.battles[str(second)]["index"] == 2 and at(c, "DE-SS3", "DE-SS4") == [DOVER, DOVER]
    c.intercept_search(second, ["GB-DD1"], dice(8))
    c.intercept_continue(second, None)
    legs = [(e.path, e.hostile_passed) for e in events(c, "UnitsMoved")]
    assert legs == [([HB, SNS], []), ([SNS, DOVER], [SNS]), ([DOVER, "English Channel"], [DOVER])]
    assert at(c, "DE-SS3", "DE-SS4") == ["English Channel"] * 2 and c.units["DE-SS3"]["moved"] == 3


def test_auto_resolves_the_interception_and_any_further_one_of_the_group() -> None:
    ruleset = copy.deepcopy(RULESET)
    ruleset["units"]["submarine"]["move"] = 3  # a house rule: submarines move 3
    c = campaign(ruleset)
    c.units["GB-DD1"]["at"] = DOVER  # direct setup
    c.move("Germany", ["DE-SS3"], [SNS, DOVER, "English Channel"])
    # Four searchers fail in the Southern North Sea, one in the Dover Strait.
    assert c.battle_auto(c.battle_count, dice(9, 9, 9, 9, 9)) == [1, 2]
    assert c.units["DE-SS3"]["at"] == "English Channel" and not c.battles


# ----- RK2: refused commands change nothing -----


def test_rk2_commands_out_of_turn_or_step_are_refused_and_change_nothing() -> None:
    c = campaign()
    b = intercepted(c)
    refused(c, RuleViolation, lambda: c.intercept_detect(b, None), "SM2")
    refused(c, RuleViolation, lambda: c.intercept_continue(b, None), "SM2")
    refused(c, RuleViolation, lambda: c.fire(b, dice(1)), "SM2")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", None), "SM2")
    refused(c, DiceError, lambda: c.intercept_search(b, None, dice(1)))  # four searchers, one die
    c.intercept_search(b, ["GB-DD3"], dice(1))
    since = c.version
    c.intercept_detect(b, ["DE-SS5"])
    # DE-SS5 and GB-DD3 are each other's only legal target: chosen for both sides.
    assert targets_chosen(c, since) == [
        ("Germany", {"DE-SS5": "GB-DD3"}, True, "SM4"),
        ("Britain", {"GB-DD3": "DE-SS5"}, True, "SM4"),
    ]
    assert step(c, b) == ("fire", ["Germany", "Britain"], "SM4")
    refused(c, RuleViolation, lambda: c.intercept_decide(b, None, None), "SM4")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", None), "SM4")  # nothing left to choose
    # A fire command that runs out of dice halfway records none of its rolls or hits.
    refused(c, DiceError, lambda: c.fire(b, dice(1)))


def test_sm4_sm5_a_submarine_named_twice_is_named() -> None:
    c = campaign()
    b = intercepted(c)
    c.intercept_search(b, [], dice())
    err = refused(c, InputError, lambda: c.intercept_continue(b, ["DE-SS3", "DE-SS3"]))
    assert str(err) == "submarine DE-SS3 is named twice"


def test_sm3_sm4_sm5_a_unit_the_board_does_not_hold_is_named_unknown() -> None:
    """As every command names it (`board.unknown_unit`), not as a submarine outside the group,
    the fight or the free ones; one of the board outside the choice still cites the rule."""
    c = campaign()
    b = intercepted(c)
    c.intercept_search(b, [], dice())
    err = refused(c, InputError, lambda: c.intercept_continue(b, ["DE-SS4", "DE-SS9"]))
    assert str(err).startswith("unknown unit 'DE-SS9' (did you mean"), str(err)
    refused(c, RuleViolation, lambda: c.intercept_continue(b, ["DE-SS1"]), "SM5")

    c = campaign()
    b = intercepted(c)
    c.intercept_search(b, ["GB-DD3", "GB-DD4"], dice(1, 1))
    err = refused(c, InputError, lambda: c.intercept_detect(b, ["DE-SS4", "DE-SS9"]))
    assert str(err).startswith("unknown unit 'DE-SS9'"), str(err)
    refused(c, RuleViolation, lambda: c.intercept_detect(b, ["DE-SS4", "GB-DD3"]), "SM3")
    c.intercept_detect(b, ["DE-SS4", "DE-SS5"])
    c.choose_targets(b, "Germany", None)
    c.choose_targets(b, "Britain", None)
    c.choose_screens(b, "Britain", None)
    c.fire(b, dice(9, 9, 9, 9))
    err = refused(c, InputError, lambda: c.intercept_decide(b, ["ZZ-1"], None))
    assert str(err) == "unknown unit 'ZZ-1' (see `tracker state`)"
    err = refused(c, InputError, lambda: c.intercept_decide(b, None, ["DE-SS9"]))
    assert str(err).startswith("unknown unit 'DE-SS9'"), str(err)
    refused(c, RuleViolation, lambda: c.intercept_decide(b, ["DE-SS3"], None), "SM4")
