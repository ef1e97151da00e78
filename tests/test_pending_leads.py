"""`pending` and refusals that lead somewhere: an item offers a command only when it is legal now
(T3), the idle player reads whom the game waits for, `next` refused under T4 names the command
that closes what is open, a volley shared by allies says who rolls which dice (D3), and an
interception whose submarines all went on does not read as if they were lost (SM5).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.campaign.waiting import PlainDescriber
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from projections.summary import summary
from tests.support import advance
from tracker.cli.common import next_command
from tracker.cli.main import cli
from tracker.service.application import Tracker

RULESET = load_ruleset("twtea-3e")[1]
SCENARIO = read_scenario("north-sea-1914")[0]
CNS, HB, SNS = "Central North Sea", "Heligoland Bight", "Southern North Sea"
PORTS = "Dover Strait, Heligoland Bight, Southern North Sea"


def campaign(nation: str = "Germany", phase: str = "research") -> Campaign:
    """A fresh manual-dice campaign at round 1, `nation`'s `phase`."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    while (c.nation, c.phase) != (nation, phase):
        advance(c)
    return c


def advance_to(c: Campaign, phase: str) -> None:
    while c.phase != phase:
        advance(c)


def next_refused(c: Campaign) -> str:
    """`next` is refused under T4 and records nothing (RK2); its reason."""
    before = c.version + len(c.pending_events)
    with pytest.raises(RuleViolation) as refused:
        c.advance()
    assert refused.value.rule == "T4"
    assert c.version + len(c.pending_events) == before
    return refused.value.reason


