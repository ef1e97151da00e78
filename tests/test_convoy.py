"""Convoy battles (CV1-CV7) with hit allocation (HA), air range (F7) and technology (TE3-TE5).

Every test drives the procedure on the Campaign aggregate with manual dice, chosen so that
each branch is hit on purpose. Setups the scenario does not offer (a battleship or an
Austro-Hungarian submarine in the Central North Sea, an acquired technology) are made by
setting the in-memory state directly (`c.units[uid]["at"] = zone`, `c.tech[n][t] = 3`); each
such line says so. The last tests play the procedure through the Tracker on SQLite and
PostgreSQL and verify the stored log.

Scenario north-sea-1914 at Britain's collect_resources phase: Central North Sea holds 3
British NTR, DE-SS1, DE-SS2, GB-DD1, GB-DD2 and GB-CA1; GB-BM1 is in England (1 step),
GB-FT1 on GB-CV1 in the Northern North Sea (1 step), FR-BM1 in Northern France (3 steps).
"""

from __future__ import annotations

import copy
import uuid
from functools import partial
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.dice import AutoDice, ManualDice, commitment, new_seed
from domain.errors import DiceError, InputError, RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing
from tracker.application import Tracker
from tracker.verify import verify_events

CNS = "Central North Sea"
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
TE3_AGAINST = {"rule": "TE3", "technology": "advanced_submarine", "holder": "target", "set": None, "add": -1}
TE3_OWN = {"rule": "TE3", "technology": "advanced_submarine", "holder": "actor", "set": None, "add": 1}
TE4_SEARCH = {"rule": "TE4", "technology": "advanced_asw", "holder": "actor", "set": None, "add": 1}


# ----- helpers -----


def advance_to(c: Campaign, nation: str, phase: str) -> None:
    """Advance phase by phase to the next (nation, phase); from there itself it goes a round on."""
    advance_passing(c)
    while not (c.nation == nation and c.phase == phase):
        advance_passing(c)


def campaign(ruleset: dict[str, Any] | None = None, dice_mode: str = "manual", seed: str | None = None) -> Campaign:
    """A fresh campaign at round 1, Britain's collect_resources phase."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, ruleset or RULESET, dice_mode, commitment(seed or new_seed()))
    while not (c.nation == "Britain" and c.phase == "collect_resources"):
        advance_passing(c)
    return c


def state(c: Campaign) -> tuple[Any, ...]:
    return (
        c.version,
        len(c.pending_events),
        c.roll_count,
        copy.deepcopy(c.units),
        copy.deepcopy(c.ntr),
        copy.deepcopy(c.battles),
        copy.deepcopy(c.convoy_declared),
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


def kinds(c: Campaign, since: int = 0) -> list[str]:
    return [type(e).__name__ for e in events(c, since=since)]


def rolls(c: Campaign, rule: str | None = None, since: int = 0) -> list[Any]:
    return [e for e in events(c, "DiceRolled", since) if rule is None or e.rule == rule]


def step(c: Campaign, battle: int) -> tuple[str, list[str], str]:
    (p,) = [p for p in c.pending() if p["battle"] == battle]
    return p["step"], p["waiting"], p["rule"]


def at_search(c: Campaign, subs: list[str] | None = None) -> int:
    """Declare Germany's attack in the Central North Sea; merchant defence has no effect."""
    b = c.declare_convoy_attack("Germany", CNS, subs)
    c.convoy_merchant_defence(b, ManualDice([1, 1]))
    assert step(c, b)[0] == "search"
    return b


def at_table(c: Campaign, subs: list[str] | None = None) -> int:
    """Declare, no merchant defence effect, nobody searches: straight to the convoy table."""
    b = at_search(c, subs)
    c.convoy_search(b, [], ManualDice([]))
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")
    return b


# ----- CV1 declaration -----


def test_cv1_declaration_refused_outside_the_owners_collect_resources_phase() -> None:
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    while not (c.nation == "Britain" and c.phase == "placement"):
        advance_passing(c)
    err = refused(c, RuleViolation, lambda: c.declare_convoy_attack("Germany", CNS, None), "CV1")
    assert "collect_resources" in err.reason
    # In another nation's collect phase, Britain's NTR are not the ones being collected.
    advance_to(c, "Austria-Hungary", "collect_resources")
    refused(c, RuleViolation, lambda: c.declare_convoy_attack("Germany", CNS, None), "CV1")


def test_cv1_declaration_refused_by_a_non_enemy() -> None:
    c = campaign()
    err = refused(c, RuleViolation, lambda: c.declare_convoy_attack("France", CNS, None), "CV1")
    assert "not an enemy" in err.reason


def test_cv1_declaration_refused_without_submarines_in_the_zone() -> None:
    c = campaign()
    # Austria-Hungary is an enemy but its submarines are in the Skagerrak.
    err = refused(c, RuleViolation, lambda: c.declare_convoy_attack("Austria-Hungary", CNS, None), "CV1")
    assert "no submarines" in err.reason
    # The Irish Sea holds British NTR and no German submarine.
    refused(c, RuleViolation, lambda: c.declare_convoy_attack("Germany", "Irish Sea", None), "CV1")


def test_cv1_declaration_refused_in_a_zone_without_the_owners_ntr() -> None:
    c = campaign()
    # Direct setup: German submarines where Britain has no NTR (French NTR / no NTR at all).
    c.units["DE-SS3"]["at"] = "Bay of Biscay"
    c.units["DE-SS4"]["at"] = "Southern North Sea"
    for zone in ("Bay of Biscay", "Southern North Sea"):
        err = refused(c, RuleViolation, lambda zone=zone: c.declare_convoy_attack("Germany", zone, None), "CV1")
        assert "no Britain NTR" in err.reason


def test_cv1_declaration_refused_naming_a_submarine_not_in_the_zone() -> None:
    c = campaign()
    c.units["AH-SS1"]["at"] = CNS  # direct setup: an allied submarine in the zone
    for subs in (["DE-SS3"], ["DE-SS1", "DE-SS3"], ["AH-SS1"], ["GB-DD1"], []):
        refused(c, RuleViolation, lambda subs=subs: c.declare_convoy_attack("Germany", CNS, subs), "CV1")
    refused(c, InputError, lambda: c.declare_convoy_attack("Germany", CNS, ["DE-SS1", "DE-SS1"]))
    refused(c, InputError, lambda: c.declare_convoy_attack("Germany", "Atlantis", None))
    refused(c, InputError, lambda: c.declare_convoy_attack("Ruritania", CNS, None))


