"""Odds that advise (`tracker odds need`, `tracker.analysis.advise`): which units can reach a
zone (F4, F7, SM1), the cheapest force against brute force over every force on small boards,
and the command line, whose answer `tracker odds naval` reproduces.

Brute force here builds each battle from the domain's procedures and enumerates it in
fractions, apart from the path the command takes (forces as text, floats)."""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Mapping
from fractions import Fraction
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.board import Board
from domain.campaign import Campaign
from domain.dice import commitment
from domain.errors import RuleViolation
from domain.procedures import naval
from domain.procedures.base import Context, Piece, hypothetical_scenario
from domain.procedures.odds import Shared, exact_odds
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance
from tracker.analysis import advise, escorts, reach
from tracker.cli.main import cli

RULESET, RULESET_DATA = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
CNS, HB, SKAG, DOVER = "Central North Sea", "Heligoland Bight", "Skagerrak", "Dover Strait"
SIDES = {"Germany": "Central Powers", "Austria-Hungary": "Central Powers", "Britain": "Entente", "France": "Entente"}

# (nation, type, zone, moved)
Placed = tuple[str, str, str, int]
SMALL: list[Placed] = [
    ("Germany", "submarine", HB, 0),
    ("Germany", "submarine", HB, 0),
    ("Germany", "submarine", DOVER, 0),  # through the hostile Southern North Sea: a submarine may (SM1)
    ("Germany", "battleship", DOVER, 0),  # a battleship must stop there (SM1): it cannot reach CNS
    ("Germany", "destroyer", SKAG, 0),
    ("Germany", "destroyer", SKAG, 0),
    ("Germany", "cruiser", HB, 0),
    ("Britain", "destroyer", CNS, 0),
    ("Britain", "cruiser", CNS, 0),
    ("Britain", "destroyer", "Southern North Sea", 0),
]


def board_of(units: list[Placed], phase: str = "combat_movement", nation: str = "Germany") -> Board:
    """`nation`'s turn at `phase` of round 1, with only `units` on the board (the scenario's
    technology: Germany advanced_submarine 1, Britain advanced_asw 1)."""
    c = Campaign.create(uuid.uuid4(), "advise", SCENARIO, RULESET_DATA, "auto", commitment("00" * 32))
    while (c.nation, c.phase) != (nation, phase):
        advance(c)
    c.units.clear()
    codes = {n: v["code"] for n, v in SCENARIO["nations"].items()}
    for i, (nation, unit_type, zone, moved) in enumerate(units):
        uid = f"{codes[nation]}-{RULESET.units[unit_type].abbr}{i + 1}"
        c.units[uid] = {"type": unit_type, "nation": nation, "at": zone, "damage": 0, "moved": moved}
    return c.board()


def pieces(nation: str, counts: Mapping[str, int]) -> tuple[Piece, ...]:
    return tuple(Piece(f"{nation[:2]}-{t}{i}", t, nation) for t, n in counts.items() for i in range(n))


def battle_chance(
    board: Board, attacker: str, att: Mapping[str, int], defenders: Mapping[str, Mapping[str, int]], hold: bool
) -> Fraction:
    """The exact chance of one naval battle: the attacker wins, or (`hold`) a defender is left."""
    ctx = Context(RULESET, hypothetical_scenario(SIDES), {n: dict(board.tech.get(n, {})) for n in SIDES})
    d = tuple(p for n, counts in sorted(defenders.items()) for p in pieces(n, counts))
    if not d:
        return Fraction(0)
    if not any(att.values()):
        return Fraction(1) if hold else Fraction(0)
    state, facts = naval.start(ctx, attacker, next(iter(sorted(defenders))), pieces(attacker, att), d)
    rounds = sum(1 for f in facts if f.kind == "round")
    odds = exact_odds(state, ctx, None, rounds, exact=True)
    assert odds.truncated == 0
    if hold:
        return Fraction(odds.probability(lambda o: o.holder in ("defender", "both")))
    return Fraction(odds.probability(lambda o: o.result == "attacker_wins"))