def events(c: Campaign, kind: str) -> list[Any]:
    return [e for e in c.pending_events if type(e).__name__ == kind]


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def pending_json(db: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(run(db, "pending", "--json"))
    return items


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "leads.db")
    run(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    return path


# ----- T3: units bought are placed in placement -----


def test_t3_units_bought_say_they_are_placed_in_placement_and_offer_no_command_before() -> None:
    c = campaign(phase="purchase")
    c.buy("Germany", "submarine")
    advance(c)
    (item,) = [i for i in c.pending() if i["kind"] == "unplaced"]
    assert item["text"] == (
        f"Germany has 1 submarine bought this turn, to place in placement (legal now: {PORTS}) [PU2]"
    )
    assert (item["blocking"], next_command(item)) == (False, None)
    # Placing it now is what the item no longer offers: T3 refuses it.
    with pytest.raises(RuleViolation) as refused:
        c.place("Germany", "submarine", HB)
    assert refused.value.rule == "T3"
    advance_to(c, "placement")
    (item,) = c.pending()
    assert item["text"] == f"Germany has 1 submarine bought and not placed (legal: {PORTS}) [PU2]"
    # A command that works as it stands: the first legal zone (the text lists every one).
    assert (item["blocking"], next_command(item)) == (True, "tracker place submarine --at 'Dover Strait'")


def test_t3_pending_names_no_command_for_units_that_cannot_be_placed_yet(db: str) -> None:
    run(db, "next")
    run(db, "buy", "submarine")
    run(db, "next")
    out = run(db, "pending")
    assert "Germany has 1 submarine bought this turn, to place in placement" in out
    assert "tracker place" not in out
    (unplaced,) = [i for i in pending_json(db) if i["kind"] == "unplaced"]
    assert unplaced["command"] is None
    # The same item keeps the keys every item has, and the zones where the units may go.
    assert set(unplaced) == {
        "battle", "kind", "zone", "step", "waiting", "rule", "blocking", "text", "unit_type", "count", "legal",
        "command",
    }  # fmt: skip
    assert unplaced["legal"] == PORTS.split(", ")


def test_pu2_t3_units_bought_are_named_in_one_line_after_a_purchase_until_placement(db: str) -> None:
    # Each type bought printed its own line with every zone it may go to (27 for Britain's
    # ships on the whole war's map), after every purchase and move: what the action did was
    # buried. One line names them after a purchase, none after a move, which changes nothing
    # about them; `pending` keeps the zones.
    run(db, "next")
    run(db, "buy", "submarine")
    out = run(db, "buy", "destroyer")
    assert out.splitlines()[1:] == [
        "Waiting: Germany has 1 destroyer, 1 submarine bought this turn, to place in placement "
        "(where: tracker pending) [PU2]"
    ]
    run(db, "next")
    out = run(db, "move", "de-dd1", "--to", "skagerrak")
    assert out.splitlines()[1:] == []
    assert f"(legal now: {PORTS})" in run(db, "pending")
    # In placement the items block `next`, each with its zones and the command that places it.
    run(db, "next", "--to", "placement")
    out = run(db, "place", "submarine", "--at", "dover strait")
    assert f"Waiting: Germany has 1 destroyer bought and not placed (legal: {PORTS}) [PU2]" in out
    assert "next: tracker place destroyer --at 'Dover Strait'" in out


# ----- T3: the idle player reads whom the game waits for -----


def test_t3_pending_with_nothing_open_waits_for_the_phasing_nation_to_finish_its_phase(db: str) -> None:
    run(db, "next")
    run(db, "next")
    assert run(db, "pending") == "waiting for Germany to finish combat movement (tracker next) [T3]\n"
    assert pending_json(db) == [
        {
            "battle": None,
            "kind": "turn",
            "zone": None,
            "step": "open",
            "waiting": ["Germany"],
            "rule": "T3",
            "blocking": False,
            "text": "waiting for Germany to finish combat movement (tracker next) [T3]",
            "nation": "Germany",
            "phase": "combat_movement",
            "round": 1,
            "command": "tracker next",
        }
    ]


def test_t3_the_turn_item_comes_first_and_leaves_later_items_listed() -> None:
    c = campaign(phase="purchase")
    c.buy("Germany", "submarine")
    assert [i["kind"] for i in c.pending(turn=True)] == ["turn", "unplaced"]
    # Hand-offs read `pending()`: the turn passing is a hand-off of its own, not an item owed.
    assert [i["kind"] for i in c.pending()] == ["unplaced"]


def test_t3_no_turn_item_while_something_keeps_the_phase_open() -> None:
    c = campaign("Britain", "collect_resources")
    # CV1: Germany may declare a convoy attack: that is what the game waits for, not Britain.
    assert [(i["kind"], i["waiting"]) for i in c.pending(turn=True)] == [("convoy_open", ["Germany"])]
    c.convoy_pass("Germany")
    (turn,) = c.pending(turn=True)
    assert (turn["kind"], turn["waiting"], turn["phase"]) == ("turn", ["Britain"], "collect_resources")
    assert turn["text"] == "waiting for Britain to finish collect resources (tracker next) [T3]"


def test_t3_a_player_whose_nations_owe_nothing_reads_whom_the_game_waits_for_through_the_server(
    db: str, tmp_path: Path
) -> None:
    from tracker.server.commands import run_command
    from tracker.server.served import ServedTracker
    from tracker.service.players import Player

    run(db, "next")
    served = ServedTracker(db, keys=str(tmp_path / "keys.db"))
    try:
        cid = served.registry.lookup("autumn")
        bert = Player(str(cid), "bert", ("Britain",), False)
        done = run_command(served, bert, "autumn", ["pending"])
        assert (done["exit"], done["stdout"]) == (0, "waiting for Germany to finish purchase (tracker next) [T3]\n")
        done = run_command(served, bert, "autumn", ["pending", "--json"])
        (item,) = json.loads(done["stdout"])
        assert (item["kind"], item["waiting"], item["phase"]) == ("turn", ["Germany"], "purchase")
    finally:
        served.close()


# ----- T4: `next` refused names the command that closes what is open -----


def test_t4_next_refused_for_units_to_place_names_the_place_command() -> None:
    c = campaign(phase="purchase")
    c.buy("Germany", "submarine")
    advance_to(c, "placement")
    assert next_refused(c) == (
        f"placement cannot end yet: Germany has 1 submarine bought and not placed (legal: {PORTS}) [PU2]; "
        "to close it: tracker place submarine --at 'Dover Strait'"
    )


def test_t4_next_refused_for_several_units_to_place_names_a_command_placing_them_all(db: str) -> None:
    run(db, "next")
    run(db, "buy", "submarine", "2")
    run(db, "next", "--to", "placement")
    out = run(db, "next", code=1)
    assert out.endswith("; to close it: tracker place submarine --count 2 --at 'Dover Strait'\n")
    # It closes what is open: the phase ends after it.
    run(db, "place", "submarine", "--count", "2", "--at", "Dover Strait")
    run(db, "next")


def test_t4_next_refused_for_a_naval_battle_due_names_battle_start() -> None:
    c = campaign(phase="combat_movement")
    c.move("Germany", ["DE-CA1", "DE-BB1", "DE-BB2"], [CNS])
    advance(c)
    reason = next_refused(c)
    assert reason.startswith(f"naval combat cannot end yet: naval battle due in {CNS}")
    assert reason.endswith(f"[NC1]; to close it: tracker battle start --zone '{CNS}'")


def test_t4_next_refused_for_a_convoy_attack_open_names_declare_or_pass() -> None:
    c = campaign("Britain", "collect_resources")
    assert next_refused(c) == (
        f"collect resources cannot end yet: Germany may declare a convoy attack on Britain's NTR in {CNS}, "
        f"or pass [CV1]; to close it: tracker convoy declare --by Germany --zone '{CNS}', "
        "or tracker convoy pass --by Germany"
    )


def test_t4_next_refused_during_a_procedure_names_the_command_of_its_step() -> None:
    c = campaign("Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", CNS, None)
    assert next_refused(c).endswith(f"[CV2]; to close it: tracker convoy roll {b} --dice V,V [--ref ROLL_ID]")


def test_t4_next_refused_on_the_command_line_names_the_command(db: str) -> None:
    run(db, "next")
    run(db, "buy", "submarine")
    run(db, "next", "--to", "placement")
    out = run(db, "next", code=1)
    assert out.startswith("Error: T4: placement cannot end yet: Germany has 1 submarine bought and not placed")
    assert out.endswith("; to close it: tracker place submarine --at 'Dover Strait'\n")
    # The command named is one that closes it.
    run(db, "place", "submarine", "--at", "Dover Strait")
    run(db, "next")


def test_t4_without_the_trackers_words_the_refusal_names_no_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Campaign, "describer", PlainDescriber())
    c = campaign("Britain", "collect_resources")
    assert next_refused(c) == "collect resources cannot end yet: convoy_open for Germany [CV1]"