def test_cv1_default_submarines_are_all_the_attackers_submarines_in_the_zone() -> None:
    c = campaign()
    c.units["AH-SS1"]["at"] = CNS  # direct setup: an allied submarine is not Germany's
    b = c.declare_convoy_attack("Germany", CNS, None)
    (declared,) = events(c, "ConvoyAttackDeclared")
    assert (declared.battle, declared.attacker, declared.defender, declared.zone) == (b, "Germany", "Britain", CNS)
    assert declared.submarines == ["DE-SS1", "DE-SS2"]
    assert declared.ntr == 3
    assert step(c, b) == ("merchant_defence", ["Britain"], "CV2")
    assert c.pending()[0]["text"].startswith(f"battle {b} (convoy, {CNS}): waiting for Britain")


def test_cv1_one_attack_per_attacker_per_zone_per_phase_allowed_again_next_collect_phase() -> None:
    c = campaign()
    b = at_table(c, ["DE-SS1"])
    refused(c, RuleViolation, lambda: c.declare_convoy_attack("Germany", CNS, ["DE-SS2"]), "CV1")
    c.convoy_table(b, ManualDice([1]))
    assert not c.battles
    # Still refused after the first battle has ended: the limit is per phase.
    err = refused(c, RuleViolation, lambda: c.declare_convoy_attack("Germany", CNS, ["DE-SS2"]), "CV1")
    assert "already" in err.reason
    advance_to(c, "Britain", "collect_resources")
    assert c.round == 2
    assert c.declare_convoy_attack("Germany", CNS, None) == b + 1


def test_cv1_several_attackers_and_several_zones_in_one_phase() -> None:
    c = campaign()
    c.units["AH-SS1"]["at"] = CNS  # direct setup
    c.units["DE-SS3"]["at"] = "Western Approaches"  # direct setup
    b1 = c.declare_convoy_attack("Germany", CNS, None)
    b2 = c.declare_convoy_attack("Austria-Hungary", CNS, None)
    b3 = c.declare_convoy_attack("Germany", "Western Approaches", None)
    assert [(p["battle"], p["zone"], p["step"]) for p in c.pending()] == [
        (b1, CNS, "merchant_defence"),
        (b2, CNS, "merchant_defence"),
        (b3, "Western Approaches", "merchant_defence"),
    ]
    declared = events(c, "ConvoyAttackDeclared")
    assert [(e.attacker, e.submarines, e.ntr) for e in declared] == [
        ("Germany", ["DE-SS1", "DE-SS2"], 3),
        ("Austria-Hungary", ["AH-SS1"], 3),
        ("Germany", ["DE-SS3"], 4),
    ]
    refused(c, RuleViolation, lambda: c.declare_convoy_attack("Austria-Hungary", CNS, None), "CV1")
    # Austria-Hungary's battle: the round is against its own submarines only (CV4).
    c.convoy_merchant_defence(b2, ManualDice([1, 1]))
    c.convoy_search(b2, ["GB-DD1"], ManualDice([1]))
    c.convoy_fire(b2, ManualDice([1, 10]))  # GB-DD1 hits; only AH-SS1 fires back
    (hit,) = events(c, "HitsScored")
    assert (hit.nation, hit.candidates) == ("Austria-Hungary", ["AH-SS1"])


# ----- CV2 merchant defence -----


def test_cv2_merchant_defence_total_20_sinks_the_taking_part_submarine_the_attacker_picks() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1", "DE-SS2"])
    assert c.convoy_merchant_defence(b, ManualDice([10, 10])) == 20
    (roll,) = rolls(c)
    assert (roll.roller, roll.rule, roll.kind, roll.values) == ("Britain", "CV2", "merchant_defence", [10, 10])
    assert roll.outcome == "total 20: sinks one submarine"
    (hit,) = events(c, "HitsScored")
    assert (hit.side, hit.nation, hit.hits, hit.candidates, hit.rule) == (
        "attacker",
        "Germany",
        1,
        ["DE-SS1", "DE-SS2"],
        "CV2",
    )
    assert step(c, b) == ("merchant_casualty", ["Germany"], "CV2")
    assert c.convoy_choose_casualties(b, "Germany", ["DE-SS2"]) == ["DE-SS2"]
    (lost,) = events(c, "UnitHit")
    assert (lost.unit, lost.sunk, lost.rule) == ("DE-SS2", True, "CV2")
    assert "DE-SS2" not in c.units and c.units["DE-SS1"]["at"] == CNS
    assert step(c, b) == ("search", ["Britain"], "CV3")
    # CV5: only the surviving taking-part submarine rolls the convoy table.
    c.convoy_search(b, [], ManualDice([]))
    c.convoy_table(b, ManualDice([5]))
    assert [r.unit for r in rolls(c, "CV5")] == ["DE-SS1"]


def test_cv2_merchant_defence_total_19_has_no_effect() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, None)
    assert c.convoy_merchant_defence(b, ManualDice([9, 10])) == 19
    assert rolls(c)[0].outcome == "total 19: no effect"
    assert not events(c, "HitsScored") and not events(c, "UnitHit")
    assert {"DE-SS1", "DE-SS2"} <= set(c.units)
    assert step(c, b) == ("search", ["Britain"], "CV3")


def test_cv2_merchant_defence_is_rolled_even_without_ships_in_the_zone() -> None:
    c = campaign()
    c.units["DE-SS3"]["at"] = "Irish Sea"  # direct setup: only a British transport is there
    b = c.declare_convoy_attack("Germany", "Irish Sea", None)
    assert step(c, b) == ("merchant_defence", ["Britain"], "CV2")
    c.convoy_merchant_defence(b, ManualDice([10, 10]))
    c.convoy_choose_casualties(b, "Germany", None)
    assert "DE-SS3" not in c.units
    c.convoy_search(b, None, ManualDice([10, 10, 10]))  # GB-BM1, GB-FT1 and FR-BM1 reach
    c.convoy_table(b, ManualDice([]))
    assert not c.battles and c.ntr["Britain"]["Irish Sea"] == 2