def counted(units: list[Any]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for u in units:
        out.setdefault(u.nation, {}).setdefault(u.type, 0)
        out[u.nation][u.type] += 1
    return out


def brute_force(q: reach.Question, bound: Fraction) -> tuple[int, Fraction] | None:
    """The least cost of a force meeting the bound, and the best chance at that cost."""
    pool = reach.full_force(q)
    types = list(pool)
    best: tuple[int, Fraction] | None = None
    for c in product(*(range(n + 1) for n in pool.values())):
        counts = {t: n for t, n in zip(types, c, strict=True) if n}
        cost = sum(n * RULESET.units[t].cost for t, n in counts.items())
        if q.hold:
            ours = counted(q.allies)
            ours.setdefault(q.nation, {}).update(counts)
            threats = [battle_chance(q.board, enemy, counted(us)[enemy], ours, True) for enemy, us in q.others.items()]
            p = min(threats, default=Fraction(1))
        else:
            p = battle_chance(q.board, q.nation, counts, {n: counted(us)[n] for n, us in q.others.items()}, False)
        if p >= bound and (best is None or (cost, -p) < (best[0], -best[1])):
            best = (cost, p)
    return best


def test_units_that_can_reach_a_zone_follow_the_movement_rules_F4_F7_SM1() -> None:
    units: list[Placed] = [
        *SMALL,
        ("Germany", "destroyer", SKAG, 2),  # 1 move left: Skagerrak touches the Central North Sea
        ("Germany", "destroyer", "Norwegian Sea", 2),  # 2 moves away with 1 left
        ("Germany", "fighter", "Northern Germany", 0),  # 2 moves over land and sea, range 4 (F7)
        ("Germany", "transport", "Bay of Biscay", 0),  # no path of 2 sea moves
    ]
    board = board_of(units)
    found = {r.unit.id: r.steps for r in reach.reach(board, "Germany", CNS)}
    assert found == {
        "DE-SS1": 1,
        "DE-SS2": 1,
        "DE-SS3": 2,
        "DE-DD5": 1,
        "DE-DD6": 1,
        "DE-CA7": 1,
        "DE-DD11": 1,
        "DE-FT13": 2,
    }
    # On the next turn every unit has its full allowance.
    assert "DE-DD12" in {r.unit.id for r in reach.reach(board, "Germany", CNS, next_turn=True)}


def test_a_ship_stopped_in_a_hostile_zone_and_a_submarine_whose_move_ended_reach_nothing_more_SM1_SM4() -> None:
    # DE-DD1 entered the hostile Southern North Sea this turn: it stays there (SM1), though it
    # has moves left; DE-DD2 has not moved and may leave it. DE-SS3 submerged (SM4).
    units: list[Placed] = [
        ("Germany", "destroyer", "Southern North Sea", 1),
        ("Germany", "destroyer", "Southern North Sea", 0),
        ("Germany", "submarine", "Southern North Sea", 1),
        ("Britain", "destroyer", "Southern North Sea", 0),
        ("Britain", "destroyer", DOVER, 0),
    ]
    board = board_of(units)
    assert {r.unit.id for r in reach.reach(board, "Germany", DOVER)} == {"DE-DD2", "DE-SS3"}
    assert {r.unit.id for r in reach.reach(board, "Germany", DOVER, ended={"DE-SS3"})} == {"DE-DD2"}
    stopped = {r.unit.id: r.steps for r in reach.reach(board, "Germany", "Southern North Sea", ended={"DE-SS3"})}
    assert stopped == {"DE-DD1": 0, "DE-DD2": 0, "DE-SS3": 0}  # the units there stay there
    q = reach.attack_question(board, "Germany", DOVER, ended={"DE-SS3"})
    assert [r.unit.id for r in q.pool] == ["DE-DD2"]
    # Next turn every unit moves again.
    assert len(reach.reach(board, "Germany", DOVER, next_turn=True, ended={"DE-SS3"})) == 3


MIXED: list[Placed] = [
    ("Germany", "battleship", HB, 0),
    ("Germany", "fighter", "Northern Germany", 0),
    ("Germany", "submarine", HB, 0),
    ("Germany", "submarine", HB, 0),
    ("Germany", "destroyer", SKAG, 0),
    ("Britain", "destroyer", CNS, 0),
    ("Britain", "cruiser", CNS, 0),
    ("Britain", "submarine", CNS, 0),
]


# A fighter more lowers the chance here (two cruisers and a submarine: 88% against 76%).
FIGHTER_HURTS: list[Placed] = [
    ("Germany", "submarine", HB, 0),
    ("Germany", "battleship", CNS, 0),
    ("Germany", "cruiser", CNS, 0),
    ("Germany", "fighter", "Northern Germany", 0),
    ("Germany", "cruiser", HB, 0),
    ("Britain", "destroyer", CNS, 0),
    ("Britain", "battleship", CNS, 0),
    ("Britain", "battleship", CNS, 0),
]


def test_a_unit_more_can_lower_the_chance_so_the_search_skips_no_force_NC1() -> None:
    q = reach.attack_question(board_of(FIGHTER_HURTS), "Germany", CNS)
    without, _ = advise.evaluate(q, {"cruiser": 2, "submarine": 1}, 20_000)
    with_fighter, _ = advise.evaluate(q, {"cruiser": 2, "submarine": 1, "fighter": 1}, 20_000)
    assert with_fighter < 0.85 <= without
    found = advise.search(q, 0.85, 20_000)
    assert found is not None and found.counts == {"cruiser": 2, "submarine": 1}


@pytest.mark.parametrize("units", [SMALL, MIXED, FIGHTER_HURTS], ids=["ships", "with-air-and-capital", "fighter-hurts"])
@pytest.mark.parametrize("bound", ["0.5", "0.85", "0.95", "0.9999"])
def test_the_cheapest_force_to_take_a_zone_is_the_cheapest_of_every_force_NC1(units: list[Placed], bound: str) -> None:
    board = board_of(units)
    q = reach.attack_question(board, "Germany", CNS)
    expected = brute_force(q, Fraction(bound))
    found = advise.search(q, float(bound), 20_000)
    if expected is None:
        assert found is None
        return
    assert found is not None and found.chance >= float(bound)
    assert (found.cost, found.chance) == (expected[0], pytest.approx(float(expected[1]), abs=1e-12))
    # The exhaustive search, which takes nothing for granted, agrees, having weighed more.
    every = advise.search(q, float(bound), 20_000, exhaustive=True)
    assert every is not None and (every.counts, every.cost, every.chance) == (found.counts, found.cost, found.chance)
    assert every.weighed >= found.weighed


@pytest.mark.parametrize("bound", ["0.5", "0.9"])
def test_the_cheapest_force_to_hold_a_zone_holds_against_every_enemy_NC1(bound: str) -> None:
    units: list[Placed] = [
        ("Germany", "destroyer", SKAG, 0),
        ("Germany", "destroyer", SKAG, 0),
        ("Germany", "submarine", HB, 0),
        ("Germany", "submarine", HB, 0),
        ("Germany", "cruiser", HB, 0),
        ("Austria-Hungary", "destroyer", SKAG, 0),  # an ally there defends too, for nothing
        ("Britain", "destroyer", CNS, 0),
        ("Britain", "cruiser", CNS, 0),
        ("France", "destroyer", "Northern North Sea", 0),
    ]
    board = board_of(units)
    q = reach.hold_question(board, "Germany", SKAG)
    assert set(q.others) == {"Britain", "France"} and [u.id for u in q.allies] == ["AH-DD6"]
    expected = brute_force(q, Fraction(bound))
    found = advise.search(q, float(bound), 20_000)
    assert expected is not None and found is not None
    assert (found.cost, found.chance) == (expected[0], pytest.approx(float(expected[1]), abs=1e-12))
    every = advise.search(q, float(bound), 20_000, exhaustive=True)
    assert every is not None and (every.counts, every.cost, every.chance) == (found.counts, found.cost, found.chance)


def test_after_combat_movement_the_force_is_every_unit_there_NC1() -> None:
    units: list[Placed] = [*SMALL, ("Germany", "submarine", CNS, 0), ("Germany", "submarine", CNS, 0)]
    q = reach.attack_question(board_of(units, phase="naval_combat"), "Germany", CNS)
    assert q.fixed and reach.full_force(q) == {"submarine": 2}
    found = advise.search(q, 0.01, 20_000)
    assert found is not None and found.counts == {"submarine": 2}


def test_a_zone_without_enemy_ships_or_out_of_reach_is_refused_naming_the_rule_NC1_F4() -> None:
    from domain.errors import RuleViolation

    board = board_of(SMALL)
    with pytest.raises(RuleViolation, match="NC1: there are no naval units of Germany's enemies in Skagerrak"):
        reach.attack_question(board, "Germany", SKAG)
    with pytest.raises(RuleViolation, match="NC1: England is a land territory"):
        reach.attack_question(board, "Germany", "England")
    far: list[Placed] = [("Germany", "submarine", HB, 0), ("Britain", "destroyer", "Irish Sea", 0)]
    with pytest.raises(RuleViolation, match="F4: no unit of Germany can reach Irish Sea this phase"):
        reach.attack_question(board_of(far), "Germany", "Irish Sea")


CONVOY: list[Placed] = [
    ("Germany", "submarine", CNS, 0),
    ("Germany", "submarine", CNS, 0),
    ("Germany", "submarine", HB, 0),  # in the Central North Sea by Britain's next window
    ("Britain", "destroyer", "Southern North Sea", 0),
    ("Britain", "destroyer", CNS, 0),
    ("Britain", "cruiser", "Northern North Sea", 0),
    ("Britain", "fighter", "England", 0),
    ("Britain", "battleship", CNS, 0),  # not an escort: never weighed
]


def convoy_loss(board: Board, subs: int, searchers: Mapping[str, int], ntr: int) -> Fraction:
    """Expected NTR destroyed by `subs` German submarines against British searchers, exactly."""
    from domain.procedures import convoy

    ctx = Context(RULESET, hypothetical_scenario(SIDES), {n: dict(board.tech.get(n, {})) for n in SIDES})
    attack = pieces("Germany", {"submarine": subs})
    state = convoy.start(
        ctx, "Germany", "Britain", tuple(p.id for p in attack), attack, pieces("Britain", searchers), ntr
    )
    odds = exact_odds(state, ctx, None, 0, exact=True)
    return Fraction(odds.expected(lambda o: o.ntr_destroyed)[0])


@pytest.mark.parametrize("bound", ["1.5", "1.8", "2.0", "2.2", "2.4"])
def test_the_cheapest_escorts_keep_the_expected_ntr_loss_under_the_bound_CV3_CV5(bound: str) -> None:
    board = board_of(CONVOY, nation="Britain")
    q = escorts.convoy_question(board, CNS)
    data = escorts.answer(q, float(bound), 20_000)
    assert [w["threats"] for w in data["windows"]] == [{"Germany": 2}, {"Germany": 3}]
    for w, subs in zip(data["windows"], (2, 3), strict=True):
        pool: dict[str, int] = {}
        for r in w["reachable"]:
            pool[r["type"]] = pool.get(r["type"], 0) + 1
        # CV3: a battleship there searches too (at 2), weighed as every searcher is.
        best: tuple[int, Fraction] | None = None
        for c in product(*(range(n + 1) for n in pool.values())):
            counts = {t: n for t, n in zip(pool, c, strict=True) if n}
            lost = convoy_loss(board, subs, counts, q.ntr)
            cost = sum(n * RULESET.units[t].cost for t, n in counts.items())
            if lost <= Fraction(bound) and (best is None or (cost, lost) < best):
                best = (cost, lost)
        if best is None:
            assert not w["found"]
            continue
        assert w["found"] and w["cost"] == best[0], (w, best)
        assert w["expected_ntr_lost"] == pytest.approx(float(best[1]), abs=1e-12)


# ----- the command line, on the north-sea campaign -----


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def north_sea(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A north-sea-1914 campaign at Germany's first combat movement."""
    db = str(tmp_path_factory.mktemp("advise") / "north-sea.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    while "combat movement" not in run(db, "pending"):
        run(db, "next")
    return db


def test_odds_need_names_a_force_tracker_odds_confirms_and_none_cheaper_meets_the_bound(north_sea: str) -> None:
    args = ["odds", "need", "--zone", "central north sea", "--win", "0.9", "--type", "submarine", "--type", "DD"]
    data = json.loads(run(north_sea, *args, "--json"))
    assert data["found"] and data["zone"] == CNS and data["nation"] == "Germany"
    force = data["force"]
    [battle] = data["battles"]
    checked = json.loads(run(north_sea, *shlex.split(battle["command"])[1:], "--json"))
    assert checked["p"]["attacker_wins"] == force["chance"] >= 0.9
    assert checked["expected"]["attacker_units_lost"] == pytest.approx(force["expected_lost"]["own"], abs=1e-12)
    # Every cheaper force of the units that can be there falls short, by `tracker odds` itself.
    pool: dict[str, int] = {}
    for r in data["reachable"]:
        pool[r["type"]] = pool.get(r["type"], 0) + 1
    assert set(pool) == {"submarine", "destroyer"}
    cheaper = 0
    for ss, dd in product(range(pool["submarine"] + 1), range(pool["destroyer"] + 1)):
        cost = ss * RULESET.units["submarine"].cost + dd * RULESET.units["destroyer"].cost
        if not ss + dd or cost >= force["cost"]:
            continue
        counts = ",".join(f"{t}={n}" for t, n in (("destroyer", dd), ("submarine", ss)) if n)
        line = battle["command"].replace(battle["attacker"][0], f"Germany:{counts}")
        out = json.loads(run(north_sea, *shlex.split(line)[1:], "--json"))
        assert out["p"].get("attacker_wins", 0) < 0.9, line
        cheaper += 1
    assert cheaper >= 1
    text = run(north_sea, *args)
    assert text.startswith("Germany to take Central North Sea with a chance of at least 90%")
    assert battle["command"] in text


def test_odds_need_hold_answers_and_odds_still_takes_positions(north_sea: str) -> None:
    data = json.loads(
        run(north_sea, "odds", "need", "--zone", "Skagerrak", "--hold", "--win", "0.5", "--type", "submarine", "--json")
    )
    assert data["view"] == "hold" and {"Britain"} <= set(data["enemies"])
    assert data["force"]["chance"] == min(
        json.loads(run(north_sea, *shlex.split(b["command"])[1:], "--json"))["holder"].get("defender", 0)
        + json.loads(run(north_sea, *shlex.split(b["command"])[1:], "--json"))["holder"].get("both", 0)
        for b in data["battles"]
    )
    assert "attacker wins" in run(
        north_sea, "odds", "naval", "--attacker", "Germany:destroyer=1", "--defender", "Britain:destroyer=1"
    )


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["--zone", "England"], 2, "England is a land territory, not a sea zone"),
        (["--zone", "Atlantis"], 2, "unknown sea zone 'Atlantis'"),
        (["--zone", "Dover Strait"], 1, "NC1: there are no naval units of Germany's enemies in Dover Strait"),
        (["--zone", "Central North Sea", "--win", "0"], 2, "--win"),
        (["--zone", "Central North Sea", "--type", "zeppelin"], 2, "unknown unit type 'zeppelin'"),
    ],
)
def test_bad_odds_need_input_is_one_line(north_sea: str, args: list[str], code: int, message: str) -> None:
    out = run(north_sea, "odds", "need", *args, code=code)
    assert message in out and "Traceback" not in out, out
    if code == 1:
        assert out.count("\n") == 1, out


