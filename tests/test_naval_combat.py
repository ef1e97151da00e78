"""Naval battles (NC1-NC5) with opening fire, screening and hit allocation (HA1-HA7), and the
whole of Issue 4's procedures stored through the Tracker on SQLite and PostgreSQL.

The Campaign tests use manual dice. Scenario north-sea-1914, Germany's naval_combat phase of
round 1: the Central North Sea holds DE-SS1, DE-SS2 and Britain's GB-DD1, GB-DD2, GB-CA1; the
Heligoland Bight Germany's fleet (DE-BB1, DE-BB2, DE-CA1, DE-DD1, DE-DD2, DE-SS3..5) and
GB-SS1, GB-SS2. Units placed by direct setup say so.
"""

from __future__ import annotations

import copy
import uuid
from functools import partial
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.dice import DiceSource, ManualDice, commitment, new_seed
from domain.errors import InputError, RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing
from tracker.service.application import Tracker
from tracker.service.verify import verify_events

HB, SNS, CNS = "Heligoland Bight", "Southern North Sea", "Central North Sea"
_, RULESET = load_ruleset("twtea-3e")
# As recorded before NC1 said that enemy submarines alone call for ASW combat (AS1): a battle of
# surface ships against submarines alone could start, and such a campaign still plays it.
SUBS_ALONE_FOUGHT = copy.deepcopy(RULESET)
del SUBS_ALONE_FOUGHT["naval_combat"]["submarines_alone_call_for_asw"]
SCENARIO, _ = read_scenario("north-sea-1914")


def campaign(phase: str = "naval_combat", ruleset: dict[str, Any] | None = None) -> Campaign:
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, ruleset or RULESET, "manual", commitment(new_seed()))
    while c.phase != phase:
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


def place(c: Campaign, zone: str, *ids: str) -> None:
    for uid in ids:
        c.units[uid]["at"] = zone


def to_fire(c: Campaign, b: int) -> None:
    """Default targets and screens for every side that has to choose."""
    while c.battles[str(b)]["step"] in ("targets", "opening_targets", "screening", "opening_screening"):
        nation = c.battles[str(b)]["waiting"][0]
        if c.battles[str(b)]["step"].endswith("targets"):
            c.choose_targets(b, nation, None)
        else:
            c.choose_screens(b, nation, None)


# ----- NC1: starting a battle -----


def test_nc1_a_naval_battle_is_started_by_the_phasing_nation_in_its_naval_combat_phase() -> None:
    c = campaign("combat_movement")
    refused(c, RuleViolation, lambda: c.naval_start("Germany", CNS), "T3")
    advance_passing(c)
    refused(c, RuleViolation, lambda: c.naval_start("Britain", CNS), "T3")
    err = refused(c, RuleViolation, lambda: c.naval_start("Germany", SNS), "NC1")
    assert err.reason.startswith("Germany has no units in Southern North Sea")
    err = refused(c, RuleViolation, lambda: c.naval_start("Germany", "Skagerrak"), "NC1")
    assert "no naval units of Germany's enemies" in err.reason
    refused(c, RuleViolation, lambda: c.naval_start("Germany", "Flanders"), "NC1")
    refused(c, InputError, lambda: c.naval_start("Germany", "Atlantis"))
    b = c.naval_start("Germany", CNS)
    started = events(c, "NavalBattleStarted")[-1]
    assert (started.nation, started.defender, started.zone) == ("Germany", "Britain", CNS)
    assert (started.attackers, started.defenders) == (["DE-SS1", "DE-SS2"], ["GB-CA1", "GB-DD1", "GB-DD2"])
    err = refused(c, RuleViolation, c.advance, "T4")
    assert f"[{c.battles[str(b)]['rule']}]" in err.reason


def test_nc1_pending_lists_the_battles_due_where_ships_moved_in() -> None:
    c = campaign("combat_movement")
    c.move("Germany", ["DE-CA1", "DE-BB1", "DE-BB2"], [CNS])
    advance_passing(c)
    (due,) = c.pending()
    assert (due["battle"], due["kind"], due["zone"], due["waiting"], due["rule"]) == (
        None,
        "naval_due",
        CNS,
        ["Germany"],
        "NC1",
    )
    assert due["text"].startswith("naval battle due in Central North Sea")
    b = c.naval_start("Germany", CNS)
    c.battle_auto(b, dice(*[1] * 40))
    assert c.pending() == []
    err = refused(c, RuleViolation, lambda: c.naval_start("Germany", CNS), "NC1")
    assert "already fought a naval battle in Central North Sea" in err.reason