def test_cv2_choosing_a_submarine_not_taking_part_is_refused() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1"])
    c.convoy_merchant_defence(b, ManualDice([10, 10]))
    err = refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", ["DE-SS2"]))
    assert err.rule in ("CV2", "HA7")
    assert "legal: DE-SS1" in err.reason
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", []), "HA7")
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Britain", ["DE-SS1"]), "HA7")
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", ["GB-DD1"]), "HA7")
    refused(c, InputError, lambda: c.convoy_choose_casualties(b, "Germany", ["DE-SS9"]))
    assert c.convoy_choose_casualties(b, "Germany", None) == ["DE-SS1"]
    (chosen,) = events(c, "CasualtiesChosen")
    assert (chosen.units, chosen.default, chosen.rule) == (["DE-SS1"], True, "CV2")


# ----- CV3 escort search -----


@pytest.mark.parametrize(
    ("unit", "value"),
    [("GB-BB1", 2), ("GB-DD1", 4), ("GB-CA1", 4), ("GB-BM1", 2), ("GB-FT1", 1)],
)
def test_cv3_convoy_search_value_is_the_target_of_the_roll(unit: str, value: int) -> None:
    c = campaign()
    c.units["GB-BB1"]["at"] = CNS  # direct setup: a battleship in the zone
    b = at_search(c)
    assert c.convoy_search(b, [unit], ManualDice([value])) == [unit]
    (roll,) = rolls(c, "CV3")
    assert (roll.kind, roll.roller, roll.unit, roll.battle) == ("convoy_search", "Britain", unit, b)
    assert (roll.base_target, roll.target, roll.modifiers) == (value, value, [])
    assert roll.outcome == "success"


def test_cv3_units_that_fail_stay_in_the_zone_but_take_no_part() -> None:
    c = campaign()
    b = at_search(c)
    assert c.convoy_search(b, ["GB-DD1", "GB-CA1"], ManualDice([5, 4])) == ["GB-CA1"]
    assert [r.outcome for r in rolls(c, "CV3")] == ["failure", "success"]
    (found,) = events(c, "DetectionsRecorded")
    assert (found.detected, found.failed) == (["GB-CA1"], ["GB-DD1"])
    assert c.units["GB-DD1"]["at"] == CNS
    # Only GB-CA1 fires, and only GB-CA1 can be hit: 2 submarine hits, 1 hit taken.
    assert c.convoy_fire(b, ManualDice([10, 1, 1])) == (0, 2)
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-CA1", "DE-SS1", "DE-SS2"]
    (hit,) = events(c, "HitsScored")
    assert (hit.nation, hit.hits, hit.candidates) == ("Britain", 1, ["GB-CA1"])


def test_cv3_no_detection_goes_straight_to_the_convoy_table() -> None:
    c = campaign()
    b = at_search(c)
    assert c.convoy_search(b, ["GB-DD1", "GB-FT1"], ManualDice([5, 2])) == []
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")
    refused(c, RuleViolation, lambda: c.convoy_fire(b, ManualDice([1])), "CV4")


def test_f7_aircraft_out_of_range_cannot_search() -> None:
    # Every zone of north-sea-1914 is within 4 steps of everything (the fighter's range), so a
    # house ruleset shortens the ranges: fighters and bombers reach 1 step.
    house = copy.deepcopy(RULESET)
    house["units"]["fighter"]["move"] = 1
    house["units"]["bomber"]["move"] = 1
    c = campaign(house)
    game_map = c.scenario.game_map
    assert game_map.distance("Northern France", CNS) == 3
    assert game_map.distance("Northern North Sea", CNS) == 1
    b = at_search(c)
    err = refused(c, RuleViolation, lambda: c.convoy_search(b, ["FR-BM1"], ManualDice([1])), "F7")
    assert "range 1" in err.reason
    c.units["GB-BM1"]["at"] = "Northern France"  # direct setup: 3 steps away
    refused(c, RuleViolation, lambda: c.convoy_search(b, ["GB-DD1", "GB-BM1"], ManualDice([1, 1])), "F7")
    # Exactly at range is within range; the default searchers leave out those out of range.
    c.convoy_search(b, None, ManualDice([10, 10, 10, 10]))
    (chosen,) = events(c, "SearchersChosen")
    assert chosen.units == ["GB-CA1", "GB-DD1", "GB-DD2", "GB-FT1"]


def test_cv3_enemy_units_cannot_search() -> None:
    c = campaign()
    c.units["DE-DD1"]["at"] = CNS  # direct setup: an enemy destroyer in the zone
    b = at_search(c)
    for unit in ("DE-DD1", "DE-BM1", "DE-SS1"):
        err = refused(c, RuleViolation, lambda unit=unit: c.convoy_search(b, [unit], ManualDice([1])), "CV3")
        assert "not Britain's or an ally's" in err.reason


def test_cv3_transports_submarines_and_ships_elsewhere_cannot_search() -> None:
    c = campaign()
    c.units["GB-TR1"]["at"] = CNS  # direct setup
    c.units["GB-SS1"]["at"] = CNS  # direct setup
    b = at_search(c)
    for unit in ("GB-TR1", "GB-SS1", "GB-CV1"):
        err = refused(c, RuleViolation, lambda unit=unit: c.convoy_search(b, [unit], ManualDice([1])), "CV3")
        assert "cannot search" in err.reason
    err = refused(c, RuleViolation, lambda: c.convoy_search(b, ["GB-DD3"], ManualDice([1])), "CV3")
    assert "not in Central North Sea" in err.reason
    refused(c, InputError, lambda: c.convoy_search(b, ["GB-DD9"], ManualDice([1])))
    refused(c, InputError, lambda: c.convoy_search(b, ["GB-DD1", "GB-DD1"], ManualDice([1, 1])))
    c.convoy_search(b, None, ManualDice([10] * 6))
    (chosen,) = events(c, "SearchersChosen")
    assert not {"GB-TR1", "GB-SS1", "GB-CV1", "GB-TP1", "GB-DD3"} & set(chosen.units)


def test_cv3_transport_plane_cannot_search_refused_under_cv3() -> None:
    c = campaign()
    b = at_search(c)
    assert c.scenario.game_map.distance("Scotland", CNS) == 1  # well within GB-TP1's range 6
    err = refused(c, RuleViolation, lambda: c.convoy_search(b, ["GB-TP1"], ManualDice([1])))
    assert (err.rule, "cannot search" in err.reason) == ("CV3", True), str(err)


