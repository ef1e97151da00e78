"""Convoy battles (CV1-CV7) from the command line: step by step with manual dice, and --auto.

Exit status 1 for a refused action, 2 for bad usage; a refused command records nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support import perform_until
from tracker.cli.main import cli
from tracker.service.application import Tracker

CNS = "Central North Sea"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "convoy.db")


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def log(db: str) -> list[dict[str, Any]]:
    """Every event, what was asked included (so positions are sequence numbers)."""
    return json.loads(run(db, "log", "--json", "--asked"))


def refused(db: str, code: int, *args: str) -> str:
    """The command fails with `code`, one error line, and records nothing."""
    before = log(db)
    out = run(db, *args, code=code)
    assert out.startswith("Error: ") or "Usage:" in out, out
    assert "Traceback" not in out
    assert log(db) == before
    return out


def to_britain_collect(db: str) -> None:
    """Advance to Britain's collect_resources phase, as `next` commands do."""
    with Tracker(db) as t:
        perform_until(t, t.campaign_id(None), "Britain", "collect_resources")
        c = t.load(t.campaign_id(None))
    assert (c.round, c.nation, c.phase) == (1, "Britain", "collect_resources")
    # CV1, T4: Germany, with U-boats among British NTR, must declare or pass.
    out = run(db, "pending")
    assert f"Germany may declare a convoy attack on Britain's NTR in {CNS}, or pass [CV1]" in out
    assert "tracker convoy pass --by Germany" in out


