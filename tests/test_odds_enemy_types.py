"""`tracker odds need` against an enemy too large to weigh whole: `--enemy-type` weighs part of
it and says so; against enemy submarines alone no naval battle is weighed, whoever moves in
(NC1, AS1, SM5), as the referee refuses one; `tracker odds escorts` against two enemies says
what its figure is (CV1, F7: the attacks weighed alone and added up)."""

from __future__ import annotations

import json
import shlex
import uuid
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

from domain.campaign import Campaign
from domain.dice import AutoDice, commitment
from domain.errors import InputError, RuleViolation
from domain.rules.convoy import eligible_searchers
from tests.support import advance, cli_on
from tests.test_odds_advise import CNS, HB, RULESET_DATA, SCENARIO, Placed, battle_chance, board_of
from tracker.analysis import advise, escorts, reach

# ----- --enemy-type: part of the enemy, said plainly -----


@pytest.fixture(scope="module")
def great_war(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A great-war-1914 campaign at Germany's first turn (research)."""
    db = str(tmp_path_factory.mktemp("enemy-types") / "great-war.db")
    cli_on(db)("new", "w", "--scenario", "great-war-1914")
    return db


def test_an_enemy_too_large_to_weigh_is_refused_naming_enemy_type(great_war: str) -> None:
    # Britain has 30 units within a full move of the Heligoland Bight: more than exact odds
    # take a side. The refusal was a dead end; it names the way out.
    out = cli_on(great_war)("odds", "need", "--zone", "Heligoland Bight", "--hold", code=2)
    assert out == (
        "Error: Britain has 30 units within a full move of Heligoland Bight; exact odds take at most 20 a side; "
        "weigh fewer of its types with --enemy-type, e.g. --enemy-type battleship\n"
    )


def test_enemy_type_weighs_only_part_of_the_enemy_and_says_so(great_war: str) -> None:
    run = cli_on(great_war)
    args = ["odds", "need", "--zone", "Heligoland Bight", "--hold", "--enemy-type", "BB"]
    data = json.loads(run(*args, "--json"))
    assert data["whole_enemy"] is False and data["enemy_types"] == ["battleship"]
    assert {n: len(us) for n, us in data["enemies"].items()} == {"Britain": 10}
    assert {n: len(us) for n, us in data["enemies_left_out"].items()} == {"Britain": 20, "France": 3}
    [battle] = data["battles"]
    assert battle["attacker"] == ["Britain:battleship=10"]
    text = run(*args)
    # Said before the chance, so that nobody takes it for the whole threat.
    lines = text.splitlines()
    assert lines[1] == (
        "  only part of the enemy weighed (--enemy-type battleship): 10 of Britain's 30, 0 of France's 3 units; "
        "the 23 units left out fight too, so against the whole enemy the chance may well be lower"
    )
    # Without it, the whole enemy is weighed and the answer says nothing of parts.
    units: list[Placed] = [("Germany", "destroyer", HB, 0), ("Britain", "cruiser", CNS, 0)]
    whole = advise.answer(reach.attack_question(board_of(units), "Germany", CNS), 0.5, 20_000)
    assert whole["whole_enemy"] and whole["enemies_left_out"] == {}
    assert "only part of the enemy" not in advise.render(whole)


def test_enemy_type_gives_the_odds_against_that_part_alone() -> None:
    units: list[Placed] = [
        ("Germany", "cruiser", HB, 0),
        ("Germany", "destroyer", HB, 0),
        ("Germany", "destroyer", HB, 0),
        ("Britain", "battleship", CNS, 0),
        ("Britain", "destroyer", CNS, 0),
    ]
    board = board_of(units)
    q = reach.only_enemy_types(reach.attack_question(board, "Germany", CNS), ("destroyer",))
    assert [u.id for u in q.others["Britain"]] == ["GB-DD5"]
    assert [u.id for u in q.left_out["Britain"]] == ["GB-BB4"]
    data = advise.answer(q, 0.5, 20_000)
    assert data["found"]
    exact = battle_chance(board, "Germany", data["force"]["counts"], {"Britain": {"destroyer": 1}}, False)
    assert data["force"]["chance"] == pytest.approx(float(exact), abs=1e-12)


def test_enemy_type_of_no_enemy_unit_or_unknown_is_refused() -> None:
    units: list[Placed] = [("Germany", "destroyer", HB, 0), ("Britain", "cruiser", CNS, 0)]
    q = reach.attack_question(board_of(units), "Germany", CNS)
    with pytest.raises(InputError, match="unknown unit type 'zeppelin'"):
        reach.only_enemy_types(q, ("zeppelin",))
    with pytest.raises(InputError, match=f"--enemy-type bomber: no enemy unit of that type in {CNS}"):
        reach.only_enemy_types(q, ("bomber",))
    # NC1: a naval battle needs an enemy naval unit; aircraft alone are none.
    units.append(("Britain", "bomber", CNS, 0))
    q = reach.attack_question(board_of(units), "Germany", CNS)
    with pytest.raises(RuleViolation, match="NC1: --enemy-type bomber leaves no enemy naval unit"):
        reach.only_enemy_types(q, ("bomber",))


def test_a_search_too_large_with_enemy_types_stops_in_one_line(great_war: str) -> None:
    out = cli_on(great_war)(
        "odds",
        "need",
        "--zone",
        "Heligoland Bight",
        "--hold",
        "--enemy-type",
        "battleship",
        "--enemy-type",
        "cruiser",
        "--max-positions",
        "2000",
        code=1,
    )
    assert out.count("\n") == 1 and out.startswith("Error: ")
    assert "--enemy-type" in out


# ----- NC1, AS1: enemy submarines alone are no naval battle, whoever moves in -----


def test_odds_need_weighs_no_naval_battle_against_submarines_alone_the_referee_refuses_NC1_AS1() -> None:
    # A German destroyer and submarine next to a British submarine alone. The advice weighed a
    # naval battle for them (the submarine "could stop to attack", SM5); the referee refuses it
    # once they are there: a submarine stops to attack only where the enemy may intercept it.
    units: list[Placed] = [
        ("Germany", "destroyer", HB, 0),
        ("Germany", "submarine", HB, 0),
        ("Britain", "submarine", CNS, 0),
    ]
    with pytest.raises(RuleViolation) as refused:
        reach.attack_question(board_of(units), "Germany", CNS)
    assert refused.value.rule == "NC1"
    message = str(refused.value)
    assert "\n" not in message and "ASW combat (AS1)" in message
    command = message.split("search: ")[-1]
    assert command == (
        "tracker odds asw --attacker Germany:destroyer=1 --defender Britain:submarine=1 "
        "--tech Britain:advanced_asw=1 --tech Germany:advanced_submarine=1"
    )
    # The line it gives is one `tracker odds` computes.
    assert json.loads(cli_on(Path("/nonexistent.db"))(*shlex.split(command)[1:], "--json"))["procedure"] == "asw"
    # The referee, after the very move the advice had in mind.
    c = Campaign.create(uuid.uuid4(), "subs", SCENARIO, RULESET_DATA, "auto", commitment("00" * 32))
    while (c.nation, c.phase) != ("Germany", "combat_movement"):
        advance(c)
    c.units.clear()
    for i, (nation, unit_type, zone, _) in enumerate(units):
        code = {"Germany": "DE", "Britain": "GB"}[nation]
        abbr = RULESET_DATA["units"][unit_type]["abbr"]
        c.units[f"{code}-{abbr}{i + 1}"] = {"type": unit_type, "nation": nation, "at": zone, "damage": 0, "moved": 0}
    c.move("Germany", ["DE-DD1", "DE-SS2"], [CNS])
    advance(c)
    with pytest.raises(RuleViolation, match="NC1: .*only enemy submarines"):
        c.naval_start("Germany", CNS)


def test_submarines_that_stopped_to_attack_there_make_it_a_naval_battle_to_weigh_SM5() -> None:
    units: list[Placed] = [("Germany", "submarine", CNS, 0), ("Britain", "submarine", CNS, 0)]
    board = board_of(units, "naval_combat")
    q = reach.attack_question(board, "Germany", CNS, attacking=[CNS])
    assert [r.unit.id for r in q.pool] == ["DE-SS1"]


def test_odds_need_on_a_zone_of_enemy_submarines_alone_is_refused_in_one_line(tmp_path: Path) -> None:
    # north-sea-1914: British submarines alone in the Heligoland Bight, the German fleet there.
    run = cli_on(tmp_path / "north-sea.db")
    run("new", "autumn", "--scenario", "north-sea-1914")
    while "combat movement" not in run("pending"):
        run("next")
    out = run("odds", "need", "--zone", "Heligoland Bight", code=1)
    assert out.count("\n") == 1
    assert out.startswith("Error: NC1: Heligoland Bight holds only enemy submarines (GB-SS1, GB-SS2)")
    assert "ASW combat (AS1)" in out and "tracker odds asw --attacker Germany:" in out


# ----- CV1, F7: two enemies against one zone's NTR -----

TWO_ENEMIES: list[Placed] = [
    ("Germany", "submarine", CNS, 0),
    ("Austria-Hungary", "submarine", CNS, 0),
    ("Britain", "bomber", "England", 0),
    ("Britain", "bomber", "England", 0),
]


def test_two_enemies_attacks_weighed_alone_and_added_up_are_said_so_CV1_F7() -> None:
    board = board_of(TWO_ENEMIES, "collect_resources", "Britain")
    board = replace(board, ntr={**board.ntr, "Britain": {CNS: 6}})
    q = escorts.convoy_question(board, CNS)
    data = escorts.answer(q, 0.5, 20_000)
    now = data["windows"][0]
    assert now["threats"] == {"Germany": 1, "Austria-Hungary": 1}
    assert not now["found"] and now["counts"] == {"bomber": 2}
    # Each attack alone: merchant defence misses (99/100), neither bomber detects-and-hits
    # (1 - 2/10 x 6/10 each, CV3, CV4), the convoy table gives 13/10 on average (CV5).
    alone = Fraction(99, 100) * (1 - Fraction(12, 100)) ** 2 * Fraction(13, 10)
    assert now["expected_ntr_lost"] == pytest.approx(float(2 * alone), abs=1e-12)
    # The referee has them one after the other, and an aircraft searches once a phase (F7):
    # with the tracker's default (every searcher in the first attack), the second goes
    # unsearched, 2.2837 in all against the figure's 1.9933 (a Monte Carlo of 10,000 pairs of
    # attacks through the referee gave 2.277 +- 0.016 and 2.282 +- 0.016, by who attacks first).
    # So the figure is no bound: the answer says what it is.
    assert now["attacks_summed"]
    assert escorts.SUMMED in escorts.render(data).splitlines()
    c = Campaign.create(uuid.uuid4(), "two", SCENARIO, RULESET_DATA, "auto", commitment("00" * 32))
    while (c.nation, c.phase) != ("Britain", "collect_resources"):
        advance(c)
    c.units.clear()
    for i, (nation, unit_type, zone, _) in enumerate(TWO_ENEMIES):
        code = {"Germany": "DE", "Austria-Hungary": "AH", "Britain": "GB"}[nation]
        abbr = RULESET_DATA["units"][unit_type]["abbr"]
        c.units[f"{code}-{abbr}{i + 1}"] = {"type": unit_type, "nation": nation, "at": zone, "damage": 0, "moved": 0}
    c.ntr["Britain"][CNS] = 6
    assert [u.id for u in eligible_searchers(c.board(), "Britain", CNS, frozenset(c.committed))] == ["GB-BM3", "GB-BM4"]
    c.battle_auto(c.declare_convoy_attack("Germany", CNS), AutoDice("ab" * 32), started=True)
    assert eligible_searchers(c.board(), "Britain", CNS, frozenset(c.committed)) == []