# ----- NC2: opening fire -----


def test_nc2_two_destroyers_cancel_the_opening_fire_of_two_of_three_submarines() -> None:
    c = campaign()
    place(c, "Irish Sea", "GB-CA1")  # direct setup: two destroyers only
    place(c, CNS, "DE-SS3")  # direct setup: a third U-boat
    b = c.naval_start("Germany", CNS)
    (opening,) = events(c, "OpeningFire")
    assert (opening.side, opening.firing, opening.cancelled, opening.escorts) == (
        "attacker",
        ["DE-SS1"],
        ["DE-SS2", "DE-SS3"],
        ["GB-DD1", "GB-DD2"],
    )
    assert step(c, b) == ("opening_targets", ["Germany"], "NC2")
    assert "Germany: DE-SS1 at GB-DD1/GB-DD2" in c.pending()[0]["text"]
    c.choose_targets(b, "Germany", {"DE-SS1": "GB-DD1"})
    assert step(c, b) == ("opening_screening", ["Britain"], "HA1")
    c.choose_screens(b, "Britain", {})
    assert step(c, b) == ("opening_fire", ["Germany"], "NC2")
    before = c.version
    c.fire(b, dice(4))
    (roll,) = rolls(c, before)
    assert (roll.unit, roll.rule, roll.kind, roll.target, roll.outcome) == (
        "DE-SS1",
        "NC2",
        "naval_combat",
        4,
        "success",
    )
    # NC2: opening-fire casualties go before the other side fires: GB-DD1 never fires.
    (sunk,) = events(c, "UnitHit", before)
    assert (sunk.unit, sunk.sunk, sunk.rule) == ("GB-DD1", True, "NC2")
    # The cancelled submarines fire with everyone else; DE-SS1 has fired this round. GB-DD2 is
    # their only legal target: chosen for Germany, and the round goes straight to the dice.
    aimed = events(c, "TargetsChosen", before)
    assert [(e.nation, e.targets, e.default, e.rule) for e in aimed] == [
        ("Germany", {"DE-SS2": "GB-DD2", "DE-SS3": "GB-DD2"}, True, "HA1")
    ]
    assert step(c, b) == ("fire", ["Germany", "Britain"], "NC3")
    before = c.version
    c.fire(b, dice(9, 9, 9))
    assert [r.unit for r in rolls(c, before)] == ["DE-SS2", "DE-SS3", "GB-DD2"]
    assert step(c, b)[0] == "decide"


def test_nc2_both_sides_submarines_open_fire_and_without_escorts_none_is_cancelled() -> None:
    c = campaign()
    place(c, "Skagerrak", "DE-DD1", "DE-DD2", "DE-CA1")  # direct setup: no German escort in the Bight
    c.attack_zones.append(HB)  # direct setup: the U-boats stopped there to attack (SM5; NC1, NC6)
    b = c.naval_start("Germany", HB)
    assert [(e.side, e.firing, e.cancelled) for e in events(c, "OpeningFire")] == [
        ("attacker", ["DE-SS3", "DE-SS4", "DE-SS5"], []),
        ("defender", ["GB-SS1", "GB-SS2"], []),
    ]
    assert step(c, b) == ("opening_targets", ["Germany", "Britain"], "NC2")
    # HA1: British submarines must pick a German battleship, not a submarine, while there is one.
    err = refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", {"GB-SS1": "DE-SS3", "GB-SS2": "DE-BB1"}))
    assert err.rule == "HA1"
    c.choose_targets(b, "Britain", {"GB-SS1": "DE-BB1", "GB-SS2": "DE-BB1"})
    c.choose_targets(b, "Germany", None)  # only submarines to shoot at
    assert step(c, b)[0] == "opening_fire"
    before = c.version
    c.fire(b, dice(1, 9, 9, 1, 1))
    assert [(r.unit, r.target) for r in rolls(c, before)] == [
        ("DE-SS3", 4),
        ("DE-SS4", 4),
        ("DE-SS5", 4),
        ("GB-SS1", 3),  # the defender's submarines fire at their defense value
        ("GB-SS2", 3),
    ]
    # Simultaneous opening fire: GB-SS1 is sunk and still fired; DE-BB1 takes two hits and sinks (F3).
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit", before)] == [
        ("GB-SS1", True),
        ("DE-BB1", False),
        ("DE-BB1", True),
    ]


# ----- NC3, NC5, HA4-HA7: the main rounds -----


