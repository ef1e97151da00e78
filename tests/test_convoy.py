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
Germany must declare or pass there before the phase ends (CV1, T4).

The round (CV4) is the selective volley of naval battles: RoundStarted, then "targets" (each
submarine picks a detecting ship, each detecting aircraft a submarine), "screening" where a
detecting escort could take a submarine's shot, "fire" (detecting units in the order chosen,
then the submarines by ID), "casualties" where the submarines' owner places the ships' hits,
then the convoy table (CV5).
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
from tracker.service.application import Tracker
from tracker.service.verify import verify_events

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
        list(c.convoy_passed),
        list(c.committed),
        copy.deepcopy(c.ended),
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


def targets_chosen(c: Campaign, since: int = 0) -> list[tuple[str, dict[str, str], bool, str]]:
    return [(e.nation, e.targets, e.default, e.rule) for e in events(c, "TargetsChosen", since)]


def step(c: Campaign, battle: int) -> tuple[str, list[str], str]:
    (p,) = [p for p in c.pending() if p["battle"] == battle]
    return p["step"], p["waiting"], p["rule"]


def at_search(c: Campaign, subs: list[str] | None = None) -> int:
    """Declare Germany's attack in the Central North Sea; merchant defence has no effect."""
    b = c.declare_convoy_attack("Germany", CNS, subs)
    c.convoy_merchant_defence(b, ManualDice([1, 1]))
    assert step(c, b)[0] == "search"
    return b


def aim(
    c: Campaign,
    b: int,
    targets: dict[str, dict[str, str] | None] | None = None,
    screens: dict[str, str] | None = None,
) -> None:
    """CV4: answer the targets step (each nation waited for gives `targets[nation]`, or takes
    the default where none is given) and the screening step if there is one (`screens`, or no
    screening at all), up to the fire step."""
    targets = targets or {}
    while step(c, b)[0] == "targets":
        c.choose_targets(b, step(c, b)[1][0], targets.get(step(c, b)[1][0]))
    if step(c, b)[0] == "screening":
        (nation,) = step(c, b)[1]
        c.choose_screens(b, nation, {} if screens is None else screens)
    assert step(c, b)[0] == "fire"


def fields(e: Any, *names: str) -> tuple[Any, ...]:
    return tuple(getattr(e, n) for n in names)


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
    assert "collect resources phase; it is Britain's placement" in err.reason
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
        assert "holds no NTR of Britain" in err.reason


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
    since = c.version
    c.convoy_search(b2, ["GB-DD1"], ManualDice([1]))
    # Only AH-SS1 picks a target, and GB-DD1 is its only legal one: chosen for Austria-Hungary.
    assert targets_chosen(c, since) == [("Austria-Hungary", {"AH-SS1": "GB-DD1"}, True, "CV4")]
    assert step(c, b2) == ("fire", ["Britain", "Austria-Hungary"], "CV4")
    assert c.fire(b2, ManualDice([1, 10])) == 1  # GB-DD1 hits; only AH-SS1 fires back
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-DD1", "AH-SS1"]
    (hit,) = events(c, "NavalHitsScored")
    assert fields(hit, "side", "nation", "hits") == ("attacker", "Austria-Hungary", 1)
    # One candidate: the choice is forced and taken without asking (HA7).
    (chosen,) = events(c, "CasualtiesChosen")
    assert fields(chosen, "nation", "units", "default") == ("Austria-Hungary", ["AH-SS1"], True)
    assert [e.unit for e in events(c, "UnitHit")] == ["AH-SS1"]
    assert {"DE-SS1", "DE-SS2"} <= set(c.units)
    (ended,) = events(c, "BattleEnded")
    assert fields(ended, "battle", "rule", "survivors") == (b2, "CV7", [])


def test_cv1_t4_collect_resources_cannot_end_until_every_enemy_declared_or_passed() -> None:
    c = campaign()
    c.units["AH-SS1"]["at"] = CNS  # direct setup
    c.units["DE-SS3"]["at"] = "Western Approaches"  # direct setup
    assert c.convoy_attacks_open() == {"Germany": [CNS, "Western Approaches"], "Austria-Hungary": [CNS]}
    assert [(p["kind"], p["waiting"], p["rule"], p["blocking"], p["text"]) for p in c.pending()] == [
        (
            "convoy_open",
            ["Germany"],
            "CV1",
            True,
            f"Germany may declare a convoy attack on Britain's NTR in {CNS}, Western Approaches, or pass [CV1]",
        ),
        (
            "convoy_open",
            ["Austria-Hungary"],
            "CV1",
            True,
            f"Austria-Hungary may declare a convoy attack on Britain's NTR in {CNS}, or pass [CV1]",
        ),
    ]
    err = refused(c, RuleViolation, c.advance, "T4")
    assert err.reason == (
        f"collect resources cannot end yet: Germany may declare a convoy attack on Britain's NTR in {CNS}, "
        f"Western Approaches, or pass [CV1]; to close it: tracker convoy declare --by Germany --zone '{CNS}', "
        "or tracker convoy pass --by Germany (and 1 more: see `tracker pending`)"
    )
    # Germany attacks in one zone; it may still attack in the other.
    b = at_table(c)
    c.convoy_table(b, ManualDice([1, 1]))
    assert c.convoy_attacks_open() == {"Germany": ["Western Approaches"], "Austria-Hungary": [CNS]}
    refused(c, RuleViolation, c.advance, "T4")
    before = c.version
    assert c.convoy_pass("Austria-Hungary") == [CNS]
    (passed,) = events(c, "ConvoyPassed", before)
    assert fields(passed, "nation", "defender", "zones") == ("Austria-Hungary", "Britain", [CNS])
    err = refused(c, RuleViolation, c.advance, "T4")
    assert err.reason == (
        "collect resources cannot end yet: Germany may declare a convoy attack on Britain's NTR in "
        "Western Approaches, or pass [CV1]; to close it: tracker convoy declare --by Germany "
        "--zone 'Western Approaches', or tracker convoy pass --by Germany"
    )
    assert c.convoy_pass("Germany") == ["Western Approaches"]  # a pass covers the zones left
    assert c.convoy_attacks_open() == {} and c.pending() == []
    before = c.version
    c.advance()
    assert kinds(c, before) == ["ResourcesCollected", "PhaseAdvanced"]
    assert (c.nation, c.phase) == ("Austria-Hungary", "research")


def test_cv1_a_nation_that_passed_may_not_declare() -> None:
    c = campaign()
    assert c.convoy_pass("Germany") == [CNS]
    err = refused(c, RuleViolation, lambda: c.declare_convoy_attack("Germany", CNS, None), "CV1")
    assert err.reason == "Germany passed on convoy attacks in this phase and may not declare now"
    err = refused(c, RuleViolation, lambda: c.convoy_pass("Germany"), "CV1")
    assert "already passed" in err.reason
    # Only an enemy with a convoy attack open passes.
    err = refused(c, RuleViolation, lambda: c.convoy_pass("France"), "CV1")
    assert "no convoy attack to declare or pass" in err.reason
    refused(c, RuleViolation, lambda: c.convoy_pass("Austria-Hungary"), "CV1")
    refused(c, InputError, lambda: c.convoy_pass("Ruritania"))
    # The pass is for this phase only: in the next collect_resources phase Germany may attack.
    advance_passing(c)
    refused(c, RuleViolation, lambda: c.convoy_pass("Germany"), "CV1")  # not a collect phase
    advance_to(c, "Britain", "collect_resources")
    assert c.convoy_attacks_open() == {"Germany": [CNS]}
    assert c.declare_convoy_attack("Germany", CNS, None) == 1


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


