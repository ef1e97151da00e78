"""An air unit lost in battle is shot down, not "sunk" (F3, NC5: ships are sunk or damaged):
in `explain`'s changes, a report's casualties and a battle's result, as the log's summaries say
it; a report's JSON casualty says `result: "shot down"`."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from domain.ruleset import load_ruleset
from tracker.reports.text import battle_result
from tracker.reports.turn_entry import _casualty
from tracker.service.history import board_changes

RULESET = load_ruleset("twtea-3e")[0]
AIR = {name for name, u in RULESET.units.items() if u.is_air}


def unit(uid: str, unit_type: str, at: str = "Dogger Bank") -> dict[str, Any]:
    return {"id": uid, "type": unit_type, "nation": "Britain", "at": at, "damage": 0}


def board(*units: dict[str, Any]) -> dict[str, Any]:
    return {
        "units": list(units),
        "ntr": {},
        "balances": {},
        "ntr_lost": {},
        "tech": {},
        "turn": 1,
        "phase": "naval_combat",
    }


def test_explain_says_an_aircraft_was_shot_down_and_a_ship_sunk() -> None:
    before = board(unit("GB-FT1", "fighter"), unit("GB-DD1", "destroyer"))
    assert board_changes(before, board(), "UnitHit", AIR) == [
        "GB-DD1 sunk from Dogger Bank",
        "GB-FT1 shot down from Dogger Bank",
    ]
    # An aircraft lost for want of a landing place is lost so, as before.
    assert board_changes(before, board(), "AircraftLost", AIR)[1] == "GB-FT1 lost (no place to land) from Dogger Bank"


def test_a_reports_casualty_of_an_aircraft_is_shot_down() -> None:
    types = {"GB-FT1": ("fighter", "Britain"), "GB-DD1": ("destroyer", "Britain")}
    ctx = SimpleNamespace(unit=lambda uid: types[uid], ruleset=RULESET)
    row = {"seq": 9, "rule": "NC3", "undone_by": None}
    downed = _casualty(ctx, {**row, "data": {"unit": "GB-FT1", "sunk": True, "battle": 1}})  # type: ignore[arg-type]
    sunk = _casualty(ctx, {**row, "data": {"unit": "GB-DD1", "sunk": True, "battle": 1}})  # type: ignore[arg-type]
    assert (downed["result"], sunk["result"]) == ("shot down", "sunk")
    battle = {"kind": "convoy", "ended": True, "survivors": [], "casualties": [downed, sunk], "ntr_destroyed": 0}
    assert battle_result(battle).startswith("sunk: GB-DD1; shot down: GB-FT1")