def test_cli_convoy_battle_step_by_step_with_manual_dice(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    # Germany's noncombat_movement: a third U-boat joins, it will not take part (moved in in
    # combat_movement, it would make a naval battle due there, NC1).
    run(db, "next", "--to", "noncombat_movement")
    run(db, "move", "DE-SS3", "--to", CNS)
    to_britain_collect(db)
    start = len(log(db))

    out = run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1,DE-SS2")
    assert "convoy battle 1 in Central North Sea" in out and "[CV1]" in out
    merchant = (
        "battle 1 (convoy, Central North Sea): waiting for Britain to roll merchant defence "
        "(2D10; a total of 20 sinks one submarine) [CV2]"
    )
    assert f"Waiting: {merchant}" in out
    assert refused(db, 1, "next") == (
        f"Error: T4: collect resources cannot end yet: {merchant}; to close it: "
        "tracker convoy roll 1 --dice V,V [--ref ROLL_ID]\n"
    )
    assert "France is not an enemy of Britain" in refused(db, 1, "convoy", "declare", "--by", "France", "--zone", CNS)
    assert "D3" in refused(db, 1, "convoy", "roll", "1", "--dice", "10")  # merchant defence is 2D10
    assert "D4" in refused(db, 1, "convoy", "roll", "1")  # manual dice campaign: --dice needed
    refused(db, 2, "convoy", "roll", "one", "--dice", "10,10")
    assert "no convoy battle 7" in refused(db, 2, "convoy", "roll", "7", "--dice", "10,10")

    out = run(db, "convoy", "roll", "1", "--dice", "10,10")
    assert "total 20: sinks one submarine" in out
    assert "waiting for Germany to choose the submarine sunk" in out
    assert "legal: DE-SS1, DE-SS2" in refused(db, 1, "convoy", "casualties", "1", "--units", "DE-SS3")
    run(db, "convoy", "casualties", "1", "--units", "DE-SS1")

    assert "CV3" in refused(db, 1, "convoy", "search", "1", "--units", "DE-DD1", "--dice", "1")
    run(db, "convoy", "search", "1", "--units", "GB-CA1,GB-DD1,GB-DD2", "--dice", "5,4,4")
    (waiting,) = json.loads(run(db, "pending", "--json"))
    assert (waiting["battle"], waiting["step"], waiting["waiting"], waiting["rule"]) == (
        1,
        "targets",
        ["Germany"],
        "CV4",
    )
    assert waiting["command"] == "tracker battle targets 1 [--targets FIRER=TARGET,...]"
    # DE-SS3 takes no part but fights the round: it picks a target too, among detecting ships.
    assert "Germany: DE-SS2 at GB-DD1/GB-DD2, DE-SS3 at GB-DD1/GB-DD2" in waiting["text"]
    err = refused(db, 1, "battle", "targets", "1", "--targets", "DE-SS2=GB-CA1,DE-SS3=GB-DD1")
    assert err.startswith("Error: CV4: DE-SS2 cannot target GB-CA1") and "(legal: GB-DD1, GB-DD2)" in err
    assert refused(db, 1, "convoy", "roll", "1", "--dice", "1,10,2,10").startswith("Error: CV4: ")  # targets first
    out = run(db, "battle", "targets", "1", "--targets", "DE-SS2=GB-DD1,DE-SS3=GB-DD1")
    assert "waiting for Britain to choose screening escorts" in out  # GB-DD2 could take a shot
    run(db, "battle", "screen", "1", "--screens", "")

    # GB-DD1 hits, GB-DD2 misses; DE-SS2 hits GB-DD1, DE-SS3 misses. GB-DD1's hit is Germany's to place.
    out = run(db, "convoy", "roll", "1", "--dice", "1,10,2,10")
    assert "DE-SS2 hits GB-DD1" in out
    assert "waiting for Germany to choose casualties: Germany places 1 hit among DE-SS2, DE-SS3" in out
    assert "HA7" in refused(db, 1, "convoy", "casualties", "1", "--nation", "Britain")
    assert "belongs to Britain" in refused(db, 1, "convoy", "casualties", "1", "--units", "GB-DD2")
    run(db, "convoy", "casualties", "1", "--units", "DE-SS3")
    out = run(db, "convoy", "roll", "1", "--dice", "7")
    assert "2 of Britain's NTR destroyed in Central North Sea" in out
    assert "ends after one round; surviving submarines stay: DE-SS2" in out
    assert [i["kind"] for i in json.loads(run(db, "pending", "--json"))] == ["turn"]  # nothing open
    assert "lost to convoy attacks" in run(db, "next")

    records = log(db)[start:]
    counts = Counter(r["kind"] for r in records)
    # One event per roll (one die per unit), per choice and per loss.
    assert counts["DiceRolled"] == 1 + 3 + 4 + 1
    assert counts["SearchersChosen"] == counts["RoundStarted"] == counts["TargetsChosen"] == 1
    assert counts["ScreeningChosen"] == 1
    assert counts["CasualtiesChosen"] == 2
    assert counts["TargetHit"] == 1
    assert counts["UnitHit"] == 3
    assert counts["NtrDestroyed"] == counts["BattleEnded"] == counts["ResourcesCollected"] == 1
    rolled = [(r["rule"], r["data"]["unit"], r["data"]["values"]) for r in records if r["kind"] == "DiceRolled"]
    assert rolled == [
        ("CV2", None, [10, 10]),
        ("CV3", "GB-CA1", [5]),
        ("CV3", "GB-DD1", [4]),
        ("CV3", "GB-DD2", [4]),
        ("CV4", "GB-DD1", [1]),
        ("CV4", "GB-DD2", [10]),
        ("CV4", "DE-SS2", [2]),
        ("CV4", "DE-SS3", [10]),
        ("CV5", "DE-SS2", [7]),
    ]
    (aimed,) = [r["data"] for r in records if r["kind"] == "TargetsChosen"]
    assert (aimed["nation"], aimed["targets"], aimed["default"]) == (
        "Germany",
        {"DE-SS2": "GB-DD1", "DE-SS3": "GB-DD1"},
        False,
    )
    chosen = [
        (r["data"]["nation"], r["data"]["units"], r["data"]["default"])
        for r in records
        if r["kind"] == "CasualtiesChosen"
    ]
    assert chosen == [("Germany", ["DE-SS1"], False), ("Germany", ["DE-SS3"], False)]
    assert [r["data"]["unit"] for r in records if r["kind"] == "UnitHit"] == ["DE-SS1", "GB-DD1", "DE-SS3"]
    collected = next(r for r in records if r["kind"] == "ResourcesCollected")
    assert (collected["data"]["ntr_value"], collected["data"]["lost"]) == (9, 2)
    assert run(db, "verify").startswith("OK:")


def test_cli_cv1_t4_next_is_refused_until_every_enemy_declared_or_passed(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    to_britain_collect(db)
    assert refused(db, 1, "next") == (
        f"Error: T4: collect resources cannot end yet: Germany may declare a convoy attack on Britain's NTR "
        f"in {CNS}, or pass [CV1]; to close it: tracker convoy declare --by Germany --zone '{CNS}', "
        "or tracker convoy pass --by Germany\n"
    )
    assert "CV1" in refused(db, 1, "convoy", "pass", "--by", "France")  # not an enemy: nothing to pass
    before = len(log(db))
    run(db, "convoy", "pass", "--by", "Germany")
    (asked, passed) = log(db)[before:]
    assert asked["kind"] == "ActionAsked" and asked["data"]["name"] == "convoy pass"
    assert (passed["kind"], passed["data"]["nation"], passed["data"]["zones"]) == ("ConvoyPassed", "Germany", [CNS])
    assert "passed on convoy attacks" in refused(db, 1, "convoy", "declare", "--by", "Germany", "--zone", CNS)
    assert "already passed" in refused(db, 1, "convoy", "pass", "--by", "Germany")
    assert run(db, "pending") == "waiting for Britain to finish collect resources (tracker next) [T3]\n"
    assert "Britain collects" in run(db, "next")


def test_cv7_a_command_for_an_ended_battle_is_refused_citing_cv7(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    out = run(db, "convoy", "roll", "1", "--dice", "10,10")
    # Merchant defence sank the only taking-part U-boat: its loss was chosen without asking.
    assert "DE-SS1 sunk in battle 1" in out and "battle 1 ends" in out
    assert run(db, "pending") == "waiting for Britain to finish collect resources (tracker next) [T3]\n"
    ended = "Error: CV7: battle 1 (convoy) has ended; nothing more can be done in it\n"
    for command in (
        ("convoy", "roll", "1", "--dice", "1"),
        ("convoy", "search", "1", "--dice", "1"),
        ("convoy", "casualties", "1", "--nation", "Germany"),
        ("convoy", "auto", "1"),
        ("battle", "targets", "1", "--nation", "Germany"),
        ("battle", "screen", "1", "--nation", "Britain"),
        ("battle", "fire", "1", "--dice", "1"),
        ("battle", "casualties", "1", "--nation", "Germany"),
        ("battle", "auto", "1"),
    ):
        assert refused(db, 1, *command) == ended, command
    # A battle that never existed is bad usage (exit 2), not a rule.
    assert "no convoy battle 2" in refused(db, 2, "convoy", "roll", "2", "--dice", "1")


@pytest.mark.parametrize("command", [("convoy", "casualties", "1"), ("battle", "targets", "1")])
def test_cv7_a_command_for_an_ended_battle_without_nation_is_refused_citing_cv7(
    db: str, command: tuple[str, ...]
) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    run(db, "convoy", "roll", "1", "--dice", "10,10")  # the only taking-part U-boat is lost: the battle ends
    assert refused(db, 1, *command).startswith("Error: CV7: ")


def test_cv7_cli_says_merchant_defence_ended_the_battle_not_after_one_round(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    out = run(db, "convoy", "roll", "1", "--dice", "10,10")  # the only taking-part U-boat: lost without asking
    assert "waiting for Germany to choose the submarine sunk" not in out
    assert "battle 1 ends" in out and "[CV7]" in out
    assert "after one round" not in out
    (chosen,) = [r["data"] for r in log(db) if r["kind"] == "CasualtiesChosen"]
    assert (chosen["nation"], chosen["units"], chosen["default"], chosen["rule"]) == (
        "Germany",
        ["DE-SS1"],
        True,
        "CV2",
    )


def test_cli_convoy_declare_auto_resolves_the_battle_with_auto_dice(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    to_britain_collect(db)
    start = len(log(db))
    out = run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--auto")
    assert "convoy battle 1 in Central North Sea" in out
    assert "battle 1 ends" in out and "[CV7]" in out  # after the round, or with no U-boat left
    assert "Waiting:" not in out
    assert [i["kind"] for i in json.loads(run(db, "pending", "--json"))] == ["turn"]  # nothing open
    records = log(db)[start:]
    kinds = [r["kind"] for r in records]
    assert kinds[:2] == ["ActionAsked", "ConvoyAttackDeclared"] and kinds[-1] == "BattleEnded"
    searchers = next(r for r in records if r["kind"] == "SearchersChosen")
    assert searchers["data"]["units"] == ["FR-BM1", "GB-BM1", "GB-CA1", "GB-DD1", "GB-DD2", "GB-FT1"]
    dice = [r for r in records if r["kind"] == "DiceRolled"]
    assert all(r["data"]["source"] == "auto" for r in dice)
    assert [r["rule"] for r in dice][:7] == ["CV2"] + ["CV3"] * 6
    # CV4 with the defaults: targets, screens and casualties all the defaults' choices.
    choices = [r for r in records if r["kind"] in ("TargetsChosen", "ScreeningChosen", "CasualtiesChosen")]
    assert all(r["data"]["default"] for r in choices)
    rules = [r["rule"] for r in dice]
    assert rules == sorted(rules) and set(rules) <= {"CV2", "CV3", "CV4", "CV5"}  # the steps in order
    # CV4: one die per detecting unit, then one per submarine in the zone if a ship detected.
    (found,) = [r["data"]["detected"] for r in records if r["kind"] == "DetectionsRecorded"]
    subs = 2 - sum(1 for r in records if r["kind"] == "UnitHit" and r["rule"] == "CV2")
    ships = [u for u in found if u[3:5] in ("CA", "DD")]
    assert rules.count("CV4") == (len(found) + (subs if ships else 0) if found else 0)
    report = json.loads(run(db, "verify", "--json"))
    assert report["ok"] and report["rolls_checked"] == len(dice)
    assert "Britain collects" in run(db, "next")


def test_cli_convoy_auto_finishes_a_declared_battle(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    to_britain_collect(db)
    out = run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS2")
    assert "Waiting: battle 1" in out
    assert "battle 1 (convoy, Central North Sea): waiting for Britain to roll merchant defence" in run(db, "pending")
    out = run(db, "convoy", "auto", "1")
    assert "battle 1 ends" in out and "[CV7]" in out
    assert run(db, "pending") == "waiting for Britain to finish collect resources (tracker next) [T3]\n"
    refused(db, 1, "convoy", "declare", "--by", "Germany", "--zone", CNS)  # CV1: once per phase


def test_cli_convoy_auto_in_a_manual_dice_campaign_needs_dice_and_records_nothing(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS)
    assert "D4" in refused(db, 1, "convoy", "auto", "1")
    assert "CV1" in refused(db, 1, "convoy", "declare", "--by", "Austria-Hungary", "--zone", CNS, "--auto")


def test_cli_convoy_auto_of_a_battle_not_in_progress_is_refused(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    to_britain_collect(db)
    assert "no convoy battle 7" in refused(db, 2, "convoy", "auto", "7")
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--auto")
    assert refused(db, 1, "convoy", "auto", "1").startswith("Error: CV7: battle 1 (convoy) has ended")


def test_rk3_convoy_declare_auto_is_one_action_and_one_undo_takes_it_back(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    to_britain_collect(db)
    before = log(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--auto")
    recorded = log(db)[len(before) :]
    with Tracker(db) as t:
        actions = {e.action for e in t.events(t.campaign_id(None))[len(before) :]}
    assert actions == {recorded[0]["seq"]}
    run(db, "undo", "--override", "--reason", "declared by mistake", "--agreed-by", "Britain")
    after = log(db)
    assert all(r["undone_by"] for r in after[len(before) : len(before) + len(recorded)])
    state = json.loads(run(db, "state", "--json"))
    assert state["ntr"] == json.loads(run(db, "state", "--json", "--at", str(len(before))))["ntr"]
    # The declaration is undone too: Germany may declare again, in a fresh battle.
    out = run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--auto")
    assert "convoy battle 2" in out
    assert run(db, "verify").startswith("OK:")
