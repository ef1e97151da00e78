"""`tracker odds need` counts on no submarine whose way to the zone passes a zone where the
enemy may intercept it (SM2-SM4): a detected submarine fights, submerges or retreats there and
never reaches the battle, so a chance counting it would be one the referee does not give."""

from __future__ import annotations

import random
import uuid

import pytest

from domain.campaign import Campaign
from domain.campaign.record import restore, savepoint
from domain.dice import AutoDice, commitment
from domain.errors import RuleViolation
from tests.support import advance
from tests.test_odds_advise import CNS, DOVER, HB, RULESET, RULESET_DATA, SCENARIO, Placed, board_of
from tracker.analysis import advise, reach

SNS = "Southern North Sea"
# DE-SS1 reaches the Central North Sea only through the Southern North Sea, where two British
# destroyers may search for it (SM2); DE-SS2 is next door.
PASSING: list[Placed] = [
    ("Germany", "submarine", DOVER, 0),
    ("Germany", "submarine", HB, 0),
    ("Britain", "destroyer", SNS, 0),
    ("Britain", "destroyer", SNS, 0),
    ("Britain", "destroyer", CNS, 0),
]


def test_a_submarine_whose_way_passes_an_enemy_search_is_not_counted_on_SM2_SM4() -> None:
    q = reach.attack_question(board_of(PASSING), "Germany", CNS)
    assert [r.unit.id for r in q.pool] == ["DE-SS2"]
    assert [(u.id, z) for u, z in q.intercepted] == [("DE-SS1", SNS)]
    data = advise.answer(q, 0.9, 20_000)
    assert data["intercepted"] == [{"unit": "DE-SS1", "at": DOVER, "zone": SNS}]
    assert f"DE-SS1 ({DOVER}, through {SNS})" in advise.render(data)


def test_a_hostile_zone_where_nobody_may_search_stops_no_submarine_SM1_SM2() -> None:
    # A battleship makes the zone hostile (SM1) but may not search (SM3): the way is open.
    units = [("Britain", "battleship", SNS, 0) if u[2] == SNS else u for u in PASSING[:-2]] + PASSING[-1:]
    q = reach.attack_question(board_of(units), "Germany", CNS)
    assert {r.unit.id: r.steps for r in q.pool} == {"DE-SS1": 2, "DE-SS2": 1}
    assert q.intercepted == []


def test_a_zone_reached_only_past_a_search_is_refused_naming_the_submarine_SM2() -> None:
    units = [u for u in PASSING if u[2] != HB]
    with pytest.raises(RuleViolation, match=f"F4: no unit of Germany can reach {CNS}.*SM2: DE-SS1 through {SNS}"):
        reach.attack_question(board_of(units), "Germany", CNS)


def _played(runs: int, seed: int) -> float:
    """Germany's chance of taking the Central North Sea with both submarines of PASSING moved
    there together, through the referee (auto dice, the tracker's defaults)."""
    c = Campaign.create(uuid.uuid4(), "passing", SCENARIO, RULESET_DATA, "auto", commitment("00" * 32))
    while (c.nation, c.phase) != ("Germany", "combat_movement"):
        advance(c)
    c.units.clear()
    codes = {n: v["code"] for n, v in SCENARIO["nations"].items()}
    for i, (nation, unit_type, zone, moved) in enumerate(PASSING):
        uid = f"{codes[nation]}-{RULESET.units[unit_type].abbr}{i + 1}"
        c.units[uid] = {"type": unit_type, "nation": nation, "at": zone, "damage": 0, "moved": moved}
    saved, rng, won = savepoint(c), random.Random(seed), 0
    for _ in range(runs):
        c.move("Germany", ["DE-SS2"], [CNS])
        c.move("Germany", ["DE-SS1"], [SNS, CNS])
        while c.battles:  # the interception in the Southern North Sea
            c.battle_auto(min(int(b) for b in c.battles), AutoDice(f"{rng.getrandbits(256):064x}"), started=True)
        advance(c)
        battle = c.naval_start("Germany", CNS)
        c.battle_auto(battle, AutoDice(f"{rng.getrandbits(256):064x}"), started=True)
        here = {u["nation"] for u in c.units.values() if u["at"] == CNS}
        won += here == {"Germany"}
        restore(c, saved)
        saved = savepoint(c)
    return won / runs


def test_the_chance_counting_a_submarine_that_may_be_intercepted_is_not_the_referees_SM2_SM4() -> None:
    # Counting DE-SS1 as sure to arrive gives both submarines' chance against the destroyer
    # (92.5%); the referee, which stops DE-SS1 on the way about one time in four (`tracker odds
    # intercept`: found, and the destroyers not both sunk), gives about 81% (fixed seed: the
    # same battles on every run; 400 of them, a standard error near 0.02).
    board = board_of(PASSING)
    q = reach.attack_question(board, "Germany", CNS)
    both = reach.Question(board, CNS, "Germany", False, [*q.pool, reach.Reach(q.intercepted[0][0], 2)], q.others)
    counted, _ = advise.evaluate(both, {"submarine": 2}, 20_000)
    played = _played(400, 20261206)
    assert played < counted - 0.05
    # What the advice now counts on (DE-SS2 alone) the referee gives at least.
    alone, _ = advise.evaluate(q, {"submarine": 1}, 20_000)
    assert alone < played
