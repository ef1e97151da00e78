"""Boards for the hit allocation and target tests (HA1-HA7): the north-sea-1914 scenario with
exactly the units a test names, all in one zone ("Central North Sea"), with made-up IDs where
the scenario has no such unit (DE-BB1: a German battleship)."""

from __future__ import annotations

import uuid

from domain.board import Board, Unit
from domain.campaign import Campaign
from domain.dice import commitment, new_seed
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario

CNS = "Central North Sea"
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
NATION = {"DE": "Germany", "GB": "Britain"}
TYPE = {
    "SS": "submarine",
    "DD": "destroyer",
    "CA": "cruiser",
    "BB": "battleship",
    "CV": "aircraft_carrier",
    "TR": "transport",
    "FT": "fighter",
    "BM": "bomber",
}


def board(*ids: str, damaged: tuple[str, ...] = ()) -> Board:
    """A board holding exactly these units in the Central North Sea (DE-BB1: German battleship)."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    c.units = {
        uid: {
            "type": TYPE[uid[3:5]],
            "nation": NATION[uid[:2]],
            "at": CNS,
            "damage": 1 if uid in damaged else 0,
            "moved": 0,
        }
        for uid in ids
    }
    return c.board()


def units(b: Board, *ids: str) -> list[Unit]:
    return [b.units[u] for u in ids]


def ids(found: list[Unit]) -> list[str]:
    return [u.id for u in found]
