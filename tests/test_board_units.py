"""The board the referee reads: its units are the campaign's units as they stand now, however
often boards are made (units are made again only where their fields changed), and a zone's
units are those in it, in the board's order."""

from __future__ import annotations

import copy
from typing import Any

from domain import board as board_module
from domain.board import Unit, units_of
from tests.test_movement_and_turns import advance_to, new_campaign


def made_afresh(state: dict[str, dict[str, Any]]) -> dict[str, Unit]:
    return {uid: Unit(id=uid, **fields) for uid, fields in state.items()}


def test_f4_a_board_after_a_move_holds_the_moved_units_where_they_went() -> None:
    c = new_campaign()
    advance_to(c, "Germany", "combat_movement")
    before = c.board()
    c.move("Germany", ["DE-SS3"], ["Southern North Sea"])
    after = c.board()
    assert after.units == made_afresh(c.units)
    assert (after.units["DE-SS3"].at, after.units["DE-SS3"].moved) == ("Southern North Sea", 1)
    assert after.units["DE-SS4"] is before.units["DE-SS4"]
    # The board made before the move is what it was: a board never changes once made.
    assert (before.units["DE-SS3"].at, before.units["DE-SS3"].moved) == ("Heligoland Bight", 0)
    assert "DE-SS3" in {u.id for u in before.units_at("Heligoland Bight")}
    assert "DE-SS3" not in {u.id for u in after.units_at("Heligoland Bight")}
    assert "DE-SS3" in {u.id for u in after.units_at("Southern North Sea")}


def test_f3_units_changed_in_place_are_made_again_and_the_rest_kept() -> None:
    state: dict[str, dict[str, Any]] = {
        "GB-BB1": {"type": "battleship", "nation": "Britain", "at": "Scapa Flow", "damage": 0, "moved": 0},
        "GB-DD1": {"type": "destroyer", "nation": "Britain", "at": "Scapa Flow", "damage": 0, "moved": 0},
    }
    first = units_of(state)
    state["GB-BB1"]["damage"] += 1  # a hit, written in place as the campaign writes it
    second = units_of(state)
    assert second == made_afresh(state)
    assert second["GB-BB1"].damage == 1 and first["GB-BB1"].damage == 0
    assert second["GB-DD1"] is first["GB-DD1"]


def test_units_of_two_campaigns_with_the_same_ids_never_mix() -> None:
    here = {"DE-SS1": {"type": "submarine", "nation": "Germany", "at": "Heligoland Bight", "damage": 0, "moved": 0}}
    there = {"DE-SS1": {"type": "submarine", "nation": "Germany", "at": "Dover Strait", "damage": 0, "moved": 2}}
    for _ in range(2):
        assert units_of(here)["DE-SS1"].at == "Heligoland Bight"
        assert units_of(there)["DE-SS1"] == Unit("DE-SS1", "submarine", "Germany", "Dover Strait", 0, 2)


def test_units_of_holds_no_more_than_its_bound(monkeypatch: Any) -> None:
    monkeypatch.setattr(board_module, "_MADE_MOST", 3)
    monkeypatch.setattr(board_module, "_MADE", {})
    for n in range(10):
        state = {f"DE-SS{n}": {"type": "submarine", "nation": "Germany", "at": "Baltic", "damage": 0, "moved": 0}}
        assert units_of(state) == made_afresh(state)
    assert len(board_module._MADE) <= 4


def test_units_at_lists_a_zones_units_in_the_boards_order() -> None:
    c = new_campaign()
    b = c.board()
    zones = {u.at for u in b.units.values()}
    for zone in zones:
        assert b.units_at(zone) == [u for u in b.units.values() if u.at == zone]
    assert b.units_at("no such zone") == []
    # A caller may change the list it is given without changing the board.
    zone = next(iter(zones))
    b.units_at(zone).clear()
    assert b.units_at(zone)


def test_nc5_a_unit_sunk_leaves_the_board_made_after() -> None:
    c = new_campaign()
    state = copy.deepcopy(c.units)
    uid = next(iter(state))
    assert uid in c.board().units
    del c.units[uid]  # as a sinking removes it
    try:
        assert uid not in c.board().units
        assert c.board().units == made_afresh(c.units)
    finally:
        c.units[uid] = state[uid]
    assert c.board().units[uid] == made_afresh(state)[uid]
