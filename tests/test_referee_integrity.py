"""The whole turn refereed: purchases and placement (PU1-PU3), adjustments (AD1), phase gates
(T4) and the rule defects found by playing two rounds (SM4, SM5, NC1, NC6, F7, CV7)."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import InputError, RuleViolation
from domain.rules.catalog import statement
from domain.rules.economy import Adjustment
from domain.ruleset import load_ruleset, ruleset_from_dict
from domain.scenario import read_scenario
from tests.support import advance
from tracker.cli.main import cli

HB, CNS, SNS = "Heligoland Bight", "Central North Sea", "Southern North Sea"
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")


def campaign(scenario: dict[str, Any] | None = None, ruleset: dict[str, Any] | None = None) -> Campaign:
    return Campaign.create(
        uuid.uuid4(), "t", scenario or SCENARIO, ruleset or RULESET, "manual", commitment(new_seed())
    )


def to(c: Campaign, nation: str, phase: str) -> None:
    while (c.nation, c.phase) != (nation, phase):
        advance(c)


def refused(c: Campaign, error: type[Exception], action: Any, rule: str | None = None) -> Any:
    before = (c.version, copy.deepcopy(c.units), copy.deepcopy(c.balances), copy.deepcopy(c.unplaced))
    with pytest.raises(error) as info:
        action()
    if rule is not None:
        assert info.value.rule == rule, str(info.value)
    assert (c.version, c.units, c.balances, c.unplaced) == before
    return info.value


# ----- PU1-PU3 -----


def test_pu1_buying_pays_the_cost_and_never_goes_below_zero() -> None:
    c = campaign()
    refused(c, RuleViolation, lambda: c.buy("Germany", "submarine"), "T3")  # research phase
    to(c, "Germany", "purchase")
    assert c.buy("Germany", "submarine", 2) == 12
    assert c.balances["Germany"] == 18 and c.unplaced == {"Germany": {"submarine": 2}}
    err = refused(c, RuleViolation, lambda: c.buy("Germany", "battleship"), "PU1")
    assert "costs 20" in err.reason and "has 18" in err.reason
    refused(c, InputError, lambda: c.buy("Germany", "zeppelin"))
    refused(c, InputError, lambda: c.buy("Germany", "submarine", 0))


def test_pu2_placement_next_to_own_ports_with_new_ids_never_used() -> None:
    c = campaign()
    to(c, "Germany", "purchase")
    c.buy("Germany", "submarine")
    c.buy("Germany", "bomber")
    to(c, "Germany", "placement")
    err = refused(c, RuleViolation, lambda: c.place("Germany", "submarine", "Irish Sea"), "PU2")
    assert "Heligoland Bight" in err.reason  # the legal zones are listed
    refused(c, RuleViolation, lambda: c.place("Germany", "destroyer", HB), "PU2")  # not bought
    refused(c, RuleViolation, lambda: c.place("Germany", "bomber", "England"), "PU2")
    del c.units["DE-SS5"]  # direct setup: a sunk U-boat's ID is never reused
    assert c.place("Germany", "submarine", HB) == ["DE-SS6"]
    assert c.place("Germany", "bomber", "Northern Germany") == ["DE-BM2"]
    assert c.units["DE-SS6"]["at"] == HB and not c.unplaced
    assert c.board().units["DE-BM2"].type == "bomber"


def test_pu2_ports_marked_in_the_scenario_limit_where_ships_are_placed() -> None:
    scenario = copy.deepcopy(SCENARIO)
    scenario["map"]["land"]["Flanders"]["port"] = True
    c = campaign(scenario)
    to(c, "Germany", "purchase")
    c.buy("Germany", "destroyer")
    to(c, "Germany", "placement")
    refused(c, RuleViolation, lambda: c.place("Germany", "destroyer", HB), "PU2")  # Northern Germany: no port
    assert c.place("Germany", "destroyer", SNS) == ["DE-DD3"]


def test_pu3_unit_caps_of_the_scenario_are_checked_at_purchase() -> None:
    scenario = copy.deepcopy(SCENARIO)
    scenario["nations"]["Germany"]["caps"] = {"submarine": 6}
    c = campaign(scenario)
    to(c, "Germany", "purchase")
    c.buy("Germany", "submarine")
    err = refused(c, RuleViolation, lambda: c.buy("Germany", "submarine"), "PU3")
    assert "at most 6 submarine" in err.reason


def test_t4_pu2_placement_cannot_end_with_units_bought_and_not_placed() -> None:
    c = campaign()
    to(c, "Germany", "purchase")
    c.buy("Germany", "submarine")
    item = [i for i in c.pending() if i["kind"] == "unplaced"][0]
    assert not item["blocking"]  # shown, but the purchase phase may end
    to(c, "Germany", "placement")
    err = refused(c, RuleViolation, c.advance, "T4")
    assert "[PU2]" in err.reason and "1 submarine bought and not placed" in err.reason


# ----- AD1 -----


def test_ad1_an_adjustment_is_one_event_with_its_reason() -> None:
    c = campaign()
    refused(c, InputError, lambda: c.adjust(Adjustment(resources={"Germany": 5}), "  "))
    refused(c, InputError, lambda: c.adjust(Adjustment(), "nothing"))
    before = c.version
    c.adjust(
        Adjustment(
            add=(("France", "destroyer", "English Channel", 2),),
            remove=("DE-BM1",),
            resources={"Britain": -3},
            ntr=(("Britain", "Irish Sea", 1),),
            owners={"Northern France": "Germany"},
            tech=(("Germany", "advanced_asw", 2),),
        ),
        "land battle in Picardy",
    )
    (event,) = [e for e in c.pending_events if e.originator_version > before]
    assert type(event).__name__ == "Adjusted" and event.reason == "land battle in Picardy"
    assert "FR-DD1" in c.units and "DE-BM1" not in c.units
    assert c.balances["Britain"] == 27 and c.ntr["Britain"]["Irish Sea"] == 3
    assert c.owners["Northern France"] == "Germany" and c.tech["Germany"]["advanced_asw"] == 2


def test_ad1_an_adjustment_cannot_leave_impossible_values() -> None:
    c = campaign()
    refused(c, RuleViolation, lambda: c.adjust(Adjustment(resources={"Germany": -31}), "x"), "AD1")
    refused(c, RuleViolation, lambda: c.adjust(Adjustment(ntr=(("Britain", "Irish Sea", 2),)), "x"), "AD1")
    refused(c, RuleViolation, lambda: c.adjust(Adjustment(add=(("Germany", "submarine", "Flanders", 1),)), "x"), "AD1")
    refused(c, InputError, lambda: c.adjust(Adjustment(owners={"Irish Sea": "Germany"}), "x"))
    refused(c, InputError, lambda: c.adjust(Adjustment(remove=("DE-SS99",)), "x"))


def test_ad1_f7_air_units_added_at_sea_go_aboard_friendly_carriers_with_room() -> None:
    c = campaign()
    err = refused(c, RuleViolation, lambda: c.adjust(Adjustment(add=(("Germany", "fighter", "Skagerrak", 1),)), "x"))
    assert (err.rule, err.reason) == (
        "F7",
        "Germany's air units at sea in Skagerrak need room on friendly carriers there: "
        "0 aboard and 1 added, room for 0",
    )
    # GB-CV1 carries two, GB-FT1 aboard already: one more fits, two do not.
    too_many = Adjustment(add=(("Britain", "fighter", "Northern North Sea", 2),))
    refused(c, RuleViolation, lambda: c.adjust(too_many, "x"), "F7")
    c.adjust(Adjustment(add=(("Britain", "fighter", "Northern North Sea", 1),)), "a second squadron")


def test_ad1_ntr_only_in_sea_zones_and_a_unit_removed_once() -> None:
    c = campaign()
    err = refused(c, RuleViolation, lambda: c.adjust(Adjustment(ntr=(("Germany", "England", 1),)), "x"), "AD1")
    assert err.reason == "England is a land territory: NTR are markers in sea zones (F6)"
    err = refused(c, InputError, lambda: c.adjust(Adjustment(remove=("DE-SS1", "DE-SS1")), "x"))
    assert str(err) == "DE-SS1 is named twice in --remove"


def test_ad1_a_changed_owner_decides_landing_and_ports() -> None:
    c = campaign()
    c.adjust(Adjustment(owners={"Northern France": "Germany"}), "the offensive takes Lille")
    to(c, "France", "noncombat_movement")
    assert "FR-BM1" in c.stranded_aircraft()  # its airfield is now German (F7)
    err = refused(c, RuleViolation, c.advance, "T4")
    assert "[F7]" in err.reason


# ----- T4 -----


def test_t4_nc1_a_naval_battle_due_after_moving_in_blocks_next() -> None:
    c = campaign()
    to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-CA1", "DE-BB1", "DE-BB2"], [CNS])
    advance(c)
    err = refused(c, RuleViolation, c.advance, "T4")
    assert "naval battle due in Central North Sea" in err.reason and "[NC1]" in err.reason
    c.naval_start("Germany", CNS)
    assert c.due_naval_battles() == []  # fought now: no longer due


def test_nc1_fleets_that_merely_share_a_zone_may_fight_but_need_not() -> None:
    c = campaign()
    to(c, "Germany", "naval_combat")
    # British submarines share the Heligoland Bight with German ships: ASW is optional (AS1).
    assert c.due_naval_battles() == []
    advance(c)
    assert c.phase == "land_combat"


def test_t4_f7_air_units_that_cannot_land_are_lost_only_when_confirmed() -> None:
    c = campaign()
    to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-BM1"], ["Northern Germany", HB])
    to(c, "Germany", "noncombat_movement")
    err = refused(c, RuleViolation, c.advance, "T4")
    assert "DE-BM1 must land by the end of noncombat movement" in err.reason and "[F7]" in err.reason
    c.advance(confirm_losses=True)
    lost = [e for e in c.pending_events if type(e).__name__ == "AircraftLost"][-1]
    assert lost.units == ["DE-BM1"] and "DE-BM1" not in c.units and c.phase == "placement"


def test_t4_cv1_collection_waits_for_every_enemy_to_declare_or_pass() -> None:
    c = campaign()
    to(c, "Germany", "collect_resources")
    assert c.convoy_attacks_open() == {"Britain": [HB]}
    refused(c, RuleViolation, c.advance, "T4")
    refused(c, RuleViolation, lambda: c.convoy_pass("France"), "CV1")  # nothing to attack
    c.convoy_pass("Britain")
    refused(c, RuleViolation, lambda: c.declare_convoy_attack("Britain", HB, None), "CV1")
    c.advance()
    assert c.phase == "research" and c.nation == "Britain"


def test_t4_next_to_the_current_position_is_refused(tmp_path: Any) -> None:
    db = str(tmp_path / "c.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", db, "new", "x", "--scenario", "north-sea-1914"]).exit_code == 0
    result = runner.invoke(cli, ["--db", db, "next", "--to", "research", "--nation", "Germany"])
    assert result.exit_code == 2 and "already there" in result.output
    result = runner.invoke(cli, ["--db", db, "log", "--kind", "PhaseAdvanced", "--json"])
    assert result.output.strip() == "[]"


# ----- SM4, SM5 -----


def interception(c: Campaign) -> int:
    to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-SS3", "DE-SS4"], [SNS, "Dover Strait"])
    return c.battle_count


def test_sm4_a_submarine_that_submerged_cannot_move_again() -> None:
    c = campaign()
    b = interception(c)
    c.intercept_search(b, ["GB-DD3", "GB-DD4"], ManualDice([1, 1]))
    while c.battles[str(b)]["step"] in ("targets", "screening"):
        nation = c.battles[str(b)]["waiting"][0]
        if c.battles[str(b)]["step"] == "targets":
            c.choose_targets(b, nation, None)
        else:
            c.choose_screens(b, nation, None)
    c.fire(b, ManualDice([10, 10, 10, 10]))
    c.intercept_decide(b, ["DE-SS3", "DE-SS4"], None)
    err = refused(c, RuleViolation, lambda: c.move("Germany", ["DE-SS3"], ["Dover Strait"]), "SM4")
    assert "movement has ended" in err.reason


def test_sm5_a_submarine_that_stopped_cannot_move_on_and_a_battle_is_due() -> None:
    c = campaign()
    b = interception(c)
    c.intercept_search(b, [], ManualDice([]))
    c.intercept_continue(b, ["DE-SS3"])
    refused(c, RuleViolation, lambda: c.move("Germany", ["DE-SS3"], ["Dover Strait"]), "SM5")
    advance(c)
    assert c.due_naval_battles() == [SNS]
    refused(c, RuleViolation, c.advance, "T4")


# ----- NC6 -----


def test_nc6_battleships_cannot_hit_submarines_and_roll_no_die() -> None:
    # Battleships against submarines alone: a battle only a campaign recorded before NC1 said
    # that enemy submarines alone call for ASW combat (AS1) could start.
    before = copy.deepcopy(RULESET)
    del before["naval_combat"]["submarines_alone_call_for_asw"]
    c = campaign(ruleset=before)
    to(c, "Germany", "combat_movement")
    for uid in ("DE-DD1", "DE-DD2", "DE-CA1", "DE-SS3", "DE-SS4", "DE-SS5"):
        c.units[uid]["at"] = "Skagerrak"  # direct setup: only the battleships face the British boats
    advance(c)
    b = c.naval_start("Germany", HB)
    while c.battles[str(b)]["step"] in ("opening_targets", "opening_screening"):
        c.auto_step(b, ManualDice([]))
    c.fire(b, ManualDice([10, 10]))  # the British boats' opening fire misses
    withheld = [e for e in c.pending_events if type(e).__name__ == "FireWithheld"][-1]
    assert (withheld.units, withheld.rule) == (["DE-BB1", "DE-BB2"], "NC6")
    assert c.battles[str(b)]["step"] == "decide"  # the battleships rolled no die


# ----- F7 -----


def test_f7_air_range_counts_what_was_flown_this_turn() -> None:
    c = campaign()
    to(c, "Britain", "combat_movement")
    c.move("Britain", ["GB-FT1"], [CNS, "Skagerrak", HB])  # 3 of 4
    board = c.board()
    assert board.units["GB-FT1"].moved == 3
    err = refused(c, RuleViolation, lambda: c.move("Britain", ["GB-FT1"], ["Southern North Sea", "Dover Strait"]), "F7")
    assert "1 of 4" in err.reason


# ----- CV7, display numbers -----


def test_cv7_a_command_for_an_ended_battle_is_refused_citing_cv7() -> None:
    c = campaign()
    to(c, "Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1"])
    c.convoy_merchant_defence(b, ManualDice([10, 10]))  # the only taking-part U-boat is lost (CV2)
    assert not c.battles and c.ended[str(b)] == ["convoy", "CV7"]
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", None), "CV7")
    refused(c, RuleViolation, lambda: c.convoy_search(b, None, ManualDice([])), "CV7")
    refused(c, InputError, lambda: c.convoy_search(b + 5, None, ManualDice([])))


def test_display_numbers_come_from_the_campaigns_ruleset() -> None:
    house = copy.deepcopy(RULESET)
    house["convoy"]["merchant_defence_dice"] = 1
    house["convoy"]["merchant_defence_sinks_on_total"] = 9
    c = campaign(ruleset=house)
    to(c, "Britain", "collect_resources")
    c.declare_convoy_attack("Germany", CNS, ["DE-SS1"])
    assert "1D10; a total of 9 sinks one submarine" in c.pending()[0]["text"]
    rs = ruleset_from_dict(house, "house")
    assert "rolls 1D10; a total of 9 or more" in statement("CV2", rs)


def test_f6_the_ntr_value_is_ruleset_data() -> None:
    house = copy.deepcopy(RULESET)
    house["trade"] = {"ntr_value": 2}
    c = campaign(ruleset=house)
    to(c, "Germany", "collect_resources")
    c.convoy_pass("Britain")
    c.advance()
    collected = [e for e in c.pending_events if type(e).__name__ == "ResourcesCollected"][-1]
    assert collected.ntr_value == 6  # 3 NTR at 2 each


def test_pu2_ad1_reports_show_purchases_waiting_units_and_adjustments(tmp_path: Any) -> None:
    import json

    db = str(tmp_path / "c.db")
    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(cli, ["--db", db, *args])
        assert result.exit_code == 0, result.output
        return result.output

    run("new", "x", "--scenario", "north-sea-1914", "--dice", "manual")
    run("next")
    run("buy", "submarine", "2")
    run("adjust", "--resources", "Britain=-3", "--reason", "the Yser")
    state = json.loads(run("state", "--json"))
    assert state["unplaced"] == {"Germany": {"submarine": 2}}
    assert "Bought by Germany, not yet placed (PU2): 2 submarines" in run("state")
    turn = json.loads(run("report", "--turn", "1", "--format", "json"))["turns"][0]
    assert turn["unplaced"] == {"Germany": {"submarine": 2}}
    assert [a["reason"] for a in turn["adjustments"]] == ["the Yser"]
    markdown = run("report", "--turn", "1")
    assert "Bought by Germany and not yet placed: 2 submarines (PU2)" in markdown
    assert "ADJUSTMENT: Britain resources -3 (reason: the Yser)" in markdown
    assert "ADJUSTMENT" in run("log", "--kind", "Adjusted")


# ----- errors that name the real problem -----


def test_f4_moving_to_the_zone_a_unit_is_in_and_a_ship_onto_land_say_so() -> None:
    c = campaign()
    to(c, "Germany", "combat_movement")
    err = refused(c, RuleViolation, lambda: c.move("Germany", ["DE-SS3"], [HB]), "F4")
    assert "DE-SS3 is already in Heligoland Bight" in err.reason
    err = refused(c, RuleViolation, lambda: c.move("Germany", ["DE-SS3"], ["Northern Germany"]), "F4")
    assert "cannot enter Northern Germany, a land territory" in err.reason


def test_a_sunk_unit_is_named_as_sunk_not_unknown() -> None:
    c = campaign()
    to(c, "Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1"])
    c.convoy_merchant_defence(b, ManualDice([10, 10]))  # the only taking-part U-boat is lost (CV2)
    assert c.lost["DE-SS1"] == f"sunk in battle {b}"
    to(c, "Germany", "combat_movement")
    err = refused(c, InputError, lambda: c.move("Germany", ["DE-SS1"], [SNS]))
    assert str(err) == f"DE-SS1 was sunk in battle {b}"
    refused(c, InputError, lambda: c.move("Germany", ["DE-SS42"], [SNS]))  # never existed: unknown


def test_ha1_a_screen_at_the_fire_step_is_refused_as_too_late() -> None:
    c = campaign()
    to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-CA1", "DE-BB1", "DE-BB2"], [CNS])
    advance(c)
    b = c.naval_start("Germany", CNS)
    while c.battles[str(b)]["step"] not in ("fire", "opening_fire"):
        c.auto_step(b, ManualDice([]))
    err = refused(c, RuleViolation, lambda: c.choose_screens(b, "Britain", {}), "HA1")
    assert "too late to screen" in err.reason


def _events(c: Campaign, kind: str, since: int = 0) -> list[Any]:
    return [e for e in c.pending_events if e.originator_version > since and type(e).__name__ == kind]


def test_ha1_a_single_legal_target_is_chosen_for_the_player() -> None:
    c = campaign()
    to(c, "Germany", "naval_combat")
    for uid in ("GB-DD2", "GB-CA1"):
        del c.units[uid]  # direct setup: GB-DD1 alone against DE-SS1 and DE-SS2
    since = c.version
    b = c.naval_start("Germany", CNS)
    # NC2: GB-DD1 cancels one submarine's opening fire; the other's only legal target is GB-DD1,
    # so the choice is recorded for Germany and nobody is asked (no one can screen GB-DD1 either).
    (opening,) = _events(c, "TargetsChosen", since)
    assert (opening.nation, opening.targets, opening.default, opening.rule) == (
        "Germany",
        {"DE-SS1": "GB-DD1"},
        True,
        "NC2",
    )
    # The step opens (clearing the last volley's shots), the forced choice is recorded, fire follows.
    assert [e.step for e in _events(c, "BattleAdvanced", since)] == ["opening_targets", "opening_fire"]
    b_state = c.battles[str(b)]
    assert (b_state["step"], b_state["waiting"], b_state["rule"]) == ("opening_fire", ["Germany"], "NC2")
    assert c.pending()[0]["text"].endswith("one per firing unit in this order: DE-SS1 [NC2]")
    # Nothing is left to choose: a targets command is refused, citing the step waited for.
    err = refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", {"DE-SS1": "GB-DD1"}), "NC2")
    assert "to roll" in err.reason
    since = c.version
    c.fire(b, ManualDice([10]))
    (roll,) = _events(c, "DiceRolled", since)
    assert (roll.unit, roll.purpose) == ("DE-SS1", "DE-SS1 (submarine) fires at GB-DD1")
    # HA1: in the round DE-SS2 fires too, again with GB-DD1 as its only legal target; GB-DD1
    # picks no target, so the round goes straight to the dice.
    (main,) = _events(c, "TargetsChosen", since)
    assert (main.nation, main.targets, main.default, main.rule) == ("Germany", {"DE-SS2": "GB-DD1"}, True, "HA1")
    b_state = c.battles[str(b)]
    assert (b_state["step"], b_state["waiting"], b_state["rule"]) == ("fire", ["Germany", "Britain"], "NC3")
    assert not _events(c, "ScreeningChosen")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", None), "NC3")
    since = c.version
    c.fire(b, ManualDice([1, 10]))
    assert [(r.unit, r.purpose) for r in _events(c, "DiceRolled", since)] == [
        ("DE-SS2", "DE-SS2 (submarine) fires at GB-DD1"),
        ("GB-DD1", "GB-DD1 (destroyer) fires at Germany's units"),
    ]
    (hit,) = _events(c, "TargetHit", since)
    assert (hit.firer, hit.target, hit.unit) == ("DE-SS2", "GB-DD1", "GB-DD1")
    assert "GB-DD1" not in c.units


def test_cv2_the_only_taking_part_submarine_is_lost_without_asking() -> None:
    c = campaign()
    to(c, "Britain", "collect_resources")
    since = c.version
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1"])  # DE-SS2 is there but takes no part
    c.convoy_merchant_defence(b, ManualDice([10, 10]))
    (hit,) = _events(c, "HitsScored", since)
    assert (hit.nation, hit.hits, hit.candidates, hit.rule) == ("Germany", 1, ["DE-SS1"], "CV2")
    # Nothing to choose: the loss is recorded for Germany (as a default), and with no taking-part
    # submarine left the battle ends there (CV7): no search, round or convoy table.
    (chosen,) = _events(c, "CasualtiesChosen", since)
    assert (chosen.nation, chosen.units, chosen.default, chosen.rule) == ("Germany", ["DE-SS1"], True, "CV2")
    assert [(e.unit, e.sunk, e.rule) for e in _events(c, "UnitHit", since)] == [("DE-SS1", True, "CV2")]
    (ended,) = _events(c, "BattleEnded", since)
    assert (ended.rule, ended.survivors) == ("CV7", [])
    assert not _events(c, "SearchersChosen", since) and c.pending() == []
    assert "DE-SS2" in c.units and c.ntr["Britain"][CNS] == 3
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", ["DE-SS1"]), "CV7")
    # With two taking part there is a choice: Germany is asked.
    c = campaign()
    to(c, "Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1", "DE-SS2"])
    c.convoy_merchant_defence(b, ManualDice([10, 10]))
    assert not _events(c, "CasualtiesChosen")
    assert (c.battles[str(b)]["step"], c.battles[str(b)]["waiting"]) == ("merchant_casualty", ["Germany"])
    assert c.convoy_choose_casualties(b, "Germany", ["DE-SS2"]) == ["DE-SS2"]
    (chosen,) = _events(c, "CasualtiesChosen")
    assert (chosen.units, chosen.default) == (["DE-SS2"], False)
    assert c.battles[str(b)]["step"] == "search"


def test_cv3_with_no_eligible_searcher_the_empty_search_is_recorded() -> None:
    c = campaign()
    to(c, "Britain", "collect_resources")
    for uid in ("GB-DD1", "GB-DD2", "GB-CA1", "GB-BM1", "GB-FT1", "FR-BM1"):
        del c.units[uid]  # direct setup: no British or French ship or aircraft in reach
    since = c.version
    b = c.declare_convoy_attack("Germany", CNS, None)
    c.convoy_merchant_defence(b, ManualDice([1, 1]))  # no effect
    # CV3: nobody can search, so nothing is asked: the empty search is recorded for Britain
    # and the battle goes on to the convoy table (CV5).
    (searchers,) = _events(c, "SearchersChosen", since)
    assert searchers.units == []
    (found,) = _events(c, "DetectionsRecorded", since)
    assert (found.detected, found.failed) == ([], [])
    assert [r.rule for r in _events(c, "DiceRolled", since)] == ["CV2"]
    assert not _events(c, "RoundStarted", since)
    assert (c.battles[str(b)]["step"], c.battles[str(b)]["waiting"], c.battles[str(b)]["rule"]) == (
        "convoy_table",
        ["Germany"],
        "CV5",
    )
    refused(c, RuleViolation, lambda: c.convoy_search(b, [], ManualDice([])), "CV3")
    c.convoy_table(b, ManualDice([5, 1]))
    assert [r.unit for r in _events(c, "DiceRolled", since) if r.rule == "CV5"] == ["DE-SS1", "DE-SS2"]
    (ended,) = _events(c, "BattleEnded", since)
    assert (ended.rule, ended.survivors) == ("CV7", ["DE-SS1", "DE-SS2"])
    # The same after merchant defence sinks one of two U-boats and Germany picks it.
    c = campaign()
    to(c, "Britain", "collect_resources")
    for uid in ("GB-DD1", "GB-DD2", "GB-CA1", "GB-BM1", "GB-FT1", "FR-BM1"):
        del c.units[uid]  # direct setup
    b = c.declare_convoy_attack("Germany", CNS, None)
    c.convoy_merchant_defence(b, ManualDice([10, 10]))
    since = c.version
    c.convoy_choose_casualties(b, "Germany", ["DE-SS1"])
    (searchers,) = _events(c, "SearchersChosen", since)
    assert searchers.units == []
    assert c.battles[str(b)]["step"] == "convoy_table"