def test_nc3_every_remaining_unit_fires_together_and_casualties_follow_ha5_ha6() -> None:
    c = campaign("combat_movement")
    c.move("Germany", ["DE-CA1", "DE-BB1", "DE-BB2"], [CNS])
    advance_passing(c)
    place(c, HB, "DE-SS1", "DE-SS2")  # direct setup: no submarines in this battle
    place(c, CNS, "GB-BB1")  # direct setup: a British battleship joins the defence
    b = c.naval_start("Germany", CNS)
    assert step(c, b) == ("fire", ["Germany", "Britain"], "NC3")
    before = c.version
    # DE-BB1 hits, DE-BB2 misses, DE-CA1 hits; GB-BB1 hits, GB-CA1 hits, the destroyers miss.
    c.fire(b, dice(1, 9, 1, 1, 1, 9, 9))
    assert [(r.unit, r.target) for r in rolls(c, before)] == [
        ("DE-BB1", 7),
        ("DE-BB2", 7),
        ("DE-CA1", 5),
        ("GB-BB1", 7),  # defense values
        ("GB-CA1", 5),
        ("GB-DD1", 3),
        ("GB-DD2", 3),
    ]
    scored = [(e.side, e.firing_class, e.hits, e.rule) for e in events(c, "NavalHitsScored", before)]
    assert scored == [
        ("attacker", "capital", 1, "HA5"),
        ("attacker", "escort", 1, "HA6"),
        ("defender", "capital", 1, "HA5"),
        ("defender", "escort", 1, "HA6"),
    ]
    assert step(c, b) == ("casualties", ["Germany", "Britain"], "HA7")
    # HA5: the German battleship's hit must fall on GB-BB1; HA6: the cruiser's on an escort.
    err = refused(c, RuleViolation, lambda: c.choose_casualties(b, "Britain", ["GB-DD1", "GB-DD2"]), "HA7")
    assert "at least 1 hit falls on GB-BB1 (HA5)" in err.reason
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Britain", ["GB-BB1", "GB-BB1"]), "HA7")
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Britain", ["DE-BB1", "GB-DD1"]), "HA7")
    c.choose_casualties(b, "Britain", ["GB-DD2", "GB-BB1"])
    assert step(c, b) == ("casualties", ["Germany"], "HA7")
    # Germany: a capital hit on a battleship (HA5), an escort hit on DE-CA1 (HA6): cheapest default.
    assert c.choose_casualties(b, "Germany", None) == ["DE-BB1", "DE-CA1"]
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit", before)] == [
        ("DE-BB1", False),
        ("DE-CA1", True),
        ("GB-DD2", True),
        ("GB-BB1", False),
    ]
    assert c.units["GB-BB1"]["damage"] == 1 and c.units["DE-BB1"]["damage"] == 1
    assert step(c, b) == ("decide", ["Germany"], "NC4")


def test_nc5_damaged_capital_ships_fight_on_and_a_second_hit_sinks_them() -> None:
    c = campaign()
    place(c, HB, "DE-SS1", "DE-SS2")  # direct setup
    place(c, CNS, "DE-BB1")  # direct setup
    c.units["DE-BB1"]["damage"] = 1  # direct setup: damaged in an earlier battle
    place(c, "Irish Sea", "GB-DD1", "GB-DD2")  # direct setup: GB-CA1 alone
    b = c.naval_start("Germany", CNS)
    before = c.version
    c.fire(b, dice(9, 1))  # the damaged battleship fires (and misses); the cruiser hits it
    assert [r.unit for r in rolls(c, before)] == ["DE-BB1", "GB-CA1"]
    assert [(e.unit, e.sunk) for e in events(c, "UnitHit", before)] == [("DE-BB1", True)]
    ended = events(c, "BattleEnded")[-1]
    assert (ended.rule, ended.survivors) == ("NC1", ["GB-CA1"])


def test_ha1_a_screening_escort_takes_the_submarines_hit_on_a_cruiser() -> None:
    c = campaign()
    b = c.naval_start("Germany", CNS)
    # 2 submarines, 3 British escorts: no opening fire (NC2), the submarines fire in the main round.
    assert [e.firing for e in events(c, "OpeningFire")] == [[]]
    c.choose_targets(b, "Germany", {"DE-SS1": "GB-CA1", "DE-SS2": "GB-CA1"})
    assert step(c, b) == ("screening", ["Britain"], "HA1")
    refused(c, RuleViolation, lambda: c.choose_screens(b, "Britain", {"DE-SS1": "DE-SS2"}), "HA1")
    c.choose_screens(b, "Britain", {"DE-SS1": "GB-DD1"})
    before = c.version
    c.fire(b, dice(1, 1, 9, 9, 9))
    hits = [(e.firer, e.target, e.unit, e.rule) for e in events(c, "TargetHit", before)]
    assert hits == [("DE-SS1", "GB-CA1", "GB-DD1", "HA1"), ("DE-SS2", "GB-CA1", "GB-CA1", "HA1")]
    assert "GB-DD1" not in c.units and "GB-CA1" not in c.units


