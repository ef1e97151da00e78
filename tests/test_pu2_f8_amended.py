"""Two rules the referee came to enforce after campaigns were recorded without them.

PU1, PU2: a unit is bought only if the nation has somewhere to place it now (naval units: a sea
zone beside a port it holds; air units: such a port or a friendly carrier with room); bought
with nowhere to go, it held the placement phase open for good (T4) and only an undo got out.
On north-sea-1914 Austria-Hungary holds no territory.

F8, AD1, F7: no unit but a neutral's own stands on its territory: an adjustment neither adds one
there nor hands a neutral a territory holding one, and an air unit there must leave by the end
of noncombat_movement. On great-war-1914 Italy, owner of Venetia, is neutral in round 1.

A campaign recorded before the ruleset said so (`[naval_combat] purchases_need_a_place`,
`neutral_land_closed`) keeps the rule it was refereed by, so its log verifies as recorded.
Setups the scenarios do not offer are made by setting the in-memory state directly; each such
line says so.
"""

from __future__ import annotations

import copy
import gzip
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import commitment, new_seed
from domain.errors import RuleViolation
from domain.rules.economy import Adjustment
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance
from tracker.cli.main import cli
from tracker.service.application import Tracker

RULESET = load_ruleset("twtea-3e")[1]
NORTH_SEA = read_scenario("north-sea-1914")[0]
WORLD = read_scenario("great-war-1914")[0]
FIXTURES = Path(__file__).parent / "fixtures"
SKAG = "Skagerrak"


def before_the_key(key: str) -> dict[str, Any]:
    data = copy.deepcopy(RULESET)
    del data["naval_combat"][key]
    return data


def campaign(scenario: dict[str, Any], ruleset: dict[str, Any] | None = None) -> Campaign:
    return Campaign.create(
        uuid.uuid4(), "t", copy.deepcopy(scenario), ruleset or RULESET, "manual", commitment(new_seed())
    )


def to(c: Campaign, nation: str, phase: str) -> None:
    while (c.nation, c.phase) != (nation, phase):
        advance(c)


def refused(c: Campaign, rule: str, action: Any) -> str:
    """The action is refused citing `rule` and records nothing."""

    def state() -> Any:
        return (c.version, len(c.pending_events), c.units, c.balances, c.unplaced, c.board().owners)

    before = copy.deepcopy(state())
    with pytest.raises(RuleViolation) as refusal:
        action()
    assert refusal.value.rule == rule, str(refusal.value)
    assert state() == before
    return refusal.value.reason


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def imported(tmp_path: Path, fixture: str) -> str:
    export = tmp_path / "old.jsonl"
    export.write_bytes(gzip.decompress((FIXTURES / fixture).read_bytes()))
    db = str(tmp_path / "old.db")
    run(db, "import", str(export))
    return db


# ----- PU2: a unit is bought only with somewhere to place it -----


def test_pu2_a_nation_holding_no_port_cannot_buy_a_ship() -> None:
    c = campaign(NORTH_SEA)
    to(c, "Austria-Hungary", "purchase")
    reason = refused(c, "PU2", lambda: c.buy("Austria-Hungary", "destroyer"))
    assert reason == (
        "Austria-Hungary has nowhere to place 1 destroyer: new naval units go in a sea zone beside a port it "
        "holds, and it holds no port"
    )
    reason = refused(c, "PU2", lambda: c.buy("Austria-Hungary", "fighter", 2))
    assert reason == (
        "Austria-Hungary has nowhere to place 2 fighters: new air units go in a port it holds or on a friendly "
        "carrier with room, and it has neither"
    )
    advance(c)  # nothing bought: the turn goes on
    to(c, "Austria-Hungary", "collect_resources")


def test_pu2_an_air_unit_is_bought_for_a_friendly_carrier_with_room() -> None:
    c = campaign(NORTH_SEA)
    to(c, "Austria-Hungary", "purchase")
    # direct setup: a German carrier in the Skagerrak, with room for two
    c.units["DE-CV9"] = {"type": "aircraft_carrier", "nation": "Germany", "at": SKAG, "damage": 0, "moved": 0}
    c.buy("Austria-Hungary", "fighter")
    refused(c, "PU2", lambda: c.buy("Austria-Hungary", "destroyer"))  # a carrier is no port
    to(c, "Austria-Hungary", "placement")
    assert c.place("Austria-Hungary", "fighter", SKAG) == ["AH-FT1"]


def test_pu2_a_nation_whose_ports_touch_no_sea_cannot_buy_a_ship() -> None:
    inland = copy.deepcopy(NORTH_SEA)
    inland["map"]["land"]["Bohemia"] = {"x": 1100, "y": 560, "owner": "Austria-Hungary", "adjacent": []}
    c = campaign(inland)
    to(c, "Austria-Hungary", "purchase")
    reason = refused(c, "PU2", lambda: c.buy("Austria-Hungary", "submarine"))
    assert reason.endswith("and no port it holds (Bohemia) is beside a sea zone")
    c.buy("Austria-Hungary", "fighter")  # an air unit is placed in the port itself


def test_pu2_buying_with_nowhere_to_place_is_refused_through_the_cli(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "t", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "collect_resources")
    run(db, "convoy", "pass", "--by", "Britain")
    run(db, "next", "--to", "collect_resources", "--nation", "Britain")
    run(db, "convoy", "pass", "--by", "Germany")
    run(db, "next", "--to", "purchase", "--nation", "Austria-Hungary")
    events = len(run(db, "log").splitlines())
    out = run(db, "buy", "destroyer", code=1)
    assert out.startswith("Error: PU2: Austria-Hungary has nowhere to place 1 destroyer"), out
    assert len(run(db, "log").splitlines()) == events, "a refused action records nothing"
    run(db, "next", "--to", "collect_resources")  # placement is not held open (T4)