def test_cv3_allied_ships_and_aircraft_may_search() -> None:
    c = campaign()
    c.units["FR-DD1"]["at"] = CNS  # direct setup: a French destroyer with the British convoy
    b = at_search(c)
    assert c.convoy_search(b, ["FR-DD1", "FR-BM1"], ManualDice([4, 2])) == ["FR-DD1", "FR-BM1"]
    assert [(r.roller, r.unit, r.target) for r in rolls(c, "CV3")] == [("France", "FR-DD1", 4), ("France", "FR-BM1", 2)]
    # French units fight; the submarines' hits can fall on the French destroyer only.
    c.convoy_fire(b, ManualDice([10, 10, 1, 10]))
    (hit,) = events(c, "HitsScored")
    assert (hit.side, hit.candidates) == ("defender", ["FR-DD1"])


def test_cv3_default_searchers_are_every_eligible_unit_of_the_owner_and_its_allies() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, None, ManualDice([10] * 6))
    (chosen,) = events(c, "SearchersChosen")
    assert chosen.units == ["FR-BM1", "GB-BM1", "GB-CA1", "GB-DD1", "GB-DD2", "GB-FT1"]
    assert [r.unit for r in rolls(c, "CV3")] == chosen.units


# ----- CV4 the round -----


def test_cv4_detecting_units_fire_at_attack_value_and_submarines_fire_back_at_defense_value() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1", "GB-CA1", "GB-BM1"], ManualDice([4, 4, 2]))
    assert step(c, b) == ("round", ["Britain", "Germany"], "CV4")
    assert c.convoy_fire(b, ManualDice([3, 6, 6, 3, 4])) == (2, 1)
    fire = rolls(c, "CV4")
    assert [(r.unit, r.roller, r.kind, r.target, r.outcome) for r in fire] == [
        ("GB-DD1", "Britain", "convoy_combat", 3, "success"),
        ("GB-CA1", "Britain", "convoy_combat", 5, "failure"),
        ("GB-BM1", "Britain", "convoy_combat", 6, "success"),
        ("DE-SS1", "Germany", "convoy_combat", 3, "success"),
        ("DE-SS2", "Germany", "convoy_combat", 3, "failure"),
    ]
    on_subs, on_ships = events(c, "HitsScored")
    assert (on_subs.side, on_subs.nation, on_subs.hits, on_subs.candidates) == (
        "attacker",
        "Germany",
        2,
        ["DE-SS1", "DE-SS2"],
    )
    # HA2: the bomber detected and fought, but cannot take a submarine's hit.
    assert (on_ships.side, on_ships.nation, on_ships.hits, on_ships.candidates, on_ships.rule) == (
        "defender",
        "Britain",
        1,
        ["GB-DD1", "GB-CA1"],
        "HA2",
    )
    assert step(c, b) == ("casualties", ["Germany", "Britain"], "HA7")


def test_cv4_hits_beyond_the_submarines_in_the_zone_are_lost() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1", "GB-CA1", "GB-BM1"], ManualDice([1, 1, 1]))
    assert c.convoy_fire(b, ManualDice([1, 1, 1, 10, 10])) == (3, 0)
    (hit,) = events(c, "HitsScored")
    assert (hit.hits, hit.candidates) == (2, ["DE-SS1", "DE-SS2"])
    assert c.convoy_choose_casualties(b, "Germany", None) == ["DE-SS1", "DE-SS2"]
    c.convoy_table(b, ManualDice([]))  # no taking-part submarine afloat: nothing to roll
    assert not events(c, "NtrDestroyed") and c.ntr["Britain"][CNS] == 3
    (ended,) = events(c, "BattleEnded")
    assert ended.survivors == []


def test_ha2_when_only_aircraft_detect_the_submarines_do_not_fire() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-BM1", "GB-FT1"], ManualDice([1, 1]))
    dice = ManualDice([1, 10])
    assert c.convoy_fire(b, dice) == (1, 0)
    assert dice.used == 2
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-BM1", "GB-FT1"]
    (hit,) = events(c, "HitsScored")
    assert hit.nation == "Germany"
    assert step(c, b) == ("casualties", ["Germany"], "HA7")
    c.convoy_choose_casualties(b, "Germany", ["DE-SS2"])
    assert {"GB-BM1", "GB-FT1"} <= set(c.units)


def test_cv4_no_hits_on_either_side_goes_to_the_convoy_table() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    assert c.convoy_fire(b, ManualDice([4, 4, 4])) == (0, 0)
    assert not events(c, "HitsScored")
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")


def test_cv4_hits_on_submarines_may_fall_on_submarines_not_taking_part() -> None:
    c = campaign()
    b = at_search(c, ["DE-SS1"])
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    # Both German submarines in the zone fight the round, one die each.
    c.convoy_fire(b, ManualDice([1, 10, 10]))
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-DD1", "DE-SS1", "DE-SS2"]
    (hit,) = events(c, "HitsScored")
    assert hit.candidates == ["DE-SS1", "DE-SS2"]
    c.convoy_choose_casualties(b, "Germany", ["DE-SS2"])
    assert "DE-SS2" not in c.units
    c.convoy_table(b, ManualDice([4]))
    assert [r.unit for r in rolls(c, "CV5")] == ["DE-SS1"]
    (ended,) = events(c, "BattleEnded")
    assert ended.survivors == ["DE-SS1"]


def test_cv4_casualties_are_removed_together_after_both_sides_chose() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1", "GB-CA1"], ManualDice([1, 1]))
    c.convoy_fire(b, ManualDice([1, 10, 1, 10]))
    assert step(c, b) == ("casualties", ["Germany", "Britain"], "HA7")
    c.convoy_choose_casualties(b, "Britain", ["GB-CA1"])
    assert not events(c, "UnitHit") and "GB-CA1" in c.units
    assert step(c, b) == ("casualties", ["Germany"], "HA7")
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Britain", ["GB-DD1"]), "HA7")
    c.convoy_choose_casualties(b, "Germany", ["DE-SS1"])
    tail = [
        (type(e).__name__, getattr(e, "unit", None))
        for e in events(c, since=events(c, "HitsScored")[-1].originator_version)
    ]
    assert tail == [
        ("BattleAdvanced", None),
        ("CasualtiesChosen", None),
        ("BattleAdvanced", None),
        ("CasualtiesChosen", None),
        ("UnitHit", "GB-CA1"),
        ("UnitHit", "DE-SS1"),
        ("BattleAdvanced", None),
    ]
    assert all(e.sunk and e.rule == "CV4" for e in events(c, "UnitHit"))
    assert "GB-CA1" not in c.units and "DE-SS1" not in c.units