def test_cv2_merchant_defence_dice_and_total_shown_and_rolled_come_from_the_ruleset() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, None)
    assert c.pending()[0]["text"] == (
        f"battle {b} (convoy, {CNS}): waiting for Britain to roll merchant defence "
        "(2D10; a total of 20 sinks one submarine) [CV2]"
    )
    house = copy.deepcopy(RULESET)
    house["convoy"]["merchant_defence_dice"] = 3
    house["convoy"]["merchant_defence_sinks_on_total"] = 25
    c = campaign(house)
    b = c.declare_convoy_attack("Germany", CNS, None)
    assert "to roll merchant defence (3D10; a total of 25 sinks one submarine) [CV2]" in c.pending()[0]["text"]
    refused(c, DiceError, lambda: c.convoy_merchant_defence(b, ManualDice([10, 10])))
    assert c.convoy_merchant_defence(b, ManualDice([10, 10, 5])) == 25
    (roll,) = rolls(c)
    assert (roll.values, roll.outcome) == ([10, 10, 5], "total 25: sinks one submarine")
    assert step(c, b) == ("merchant_casualty", ["Germany"], "CV2")


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
    (roll,) = rolls(c)
    assert fields(roll, "roller", "rule", "values") == ("Britain", "CV2", [10, 10])
    # DE-SS3 is the only taking-part submarine: its loss is chosen without asking.
    (chosen,) = events(c, "CasualtiesChosen")
    assert fields(chosen, "nation", "units", "default", "rule") == ("Germany", ["DE-SS3"], True, "CV2")
    assert "DE-SS3" not in c.units
    # CV7: the only taking-part submarine is gone, so the aircraft in reach never search.
    assert kinds(c)[-2:] == ["UnitHit", "BattleEnded"]
    assert not c.battles and c.ntr["Britain"]["Irish Sea"] == 2


def test_cv2_choosing_a_submarine_not_taking_part_is_refused() -> None:
    c = campaign()
    c.units["DE-SS3"]["at"] = CNS  # direct setup: a third U-boat in the zone, not taking part
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1", "DE-SS2"])
    c.convoy_merchant_defence(b, ManualDice([10, 10]))
    assert step(c, b) == ("merchant_casualty", ["Germany"], "CV2")  # two take part: Germany chooses
    err = refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", ["DE-SS3"]))
    assert err.rule in ("CV2", "HA7")
    assert "legal: DE-SS1, DE-SS2" in err.reason
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
    since = c.version
    assert c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([4, 5])) == ["GB-CA1"]
    assert [r.outcome for r in rolls(c, "CV3")] == ["success", "failure"]
    (found,) = events(c, "DetectionsRecorded")
    assert (found.detected, found.failed) == (["GB-CA1"], ["GB-DD1"])
    assert c.units["GB-DD1"]["at"] == CNS
    # Only GB-CA1 fires, and only GB-CA1 can be targeted: GB-DD1, which failed, takes no
    # part and cannot screen either. A single legal target each: the submarines' targets are
    # chosen for Germany, and there is no screening step.
    assert targets_chosen(c, since) == [("Germany", {"DE-SS1": "GB-CA1", "DE-SS2": "GB-CA1"}, True, "CV4")]
    assert step(c, b) == ("fire", ["Britain", "Germany"], "CV4")
    # 2 submarine hits on GB-CA1, 1 hit taken: the second falls on a ship already sunk.
    assert c.fire(b, ManualDice([10, 1, 1])) == 2
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-CA1", "DE-SS1", "DE-SS2"]
    assert [fields(e, "firer", "unit") for e in events(c, "TargetHit")] == [("DE-SS1", "GB-CA1"), ("DE-SS2", "GB-CA1")]
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit")] == [("GB-CA1", True)]
    assert c.units["GB-DD1"]["at"] == CNS
    # Where GB-DD2 detects too there is a choice, and GB-DD1, which failed, is still no target.
    c = campaign()
    b = at_search(c)
    assert c.convoy_search(b, ["GB-CA1", "GB-DD1", "GB-DD2"], ManualDice([4, 5, 4])) == ["GB-CA1", "GB-DD2"]
    assert step(c, b) == ("targets", ["Germany"], "CV4")
    err = refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", {"DE-SS1": "GB-DD1", "DE-SS2": "GB-CA1"}))
    assert (err.rule, "legal: GB-CA1, GB-DD2" in err.reason) == ("CV4", True), str(err)


def test_cv3_no_detection_goes_straight_to_the_convoy_table() -> None:
    c = campaign()
    b = at_search(c)
    assert c.convoy_search(b, ["GB-DD1", "GB-FT1"], ManualDice([5, 2])) == []
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")
    assert kinds(c)[-2:] == ["DetectionsRecorded", "BattleAdvanced"]  # no RoundStarted
    # No round: the volley's commands are refused citing the step the battle waits for.
    for action in (
        lambda: c.fire(b, ManualDice([1])),
        lambda: c.choose_targets(b, "Germany", None),
        lambda: c.choose_casualties(b, "Germany", None),
    ):
        err = refused(c, RuleViolation, action, "CV5")
        assert "waiting for Germany to roll the convoy table" in err.reason


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
    assert err.reason == (
        "FR-BM1 in Northern France is 3 steps from Central North Sea, beyond the range it has left (1 of 1)"
    )
    c.units["GB-BM1"]["at"] = "Northern France"  # direct setup: 3 steps away
    refused(c, RuleViolation, lambda: c.convoy_search(b, ["GB-BM1", "GB-DD1"], ManualDice([1, 1])), "F7")
    assert "GB-BM1" not in c.pending()[0]["text"] and "FR-BM1" not in c.pending()[0]["text"]
    # Exactly at range is within range; the default searchers leave out those out of range.
    c.convoy_search(b, None, ManualDice([10, 10, 10, 10]))
    (chosen,) = events(c, "SearchersChosen")
    assert chosen.units == ["GB-CA1", "GB-DD1", "GB-DD2", "GB-FT1"]


def test_f7_an_air_unit_joins_a_convoy_search_only_within_the_range_it_has_left_this_turn() -> None:
    # A house ruleset gives bombers a range of 2; GB-BM1 flies England -> Scotland -> England
    # in Britain's noncombat_movement (2 steps), so at collect_resources it has 0 of 2 left.
    house = copy.deepcopy(RULESET)
    house["units"]["bomber"]["move"] = 2
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, house, "manual", commitment(new_seed()))
    advance_to(c, "Britain", "noncombat_movement")
    c.move("Britain", ["GB-BM1"], ["Scotland", "England"])
    advance_to(c, "Britain", "collect_resources")
    assert (c.units["GB-BM1"]["at"], c.units["GB-BM1"]["moved"]) == ("England", 2)
    assert c.scenario.game_map.distance("England", CNS) == 1
    b = at_search(c)
    assert "GB-BM1" not in c.pending()[0]["text"]
    err = refused(c, RuleViolation, lambda: c.convoy_search(b, ["GB-BM1"], ManualDice([1])), "F7")
    assert err.reason == "GB-BM1 in England is 1 steps from Central North Sea, beyond the range it has left (0 of 2)"
    c.convoy_search(b, None, ManualDice([10] * 4))
    (chosen,) = events(c, "SearchersChosen")
    assert chosen.units == ["GB-CA1", "GB-DD1", "GB-DD2", "GB-FT1"]
    assert c.units["GB-BM1"]["at"] == "England"  # nothing moves (F7)