def test_pu2_before_the_key_a_unit_with_nowhere_to_go_was_bought() -> None:
    c = campaign(NORTH_SEA, before_the_key("purchases_need_a_place"))
    assert not c.ruleset.purchases_need_a_place
    to(c, "Austria-Hungary", "purchase")
    c.buy("Austria-Hungary", "destroyer")
    to(c, "Austria-Hungary", "placement")
    with pytest.raises(RuleViolation) as refusal:
        advance(c)
    assert refusal.value.rule == "T4" and "no place to put it (no port of its own) [PU2]" in refusal.value.reason
    # T4: no longer stuck for good; the player gives the destroyer up.
    c.advance(confirm_losses=True)
    assert c.unplaced == {} and c.phase == "collect_resources"


def test_pu2_a_log_recorded_before_the_key_imports_and_verifies(tmp_path: Path) -> None:
    """The fixture is the export of a campaign played by the tracker before the key:
    Austria-Hungary bought a destroyer with no port to place it from, as it then could, and
    came to its placement phase."""
    db = imported(tmp_path, "bought-with-no-port.jsonl.gz")
    assert "Re-refereed" in run(db, "verify")
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert not c.ruleset.purchases_need_a_place
        assert "purchases_need_a_place" not in c.ruleset_data["naval_combat"]
        assert (c.nation, c.phase, c.unplaced["Austria-Hungary"]) == ("Austria-Hungary", "placement", {"destroyer": 1})


# ----- F8: no other nation's unit on a neutral's territory -----


def test_f8_ad1_no_belligerents_unit_is_added_on_a_neutrals_territory() -> None:
    c = campaign(WORLD)
    reason = refused(c, "F8", lambda: c.adjust(Adjustment(add=(("Germany", "fighter", "Venetia", 1),)), "x"))
    assert (
        reason
        == "Venetia is Italy's territory and Italy is neutral in round 1: Germany's fighter cannot be added there"
    )
    # Of Italy's side too: a neutral is nobody's ally.
    refused(c, "F8", lambda: c.adjust(Adjustment(add=(("France", "bomber", "Venetia", 1),)), "x"))
    c.adjust(Adjustment(add=(("Italy", "fighter", "Venetia", 1),)), "Italy's own")
    # The board after the adjustment counts: Italy entering with it is no longer neutral.
    c.adjust(Adjustment(add=(("France", "bomber", "Venetia", 1),), enter=("Italy",)), "Italy joins at once")


def test_f8_ad1_no_territory_passes_to_a_neutral_with_another_nations_units_on_it() -> None:
    c = campaign(WORLD)
    gb_on_it = Adjustment(owners={"Southern England": "Italy"})
    reason = refused(c, "F8", lambda: c.adjust(gb_on_it, "x"))
    assert reason.startswith("Southern England cannot pass to Italy, neutral in round 1, with GB-BM2 on it")
    c.adjust(Adjustment(owners={"Southern England": "Italy"}, remove=("GB-BM2",)), "the squadron disbanded")
    assert c.board().owners["Southern England"] == "Italy"


def test_f8_f7_an_air_unit_on_a_neutrals_territory_must_leave() -> None:
    c = campaign(WORLD)
    c.units["FR-BM1"]["at"] = "Venetia"  # direct setup: a French bomber on neutral Italy's land
    to(c, "France", "noncombat_movement")
    assert c.stranded_aircraft() == ["FR-BM1"]
    assert "[F7]" in refused(c, "T4", c.advance)


def test_f8_before_the_key_adjustments_and_landing_minded_only_enemies() -> None:
    c = campaign(WORLD, before_the_key("neutral_land_closed"))
    assert not c.ruleset.neutral_land_closed
    c.adjust(Adjustment(add=(("Germany", "fighter", "Venetia", 1),)), "x")
    c.adjust(Adjustment(owners={"Southern England": "Italy"}), "x")
    to(c, "Germany", "noncombat_movement")
    assert c.stranded_aircraft() == []


def test_f8_adjusting_onto_a_neutrals_territory_is_refused_through_the_cli(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "t", "--scenario", "great-war-1914", "--dice", "manual")
    events = len(run(db, "log").splitlines())
    out = run(db, "adjust", "--add", "Germany:fighter:Venetia", "--reason", "x", code=1)
    assert out.startswith("Error: F8: Venetia is Italy's territory and Italy is neutral in round 1"), out
    out = run(db, "adjust", "--owner", "Southern England=Italy", "--reason", "x", code=1)
    assert out.startswith("Error: F8: Southern England cannot pass to Italy"), out
    assert len(run(db, "log").splitlines()) == events, "a refused action records nothing"


def test_f8_a_log_recorded_before_the_key_imports_and_verifies(tmp_path: Path) -> None:
    """The fixture is the export of a campaign played by the tracker before the key: DE-FT2
    added in Venetia and Southern England handed to Italy with GB-BM2 on it, as it then could;
    Germany and Britain then ended noncombat_movement with those air units where they were."""
    db = imported(tmp_path, "neutral-land-adjusted.jsonl.gz")
    assert "Re-refereed" in run(db, "verify")
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert not c.ruleset.neutral_land_closed
        assert "neutral_land_closed" not in c.ruleset_data["naval_combat"]
        assert (c.units["DE-FT2"]["at"], c.units["GB-BM2"]["at"]) == ("Venetia", "Southern England")
        assert (c.nation, c.phase) == ("Britain", "placement")
