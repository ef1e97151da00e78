"""Undo and redo: RK3 locks (dice, and the other side's answers), overrides agreed by the other
side, rerolls; RK4 redo with the recorded dice; `undo --to` listing and confirmation; older
undo events (schema version 1) still load and verify."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import update

from domain.campaign import Campaign
from domain.chain import event_content, event_hash
from domain.dice import DiceSource
from domain.errors import InputError, RuleViolation
from domain.rules.record import plan_undo
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario, scenario_from_dict
from tests.support import advance as advance_passing
from tracker.cli.commands import history as cli_history
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.storage.rows import plain_state

CNS, HB, SNS = "Central North Sea", "Heligoland Bight", "Southern North Sea"


def run(db: str, *args: str, code: int = 0, input: str | None = None) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], input=input)
    assert result.exit_code == code, result.output
    return result.output


def log(db: str) -> list[dict[str, Any]]:
    return json.loads(run(db, "log", "--json"))


def refused(db: str, code: int, *args: str) -> str:
    before = log(db)
    out = run(db, *args, code=code)
    assert out.startswith("Error: ") and out.count("\n") == 1, out
    assert log(db) == before, "a refused action records nothing"
    return out


def advance_to(t: Tracker, phase: str, nation: str = "Germany") -> None:
    def command(c: Campaign, _d: DiceSource) -> None:
        while (c.nation, c.phase) != (nation, phase):
            advance_passing(c)

    t.execute(t.campaign_id(None), command)


def naval_battle_at_screens(db: str) -> None:
    """Germany's naval battle in the Central North Sea, Germany's targets chosen (asked at event
    10, chosen at 11) and Britain's screens (asked at 13, chosen at 14), manual dice."""
    run(db, "new", "n", "--scenario", "north-sea-1914", "--dice", "manual")
    with Tracker(db) as t:
        advance_to(t, "naval_combat")
    run(db, "battle", "start", "--zone", CNS)
    run(db, "battle", "targets", "1", "--targets", "DE-SS1=GB-CA1,DE-SS2=GB-CA1")
    run(db, "battle", "screen", "1", "--screens", "")
    assert [(r["seq"], r["kind"]) for r in log(db) if r["seq"] >= 10][:3] == [
        (11, "TargetsChosen"),
        (12, "BattleAdvanced"),
        (14, "ScreeningChosen"),
    ]


def board(db: str) -> dict[str, Any]:
    data = json.loads(run(db, "state", "--json"))
    data.pop("seq", None)
    return data


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "u.db")


# ----- RK3: what locks an action -----

_, RULESET = load_ruleset("twtea-3e")
_SCENARIO_DATA, _ = read_scenario("north-sea-1914")


def _event(kind: str, version: int, action: int, /, **fields: Any) -> Any:
    return type(kind, (SimpleNamespace,), {})(originator_version=version, action=action, **fields)


def _plan(events: list[Any]) -> Any:
    from domain.ruleset import ruleset_from_dict

    scenario = scenario_from_dict(_SCENARIO_DATA, "north-sea-1914", ruleset_from_dict(RULESET, "r"))
    before = {"round": 1, "nation": "Germany", "phase": "combat_movement", "battles": {}}
    return plan_undo(events, before, scenario)


def test_rk3_an_answer_by_the_other_side_locks_the_action_before_it() -> None:
    plan = _plan([_event("UnitsMoved", 5, 5, nation="Germany"), _event("UnitsMoved", 6, 6, nation="Britain")])
    assert [(lock.action, lock.nation, lock.because) for lock in plan.locks] == [
        (5, "Germany", "action 5 by Germany was answered by Britain at event 6")
    ]


def test_rk3_an_ally_acting_after_does_not_lock() -> None:
    plan = _plan([_event("UnitsMoved", 5, 5, nation="Germany"), _event("UnitsMoved", 6, 6, nation="Austria-Hungary")])
    assert plan.locks == () and [a.start for a in plan.actions] == [5, 6]


def test_rk3_an_answer_undone_later_still_locks_what_it_answered() -> None:
    plan = _plan(
        [
            _event("TargetsChosen", 5, 5, nation="Germany"),
            _event("ScreeningChosen", 6, 6, nation="Britain"),
            _event("ActionUndone", 7, 7, undone_from=6, undone_to=6, restored={}),
        ]
    )
    assert [a.start for a in plan.actions] == [5]
    assert [lock.because for lock in plan.locks] == ["action 5 by Germany was answered by Britain at event 6"]