def test_ha7_illegal_casualty_assignment_is_refused() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1", "GB-CA1"], ManualDice([1, 1]))
    c.convoy_fire(b, ManualDice([10, 10, 1, 10]))
    assert step(c, b) == ("casualties", ["Britain"], "HA7")
    err = refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Britain", ["GB-DD2"]), "HA7")
    assert "legal: GB-CA1, GB-DD1" in err.reason
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Britain", ["GB-DD1", "GB-CA1"]), "HA7")
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Britain", []), "HA7")
    err = refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Britain", ["DE-SS1"]), "HA7")
    assert "belongs to Germany" in err.reason
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", ["DE-SS1"]), "HA7")
    refused(c, InputError, lambda: c.convoy_choose_casualties(b, "Ruritania", None))
    refused(c, InputError, lambda: c.convoy_choose_casualties(b + 1, "Britain", None))


def test_ha7_default_casualties_are_the_cheapest_legal_choice() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))
    c.convoy_fire(b, ManualDice([10, 10, 1, 10]))
    assert c.convoy_choose_casualties(b, "Britain", None) == ["GB-DD1"]  # destroyer 8 < cruiser 12
    (chosen,) = events(c, "CasualtiesChosen")
    assert (chosen.nation, chosen.default, chosen.rule) == ("Britain", True, "HA7")


@pytest.mark.parametrize(("chooser", "units"), [("Austria-Hungary", ["DE-SS1"]), ("France", ["GB-DD1"])])
def test_ha7_only_the_owner_of_the_units_hit_chooses_them(chooser: str, units: list[str]) -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    c.convoy_fire(b, ManualDice([1, 1, 10]))  # one hit on the submarines, one on GB-DD1
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, chooser, units), "HA7")


@pytest.mark.parametrize(("sub_hits", "sunk"), [(1, False), (2, True)])
def test_cv4_battleship_that_detects_takes_two_hits_the_first_damages(sub_hits: int, sunk: bool) -> None:
    c = campaign()
    c.units["GB-BB1"]["at"] = CNS  # direct setup: a battleship with the convoy
    b = at_search(c)
    assert c.convoy_search(b, ["GB-BB1", "GB-DD1"], ManualDice([2, 5])) == ["GB-BB1"]
    c.convoy_fire(b, ManualDice([10, 1, 1 if sub_hits == 2 else 10]))
    (hit,) = events(c, "HitsScored")
    assert (hit.hits, hit.candidates) == (sub_hits, ["GB-BB1"])
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Britain", ["GB-BB1"] * 3), "HA7")
    c.convoy_choose_casualties(b, "Britain", ["GB-BB1"] * sub_hits)
    assert [e.sunk for e in events(c, "UnitHit")] == [False, True][:sub_hits]
    if sunk:
        assert "GB-BB1" not in c.units
    else:
        assert c.units["GB-BB1"]["damage"] == 1 and c.units["GB-BB1"]["at"] == CNS


def test_cv4_default_casualties_on_a_battleship_damage_it_before_sinking_anything() -> None:
    c = campaign()
    c.units["GB-BB1"]["at"] = CNS  # direct setup
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1", "GB-BB1"], ManualDice([1, 1]))
    c.convoy_fire(b, ManualDice([10, 10, 1, 10]))
    assert c.convoy_choose_casualties(b, "Britain", None) == ["GB-BB1"]
    (damaged,) = events(c, "UnitHit")
    assert (damaged.unit, damaged.sunk) == ("GB-BB1", False)


def test_cv4_one_round_only_then_the_convoy_table() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1", "GB-CA1"], ManualDice([1, 1]))
    c.convoy_fire(b, ManualDice([1, 10, 1, 10]))
    c.convoy_choose_casualties(b, "Germany", None)
    c.convoy_choose_casualties(b, "Britain", None)
    # Both sides still have units in the zone, yet the battle goes to the convoy table.
    assert {"DE-SS2", "GB-CA1"} <= set(c.units)
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")
    refused(c, RuleViolation, lambda: c.convoy_fire(b, ManualDice([1, 1])), "CV4")
    refused(c, RuleViolation, lambda: c.convoy_search(b, None, ManualDice([1] * 6)), "CV3")
    c.convoy_table(b, ManualDice([1]))
    assert len(rolls(c, "CV4")) == 4
    assert [e.step for e in events(c, "BattleAdvanced")] == [
        "merchant_defence",
        "search",
        "round",
        "casualties",
        "casualties",
        "convoy_table",
    ]
    assert not c.battles


# ----- CV5 the convoy table -----


@pytest.mark.parametrize(("die", "destroyed"), [(1, 0), (3, 0), (4, 1), (6, 1), (7, 2), (8, 2), (9, 3), (10, 3)])
def test_cv5_convoy_table_boundaries(die: int, destroyed: int) -> None:
    c = campaign()
    b = at_table(c, ["DE-SS1"])
    assert c.convoy_table(b, ManualDice([die])) == destroyed
    (roll,) = rolls(c, "CV5")
    assert (roll.roller, roll.unit, roll.kind, roll.modifiers) == ("Germany", "DE-SS1", "convoy_table", [])
    assert roll.outcome == f"{destroyed} NTR"
    assert c.ntr["Britain"][CNS] == 3 - destroyed
    lost = events(c, "NtrDestroyed")
    if destroyed:
        assert [(e.nation, e.zone, e.count, e.rolled) for e in lost] == [("Britain", CNS, destroyed, destroyed)]
    else:
        assert lost == []


@pytest.mark.parametrize(
    ("die", "shown", "destroyed"), [(3, "3+1=4: 1 NTR", 1), (8, "8+1=9: 3 NTR", 3), (10, "3 NTR", 3)]
)
def test_te3_advanced_submarine_adds_one_on_the_convoy_table(die: int, shown: str, destroyed: int) -> None:
    c = campaign()
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup: acquired (TE2)
    b = at_table(c, ["DE-SS1"])
    assert c.convoy_table(b, ManualDice([die])) == destroyed
    (roll,) = rolls(c, "CV5")
    assert roll.values == [die]
    assert roll.modifiers == [TE3_OWN]
    assert roll.outcome == shown


