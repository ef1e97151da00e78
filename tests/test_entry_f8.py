"""Entry into the war (F8) on the world board, great-war-1914: neutral turns passed over and
recorded, a neutral nobody's enemy or ally and its territory closed, an entry brought forward
by an adjustment (AD1), and a full round played through the CLI with auto dice."""

from __future__ import annotations

import copy
import dataclasses
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import commitment, new_seed
from domain.errors import RuleViolation
from domain.rules import convoy
from domain.rules.economy import Adjustment
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance
from tracker.cli.main import cli

RULESET_DATA = load_ruleset("twtea-3e")[1]
WORLD, _ = read_scenario("great-war-1914")
NEUTRAL_IN_ROUND_1 = {"Ottoman Empire", "Italy", "United States"}


def new_world() -> Campaign:
    return Campaign.create(
        uuid.uuid4(), "world", copy.deepcopy(WORLD), copy.deepcopy(RULESET_DATA), "auto", commitment(new_seed())
    )


def advance_to(c: Campaign, nation: str, phase: str, round_: int | None = None) -> None:
    """`next` (enemies passing on convoy attacks) until the position, within two rounds."""
    for _ in range(2 * len(c.ruleset.phases) * len(c.scenario.turn_order)):
        if (c.nation, c.phase) == (nation, phase) and round_ in (None, c.round):
            return
        advance(c)
    raise AssertionError(f"never reached {nation} {phase} (round {round_})")


def units_of(c: Campaign, nation: str, zone: str, unit_type: str | None = None) -> list[str]:
    return sorted(
        uid
        for uid, u in c.units.items()
        if u["nation"] == nation and u["at"] == zone and unit_type in (None, u["type"])
    )


def recorded(c: Campaign, kind: str) -> list[Any]:
    """The events of this kind recorded since the last look (pending events, collected)."""
    return [e for e in c.collect_events() if type(e).__name__ == kind]


def refused(c: Campaign, rule: str, command: Any, *args: Any) -> str:
    """The command is refused citing `rule` and records nothing (RK2)."""
    before = c.version
    with pytest.raises(RuleViolation) as refusal:
        command(*args)
    assert refusal.value.rule == rule, str(refusal.value)
    assert c.version == before
    return str(refusal.value)


def test_f8_neutral_turns_are_passed_over_and_recorded() -> None:
    c = new_world()
    advance_to(c, "Germany", "research", 2)
    events: list[Any] = list(c.collect_events())
    passed = [(e.round, e.nation, e.rule) for e in events if type(e).__name__ == "TurnPassedOver"]
    assert passed == [(1, "Ottoman Empire", "F8"), (1, "Italy", "F8"), (1, "United States", "F8")]
    turns = [e.nation for e in events if type(e).__name__ == "PhaseAdvanced" and e.phase == "research"]
    # T1, F8: every nation at war played round 1, in turn order; the phasing nation was never neutral.
    assert ["Germany", *turns[:-1]] == ["Germany", "Britain", "Austria-Hungary", "France", "Russia", "Japan"]
    assert not NEUTRAL_IN_ROUND_1 & {e.nation for e in events if type(e).__name__ == "PhaseAdvanced"}
    # F8: a neutral collects nothing.
    collected = {e.nation for e in events if type(e).__name__ == "ResourcesCollected"}
    assert not collected & NEUTRAL_IN_ROUND_1
    assert c.balances["Italy"] == c.scenario.nations["Italy"].resources
    # The Ottoman Empire enters in round 2 and plays its turn.
    advance_to(c, "Ottoman Empire", "research", 2)
    assert c.at_war("Ottoman Empire") and not c.at_war("Italy")
    assert (c.round, c.nation, recorded(c, "TurnPassedOver")) == (2, "Ottoman Empire", [])


