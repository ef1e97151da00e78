"""D4: a campaign's dice source. Auto campaigns refuse typed dice and manual ones refuse to
roll, unless a typed roll is overridden under RK3 (reason, agreement of the other side); the
source changes only by a recorded switch; verify and reports list every switch and override."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import AutoDice, Dice, ManualDice, Override, commitment
from domain.errors import InputError, RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing
from tracker.cli.main import cli
from tracker.service.application import Tracker

SEED = "5eed" * 16
CNS = "Central North Sea"
_, RULESET_DATA = load_ruleset("twtea-3e")
SCENARIO_DATA, _ = read_scenario("north-sea-1914")


def new_campaign(dice_mode: str) -> Campaign:
    return Campaign.create(
        uuid.uuid4(), "t", copy.deepcopy(SCENARIO_DATA), copy.deepcopy(RULESET_DATA), dice_mode, commitment(SEED)
    )


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def log(db: str) -> list[dict[str, object]]:
    return json.loads(run(db, "log", "--json"))


def refused(db: str, code: int, *args: str) -> str:
    before = log(db)
    out = run(db, *args, code=code)
    assert out.startswith("Error: ") and out.count("\n") == 1, out
    assert log(db) == before, "a refused action records nothing"
    return out


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "d4.db")


# ----- the aggregate -----


def test_d4_auto_campaign_refuses_typed_dice_and_records_nothing() -> None:
    c = new_campaign("auto")
    version, balance = c.version, c.balances["Germany"]
    with pytest.raises(RuleViolation, match=r"^D4: this campaign uses auto dice, so the tracker rolls Germany"):
        c.research("Germany", "advanced_asw", ManualDice([10]))
    assert c.version == version and c.balances["Germany"] == balance and c.roll_count == 0


def test_d4_manual_campaign_refuses_generated_dice() -> None:
    c = new_campaign("manual")
    with pytest.raises(RuleViolation, match=r"^D4: this campaign uses manual dice: .* needs dice typed in with --dice"):
        c.research("Germany", "advanced_asw", AutoDice(SEED))
    assert c.version == 1


def test_d4_a_source_that_claims_auto_but_types_its_values_is_still_recorded_as_typed() -> None:
    class Liar:
        source = "auto"
        override = None

        def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
            return Dice((10,) * count, "manual")

    c = new_campaign("auto")
    c.research("Germany", "advanced_asw", Liar())
    # The aggregate records what the dice say of themselves: verify then finds the D4 problem.
    assert c.pending_events[-2].source == "manual"


def test_d4_typed_roll_in_an_auto_campaign_needs_a_reason_and_an_enemy_who_agrees() -> None:
    c = new_campaign("auto")
    with pytest.raises(InputError, match="needs --reason TEXT"):
        c.research("Germany", "advanced_asw", ManualDice([10], override=Override(" ", ("Britain",))))
    with pytest.raises(InputError, match=r"needs --agreed-by NATION: a nation of another side \(Britain, France\)"):
        c.research("Germany", "advanced_asw", ManualDice([10], override=Override("table dice", ())))
    with pytest.raises(RuleViolation, match=r"^RK3: a typed-dice override concerns Germany: .*not Austria-Hungary"):
        c.research("Germany", "advanced_asw", ManualDice([10], override=Override("table dice", ("Austria-Hungary",))))
    with pytest.raises(InputError, match="no nation 'Prussia'"):
        c.research("Germany", "advanced_asw", ManualDice([10], override=Override("table dice", ("Prussia",))))
    assert c.version == 1
    c.research("Germany", "advanced_asw", ManualDice([10], override=Override("table dice", ("Britain",))))
    kinds = [type(e).__name__ for e in c.pending_events[1:]]
    assert kinds == ["ResearchPaid", "TypedDiceAccepted", "DiceRolled", "TechnologyAdvanced"]
    accepted, rolled = c.pending_events[2], c.pending_events[3]
    assert isinstance(accepted, Campaign.TypedDiceAccepted) and isinstance(rolled, Campaign.DiceRolled)
    assert (accepted.rule, accepted.agreed_by, accepted.reason, accepted.roll) == ("D4", ["Britain"], "table dice", 1)
    assert rolled.values == [10] and rolled.source == "manual" and accepted.action == rolled.action


def test_d4_switch_changes_the_source_only_with_a_reason() -> None:
    c = new_campaign("auto")
    with pytest.raises(InputError, match="--reason"):
        c.switch_dice("manual", "  ")
    with pytest.raises(RuleViolation, match="^D4: this campaign already uses auto dice"):
        c.switch_dice("auto", "why not")
    c.switch_dice("manual", "the seed stayed behind")
    assert c.dice_mode == "manual"
    c.research("Germany", "advanced_asw", ManualDice([3]))
    with pytest.raises(RuleViolation, match="^D4: this campaign uses manual dice"):
        c.research("Germany", "advanced_submarine", AutoDice(SEED))


# ----- the command line -----


def test_d4_cli_auto_campaign_refuses_typed_research_and_battle_dice(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    out = refused(db, 1, "research", "--dice", "10", "advanced_asw")
    assert out == (
        "Error: D4: this campaign uses auto dice, so the tracker rolls Germany research roll for Advanced ASW; "
        "typed dice need --override --reason TEXT --agreed-by NATION (a nation of another side than Germany, RK3), "
        "or a recorded switch: tracker dice switch manual --reason TEXT\n"
    )
    with Tracker(db) as t:

        def to_naval(c: Campaign, _d: object) -> None:
            while c.phase != "naval_combat":
                advance_passing(c)

        t.execute(t.campaign_id(None), to_naval)
    run(db, "battle", "start", "--zone", CNS)
    run(db, "battle", "targets", "1", "--targets", "DE-SS1=GB-CA1,DE-SS2=GB-CA1")
    run(db, "battle", "screen", "1", "--screens", "")
    fire = ("battle", "fire", "1", "--dice", "1,1,10,10,10")
    assert refused(db, 1, *fire).startswith("Error: D4: this campaign uses auto")
    # The volley rolls dice of both sides: each side's typed dice need the other side's agreement.
    out = refused(db, 1, *fire, "--override", "--reason", "table", "--agreed-by", "Britain")
    assert out.startswith("Error: RK3: a typed-dice override concerns Britain: it needs the agreement of a nation")
    assert "--dice" in refused(db, 2, "battle", "fire", "1", "--override", "--reason", "x", "--agreed-by", "Britain")
    run(db, *fire, "--override", "--reason", "tower", "--agreed-by", "Britain,Germany")
    kinds = [r["kind"] for r in log(db)]
    assert kinds.count("TypedDiceAccepted") == 1 and kinds.count("DiceRolled") == 5
    out = run(db, "verify")
    assert "Overrides (D4, RK3):\n" in out
    assert "typed dice from roll 1, agreed by Britain, Germany: tower\n" in out


def test_rk3_agreed_by_takes_a_nation_in_any_case_or_by_its_code(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    assert "no nation 'narnia'" in refused(db, 2, "research", "advanced_asw", "--dice", "10", "--override",
                                           "--reason", "table", "--agreed-by", "narnia")  # fmt: skip
    run(db, "research", "advanced_asw", "--dice", "10", "--override", "--reason", "table", "--agreed-by", "gb")
    run(db, "undo", "--override", "--reason", "misread", "--agreed-by", "britain")
    accepted, undone = (next(r for r in log(db) if r["kind"] == kind) for kind in ("TypedDiceAccepted", "ActionUndone"))
    assert accepted["data"]["agreed_by"] == undone["data"]["agreed_by"] == ["Britain"]
    assert "Re-refereed" in run(db, "verify")


def test_d4_cli_manual_campaign_without_dice_cites_d4(db: str) -> None:
    run(db, "new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    out = refused(db, 1, "research", "advanced_asw")
    assert out == (
        "Error: D4: this campaign uses manual dice; Germany research roll for Advanced ASW needs 1 D10: "
        "roll them and pass them with --dice\n"
    )
    assert "need no --override" in refused(
        db, 2, "research", "advanced_asw", "--dice", "9", "--override", "--reason", "x", "--agreed-by", "Britain"
    )


def test_d4_cli_switch_is_recorded_listed_by_verify_and_reports_and_undoable(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    assert run(db, "dice", "switch", "manual", code=2).count("--reason") >= 1
    out = run(db, "dice", "switch", "manual", "--reason", "dice tower at the table")
    assert out == "dice source switched from auto to manual (reason: dice tower at the table)   [D4]\n"
    assert "already uses manual" in refused(db, 1, "dice", "switch", "manual", "--reason", "again")
    run(db, "research", "advanced_asw", "--dice", "9")
    out = run(db, "verify")
    assert "Dice source switches (D4):\n  event 3: auto -> manual: dice tower at the table\n" in out
    md = run(db, "report", "--turn", "1")
    assert "Dice switches, overrides and rerolls" in md
    assert "dice source switched from auto to manual (reason: dice tower at the table) (D4, event 3)" in md
    data = json.loads(run(db, "report", "--turn", "1", "--format", "json"))
    assert [r["kind"] for r in data["turns"][0]["dice_record"]] == ["DiceSourceSwitched"]
    html = run(db, "report", "--turn", "1", "--format", "html")
    assert "Dice switches, overrides and rerolls" in html
    # Undoing the switch (an override: dice were rolled after it) puts auto dice back.
    run(db, "undo", "--to", "1", "--yes", "--override", "--reason", "back to the seed", "--agreed-by", "Britain")
    with Tracker(db) as t:
        assert t.load(t.campaign_id(None)).dice_mode == "auto"


def test_d4_switch_back_to_auto_needs_the_seed_in_this_database(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "manual")
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        monkeypatch.setattr(t.registry, "seed", lambda *args: None)
        with pytest.raises(RuleViolation, match="^D4: this database does not hold the campaign's dice seed"):
            t.switch_dice(cid, "auto", "the seed is back")
    # Created here, the campaign's seed is held, so auto dice can resume.
    run(db, "dice", "switch", "auto", "--reason", "no more physical dice")
    run(db, "research", "advanced_asw")
    rolled = [r for r in log(db) if r["kind"] == "DiceRolled"]
    assert [r["data"]["source"] for r in rolled] == ["auto"]  # type: ignore[index]
    out = run(db, "verify")
    assert out.startswith("OK: ") and "1 auto roll re-derived" in out


def test_d4_verify_fails_on_typed_dice_without_a_switch_or_override(db: str) -> None:
    class OldTrackerDice:
        """What an older tracker accepted: typed values in an auto-dice campaign."""

        source = "auto"
        override = None

        def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
            return Dice((10,) * count, "manual")

    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    with Tracker(db) as t:
        t.execute(t.campaign_id(None), lambda c, _d: c.research("Germany", "advanced_asw", OldTrackerDice()))
    result = CliRunner().invoke(cli, ["--db", db, "verify"])
    assert result.exit_code == 1
    assert (
        "FAILED: D4: event 3 (roll 1) has manual dice in a campaign of auto dice, with no recorded switch or override"
        in result.output
    )
    data = json.loads(run(db, "verify", "--json", code=1))
    assert data["ok"] is False and len(data["dice_problems"]) == 1
