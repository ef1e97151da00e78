"""The referee under the rules as amended by issue 23: HA7 (the hits of battleships, carriers
and escorts placed one at a time in the order the owner likes, a hit with no legal target left
lost; the default the cheapest over every order), `tracker battle casualties` with a lost hit,
AS1/F7 (aircraft aboard a carrier fight in its zone) and NC6 (a submarine hits a submarine
once the other side has no other naval unit left).

The Campaign tests use manual dice in Germany's naval_combat phase of round 1 of
north-sea-1914; the units each test needs are placed there by direct setup, which says so.
"""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing
from tracker.cli.main import cli

CNS, HB, IRISH = "Central North Sea", "Heligoland Bight", "Irish Sea"
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
TYPES = {"SS": "submarine", "DD": "destroyer", "CA": "cruiser", "BB": "battleship", "CV": "aircraft_carrier"}
TYPES |= {"FT": "fighter", "BM": "bomber"}


def campaign(*here: str, ruleset: dict[str, Any] = RULESET) -> Campaign:
    """Germany's naval_combat phase with exactly the units `here` in the Central North Sea (direct
    setup: the scenario's units there leave for other zones, the others are placed or made)."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, ruleset, "manual", commitment(new_seed()))
    while c.phase != "naval_combat":
        advance_passing(c)
    for uid, unit in c.units.items():
        if unit["at"] == CNS and uid not in here:
            unit["at"] = HB if unit["nation"] == "Germany" else IRISH
    for uid in here:
        nation = "Germany" if uid.startswith("DE") else "Britain"
        c.units.setdefault(uid, {"type": TYPES[uid[3:5]], "nation": nation, "damage": 0, "moved": 0})["at"] = CNS
    return c


def events(c: Campaign, kind: str, since: int = 0) -> list[Any]:
    return [e for e in c.pending_events if e.originator_version > since and type(e).__name__ == kind]


def step(c: Campaign, battle: int) -> tuple[str, list[str], str]:
    b = c.battles[str(battle)]
    return b["step"], b["waiting"], b["rule"]


def refused(c: Campaign, action: Any, rule: str) -> RuleViolation:
    before = (c.version, copy.deepcopy(c.units), copy.deepcopy(c.battles))
    with pytest.raises(RuleViolation) as info:
        action()
    assert info.value.rule == rule, str(info.value)
    assert (c.version, c.units, c.battles) == before
    return info.value


def at_casualties() -> tuple[Campaign, int]:
    """RULES.md HA7's example: DE-BB1 and DE-DD1 each hit Britain's GB-CA1 and GB-SS1."""
    c = campaign("DE-BB1", "DE-DD1", "GB-CA1", "GB-SS1")
    b = c.naval_start("Germany", CNS)
    # NC2: DE-DD1 cancels GB-SS1's opening fire; GB-SS1 fires in the main volley.
    c.choose_targets(b, "Britain", {"GB-SS1": "DE-DD1"})
    assert step(c, b) == ("fire", ["Germany", "Britain"], "NC3")
    c.fire(b, ManualDice([1, 1, 9, 9]))  # DE-BB1 and DE-DD1 hit; GB-CA1 and GB-SS1 miss
    scored = [(e.firing_class, e.hits) for e in events(c, "NavalHitsScored")]
    assert scored == [("capital", 1), ("escort", 1)]
    return c, b


# ----- HA7: the order of placing the hits is the owner's -----


def test_ha7_the_default_places_the_destroyers_hit_first_and_loses_only_the_cruiser_NC6() -> None:
    c, b = at_casualties()
    # Both ships, or the cruiser alone: the choice is Britain's (HA7), and it is asked.
    assert step(c, b) == ("casualties", ["Britain"], "HA7")
    before = c.version
    assert c.choose_casualties(b, "Britain", None) == ["GB-CA1"]
    (chosen,) = events(c, "CasualtiesChosen", before)
    assert (chosen.units, chosen.default, chosen.rule) == (["GB-CA1"], True, "HA7")
    # The battleship's hit, placed after the destroyer's, finds nothing it may hit (NC6).
    (lost,) = events(c, "HitsLost", before)
    assert (lost.nation, lost.hits, lost.rule) == ("Britain", 1, "NC6")
    assert "GB-CA1" not in c.units and c.units["GB-SS1"]["damage"] == 0


def test_ha7_the_owner_may_still_lose_both_ships_and_nothing_else() -> None:
    c, b = at_casualties()
    before = c.version
    assert c.choose_casualties(b, "Britain", ["GB-SS1", "GB-CA1"]) == ["GB-SS1", "GB-CA1"]
    assert not events(c, "HitsLost", before)
    assert "GB-CA1" not in c.units and "GB-SS1" not in c.units


@pytest.mark.parametrize("wrong", [["GB-SS1"], [], ["GB-CA1", "GB-CA1"], ["DE-DD1"]])
def test_ha7_a_choice_no_order_leads_to_is_refused_with_the_input_and_nothing_recorded(wrong: list[str]) -> None:
    c, b = at_casualties()
    err = refused(c, lambda: c.choose_casualties(b, "Britain", wrong), "HA7")
    assert f"input: {','.join(wrong) or 'none'}" in err.reason


# ----- `tracker battle casualties`: a lost hit is left out -----


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def log(db: str) -> list[dict[str, Any]]:
    return json.loads(run(db, "log", "--json"))


def cli_at_casualties(tmp_path: Path) -> str:
    """The same battle from the command line: adjusted units (AD1), then targets and dice."""
    db = str(tmp_path / "ha7.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "naval_combat", "--nation", "Germany")
    out = run(
        db,
        "adjust",
        "--remove",
        "DE-SS1,DE-SS2,GB-DD1,GB-DD2",
        "--add",
        f"Germany:battleship:{CNS}",
        "--add",
        f"Germany:destroyer:{CNS}",
        "--add",
        f"Britain:submarine:{CNS}",
        "--reason",
        "HA7's example",
    )
    assert "adds DE-BB3 (battleship, Germany)" in out and "GB-SS3 (submarine, Britain)" in out
    run(db, "battle", "start", "--zone", CNS)
    run(db, "battle", "targets", "1", "--targets", "GB-SS3=DE-DD3")
    out = run(db, "battle", "fire", "1", "--dice", "1,1,9,9")
    # HA5, HA6: each class's hits and the choices the referee takes, as its refusals name them.
    assert (
        "waiting for Britain to choose casualties: Britain places 1 hit from battleships and carriers and 1 from "
        "cruisers and destroyers, legal: GB-CA1 (1 hit lost) | GB-CA1, GB-SS3"
    ) in out
    # HA7: the default is named, not only said to be the cheapest.
    assert "GB-CA1, GB-SS3 (default: GB-CA1) (HA7, the owner's order: hits placed one at a time" in out
    return db


@pytest.mark.parametrize(("units", "lost"), [("GB-CA1", 1), ("GB-SS3,GB-CA1", 0)])
def test_battle_casualties_accepts_every_legal_choice_a_lost_hit_left_out_HA7(
    tmp_path: Path, units: str, lost: int
) -> None:
    db = cli_at_casualties(tmp_path)
    out = run(db, "battle", "casualties", "1", "--units", units)
    assert f"battle 1: Britain takes hits on {units.replace(',', ', ')} (chosen)   [HA7]" in out
    assert ("1 hit for Britain to place is lost: no unit there may take it" in out) == bool(lost)
    assert "GB-CA1 sunk in battle 1" in out
    assert run(db, "verify").startswith("OK:")


@pytest.mark.parametrize(
    ("units", "message"),
    [
        (
            "GB-SS3",
            "HA7: Britain cannot take the 1 hit from battleships and carriers and 1 from cruisers and "
            "destroyers so (input: GB-SS3): in every order at least 1 hit falls on GB-CA1",
        ),
        ("GB-CA1,GB-SS3,GB-CA1", "HA7: Britain has 2 hits to place, got 3 (input: GB-CA1,GB-SS3,GB-CA1)"),
        ("GB-CA1,GB-CA1", "HA7: GB-CA1 can take 1 more hit, assigned 2 (input: GB-CA1,GB-CA1)"),
        ("DE-BB3", "HA7: DE-BB3 belongs to Germany; Britain chooses its own side's losses (input: DE-BB3)"),
    ],
)
def test_battle_casualties_refuses_an_illegal_choice_citing_HA7_with_the_input_and_records_nothing(
    tmp_path: Path, units: str, message: str
) -> None:
    db = cli_at_casualties(tmp_path)
    before = log(db)
    out = run(db, "battle", "casualties", "1", "--units", units, code=1)
    assert out.startswith("Error: ") and out.count("\n") == 1, out
    assert message in out
    if units == "GB-SS3":
        assert "(legal: GB-CA1 (1 hit lost) | GB-CA1, GB-SS3; default: GB-CA1)" in out
    assert log(db) == before


def test_battle_casualties_help_says_how_a_lost_hit_is_written_HA7() -> None:
    out = " ".join(CliRunner().invoke(cli, ["battle", "casualties", "--help"]).output.split())
    assert "a lost hit is not written" in out and "leave a lost hit out" in out
    assert "--units GB-CA1" in out


# ----- AS1, F7: aircraft aboard a carrier fight in the carrier's zone -----


def test_as1_f7_aircraft_aboard_a_carrier_search_in_asw_combat_in_its_zone() -> None:
    # DE-BM1 sits on DE-CV1 and did not fly this turn (direct setup); no German escort is there.
    c = campaign("DE-CV1", "DE-BM1", "GB-SS1")
    b = c.asw_start("Germany", CNS)
    before = c.version
    c.asw_search(b, None, ManualDice([1]))
    (roll,) = events(c, "DiceRolled", before)
    assert (roll.unit, roll.rule, roll.target) == ("DE-BM1", "AS2", 3)


def test_as1_f7_aircraft_aboard_a_carrier_fight_in_a_naval_battle_in_its_zone() -> None:
    c = campaign("DE-CV1", "DE-FT1", "GB-DD1")
    b = c.naval_start("Germany", CNS)
    (started,) = events(c, "NavalBattleStarted")
    assert started.attackers == ["DE-CV1", "DE-FT1"]
    # HA3: the fighter's selective shot has a single legal target; it is taken for Germany.
    before = c.version
    c.fire(b, ManualDice([9, 1, 9]))
    assert [(r.unit, r.target) for r in events(c, "DiceRolled", before)] == [
        ("DE-CV1", 2),
        ("DE-FT1", 5),
        ("GB-DD1", 3),
    ]
    assert "GB-DD1" not in c.units


# ----- NC6: a submarine hits a submarine once the other side has no other naval unit -----


def test_nc6_a_submarine_targets_a_submarine_once_the_other_side_has_no_other_naval_unit_left() -> None:
    c = campaign("DE-SS1", "GB-DD1", "GB-SS1")
    b = c.naval_start("Germany", CNS)
    # NC2: GB-DD1 cancels DE-SS1's opening fire, nothing cancels GB-SS1's. GB-SS1 may target
    # DE-SS1: Germany has no non-submarine naval unit (NC6); DE-SS1 may only target GB-DD1 (HA1).
    assert step(c, b) == ("opening_fire", ["Britain"], "NC2")
    assert [(e.nation, e.targets) for e in events(c, "TargetsChosen")] == [("Britain", {"GB-SS1": "DE-SS1"})]
    c.fire(b, ManualDice([9]))
    assert step(c, b) == ("fire", ["Germany", "Britain"], "NC3")
    assert events(c, "TargetsChosen")[-1].targets == {"DE-SS1": "GB-DD1"}
    c.fire(b, ManualDice([1, 9]))  # DE-SS1 sinks GB-DD1; GB-DD1 misses
    assert "GB-DD1" not in c.units
    while step(c, b)[0] == "decide":
        c.naval_decide(b, step(c, b)[1][0], [], None)
    # Round 2: Britain has no non-submarine naval unit left, so DE-SS1 may now hit GB-SS1.
    assert step(c, b) == ("fire", ["Germany", "Britain"], "NC3")
    assert [e.targets for e in events(c, "TargetsChosen")][-2:] == [{"DE-SS1": "GB-SS1"}, {"GB-SS1": "DE-SS1"}]
    before = c.version
    c.fire(b, ManualDice([1, 9]))
    assert [(e.firer, e.unit) for e in events(c, "TargetHit", before)] == [("DE-SS1", "GB-SS1")]
    assert "GB-SS1" not in c.units


@pytest.mark.parametrize(("cites_ha7", "rule"), [(True, "HA7"), (False, "NC3")])
def test_ha7_a_hit_with_no_target_left_is_lost_citing_ha7(cites_ha7: bool, rule: str) -> None:
    """Two hits on a side of one cruiser: the second finds no target left and is lost, which HA7
    says; it cited NC3 (the round's casualty removal). A campaign recorded before keeps NC3
    (`[naval_combat] hits_lost_by_ha7`), so its log verifies."""
    data = copy.deepcopy(RULESET)
    if not cites_ha7:
        # As a campaign recorded before the key was: its recorded ruleset lacks it.
        del data["naval_combat"]["hits_lost_by_ha7"]
    c = campaign("DE-BB1", "DE-BB2", "GB-CA1", ruleset=data)
    assert c.ruleset.hits_lost_by_ha7 is cites_ha7
    b = c.naval_start("Germany", CNS)
    before = c.version
    c.fire(b, ManualDice([1, 1, 9]))  # both battleships hit; GB-CA1 misses
    while c.battles.get(str(b), {}).get("step") == "casualties":
        c.choose_casualties(b, "Britain", None)
    (lost,) = events(c, "HitsLost", before)
    assert (lost.nation, lost.hits, lost.rule) == ("Britain", 1, rule)