# ----- NC4, NC1: submerge, retreat, the end -----


def test_nc4_submarines_submerge_and_the_battle_ends_when_every_attacker_left_is_submerged() -> None:
    c = campaign()
    b = c.naval_start("Germany", CNS)
    to_fire(c, b)
    c.fire(b, dice(9, 9, 9, 9, 9))
    assert step(c, b) == ("decide", ["Germany"], "NC4")
    assert "Germany: submerge DE-SS1/DE-SS2 or retreat to" in c.pending()[0]["text"]
    refused(c, RuleViolation, lambda: c.naval_decide(b, "Germany", ["GB-DD1"], None), "NC4")
    c.naval_decide(b, "Germany", ["DE-SS1", "DE-SS2"], None)
    dive = events(c, "SubmarinesSubmerged")[-1]
    assert (dive.units, dive.rule) == (["DE-SS1", "DE-SS2"], "NC4")
    ended = events(c, "BattleEnded")[-1]
    assert ended.rule == "NC1" and set(ended.survivors) == {"DE-SS1", "DE-SS2", "GB-CA1", "GB-DD1", "GB-DD2"}
    assert c.units["DE-SS1"]["at"] == CNS and not c.battles


def test_nc4_the_defenders_submarines_may_submerge_too() -> None:
    c = campaign(ruleset=SUBS_ALONE_FOUGHT)
    place(c, "Skagerrak", "DE-DD1", "DE-DD2", "DE-CA1", "DE-SS3", "DE-SS4", "DE-SS5")  # direct setup
    b = c.naval_start("Germany", HB)
    to_fire(c, b)
    c.fire(b, dice(9, 9))  # the British submarines' opening fire
    # NC6: the battleships cannot hit submarines: they roll no die, and that is recorded.
    withheld = events(c, "FireWithheld")[-1]
    assert (withheld.units, withheld.rule) == (["DE-BB1", "DE-BB2"], "NC6")
    assert step(c, b) == ("decide", ["Germany", "Britain"], "NC4")
    refused(c, RuleViolation, lambda: c.naval_decide(b, "Britain", None, "Skagerrak"), "NC1")
    c.naval_decide(b, "Britain", ["GB-SS1", "GB-SS2"], None)
    # NC1: every defender left is submerged, so the battle is over: Germany is not asked to
    # fight on against nobody (`gone_side_ends_battle`; before the key it still decided).
    assert events(c, "BattleEnded")[-1].rule == "NC1"
    assert str(b) not in c.battles


def test_nc1_the_attacker_may_retreat_to_an_adjacent_sea_zone_without_enemy_warships() -> None:
    c = campaign("combat_movement")
    c.move("Germany", ["DE-CA1", "DE-BB1", "DE-BB2"], [CNS])
    advance_passing(c)
    b = c.naval_start("Germany", CNS)
    to_fire(c, b)
    c.fire(b, dice(*[10] * 8))
    for zone, rule in ((SNS, "NC1"), ("England", "NC1"), ("Irish Sea", "NC1")):
        err = refused(c, RuleViolation, lambda zone=zone: c.naval_decide(b, "Germany", None, zone), rule)
        assert "Heligoland Bight, Skagerrak" in err.reason
    c.naval_decide(b, "Germany", ["DE-SS2"], HB)
    back = events(c, "AttackerRetreated")[-1]
    assert (back.units, back.zone, back.rule) == (["DE-BB1", "DE-BB2", "DE-CA1", "DE-SS1"], HB, "NC1")
    assert c.units["DE-BB1"]["at"] == HB and c.units["DE-SS2"]["at"] == CNS  # submerged, it stays
    assert events(c, "BattleEnded")[-1].rule == "NC1" and not c.battles


