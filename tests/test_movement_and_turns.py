"""Turn sequence (T), movement (F4, F7, SM1), NTR placement (CV6), research (TE1, TE2), collection (F6).

Every test drives a Campaign aggregate in memory; refused commands must leave it untouched (RK2).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.dice import AutoDice, ManualDice, commitment, derive_roll, new_seed
from domain.errors import InputError, RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing

PHASES = [
    "research",
    "purchase",
    "combat_movement",
    "naval_combat",
    "land_combat",
    "noncombat_movement",
    "placement",
    "collect_resources",
]
TURN_ORDER = ["Germany", "Britain", "Austria-Hungary", "France"]

_, RULESET_DATA = load_ruleset("twtea-3e")
SCENARIO_DATA, _ = read_scenario("north-sea-1914")


def new_campaign(
    scenario: dict[str, Any] | None = None, seed: str | None = None, dice_mode: str = "manual"
) -> Campaign:
    """A campaign playing typed dice (D4), unless the test rolls auto dice from `seed`."""
    seed = seed or new_seed()
    scenario = copy.deepcopy(scenario or SCENARIO_DATA)
    return Campaign.create(uuid.uuid4(), "t", scenario, copy.deepcopy(RULESET_DATA), dice_mode, commitment(seed))


@pytest.fixture
def c() -> Campaign:
    return new_campaign()


def advance_to(c: Campaign, nation: str, phase: str, round_: int | None = None) -> None:
    """Advance phase by phase until the given position (at most three rounds ahead)."""
    for _ in range(3 * len(PHASES) * len(TURN_ORDER)):
        if c.nation == nation and c.phase == phase and (round_ is None or c.round == round_):
            return
        advance_passing(c)
    raise AssertionError(f"never reached {nation} {phase} round {round_}")


def pass_unsearched(c: Campaign) -> None:
    """SM2, SM5: the enemy lets the paused U-boats pass unsearched and they go on."""
    battle = c.battle_count
    c.intercept_search(battle, [], ManualDice([]))
    c.intercept_continue(battle, None)


def state(c: Campaign) -> tuple[Any, ...]:
    return (
        c.version,
        len(c.pending_events),
        copy.deepcopy(c.units),
        copy.deepcopy(c.ntr),
        copy.deepcopy(c.balances),
        copy.deepcopy(c.tech),
        dict(c.research_rolls),
        (c.round, c.nation, c.phase),
    )


def refuse(c: Campaign, action: Callable[[], object], rule: str, match: str) -> RuleViolation:
    """The action is refused citing `rule`, and the campaign records nothing (RK2)."""
    before = state(c)
    with pytest.raises(RuleViolation, match=f"^{rule}: .*{match}") as info:
        action()
    assert info.value.rule == rule
    assert state(c) == before
    return info.value


def kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


# ----- T1, T2: turn sequence -----


def test_campaign_starts_in_round_one_with_the_first_nations_research(c: Campaign) -> None:
    assert (c.round, c.nation, c.phase) == (1, "Germany", "research")
    assert kinds(c.pending_events) == ["Created"]


def test_t2_a_turn_goes_through_every_phase_in_order(c: Campaign) -> None:
    seen = [c.phase]
    for _ in range(len(PHASES) - 1):
        advance_passing(c)
        assert c.nation == "Germany"
        seen.append(c.phase)
    assert seen == PHASES
    advance_passing(c)
    assert (c.round, c.nation, c.phase) == (1, "Britain", "research")


def test_t2_each_advance_records_one_phase_event(c: Campaign) -> None:
    advance_passing(c)
    event = c.pending_events[-1]
    assert type(event).__name__ == "PhaseAdvanced"
    assert (event.round, event.nation, event.phase) == (1, "Germany", "purchase")
    assert c.version == 2


def test_t1_a_round_gives_every_nation_a_turn_in_turn_order(c: Campaign) -> None:
    turns = [(c.round, c.nation)]
    for _ in range(len(PHASES) * len(TURN_ORDER)):
        advance_passing(c)
        if c.phase == "research":
            turns.append((c.round, c.nation))
    assert turns == [(1, "Germany"), (1, "Britain"), (1, "Austria-Hungary"), (1, "France"), (2, "Germany")]
    assert c.phase == "research"


# ----- T3: whose turn and which phase -----


def test_t3_move_is_refused_in_the_research_phase(c: Campaign) -> None:
    refuse(
        c, lambda: c.move("Germany", ["DE-SS3"], ["Southern North Sea"]), "T3", "combat movement or noncombat movement"
    )


@pytest.mark.parametrize("phase", ["purchase", "naval_combat", "land_combat", "placement", "collect_resources"])
def test_t3_move_is_refused_outside_movement_phases(c: Campaign, phase: str) -> None:
    advance_to(c, "Germany", phase)
    refuse(
        c,
        lambda: c.move("Germany", ["DE-SS3"], ["Southern North Sea"]),
        "T3",
        f"Germany's {phase.replace('_', ' ')} phase",
    )


@pytest.mark.parametrize("phase", ["combat_movement", "noncombat_movement"])
def test_t3_move_is_allowed_in_both_movement_phases(c: Campaign, phase: str) -> None:
    advance_to(c, "Germany", phase)
    c.move("Germany", ["DE-SS3"], ["Southern North Sea"])
    assert c.units["DE-SS3"]["at"] == "Southern North Sea"
    assert type(c.pending_events[-1]).__name__ == "UnitsMoved"


def test_t3_move_is_refused_for_a_nation_whose_turn_it_is_not(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c, lambda: c.move("Britain", ["GB-DD1"], ["Northern North Sea"]), "T3", "it is Germany's turn, not Britain's"
    )


def test_t3_nation_cannot_move_another_nations_units(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(c, lambda: c.move("Germany", ["GB-SS1"], ["Southern North Sea"]), "T3", "GB-SS1 belongs to Britain")
    # Not even an ally's.
    refuse(c, lambda: c.move("Germany", ["AH-SS1"], ["Heligoland Bight"]), "T3", "AH-SS1 belongs to Austria-Hungary")


def test_unknown_nation_unit_or_zone_is_an_input_error_recording_nothing(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    before = state(c)
    with pytest.raises(InputError, match="unknown nation 'Russia'"):
        c.move("Russia", ["DE-SS3"], ["Southern North Sea"])
    with pytest.raises(InputError, match="unknown unit 'DE-SS9'"):
        c.move("Germany", ["DE-SS9"], ["Southern North Sea"])
    with pytest.raises(InputError, match="unknown zone 'Baltic'"):
        c.move("Germany", ["DE-SS3"], ["Baltic"])
    with pytest.raises(InputError, match="^unit DE-SS3 is named twice$"):
        c.move("Germany", ["DE-SS3", "DE-SS3"], ["Southern North Sea"])
    assert state(c) == before


# ----- F4: adjacency, allowance, naval units at sea -----


def test_f4_move_records_path_and_units(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    plan = c.move("Germany", ["DE-SS3", "DE-SS4"], ["Southern North Sea", "Dover Strait"])
    assert plan.path == ("Heligoland Bight", "Southern North Sea", "Dover Strait")
    pass_unsearched(c)
    first, last = [e for e in c.pending_events if type(e).__name__ == "UnitsMoved"]
    assert first.units == last.units == ["DE-SS3", "DE-SS4"]
    assert first.path + last.path[1:] == ["Heligoland Bight", "Southern North Sea", "Dover Strait"]
    assert c.units["DE-SS3"]["at"] == c.units["DE-SS4"]["at"] == "Dover Strait"
    assert c.units["DE-SS3"]["moved"] == 2
    assert c.units["DE-SS5"]["at"] == "Heligoland Bight"


def test_f4_non_adjacent_step_is_refused(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refused = refuse(
        c,
        lambda: c.move("Germany", ["DE-SS3"], ["Dover Strait"]),
        "F4",
        "Dover Strait is not adjacent to Heligoland Bight",
    )
    # A destination alone: the refusal ends with the move along a way there (submarines may
    # pass the hostile Southern North Sea, SM1), a move the referee takes.
    assert str(refused).endswith(
        "; a shortest route there (2 steps): tracker move DE-SS3 --path 'Southern North Sea,Dover Strait'"
    )
    c.move("Germany", ["DE-SS3"], ["Southern North Sea", "Dover Strait"])


def test_f4_sm1_non_adjacent_destination_of_surface_ships_says_why_no_route_is_named(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refused = refuse(
        c,
        lambda: c.move("Germany", ["DE-DD1", "DE-SS3"], ["Dover Strait"]),
        "F4",
        "Dover Strait is not adjacent to Heligoland Bight",
    )
    assert str(refused).endswith("; every way there passes a hostile zone, where surface ships must stop (SM1)")


def test_f4_non_adjacent_step_later_in_the_path_is_refused(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refused = refuse(
        c,
        lambda: c.move("Germany", ["DE-DD1"], ["Southern North Sea", "Bay of Biscay"]),
        "F4",
        "Bay of Biscay is not adjacent to Southern North Sea",
    )
    # A path the player wrote is theirs to mend: no route is offered for it.
    assert str(refused) == "F4: Bay of Biscay is not adjacent to Southern North Sea"


def test_f4_submarine_path_longer_than_its_move_of_two_is_refused(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-SS3"], ["Southern North Sea", "Dover Strait", "English Channel"]),
        "F4",
        r"DE-SS3 \(submarine\) has 2 of 2 movement left this turn; the path is 3 steps",
    )


def test_f4_destroyer_may_move_three(c: Campaign) -> None:
    advance_to(c, "Britain", "combat_movement")
    c.move("Britain", ["GB-DD1"], ["Northern North Sea", "Norwegian Sea", "Western Approaches"])
    assert c.units["GB-DD1"]["at"] == "Western Approaches"
    assert c.units["GB-DD1"]["moved"] == 3


def test_f4_slowest_unit_limits_a_group(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-DD1", "DE-BB1"], ["Skagerrak", "Heligoland Bight", "Skagerrak"]),
        "F4",
        r"DE-BB1 \(battleship\) has 2 of 2 movement",
    )


def test_f4_allowance_is_shared_by_every_move_in_a_turn(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-SS3"], ["Southern North Sea"])
    c.move("Germany", ["DE-SS3"], ["Dover Strait"])
    assert c.units["DE-SS3"]["moved"] == 2
    refuse(c, lambda: c.move("Germany", ["DE-SS3"], ["English Channel"]), "F4", "has 0 of 2 movement left")
    advance_to(c, "Germany", "noncombat_movement")
    refuse(c, lambda: c.move("Germany", ["DE-SS3"], ["English Channel"]), "F4", "has 0 of 2 movement left")


def test_f4_allowance_resets_on_the_nations_next_turn(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-SS3"], ["Southern North Sea", "Dover Strait"])
    pass_unsearched(c)
    advance_to(c, "Britain", "research")
    assert c.units["DE-SS3"]["moved"] == 2  # still spent during the other nations' turns
    advance_to(c, "Germany", "combat_movement", round_=2)
    assert c.units["DE-SS3"]["moved"] == 0
    c.move("Germany", ["DE-SS3"], ["English Channel", "Western Approaches"])
    pass_unsearched(c)  # France's destroyers in the English Channel may search (SM2)
    assert c.units["DE-SS3"]["at"] == "Western Approaches"


def test_f4_naval_units_cannot_enter_land(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-DD1"], ["Northern Germany"]),
        "F4",
        "naval units cannot enter Northern Germany, a land territory",
    )


def test_f4_naval_units_cannot_cross_land_on_the_way(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-DD1"], ["Northern Germany", "Flanders", "Southern North Sea"]),
        "F4",
        "naval units cannot enter Northern Germany",
    )


def test_f4_units_of_one_move_must_start_together(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-SS1", "DE-SS3"], ["Southern North Sea"]),
        "F4",
        "units of one move must start together",
    )


def test_f4_naval_and_air_units_move_separately(c: Campaign) -> None:
    advance_to(c, "Britain", "combat_movement")
    refuse(
        c, lambda: c.move("Britain", ["GB-CV1", "GB-FT1"], ["Scotland"]), "F4", "move naval and air units separately"
    )


# ----- SM1: hostile zones -----


def test_sm1_destroyer_cannot_move_through_hostile_zone(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    error = refuse(
        c,
        lambda: c.move("Germany", ["DE-DD1"], ["Southern North Sea", "Dover Strait"]),
        "SM1",
        r"DE-DD1 \(destroyer\) must stop in Southern North Sea, a hostile zone",
    )
    assert "only submarines may move through" in error.reason


def test_sm1_battleship_cannot_move_through_hostile_zone(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(c, lambda: c.move("Germany", ["DE-BB1"], ["Central North Sea", "Scotland"]), "F4", "land territory")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-BB1"], ["Central North Sea", "Northern North Sea"]),
        "SM1",
        "Central North Sea",
    )


def test_sm1_destroyer_may_end_its_move_in_a_hostile_zone(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    plan = c.move("Germany", ["DE-DD1"], ["Southern North Sea"])
    assert plan.hostile_passed == ()
    assert c.units["DE-DD1"]["at"] == "Southern North Sea"
    assert c.pending_events[-1].hostile_passed == []


def test_sm1_a_ship_stopped_in_a_hostile_zone_does_not_move_on_with_a_second_move(c: Campaign) -> None:
    """Two moves did what one may not: into the hostile Southern North Sea, then on."""
    advance_to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-DD1"], ["Southern North Sea"])
    refuse(
        c,
        lambda: c.move("Germany", ["DE-DD1"], ["Dover Strait"]),
        "SM1",
        r"DE-DD1 \(destroyer\) entered Southern North Sea, a hostile zone .*, this turn and was stopped there",
    )
    # Submarines move on (SM1), as they move through.
    c.move("Germany", ["DE-SS3"], ["Southern North Sea"])
    c.move("Germany", ["DE-SS3"], ["Dover Strait"])
    assert c.units["DE-SS3"]["at"] == "Dover Strait"


def test_sm1_a_ship_in_a_hostile_zone_since_the_turn_began_may_leave(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    c.units["DE-DD1"]["at"] = "Southern North Sea"  # direct setup: there since the turn began
    c.move("Germany", ["DE-DD1"], ["Dover Strait"])
    assert c.units["DE-DD1"]["at"] == "Dover Strait"


def test_sm1_before_the_key_a_second_move_took_a_stopped_ship_on() -> None:
    ruleset = copy.deepcopy(RULESET_DATA)
    del ruleset["naval_combat"]["ships_stopped_stay"]
    c = Campaign.create(uuid.uuid4(), "t", copy.deepcopy(SCENARIO_DATA), ruleset, "manual", commitment(new_seed()))
    advance_to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-DD1"], ["Southern North Sea"])
    c.move("Germany", ["DE-DD1"], ["Dover Strait"])
    assert c.units["DE-DD1"]["at"] == "Dover Strait"


def test_sm1_submarines_may_move_through_a_hostile_zone(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    plan = c.move("Germany", ["DE-SS3"], ["Southern North Sea", "Dover Strait"])
    assert plan.hostile_passed == ("Southern North Sea",)
    pass_unsearched(c)
    event = c.pending_events[-1]
    assert type(event).__name__ == "UnitsMoved"
    assert event.hostile_passed == ["Southern North Sea"]
    assert c.units["DE-SS3"]["at"] == "Dover Strait"


def test_sm1_hostile_destination_is_not_listed_as_passed(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    # From Central North Sea (British warships there) to Southern North Sea (British warships there).
    plan = c.move("Germany", ["DE-SS1", "DE-SS2"], ["Southern North Sea"])
    assert plan.hostile_passed == ()


def test_sm1_a_submarine_group_with_a_destroyer_is_stopped(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-SS3", "DE-DD1"], ["Southern North Sea", "Dover Strait"]),
        "SM1",
        "DE-DD1",
    )


def test_sm1_allied_warships_do_not_make_a_zone_hostile(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    # Skagerrak holds an Austro-Hungarian destroyer: no obstacle to a German destroyer.
    plan = c.move("Germany", ["DE-DD1"], ["Skagerrak", "Northern North Sea"])
    assert plan.hostile_passed == ()
    assert c.units["DE-DD1"]["at"] == "Northern North Sea"


# ----- F7: air range and landing -----


BOMBER_SIX = ["Southern North Sea", "Dover Strait", "English Channel", "Western Approaches", "Irish Sea", "Scotland"]
FIGHTER_FOUR = ["Heligoland Bight", "Southern North Sea", "Dover Strait", "English Channel"]


def test_f7_bomber_flies_six_steps(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-BM1"], BOMBER_SIX)
    assert c.units["DE-BM1"]["at"] == "Scotland"


def test_f7_bomber_cannot_fly_seven_steps(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-BM1"], [*BOMBER_SIX, "Northern North Sea"]),
        "F7",
        r"DE-BM1 \(bomber\) has 6 of 6 range left this turn; the path is 7 steps",
    )


def test_f7_fighter_flies_four_steps(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-FT1"], FIGHTER_FOUR)
    assert c.units["DE-FT1"]["at"] == "English Channel"


def test_f7_fighter_cannot_fly_five_steps(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-FT1"], [*FIGHTER_FOUR, "Western Approaches"]),
        "F7",
        r"DE-FT1 \(fighter\) has 4 of 4 range",
    )


def test_f7_range_is_shared_between_combat_and_noncombat_movement(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-FT1"], ["Heligoland Bight", "Southern North Sea", "Dover Strait"])
    advance_to(c, "Germany", "noncombat_movement")
    refuse(c, lambda: c.move("Germany", ["DE-FT1"], ["Flanders", "Northern Germany"]), "F7", "has 1 of 4 range left")
    c.move("Germany", ["DE-FT1"], ["Flanders"])
    assert c.units["DE-FT1"]["at"] == "Flanders"


def test_f7_air_units_may_be_over_sea_during_combat_movement(c: Campaign) -> None:
    advance_to(c, "Germany", "combat_movement")
    c.move("Germany", ["DE-FT1"], ["Heligoland Bight"])
    assert c.units["DE-FT1"]["at"] == "Heligoland Bight"


def test_f7_air_landing_at_sea_without_carrier_is_refused_in_noncombat_movement(c: Campaign) -> None:
    advance_to(c, "Germany", "noncombat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-FT1"], ["Heligoland Bight"]),
        "F7",
        "air units ending at sea need a carrier: friendly carriers in Heligoland Bight hold 0",
    )


def test_f7_air_landing_on_own_carrier_is_allowed(c: Campaign) -> None:
    advance_to(c, "Britain", "noncombat_movement")
    c.move("Britain", ["GB-FT1"], ["Scotland", "Northern North Sea"])
    assert c.units["GB-FT1"]["at"] == "Northern North Sea"
    c.move("Britain", ["GB-BM1"], ["Central North Sea", "Northern North Sea"])  # second and last place aboard
    assert c.units["GB-BM1"]["at"] == "Northern North Sea"


def test_f7_air_landing_on_a_full_carrier_is_refused(c: Campaign) -> None:
    advance_to(c, "Britain", "noncombat_movement")
    c.move("Britain", ["GB-BM1"], ["Central North Sea", "Northern North Sea"])
    refuse(
        c,
        lambda: c.move("Britain", ["GB-TP1"], ["Northern North Sea"]),
        "F7",
        "friendly carriers in Northern North Sea hold 2, 2 already aboard",
    )


def test_f7_air_landing_on_an_allied_carrier_with_room_is_allowed(c: Campaign) -> None:
    # F7: "a friendly carrier with room" (GB-CV1 holds two, GB-FT1 aboard).
    advance_to(c, "France", "noncombat_movement")
    c.move("France", ["FR-BM1"], ["Dover Strait", "England", "Central North Sea", "Northern North Sea"])
    assert c.units["FR-BM1"]["at"] == "Northern North Sea" and c.stranded_aircraft() == []


def test_f7_air_landing_in_enemy_territory_is_refused(c: Campaign) -> None:
    advance_to(c, "Germany", "noncombat_movement")
    refuse(
        c,
        lambda: c.move("Germany", ["DE-BM1"], ["Northern France"]),
        "F7",
        "air units cannot land in Northern France, held by France",
    )


def test_f7_air_landing_in_own_or_allied_territory_is_allowed(c: Campaign) -> None:
    advance_to(c, "Germany", "noncombat_movement")
    c.move("Germany", ["DE-BM1"], ["Northern Germany"])
    assert c.units["DE-BM1"]["at"] == "Northern Germany"
    advance_to(c, "Britain", "noncombat_movement")
    c.move("Britain", ["GB-BM1"], ["Dover Strait", "Northern France"])
    assert c.units["GB-BM1"]["at"] == "Northern France"


# ----- CV6: NTR placement -----


def test_cv6_ntr_placement_is_recorded_in_the_placement_phase(c: Campaign) -> None:
    advance_to(c, "Britain", "placement")
    c.place_ntr("Britain", "Central North Sea", 1)
    assert c.ntr["Britain"]["Central North Sea"] == 4
    event = c.pending_events[-1]
    assert type(event).__name__ == "NtrPlaced"
    assert (event.nation, event.zone, event.count) == ("Britain", "Central North Sea", 1)


@pytest.mark.parametrize("phase", ["research", "noncombat_movement", "collect_resources"])
def test_cv6_ntr_placement_is_refused_outside_the_placement_phase(c: Campaign, phase: str) -> None:
    advance_to(c, "Britain", phase)
    refuse(
        c,
        lambda: c.place_ntr("Britain", "Central North Sea", 1),
        "T3",
        f"legal in placement; it is Britain's {phase.replace('_', ' ')}",
    )


def test_cv6_ntr_placement_is_refused_in_another_nations_placement_phase(c: Campaign) -> None:
    advance_to(c, "Germany", "placement")
    refuse(c, lambda: c.place_ntr("Britain", "Central North Sea", 1), "T3", "it is Germany's turn, not Britain's")


def test_cv6_ntr_placement_only_in_the_nations_trade_zones(c: Campaign) -> None:
    advance_to(c, "Britain", "placement")
    refuse(c, lambda: c.place_ntr("Britain", "Skagerrak", 1), "CV6", "Britain has no trade route in Skagerrak")


def test_cv6_ntr_placement_not_beyond_ntr_max(c: Campaign) -> None:
    advance_to(c, "Britain", "placement")
    refuse(c, lambda: c.place_ntr("Britain", "Central North Sea", 2), "CV6", "allows 4; cannot place 2 more")
    c.place_ntr("Britain", "Central North Sea", 1)
    refuse(
        c,
        lambda: c.place_ntr("Britain", "Central North Sea", 1),
        "CV6",
        "holds 4 Britain NTR and the scenario allows 4",
    )


def test_cv6_without_ntr_max_a_nation_may_hold_its_starting_ntr_only(c: Campaign) -> None:
    advance_to(c, "France", "placement")
    refuse(
        c, lambda: c.place_ntr("France", "English Channel", 1), "CV6", "holds 2 France NTR and the scenario allows 2"
    )


def test_cv6_ntr_count_below_one_is_an_input_error(c: Campaign) -> None:
    advance_to(c, "Britain", "placement")
    before = state(c)
    with pytest.raises(InputError, match="at least 1"):
        c.place_ntr("Britain", "Central North Sea", 0)
    assert state(c) == before


# ----- TE1, TE2: research -----


def test_te1_research_cost_is_deducted_and_recorded(c: Campaign) -> None:
    c.research("Germany", "advanced_submarine", ManualDice([3]))
    assert c.balances["Germany"] == 20
    paid = [e for e in c.pending_events if type(e).__name__ == "ResearchPaid"]
    assert len(paid) == 1
    assert (paid[0].nation, paid[0].technology, paid[0].cost) == ("Germany", "advanced_submarine", 10)


def test_te1_second_roll_for_the_same_technology_in_a_turn_is_refused(c: Campaign) -> None:
    c.research("Germany", "advanced_submarine", ManualDice([3]))
    refuse(
        c,
        lambda: c.research("Germany", "advanced_submarine", ManualDice([9])),
        "TE1",
        "already made 1 research roll",
    )


def test_te1_one_roll_per_technology_allows_another_technology(c: Campaign) -> None:
    c.research("Germany", "advanced_submarine", ManualDice([3]))
    c.research("Germany", "advanced_asw", ManualDice([3]))
    assert c.balances["Germany"] == 10


def test_te1_research_roll_is_allowed_again_on_the_next_turn(c: Campaign) -> None:
    c.research("Germany", "advanced_asw", ManualDice([3]))
    advance_to(c, "Germany", "research", round_=2)
    value, success = c.research("Germany", "advanced_asw", ManualDice([9]))
    assert (value, success) == (9, True)
    assert c.tech["Germany"]["advanced_asw"] == 1


def test_te1_research_is_refused_when_the_balance_is_short() -> None:
    scenario = copy.deepcopy(SCENARIO_DATA)
    scenario["nations"]["Germany"]["resources"] = 9
    c = new_campaign(scenario)
    refuse(
        c,
        lambda: c.research("Germany", "advanced_submarine", ManualDice([9])),
        "TE1",
        "a research roll costs 10 and Germany has 9",
    )


def test_te1_research_with_exactly_the_cost_is_allowed() -> None:
    scenario = copy.deepcopy(SCENARIO_DATA)
    scenario["nations"]["Germany"]["resources"] = 10
    c = new_campaign(scenario)
    c.research("Germany", "advanced_asw", ManualDice([1]))
    assert c.balances["Germany"] == 0


@pytest.mark.parametrize("roll", [9, 10])
def test_te1_roll_of_nine_or_ten_advances_the_technology(c: Campaign, roll: int) -> None:
    value, success = c.research("Germany", "advanced_submarine", ManualDice([roll]))
    assert (value, success) == (roll, True)
    assert c.tech["Germany"]["advanced_submarine"] == 2
    event = c.pending_events[-1]
    assert type(event).__name__ == "TechnologyAdvanced"
    assert (event.nation, event.technology, event.level, event.acquired) == ("Germany", "advanced_submarine", 2, False)


@pytest.mark.parametrize("roll", [1, 8])
def test_te1_roll_below_nine_fails_but_is_paid(c: Campaign, roll: int) -> None:
    value, success = c.research("Germany", "advanced_submarine", ManualDice([roll]))
    assert (value, success) == (roll, False)
    assert c.tech["Germany"]["advanced_submarine"] == 1
    assert c.balances["Germany"] == 20
    assert "TechnologyAdvanced" not in kinds(c.pending_events)


def test_t3_research_is_refused_outside_the_research_phase(c: Campaign) -> None:
    advance_passing(c)
    refuse(c, lambda: c.research("Germany", "advanced_asw", ManualDice([9])), "T3", "research is legal in research")


def test_t3_research_is_refused_for_a_nation_whose_turn_it_is_not(c: Campaign) -> None:
    refuse(c, lambda: c.research("Britain", "advanced_asw", ManualDice([9])), "T3", "it is Germany's turn")


def test_research_of_unknown_technology_is_an_input_error(c: Campaign) -> None:
    before = state(c)
    with pytest.raises(InputError, match="unknown technology 'death_ray'"):
        c.research("Germany", "death_ray", ManualDice([9]))
    assert state(c) == before


def test_te2_technology_is_acquired_on_reaching_level_three(c: Campaign) -> None:
    c.research("Germany", "advanced_submarine", ManualDice([9]))
    assert c.tech["Germany"]["advanced_submarine"] == 2
    assert "advanced_submarine" not in c.board().acquired("Germany")
    advance_to(c, "Germany", "research", round_=2)
    c.research("Germany", "advanced_submarine", ManualDice([10]))
    event = c.pending_events[-1]
    assert (event.level, event.acquired) == (3, True)
    assert c.board().acquired("Germany") == frozenset({"advanced_submarine"})


def test_te2_acquired_technology_cannot_be_researched_again() -> None:
    scenario = copy.deepcopy(SCENARIO_DATA)
    scenario["nations"]["Germany"]["tech"]["advanced_submarine"] = 2
    c = new_campaign(scenario)
    c.research("Germany", "advanced_submarine", ManualDice([9]))
    assert c.pending_events[-1].acquired is True
    advance_to(c, "Germany", "research", round_=2)
    refuse(
        c,
        lambda: c.research("Germany", "advanced_submarine", ManualDice([9])),
        "TE2",
        "Germany has already acquired Advanced Submarine",
    )


def test_te1_research_with_auto_dice_uses_the_campaign_seed() -> None:
    seed = new_seed()
    c = new_campaign(seed=seed, dice_mode="auto")
    value, success = c.research("Germany", "advanced_asw", AutoDice(seed))
    assert value == derive_roll(seed, 1, 1, 10)[0]
    assert success == (value >= 9)
    assert c.tech["Germany"]["advanced_asw"] == (1 if success else 0)


# ----- F6: collecting resources -----


def test_f6_resources_are_collected_when_leaving_collect_resources(c: Campaign) -> None:
    advance_to(c, "Germany", "collect_resources")
    assert "ResourcesCollected" not in kinds(c.pending_events)
    assert c.balances["Germany"] == 30
    advance_passing(c)
    collected = c.pending_events[-2]
    assert type(collected).__name__ == "ResourcesCollected"
    # NTR: Heligoland Bight 2 + Skagerrak 1; income 12.
    assert (collected.nation, collected.ntr_value, collected.income, collected.collected) == ("Germany", 3, 12, 15)
    assert collected.balance == 45
    assert c.balances["Germany"] == 45
    assert (c.nation, c.phase) == ("Britain", "research")
    assert c.balances["Britain"] == 30


def test_f6_placed_ntr_count_in_the_same_turns_collection(c: Campaign) -> None:
    advance_to(c, "Britain", "placement")
    c.place_ntr("Britain", "Western Approaches", 1)
    advance_to(c, "Britain", "collect_resources")
    advance_passing(c)
    collected = c.pending_events[-2]
    # NTR: 3 + (4 + 1) + 2 + 2 = 12; income 10.
    assert (collected.nation, collected.ntr_value, collected.income) == ("Britain", 12, 10)
    assert c.balances["Britain"] == 52


def test_f6_collection_adds_to_a_balance_spent_on_research(c: Campaign) -> None:
    c.research("Germany", "advanced_submarine", ManualDice([2]))
    advance_to(c, "Britain", "research")
    assert c.balances["Germany"] == 20 + 15


def test_f6_only_the_nation_whose_turn_ends_collects(c: Campaign) -> None:
    advance_to(c, "Britain", "research")
    collected = [e for e in c.pending_events if type(e).__name__ == "ResourcesCollected"]
    assert [e.nation for e in collected] == ["Germany"]
    assert c.balances == {"Germany": 45, "Britain": 30, "Austria-Hungary": 15, "France": 20}