def test_rk3_dice_lock_their_own_action_and_every_action_before() -> None:
    dice = {"roller": "Germany", "rule": "TE1", "kind": "research", "unit": None}
    plan = _plan(
        [
            _event("UnitsMoved", 5, 5, nation="Germany"),
            _event("ResearchPaid", 6, 6, nation="Germany"),
            _event("DiceRolled", 7, 6, roll=3, **dice),
        ]
    )
    assert [lock.because for lock in plan.locks] == [
        "action 5 by Germany is followed by dice (roll 3 at event 7)",
        "action 6 by Germany rolled dice (roll 3)",
    ]
    assert plan.rolls == [3]
    assert plan.undone_rolls[0] | {"round": 1} == {
        **dice,
        "roll": 3,
        "round": 1,
        "nation": "Germany",
        "phase": "combat_movement",
    }


def test_rk3_a_phase_change_is_the_phasing_nations_action() -> None:
    plan = _plan(
        [
            _event("PhaseAdvanced", 5, 5, round=1, nation="Britain", phase="research"),
            _event("NtrPlaced", 6, 6, nation="Britain"),
        ]
    )
    assert [(a.start, a.nation) for a in plan.actions] == [(5, "Germany"), (6, "Britain")]
    assert [lock.nation for lock in plan.locks] == ["Germany"]


def test_rk3_screens_answered_lock_the_targets_plain_undo_refused(db: str) -> None:
    naval_battle_at_screens(db)
    out = run(db, "undo")
    assert out.startswith("undo of events 13-15   [RK3]\nUndone: 1 action in events 13-15")
    assert "  action 13 by Britain:\n    14  battle 1: Britain screens nothing (chosen)   [HA1]\n" in out
    # Britain has seen Germany's targets and answered: Germany cannot take them back alone,
    # though Britain's answer was taken back since.
    assert refused(db, 1, "undo") == (
        "Error: RK3: action 10 by Germany was answered by Britain at event 13; Britain's answer was undone since "
        "by event 17, but it was seen: it still locks; undo it only with --override "
        "--reason TEXT --agreed-by NATION (a nation of another side than Germany)\n"
    )
    assert "needs --reason" in refused(db, 2, "undo", "--override", "--agreed-by", "Britain")
    assert "needs --agreed-by NATION" in refused(db, 2, "undo", "--override", "--reason", "misclick")
    assert "not Austria-Hungary" in refused(
        db, 1, "undo", "--override", "--reason", "misclick", "--agreed-by", "Austria-Hungary"
    )
    out = run(db, "undo", "--override", "--reason", "misclick", "--agreed-by", "Britain")
    assert out.startswith(
        "undo of events 10-17 OVERRIDE (no dice undone; agreed by Britain; reason: misclick)   [RK3]\n"
    )
    last = log(db)[-1]["data"]
    assert last["agreed_by"] == ["Britain"] and last["locks"] == [
        {"action": 10, "nation": "Germany", "because": "action 10 by Germany was answered by Britain at event 13"}
    ]


