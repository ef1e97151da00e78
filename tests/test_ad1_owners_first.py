"""AD1, F7: an adjustment's owner changes come first. An air unit an adjustment adds on a land
territory is checked against the territory's owner as the adjustment leaves it: "the BEF takes
Flanders and bases a bomber there" is one adjustment, and a fighter cannot be added on England
in the adjustment that hands England to Germany. Checked against the owner before, the first
was refused and the second accepted.

A campaign recorded before the ruleset said so (`[naval_combat] owners_change_first`) keeps
the rule it was refereed by, so its log verifies as recorded."""

from __future__ import annotations

from pathlib import Path

from domain.rules.economy import Adjustment
from tests.test_pu2_f8_amended import NORTH_SEA, before_the_key, campaign, imported, refused, run, to
from tracker.service.application import Tracker

TAKEN = Adjustment(owners={"Flanders": "Britain"}, add=(("Britain", "bomber", "Flanders", 1),))
LOST = Adjustment(owners={"England": "Germany"}, add=(("Britain", "fighter", "England", 1),))


def test_ad1_an_air_unit_is_added_on_a_territory_the_same_adjustment_hands_to_its_side() -> None:
    c = campaign(NORTH_SEA)
    to(c, "Germany", "land_combat")
    c.adjust(TAKEN, "the BEF takes Flanders and bases a bomber there")
    assert c.board().owners["Flanders"] == "Britain"
    assert [u["at"] for uid, u in c.units.items() if uid.startswith("GB-BM")] == ["England", "Flanders"]


def test_ad1_no_air_unit_is_added_on_a_territory_the_same_adjustment_hands_to_an_enemy() -> None:
    c = campaign(NORTH_SEA)
    to(c, "Germany", "land_combat")
    reason = refused(c, "AD1", lambda: c.adjust(LOST, "the invasion of England"))
    assert reason == "Britain's air units cannot be added in England, held by Germany after this adjustment"


def test_ad1_before_the_key_the_owner_before_the_adjustment_counted() -> None:
    c = campaign(NORTH_SEA, before_the_key("owners_change_first"))
    assert not c.ruleset.owners_change_first
    to(c, "Germany", "land_combat")
    reason = refused(c, "AD1", lambda: c.adjust(TAKEN, "the BEF takes Flanders"))
    assert reason == "Britain's air units cannot be added in Flanders, held by Germany"
    c.adjust(LOST, "the invasion of England; a fighter left behind")
    assert c.board().owners["England"] == "Germany"


def test_ad1_a_log_recorded_before_the_key_imports_and_verifies(tmp_path: Path) -> None:
    """The fixture is the export of a campaign played by the tracker before the key: GB-FT2
    added in England by the adjustment that handed England to Germany, as it then could; the
    bomber added in Flanders with Flanders handed to Britain was refused."""
    db = imported(tmp_path, "air-added-under-old-owner.jsonl.gz")
    assert "Re-refereed" in run(db, "verify")
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert not c.ruleset.owners_change_first
        assert "owners_change_first" not in c.ruleset_data["naval_combat"]
        assert (c.units["GB-FT2"]["at"], c.board().owners["England"]) == ("England", "Germany")
        assert (c.nation, c.phase) == ("Germany", "noncombat_movement")