def test_f7_one_bomber_cannot_search_in_two_convoy_battles_in_one_phase() -> None:
    c = campaign()
    c.units["AH-SS1"]["at"] = CNS  # direct setup: Austria-Hungary attacks the same convoy
    b1 = at_search(c)
    # GB-BM1 searches in the first battle and fails: it has still taken part in a search.
    assert c.convoy_search(b1, ["GB-BM1", "GB-DD1"], ManualDice([10, 10])) == []
    assert set(c.committed) == {"GB-BM1", "GB-DD1"}
    c.convoy_table(b1, ManualDice([1, 1]))
    b2 = c.declare_convoy_attack("Austria-Hungary", CNS, None)
    c.convoy_merchant_defence(b2, ManualDice([1, 1]))
    assert "GB-BM1" not in c.pending()[0]["text"]
    err = refused(c, RuleViolation, lambda: c.convoy_search(b2, ["GB-BM1"], ManualDice([1])), "F7")
    assert err.reason == "GB-BM1 has already taken part in a search or battle this phase"
    # Ships are not limited (F7 is about aircraft): GB-DD1 searches again by default.
    c.convoy_search(b2, None, ManualDice([10] * 5))
    (_, chosen) = events(c, "SearchersChosen")
    assert chosen.units == ["FR-BM1", "GB-CA1", "GB-DD1", "GB-DD2", "GB-FT1"]
    c.convoy_table(b2, ManualDice([1]))
    # The next phase, the bomber may search again.
    advance_to(c, "Britain", "collect_resources")
    assert c.committed == []
    b3 = at_search(c)
    assert c.convoy_search(b3, ["GB-BM1"], ManualDice([2])) == ["GB-BM1"]


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


def test_cv3_a_refused_searcher_is_named_by_its_type_in_words() -> None:
    c = campaign()
    c.units["GB-CV1"]["at"] = CNS  # direct setup: a carrier with the convoy
    b = at_search(c)
    for unit, words in (("GB-CV1", "aircraft carrier"), ("GB-TP1", "transport plane")):
        err = refused(c, RuleViolation, lambda unit=unit: c.convoy_search(b, [unit], ManualDice([1])), "CV3")
        assert err.reason == f"{unit} ({words}) cannot search for submarines"


def test_cv3_allied_ships_and_aircraft_may_search() -> None:
    c = campaign()
    c.units["FR-DD1"]["at"] = CNS  # direct setup: French ships with the British convoy
    c.units["FR-CA1"]["at"] = CNS
    b = at_search(c)
    assert c.convoy_search(b, ["FR-BM1", "FR-CA1", "FR-DD1"], ManualDice([2, 4, 4])) == ["FR-BM1", "FR-CA1", "FR-DD1"]
    assert [(r.roller, r.unit, r.target) for r in rolls(c, "CV3")] == [
        ("France", "FR-BM1", 2),
        ("France", "FR-CA1", 4),
        ("France", "FR-DD1", 4),
    ]
    # French units fight; the submarines may target the French ships only (HA2), and the NTR
    # owner, the nation the battle names for its side, picks the French bomber's target.
    assert step(c, b) == ("targets", ["Britain", "Germany"], "CV4")
    err = refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", {"DE-SS1": "FR-BM1", "DE-SS2": "FR-DD1"}))
    assert err.rule == "HA2", str(err)
    refused(c, RuleViolation, lambda: c.choose_targets(b, "France", None), "CV4")
    c.choose_targets(b, "Germany", {"DE-SS1": "FR-DD1", "DE-SS2": "FR-DD1"})
    c.choose_targets(b, "Britain", {"FR-BM1": "DE-SS2"})
    # The NTR owner decides the French cruiser's screening too.
    assert step(c, b) == ("screening", ["Britain"], "HA1")
    c.choose_screens(b, "Britain", {})
    assert c.fire(b, ManualDice([10, 10, 10, 1, 10])) == 1
    # CV4: the detecting units' dice by ID, then the submarines'.
    assert [(r.roller, r.unit) for r in rolls(c, "CV4")] == [
        ("France", "FR-BM1"),
        ("France", "FR-CA1"),
        ("France", "FR-DD1"),
        ("Germany", "DE-SS1"),
        ("Germany", "DE-SS2"),
    ]
    (hit,) = events(c, "TargetHit")
    assert fields(hit, "firer", "target", "unit", "rule") == ("DE-SS1", "FR-DD1", "FR-DD1", "HA1")
    assert [e.unit for e in events(c, "UnitHit")] == ["FR-DD1"]
    assert {"FR-CA1", "FR-BM1"} <= set(c.units)


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
    before = c.version
    c.convoy_search(b, ["GB-BM1", "GB-CA1", "GB-DD1"], ManualDice([2, 4, 4]))
    assert kinds(c, before)[-2:] == ["RoundStarted", "BattleAdvanced"]
    (started,) = events(c, "RoundStarted")
    assert fields(started, "battle", "round", "rule") == (b, 1, "CV4")
    assert step(c, b) == ("targets", ["Britain", "Germany"], "CV4")
    c.choose_targets(b, "Germany", {"DE-SS1": "GB-CA1", "DE-SS2": "GB-DD1"})
    c.choose_targets(b, "Britain", {"GB-BM1": "DE-SS1"})
    assert step(c, b) == ("screening", ["Britain"], "HA1")
    c.choose_screens(b, "Britain", {})
    assert step(c, b) == ("fire", ["Britain", "Germany"], "CV4")
    # CV4: the detecting units by ID (not in the order they were named to search), then the
    # submarines by ID; the dice are consumed in the order `pending` lists.
    assert c.pending()[0]["text"].endswith(
        "in this order: GB-BM1, GB-CA1, GB-DD1, DE-SS1, DE-SS2; Britain records them, Germany's too [CV4]"
    )
    since = c.version
    assert c.fire(b, ManualDice([6, 6, 3, 3, 4])) == 3
    fire = rolls(c, "CV4")
    assert [(r.unit, r.roller, r.kind, r.target, r.outcome) for r in fire] == [
        ("GB-BM1", "Britain", "convoy_combat", 6, "success"),
        ("GB-CA1", "Britain", "convoy_combat", 5, "failure"),
        ("GB-DD1", "Britain", "convoy_combat", 3, "success"),
        ("DE-SS1", "Germany", "convoy_combat", 3, "success"),
        ("DE-SS2", "Germany", "convoy_combat", 3, "failure"),
    ]
    assert [r.purpose for r in fire] == [
        "GB-BM1 (bomber) fires at DE-SS1",
        "GB-CA1 (cruiser) fires at Germany's units",
        "GB-DD1 (destroyer) fires at Germany's units",
        "DE-SS1 (submarine) fires at GB-CA1",
        "DE-SS2 (submarine) fires at GB-DD1",
    ]
    # The bomber's and DE-SS1's hits fall on their targets; GB-DD1's hit is the submarines'
    # owner's to place, and with DE-SS1 already lost to the bomber only DE-SS2 can take it.
    assert [fields(e, "firer", "target", "unit", "rule") for e in events(c, "TargetHit")] == [
        ("GB-BM1", "DE-SS1", "DE-SS1", "HA3"),
        ("DE-SS1", "GB-CA1", "GB-CA1", "HA1"),
    ]
    (group,) = events(c, "NavalHitsScored")
    assert fields(group, "side", "nation", "firing_class", "hits") == ("attacker", "Germany", "escort", 1)
    (chosen,) = events(c, "CasualtiesChosen")
    assert fields(chosen, "nation", "units", "default") == ("Germany", ["DE-SS2"], True)
    assert [(e.unit, e.sunk, e.rule) for e in events(c, "UnitHit")] == [
        ("DE-SS1", True, "CV4"),
        ("GB-CA1", True, "CV4"),
        ("DE-SS2", True, "CV4"),
    ]
    assert kinds(c, since)[-1] == "BattleEnded"
    assert {"GB-DD1", "GB-BM1"} <= set(c.units) and not c.battles