def test_odds_need_has_help_with_an_example(tmp_path: Path) -> None:
    out = run(str(tmp_path / "none.db"), "odds", "need", "--help")
    assert out.startswith("Usage: cli odds need [OPTIONS]") or "odds need [OPTIONS]" in out
    assert "Example: tracker odds need" in out
    assert "tracker odds need" in run(str(tmp_path / "none.db"), "odds", "--help")


def test_a_search_beyond_its_positions_stops_in_one_line_naming_the_way_out(north_sea: str) -> None:
    out = run(north_sea, "odds", "need", "--zone", "Central North Sea", "--max-positions", "3", code=1)
    assert out.count("\n") == 1 and "over its budget of 6 positions" in out and "--max-positions" in out, out
    assert "--type" in out and "Traceback" not in out


def test_odds_escorts_answers_per_window_as_tracker_odds_convoy_computes_CV1_CV5(north_sea: str) -> None:
    data = json.loads(run(north_sea, "odds", "escorts", "--zone", "heligoland bight", "--ntr-loss", "1.3", "--json"))
    assert data["nation"] == "Germany" and data["ntr"] == 2 and len(data["windows"]) == 2
    for w in data["windows"]:
        assert w["threats"] == {"Britain": 2}
        assert w["found"] and w["expected_ntr_lost"] <= 1.3
        total = sum(
            json.loads(run(north_sea, *shlex.split(line)[1:], "--json"))["expected"]["ntr_destroyed"]
            for line in w["commands"]
        )
        assert total == pytest.approx(w["expected_ntr_lost"], abs=1e-12)
    text = run(north_sea, "odds", "escorts", "--zone", "Heligoland Bight", "--ntr-loss", "1.3")
    assert (
        text.startswith("Germany's 2 NTR in Heligoland Bight")
        and "round 2, Germany's collect resources: 2 submarines [Britain]" in text
    )
    out = run(north_sea, "odds", "escorts", "--zone", "Dover Strait", code=1)
    assert out == "Error: CV1: Dover Strait holds no NTR of Germany (Germany's NTR: Heligoland Bight 2, Skagerrak 1)\n"