def test_f8_neutral_is_nobodys_enemy_until_entry() -> None:
    c = new_world()
    board = c.board()
    assert board.neutral == NEUTRAL_IN_ROUND_1
    assert board.enemies("Germany", "Britain") and board.allies("Britain", "France")
    assert not board.enemies("Germany", "Italy") and not board.enemies("Italy", "Austria-Hungary")
    assert not board.allies("Britain", "Italy") and not board.allies("Germany", "Ottoman Empire")
    # CV3: a neutral's ships never search for an ally's convoys.
    italians = set(units_of(c, "Italy", "Ionian Sea"))
    assert italians and not italians & {u.id for u in convoy.eligible_searchers(board, "Britain", "Ionian Sea")}
    # The Goeben and Breslau share the Ionian Sea with the Italian fleet: no battle is due
    # (NC1), none may be started (F8), and they sail on through Italian ships freely (SM1).
    advance_to(c, "Germany", "naval_combat")
    assert c.due_naval_battles() == []
    text = refused(c, "F8", c.naval_start, "Germany", "Ionian Sea")
    assert text == "F8: Italy is neutral in round 1 (at war from round 4): its units in Ionian Sea cannot be attacked"
    advance_to(c, "Germany", "noncombat_movement")
    goeben = units_of(c, "Germany", "Ionian Sea", "cruiser")
    c.move("Germany", goeben, ["Tyrrhenian Sea", "Central Mediterranean"])
    assert c.units[goeben[0]]["at"] == "Central Mediterranean"
    # From its entry round on, the Ottoman Empire is Britain's enemy like any Central Power.
    # CV1: Italian submarines share the Adriatic with Austria-Hungary's convoys, and may not attack them.
    # AS1: Austria-Hungary's escorts share the Northern Adriatic with an Italian submarine and
    # may not hunt it; nor attack the Italian cruiser there (NC1).
    advance_to(c, "Austria-Hungary", "naval_combat")
    text = refused(c, "F8", c.asw_start, "Austria-Hungary", "Northern Adriatic")
    assert text == (
        "F8: Italy is neutral in round 1 (at war from round 4): its submarines in Northern Adriatic cannot be searched"
    )
    refused(c, "F8", c.naval_start, "Austria-Hungary", "Northern Adriatic")
    advance_to(c, "Austria-Hungary", "collect_resources")
    assert units_of(c, "Italy", "Northern Adriatic", "submarine") and c.ntr["Austria-Hungary"]["Northern Adriatic"]
    assert "Italy" not in c.convoy_attacks_open()
    text = refused(
        c, "F8", c.declare_convoy_attack, "Italy", "Northern Adriatic", units_of(c, "Italy", "Northern Adriatic")
    )
    assert text == "F8: Italy is neutral in round 1 (at war from round 4): no convoy attack by or on it"
    advance_to(c, "Germany", "research", 2)
    board = c.board()
    assert board.neutral == {"Italy", "United States"}
    assert board.enemies("Ottoman Empire", "Britain") and board.allies("Ottoman Empire", "Germany")


def test_f8_no_belligerent_enters_neutral_land() -> None:
    c = new_world()
    advance_to(c, "Austria-Hungary", "combat_movement")
    fighter = units_of(c, "Austria-Hungary", "Istria", "fighter")
    text = refused(c, "F8", c.move, "Austria-Hungary", fighter, ["Venetia"])
    assert text == "F8: Venetia is Italy's territory and Italy is neutral: no unit may enter it"
    # Flying over it is entering it too.
    refused(c, "F8", c.move, "Austria-Hungary", fighter, ["Venetia", "Northern Adriatic"])
    # The sea beside it is open.
    c.move("Austria-Hungary", fighter, ["Northern Adriatic"])


def test_f8_a_neutral_territory_further_than_one_step_is_refused_as_neutral() -> None:
    # It was "F4: Apulia is not adjacent to Istria", with no way there offered and F8 unsaid.
    c = new_world()
    advance_to(c, "Austria-Hungary", "combat_movement")
    fighter = units_of(c, "Austria-Hungary", "Istria", "fighter")
    text = refused(c, "F8", c.move, "Austria-Hungary", fighter, ["Apulia"])
    assert text == "F8: Apulia is Italy's territory and Italy is neutral: no unit may enter it"
    refused(c, "F8", c.move, "Austria-Hungary", fighter, ["Northern Adriatic", "Apulia"])


