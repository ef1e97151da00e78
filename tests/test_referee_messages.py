"""What the referee says, not what it rules: the casualties prompt under the campaign's reading
of HA7, the refusal of dice left over (D3, CV4), `explain` of an adjustment bringing an entry
into the war forward (AD1, F8) and a convoy search nobody may make (CV3).

The CLI tests play north-sea-1914 or great-war-1914 on SQLite with manual dice; the CV3 test
drives the aggregate with one setup the scenario does not offer, which says so.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import DiceError
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance, cli_on
from tracker.cli.main import cli
from tracker.service.describe import EnglishDescriber, command, install_describer

SNS, IRISH = "Southern North Sea", "Irish Sea"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "c.db")


def at_fire(db: str) -> None:
    """north-sea-1914, round 1: DE-CA1 and DE-DD1 attack Britain's cruiser and three destroyers
    in the Southern North Sea; battle 1 waits for its six dice (NC3)."""
    cli_on(db)("new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    cli_on(db)("next")
    cli_on(db)("next")
    cli_on(db)("move", "DE-CA1,DE-DD1", "--to", SNS)
    cli_on(db)("next")
    cli_on(db)("battle", "start", "--zone", SNS)


def test_ha7_the_casualties_prompt_cites_the_owners_order_where_the_ruleset_plays_it(db: str) -> None:
    at_fire(db)
    out = cli_on(db)("battle", "fire", "1", "--dice", "1,1,1,1,9,9")
    (line,) = [line for line in out.splitlines() if line.startswith("Waiting:")]
    assert "Britain places 2 hits among GB-CA2, GB-DD3, GB-DD4, GB-DD5 (default: GB-DD3, GB-DD4) (HA7, " in line
    assert "hits placed one at a time in any order you like" in line and "over every order) [HA7]" in line
    assert "HA4-HA6 order" not in line


def test_ha7_the_casualties_prompt_under_class_order_keeps_the_order_of_the_firing_classes() -> None:
    facts = {
        "battle": 1,
        "kind": "naval",
        "zone": SNS,
        "step": "casualties",
        "waiting": ["Britain"],
        "rule": "HA7",
        "placement": "class-order",
        "casualties": {"Britain": {"hits": 1, "units": ["GB-DD3"], "default": ["GB-DD3"]}},
    }
    assert (
        EnglishDescriber()
        .waiting(facts)
        .endswith("(default: GB-DD3) (HA4-HA6 order; the default is the cheapest legal choice) [HA7]")
    )


def test_d3_dice_left_over_are_refused_naming_what_each_die_was_taken_for(db: str) -> None:
    at_fire(db)
    before = json.loads(cli_on(db)("log", "--json"))
    result = CliRunner().invoke(cli, ["--db", db, "battle", "fire", "1", "--dice", "1,2,3,9,9,8,4"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: D3: 7 dice entered but the action rolled 6 dice, taken in the order `tracker pending` lists: "
        "1 for DE-CA1 (cruiser) fires at Britain's units; 2 for DE-DD1 (destroyer) fires at Britain's units; "
        "3 for GB-CA2 (cruiser) fires at Germany's units; 9 for GB-DD3 (destroyer) fires at Germany's units; "
        "9 for GB-DD4 (destroyer) fires at Germany's units; 8 for GB-DD5 (destroyer) fires at Germany's units; "
        "left over: 4; give --dice exactly 6 values\n"
    )
    assert json.loads(cli_on(db)("log", "--json")) == before


def test_d3_a_roll_a_step_gave_back_is_not_named_among_the_dice_taken() -> None:
    dice = ManualDice([3, 7, 9, 2])
    dice.roll(1, 1, 10, "first")
    dice.roll(2, 2, 10, "given back")
    dice.used = 1  # as `battle auto` puts back a step its dice could not finish
    dice.roll(2, 1, 10, "second")
    with pytest.raises(DiceError) as info:
        dice.check_all_used()
    assert str(info.value) == (
        "D3: 4 dice entered but the action rolled 2 dice, taken in the order `tracker pending` lists: "
        "3 for first; 7 for second; left over: 9, 2; give --dice exactly 2 values"
    )


def test_ad1_f8_explain_of_an_adjustment_bringing_an_entry_forward_cites_f8(db: str) -> None:
    cli_on(db)("new", "gw", "--scenario", "great-war-1914", "--dice", "manual")
    cli_on(db)("adjust", "--enter", "Italy", "--reason", "Italy joins early")
    cli_on(db)("adjust", "--resources", "Germany=1", "--reason", "a windfall")
    entered, other = (r["seq"] for r in json.loads(cli_on(db)("log", "--json", "--kind", "Adjusted")))
    rules = [r["id"] for r in json.loads(cli_on(db)("explain", str(entered), "--json"))["rules"]]
    assert rules == ["AD1", "F8"]
    assert [r["id"] for r in json.loads(cli_on(db)("explain", str(other), "--json"))["rules"]] == ["AD1"]
    assert "Rule F8: Before its entry round a nation is neutral" in cli_on(db)("explain", str(entered))


def test_cv3_a_search_nobody_may_make_offers_no_default_of_all() -> None:
    install_describer()
    _, ruleset = load_ruleset("twtea-3e")
    scenario, _ = read_scenario("north-sea-1914")
    c = Campaign.create(uuid.uuid4(), "t", scenario, ruleset, "manual", commitment(new_seed()))
    while not (c.nation == "Britain" and c.phase == "collect_resources"):
        advance(c)
    for uid in ("DE-SS3", "DE-SS4", "AH-SS1", "AH-SS2"):
        c.units[uid]["at"] = IRISH  # direct setup: two attackers on the Irish Sea convoy
    for uid in ("GB-FT1", "FR-BM1"):
        del c.units[uid]  # direct setup: GB-BM1 alone may search there
    first = c.declare_convoy_attack("Germany", IRISH, None)
    second = c.declare_convoy_attack("Austria-Hungary", IRISH, None)
    c.convoy_merchant_defence(first, ManualDice([1, 1]))
    c.convoy_merchant_defence(second, ManualDice([1, 1]))
    # F7: the bomber searches in the first battle; none is left for the second.
    c.convoy_search(first, ["GB-BM1"], ManualDice([10]))
    (item,) = [i for i in c.pending() if i["battle"] == second]
    assert item["eligible"] == []
    assert item["text"] == (
        f"battle {second} (convoy, Irish Sea): waiting for Britain to choose which ships and aircraft search "
        f"(eligible: none, so nobody searches: `tracker convoy search {second}` goes on to the convoy table) [CV3]"
    )
    assert command(item) == f"tracker convoy search {second}"
    assert c.convoy_search(second, None, ManualDice([])) == []
    assert [i["step"] for i in c.pending() if i["battle"] == second] == ["convoy_table"]