def test_units_in_the_zone_left_out_of_the_force_must_leave_it_NC1() -> None:
    """All of the attacker's units in the zone fight, so a force without some of them means
    moving those out, the ones --type leaves out too. (It was the campaign's Heligoland Bight,
    where British submarines alone are no naval battle to weigh, NC1, AS1.)"""
    units: list[Placed] = [
        ("Germany", "battleship", CNS, 0),
        ("Germany", "cruiser", CNS, 0),
        ("Germany", "destroyer", CNS, 0),
        ("Germany", "submarine", HB, 0),
        ("Germany", "submarine", HB, 0),
        ("Britain", "destroyer", CNS, 0),
    ]
    q = reach.only_types(reach.attack_question(board_of(units), "Germany", CNS), ("submarine",))
    data = advise.answer(q, 0.5, 20_000)
    assert set(data["force"]["counts"]) == {"submarine"}
    assert data["force"]["leave"] == ["DE-BB1", "DE-CA2", "DE-DD3"]


def test_a_zone_no_enemy_can_reach_needs_nobody_to_hold_it_NC1() -> None:
    units: list[Placed] = [("Germany", "destroyer", SKAG, 0), ("Britain", "destroyer", "Irish Sea", 0)]
    q = reach.hold_question(board_of(units), "Germany", SKAG)
    assert q.others == {}
    data = advise.answer(q, 0.9, 20_000)
    assert data["found"] and data["force"]["counts"] == {} and data["force"]["chance"] == 1.0
    assert "nothing needs to be there: no enemy can reach it" in advise.render(data)