def test_cv5_total_destroyed_is_capped_at_ntr_in_zone() -> None:
    c = campaign()
    b = at_table(c)
    assert c.convoy_table(b, ManualDice([10, 7])) == 3
    (lost,) = events(c, "NtrDestroyed")
    assert (lost.count, lost.rolled) == (3, 5)
    assert c.ntr["Britain"][CNS] == 0
    # With no NTR left in the zone, no new attack there (CV1).
    refused(c, RuleViolation, lambda: c.declare_convoy_attack("Austria-Hungary", CNS, None), "CV1")


def test_cv5_a_second_attack_in_the_same_zone_is_capped_at_what_the_first_left() -> None:
    c = campaign()
    c.units["AH-SS1"]["at"] = CNS  # direct setup
    b1 = at_table(c)
    b2 = c.declare_convoy_attack("Austria-Hungary", CNS, None)
    assert c.convoy_table(b1, ManualDice([7, 1])) == 2
    c.convoy_merchant_defence(b2, ManualDice([1, 1]))
    c.convoy_search(b2, [], ManualDice([]))
    assert c.convoy_table(b2, ManualDice([9])) == 1
    assert [(e.count, e.rolled) for e in events(c, "NtrDestroyed")] == [(2, 2), (1, 3)]
    assert c.ntr["Britain"][CNS] == 0


# ----- CV6 lost NTR -----


def test_cv6_destroyed_ntr_are_lost_from_the_collection_in_progress() -> None:
    c = campaign()
    balance = c.balances["Britain"]
    b = at_table(c, ["DE-SS1"])
    c.convoy_table(b, ManualDice([7]))
    assert c.ntr["Britain"][CNS] == 1
    before = c.version
    advance_passing(c)
    (collected,) = events(c, "ResourcesCollected", before)
    assert (collected.nation, collected.ntr_value, collected.income, collected.lost) == ("Britain", 9, 10, 2)
    assert (collected.collected, collected.balance) == (19, balance + 19)
    assert c.balances["Britain"] == balance + 19


def test_cv6_lost_ntr_stay_lost_until_placed_again_in_the_owners_placement_phase() -> None:
    c = campaign()
    b = at_table(c, ["DE-SS1"])
    c.convoy_table(b, ManualDice([7]))
    advance_to(c, "Britain", "research")
    assert (c.round, c.ntr["Britain"][CNS]) == (2, 1)
    refused(c, RuleViolation, lambda: c.place_ntr("Britain", CNS, 2), "T3")
    advance_to(c, "Britain", "placement")
    assert c.ntr["Britain"][CNS] == 1
    err = refused(c, RuleViolation, lambda: c.place_ntr("Britain", CNS, 4), "CV6")
    assert "allows 4" in err.reason
    c.place_ntr("Britain", CNS, 3)
    (placed,) = events(c, "NtrPlaced")
    assert (placed.nation, placed.zone, placed.count) == ("Britain", CNS, 3)
    assert c.ntr["Britain"][CNS] == 4
    advance_passing(c)
    advance_passing(c)  # leaving collect_resources collects
    (collected,) = events(c, "ResourcesCollected", placed.originator_version)
    assert (collected.ntr_value, collected.lost) == (12, 0)


# ----- CV7 end of the battle -----


def test_cv7_battle_ends_after_one_round_and_surviving_submarines_stay() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    c.convoy_fire(b, ManualDice([10, 10, 10]))
    c.convoy_table(b, ManualDice([1, 1]))
    (ended,) = events(c, "BattleEnded")
    assert (ended.battle, ended.rule, ended.survivors) == (b, "CV7", ["DE-SS1", "DE-SS2"])
    assert c.units["DE-SS1"]["at"] == CNS and c.units["DE-SS2"]["at"] == CNS
    assert c.pending() == [] and not c.battles
    refused(c, InputError, lambda: c.convoy_table(b, ManualDice([1, 1])))
    refused(c, InputError, lambda: c.convoy_roll(b, ManualDice([1, 1])))


def test_cv7_advance_is_refused_while_a_battle_is_unfinished() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, None)

    def advance_refused() -> None:
        expected_rule = step(c, b)[2]
        err = refused(c, RuleViolation, c.advance, expected_rule)
        assert f"battle {b} in {CNS} is not finished" in err.reason

    advance_refused()  # CV2 merchant defence
    c.convoy_merchant_defence(b, ManualDice([10, 10]))
    advance_refused()  # CV2 merchant casualty
    c.convoy_choose_casualties(b, "Germany", None)
    advance_refused()  # CV3 search
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    advance_refused()  # CV4 round
    c.convoy_fire(b, ManualDice([10, 1]))
    advance_refused()  # HA7 casualties
    c.convoy_choose_casualties(b, "Britain", None)
    advance_refused()  # CV5 convoy table
    c.convoy_table(b, ManualDice([1]))
    before = c.version
    advance_passing(c)
    assert kinds(c, before) == ["ResourcesCollected", "PhaseAdvanced"]


# ----- TE3-TE5 modifiers in the roll events -----


def test_te3_against_advanced_submarines_search_and_attack_are_one_less_and_their_defense_one_more() -> None:
    c = campaign()
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup: acquired (TE2)
    b = at_search(c)
    # Destroyer 4-1 = 3 (so a 4 now fails), bomber 2-1 = 1.
    assert c.convoy_search(b, ["GB-DD1", "GB-DD2", "GB-BM1"], ManualDice([3, 4, 1])) == ["GB-DD1", "GB-BM1"]
    search = rolls(c, "CV3")
    assert [(r.unit, r.base_target, r.target, r.outcome) for r in search] == [
        ("GB-DD1", 4, 3, "success"),
        ("GB-DD2", 4, 3, "failure"),
        ("GB-BM1", 2, 1, "success"),
    ]
    assert all(r.modifiers == [TE3_AGAINST] for r in search)
    # Attack: destroyer 3-1 = 2, bomber 6-1 = 5; submarine defense 3+1 = 4.
    assert c.convoy_fire(b, ManualDice([2, 5, 4, 5])) == (2, 1)
    fire = rolls(c, "CV4")
    assert [(r.unit, r.base_target, r.target, r.outcome) for r in fire] == [
        ("GB-DD1", 3, 2, "success"),
        ("GB-BM1", 6, 5, "success"),
        ("DE-SS1", 3, 4, "success"),
        ("DE-SS2", 3, 4, "failure"),
    ]
    assert [r.modifiers for r in fire] == [[TE3_AGAINST], [TE3_AGAINST], [TE3_OWN], [TE3_OWN]]


