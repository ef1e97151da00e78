"""`tracker odds buy` and `tracker odds escorts` checked against the referee: the positions the
advice weighs are the ones the referee would fight. Allied aircraft in range search a convoy
too (CV3); enemy submarines alone call for ASW combat, never a naval battle (NC1, AS1); a
damaged capital ship fights one hit from sinking (F3, NC5). The exact figures below were
checked against Monte Carlo battles through the Campaign aggregate (auto dice, 20,000 a
figure, within two standard errors)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from domain.board import Board
from tests.test_odds_advise import CNS, HB, SKAG, Placed, board_of
from tracker.analysis import advise, buy, escorts, reach


def damaged(board: Board, *ids: str) -> Board:
    """The board with the named capital ships one hit from sinking (F3)."""
    return replace(board, units={k: replace(u, damage=1) if k in ids else u for k, u in board.units.items()})


def test_allied_aircraft_in_range_search_a_convoy_too_CV3() -> None:
    # Austria-Hungary's 1 NTR in the Skagerrak, a British submarine there, and a German bomber
    # in range (F7: on another nation's turn it has its whole range): the referee lists the
    # bomber among the searchers (CV3). Merchant defence sinks the submarine on a 20 on 2D10
    # (1/100, CV2); the bomber detects on a 2 (CV3) and hits on a 6 (CV4); a submarine left
    # destroys the one NTR on 4-10 (CV5): 99/100 x (1 - 2/10 x 6/10) x 7/10. Left out, the
    # bomber's search was missed: 99/100 x 7/10 = 0.693.
    units: list[Placed] = [("Britain", "submarine", SKAG, 0), ("Germany", "bomber", "Northern Germany", 0)]
    board = board_of(units, "purchase", "Austria-Hungary")
    q = escorts.convoy_question(board, SKAG)
    assert q.allies == {"Germany": {"bomber": 1}}
    window = escorts.answer(q, 1.0, 20_000)["windows"][0]
    assert window["threats"] == {"Britain": 1}
    assert window["found"] and window["counts"] == {}
    expected = Fraction(99, 100) * (1 - Fraction(2, 10) * Fraction(6, 10)) * Fraction(7, 10)
    assert abs(window["expected_ntr_lost"] - float(expected)) < 1e-12
    assert window["commands"] == [
        "tracker odds convoy --attacker Britain:submarine=1 --defender Germany:bomber=1 --ntr 1 "
        "--tech Britain:advanced_asw=1 --tech Germany:advanced_submarine=1"
    ]


def test_buy_weighs_no_naval_battle_against_enemy_submarines_alone_NC1_AS1() -> None:
    # A British submarine alone in the Central North Sea calls for ASW combat (AS1): the
    # referee refuses a naval battle there, so no figure of odds buy stands for one. The
    # destroyer and submarine in the Southern North Sea are a naval battle to weigh.
    units: list[Placed] = [
        ("Germany", "destroyer", HB, 0),
        ("Britain", "submarine", CNS, 0),
        ("Britain", "destroyer", "Southern North Sea", 0),
        ("Britain", "submarine", "Southern North Sea", 0),
    ]
    data = buy.answer(board_of(units, "purchase"), None, 20_000)
    zones = {c["zone"] for c in data["candidates"]}
    assert CNS not in zones
    assert "Southern North Sea" in zones


def test_a_damaged_battleship_of_the_force_fights_one_hit_from_sinking_F3_NC5() -> None:
    # Germany's damaged battleship and a destroyer against a British battleship: 43.54% (a
    # Monte Carlo of 20,000 battles through the referee agrees); counted whole it was 84.71%.
    units: list[Placed] = [
        ("Germany", "battleship", HB, 0),
        ("Germany", "destroyer", HB, 0),
        ("Britain", "battleship", CNS, 0),
    ]
    board = damaged(board_of(units), "DE-BB1")
    data = advise.answer(reach.attack_question(board, "Germany", CNS), 0.4, 20_000)
    assert data["force"]["counts"] == {"battleship": 1, "destroyer": 1}
    assert abs(data["force"]["chance"] - 2385752289 / 5479404529) < 1e-12
    assert data["force"]["damaged"] == ["DE-BB1"]
    assert data["battles"][0]["command"] == (
        "tracker odds naval --attacker 'Germany:battleship (damaged)=1,destroyer=1' --defender Britain:battleship=1 "
        "--tech Britain:advanced_asw=1 --tech Germany:advanced_submarine=1"
    )
    assert "damaged, counted one hit from sinking (F3, NC5): DE-BB1" in advise.render(data)


def test_buy_counts_a_damaged_enemy_battleship_one_hit_from_sinking_F3_NC5() -> None:
    # A German battleship and destroyer against a damaged British battleship: 97.82% (a Monte
    # Carlo of 20,000 battles through the referee agrees); counted whole it was 84.71%.
    units: list[Placed] = [
        ("Germany", "battleship", HB, 0),
        ("Germany", "destroyer", HB, 0),
        ("Britain", "battleship", CNS, 0),
    ]
    board = damaged(board_of(units, "purchase"), "GB-BB3")
    data = buy.answer(board, None, 20_000)
    wins = [c for c in data["candidates"] if c["zone"] == CNS and c["measure"] == "win"]
    assert wins and all(c["forces"]["before"] == {"battleship": 1, "destroyer": 1} for c in wins)
    assert all(abs(c["before"] - 67846921 / 69359551) < 1e-12 for c in wins)
    assert all("--defender 'Britain:battleship (damaged)=1'" in c["commands"]["before"][0] for c in wins)