def test_rk3_override_undo_then_the_same_roll_is_listed_as_a_reroll(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914", dice="auto").id
    research = lambda c, d: c.research("Germany", "advanced_asw", d)  # noqa: E731
    tracker.execute(cid, research)
    tracker.undo(cid, override=True, reason="wrong technology", agreed_by=["France"])
    tracker.execute(cid, research)
    (reroll,) = [e for e in tracker.events(cid) if isinstance(e, Campaign.DiceRerolled)]
    assert (reroll.roll, reroll.rerolls, reroll.roller, reroll.rule) == (2, 1, "Germany", "TE1")
    # Another technology is no reroll of the first, and a reroll is flagged only once.
    tracker.execute(cid, lambda c, d: c.research("Germany", "advanced_submarine", d))
    assert [type(e).__name__ for e in tracker.events(cid)].count("DiceRerolled") == 1


def test_rk3_cli_reroll_in_verify_and_report(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "research", "advanced_asw")
    run(db, "undo", "--override", "--reason", "wrong tech", "--agreed-by", "Britain")
    out = run(db, "research", "advanced_asw")
    assert "REROLL: roll 2 (Germany, TE1) makes again roll 1, taken back by override undo event" in out
    out = run(db, "verify")
    assert "Rerolls after an override undo (RK3):\n" in out and "roll 2 rerolls roll 1" in out
    md = run(db, "report", "--turn", "1")
    assert "REROLL: roll 2 (Germany, TE1) makes again roll 1" in md
    assert "agreed by Britain" in md


def test_rk3_rk4_verify_marks_a_reroll_taken_back_by_a_later_undo(db: str) -> None:
    # A reroll undone (override) and redone is one reroll in play: verify lists the undone
    # record as undone, as the report strikes it through, and the redone one as it is.
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "research", "advanced_asw")
    run(db, "undo", "--override", "--reason", "wrong tech", "--agreed-by", "Britain")
    run(db, "research", "advanced_asw")
    out = run(db, "undo", "--override", "--reason", "again", "--agreed-by", "Britain")
    undo = next(r["seq"] for r in reversed(log(db)) if r["kind"] == "ActionUndone")
    run(db, "redo")
    rerolls = [(r["seq"], r["undone_by"]) for r in log(db) if r["kind"] == "DiceRerolled"]
    assert len(rerolls) == 2 and rerolls[0][1] == undo and rerolls[1][1] is None, out
    listed = json.loads(run(db, "verify", "--json"))["rerolls"]
    assert [item["seq"] for item in listed] == [seq for seq, _ in rerolls]
    assert listed[0]["text"].endswith(f"(undone by event {undo})")
    assert "undone" not in listed[1]["text"]