def test_f8_entry_brought_forward_by_ad1() -> None:
    c = new_world()
    refused(c, "F8", c.adjust, Adjustment(enter=("Germany",)), "already at war")
    c.adjust(Adjustment(enter=("Italy",)), "the Treaty of London is signed early")
    (adjusted,) = recorded(c, "Adjusted")
    assert adjusted.enter == ["Italy"] and adjusted.reason == "the Treaty of London is signed early"
    assert c.at_war("Italy") and c.board().enemies("Italy", "Austria-Hungary")
    refused(c, "F8", c.adjust, Adjustment(enter=("Italy",)), "twice")
    advance_to(c, "Italy", "research", 1)
    assert [e.nation for e in recorded(c, "TurnPassedOver")] == ["Ottoman Empire"]


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def play_until(db: str, round_: int, nation: str) -> None:
    """`next` until the nation's turn opens in that round: an enemy that may attack convoys
    passes (CV1), a battle left open takes its defaults step by step."""
    for _ in range(300):
        state = json.loads(run(db, "state", "--json"))
        if (state["round"], state["nation"]) == (round_, nation):
            return
        result = CliRunner().invoke(cli, ["--db", db, "next"])
        if result.exit_code == 0:
            continue
        assert result.exit_code == 1, result.output
        for item in json.loads(run(db, "pending", "--json")):
            if not item["blocking"]:
                continue
            if item["kind"] == "convoy_open":
                run(db, "convoy", "pass", "--by", item["nation"])
            elif item["battle"] is not None:
                run(db, "battle", "step", str(item["battle"]))
            else:  # pragma: no cover - nothing else is left open when nobody moves
                raise AssertionError(item)
    raise AssertionError(f"never reached {nation} in round {round_}")


def test_f8_entry_brought_forward_by_ad1_is_replayed_verified_and_undone(tmp_path: Path) -> None:
    db = str(tmp_path / "world.db")
    run(db, "new", "world", "--scenario", "great-war-1914", "--dice", "auto")
    out = run(db, "adjust", "--enter", "Italy", "--reason", "Italy joins the Entente at once")
    assert "Italy enters the war now (F8)" in out
    out = run(db, "adjust", "--enter", "Japan", "--reason", "twice", code=1)
    assert out.startswith("Error: F8: Japan is already at war in round 1") and len(out.splitlines()) == 1
    play_until(db, 1, "Italy")
    kinds = [(r["kind"], r["data"].get("nation")) for r in json.loads(run(db, "log", "--json"))]
    assert ("TurnPassedOver", "Ottoman Empire") in kinds and ("TurnPassedOver", "Italy") not in kinds
    assert json.loads(run(db, "state", "--json"))["nation"] == "Italy"
    # The log rebuilt by verify (every action run again) agrees with what was recorded.
    assert run(db, "verify").startswith("OK:")


def test_f8_state_says_which_nations_are_neutral_and_until_when(tmp_path: Path) -> None:
    db = str(tmp_path / "world.db")
    run(db, "new", "world", "--scenario", "great-war-1914")
    state = json.loads(run(db, "state", "--json"))
    assert state["neutral"] == ["Ottoman Empire", "Italy", "United States"]
    text = " ".join(run(db, "state").split())
    assert "Neutral (F8): Ottoman Empire until round 2, Italy until round 4, United States until round 11" in text
    run(db, "adjust", "--enter", "Italy", "--reason", "Italy joins the Entente at once")
    assert json.loads(run(db, "state", "--json"))["neutral"] == ["Ottoman Empire", "United States"]
    # A board of the past reads the entries brought forward by then: none at event 1.
    assert json.loads(run(db, "state", "--at", "1", "--json"))["neutral"] == [
        "Ottoman Empire",
        "Italy",
        "United States",
    ]
    (adjusted,) = [r["seq"] for r in json.loads(run(db, "log", "--json")) if r["kind"] == "Adjusted"]
    assert "Italy" in json.loads(run(db, "state", "--at", str(adjusted - 1), "--json"))["neutral"]
    assert "Italy" not in json.loads(run(db, "state", "--at", str(adjusted), "--json"))["neutral"]


