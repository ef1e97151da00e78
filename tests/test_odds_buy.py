"""Purchases that advise (`tracker odds buy`, `tracker.analysis.buy`): which types the nation
can buy and place (PU1-PU3), each type's gain and value per resource against a brute force
over every type, placement zone, target zone and measure on a small board, computed in
fractions apart from the path the command takes, and the command line, whose figures
`tracker odds` reproduces from the lines it names."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.board import Board, Unit
from domain.errors import RuleViolation
from domain.procedures import convoy, naval
from domain.procedures.base import Context, hypothetical_scenario
from domain.procedures.odds import Odds, exact_odds
from domain.rules.economy import placement_zones
from tests.test_odds_advise import CNS, DOVER, HB, RULESET, SIDES, SKAG, Placed, board_of, pieces
from tracker.analysis import buy, reach
from tracker.cli.main import cli

# Germany's turn: two British ships in the Central North Sea to attack, a French destroyer in
# the Dover Strait, and British submarines within a full move of Germany's NTR in the
# Heligoland Bight and the Skagerrak (CV1).
BOARD: list[Placed] = [
    ("Germany", "submarine", HB, 0),
    ("Germany", "destroyer", SKAG, 0),
    ("Germany", "fighter", "Northern Germany", 0),
    ("Britain", "destroyer", CNS, 0),
    ("Britain", "cruiser", CNS, 0),
    ("Britain", "submarine", CNS, 0),
    ("France", "destroyer", DOVER, 0),
]


def context(board: Board) -> Context:
    return Context(RULESET, hypothetical_scenario(SIDES), {n: dict(board.tech.get(n, {})) for n in SIDES})


def cost(left: Mapping[str, int]) -> int:
    return sum(n * RULESET.units[t.removesuffix(" (damaged)")].cost for t, n in left.items())


def attack(board: Board, att: Mapping[str, int], enemies: list[Unit]) -> tuple[Fraction, Fraction]:
    """Germany attacks every enemy unit of a zone: the exact chance of winning, and the
    expected cost sunk less own cost lost."""
    if not any(att.values()):
        return Fraction(0), Fraction(0)
    ctx = context(board)
    defenders: dict[str, dict[str, int]] = {}
    for u in enemies:
        defenders.setdefault(u.nation, {}).setdefault(u.type, 0)
        defenders[u.nation][u.type] += 1
    d = tuple(p for n, c in sorted(defenders.items()) for p in pieces(n, c))
    state, facts = naval.start(ctx, "Germany", min(defenders), pieces("Germany", att), d)
    odds = exact_odds(state, ctx, None, sum(1 for f in facts if f.kind == "round"), exact=True)
    ours, theirs = sum(n * RULESET.units[t].cost for t, n in att.items()), sum(cost(c) for c in defenders.values())
    trade: Fraction = sum(
        (Fraction(m[0]) * ((theirs - cost(dict(o.defender_left))) - (ours - cost(dict(o.attacker_left)))))
        for o, m in odds.outcomes.items()
    ) + Fraction(0)
    return Fraction(odds.probability(lambda o: o.result == "attacker_wins")), trade


def ntr_lost(board: Board, threats: Mapping[str, int], searchers: Mapping[str, int], ntr: int) -> Fraction:
    """Each enemy nation's submarines attack Germany's NTR on their own (CV1): the expected NTR
    destroyed, added up, exactly."""
    ctx = context(board)
    total = Fraction(0)
    for enemy, subs in sorted(threats.items()):
        a = pieces(enemy, {"submarine": subs})
        state = convoy.start(ctx, enemy, "Germany", tuple(p.id for p in a), a, pieces("Germany", searchers), ntr)
        odds: Odds = exact_odds(state, ctx, None, 0, exact=True)
        total += Fraction(odds.expected(lambda o: o.ntr_destroyed)[0])
    return total


def counts_of(units: list[Unit]) -> dict[str, int]:
    out: dict[str, int] = {}
    for u in units:
        out[u.type] = out.get(u.type, 0) + 1
    return out


def moves_to(board: Board, unit_type: str, place: str, zone: str) -> bool:
    """A new unit placed in `place` is in `zone` next turn: ships by sea within their move
    (stopping at hostile zones, SM1), aircraft within their range (F7)."""
    unit = Unit("X-1", unit_type, "Germany", place)
    there = replace(board, units={**board.units, unit.id: unit})
    if RULESET.units[unit_type].is_air:
        distance = board.scenario.game_map.distance(place, zone)
        return distance is not None and distance <= RULESET.units[unit_type].move
    steps = reach.steps_to(there, unit, zone)
    return steps is not None and steps <= RULESET.units[unit_type].move


def brute_force(board: Board, budget: int) -> dict[tuple[str, str, str], Fraction]:
    """Every gain of one more unit: each type, each zone it may be placed in, each zone it
    reaches from there, each measure, by (type, measure, zone)."""
    gains: dict[tuple[str, str, str], Fraction] = {}
    for t, ut in RULESET.units.items():
        if ut.cost > budget or not (ut.is_naval or ut.is_air):
            continue
        for place in placement_zones(board, "Germany", t):
            for zone in sorted(board.scenario.game_map.sea):
                if not moves_to(board, t, place, zone):
                    continue
                enemies = [u for u in board.units_at(zone) if board.enemies("Germany", u.nation)]
                if any(RULESET.units[u.type].is_naval for u in enemies):
                    now = counts_of([r.unit for r in reach.reach(board, "Germany", zone, next_turn=True)])
                    (p0, t0), (p1, t1) = (
                        attack(board, now, enemies),
                        attack(board, {**now, t: now.get(t, 0) + 1}, enemies),
                    )
                    gains[t, "win", zone] = (p1 - p0) * sum(RULESET.units[u.type].cost for u in enemies)
                    gains[t, "trade", zone] = t1 - t0
                ntr = board.ntr["Germany"].get(zone, 0)
                searches = ut.search["convoy"] > 0  # CV3: battleships search too
                threats = buy.escorts.submarines(board, "Germany", zone, True)
                if ntr and threats and searches:
                    now = counts_of([r.unit for r in buy.escorts.searchers(board, "Germany", zone, True)])
                    after = {**now, t: now.get(t, 0) + 1}
                    gains[t, "convoy", zone] = ntr_lost(board, threats, now, ntr) - ntr_lost(board, threats, after, ntr)
    return gains


def ranking(gains: Mapping[tuple[str, str, str], Fraction], budget: int) -> list[tuple[str, Fraction]]:
    """Each type's best gain (none: 0) per resource, the best first."""
    best = {t: Fraction(0) for t, ut in RULESET.units.items() if ut.cost <= budget and (ut.is_naval or ut.is_air)}
    for (t, _, _), gain in gains.items():
        best[t] = max(best[t], gain)
    values = {t: g / RULESET.units[t].cost for t, g in best.items()}
    return sorted(values.items(), key=lambda kv: (-kv[1], RULESET.units[kv[0]].cost, kv[0]))


