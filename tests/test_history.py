"""History: projections (rebuild equals incremental), state at any point, log filters, explain,
undo (RK3) and replay."""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import DiceSource
from domain.errors import InputError, RuleViolation
from projections.views import dump
from tests.support import advance as advance_passing
from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.history import explain, log_records
from tracker.service.replay import Replay
from tracker.service.verify import verify_events


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("demo") / "demo.db")
    run_demo(path, lambda line: None)
    return path


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def advance(c: Campaign, _d: DiceSource) -> None:
    advance_passing(c)


def research(c: Campaign, d: DiceSource) -> None:
    c.research("Germany", "advanced_submarine", d)


def move_sub(c: Campaign, _d: DiceSource) -> None:
    c.move("Germany", ["DE-SS3"], ["Skagerrak"])  # among allies: no battle due (NC1)


# ----- projections -----


def test_rebuild_from_scratch_equals_the_incremental_projections(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    tracker.catch_up()  # incremental: one event at a time from here on
    tracker.execute(cid, research)
    tracker.catch_up()
    for _ in range(2):
        tracker.execute(cid, advance)
        tracker.catch_up()
    tracker.execute(cid, move_sub)
    tracker.undo(cid)
    tracker.execute(cid, move_sub)
    while tracker.load(cid).nation == "Germany":
        tracker.execute(cid, advance)
        tracker.catch_up()
    with tracker.engine.connect() as conn:
        incremental = {k: [r for r in v if str(cid) in map(str, r)] for k, v in dump(conn).items()}
    tracker.projector.rebuild()
    with tracker.engine.connect() as conn:
        rebuilt = {k: [r for r in v if str(cid) in map(str, r)] for k, v in dump(conn).items()}
    assert rebuilt == incremental
    assert incremental["tracker_event_index"], "the views were written"


def test_board_at_every_event_matches_replaying_the_log(demo_db: str) -> None:
    with Tracker(demo_db) as t:
        cid = t.campaign_id(None)
        last = t.load(cid).version
        for seq in (1, 6, 20, 40, 53, last):
            from_views = t.board_at(cid, at=seq)
            replayed = t.load(cid, version=seq)
            assert {u["id"]: u["at"] for u in from_views["units"]} == {
                uid: u["at"] for uid, u in replayed.units.items()
            }
            assert from_views["balances"] == replayed.balances
            assert (from_views["round"], from_views["nation"], from_views["phase"]) == (
                replayed.round,
                replayed.nation,
                replayed.phase,
            )


def test_state_at_end_of_a_turn_and_phase(demo_db: str) -> None:
    data = json.loads(run(demo_db, "state", "--turn", "1", "--json"))
    assert (data["turn"], data["nation"], data["phase"]) == (1, "Germany", "collect_resources")
    # 30 - 10 research - 6 submarine - 12 bomber (PU1) + 3 NTR + 12 income
    assert data["balances"]["Germany"] == 17
    assert "DE-SS6" in {u["id"] for u in data["units"]} and "DE-BM2" in {u["id"] for u in data["units"]}  # PU2
    moved = json.loads(run(demo_db, "state", "--turn", "1", "--phase", "combat_movement", "--json"))
    zones = {u["id"]: u["at"] for u in moved["units"]}
    assert zones["DE-SS3"] == "Dover Strait"
    before = json.loads(run(demo_db, "state", "--at", "1", "--json"))
    assert {u["id"]: u["at"] for u in before["units"]}["DE-SS3"] == "Heligoland Bight"
    result = CliRunner().invoke(cli, ["--db", demo_db, "state", "--turn", "99"])
    assert result.exit_code == 2 and "turn 99 has not been played" in result.output
    result = CliRunner().invoke(cli, ["--db", demo_db, "state", "--at", "9999"])
    assert result.exit_code == 2 and "no event 9999" in result.output


def test_state_after_convoy_losses_shows_ntr_lost(demo_db: str) -> None:
    data = json.loads(run(demo_db, "state", "--turn", "2", "--json"))
    assert data["ntr_lost"]["Britain"] > 0
    assert "GB-DD1" not in {u["id"] for u in data["units"]}  # sunk in the convoy battle


# ----- log and explain -----


def test_log_filters_by_turn_phase_nation_zone_kind_and_battle(demo_db: str) -> None:
    with Tracker(demo_db) as t:
        cid = t.campaign_id(None)
        (declared,) = log_records(t, cid, kind="ConvoyAttackDeclared")
        convoy = declared["battle"]
        battle = log_records(t, cid, battle=convoy)
        assert battle[0]["kind"] == "ConvoyAttackDeclared" and battle[-1]["kind"] == "BattleEnded"
        assert all(r["battle"] == convoy for r in battle)
        rolls = log_records(t, cid, battle=convoy, kind="DiceRolled")
        assert rolls and all(r["kind"] == "DiceRolled" for r in rolls)
        assert {r["turn"] for r in log_records(t, cid, turn=2)} == {2}
        assert all(r["phase"] == "research" for r in log_records(t, cid, phase="research"))
        dover = log_records(t, cid, zone="Dover Strait")
        assert [r["kind"] for r in dover] == ["UnitsMoved"]
        french = log_records(t, cid, nation="France")
        assert french and all("France" in r["summary"] or r["nation"] == "France" for r in french)
    records = json.loads(run(demo_db, "log", "--battle", str(convoy), "--kind", "DiceRolled", "--json"))
    assert records[0]["data"]["rule"] == "CV2" and "values" in records[0]["data"]


def test_explain_a_search_roll_shows_rule_dice_target_and_modifiers(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "x.db")) as t:
        cid = t.create("x", "north-sea-1914", dice="manual").id
        while (t.load(cid).nation, t.load(cid).phase) != ("Britain", "collect_resources"):
            t.execute(cid, advance)

        def set_up(c: Campaign, d: DiceSource) -> None:
            # Give both sides their technology so TE3 and TE4 both touch the search roll (TE5).
            c.tech["Germany"]["advanced_submarine"] = 3
            c.tech["Britain"]["advanced_asw"] = 3
            number = c.declare_convoy_attack("Germany", "Central North Sea", ["DE-SS1"])
            c.convoy_merchant_defence(number, d)
            c.convoy_search(number, ["GB-DD1"], d)

        t.execute(cid, set_up, dice_values=[3, 4, 4])
        roll = next(r for r in log_records(t, cid, kind="DiceRolled") if r["rule"] == "CV3")
        data = explain(t, cid, roll["seq"])
    assert [r["id"] for r in data["rules"]][:1] == ["CV3"]
    assert {"TE3", "TE4"} <= {r["id"] for r in data["rules"]}
    dice = data["dice"]
    assert dice["values"] == [4] and dice["base_target"] == 4 and dice["target"] == 4
    causes = {m["rule"]: m["cause"] for m in dice["modifiers"]}
    assert causes == {"TE4": "Advanced ASW of the roller", "TE3": "Advanced Submarine of the submarines' owner"}