def test_f8_next_to_a_neutral_turn_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "world.db")
    run(db, "new", "world", "--scenario", "great-war-1914")
    out = run(db, "next", "--to", "research", "--nation", "United States", code=1)
    assert out == "Error: F8: United States is neutral until round 11: its turns are passed over\n"


def test_f8_undo_of_an_entry_makes_the_nation_neutral_again(tmp_path: Path) -> None:
    db = str(tmp_path / "world.db")
    run(db, "new", "world", "--scenario", "great-war-1914")
    early = ("adjust", "--enter", "United States", "--reason", "the Zimmermann telegram comes early")
    run(db, *early)
    assert run(db, *early, code=1).startswith("Error: F8: United States is already at war in round 1")
    run(db, "undo")  # RK3: the board as before the adjustment, the United States neutral again
    out = run(db, "next", "--to", "research", "--nation", "United States", code=1)
    assert out.startswith("Error: F8: United States is neutral until round 11")
    assert "United States enters the war now (F8)" in run(db, *early)
    assert run(db, "verify").startswith("OK:")


def test_a_full_round_of_great_war_1914_plays_with_auto_dice(tmp_path: Path) -> None:
    """T1-T4, F8 through the CLI: `next` through every nation's every phase of round 1, each
    enemy passing on convoy attacks it may make (CV1) and any battle played with the defaults."""
    db = str(tmp_path / "world.db")
    run(db, "new", "world", "--scenario", "great-war-1914", "--dice", "auto")
    play_until(db, 2, "Ottoman Empire")
    records = json.loads(run(db, "log", "--json"))
    passed = [(r["data"]["round"], r["data"]["nation"], r["rule"]) for r in records if r["kind"] == "TurnPassedOver"]
    assert passed == [(1, "Ottoman Empire", "F8"), (1, "Italy", "F8"), (1, "United States", "F8")]
    assert records[-1]["kind"] == "PhaseAdvanced" and records[-1]["data"]["nation"] == "Ottoman Empire"
    assert run(db, "verify").startswith("OK:")


def test_demo_plays_the_world_scenario_and_verifies(tmp_path: Path) -> None:
    """`tracker demo --scenario great-war-1914`: round 1 and the start of round 2 of the world
    board, told with the rules applied, its log re-refereed by verify."""
    db = str(tmp_path / "world-demo.db")
    out = run(db, "demo", "--scenario", "great-war-1914")
    assert "Campaign 'demo' in " in out and "9 nations" in out
    for line in (
        "refused: F8: Italy is neutral in round 1 (at war from round 4): its units in Ionian Sea cannot be attacked",
        "refused: F8: Venetia is Italy's territory and Italy is neutral: no unit may enter it",
        "refused: F8: Italy is neutral in round 1 (at war from round 4): no convoy attack by or on it",
        "[F8] round 1, Ottoman Empire: turn passed over",
        "[F8] round 1, United States: turn passed over",
        "[AD1] ADJUSTMENT: Italy enters the war now (F8)",
        "now round 2, Ottoman Empire: research",
        "now round 2, Italy: research",
        "Verify: hash chain intact",
    ):
        assert line in out, line
    assert "[F8] round 2, Italy" not in out and "naval battle in Arabian Sea" in out
    verified = run(db, "verify")
    assert verified.startswith("OK:") and "checked by hash only" not in verified


def world_with_germany_neutral() -> Campaign:
    scenario = copy.deepcopy(WORLD)
    scenario["nations"]["Germany"]["entry_round"] = 2
    return Campaign.create(uuid.uuid4(), "late", scenario, copy.deepcopy(RULESET_DATA), "auto", commitment(new_seed()))


