"""HA7 versioned by the campaign's recorded ruleset (`[hit_allocation] placement`): a campaign
recorded before the rule was amended keeps being refereed by the rule as first written
("class-order": each firing class's hits in the ruleset's order, the default the cheapest in
that order, the hits the units cannot take lost at the roll); a new one plays the rule as
amended ("owner-order").

The fixture ha7-class-order.jsonl.gz is the export of a campaign played with manual dice by the
tracker as it was before the amendment (HA7 as first written), on a small scenario that comes
with it (north-sea-1914's map, two battles in Germany's first naval_combat phase):
- battle 1, RULES.md HA7's example: DE-BB1 and DE-DD1 each hit GB-CA1 and GB-SS1; the
  battleship's hit placed first takes the cruiser and the destroyer's the submarine: both sink,
  by default, at the roll. Under the amended rule Britain would be asked, the default the
  cruiser alone.
- battle 2: DE-BB2, DE-BB3 and DE-DD2 each hit GB-DD1, GB-SS2 and GB-SS3; one battleship hit
  is lost at the roll (NC6) and Britain names three units, as the rule then asked.
"""

from __future__ import annotations

import gzip
import json
import uuid
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import DataFileError
from domain.procedures.base import Context, hypothetical_scenario
from domain.procedures.odds import exact_odds
from domain.ruleset import load_ruleset, read_toml, ruleset_from_dict, ruleset_from_recorded
from tests.odds_positions import RULESET, SIDES, naval_battle
from tests.support import advance
from tracker.cli.main import cli
from tracker.service.application import Tracker

EXPORT = Path(__file__).parent / "fixtures" / "ha7-class-order.jsonl.gz"
CNS = "Central North Sea"


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


def imported(tmp_path: Path) -> str:
    export = tmp_path / "ha7.jsonl"
    export.write_bytes(gzip.decompress(EXPORT.read_bytes()))
    db = str(tmp_path / "ha7.db")
    run(db, "import", str(export))
    return db


def test_a_campaign_recorded_before_the_key_imports_and_verifies_HA7(tmp_path: Path) -> None:
    db = imported(tmp_path)
    out = run(db, "verify")
    assert out.startswith("OK: 60 events") and "Re-refereed: 14 actions" in out, out
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert c.ruleset.hit_placement == "class-order"
        assert "placement" not in c.ruleset_data["hit_allocation"]
        # The old casualties: every British unit sunk, both battles over.
        assert not [u for u in c.units.values() if u["nation"] == "Britain" and u.get("at")]


def test_the_old_casualties_are_the_ones_recorded_HA7_NC6(tmp_path: Path) -> None:
    db = imported(tmp_path)
    text = run(db, "log")
    # Battle 1: the default, both ships, placed at the roll (asking nobody).
    assert "battle 1: Britain takes hits on GB-CA1, GB-SS1 (default, cheapest legal)" in text
    # Battle 2: the hit lost at the roll, then Britain's three units as the rule then asked.
    assert "battle 2: 1 hit for Britain to place is lost: no unit there may take it" in text
    assert "battle 2: Britain takes hits on GB-SS3, GB-DD1, GB-SS2 (chosen)" in text
    kinds = [e["kind"] for e in json.loads(run(db, "log", "--json"))]
    # One hit lost, recorded with the roll, before Britain's choice (not with it).
    assert kinds.count("HitsLost") == 1
    assert kinds.index("HitsLost") < len(kinds) - 1 - kinds[::-1].index("CasualtiesChosen")


def scenario_of_fixture() -> dict[str, Any]:
    """The scenario the fixture's campaign recorded (its first event)."""
    first = json.loads(gzip.decompress(EXPORT.read_bytes()).decode().splitlines()[1])
    return dict(first["event"]["scenario"])