def test_rk3_undo_to_an_event_already_undone_is_refused(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914")
    run(db, "next")
    run(db, "next")
    run(db, "undo")
    assert "event 5 was undone by event 7" in refused(db, 2, "undo", "--to", "5", "--yes")
    assert "event 5 is part of the action that began at event 4" in refused(db, 2, "undo", "--to", "4", "--yes")


# ----- RK4: redo -----


def test_rk4_undo_then_redo_never_changes_a_result(db: str) -> None:
    naval_battle_at_screens(db)
    run(db, "battle", "fire", "1", "--dice", "1,9,9,9,9")
    before, rolls = board(db), [r for r in log(db) if r["kind"] == "DiceRolled"]
    run(db, "undo", "--override", "--reason", "read the wrong die", "--agreed-by", "Britain")
    out = run(db, "redo")
    assert out.startswith("redo of action 16 (undone by event ")
    assert "reusing its dice (roll 1, 2, 3, 4, 5)   [RK4]" in out
    assert board(db) == before
    redone = [r for r in log(db) if r["kind"] == "DiceRolled" and not r["undone_by"]]
    assert [(r["data"]["roll"], r["data"]["values"]) for r in redone] == [
        (r["data"]["roll"], r["data"]["values"]) for r in rolls
    ]
    assert run(db, "verify").startswith("OK:")


def test_rk4_redo_reuses_auto_dice_and_the_roll_counter_never_rewinds(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914", dice="auto").id
    tracker.execute(cid, lambda c, d: c.research("Germany", "advanced_asw", d))
    tracker.execute(cid, lambda c, d: c.research("Germany", "advanced_submarine", d))
    first = [e for e in tracker.events(cid) if isinstance(e, Campaign.DiceRolled)]
    state = tracker.load(cid).game_state()
    tracker.undo(cid, to=1, override=True, reason="both wrong", agreed_by=["Britain"])
    tracker.redo(cid)
    assert tracker.load(cid).roll_count == 2  # roll 1 came back; roll 2 was already used
    tracker.redo(cid)
    assert tracker.load(cid).game_state() == state
    again = [e for e in tracker.events(cid) if isinstance(e, Campaign.DiceRolled)][2:]
    assert [(e.roll, e.values) for e in again] == [(e.roll, e.values) for e in first]
    assert not any(isinstance(e, Campaign.DiceRerolled) for e in tracker.events(cid))
    tracker.execute(cid, advance)
    tracker.execute(cid, advance)
    while tracker.load(cid).nation == "Germany":
        tracker.execute(cid, advance)
    tracker.execute(cid, lambda c, d: c.research("Britain", "advanced_asw", d))
    assert [e.roll for e in tracker.events(cid) if isinstance(e, Campaign.DiceRolled)][-1] == 3


def advance(c: Campaign, _d: DiceSource) -> None:
    advance_passing(c)


def test_rk4_redo_is_refused_once_something_new_was_recorded(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914")
    assert refused(db, 1, "redo") == (
        "Error: RK4: nothing to redo: event 1 is not an undo; redo puts back what an undo took, "
        "only while nothing new was recorded since\n"
    )
    run(db, "next")
    run(db, "undo")
    run(db, "next")
    assert refused(db, 1, "redo").startswith(
        "Error: RK4: nothing to redo: the last action, next at event 6, is not an undo; redo puts back"
    )


def test_rk4_redo_all_puts_back_every_action_of_the_last_undo_in_order(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914")
    for _ in range(3):
        run(db, "next")
    before = board(db)
    out = run(db, "undo", "--to", "1", "--yes")
    assert "Undone: 3 actions in events 2-7 (3 events in play)" in out
    out = run(db, "redo")
    assert out.startswith("redo of action 2 (undone by event 9)   [RK4]\nround 1, Germany: purchase   [T2]")
    out = run(db, "redo", "--all")
    assert out.count("redo of action") == 2 and out.index("action 4") < out.index("action 6")
    assert board(db) == before
    assert refused(db, 1, "redo") == "Error: RK4: nothing to redo: every action of the last undo was redone\n"


def test_rk4_two_undos_redo_most_recent_first_and_undo_of_a_redo_is_a_plain_undo(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914")
    run(db, "next")
    run(db, "next")
    run(db, "undo")  # events 4-5 (purchase -> combat_movement)
    run(db, "undo")  # events 2-3 (research -> purchase)
    assert run(db, "redo").startswith("redo of action 2 (undone by event 9)")
    # The redo is an ordinary action: a plain undo takes it back, and redo puts it back again.
    assert run(db, "undo").startswith("undo of events 10-12   [RK3]")
    assert run(db, "redo").startswith("redo of action 10 (undone by event 14)")
    assert run(db, "redo").startswith("redo of action 4 (undone by event 7)")
    assert board(db)["phase"] == "combat_movement"
    assert run(db, "verify").startswith("OK:")


# ----- undo --to: the list and the confirmation -----


def test_undo_to_lists_what_it_takes_back_and_needs_yes_without_a_terminal(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "research", "advanced_asw", "--dice", "3")
    run(db, "next")
    before = log(db)
    result = CliRunner().invoke(
        cli, ["--db", db, "undo", "--to", "1", "--override", "--reason", "restart", "--agreed-by", "France"]
    )
    assert result.exit_code == 2
    assert result.output == (
        "undo --to 1 takes back 2 actions in events 2-6 (3 events in play, 1 dice roll):\n"
        "  action 2 by Germany:\n"
        "    3  Germany pays 10 for a research roll on Advanced ASW   [TE1]\n"
        "    4  roll 1: Germany research roll for Advanced ASW: D10 x1 = 3 vs >=9: failure [manual]   [TE1]\n"
        "  action 5 by Germany:\n"
        "    6  round 1, Germany: purchase   [T2]\n"
        "  dice taken back: roll 1\n"
        "Error: undo --to 1 asks before it undoes anything; without a terminal, add --yes\n"
    )
    assert log(db) == before


def test_undo_to_asks_on_a_terminal(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_history, "_interactive", lambda: True)
    run(db, "new", "a", "--scenario", "north-sea-1914")
    run(db, "next")
    run(db, "next")
    before = log(db)
    out = run(db, "undo", "--to", "1", code=1, input="n\n")
    assert "Undo these 2 actions? [y/N]: n\nError: undo cancelled: nothing was recorded\n" in out
    assert log(db) == before
    out = run(db, "undo", "--to", "1", input="y\n")
    assert "Undone: 2 actions in events 2-5" in out and "Now: round 1 · Germany · research" in out


def test_plain_undo_names_the_action_it_undid(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914")
    with Tracker(db) as t:
        advance_to(t, "combat_movement")
    run(db, "move", "DE-SS3", "--to", SNS)
    out = run(db, "undo")
    assert out == (
        "undo of events 4-5   [RK3]\n"
        "Undone: 1 action in events 4-5 (1 event in play)\n"
        "  action 4 by Germany:\n"
        f"    5  Germany moves DE-SS3: {HB} -> {SNS}   [F4]\n"
        "Now: round 1 · Germany · combat movement\n"
    )


# ----- older undo events (schema version 1) -----


def test_rk3_undo_events_recorded_before_agreement_existed_still_load_and_verify(db: str) -> None:
    run(db, "new", "a", "--scenario", "north-sea-1914")
    run(db, "next")
    run(db, "undo")
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        stored = t.stored_events(cid)[-1]
        transcoder = t.app.mapper.transcoder
        state = transcoder.decode(plain_state(stored.state))  # an undo's event is kept compressed
        # The event as the first version of the tracker recorded it: no agreement fields.
        for key in ("agreed_by", "locks", "undone_rolls", "class_version"):
            state.pop(key)
        content = event_content({k: v for k, v in state.items()})
        state["hash"] = event_hash(state["prev_hash"], "ActionUndone", 5, state["timestamp"], content)
        table = t.app.recorder.events_record_cls.__table__  # type: ignore[attr-defined]
        with t.engine.begin() as conn:
            conn.execute(
                update(table)
                .where(table.c.originator_id == cid, table.c.originator_version == 5)
                .values(state=transcoder.encode(state))
            )
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        event = t.events(cid)[-1]
        assert isinstance(event, Campaign.ActionUndone) and event.agreed_by == [] and event.locks == []
        assert t.load(cid).phase == "research"
    assert run(db, "verify").startswith("OK: 5 events, hash chain intact")
    assert run(db, "redo").startswith("redo of action 2 (undone by event 5)")
    export = Path(db).with_suffix(".jsonl")
    run(db, "export", str(export))
    other = str(Path(db).with_name("other.db"))
    run(other, "import", str(export))
    assert run(other, "verify").startswith("OK: 8 events")


def test_rk3_the_domain_refuses_an_undo_with_nothing_live(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    tracker.execute(cid, advance)
    c = tracker.load(cid)
    with pytest.raises(RuleViolation, match="^RK3: nothing to undo at event 9"):
        c.undo(9, [], c.game_state())
    with pytest.raises(InputError, match="--to must name an event between 1 and 1, got 5"):
        tracker.undo(cid, to=5)


def test_rk3_d5_an_undo_of_a_seed_reveal_says_the_reveal_stays_in_effect(db: str) -> None:
    """The undo of `dice reveal` is recorded like any other, but the seed stays public and the
    dice go on from the next epoch: the undo, log, explain and replay say so, instead of
    reading as if the reveal were taken back."""
    run(db, "new", "n", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "dice", "reveal")
    (revealed,) = [r for r in log(db) if r["kind"] == "SeedRevealed"]
    seq = revealed["seq"]
    out = run(db, "undo")
    note = "the reveal stays in effect: the seed stays public and the dice go on from the next epoch (D5)"
    assert f"  event {seq}: {note}\n" in out
    (line,) = [x for x in run(db, "log").splitlines() if "SeedRevealed" in x]
    assert line.endswith("(undone by 5, but the reveal stays in effect, D5)")
    assert f"  Undone by event 5, but {note}\n" in run(db, "explain", str(seq))
    assert "(undone by 5, but the reveal stays in effect, D5)" in " ".join(run(db, "replay", "--to", str(seq)).split())
    # What is recorded is unchanged: the undo names the reveal's events as any undo would.
    assert [r["undone_by"] for r in log(db) if r["seq"] == seq] == [5]


def test_rk3_an_undo_of_other_actions_says_nothing_stays_in_effect(db: str) -> None:
    run(db, "new", "n", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "next")
    out = run(db, "undo")
    assert "stays in effect" not in out and "stays in effect" not in run(db, "log")


def test_rk4_d5_a_seed_reveal_an_undo_took_back_is_not_redone(db: str) -> None:
    """The reveal stays in effect after an undo: a redo once recorded it again, naming an epoch
    already revealed, which broke verify and every later reveal."""
    run(db, "new", "n", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "dice", "reveal")
    run(db, "undo")
    out = refused(db, 1, "redo")
    assert "RK4: nothing to redo: undo event 5 took back only a dice seed reveal, which stays in effect" in out
    # An undo across a reveal: the actions on either side come back, the reveal is not repeated.
    run(db, "next")
    run(db, "dice", "reveal")
    run(db, "next")
    run(db, "undo", "--to", "5", "--yes")
    out = run(db, "redo", "--all")
    assert out.count("redo of action") == 2 and "seed" not in out, out
    assert run(db, "verify").startswith("OK: ")
    run(db, "dice", "reveal")
    assert run(db, "verify").startswith("OK: ")