@pytest.mark.parametrize("budget", [8, 12, 30])
def test_the_ranking_equals_a_brute_force_over_every_type_place_zone_and_measure_PU2_NC1_CV5(budget: int) -> None:
    board = board_of(BOARD, phase="purchase")
    data = buy.answer(board, budget, 20_000)
    assert data["too_large"] == {}
    gains = brute_force(board, budget)
    got = {(c["type"], c["measure"], c["zone"]): c["gain"] for c in data["candidates"]}
    assert set(got) == set(gains)
    for key, gain in gains.items():
        assert got[key] == pytest.approx(float(gain), abs=1e-12), key
    expected = ranking(gains, budget)
    assert [r["type"] for r in data["ranking"]] == [t for t, _ in expected]
    for r, (_, value) in zip(data["ranking"], expected, strict=True):
        assert r["value"] == pytest.approx(float(value), abs=1e-12), r
    measures = {c["measure"] for c in data["candidates"]}
    assert measures == {"convoy", "win", "trade"}, "the board exercises every measure"


def test_pu1_pu2_only_types_within_the_budget_with_somewhere_to_be_placed_are_weighed() -> None:
    board = board_of(BOARD, phase="purchase")
    types, not_weighed = buy.buyable(board, "Germany", 10)
    assert all(RULESET.units[t].cost <= 10 for t in types) and "submarine" in types
    assert not_weighed["battleship"] == "costs 20, over the budget of 10 (PU1)"
    portless = replace(board, owners={})
    with pytest.raises(RuleViolation, match="PU2: Germany can buy and place no naval or air unit with 30 resources"):
        buy.answer(portless, 30, 20_000)
    with pytest.raises(RuleViolation, match="PU1: .* submarine costs 6, over the budget of 5"):
        buy.answer(board, 5, 20_000)


def test_pu1_units_bought_after_the_purchase_phase_are_not_placed_this_turn() -> None:
    with pytest.raises(RuleViolation, match="PU1: Germany buys in its purchase phase and it is at combat movement"):
        buy.answer(board_of(BOARD, phase="combat_movement"), 30, 20_000)


def test_a_battle_over_ten_units_a_side_is_named_too_large_to_weigh() -> None:
    many: list[Placed] = [*BOARD, *[("Germany", "destroyer", SKAG, 0)] * 10]
    data = buy.answer(board_of(many, phase="purchase"), 30, 20_000)
    assert data["too_large"][CNS].endswith("units a side")
    assert CNS not in {c["zone"] for c in data["candidates"]}


