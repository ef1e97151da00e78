"""Actions by name (tracker.actions): every recording command records what was asked first
(RK1, PL1), the inputs are checked without click, verify re-runs every asked action (the
re-referee), and a command that depends on what the user saw is refused once the campaign
moved past it (RK3, RK4, T2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.errors import InputError
from tests.support import advance
from tracker.cli.main import cli
from tracker.service.actions import ACTIONS
from tracker.service.application import Tracker
from tracker.service.performing import StaleView


def run(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    return result.exit_code, result.output


def asked(t: Tracker, cid: object) -> list[object]:
    return [e for e in t.events(cid) if type(e).__name__ == "ActionAsked"]  # type: ignore[arg-type]


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    code, out = run(path, "new", "c", "--scenario", "north-sea-1914", "--dice", "manual")
    assert code == 0, out
    return path


def test_rk1_a_command_records_what_was_asked_as_typed_before_its_events(db: str) -> None:
    code, out = run(db, "research", "advanced submarine", "--dice", "3", "--ref", "roll-7")
    assert code == 0, out
    assert "ActionAsked" not in out and "asked" not in out  # the output is what it always was
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        events = t.events(cid)
    first = events[1]
    assert type(first).__name__ == "ActionAsked"
    assert first.name == "research" and first.seen == 1 and first.player is None and first.nation is None
    # Names as the user typed them; the research event itself has the canonical one.
    assert first.inputs["technology"] == "advanced submarine" and first.inputs["dice"] == [3]
    assert first.inputs["ref"] == "roll-7"
    assert [type(e).__name__ for e in events[2:]] == ["ResearchPaid", "DiceRolled"]
    assert all(e.action == first.originator_version for e in events[1:])
    assert events[2].technology == "advanced_submarine"


def test_the_registry_checks_inputs_naming_the_action_and_the_input(db: str) -> None:
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        before = len(t.events(cid))
        for name, inputs, expected in [
            ("move", {"units": 5, "path": ["Skagerrak"]}, "move: input 'units' must be a list of strings"),
            ("move", {"path": ["Skagerrak"]}, "move: input 'units' is required"),
            ("move", {"units": "DE-SS1", "path": ["Skagerrak"], "speed": 3}, "move: unknown input 'speed'"),
            ("buy", {"unit_type": "submarine", "count": 10**20}, "buy: input 'count' must be between 1 and 1000"),
            ("buy", {"unit_type": "submarine", "count": True}, "buy: input 'count' must be a whole number"),
            ("research", {"technology": "x", "dice": "a,b"}, "D3: dice must be whole numbers"),
            ("teleport", {}, "unknown action 'teleport'"),
        ]:
            with pytest.raises(InputError) as caught:
                t.perform(cid, name, inputs)
            assert expected in str(caught.value), str(caught.value)
        assert len(t.events(cid)) == before


def test_every_action_declares_json_inputs_and_a_docstring() -> None:
    assert {"move", "buy", "place", "convoy declare", "battle fire", "undo", "redo", "next", "dice switch"} <= set(
        ACTIONS
    )
    for action in ACTIONS.values():
        assert action.doc, action.name
        assert {f.kind for f in action.fields} <= {"text", "units", "zones", "texts", "int", "flag", "dice"}
        described = json.loads(json.dumps(action.describe()))
        assert described["action"] == action.name and len(described["inputs"]) == len(action.fields)
    fire = {i["name"]: i for i in ACTIONS["battle fire"].describe()["inputs"]}
    assert fire["battle"] == {"name": "battle", "kind": "int", "required": True, "default": None, "min": 1,
                              "max": 2**31 - 1, "help": ""}  # fmt: skip
    assert {"dice", "ref", "override", "reason", "agreed_by"} <= set(fire)


def test_verify_re_referees_undo_redo_and_dice_switches(db: str) -> None:
    steps = [
        ["research", "advanced_submarine", "--dice", "9"],
        ["next"],
        ["buy", "submarine", "2"],
        ["buy", "destroyer"],
        ["undo"],
        ["redo"],
        ["undo"],
        ["undo"],
        ["redo", "--all"],
        ["undo", "--to", "5", "--yes"],
        ["dice", "switch", "auto", "--reason", "the seed is here"],
        ["dice", "switch", "manual", "--reason", "back to the table"],
    ]
    for step in steps:
        code, out = run(db, *step)
        assert code == 0, (step, out)
    code, out = run(db, "verify")
    assert code == 0, out
    assert f"Re-refereed: {len(steps)} actions run again" in out, out


def test_verify_re_referees_auto_dice_and_a_revealed_seed(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    for step in (["research", "advanced_submarine"], ["dice", "reveal"], ["next"], ["next"]):
        code, out = run(db, *step)
        assert code == 0, (step, out)
    code, out = run(db, "verify")
    assert code == 0 and "Re-refereed: 4 actions" in out, out


def test_an_older_log_without_recorded_inputs_is_checked_by_hash_only(db: str) -> None:
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        t.execute(cid, lambda c, d: advance(c))
        t.execute(cid, lambda c, d: advance(c))
    code, out = run(db, "verify")
    assert code == 0, out
    assert "Re-refereed: 0 actions" in out
    assert "2 actions recorded without their inputs (by an earlier tracker or a script) checked by hash only" in out


def test_a_retried_undo_is_refused_when_another_writer_recorded_meanwhile(db: str) -> None:
    """Two writers: the first one's kept copy is behind; its undo must not take back the
    other's action after the conflict (RK3)."""
    with Tracker(db) as mine, Tracker(db) as theirs:
        cid = mine.campaign_id(None)
        mine.perform(cid, "next")  # Germany's purchase phase: this process keeps its copy
        theirs.perform(cid, "buy", {"unit_type": "submarine"})
        before = len(theirs.events(cid))
        with pytest.raises(StaleView, match="Germany recorded 2 events meanwhile; look and run again"):
            mine.perform(cid, "undo")
        assert len(theirs.events(cid)) == before
        # Looking again (a fresh load) and asking again works, and takes back the purchase.
        assert mine.perform(cid, "undo", seen=before).events[-1].undone_from == before - 1