def test_battles_enumerated_together_give_the_odds_each_gives_alone_NC1() -> None:
    """`Shared`: the battles of a search enumerated with one engine (positions shared, the
    losses counted from each battle's own start) give every outcome `exact_odds` gives alone,
    in any order, smaller and larger forces, losses and rounds too; a unit the largest force
    does not name goes alone."""
    ctx = Context(RULESET, hypothetical_scenario(SIDES), {"Germany": {"advanced_submarine": 1}})
    enemy = pieces("Britain", {"battleship": 1, "cruiser": 1, "destroyer": 2, "submarine": 1})
    most = {"battleship": 1, "cruiser": 2, "destroyer": 3, "submarine": 2}
    names, _ = naval.start(ctx, "Germany", "Britain", pieces("Germany", most), enemy)
    shared = Shared(names, ctx)
    forces = [
        {t: c for t, c in zip(most, cs, strict=True) if c} for cs in product(*(range(n + 1) for n in most.values()))
    ]
    forces = [f for f in forces if f][::-1][::3] + [{"cruiser": 3}]  # the last names a unit `names` does not
    walked = 0
    for force in forces:
        state, facts = naval.start(ctx, "Germany", "Britain", pieces("Germany", force), enemy)
        rounds = sum(1 for f in facts if f.kind == "round")
        alone = exact_odds(state, ctx, None, rounds, exact=False)
        together = shared.odds(state, rounds)
        assert together.outcomes.keys() == alone.outcomes.keys(), force
        for o, m in alone.outcomes.items():
            assert together.outcomes[o] == pytest.approx(m, abs=1e-12), (force, o)
        assert together.states == alone.states
        walked += alone.states
    assert len(shared.known.edges) < walked / 2, "most positions are met in an earlier battle"