def test_cv4_fire_is_selective_the_submarines_owner_places_the_ships_hits_and_submarines_pick_detecting_ships() -> None:
    c = campaign()
    c.units["GB-BB1"]["at"] = CNS  # direct setup: a battleship with the convoy
    b = at_search(c)
    detecting = ["GB-BM1", "GB-DD1", "GB-DD2"]
    assert c.convoy_search(b, ["GB-BB1", *detecting], ManualDice([10, 1, 1, 1])) == detecting
    assert step(c, b) == ("targets", ["Britain", "Germany"], "CV4")
    text = c.pending()[0]["text"]
    assert "Britain: GB-BM1 at DE-SS1/DE-SS2; Germany: DE-SS1 at GB-DD1/GB-DD2, DE-SS2 at GB-DD1/GB-DD2" in text
    # A battleship that did not detect takes no part: it can never be targeted ...
    err = refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", {"DE-SS1": "GB-BB1", "DE-SS2": "GB-DD1"}))
    assert err.rule == "CV4" and "legal: GB-DD1, GB-DD2" in err.reason, str(err)
    # ... and a submarine can never target an aircraft, even one that detected it (HA2).
    err = refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", {"DE-SS1": "GB-BM1", "DE-SS2": "GB-DD1"}))
    assert err.rule == "HA2" and "an aircraft" in err.reason, str(err)
    # Ships do not pick targets; an aircraft picks a submarine, not a ship of its own side.
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-DD1": "DE-SS1", "GB-BM1": "DE-SS1"}), "CV4")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-BM1": "GB-DD1"}), "CV4")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", {"DE-SS1": "GB-DD1"}), "CV4")  # DE-SS2 missing
    # No die before every target is chosen.
    refused(c, RuleViolation, lambda: c.fire(b, ManualDice([1, 1, 1, 1])), "CV4")
    c.choose_targets(b, "Germany", {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"})
    assert step(c, b) == ("targets", ["Britain"], "CV4")
    c.choose_targets(b, "Britain", {"GB-BM1": "DE-SS2"})
    # GB-DD2, a detecting escort, could take one of the shots at GB-DD1: Britain declines.
    assert step(c, b) == ("screening", ["Britain"], "HA1")
    c.choose_screens(b, "Britain", {})
    assert step(c, b) == ("fire", ["Britain", "Germany"], "CV4")
    assert c.fire(b, ManualDice([10, 1, 10, 1, 1])) == 3
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-BM1", "GB-DD1", "GB-DD2", "DE-SS1", "DE-SS2"]
    assert [fields(e, "firer", "unit") for e in events(c, "TargetHit")] == [("DE-SS1", "GB-DD1"), ("DE-SS2", "GB-DD1")]
    # GB-DD1's hit is Germany's to place: either submarine, all of them fight (HA7).
    assert step(c, b) == ("casualties", ["Germany"], "HA7")
    assert "Germany places 1 hit among DE-SS1, DE-SS2" in c.pending()[0]["text"]
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Britain", ["DE-SS1"]), "HA7")
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Germany", ["GB-BB1"]), "HA7")
    assert not events(c, "UnitHit")
    assert c.choose_casualties(b, "Germany", ["DE-SS2"]) == ["DE-SS2"]
    (chosen,) = events(c, "CasualtiesChosen")
    assert fields(chosen, "side", "nation", "units", "default", "rule") == (
        "attacker",
        "Germany",
        ["DE-SS2"],
        False,
        "HA7",
    )
    # Two submarine hits on GB-DD1 sink it once; the battleship is untouched.
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit")] == [("GB-DD1", True), ("DE-SS2", True)]
    assert c.units["GB-BB1"]["damage"] == 0
    aimed_at = {t for e in events(c, "TargetsChosen") for t in e.targets.values()}
    assert aimed_at == {"GB-DD1", "DE-SS2"}
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")


def test_cv4_detecting_aircraft_pick_a_submarine_hits_land_on_it() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-BM1", "GB-FT1"], ManualDice([1, 1]))
    # No detecting ship: the submarines have nothing to fire at, only Britain picks (HA3).
    assert step(c, b) == ("targets", ["Britain"], "CV4")
    assert "Britain: GB-BM1 at DE-SS1/DE-SS2, GB-FT1 at DE-SS1/DE-SS2" in c.pending()[0]["text"]
    err = refused(
        c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-BM1": "GB-DD1", "GB-FT1": "DE-SS2"}), "CV4"
    )
    # The choices named are the round's (HA3), not a naval battle's (where NC6 leaves a
    # fighter no submarine to hit).
    assert err.reason == "GB-BM1 cannot target GB-DD1: it is not an enemy unit fighting here (legal: DE-SS1, DE-SS2)"
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-BM1": "DE-SS3", "GB-FT1": "DE-SS2"}), "CV4")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", None), "CV4")
    assert c.choose_targets(b, "Britain", {"GB-BM1": "DE-SS2", "GB-FT1": "DE-SS2"}) == {
        "GB-BM1": "DE-SS2",
        "GB-FT1": "DE-SS2",
    }
    (aimed,) = events(c, "TargetsChosen")
    assert fields(aimed, "nation", "default", "rule") == ("Britain", False, "CV4")
    assert step(c, b) == ("fire", ["Britain"], "CV4")
    assert c.fire(b, ManualDice([6, 5])) == 2
    assert [(r.unit, r.target, r.purpose) for r in rolls(c, "CV4")] == [
        ("GB-BM1", 6, "GB-BM1 (bomber) fires at DE-SS2"),
        ("GB-FT1", 5, "GB-FT1 (fighter) fires at DE-SS2"),
    ]
    assert [fields(e, "firer", "target", "unit", "rule") for e in events(c, "TargetHit")] == [
        ("GB-BM1", "DE-SS2", "DE-SS2", "HA3"),
        ("GB-FT1", "DE-SS2", "DE-SS2", "HA3"),
    ]
    # Both hits land on the submarine aimed at, none on DE-SS1; nobody is asked to place them.
    assert not events(c, "NavalHitsScored") and not events(c, "CasualtiesChosen")
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit")] == [("DE-SS2", True)]
    assert "DE-SS1" in c.units
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")


def test_ha1_in_a_convoy_round_only_detecting_escorts_screen_each_at_most_one_shot() -> None:
    c = campaign()
    c.units["GB-BB1"]["at"] = CNS  # direct setup
    b = at_search(c)
    # GB-CA1 searches and fails; GB-DD2 does not search: neither takes part.
    assert c.convoy_search(b, ["GB-BB1", "GB-CA1", "GB-DD1"], ManualDice([2, 5, 4])) == ["GB-BB1", "GB-DD1"]
    c.choose_targets(b, "Germany", {"DE-SS1": "GB-BB1", "DE-SS2": "GB-BB1"})
    assert step(c, b) == ("screening", ["Britain"], "HA1")
    assert c.pending()[0]["text"] == (
        f"battle {b} (convoy, {CNS}): waiting for Britain to choose screening escorts: "
        "DE-SS1's shot at GB-BB1 may be taken by GB-DD1; DE-SS2's shot at GB-BB1 may be taken by GB-DD1 "
        "(default: the cheapest loss) [HA1]"
    )
    for escort in ("GB-CA1", "GB-DD2"):
        err = refused(c, RuleViolation, lambda escort=escort: c.choose_screens(b, "Britain", {"DE-SS1": escort}), "HA1")
        assert "screening escorts of Britain in this battle: GB-DD1" in err.reason
    err = refused(
        c, RuleViolation, lambda: c.choose_screens(b, "Britain", {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}), "HA1"
    )
    assert "GB-DD1 may screen at most one shot per volley" in err.reason
    refused(c, RuleViolation, lambda: c.choose_screens(b, "Germany", {}), "HA1")
    refused(c, RuleViolation, lambda: c.fire(b, ManualDice([1, 1, 1, 1])), "HA1")
    assert c.choose_screens(b, "Britain", {"DE-SS1": "GB-DD1"}) == {"DE-SS1": "GB-DD1"}
    (screened,) = events(c, "ScreeningChosen")
    assert fields(screened, "nation", "screens", "default", "rule") == ("Britain", {"DE-SS1": "GB-DD1"}, False, "HA1")
    assert c.fire(b, ManualDice([10, 10, 1, 1])) == 2
    assert [r.purpose for r in rolls(c, "CV4")][2:] == [
        "DE-SS1 (submarine) fires at GB-BB1, screened by GB-DD1",
        "DE-SS2 (submarine) fires at GB-BB1",
    ]
    assert [fields(e, "firer", "target", "unit", "rule") for e in events(c, "TargetHit")] == [
        ("DE-SS1", "GB-BB1", "GB-DD1", "HA1"),
        ("DE-SS2", "GB-BB1", "GB-BB1", "HA1"),
    ]
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit")] == [("GB-DD1", True), ("GB-BB1", False)]
    assert c.units["GB-BB1"]["damage"] == 1 and {"GB-CA1", "GB-DD2"} <= set(c.units)