# ----- D3: a volley shared by allies says who rolls which dice -----


def test_d3_a_volley_shared_by_allies_says_who_rolls_which_dice() -> None:
    c = campaign("Britain", "collect_resources")
    c.units["FR-DD1"]["at"] = CNS  # direct setup: French ships with the British convoy
    c.units["FR-CA1"]["at"] = CNS
    b = c.declare_convoy_attack("Germany", CNS, None)
    c.convoy_merchant_defence(b, ManualDice([1, 1]))
    c.convoy_search(b, ["FR-BM1", "FR-CA1", "FR-DD1"], ManualDice([2, 4, 4]))
    c.choose_targets(b, "Germany", {"DE-SS1": "FR-DD1", "DE-SS2": "FR-DD1"})
    c.choose_targets(b, "Britain", {"FR-BM1": "DE-SS2"})
    c.choose_screens(b, "Britain", {})
    (item,) = c.pending()
    # The battle waits for the nation it names for each side; France's units fire on Britain's.
    assert (item["step"], item["waiting"]) == ("fire", ["Britain", "Germany"])
    assert item["text"].endswith(
        "in this order: FR-BM1, FR-CA1, FR-DD1, DE-SS1, DE-SS2 "
        "(France rolls FR-BM1, FR-CA1, FR-DD1; Germany rolls DE-SS1, DE-SS2); Britain records them, Germany's too [CV4]"
    )
    assert item["dice"]["order"] == ["FR-BM1", "FR-CA1", "FR-DD1", "DE-SS1", "DE-SS2"]
    c.fire(b, ManualDice([10, 10, 10, 1, 10]))
    rolled = [(e.roller, e.unit) for e in events(c, "DiceRolled") if e.rule == "CV4"]
    assert rolled == [
        ("France", "FR-BM1"),
        ("France", "FR-CA1"),
        ("France", "FR-DD1"),
        ("Germany", "DE-SS1"),
        ("Germany", "DE-SS2"),
    ]


def test_d3_a_volley_of_the_waiting_nations_alone_names_no_rollers() -> None:
    c = campaign("Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", CNS, None)
    c.convoy_merchant_defence(b, ManualDice([1, 1]))
    c.convoy_search(b, ["GB-BM1", "GB-FT1"], ManualDice([1, 1]))
    c.choose_targets(b, "Britain", {"GB-BM1": "DE-SS2", "GB-FT1": "DE-SS1"})
    (item,) = c.pending()
    assert item["text"].endswith("to roll 2 dice, one per firing unit in this order: GB-BM1, GB-FT1 [CV4]")