def test_a_nation_entering_the_war_next_round_threatens_the_next_turns_convoys_F8_CV1() -> None:
    # Round 3, Austria-Hungary: Italy (entry round 4) is neutral now, so its submarines in the
    # Adriatic attack nothing this turn; at round 4's window it is at war (F8) and they may.
    _, data = load_ruleset("twtea-3e")
    scenario, _ = read_scenario("great-war-1914")
    c = Campaign.create(uuid.uuid4(), "entry", scenario, data, "auto", commitment("00" * 32))
    while (c.round, c.nation, c.phase) != (3, "Austria-Hungary", "combat_movement"):
        advance(c, True)
    board = c.board()
    assert "Italy" in board.neutral
    now, later = escorts.convoy_question(board, "Southern Adriatic").windows
    assert now.threats == {}
    assert later.label == "round 4, Austria-Hungary's collect resources"
    italian = sum(1 for u in board.units.values() if u.nation == "Italy" and u.type == "submarine")
    assert later.threats == {"Italy": italian} and italian > 0
    assert reach.next_round(board).neutral == board.neutral - {"Italy"}


def test_a_zone_holding_only_a_neutrals_ships_names_the_neutral_and_its_entry_round_F8_NC1() -> None:
    _, data = load_ruleset("twtea-3e")
    scenario, _ = read_scenario("great-war-1914")
    c = Campaign.create(uuid.uuid4(), "neutral", scenario, data, "auto", commitment("00" * 32))
    board = c.board()  # round 1, Germany: Italy enters in round 4
    with pytest.raises(RuleViolation, match=r"; neutral, so nobody's enemy \(F8\): Italy until round 4$"):
        reach.attack_question(board, "Germany", "Tyrrhenian Sea")
    with pytest.raises(RuleViolation) as refused:
        reach.attack_question(board, "Germany", "Gulf of Bothnia")
    assert "neutral" not in str(refused.value)