def test_cv4_hits_beyond_the_submarines_in_the_zone_are_lost() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-BM1", "GB-CA1", "GB-DD1"], ManualDice([1, 1, 1]))
    aim(c, b, {"Britain": {"GB-BM1": "DE-SS1"}})
    assert c.fire(b, ManualDice([1, 1, 1, 10, 10])) == 3
    # The escorts' two hits: DE-SS1 is already lost to the bomber, DE-SS2 takes one, one is lost.
    (group,) = events(c, "NavalHitsScored")
    assert fields(group, "nation", "hits") == ("Germany", 2)
    (lost,) = events(c, "HitsLost")
    assert fields(lost, "side", "nation", "hits") == ("attacker", "Germany", 1)
    (chosen,) = events(c, "CasualtiesChosen")
    assert (chosen.units, chosen.default) == (["DE-SS2"], True)
    assert [e.unit for e in events(c, "UnitHit")] == ["DE-SS1", "DE-SS2"]
    # No taking-part submarine afloat: nothing rolls on the convoy table (CV7).
    assert not rolls(c, "CV5") and not events(c, "NtrDestroyed") and c.ntr["Britain"][CNS] == 3
    (ended,) = events(c, "BattleEnded")
    assert ended.survivors == []


def test_cv4_hits_lost_for_want_of_submarines_cite_cv4_not_nc6() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-BM1", "GB-CA1", "GB-DD1"], ManualDice([1, 1, 1]))
    aim(c, b, {"Britain": {"GB-BM1": "DE-SS1"}})
    c.fire(b, ManualDice([1, 1, 1, 10, 10]))
    (lost,) = events(c, "HitsLost")
    assert lost.rule == "CV4"


def test_ha2_when_only_aircraft_detect_the_submarines_do_not_fire() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-BM1", "GB-FT1"], ManualDice([1, 1]))
    assert step(c, b) == ("targets", ["Britain"], "CV4")
    c.choose_targets(b, "Britain", {"GB-BM1": "DE-SS2", "GB-FT1": "DE-SS1"})
    assert step(c, b) == ("fire", ["Britain"], "CV4")
    assert c.pending()[0]["text"].endswith("to roll 2 dice, one per firing unit in this order: GB-BM1, GB-FT1 [CV4]")
    dice = ManualDice([1, 10])
    assert c.fire(b, dice) == 1
    assert dice.used == 2
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-BM1", "GB-FT1"]
    assert not [e for e in events(c, "TargetsChosen") if e.nation == "Germany"]
    (hit,) = events(c, "TargetHit")
    assert fields(hit, "firer", "unit") == ("GB-BM1", "DE-SS2")
    assert [e.unit for e in events(c, "UnitHit")] == ["DE-SS2"]
    assert {"GB-BM1", "GB-FT1", "DE-SS1"} <= set(c.units)
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")


def test_cv4_an_air_unit_without_an_attack_value_rolls_no_die() -> None:
    # A house ruleset where fighters have no attack: GB-FT1 can search and detect, but it
    # neither picks a target nor rolls; with no detecting ship no die is rolled at all.
    house = copy.deepcopy(RULESET)
    house["units"]["fighter"]["attack"] = 0
    c = campaign(house)
    b = at_search(c)
    before = c.version
    assert c.convoy_search(b, ["GB-FT1"], ManualDice([1])) == ["GB-FT1"]
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")
    assert not rolls(c, "CV4") and not events(c, "TargetsChosen", before)
    c.convoy_table(b, ManualDice([1, 1]))
    assert "GB-FT1" in c.units


def test_cv4_no_hits_on_either_side_goes_to_the_convoy_table() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    aim(c, b)
    (aimed,) = events(c, "TargetsChosen")
    assert (aimed.targets, aimed.default) == ({"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}, True)
    assert c.fire(b, ManualDice([4, 4, 4])) == 0
    assert not events(c, "TargetHit") and not events(c, "NavalHitsScored") and not events(c, "UnitHit")
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")


def test_cv4_hits_on_submarines_may_fall_on_submarines_not_taking_part() -> None:
    c = campaign()
    b = at_search(c, ["DE-SS1"])
    since = c.version
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    # Both German submarines in the zone fight the round: both fire at GB-DD1, their only legal
    # target (chosen for Germany), one die each.
    assert targets_chosen(c, since) == [("Germany", {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}, True, "CV4")]
    assert step(c, b) == ("fire", ["Britain", "Germany"], "CV4")
    c.fire(b, ManualDice([1, 10, 10]))
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-DD1", "DE-SS1", "DE-SS2"]
    assert step(c, b) == ("casualties", ["Germany"], "HA7")
    assert "Germany places 1 hit among DE-SS1, DE-SS2" in c.pending()[0]["text"]
    c.convoy_choose_casualties(b, "Germany", ["DE-SS2"])
    assert "DE-SS2" not in c.units
    c.convoy_table(b, ManualDice([4]))
    assert [r.unit for r in rolls(c, "CV5")] == ["DE-SS1"]
    (ended,) = events(c, "BattleEnded")
    assert ended.survivors == ["DE-SS1"]


def test_cv4_casualties_are_removed_together_after_the_round() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))
    aim(c, b, {"Germany": {"DE-SS1": "GB-CA1", "DE-SS2": "GB-DD1"}})
    c.fire(b, ManualDice([1, 10, 1, 10]))
    # DE-SS1's hit on GB-CA1 waits until Germany has placed GB-DD1's hit.
    (hit,) = events(c, "TargetHit")
    assert fields(hit, "firer", "unit") == ("DE-SS1", "GB-CA1")
    assert step(c, b) == ("casualties", ["Germany"], "HA7")
    assert not events(c, "UnitHit") and "GB-CA1" in c.units
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Britain", ["GB-CA1"]), "HA7")
    c.choose_casualties(b, "Germany", ["DE-SS1"])
    tail = [(type(e).__name__, getattr(e, "unit", None)) for e in events(c, since=hit.originator_version)]
    assert tail == [
        ("DiceRolled", "DE-SS2"),
        ("NavalHitsScored", None),
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
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))
    aim(c, b)
    c.fire(b, ManualDice([1, 10, 10, 10]))
    assert step(c, b) == ("casualties", ["Germany"], "HA7")
    err = refused(c, RuleViolation, lambda: c.choose_casualties(b, "Germany", ["DE-SS3"]), "HA7")
    assert "legal: DE-SS1, DE-SS2" in err.reason
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Germany", ["DE-SS1", "DE-SS2"]), "HA7")
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Germany", ["DE-SS1", "DE-SS1"]), "HA7")
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Germany", []), "HA7")
    err = refused(c, RuleViolation, lambda: c.choose_casualties(b, "Germany", ["GB-DD1"]), "HA7")
    assert "belongs to Britain" in err.reason
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Britain", ["DE-SS1"]), "HA7")
    refused(c, InputError, lambda: c.choose_casualties(b, "Germany", ["DE-SS9"]))
    refused(c, InputError, lambda: c.convoy_choose_casualties(b, "Ruritania", None))
    refused(c, InputError, lambda: c.convoy_choose_casualties(b + 1, "Germany", None))
    # convoy_choose_casualties reaches the same step, with the same checks.
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", ["DE-SS3"]), "HA7")
    assert c.convoy_choose_casualties(b, "Germany", ["DE-SS2"]) == ["DE-SS2"]