def test_explain_shows_what_changed_and_undo_status(tmp_path: Path) -> None:
    db = str(tmp_path / "u.db")
    run(db, "new", "u", "--scenario", "north-sea-1914")
    run(db, "next")
    run(db, "next")
    run(db, "move", "DE-SS3", "--to", "Southern North Sea")
    run(db, "undo")
    out = run(db, "explain", "7")
    assert "Changed: DE-SS3: Heligoland Bight -> Southern North Sea" in out
    assert "Undone by event 9" in out
    data = json.loads(run(db, "explain", "9", "--json"))
    assert data["rules"][0]["id"] == "RK3"
    assert "DE-SS3: Southern North Sea -> Heligoland Bight" in data["changes"]


# ----- undo (RK3) -----


def test_rk3_undo_appends_a_compensating_event_and_keeps_history(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    tracker.execute(cid, advance)
    tracker.execute(cid, advance)
    tracker.execute(cid, move_sub)
    event = tracker.undo(cid)
    assert isinstance(event, Campaign.ActionUndone) and (event.undone_from, event.undone_to) == (4, 4)
    c = tracker.load(cid)
    assert c.units["DE-SS3"]["at"] == "Heligoland Bight" and c.units["DE-SS3"]["moved"] == 0
    assert [type(e).__name__ for e in tracker.events(cid)][-3:] == ["UnitsMoved", "ActionAsked", "ActionUndone"]
    stored = tracker.stored_events(cid)
    assert verify_events((s.originator_version, partial(tracker.decode, s)) for s in stored).ok


def test_rk3_undo_is_refused_after_dice_then_allowed_with_override_and_reason(
    tracker: Tracker, unique_name: str
) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    tracker.execute(cid, research)
    with pytest.raises(RuleViolation, match="RK3.*dice.*--override"):
        tracker.undo(cid)
    with pytest.raises(InputError, match="--reason"):
        tracker.undo(cid, override=True)
    c_before = tracker.load(cid)
    assert c_before.balances["Germany"] == 20
    with pytest.raises(InputError, match="--agreed-by NATION: a nation of another side \\(Britain, France\\)"):
        tracker.undo(cid, override=True, reason="rolled for the wrong technology")
    event = tracker.undo(cid, override=True, reason="rolled for the wrong technology", agreed_by=["Britain"])
    assert event.override and event.reason == "rolled for the wrong technology" and event.rolls == [1]
    assert event.agreed_by == ["Britain"]
    c = tracker.load(cid)
    assert c.balances["Germany"] == 30 and c.research_rolls == {}
    # The dice sequence never rewinds: the next roll is roll 2, not a second try at roll 1.
    assert c.roll_count == 1
    tracker.execute(cid, research)
    rolls = [e for e in tracker.events(cid) if isinstance(e, Campaign.DiceRolled)]
    assert [r.roll for r in rolls] == [1, 2]


def test_rk3_undo_to_a_point_and_refused_inside_an_action(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    for _ in range(3):
        tracker.execute(cid, advance)
    tracker.undo(cid, to=2)
    c = tracker.load(cid)
    assert c.phase == "purchase"
    tracker.execute(cid, advance)
    tracker.execute(cid, advance)
    tracker.execute(cid, advance)
    while tracker.load(cid).phase != "collect_resources":
        tracker.execute(cid, advance)
    tracker.execute(cid, advance)  # ResourcesCollected + PhaseAdvanced in one action
    last = tracker.load(cid).version
    with pytest.raises(InputError, match="part of the action"):
        tracker.undo(cid, to=last - 1)


def test_rk3_a_turn_undone_is_no_longer_played_for_turn_lookups(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    while tracker.load(cid).nation == "Germany":
        tracker.execute(cid, advance)
    tracker.catch_up()
    assert tracker.board_at(cid, turn=2)["nation"] == "Britain"
    tracker.execute(cid, advance)  # Britain: research -> purchase
    back_to = next(e.action for e in tracker.events(cid) if type(e).__name__ == "ResourcesCollected")
    # Back into Germany's collect_resources phase. The actions taken back are Britain's (its
    # convoy pass opens the first, its research phase the last), so Germany agrees (RK3).
    tracker.undo(cid, to=back_to - 1, override=True, reason="Germany forgot a convoy attack", agreed_by=["Germany"])
    with pytest.raises(InputError, match="turn 2 has not been played"):
        tracker.board_at(cid, turn=2)
    assert tracker.board_at(cid, turn=1, phase="collect_resources")["phase"] == "collect_resources"
    tracker.projector.rebuild()
    with pytest.raises(InputError, match="turn 2 has not been played"):
        tracker.board_at(cid, turn=2)


def test_cli_undo_reports_and_marks_the_log(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "c", "--scenario", "north-sea-1914")
    run(db, "research", "advanced_asw")
    result = CliRunner().invoke(cli, ["--db", db, "undo"])
    assert result.exit_code == 1 and result.output.startswith("Error: RK3:")
    out = run(db, "undo", "--override", "--reason", "wrong tech", "--agreed-by", "Britain")
    assert "OVERRIDE" in out and "wrong tech" in out
    log = json.loads(run(db, "log", "--json"))
    assert log[1]["undone_by"] == log[-1]["seq"]
    assert "(undone by" in run(db, "log")


# ----- replay -----


def test_replay_steps_roll_by_roll_and_battle_by_battle_both_ways(demo_db: str) -> None:
    with Tracker(demo_db) as t:
        player = Replay(t, t.campaign_id(None))
        assert player.frame["seq"] == 1
        player.handle("r")
        first_roll = player.frame
        assert first_roll["kind"] == "DiceRolled"
        player.handle("r")
        assert player.frame["kind"] == "DiceRolled" and player.frame["seq"] > first_roll["seq"]
        player.handle("R")
        assert player.frame["seq"] == first_roll["seq"]
        player.handle("b")
        assert player.frame["kind"] == "InterceptionStarted"  # the demo's first battle (SM2)
        battle_start = player.frame["seq"]
        player.handle("n")
        assert player.frame["seq"] == battle_start + 1
        player.handle("p")
        player.handle("p")
        assert player.frame["seq"] == battle_start - 1
        player.handle("G")
        assert player.frame["seq"] == t.load(t.campaign_id(None)).version
        assert player.handle("q") is False
        board = player.board(battle_start)
        assert any(u["id"] == "DE-SS1" for u in board["units"])


def test_replay_prints_a_battle_and_a_point_without_a_terminal(demo_db: str) -> None:
    (declared,) = json.loads(run(demo_db, "log", "--kind", "ConvoyAttackDeclared", "--json"))
    out = run(demo_db, "replay", "--battle", str(declared["battle"]))
    assert "ConvoyAttackDeclared" in out and "BattleEnded" in out and "Central North Sea:" in out
    out = run(demo_db, "replay", "--to", "6")
    assert "Event 6" in out and "Board after event 6" in out
    result = CliRunner().invoke(cli, ["--db", demo_db, "replay"])
    assert result.exit_code == 2 and "--to SEQ or --battle ID" in result.output


def test_projections_rebuild_command(demo_db: str) -> None:
    out = run(demo_db, "projections", "rebuild")
    assert out.startswith("Rebuilt the projections of the only campaign in the database from ")
    assert json.loads(run(demo_db, "state", "--turn", "1", "--json"))["balances"]["Germany"] == 17


def test_projections_rebuild_with_campaign_says_it_rebuilt_every_campaign(demo_db: str, tmp_path: Path) -> None:
    """One set of views serves every campaign, so a rebuild is of all of them, --campaign or
    not (TRACKER_CAMPAIGN sets it for every command: it is not refused). It said "Rebuilt from
    N events", N the whole database's, as if only the campaign named was."""
    db = str(tmp_path / "two.db")
    shutil.copy(demo_db, db)  # the demo is shared by this module's tests: a copy gets the second
    run(db, "new", "second", "--scenario", "north-sea-1914")
    events = json.loads(run(db, "projections", "rebuild", "--json"))["events"]
    out = run(db, "--campaign", "second", "projections", "rebuild")
    assert out == (
        "Rebuilt the projections of both campaigns in the database (not only 'second': the views are "
        f"shared) from {events} events.\n"
    )
    assert run(db, "projections", "rebuild") == (
        f"Rebuilt the projections of both campaigns in the database from {events} events.\n"
    )


def test_log_of_a_turn_not_played_or_a_battle_never_had_is_refused(demo_db: str) -> None:
    """`log --turn 99` and `log --battle 99` printed nothing and exited 0, as if the turn or
    battle had no events; they are bad inputs, refused (exit 2) as `report --turn` refuses."""
    state = json.loads(run(demo_db, "state", "--json"))
    result = CliRunner().invoke(cli, ["--db", demo_db, "log", "--turn", "99"])
    assert (result.exit_code, result.output) == (
        2,
        f"Error: turn 99 has not been played in campaign 'demo' (the current turn is {state['turn']})\n",
    )
    last = max(r["battle"] or 0 for r in json.loads(run(demo_db, "log", "--json")))
    result = CliRunner().invoke(cli, ["--db", demo_db, "log", "--battle", "99", "--json"])
    assert (result.exit_code, result.output) == (
        2,
        f"Error: no battle 99 in campaign 'demo' (the last is battle {last})\n",
    )
    # A turn and a battle there are, filtered to nothing, still list nothing.
    assert run(demo_db, "log", "--turn", "1", "--battle", "1", "--kind", "Adjusted") == ""


def test_replay_to_an_event_not_in_the_battle_names_its_events(demo_db: str) -> None:
    frames = json.loads(run(demo_db, "log", "--battle", "1", "--json"))
    result = CliRunner().invoke(cli, ["--db", demo_db, "replay", "--battle", "1", "--to", "9999"])
    assert (result.exit_code, result.output) == (
        2,
        f"Error: no event 9999 in battle 1 (its events run from {frames[0]['seq']} to {frames[-1]['seq']}: "
        "tracker log --battle 1 lists them)\n",
    )


def test_as2_explain_says_nobody_chose_an_asw_combats_pooled_detections(tmp_path: Path) -> None:
    """AS2 pools the searches: which submarines are detected is nobody's choice, so `explain`
    names no one who decided it (an interception's searcher chooses, SM3, and is named)."""
    db = str(tmp_path / "asw.db")
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "next", "--to", "naval_combat")
    run(db, "asw", "start", "--zone", "Heligoland Bight", "--auto")
    (detected,) = json.loads(run(db, "log", "--kind", "SubmarinesDetected", "--json"))
    assert detected["rule"] == "AS2"
    data = json.loads(run(db, "explain", str(detected["seq"]), "--json"))
    assert data["choice"] is None
    assert "Decided" not in run(db, "explain", str(detected["seq"]))
