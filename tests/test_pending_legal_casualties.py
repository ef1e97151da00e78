"""What `pending` says a nation places its hits among (HA4-HA7, NC6): only the units the
referee accepts them on, in the words of its refusals, per firing class where classes differ
(HA5, HA6).

The CLI tests play north-sea-1914 with manual dice: Austria-Hungary's AH-SS1 and AH-SS2 and a
bomber it is given by an adjustment (AD1: the scenario has none) attack British ships. The
class-order test drives the aggregate on the same battle under HA7 as first written.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.rules.economy import Adjustment
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance, cli_on
from tracker.cli.main import cli
from tracker.service.describe import install_describer

SNS, NNS = "Southern North Sea", "Northern North Sea"
OWNER_ORDER = "(HA7, the owner's order"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "c.db")


def to_austria_hungary_combat_movement(db: str, *adjust: str) -> None:
    """north-sea-1914 with AH-BM1 in Northern Germany (and `adjust`), on to Austria-Hungary's
    combat movement, every convoy attack passed."""
    run = cli_on(db)
    run("new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    run("adjust", "--add", "Austria-Hungary:bomber:Northern Germany", *adjust, "--reason", "a bomber to test with")
    for _ in range(100):  # bounded: a line worded otherwise fails here, not hangs
        result = CliRunner().invoke(cli, ["--db", db, "next"])
        if result.exit_code:  # CV1: an enemy may attack the convoys; it passes
            run("convoy", "pass", "--by", result.output.split("tracker convoy pass --by ")[1].split()[0])
        elif "round 1, Austria-Hungary: combat movement" in result.output:
            return
    pytest.fail("never reached Austria-Hungary's combat movement phase")


def casualties_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if "to choose casualties" in line]
    return line


def escorts_hit_submarines_and_a_bomber(db: str) -> str:
    """AH-SS1, AH-SS2 and AH-BM1 attack GB-CA2 and three destroyers in the Southern North Sea;
    only GB-CA2 hits: one hit from cruisers and destroyers. The output of the roll."""
    to_austria_hungary_combat_movement(db)
    run = cli_on(db)
    run("move", "AH-SS1,AH-SS2", "--path", f"Heligoland Bight,{SNS}")
    run("move", "AH-BM1", "--path", f"Heligoland Bight,{SNS}")
    run("next")
    run("battle", "start", "--zone", SNS)
    run("battle", "targets", "1")
    run("battle", "screen", "1")
    # AH-BM1, AH-SS1, AH-SS2 miss; GB-CA2 hits; GB-DD3, GB-DD4, GB-DD5 miss.
    return run("battle", "fire", "1", "--dice", "9,9,9,1,9,9,9")


def test_ha6_nc6_pending_lists_only_the_units_an_escort_hit_may_fall_on(db: str) -> None:
    out = escorts_hit_submarines_and_a_bomber(db)
    expected = "Austria-Hungary places 1 hit among AH-SS1, AH-SS2 (default: AH-SS1) " + OWNER_ORDER
    assert expected in casualties_line(out)
    assert "AH-BM1" not in casualties_line(out)
    (item,) = json.loads(cli_on(db)("pending", "--json"))
    assert expected in item["text"] and "AH-BM1" not in item["text"]
    # The referee agrees: the bomber is refused, a submarine the line lists is taken.
    refused = CliRunner().invoke(
        cli, ["--db", db, "battle", "casualties", "1", "--nation", "austria-hungary", "--units", "AH-BM1"]
    )
    assert refused.exit_code == 1 and "legal: 1 hit among AH-SS1/AH-SS2" in refused.output
    cli_on(db)("battle", "casualties", "1", "--units", "AH-SS2")


def test_ha5_ha6_pending_says_the_hits_per_firing_class_as_the_refusal_does(db: str) -> None:
    """GB-BB1 (a capital hit: never on a submarine, NC6) and GB-DD6 (an escort hit: on a
    submarine first, HA6) hit AH-SS2 and AH-BM1 in the Northern North Sea."""
    to_austria_hungary_combat_movement(db, "--add", f"Britain:destroyer:{NNS}")
    run = cli_on(db)
    run("move", "AH-SS1,AH-SS2", "--to", NNS)
    run("move", "AH-BM1", "--path", f"Heligoland Bight,Skagerrak,{NNS}")
    run("next")
    run("battle", "start", "--zone", NNS)
    run("battle", "targets", "1")
    run("battle", "screen", "1")
    run("battle", "fire", "1", "--dice", "9")  # NC2: AH-SS1's opening shot misses
    run("battle", "targets", "1")
    run("battle", "screen", "1")
    # AH-BM1, AH-SS2 miss; GB-BB1 hits, GB-BB2 and GB-CV1 miss, GB-DD6 hits, GB-FT1 misses.
    line = casualties_line(run("battle", "fire", "1", "--dice", "9,9,1,9,9,1,9"))
    legal = "legal: AH-BM1, 1 hit among AH-SS1/AH-SS2"
    assert (
        "Austria-Hungary places 1 hit from battleships and carriers and 1 from cruisers and destroyers, "
        f"{legal} (default: AH-BM1, AH-SS1) {OWNER_ORDER}"
    ) in line
    refused = CliRunner().invoke(cli, ["--db", db, "battle", "casualties", "1", "--units", "AH-SS1,AH-SS2"])
    assert refused.exit_code == 1 and f"({legal}; default: AH-BM1,AH-SS1)" in refused.output


def test_ha7_class_order_pending_lists_the_tier_each_class_hits() -> None:
    """HA7 as first written (a campaign recorded before the amendment): the same hit, on the
    first tier of the escorts' order still afloat."""
    install_describer()
    _, data = load_ruleset("twtea-3e")
    data = {**data, "hit_allocation": {**data["hit_allocation"], "placement": "class-order"}}
    scenario, _ = read_scenario("north-sea-1914")
    c = Campaign.create(uuid.uuid4(), "t", scenario, data, "manual", commitment(new_seed()))
    c.adjust(Adjustment(add=(("Austria-Hungary", "bomber", "Northern Germany", 1),)), "a bomber to test with")
    while not (c.nation == "Austria-Hungary" and c.phase == "combat_movement"):
        advance(c)
    c.move("Austria-Hungary", ["AH-SS1", "AH-SS2"], ["Heligoland Bight", SNS])
    c.move("Austria-Hungary", ["AH-BM1"], ["Heligoland Bight", SNS])
    advance(c)
    b = c.naval_start("Austria-Hungary", SNS)
    c.choose_targets(b, "Austria-Hungary", None)
    c.choose_screens(b, "Britain", None)
    c.fire(b, ManualDice([9, 9, 9, 1, 9, 9, 9]))
    (item,) = c.pending()
    assert "Austria-Hungary places 1 hit from escort ships among AH-SS1/AH-SS2 (default: AH-SS1)" in item["text"]
    assert "AH-BM1" not in item["text"]