# ----- SM5: an interception whose submarines went on -----


def test_sm5_an_interception_whose_submarines_all_went_on_does_not_say_none_is_still_there() -> None:
    c = campaign(phase="combat_movement")
    subs = ["DE-SS3", "DE-SS4", "DE-SS5"]
    c.move("Germany", subs, [SNS, "Dover Strait"])
    b = c.battle_count
    c.intercept_search(b, [], ManualDice([]))
    c.intercept_continue(b, None)
    (ended,) = events(c, "BattleEnded")
    assert (ended.rule, ended.survivors) == ("SM5", [])
    text = summary(ended)
    assert "still there" not in text
    assert text.endswith("; none stayed: the free submarines went on (the move follows)")
    (moved,) = [e for e in events(c, "UnitsMoved") if e.path[0] == SNS]
    assert (moved.units, moved.path[-1]) == (subs, "Dover Strait")


def test_sm5_an_interception_with_a_submarine_left_names_it_still_there() -> None:
    c = campaign(phase="combat_movement")
    c.move("Germany", ["DE-SS3", "DE-SS4"], [SNS, "Dover Strait"])
    b = c.battle_count
    c.intercept_search(b, [], ManualDice([]))
    c.intercept_continue(b, ["DE-SS4"])
    (ended,) = events(c, "BattleEnded")
    # The survivors named are the submarines alone: the searchers are still there too.
    assert summary(ended).endswith("; submarines still there: DE-SS4")


def test_sm4_an_interception_whose_submarine_retreated_does_not_say_none_is_still_there() -> None:
    """DE-SS4 is detected, survives a round and goes back; GB-DD3, which found it, stays: the
    end names no submarine left, not "still there: none" (which read as if all were sunk)."""
    c = campaign(phase="combat_movement")
    c.move("Germany", ["DE-SS4"], [SNS, "Dover Strait"])
    b = c.battle_count
    c.intercept_search(b, ["GB-DD3"], ManualDice([1]))
    c.fire(b, ManualDice([9, 9]))
    c.intercept_decide(b, None, ["DE-SS4"])
    (ended,) = events(c, "BattleEnded")
    assert (ended.rule, ended.survivors) == ("SM4", [])
    assert c.units["GB-DD3"]["at"] == SNS
    text = summary(ended)
    assert "still there: none" not in text
    assert text.endswith("; no submarine is still there")


def test_as5_asw_combat_that_sank_every_submarine_names_no_submarine_left() -> None:
    """The hunters of ASW combat stay in the zone: with both British submarines sunk, the end
    says no submarine is left, not that nothing is."""
    c = campaign(phase="naval_combat")
    b = c.asw_start("Germany", HB)
    c.asw_search(b, None, ManualDice([1, 1, 9, 9, 9, 9]))
    c.battle_auto(b, ManualDice([1, 1, 1, 9, 9]))
    (ended,) = events(c, "BattleEnded")
    assert ended.survivors == []
    assert summary(ended).endswith("; no submarine is still there")


def test_nc1_a_naval_battle_the_attacker_left_names_the_defenders_still_there() -> None:
    c = campaign(phase="combat_movement")
    c.move("Germany", ["DE-BB1", "DE-CA1", "DE-DD1"], [SNS])
    advance_to(c, "naval_combat")
    b = c.naval_start("Germany", SNS)
    c.fire(b, ManualDice([9] * 7))
    c.naval_decide(b, "Germany", None, HB)
    (ended,) = events(c, "BattleEnded")
    assert summary(ended).endswith("; still there: GB-CA2, GB-DD3, GB-DD4, GB-DD5")


def test_t3_tracker_loads_campaigns_with_the_trackers_words(db: str) -> None:
    """The words above are the tracker's: a campaign loaded by the tracker speaks them."""
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
    assert c.pending(turn=True)[0]["text"] == "waiting for Germany to finish research (tracker next) [T3]"


# ----- NC1, AS1: what the phasing nation may start but need not -----