def test_ha7_default_casualties_are_the_cheapest_legal_choice() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))
    # Default targets: spread, the most valuable first (cruiser 12 before destroyer 8).
    assert c.choose_targets(b, "Germany", None) == {"DE-SS1": "GB-CA1", "DE-SS2": "GB-DD1"}
    # Default screening: the cheaper destroyer takes DE-SS1's shot at the cruiser; it cannot
    # screen DE-SS2's shot as well, and that one is aimed at itself.
    assert c.choose_screens(b, "Britain", None) == {"DE-SS1": "GB-DD1"}
    (screened,) = events(c, "ScreeningChosen")
    assert (screened.default, screened.rule) == (True, "HA1")
    c.fire(b, ManualDice([1, 10, 10, 10]))
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-CA1", "GB-DD1", "DE-SS1", "DE-SS2"]  # in the order chosen
    # The submarines are all alike: the default is the first by ID.
    assert c.choose_casualties(b, "Germany", None) == ["DE-SS1"]
    (chosen,) = events(c, "CasualtiesChosen")
    assert (chosen.nation, chosen.default, chosen.rule) == ("Germany", True, "HA7")


@pytest.mark.parametrize("chooser", ["Austria-Hungary", "Britain", "France"])
def test_ha7_only_the_owner_of_the_units_hit_chooses_them(chooser: str) -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    aim(c, b)
    c.fire(b, ManualDice([1, 1, 10]))  # one hit on the submarines, one on GB-DD1
    assert step(c, b) == ("casualties", ["Germany"], "HA7")
    refused(c, RuleViolation, lambda: c.choose_casualties(b, chooser, ["DE-SS1"]), "HA7")
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, chooser, None), "HA7")


@pytest.mark.parametrize(("sub_hits", "sunk"), [(1, False), (2, True)])
def test_cv4_battleship_that_detects_takes_two_hits_the_first_damages(sub_hits: int, sunk: bool) -> None:
    c = campaign()
    c.units["GB-BB1"]["at"] = CNS  # direct setup: a battleship with the convoy
    b = at_search(c)
    since = c.version
    assert c.convoy_search(b, ["GB-BB1", "GB-DD1"], ManualDice([2, 5])) == ["GB-BB1"]
    # GB-BB1 is the submarines' only legal target: chosen for Germany.
    assert targets_chosen(c, since) == [("Germany", {"DE-SS1": "GB-BB1", "DE-SS2": "GB-BB1"}, True, "CV4")]
    assert step(c, b) == ("fire", ["Britain", "Germany"], "CV4")  # no detecting escort: nothing to screen
    assert not events(c, "ScreeningChosen")
    c.fire(b, ManualDice([10, 1, 1 if sub_hits == 2 else 10]))
    assert [e.unit for e in events(c, "TargetHit")] == ["GB-BB1"] * sub_hits
    assert [e.sunk for e in events(c, "UnitHit")] == [False, True][:sub_hits]
    if sunk:
        assert "GB-BB1" not in c.units
    else:
        assert c.units["GB-BB1"]["damage"] == 1 and c.units["GB-BB1"]["at"] == CNS


def test_ha7_default_screening_lets_a_battleship_take_a_hit_that_only_damages_it() -> None:
    c = campaign()
    c.units["GB-BB1"]["at"] = CNS  # direct setup
    b = at_search(c)
    c.convoy_search(b, ["GB-BB1", "GB-DD1"], ManualDice([1, 1]))
    assert c.choose_targets(b, "Germany", None) == {"DE-SS1": "GB-BB1", "DE-SS2": "GB-DD1"}
    # GB-DD1 could take DE-SS1's shot instead, but a first hit on GB-BB1 costs nothing.
    assert step(c, b) == ("screening", ["Britain"], "HA1")
    assert c.choose_screens(b, "Britain", None) == {}
    c.fire(b, ManualDice([10, 10, 1, 10]))
    (damaged,) = events(c, "UnitHit")
    assert (damaged.unit, damaged.sunk) == ("GB-BB1", False)
    assert "GB-DD1" in c.units


def test_cv4_one_round_only_then_the_convoy_table() -> None:
    c = campaign()
    b = at_search(c)
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))
    aim(c, b, {"Germany": {"DE-SS1": "GB-CA1", "DE-SS2": "GB-DD1"}})
    c.fire(b, ManualDice([1, 10, 1, 10]))
    c.choose_casualties(b, "Germany", None)
    # Both sides still have units in the zone, yet the battle goes to the convoy table.
    assert {"DE-SS2", "GB-DD1"} <= set(c.units)
    assert step(c, b) == ("convoy_table", ["Germany"], "CV5")
    refused(c, RuleViolation, lambda: c.fire(b, ManualDice([1, 1])), "CV5")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Germany", None), "CV5")
    refused(c, RuleViolation, lambda: c.convoy_search(b, None, ManualDice([1] * 6)), "CV3")
    c.convoy_table(b, ManualDice([1]))
    assert len(rolls(c, "CV4")) == 4
    assert [e.round for e in events(c, "RoundStarted")] == [1]
    assert [e.step for e in events(c, "BattleAdvanced")] == [
        "merchant_defence",
        "search",
        "targets",
        "screening",
        "fire",
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
    aim(c, b)
    c.fire(b, ManualDice([10, 10, 10]))
    c.convoy_table(b, ManualDice([1, 1]))
    (ended,) = events(c, "BattleEnded")
    assert (ended.battle, ended.rule, ended.survivors) == (b, "CV7", ["DE-SS1", "DE-SS2"])
    assert c.units["DE-SS1"]["at"] == CNS and c.units["DE-SS2"]["at"] == CNS
    assert c.pending() == [] and not c.battles
    refused(c, RuleViolation, lambda: c.convoy_table(b, ManualDice([1, 1])), "CV7")
    refused(c, RuleViolation, lambda: c.convoy_roll(b, ManualDice([1, 1])), "CV7")


def test_cv7_merchant_defence_sinking_the_only_taking_part_submarine_ends_the_battle() -> None:
    c = campaign()
    dice = ManualDice([10, 10])
    start = c.version
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1"])  # DE-SS2 is there but takes no part
    c.convoy_merchant_defence(b, dice)
    (hit,) = events(c, "HitsScored")
    assert (hit.candidates, hit.rule) == (["DE-SS1"], "CV2")
    # A single taking-part submarine: its loss is chosen without asking (CV2).
    (chosen,) = events(c, "CasualtiesChosen")
    assert fields(chosen, "nation", "units", "default", "rule") == ("Germany", ["DE-SS1"], True, "CV2")
    dice.check_all_used()
    assert kinds(c, start) == [
        "ConvoyAttackDeclared",
        "BattleAdvanced",
        "DiceRolled",
        "HitsScored",
        "BattleAdvanced",
        "CasualtiesChosen",
        "UnitHit",
        "BattleEnded",
    ]
    (ended,) = events(c, "BattleEnded")
    assert fields(ended, "battle", "rule", "survivors") == (b, "CV7", [])
    # No search, no round, no convoy table: only the merchant defence dice were rolled.
    assert [r.rule for r in rolls(c)] == ["CV2"]
    assert [e.step for e in events(c, "BattleAdvanced")] == ["merchant_defence", "merchant_casualty"]
    assert not c.battles and c.pending() == [] and c.committed == []
    assert c.ntr["Britain"][CNS] == 3 and c.units["DE-SS2"]["at"] == CNS
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", None), "CV7")
    refused(c, RuleViolation, lambda: c.convoy_search(b, None, ManualDice([1] * 6)), "CV7")
    refused(c, RuleViolation, lambda: c.convoy_table(b, ManualDice([1])), "CV7")
    before = c.version
    advance_passing(c)
    (collected,) = events(c, "ResourcesCollected", before)
    assert (collected.ntr_value, collected.lost) == (11, 0)


def test_cv7_a_command_for_an_ended_battle_is_refused_citing_cv7() -> None:
    c = campaign()
    b = at_table(c)
    c.convoy_table(b, ManualDice([1, 1]))
    for action in (
        lambda: c.convoy_merchant_defence(b, ManualDice([1, 1])),
        lambda: c.convoy_choose_casualties(b, "Germany", None),
        lambda: c.convoy_search(b, None, ManualDice([1] * 6)),
        lambda: c.choose_targets(b, "Germany", None),
        lambda: c.choose_screens(b, "Britain", None),
        lambda: c.fire(b, ManualDice([1])),
        lambda: c.choose_casualties(b, "Germany", None),
        lambda: c.convoy_table(b, ManualDice([1, 1])),
        lambda: c.convoy_roll(b, ManualDice([1, 1])),
        lambda: c.convoy_auto(b, ManualDice([])),
        lambda: c.battle_auto(b, ManualDice([])),
        lambda: c.auto_step(b, ManualDice([])),
    ):
        err = refused(c, RuleViolation, action, "CV7")
        assert err.reason == f"battle {b} (convoy) has ended; nothing more can be done in it"
    # A battle that never existed is a typo, not a rule.
    for action in (
        lambda: c.convoy_roll(b + 1, ManualDice([1])),
        lambda: c.fire(b + 1, ManualDice([1])),
        lambda: c.convoy_choose_casualties(b + 1, "Germany", None),
    ):
        refused(c, InputError, action)


def test_cv7_advance_is_refused_while_a_battle_is_unfinished() -> None:
    c = campaign()
    c.units["DE-SS3"]["at"] = CNS  # direct setup: three U-boats, one lost to merchant defence
    b = c.declare_convoy_attack("Germany", CNS, None)

    def advance_refused(expected: tuple[str, list[str], str]) -> None:
        assert step(c, b) == expected
        err = refused(c, RuleViolation, c.advance, "T4")
        assert err.reason.startswith(f"collect resources cannot end yet: battle {b} (convoy, {CNS}): waiting for ")
        # T4: the refusal names the command that closes the step.
        assert f" [{expected[2]}]; to close it: tracker " in err.reason

    advance_refused(("merchant_defence", ["Britain"], "CV2"))
    c.convoy_merchant_defence(b, ManualDice([10, 10]))
    advance_refused(("merchant_casualty", ["Germany"], "CV2"))
    c.convoy_choose_casualties(b, "Germany", ["DE-SS3"])
    advance_refused(("search", ["Britain"], "CV3"))
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))
    advance_refused(("targets", ["Germany"], "CV4"))
    c.choose_targets(b, "Germany", None)
    advance_refused(("screening", ["Britain"], "HA1"))
    c.choose_screens(b, "Britain", {})
    advance_refused(("fire", ["Britain", "Germany"], "CV4"))
    c.fire(b, ManualDice([1, 10, 10, 10]))
    advance_refused(("casualties", ["Germany"], "HA7"))
    c.choose_casualties(b, "Germany", None)
    advance_refused(("convoy_table", ["Germany"], "CV5"))
    c.convoy_table(b, ManualDice([1]))
    before = c.version
    advance_passing(c)
    assert kinds(c, before) == ["ResourcesCollected", "PhaseAdvanced"]