def at_casualties(ruleset_data: dict[str, Any]) -> tuple[Campaign, int]:
    """The fixture's battle 1 played again by a new campaign on `ruleset_data`."""
    c = Campaign.create(uuid.uuid4(), "t", scenario_of_fixture(), ruleset_data, "manual", commitment(new_seed()))
    while c.phase != "combat_movement":
        advance(c)
    c.move("Germany", ["DE-BB1", "DE-DD1"], [CNS])
    advance(c)
    b = c.naval_start("Germany", CNS)
    c.choose_targets(b, "Britain", {"GB-SS1": "DE-DD1"})
    c.fire(b, ManualDice([1, 1, 9, 9]))  # DE-BB1 and DE-DD1 hit; GB-CA1 and GB-SS1 miss
    return c, b


def test_a_new_campaign_on_the_built_in_ruleset_plays_the_amended_rule_HA7() -> None:
    _, data = load_ruleset("twtea-3e")
    assert data["hit_allocation"]["placement"] == "owner-order"
    c, b = at_casualties(data)
    assert c.ruleset.hit_placement == "owner-order"
    assert (c.battles[str(b)]["step"], c.battles[str(b)]["waiting"]) == ("casualties", ["Britain"])
    assert c.choose_casualties(b, "Britain", None) == ["GB-CA1"]
    assert "GB-CA1" not in c.units and c.units["GB-SS1"]["damage"] == 0


def test_the_same_battle_under_class_order_sinks_both_at_the_roll_HA7() -> None:
    _, data = load_ruleset("twtea-3e")
    data = {**data, "hit_allocation": {**data["hit_allocation"], "placement": "class-order"}}
    c, b = at_casualties(data)
    assert "GB-CA1" not in c.units and "GB-SS1" not in c.units
    assert str(b) not in c.battles or c.battles[str(b)]["step"] != "casualties"


def without_key(tmp_path: Path) -> Path:
    """The built-in ruleset as a file a group copied before the key existed."""
    text = resources.files("domain.data").joinpath("rulesets", "twtea-3e.toml").read_text()
    path = tmp_path / "house.toml"
    path.write_text("\n".join(line for line in text.splitlines() if not line.startswith("placement")))
    assert "placement" not in read_toml(path)["hit_allocation"]
    return path


def test_a_file_without_the_key_means_the_amended_rule_and_is_recorded_so(tmp_path: Path) -> None:
    ruleset, data = load_ruleset(str(without_key(tmp_path)))
    assert ruleset.hit_placement == "owner-order"
    # The data a new campaign records says so: read back it stays the amended rule.
    assert data["hit_allocation"]["placement"] == "owner-order"
    assert ruleset_from_recorded(data).hit_placement == "owner-order"


def test_recorded_data_without_the_key_means_the_rule_as_first_written(tmp_path: Path) -> None:
    data = read_toml(without_key(tmp_path))
    assert ruleset_from_recorded(data).hit_placement == "class-order"
    assert ruleset_from_dict(data, "file").hit_placement == "owner-order"


def test_an_unknown_placement_is_refused(tmp_path: Path) -> None:
    _, data = load_ruleset("twtea-3e")
    data = {**data, "hit_allocation": {**data["hit_allocation"], "placement": "attacker-order"}}
    with pytest.raises(DataFileError, match="placement"):
        ruleset_from_dict(data, "file")


@pytest.mark.parametrize(("placement", "wins"), [("class-order", 0.611), ("owner-order", 0.754)])
def test_the_odds_follow_the_campaigns_placement_HA7(placement: str, wins: float) -> None:
    # The audit's battle (tests/test_ha7_odds.py): 0.611 is what the tracker gave before the
    # amendment, to the last digit.
    ctx = Context(replace(RULESET, hit_placement=placement), hypothetical_scenario(SIDES), {})
    battle = naval_battle(ctx, {"cruiser": 1, "submarine": 2}, {"battleship": 1, "destroyer": 2})
    result = exact_odds(battle, ctx, None, 1)
    assert round(float(result.probability(lambda o: o.result == "attacker_wins")), 3) == wins