def test_nc1_as1_pending_lists_the_battles_one_may_start_with_their_commands(db: str) -> None:
    for _ in range(3):
        run(db, "next")
    assert run(db, "pending") == (
        "waiting for Germany to finish naval combat (tracker next) [T3]\n"
        "Germany may start a naval battle in Central North Sea, or not (Germany: 2 submarines; "
        "Britain: 2 destroyers, 1 cruiser) [NC1]\n"
        "  next: tracker battle start --zone 'Central North Sea'\n"
        "Germany may start ASW combat in Heligoland Bight against GB-SS1, GB-SS2, or not [AS1]\n"
        "  next: tracker asw start --zone 'Heligoland Bight'\n"
    )
    turn, naval, asw = pending_json(db)
    assert turn["kind"] == "turn"
    # Nobody is waited for: the phase may end without them, and no inbox or hand-off names them.
    assert (naval["kind"], naval["zone"], naval["rule"], naval["blocking"], naval["waiting"]) == (
        "naval_may", CNS, "NC1", False, [],
    )  # fmt: skip
    assert (asw["kind"], asw["zone"], asw["rule"], asw["blocking"], asw["waiting"], asw["submarines"]) == (
        "asw_may", HB, "AS1", False, [], ["GB-SS1", "GB-SS2"],
    )  # fmt: skip


def test_as1_the_command_pending_names_starts_the_asw_combat(db: str) -> None:
    for _ in range(3):
        run(db, "next")
    asw = [i for i in pending_json(db) if i["kind"] == "asw_may"][0]
    assert asw["command"] == "tracker asw start --zone 'Heligoland Bight'"
    run(db, "asw", "start", "--zone", HB)
    # A combat under way is what pending lists now; nothing optional until it ends.
    kinds = [i["kind"] for i in pending_json(db)]
    assert kinds == ["asw"] and "may start" not in run(db, "pending")


def test_nc1_as1_optional_battles_never_hold_the_phase_nor_reach_hand_offs() -> None:
    c = campaign(phase="naval_combat")
    assert [i["kind"] for i in c.pending(turn=True)] == ["turn", "naval_may", "asw_may"]
    assert c.pending() == []
    c.asw_start("Germany", HB)
    b = c.battle_count
    c.asw_search(b, None, ManualDice([6] * 6))  # 3 searchers x 2 submarines, none detected: it ends (AS2)
    # Fought once in this zone and phase (AS1): no longer offered; the naval battle still is.
    assert [(i["kind"], i["zone"]) for i in c.pending(turn=True)] == [("turn", None), ("naval_may", CNS)]
    c.advance()
    assert c.phase == "land_combat"
    assert [i["kind"] for i in c.pending(turn=True)] == ["turn"]


def test_nc1_a_battle_due_is_listed_once_as_due_not_as_optional() -> None:
    c = campaign(phase="combat_movement")
    c.move("Germany", ["DE-DD1"], [SNS])
    while c.phase != "naval_combat":
        advance(c) if c.phase != "combat_movement" else c.advance()
    kinds = [(i["kind"], i["zone"]) for i in c.pending(turn=True)]
    assert ("naval_due", SNS) in kinds and ("naval_may", SNS) not in kinds


def test_pu1_buy_takes_its_count_as_a_word_or_as_count_as_place_does(db: str) -> None:
    """`place submarine --count 2 --at ...` is how `pending` writes a placement; `buy submarine
    --count 2` was answered "no such option --count; did you mean --json?"."""
    run(db, "next")
    assert "Germany buys 2 submarines" in run(db, "buy", "submarine", "--count", "2")
    out = run(db, "buy", "destroyer", "1", "--count", "2", code=2)
    assert "COUNT 1 and --count 2 disagree" in out
    assert "Germany buys 1 destroyer" in run(db, "buy", "destroyer", "--count", "1", "1")


def test_pu2_place_takes_its_count_as_a_word_as_buy_does(db: str) -> None:
    """`buy submarine 2` takes the count as a word; `place submarine 2 --at ...` was refused
    ("got unexpected extra argument") and needed --count."""
    run(db, "next")
    run(db, "buy", "submarine", "2")
    run(db, "next", "--to", "placement")
    out = run(db, "place", "submarine", "2", "--count", "1", "--at", "Dover Strait", code=2)
    assert "COUNT 2 and --count 1 disagree" in out
    out = run(db, "place", "submarine", "2", "--at", "Dover Strait")
    assert "places DE-SS" in out and "DE-SS" in out.split("places", 1)[1].split(",", 1)[1]
    run(db, "next")