def test_nc1_the_battle_goes_on_round_after_round_until_a_side_is_gone() -> None:
    c = campaign()
    place(c, HB, "DE-SS2")  # direct setup
    place(c, "Irish Sea", "GB-DD1", "GB-DD2")  # direct setup: DE-SS1 against GB-CA1
    b = c.naval_start("Germany", CNS)
    assert [e.firing for e in events(c, "OpeningFire")] == [[]]  # GB-CA1 cancels it
    for _ in range(3):
        to_fire(c, b)
        c.fire(b, dice(9, 9))
        c.naval_decide(b, "Germany", None, None)
    assert c.battles[str(b)]["round"] == 4
    to_fire(c, b)
    c.fire(b, dice(1, 9))
    assert not c.battles and "GB-CA1" not in c.units


def test_auto_resolves_a_naval_battle_with_the_defaults() -> None:
    c = campaign()
    b = c.naval_start("Germany", CNS)
    # Every shot hits: DE-SS1's on GB-CA1 is screened by GB-DD1 (the cheaper loss, HA7); GB-CA1
    # and GB-DD1 sink the two U-boats, and with the attacker gone the battle ends (NC1).
    assert c.battle_auto(b, dice(1, 1, 1, 1, 1)) == [b]
    assert not c.battles and "DE-SS1" not in c.units and "DE-SS2" not in c.units
    assert events(c, "BattleEnded")[-1].survivors == ["GB-CA1", "GB-DD2"]


def test_rk2_refused_battle_commands_change_nothing() -> None:
    c = campaign()
    b = c.naval_start("Germany", CNS)
    refused(c, RuleViolation, lambda: c.fire(b, dice(1, 1, 1, 1, 1)), "HA1")
    refused(c, RuleViolation, lambda: c.choose_targets(b, "Britain", None), "HA1")
    refused(c, RuleViolation, lambda: c.naval_start("Germany", HB), "HA1")  # one battle at a time
    refused(c, InputError, lambda: c.choose_targets(b + 7, "Germany", None))
    refused(c, InputError, lambda: c.choose_targets(b, "Ruritania", None))
    c.choose_targets(b, "Germany", None)
    c.choose_screens(b, "Britain", None)
    refused(c, RuleViolation, lambda: c.choose_casualties(b, "Britain", None), "NC3")


# ----- persistence: the procedures stored and loaded back -----


def _play(c: Campaign, d: DiceSource, what: str) -> Any:
    if what == "move":
        return c.move("Germany", ["DE-SS3", "DE-SS4", "DE-SS5"], [SNS, "Dover Strait"])
    if what == "advance":
        return advance_passing(c)
    return c.battle_auto(c.battle_count, d)


def test_procedures_are_stored_and_loaded_back_the_same_on_sqlite_and_postgresql(
    tracker: Tracker, unique_name: str
) -> None:
    cid = tracker.create(unique_name, "north-sea-1914", dice="auto", seed=f"{184:064x}").id
    while tracker.load(cid).phase != "combat_movement":
        tracker.execute(cid, partial(_play, what="advance"))
    tracker.execute(cid, partial(_play, what="move"))
    mid = tracker.load(cid)
    assert mid.battles["1"]["step"] == "search"
    # A snapshot taken mid-procedure holds the battle state as plain data.
    tracker.app.take_snapshot(cid)
    with pytest.raises(RuleViolation, match="SM2"):
        tracker.execute(cid, partial(_play, what="advance"))
    assert tracker.load(cid).version == mid.version  # nothing recorded on refusal
    tracker.execute(cid, partial(_play, what="auto"))
    tracker.execute(cid, partial(_play, what="advance"))  # to naval_combat
    tracker.execute(cid, lambda c, d: c.asw_start("Germany", HB))
    tracker.execute(cid, partial(_play, what="auto"))
    tracker.execute(cid, lambda c, d: c.naval_start("Germany", CNS))
    tracker.execute(cid, partial(_play, what="auto"))
    loaded = tracker.load(cid)
    assert not loaded.battles and loaded.battle_count == 3
    replayed = None
    for event in tracker.events(cid):
        replayed = event.mutate(replayed)
    assert replayed is not None
    for key in ("units", "battles", "fought", "battle_count", "roll_count", "phase"):
        assert getattr(replayed, key) == getattr(loaded, key), key
    stored = tracker.stored_events(cid)
    report = verify_events(
        ((s.originator_version, partial(tracker.decode, s)) for s in stored), lambda e: tracker.seed_for(cid, e)
    )
    assert report.ok, report.problem
    assert report.rolls_checked == loaded.roll_count > 0
    kinds = {type(e).__name__ for e in tracker.events(cid)}
    assert {"InterceptionStarted", "AswCombatStarted", "NavalBattleStarted", "RoundStarted", "TargetsChosen"} <= kinds
