"""Phases and unit types in words wherever a player reads them, what earlier rounds left:

- `state`'s heading, `next`'s line (the log's summary of a phase opened), `undo` and `redo`'s
  "Now:", `explain`'s heading and its turn position, `replay`'s frames, the shell's prompt and
  the refusals of a turn position (T2-T4) named phases by their IDs ("combat_movement").
- Refusals of a unit (F4, SM1, and the searches of CV3, SM2, AS2, tested with those rules)
  named its type by its ID in the ruleset ("GB-CV1 (aircraft_carrier)"), as did the unit types
  offered with their help in completion, `odds buy`'s table and the rules' values (CV3, AS2, F3).

Commands and JSON keep the IDs (`tracker next --to combat_movement`, `"phase": "combat_movement"`);
the dice purposes the referee records in events keep the words they were recorded with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from domain.rules.catalog import statement
from domain.ruleset import load_ruleset
from tests.support import perform_until
from tracker.analysis.buy import notes, table_rows
from tracker.cli.completion import unit_items
from tracker.cli.main import cli
from tracker.cli.shell_prompt import fit_prompt
from tracker.service.application import Tracker

NNS, CNS = "Northern North Sea", "Central North Sea"


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def at_combat_movement(tmp_path: Path) -> str:
    db = str(tmp_path / "c.db")
    run("--db", db, "new", "w", "--scenario", "north-sea-1914", "--dice", "manual")
    run("--db", db, "next", "--to", "purchase")
    assert run("--db", db, "next") == "round 1, Germany: combat movement   [T2]\n"
    return db


def test_t2_state_next_log_and_json_name_the_phase(tmp_path: Path) -> None:
    db = at_combat_movement(tmp_path)
    state = run("--db", db, "state")
    assert state.startswith("w · Round 1 · turn 1 · Germany · combat movement  (after event ")
    assert "Germany · end of purchase  (after event" in run("--db", db, "state", "--turn", "1", "--phase", "purchase")
    assert "Germany · combat movement in progress" in run(
        "--db", db, "state", "--turn", "1", "--phase", "combat_movement"
    )
    assert "round 1, Germany: combat movement" in run("--db", db, "log")
    # JSON and commands keep the ID.
    assert json.loads(run("--db", db, "state", "--json"))["phase"] == "combat_movement"
    (opened,) = [r for r in json.loads(run("--db", db, "log", "--json")) if r["summary"].endswith("combat movement")]
    assert opened["phase"] == "combat_movement"
    # A turn not played yet: where the campaign is, in words.
    said = run("--db", db, "state", "--turn", "3", code=2)
    assert said.startswith("Error: turn 3 has not been played in this campaign (the last is event ")
    assert said.endswith(", in turn 1, combat movement)\n")


def test_t2_undo_redo_explain_and_replay_name_the_phase(tmp_path: Path) -> None:
    db = at_combat_movement(tmp_path)
    assert run("--db", db, "undo").endswith("Now: round 1 · Germany · purchase\n")
    assert run("--db", db, "redo").endswith("Now: round 1 · Germany · combat movement\n")
    # The phase opened again by the redo (RK4).
    opened = [r for r in json.loads(run("--db", db, "log", "--json")) if r["summary"].endswith("combat movement")][-1]
    out = run("--db", db, "explain", str(opened["seq"]))
    assert f"Event {opened['seq']}: PhaseAdvanced (turn 1, combat movement, " in out
    assert "Changed: turn position: Germany purchase -> Germany combat movement" in out
    frame = run("--db", db, "replay", "--to", str(opened["seq"]))
    assert "· turn 1 · Germany · combat movement · PhaseAdvanced [T2]" in frame


def test_t3_t4_refusals_name_the_phases(tmp_path: Path) -> None:
    db = at_combat_movement(tmp_path)
    said = run("--db", db, "buy", "submarine", code=1)
    assert said == "Error: T3: buying units is legal in purchase; it is Germany's combat movement phase\n"
    said = run("--db", db, "convoy", "pass", "--by", "Britain", code=1)
    assert said == (
        "Error: CV1: convoy attacks (and passes) belong to a collect resources phase; it is Germany's combat movement\n"
    )
    said = run("--db", db, "next", "--to", "combat movement", code=2)
    assert said.startswith("Error: already there: it is Germany's combat movement phase (round 1)")
    with Tracker(db) as t:
        perform_until(t, t.campaign_id(None), "Germany", "collect_resources")
    said = run("--db", db, "next", code=1)
    assert said.startswith("Error: T4: collect resources cannot end yet: Britain may declare a convoy attack")


def test_f4_sm1_a_carriers_move_refused_names_it_in_words(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run("--db", db, "new", "w", "--scenario", "north-sea-1914", "--dice", "manual")
    with Tracker(db) as t:
        perform_until(t, t.campaign_id(None), "Britain", "combat_movement")
    said = run("--db", db, "move", "gb-cv1", "--path", f"{CNS}, Heligoland Bight, Skagerrak", code=1)
    assert said == "Error: F4: GB-CV1 (aircraft carrier) has 2 of 2 movement left this turn; the path is 3 steps\n"
    # The Skagerrak holds Austria-Hungary's ships: a carrier stops there (SM1).
    said = run("--db", db, "move", "gb-cv1", "--path", "Skagerrak, Heligoland Bight", code=1)
    assert said.startswith("Error: SM1: GB-CV1 (aircraft carrier) must stop in Skagerrak, a hostile zone")


def test_the_shell_prompt_names_the_phase(tmp_path: Path) -> None:
    db = at_combat_movement(tmp_path)
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert fit_prompt("w", c, None) == "w · round 1 · Germany · combat movement> "
        assert fit_prompt("w", c, 40) == "DE · combat movement> "
        # Completion's help names a unit's type in words; the value typed is the unit's ID.
        assert unit_items(c, ["GB-CV1", "GB-TP1"]) == [
            ("GB-CV1", f"aircraft carrier in {NNS}"),
            ("GB-TP1", "transport plane in Scotland"),
        ]


def test_odds_buy_and_the_rules_name_unit_types_in_words() -> None:
    rs, _ = load_ruleset("twtea-3e")
    assert "transport plane 3" in statement("AS2", rs) and "transport_plane" not in statement("AS2", rs)
    assert "aircraft carrier (2 hits)" in statement("F3", rs)
    data: Any = {  # the keys `table_rows` and `notes` read
        "ranking": [{"type": "aircraft_carrier", "cost": 16, "value": 0.0, "gain": 0.0, "best": None}],
        "not_weighed": {"transport_plane": "costs 8, over the budget of 6 (PU1)"},
        "too_large": {},
        "candidates": [],
        "positions": 0,
    }
    assert table_rows(data)[0][0] == "aircraft carrier"
    assert "Not weighed: transport plane costs 8, over the budget of 6 (PU1)" in notes(data)