def test_odds_need_counts_its_units_in_words_one_unit_or_none() -> None:
    q = reach.attack_question(
        board_of([("Germany", "destroyer", HB, 0), ("Britain", "battleship", CNS, 0)]), "Germany", CNS
    )
    text = advise.render(advise.answer(q, 0.9, 20_000))
    assert "no force of the 1 unit that can be there does" in text
    assert "of the 1 unit that can be there." in text and "1 units" not in text


def test_odds_need_without_an_answer_counts_every_force_it_weighed() -> None:
    """No force of three destroyers takes a zone two battleships hold: each of the four forces
    (none to three destroyers) was weighed, and the answer said "1 force weighed exactly"."""
    q = reach.attack_question(
        board_of([("Germany", "destroyer", HB, 0)] * 3 + [("Britain", "battleship", CNS, 0)] * 2), "Germany", CNS
    )
    data = advise.answer(q, 0.99, 20_000)
    assert not data["found"] and data["weighed"] == 4
    assert "4 forces weighed exactly, of the 3 units that can be there." in advise.render(data)


def test_a_zone_holding_only_enemy_submarines_is_no_naval_battle_to_weigh_NC1_AS1() -> None:
    # It was weighed as a naval battle the referee refuses (NC1: submarines alone call for ASW
    # combat, AS1).
    board = board_of([("Germany", "destroyer", HB, 0), ("Britain", "submarine", CNS, 0)])
    with pytest.raises(RuleViolation, match=r"only enemy submarines \(GB-SS2\): that calls for ASW combat \(AS1\)"):
        reach.attack_question(board, "Germany", CNS)
    # A German submarine moving in does not stop there to attack (SM5 happens only where the
    # enemy may intercept it): the referee refuses that battle too (tests/test_odds_enemy_types.py).
    # Where one stopped to attack this turn (`attack_zones`), it may be fought (SM5, NC6).
    board = board_of(
        [("Germany", "destroyer", HB, 0), ("Germany", "submarine", HB, 0), ("Britain", "submarine", CNS, 0)]
    )
    with pytest.raises(RuleViolation, match="NC1: .*ASW combat"):
        reach.attack_question(board, "Germany", CNS)
    pool = reach.attack_question(board, "Germany", CNS, attacking=[CNS]).pool
    assert {r.unit.id for r in pool} == {"DE-DD1", "DE-SS2"}
    # Beside an enemy surface ship, the submarine is in a naval battle like any other unit.
    board = board_of(
        [("Germany", "destroyer", HB, 0), ("Britain", "submarine", CNS, 0), ("Britain", "cruiser", CNS, 0)]
    )
    assert [r.unit.id for r in reach.attack_question(board, "Germany", CNS).pool] == ["DE-DD1"]