# ----- TE3-TE5 modifiers in the roll events -----


def test_te3_against_advanced_submarines_search_and_attack_are_one_less_and_their_defense_one_more() -> None:
    c = campaign()
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup: acquired (TE2)
    b = at_search(c)
    since = c.version
    # Destroyer 4-1 = 3 (so a 4 now fails), bomber 2-1 = 1.
    assert c.convoy_search(b, ["GB-BM1", "GB-DD1", "GB-DD2"], ManualDice([1, 3, 4])) == ["GB-BM1", "GB-DD1"]
    search = rolls(c, "CV3")
    assert [(r.unit, r.base_target, r.target, r.outcome) for r in search] == [
        ("GB-BM1", 2, 1, "success"),
        ("GB-DD1", 4, 3, "success"),
        ("GB-DD2", 4, 3, "failure"),
    ]
    assert all(r.modifiers == [TE3_AGAINST] for r in search)
    # GB-DD1 is the submarines' only legal target: chosen for Germany; Britain picks the bomber's.
    assert targets_chosen(c, since) == [("Germany", {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}, True, "CV4")]
    assert step(c, b) == ("targets", ["Britain"], "CV4")
    # Attack: destroyer 3-1 = 2, bomber 6-1 = 5; submarine defense 3+1 = 4.
    aim(c, b, {"Britain": {"GB-BM1": "DE-SS2"}})
    assert c.fire(b, ManualDice([5, 2, 4, 5])) == 3
    fire = rolls(c, "CV4")
    assert [(r.unit, r.base_target, r.target, r.outcome) for r in fire] == [
        ("GB-BM1", 6, 5, "success"),
        ("GB-DD1", 3, 2, "success"),
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
    units = ["GB-BB1", "GB-BM1", "GB-CA1", "GB-DD1", "GB-FT1"]
    assert c.convoy_search(b, units, ManualDice([3, 3, 5, 5, 2])) == units
    search = rolls(c, "CV3")
    assert [(r.base_target, r.target) for r in search] == [(2, 3), (2, 3), (4, 5), (4, 5), (1, 2)]
    assert all(r.modifiers == [TE4_SEARCH] for r in search)
    # TE4 changes no convoy attack value (CV4 is not among TE4's rolls).
    aim(c, b)
    c.fire(b, ManualDice([10] * 7))
    assert [(r.unit, r.target, r.modifiers) for r in rolls(c, "CV4")] == [
        ("GB-BB1", 7, []),
        ("GB-BM1", 6, []),
        ("GB-CA1", 5, []),
        ("GB-DD1", 3, []),
        ("GB-FT1", 5, []),
        ("DE-SS1", 3, []),
        ("DE-SS2", 3, []),
    ]


def test_te5_advanced_asw_against_advanced_submarines_modifiers_stack() -> None:
    c = campaign()
    c.tech["Britain"]["advanced_asw"] = 3  # direct setup
    c.tech["Germany"]["advanced_submarine"] = 3  # direct setup
    b = at_search(c)
    # Destroyer 4+1-1 = 4, bomber 2+1-1 = 2, fighter 1+1-1 = 1.
    c.convoy_search(b, ["GB-BM1", "GB-DD1", "GB-FT1"], ManualDice([3, 4, 1]))
    search = rolls(c, "CV3")
    assert [(r.unit, r.base_target, r.target, r.outcome) for r in search] == [
        ("GB-BM1", 2, 2, "failure"),
        ("GB-DD1", 4, 4, "success"),
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
    # detect); both submarines at GB-CA1 (the only detecting ship, so their targets are chosen
    # for Germany and there is nothing to screen), GB-FT1 at DE-SS1 by default; CA1 hits, FT1
    # misses, DE-SS1 misses, DE-SS2 hits; Germany's default places CA1's hit on DE-SS1; DE-SS2
    # rolls 5 on the table.
    dice = ManualDice([1, 1, 10, 10, 1, 10, 10, 1, 1, 10, 10, 1, 5])
    c.convoy_auto(b, dice)
    dice.check_all_used()
    assert not c.battles and c.pending() == []
    (chosen,) = events(c, "SearchersChosen")
    assert chosen.units == ["FR-BM1", "GB-BM1", "GB-CA1", "GB-DD1", "GB-DD2", "GB-FT1"]
    (found,) = events(c, "DetectionsRecorded")
    assert found.detected == ["GB-CA1", "GB-FT1"]
    assert [(e.nation, e.targets, e.default) for e in events(c, "TargetsChosen")] == [
        ("Germany", {"DE-SS1": "GB-CA1", "DE-SS2": "GB-CA1"}, True),
        ("Britain", {"GB-FT1": "DE-SS1"}, True),
    ]
    assert not events(c, "ScreeningChosen")
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-CA1", "GB-FT1", "DE-SS1", "DE-SS2"]
    casualties = events(c, "CasualtiesChosen")
    assert [(e.nation, e.units, e.default) for e in casualties] == [("Germany", ["DE-SS1"], True)]
    assert [e.unit for e in events(c, "UnitHit")] == ["GB-CA1", "DE-SS1"]
    (lost,) = events(c, "NtrDestroyed")
    assert lost.count == 1 and c.ntr["Britain"][CNS] == 2
    (ended,) = events(c, "BattleEnded")
    assert ended.survivors == ["DE-SS2"]


def test_convoy_auto_finishes_a_battle_already_under_way() -> None:
    c = campaign()
    b = at_search(c)
    since = c.version
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    assert targets_chosen(c, since) == [("Germany", {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}, True, "CV4")]
    assert step(c, b) == ("fire", ["Britain", "Germany"], "CV4")
    c.convoy_auto(b, ManualDice([1, 10, 10, 4]))
    assert [e.unit for e in events(c, "UnitHit")] == ["DE-SS1"]
    assert [r.unit for r in rolls(c, "CV5")] == ["DE-SS2"]
    assert not c.battles


def test_convoy_auto_of_a_battle_not_in_progress_is_refused() -> None:
    c = campaign()
    b = at_table(c)
    c.convoy_table(b, ManualDice([1, 1]))
    refused(c, RuleViolation, lambda: c.convoy_auto(b, ManualDice([])), "CV7")  # finished
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
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))
    aim(c, b)
    # Attack dice given, return fire dice missing; then a die off the D10.
    refused(c, DiceError, lambda: c.fire(b, ManualDice([1, 1, 1])))
    refused(c, DiceError, lambda: c.fire(b, ManualDice([1, 1, 1, 11])))
    refused(c, DiceError, lambda: c.convoy_roll(b, ManualDice([1, 1, 1])))
    # convoy_auto with typed dice plays as far as they go, step by step; dice left over that
    # cannot complete a step are refused, never dropped.
    refused(c, DiceError, lambda: c.convoy_auto(b, ManualDice([10, 10, 10])))  # the volley needs 4
    assert step(c, b)[0] == "fire"
    c.convoy_auto(b, ManualDice([10, 10, 10, 10]))  # the volley; the table's dice are not given
    assert step(c, b)[0] == "convoy_table"