def test_a_spent_budget_of_positions_stops_weighing_the_larger_battles() -> None:
    data = buy.answer(board_of(BOARD, phase="purchase"), 30, 20_000, budget_positions=1)
    assert set(data["too_large"].values()) == {"beyond the budget of positions"}
    assert "beyond the budget of positions" in "\n".join(buy.notes(data))


# ----- the command line, on the north-sea campaign -----


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def north_sea(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A north-sea-1914 campaign at Germany's first purchase phase."""
    db = str(tmp_path_factory.mktemp("buy") / "north-sea.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    while "purchase" not in run(db, "pending"):
        run(db, "next")
    return db


def figures(db: str, line: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run(db, *shlex.split(line)[1:], "--json"))
    return data


def trade_of(data: Mapping[str, Any], ours: int, theirs: int) -> float:
    return sum(
        o["probability"] * ((theirs - cost(o["defender_left"])) - (ours - cost(o["attacker_left"])))
        for o in data["outcomes"]
    )


def test_odds_buy_ranks_by_value_and_tracker_odds_reproduces_each_best_figure(north_sea: str) -> None:
    data = json.loads(run(north_sea, "odds", "buy", "--budget", "10", "--json"))
    assert data["nation"] == "Germany" and data["budget"] == 10 and data["phase"] == "purchase"
    values = [r["value"] for r in data["ranking"]]
    assert values == sorted(values, reverse=True) and values[0] > 0
    for r in data["ranking"]:
        best = r["best"]
        assert best is not None and best["gain"] == pytest.approx(r["value"] * r["cost"], abs=1e-12)
        assert best["measure"] in ("win", "trade"), "Germany's convoys are under no threat at the start"
        [before], [after] = best["commands"]["before"], best["commands"]["after"]
        old, new = figures(north_sea, before), figures(north_sea, after)
        if best["measure"] == "win":
            won = (old["p"].get("attacker_wins", 0), new["p"].get("attacker_wins", 0))
            assert won[0] == pytest.approx(best["before"], abs=1e-12)
            assert won[1] == pytest.approx(best["after"], abs=1e-12)
            assert (won[1] - won[0]) * best["enemy_cost"] == pytest.approx(best["gain"], abs=1e-9)
        else:
            ours = {k: cost(f) for k, f in best["forces"].items()}
            traded = trade_of(new, ours["after"], best["enemy_cost"]) - trade_of(
                old, ours["before"], best["enemy_cost"]
            )
            assert traded == pytest.approx(best["gain"], abs=1e-9)
    text = run(north_sea, "odds", "buy", "--budget", "10")
    assert text.startswith("Germany's purchases with 10 resources (round 1, purchase)")
    assert "Not weighed: cruiser costs 12, over the budget of 10 (PU1)" in text


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["--budget", "5"], 1, "PU1: Germany can buy and place no naval or air unit with 5 resources"),
        (["--budget", "-1"], 2, "--budget"),
        (["--budget", "ten"], 2, "--budget"),
    ],
)
def test_bad_odds_buy_input_is_one_line(north_sea: str, args: list[str], code: int, message: str) -> None:
    out = run(north_sea, "odds", "buy", *args, code=code)
    assert message in out and "Traceback" not in out, out
    if code == 1:
        assert out.count("\n") == 1, out


def test_odds_buy_has_help_with_an_example(tmp_path: Path) -> None:
    out = run(str(tmp_path / "none.db"), "odds", "buy", "--help")
    assert "Example: tracker odds buy" in out and "value is the gain divided by the type's cost" in out
    assert "tracker odds buy" in run(str(tmp_path / "none.db"), "odds", "--help")


def test_odds_buy_fits_80_columns_and_keeps_each_command_whole(north_sea: str) -> None:
    """The table without the places fits 80 columns; the places follow it by type; each
    `tracker odds` line behind a figure is on a line of its own, whole, to copy."""
    from tracker.cli.common import CLIENT_TERMINAL

    data = json.loads(run(north_sea, "odds", "buy", "--json"))
    token = CLIENT_TERMINAL.set({"columns": 80, "color_system": None, "no_color": True, "tty": True})
    try:
        text = run(north_sea, "odds", "buy")
    finally:
        CLIENT_TERMINAL.reset(token)
    lines = text.splitlines()
    commands = [line.strip() for line in lines if line.strip().startswith("tracker odds ")]
    assert all(len(line) <= 80 for line in lines if line.strip() not in commands), max(lines, key=len)
    shown = {c for r in data["ranking"] if r["best"] for c in r["best"]["commands"]["after"]}
    assert shown and shown <= set(commands)
    places = " ".join(" ".join(lines).split())
    for r in data["ranking"]:
        if r["best"]:
            assert r["type"] in places and all(p in places for p in r["best"]["place"][:2])
    assert "Placed in (PU2): " in text