def test_te3_fighter_search_against_advanced_submarines_is_at_zero_and_cannot_succeed() -> None:
    c = campaign()
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup
    b = at_search(c)
    assert c.convoy_search(b, ["GB-FT1"], ManualDice([1])) == []
    (roll,) = rolls(c, "CV3")
    assert (roll.base_target, roll.target, roll.outcome) == (1, 0, "failure")


def test_te3_needs_the_technology_acquired_a_head_start_level_is_not_enough() -> None:
    c = campaign()
    assert c.tech["Germany"]["advanced_submarine"] == 1  # the scenario's head start
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1"], ManualDice([4]))
    (roll,) = rolls(c, "CV3")
    assert (roll.target, roll.modifiers, roll.outcome) == (4, [], "success")


def test_te4_advanced_asw_convoy_search_is_one_more() -> None:
    c = campaign()
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup: acquired (TE2)
    c.units["GB-BB1"]["at"] = CNS  # direct setup
    b = at_search(c)
    units = ["GB-DD1", "GB-CA1", "GB-BB1", "GB-BM1", "GB-FT1"]
    assert c.convoy_search(b, units, ManualDice([5, 5, 3, 3, 2])) == units
    search = rolls(c, "CV3")
    assert [(r.base_target, r.target) for r in search] == [(4, 5), (4, 5), (2, 3), (2, 3), (1, 2)]
    assert all(r.modifiers == [TE4_SEARCH] for r in search)
    # TE4 changes no convoy attack value (CV4 is not among TE4's rolls).
    c.convoy_fire(b, ManualDice([10] * 7))
    assert [(r.unit, r.target, r.modifiers) for r in rolls(c, "CV4")][:5] == [
        ("GB-DD1", 3, []),
        ("GB-CA1", 5, []),
        ("GB-BB1", 7, []),
        ("GB-BM1", 6, []),
        ("GB-FT1", 5, []),
    ]


def test_te5_advanced_asw_against_advanced_submarines_modifiers_stack() -> None:
    c = campaign()
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup
    b = at_search(c)
    # Destroyer 4+1-1 = 4, bomber 2+1-1 = 2, fighter 1+1-1 = 1.
    c.convoy_search(b, ["GB-DD1", "GB-BM1", "GB-FT1"], ManualDice([4, 3, 1]))
    search = rolls(c, "CV3")
    assert [(r.unit, r.base_target, r.target, r.outcome) for r in search] == [
        ("GB-DD1", 4, 4, "success"),
        ("GB-BM1", 2, 2, "failure"),
        ("GB-FT1", 1, 1, "success"),
    ]
    for r in search:
        assert sorted(m["rule"] for m in r.modifiers) == ["TE3", "TE4"]
        assert sorted(m["add"] for m in r.modifiers) == [-1, 1]


# ----- convoy_auto -----


def test_convoy_auto_resolves_the_whole_battle_with_default_choices() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, None)
    # Merchant defence 1+1; FR-BM1, GB-BM1, GB-CA1, GB-DD1, GB-DD2, GB-FT1 search (CA1 and FT1
    # detect); CA1 hits, FT1 misses, DE-SS1 misses, DE-SS2 hits; DE-SS2 rolls 5 on the table.
    dice = ManualDice([1, 1, 10, 10, 1, 10, 10, 1, 1, 10, 10, 1, 5])
    c.convoy_auto(b, dice)
    dice.check_all_used()
    assert not c.battles and c.pending() == []
    (chosen,) = events(c, "SearchersChosen")
    assert chosen.units == ["FR-BM1", "GB-BM1", "GB-CA1", "GB-DD1", "GB-DD2", "GB-FT1"]
    (found,) = events(c, "DetectionsRecorded")
    assert found.detected == ["GB-CA1", "GB-FT1"]
    casualties = events(c, "CasualtiesChosen")
    assert [(e.nation, e.units, e.default) for e in casualties] == [
        ("Germany", ["DE-SS1"], True),
        ("Britain", ["GB-CA1"], True),
    ]
    assert [e.unit for e in events(c, "UnitHit")] == ["DE-SS1", "GB-CA1"]
    (lost,) = events(c, "NtrDestroyed")
    assert lost.count == 1 and c.ntr["Britain"][CNS] == 2
    (ended,) = events(c, "BattleEnded")
    assert ended.survivors == ["DE-SS2"]


def test_convoy_auto_finishes_a_battle_already_under_way() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    c.convoy_auto(b, ManualDice([1, 10, 10, 4]))
    assert [e.unit for e in events(c, "UnitHit")] == ["DE-SS1"]
    assert [r.unit for r in rolls(c, "CV5")] == ["DE-SS2"]
    assert not c.battles


def test_convoy_auto_of_a_battle_not_in_progress_is_refused() -> None:
    c = campaign()
    b = at_table(c)
    c.convoy_table(b, ManualDice([1, 1]))
    refused(c, InputError, lambda: c.convoy_auto(b, ManualDice([])))  # finished
    refused(c, InputError, lambda: c.convoy_auto(b + 1, ManualDice([])))  # never declared


def test_convoy_auto_with_auto_dice_is_deterministic_for_a_fixed_seed() -> None:
    seed = "5eed" * 16

    def play() -> tuple[Any, ...]:
        c = campaign(dice_mode="auto", seed=seed)
        b = c.declare_convoy_attack("Germany", CNS, None)
        c.convoy_auto(b, AutoDice(seed))
        assert not c.battles
        played = [(r.roll, r.rule, r.unit, r.values, r.target, r.outcome, r.source) for r in rolls(c)]
        return played, kinds(c), c.units, c.ntr

    first, second = play(), play()
    assert first == second
    played = first[0]
    assert [p[1] for p in played][:1] == ["CV2"] and all(p[6] == "auto" for p in played)
    assert "BattleEnded" in first[1]


# ----- atomicity (RK2) -----