def test_rk2_actions_out_of_step_are_refused_with_the_rule_of_the_step() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, None)
    # The convoy commands cite the rule of the step they belong to ...
    refused(c, RuleViolation, lambda: c.convoy_search(b, None, ManualDice([1] * 6)), "CV3")
    refused(c, RuleViolation, lambda: c.convoy_table(b, ManualDice([1, 1])), "CV5")
    refused(c, RuleViolation, lambda: c.convoy_choose_casualties(b, "Germany", None), "HA7")
    # ... the volley's commands, shared with naval battles, the rule of the step waited for.
    for action in (
        lambda: c.choose_targets(b, "Germany", None),
        lambda: c.choose_screens(b, "Britain", None),
        lambda: c.fire(b, ManualDice([1])),
        lambda: c.choose_casualties(b, "Germany", None),
    ):
        err = refused(c, RuleViolation, action, "CV2")
        assert "waiting for Britain to roll merchant defence" in err.reason
    c.convoy_merchant_defence(b, ManualDice([1, 1]))
    refused(c, RuleViolation, lambda: c.convoy_merchant_defence(b, ManualDice([1, 1])), "CV2")
    refused(c, RuleViolation, lambda: c.convoy_roll(b, ManualDice([1])), "CV3")
    refused(c, InputError, lambda: c.convoy_search(b + 1, None, ManualDice([1])))
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))  # two detecting ships: Germany chooses
    assert step(c, b) == ("targets", ["Germany"], "CV4")
    # CV4: every target is chosen before any die of the round is rolled.
    refused(c, RuleViolation, lambda: c.fire(b, ManualDice([1, 1, 1, 1])), "CV4")
    err = refused(c, RuleViolation, lambda: c.convoy_roll(b, ManualDice([1, 1, 1, 1])), "CV4")
    assert ", not a roll; to answer it: tracker battle targets 1 " in err.reason
    refused(c, RuleViolation, lambda: c.convoy_search(b, None, ManualDice([1] * 6)), "CV3")
    refused(c, RuleViolation, lambda: c.convoy_table(b, ManualDice([1, 1])), "CV5")
    refused(c, RuleViolation, lambda: c.choose_screens(b, "Britain", None), "CV4")


def test_convoy_roll_rolls_whatever_the_battle_waits_for() -> None:
    c = campaign()
    b = c.declare_convoy_attack("Germany", CNS, ["DE-SS1"])
    assert c.convoy_roll(b, ManualDice([2, 3])) == "merchant_defence"
    since = c.version
    c.convoy_search(b, ["GB-DD1"], ManualDice([1]))
    # GB-DD1 is the only detecting ship: the submarines' targets are chosen for Germany.
    assert targets_chosen(c, since) == [("Germany", {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}, True, "CV4")]
    assert step(c, b) == ("fire", ["Britain", "Germany"], "CV4")
    assert c.convoy_roll(b, ManualDice([10, 10, 10])) == "fire"
    assert c.convoy_roll(b, ManualDice([9])) == "convoy_table"
    assert [r.rule for r in rolls(c)] == ["CV2", "CV3", "CV4", "CV4", "CV4", "CV5"]
    assert [r.unit for r in rolls(c, "CV4")] == ["GB-DD1", "DE-SS1", "DE-SS2"]


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
    assert info.value.rule == "T4" and info.value.reason.endswith(
        f"[CV3]; to close it: tracker convoy search {b} [--units U1,U2] --dice V,... [--ref ROLL_ID]"
    )
    searchers = ["GB-CA1", "GB-DD1", "GB-DD2"]
    with pytest.raises(DiceError):  # one die too many: nothing is stored
        t.execute(cid, lambda c, d: c.convoy_search(b, searchers, d), dice_values=[5, 4, 4, 6])
    t.execute(cid, lambda c, d: c.convoy_search(b, searchers, d), dice_values=[5, 4, 4])
    with pytest.raises(RuleViolation) as info:  # GB-CA1 did not detect: it cannot be targeted
        t.execute(cid, lambda c, d: c.choose_targets(b, "Germany", {"DE-SS2": "GB-CA1"}))
    assert info.value.rule == "CV4"
    t.execute(cid, lambda c, d: c.choose_targets(b, "Germany", {"DE-SS2": "GB-DD1"}))
    t.execute(cid, lambda c, d: c.choose_screens(b, "Britain", {}))  # GB-DD2 could take the shot
    assert t.execute(cid, lambda c, d: c.fire(b, d), dice_values=[9, 9, 2]) == 1
    assert t.execute(cid, lambda c, d: c.convoy_table(b, d), dice_values=[7]) == 2
    t.execute(cid, lambda c, d: advance_passing(c))

    stored = t.events(cid)[start:]
    assert [type(e).__name__ for e in stored] == [
        "ConvoyAttackDeclared", "BattleAdvanced",
        "DiceRolled", "HitsScored", "BattleAdvanced",
        "CasualtiesChosen", "UnitHit", "BattleAdvanced",
        "SearchersChosen", "DiceRolled", "DiceRolled", "DiceRolled", "DetectionsRecorded", "RoundStarted",
        "BattleAdvanced",
        "TargetsChosen", "BattleAdvanced",
        "ScreeningChosen", "BattleAdvanced",
        "DiceRolled", "DiceRolled", "DiceRolled", "TargetHit", "UnitHit", "BattleAdvanced",
        "DiceRolled", "NtrDestroyed", "BattleEnded",
        "ResourcesCollected", "PhaseAdvanced",
    ]  # fmt: skip
    dice = [e for e in stored if type(e).__name__ == "DiceRolled"]
    assert [(e.rule, e.unit, e.values, e.source) for e in dice] == [
        ("CV2", None, [10, 10], "manual"),
        ("CV3", "GB-CA1", [5], "manual"),
        ("CV3", "GB-DD1", [4], "manual"),
        ("CV3", "GB-DD2", [4], "manual"),
        ("CV4", "GB-DD1", [9], "manual"),
        ("CV4", "GB-DD2", [9], "manual"),
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