def test_a_command_given_the_version_seen_is_refused_once_the_campaign_moved(db: str) -> None:
    code, out = run(db, "next", "--seen", "1")
    assert code == 0, out
    code, out = run(db, "buy", "submarine", "--seen", "1")
    assert code == 1
    assert out.strip() == "Error: Germany recorded 2 events meanwhile; look and run again", out
    code, out = run(db, "undo", "--seen", "3")
    assert code == 0, out
    code, out = run(db, "next", "--seen", "99")
    assert code == 2 and "--seen 99: this campaign has only 5 events" in out, out


def test_inputs_added_later_are_recorded_only_when_given_so_older_logs_re_referee() -> None:
    """`deciding` (PL2) and `enter` (F8) came after campaigns were recorded without them: at
    their defaults they are left out of what an action records, so an older log's actions
    record again exactly what they recorded (RK1)."""
    from tracker.service.actions import ACTIONS

    auto = ACTIONS["battle auto"].validate({"battle": 1})
    assert "deciding" not in auto
    assert ACTIONS["battle auto"].validate({"battle": 1, "deciding": ["Germany"]})["deciding"] == ["Germany"]
    adjust = ACTIONS["adjust"].validate({"reason": "agreed"})
    assert "enter" not in adjust
    assert ACTIONS["adjust"].validate({"reason": "agreed", "enter": ["Italy"]})["enter"] == ["Italy"]


def test_ad1_an_owner_given_twice_for_one_territory_is_refused_not_the_last_taken() -> None:
    from tracker.service.actions import build_adjustment

    with pytest.raises(InputError) as info:
        build_adjustment((), None, (), (), ("England=Germany", "england=France"), ())
    assert str(info.value) == "--owner names 'england' twice: give each territory one new owner"
    assert build_adjustment((), None, (), (), ("England=Germany",), ()).owners == {"England": "Germany"}


def test_a_stale_view_does_not_name_a_nation_for_a_dice_seed_revealed(tmp_path: Path) -> None:
    """A seed revealed meanwhile (D4; a league server does it at a round's end) was counted as
    the phasing nation's events: "Germany recorded 2 events meanwhile"."""
    db = str(tmp_path / "a.db")
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    seen = json.loads(run(db, "state", "--json")[1])["seq"]
    assert run(db, "dice", "reveal")[0] == 0
    code, out = run(db, "next", "--seen", str(seen))
    assert code == 1
    assert out.strip() == "Error: a dice seed was revealed (2 events, D4) meanwhile; look and run again", out
    seen = json.loads(run(db, "state", "--json")[1])["seq"]
    assert run(db, "next")[0] == 0 and run(db, "dice", "reveal")[0] == 0
    code, out = run(db, "next", "--seen", str(seen))
    assert out.strip() == (
        "Error: Germany recorded 2 events and a dice seed was revealed (2 events, D4) meanwhile; look and run again"
    ), out


def test_f8_a_stale_view_does_not_name_a_neutral_whose_turn_was_passed_over(tmp_path: Path) -> None:
    """France's `next` out of its last phase passes the Ottoman Empire's turn over (F8) and, at
    a round's end, records the entries into the war: only France recorded them, though those
    events name the neutrals ("France and Ottoman Empire recorded 4 events")."""
    db = str(tmp_path / "a.db")
    run(db, "new", "a", "--scenario", "great-war-1914", "--dice", "auto")
    for _ in range(80):
        state = json.loads(run(db, "state", "--json")[1])
        if (state["nation"], state["phase"]) == ("France", "collect_resources"):
            break
        assert run(db, "next")[0] == 0
    seen = state["seq"]
    assert run(db, "next")[0] == 0
    code, out = run(db, "next", "--seen", str(seen))
    assert code == 1
    assert out.strip() == "Error: France recorded 4 events meanwhile; look and run again", out
    while json.loads(run(db, "state", "--json")[1])["round"] == 1:
        seen = json.loads(run(db, "state", "--json")[1])["seq"]
        assert run(db, "next")[0] == 0
    code, out = run(db, "next", "--seen", str(seen))
    assert "Ottoman Empire" not in out and out.startswith("Error: Japan recorded"), out