def test_rk2_a_command_failing_part_way_leaves_the_campaign_unchanged() -> None:
    c = campaign()
    b = at_search(c)
    # The fourth search die is missing: three rolls were already recorded when it fails.
    refused(c, DiceError, lambda: c.convoy_search(b, None, ManualDice([1, 1, 1])))
    c.convoy_search(b, ["GB-DD1", "GB-CA1"], ManualDice([1, 1]))
    # Attack dice given, return fire dice missing.
    refused(c, DiceError, lambda: c.convoy_fire(b, ManualDice([1, 1, 1])))
    refused(c, DiceError, lambda: c.convoy_fire(b, ManualDice([1, 1, 1, 11])))
    # convoy_auto is all or nothing too.
    refused(c, DiceError, lambda: c.convoy_auto(b, ManualDice([10, 10, 10, 10])))  # table dice missing
    assert step(c, b)[0] == "round"


def test_rk2_actions_out_of_step_are_refused_with_the_rule_of_the_step() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, None)
    refused(c, RuleViolation, lambda: c.convoy_search(b, None, ManualDice([1] * 6)), "CV3")
    refused(c, RuleViolation, lambda: c.convoy_fire(b, ManualDice([1])), "CV4")
    refused(c, RuleViolation, lambda: c.convoy_table(b, ManualDice([1, 1])), "CV5")
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", None), "HA7")
    c.convoy_merchant_defence(b, ManualDice([1, 1]))
    refused(c, RuleViolation, lambda: c.convoy_merchant_defence(b, ManualDice([1, 1])), "CV2")
    refused(c, RuleViolation, lambda: c.convoy_roll(b, ManualDice([1])), "CV3")
    refused(c, InputError, lambda: c.convoy_search(b + 1, None, ManualDice([1])))


def test_convoy_roll_rolls_whatever_the_battle_waits_for() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1"])
    assert c.convoy_roll(b, ManualDice([2, 3])) == "merchant_defence"
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    assert c.convoy_roll(b, ManualDice([10, 10, 10])) == "round"
    assert c.convoy_roll(b, ManualDice([9])) == "convoy_table"
    assert [r.rule for r in rolls(c)] == ["CV2", "CV3", "CV4", "CV4", "CV4", "CV5"]


# ----- persisted on SQLite and PostgreSQL -----


def _verify(t: Tracker, cid: Any) -> Any:
    return verify_events(
        ((s.originator_version, partial(t.decode, s)) for s in t.stored_events(cid)),
        lambda epoch: t.seed_for(cid, epoch),
    )


def test_convoy_battle_step_by_step_is_stored_and_verifies(tracker: Tracker, unique_name: str) -> None:
    t = tracker
    cid = t.create(unique_name, "north-sea-1914", dice="manual").id
    t.execute(cid, lambda c, d: advance_to(c, "Britain", "collect_resources"))
    start = len(t.stored_events(cid))
    b = t.execute(cid, lambda c, d: c.declare_convoy_attack("Germany", CNS, ["DE-SS1", "DE-SS2"]))
    t.execute(cid, lambda c, d: c.convoy_merchant_defence(b, d), dice_values=[10, 10])
    t.execute(cid, lambda c, d: c.convoy_choose_casualties(b, "Germany", ["DE-SS1"]))
    with pytest.raises(RuleViolation) as info:
        t.execute(cid, lambda c, d: advance_passing(c))
    assert info.value.rule == "CV3"
    with pytest.raises(DiceError):  # one die too many: nothing is stored
        t.execute(cid, lambda c, d: c.convoy_search(b, ["GB-DD1", "GB-CA1"], d), dice_values=[4, 5, 6])
    t.execute(cid, lambda c, d: c.convoy_search(b, ["GB-DD1", "GB-CA1"], d), dice_values=[4, 5])
    t.execute(cid, lambda c, d: c.convoy_fire(b, d), dice_values=[9, 2])
    t.execute(cid, lambda c, d: c.convoy_choose_casualties(b, "Britain", None))
    assert t.execute(cid, lambda c, d: c.convoy_table(b, d), dice_values=[7]) == 2
    t.execute(cid, lambda c, d: advance_passing(c))

    stored = t.events(cid)[start:]
    assert [type(e).__name__ for e in stored] == [
        "ConvoyAttackDeclared", "BattleAdvanced",
        "DiceRolled", "HitsScored", "BattleAdvanced",
        "CasualtiesChosen", "UnitHit", "BattleAdvanced",
        "SearchersChosen", "DiceRolled", "DiceRolled", "DetectionsRecorded", "BattleAdvanced",
        "DiceRolled", "DiceRolled", "HitsScored", "BattleAdvanced",
        "CasualtiesChosen", "UnitHit", "BattleAdvanced",
        "DiceRolled", "NtrDestroyed", "BattleEnded",
        "ResourcesCollected", "PhaseAdvanced",
    ]  # fmt: skip
    dice = [e for e in stored if type(e).__name__ == "DiceRolled"]
    assert [(e.rule, e.unit, e.values, e.source) for e in dice] == [
        ("CV2", None, [10, 10], "manual"),
        ("CV3", "GB-DD1", [4], "manual"),
        ("CV3", "GB-CA1", [5], "manual"),
        ("CV4", "GB-DD1", [9], "manual"),
        ("CV4", "DE-SS2", [2], "manual"),
        ("CV5", "DE-SS2", [7], "manual"),
    ]
    collected = stored[-2]
    assert (collected.ntr_value, collected.lost) == (9, 2)

    c = t.load(cid)
    assert "DE-SS1" not in c.units and "GB-DD1" not in c.units
    assert c.units["DE-SS2"]["at"] == CNS
    assert c.ntr["Britain"][CNS] == 1 and not c.battles
    assert (c.nation, c.phase) == ("Austria-Hungary", "research")
    report = _verify(t, cid)
    assert report.ok, report.problem
    assert report.events == len(t.stored_events(cid))


def test_convoy_auto_battle_with_auto_dice_is_stored_and_its_dice_rederived(tracker: Tracker, unique_name: str) -> None:
    t = tracker
    cid = t.create(unique_name, "north-sea-1914", dice="auto").id
    t.execute(cid, lambda c, d: advance_to(c, "Britain", "collect_resources"))

    def attack(c: Campaign, d: Any) -> int:
        b = c.declare_convoy_attack("Germany", CNS, None)
        c.convoy_auto(b, d)
        return b

    t.execute(cid, attack)
    c = t.load(cid)
    assert not c.battles
    stored = [type(e).__name__ for e in t.events(cid)]
    assert stored.count("ConvoyAttackDeclared") == stored.count("BattleEnded") == 1
    report = _verify(t, cid)
    assert report.ok, report.problem
    assert report.rolls_checked == stored.count("DiceRolled") >= 7