def test_f8_a_campaign_whose_first_nation_is_neutral_opens_on_the_first_nation_at_war() -> None:
    c = world_with_germany_neutral()
    events = list(c.collect_events())
    assert [type(e).__name__ for e in events] == ["Created", "TurnPassedOver", "PhaseAdvanced"]
    assert (events[1].round, events[1].nation, events[1].rule) == (1, "Germany", "F8")
    assert (c.round, c.nation, c.phase) == (1, "Britain", "research")
    # Recorded with the creation, as its action: no undo takes them back.
    assert {e.action for e in events} == {1}
    # F8: the neutral collects nothing and plays no turn; it enters in round 2.
    advance_to(c, "Germany", "research", 2)
    assert c.balances["Germany"] == c.scenario.nations["Germany"].resources


def test_f8_the_creations_passed_over_turns_are_refereed_again_by_verify() -> None:
    from tracker.service.referee import Mismatch, referee_log

    events = list(world_with_germany_neutral().collect_events())
    assert referee_log(events).unasked_actions == 0
    # A forger who gives the first turn to another nation (chain re-hashed) is caught.
    forged = copy.copy(events[2])
    forged.__dict__["nation"] = "France"
    with pytest.raises(Mismatch, match="the campaign's creation"):
        referee_log([*events[:2], forged])
    # Or who adds a turn passed over to the creation.
    extra = copy.copy(events[1])
    extra.__dict__["originator_version"] = 4
    with pytest.raises(Mismatch, match="recorded by no action"):
        referee_log([*events, extra])


def test_f8_a_board_whose_first_nation_enters_later_through_the_cli(tmp_path: Path) -> None:
    from tests.test_scenario_tools import NORTH_SEA, edited

    path = tmp_path / "late.toml"
    path.write_text(edited(NORTH_SEA, "[nations.Germany]\n", "[nations.Germany]\nentry_round = 2\n"))
    db = str(tmp_path / "late.db")
    run(db, "new", "late", "--scenario", str(path))
    kinds = [(r["seq"], r["kind"], r["data"].get("nation")) for r in json.loads(run(db, "log", "--json"))]
    assert kinds == [(1, "Created", None), (2, "TurnPassedOver", "Germany"), (3, "PhaseAdvanced", "Britain")]
    assert run(db, "buy", "submarine", "--nation", "Germany", code=1).startswith("Error: T3:")
    assert run(db, "undo", code=1) == "Error: RK3: there is no action to undo\n"
    run(db, "next")
    out = run(db, "undo", "--to", "2", code=2)
    assert "event 3 was recorded with the campaign's creation, which no undo takes back; undo --to 3" in out
    run(db, "undo", "--to", "3", "--yes")
    out = run(db, "verify")
    assert out.startswith("OK:") and "recorded without their inputs" not in out
    exported = str(tmp_path / "late.jsonl")
    run(db, "export", exported)
    other = str(tmp_path / "other.db")
    run(other, "import", exported)
    assert run(other, "verify").startswith("OK:")


def test_f8_f7_an_air_unit_reaches_a_convoy_battle_over_no_neutrals_territory() -> None:
    c = new_world()
    board = c.board()
    (bomber,) = units_of(c, "Germany", "Northwest Germany", "bomber")
    unit = board.units[bomber]
    # Across the Alps the Northern Adriatic is six steps away, over neutral Italy (Venetia);
    # around Italy it is farther than a bomber's range (CV3 through F7: from where it is).
    move = board.unit_type(unit).move
    assert board.scenario.game_map.distance(unit.at, "Northern Adriatic") <= move
    around = board.air_distance(unit, "Northern Adriatic")
    assert around is None or around > move
    searchers = {u.id for u in convoy.eligible_searchers(board, "Austria-Hungary", "Northern Adriatic")}
    assert bomber not in searchers
    refusal = board.out_of_range(unit, "Northern Adriatic")
    assert refusal.rule == "F7" and "without flying over a neutral's territory (F8)" in refusal.reason
    # Once Italy is at war (its entry, or an adjustment's, AD1), the way over it is open.
    at_war = dataclasses.replace(board, neutral=frozenset())
    assert bomber in {u.id for u in convoy.eligible_searchers(at_war, "Austria-Hungary", "Northern Adriatic")}
