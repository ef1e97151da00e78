"""Display wording: counts with their noun in the right number, technologies and unit types in
words, and a battle command given for a battle of another kind that names the commands that
answer it. What events store (a roll's purpose, the technology's ID) stays as recorded."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from domain.rules.record import Lock, UndoPlan, locked_message
from domain.rules.tech import technology_name
from projections.summary import summary_of_kind
from tracker.cli.main import cli
from tracker.reports.text import battle_declaration, tech_name, undo_text


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "w.db")


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def refused(db: str, code: int, *args: str) -> str:
    """The command fails with `code`, says one line and records nothing."""
    before = run(db, "log", "--json")
    out = run(db, *args, code=code)
    assert run(db, "log", "--json") == before
    assert out.count("\n") == 1, out
    return out


def test_pu1_a_purchase_refused_counts_the_units_in_words(db: str) -> None:
    run(db, "new", "g", "--scenario", "great-war-1914")
    run(db, "next", "--to", "purchase")
    balance = json.loads(run(db, "state", "--json"))["balances"]["Germany"]
    many = balance // 6 + 1  # submarines cost 6 in twtea-3e
    assert refused(db, 1, "buy", "submarine", str(many)) == (
        f"Error: PU1: {many} submarines cost {6 * many} (6 each) and Germany has {balance} resources\n"
    )
    # Spend down to less than a carrier's 16, then one carrier is refused.
    bought = -(-(balance - 15) // 6)
    if bought > 0:
        run(db, "buy", "submarine", str(bought))
    left = balance - 6 * max(bought, 0)
    assert refused(db, 1, "buy", "aircraft_carrier", "1") == (
        f"Error: PU1: 1 aircraft carrier costs 16 (16 each) and Germany has {left} resources\n"
    )


def test_te1_te2_research_refusals_and_summaries_name_the_technology(db: str) -> None:
    run(db, "new", "g", "--scenario", "great-war-1914", "--dice", "manual")
    out = run(db, "research", "advanced_asw", "--dice", "3")
    assert "Germany pays 10 for a research roll on Advanced ASW   [TE1]" in out, out
    # The roll's purpose is stored in the event as the referee wrote it: it keeps the ID.
    assert "Germany research roll for Advanced ASW" in out, out
    assert refused(db, 1, "research", "advanced_asw", "--dice", "9") == (
        "Error: TE1: Germany has already made 1 research roll for Advanced ASW this turn\n"
    )


def test_te2_an_advance_and_an_adjusted_level_read_as_words() -> None:
    advanced = SimpleNamespace(nation="Germany", technology="advanced_submarine", level=2, acquired=False)
    assert summary_of_kind("TechnologyAdvanced")(advanced) == "Germany advances Advanced Submarine to level 2"
    adjusted = SimpleNamespace(
        added=[],
        removed=[],
        resources={},
        ntr=[],
        owners={},
        tech=[{"nation": "Britain", "technology": "advanced_asw", "level": 1}],
        enter=(),
        reason="house rule",
    )
    assert (
        summary_of_kind("Adjusted")(adjusted) == "ADJUSTMENT: Britain Advanced ASW set to level 1 (reason: house rule)"
    )


def test_te4_a_modified_roll_names_the_technology_in_the_log() -> None:
    rolled: dict[str, Any] = {
        "roll": 3,
        "purpose": "GB-DD1 asw search",
        "faces": 10,
        "values": [2],
        "target": 3,
        "success_when": "at_most",
        "base_target": 2,
        "modifiers": [{"rule": "TE4", "technology": "advanced_asw", "set": None, "add": 1}],
        "outcome": "success",
        "source": "auto",
        "reference": None,
    }
    line = summary_of_kind("DiceRolled")(SimpleNamespace(**rolled))
    assert line == "roll 3: GB-DD1 asw search: D10 x1 = 2 vs <=3 (base 2; TE4 Advanced ASW +1): success"


def test_a_technology_of_a_users_ruleset_reads_as_words() -> None:
    assert technology_name("improved_asw_depth_charges") == "Improved ASW Depth Charges"
    assert tech_name("improved_asw_depth_charges") == "Improved ASW Depth Charges"


@pytest.mark.parametrize(
    ("subs", "words"), [(["DE-SS1"], "1 submarine: DE-SS1"), (["DE-SS1", "DE-SS2"], "2 submarines:")]
)
def test_cv1_a_convoy_declaration_counts_its_submarines_in_words(subs: list[str], words: str) -> None:
    b = {"kind": "convoy", "attacker": "Germany", "defender": "Britain", "ntr": 2, "submarines": subs}
    assert f"Germany attacks Britain's 2 NTR with {words}" in battle_declaration(b)


def test_rk3_an_override_undo_names_one_roll_taken_back_as_one() -> None:
    undo = {"seq": 4, "undone_from": 2, "undone_to": 3, "agreed_by": []}
    assert undo_text({**undo, "rolls": [2]}) == "event 4 undid events 2-3, taking back dice roll 2"
    assert undo_text({**undo, "rolls": [2, 4]}) == "event 4 undid events 2-3, taking back dice rolls 2, 4"
    # A long override undo takes back thousands of rolls: as runs, not one by one.
    assert undo_text({**undo, "rolls": [2, 3, 4, 9]}) == "event 4 undid events 2-3, taking back dice rolls 2-4, 9"


def test_rk3_more_locked_actions_are_counted_in_words() -> None:
    lock = Lock(5, "Germany", "event 5 is locked (RK3)")
    assert "(and 1 more locked action);" in locked_message(UndoPlan(5, 9, (), (lock, lock), ()))
    assert "(and 2 more locked actions);" in locked_message(UndoPlan(5, 9, (), (lock, lock, lock), ()))


def test_a_command_for_a_battle_of_another_kind_names_its_kind_and_commands(db: str) -> None:
    run(db, "new", "t", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-BB1", "DE-BB2", "DE-CA1", "--path", "Central North Sea")
    run(db, "next")
    run(db, "battle", "start", "--zone", "Central North Sea")
    naval = "(active: 1 (naval)); battle 1 is a naval battle: tracker battle ...\n"
    assert refused(db, 2, "convoy", "auto", "1") == f"Error: no convoy battle 1 in progress {naval}"
    assert refused(db, 2, "asw", "search", "1") == f"Error: no ASW combat 1 in progress {naval}"
    assert refused(db, 2, "intercept", "search", "1") == f"Error: no interception 1 in progress {naval}"
    # A battle that is not there is named with every active one, as before.
    assert refused(db, 2, "convoy", "auto", "7") == "Error: no convoy battle 7 in progress (active: 1 (naval))\n"


def test_nc1_a_retreat_too_far_counts_the_sea_zones_in_words(db: str) -> None:
    run(db, "new", "t", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-BB1", "DE-BB2", "DE-CA1", "--path", "Central North Sea")
    run(db, "next")
    run(db, "battle", "start", "--zone", "Central North Sea")
    run(db, "battle", "targets", "1")
    run(db, "battle", "screen", "1")
    run(db, "battle", "fire", "1", "--dice", ",".join(["10"] * 8))
    out = refused(db, 1, "battle", "decide", "1", "--retreat-to", "Irish Sea")
    assert ": not within 1 sea zone over waters without enemy warships (" in out, out
