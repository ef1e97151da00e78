"""The words of event summaries (display only, `projections.summary`): a unit type as a player
reads it, "aircraft carrier", not the ruleset's key "aircraft_carrier", and a count of units in
the plural it needs (`plural`); a seed reveal cited under the rule it falls under, D5 (rolls
revealed for checking), not D3 (every die recorded).

What an event records is left as it was recorded: only the line shown changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tracker.cli.main import cli


def run(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == 0, result.output
    return result.output


def events(db: Path) -> list[dict[str, Any]]:
    return list(json.loads(run(db, "log", "--json")))


def last(db: Path, kind: str) -> dict[str, Any]:
    return [e for e in events(db) if e["kind"] == kind][-1]


def test_ad1_an_adjustment_names_an_added_unit_type_in_words(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    run(db, "new", "t", "--scenario", "north-sea-1914")
    run(db, "adjust", "--add", "Britain:aircraft_carrier:Central North Sea", "--reason", "a test")
    adjusted = last(db, "Adjusted")
    assert "(aircraft carrier, Britain) in Central North Sea" in adjusted["summary"]
    assert adjusted["data"]["added"][0]["type"] == "aircraft_carrier"  # the event keeps the key
    assert "aircraft_carrier" not in run(db, "log")


def test_pu2_placed_units_are_named_with_their_type_in_words_and_counted(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    run(db, "new", "t", "--scenario", "north-sea-1914")
    run(db, "adjust", "--resources", "Germany=40", "--reason", "a test: enough to buy with")
    run(db, "next", "--to", "purchase")
    run(db, "buy", "aircraft_carrier")
    run(db, "buy", "submarine", "3")
    run(db, "next", "--to", "placement")
    run(db, "place", "aircraft_carrier", "--at", "Heligoland Bight")
    run(db, "place", "submarine", "3", "--at", "Heligoland Bight")
    placed = [e for e in events(db) if e["kind"] == "UnitsPlaced"]
    carrier, subs = placed
    assert carrier["summary"].endswith(f"places {carrier['data']['units'][0]} (aircraft carrier) in Heligoland Bight")
    assert subs["summary"].endswith(f"places {', '.join(subs['data']['units'])} (3 submarines) in Heligoland Bight")
    assert carrier["data"]["unit_type"] == "aircraft_carrier"


def test_d5_a_seed_reveal_is_cited_under_d5(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    run(db, "new", "t", "--scenario", "north-sea-1914")
    run(db, "dice", "reveal")
    out = run(db, "log")
    assert "revealed" in out and "[D5]" in out and "[D3]" not in out
    seq = last(db, "SeedRevealed")["seq"]
    assert last(db, "SeedRevealed")["rule"] == "D5"
    explained = json.loads(run(db, "explain", str(seq), "--json"))
    assert [r["id"] for r in explained["rules"]] == ["D5"]
    assert "dice reveal" in explained["rules"][0]["statement"]  # the statement cited covers a reveal
