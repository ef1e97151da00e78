"""PL2, RK3, F8: a turn passed over (TurnPassedOver) and an entry into the war (WarEntered) name
a nation that did not act. The `next` that records them before its phase change is the phasing
nation's: its player may make it (PL2), and it answers nothing for the neutral's side (RK3).

In a house ruleset whose turn has no collect_resources phase, the `next` ending a turn records
the turn passed over first. It was credited to the neutral: on great-war-1914 France's turn-
ending `next` passed the Ottoman Empire's turn over (neutral until round 2, a Central Power), so
France's own actions before it counted as answered by the other side, and France's player could
not make it through a league server ("this action is Ottoman Empire's").

A campaign recorded before the ruleset said so (`[record] neutrals_do_not_act`) keeps the credit
it was refereed by: an override undo records the locks it lifted, and `verify` re-runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from domain.errors import RuleViolation
from domain.ruleset import read_toml
from tests.support import recorded_before
from tracker.server.served import ServedTracker
from tracker.service.application import Tracker
from tracker.service.players import Player
from tracker.service.verify import verify_campaign

TWTEA = Path(__file__).parent.parent / "domain" / "data" / "rulesets" / "twtea-3e.toml"
KEY = "neutrals_do_not_act"


def house_ruleset(tmp_path: Path) -> str:
    """twtea-3e with no collect_resources phase: a turn ends in placement."""
    text = TWTEA.read_text()
    assert text.count('    "collect_resources",\n') == 1
    path = tmp_path / "no-collection.toml"
    path.write_text(text.replace('    "collect_resources",\n', ""))
    assert "collect_resources" not in read_toml(path)["turn"]["phases"]
    return str(path)


def to_frances_placement(t: Tracker, cid: UUID) -> int:
    """Round 1 played to France's noncombat_movement (enemies passing on convoy attacks), a
    French cruiser moved there, and `next` to France's placement, the last phase of its turn.
    Returns the version before the move."""
    for _ in range(200):
        c = t.load(cid)
        if (c.nation, c.phase) == ("France", "noncombat_movement"):
            break
        for nation in c.convoy_attacks_open():
            t.perform(cid, "convoy pass", {"by": nation})
        t.perform(cid, "next")
    c = t.load(cid)
    assert (c.round, c.nation, c.phase) == (1, "France", "noncombat_movement")
    assert not c.at_war("Ottoman Empire") and c.scenario.are_enemies("France", "Ottoman Empire")
    before = c.version
    t.perform(cid, "move", {"units": ["FR-CA1"], "path": ["Gulf of Lion"], "nation": "France"})
    t.perform(cid, "next")
    assert (t.load(cid).nation, t.load(cid).phase) == ("France", "placement")
    return before


def passed_ottoman_turn_over(t: Tracker, cid: UUID, start: int) -> list[Any]:
    """The events of the `next` that ended France's turn (from `start` on): the Ottoman
    Empire's turn passed over, then Russia's turn opened."""
    c = t.load(cid)
    assert (c.round, c.nation, c.phase) == (1, "Russia", "research")
    events: list[Any] = [e for e in t.events(cid)[start:] if type(e).__name__ != "ActionAsked"]
    assert [(type(e).__name__, e.nation) for e in events] == [
        ("TurnPassedOver", "Ottoman Empire"),
        ("PhaseAdvanced", "Russia"),
    ]
    return events


def test_rk3_f8_a_next_passing_a_neutrals_turn_over_answers_nothing_for_its_side(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("world", "great-war-1914", ruleset=house_ruleset(tmp_path), dice="auto").id
        assert t.load(cid).ruleset.neutrals_do_not_act
        assert t.load(cid).ruleset_data["record"][KEY] is True
        before = to_frances_placement(t, cid)
        start = t.load(cid).version
        t.perform(cid, "next")
        passed_ottoman_turn_over(t, cid, start)
        # Nobody of another side acted after France's move: a plain undo takes the move and
        # both `next`s back, every one of them France's.
        undo: Any
        undo, plan = t.undo_with_plan(cid, to=before)
        assert [a.nation for a in plan.actions] == ["France", "France", "France"]
        assert plan.locks == () and undo.locks == []
        c = t.load(cid)
        assert (c.nation, c.phase, c.units["FR-CA1"]["at"]) == ("France", "noncombat_movement", "Western Mediterranean")
        assert verify_campaign(t, cid).ok


def test_pl2_f8_the_phasing_nations_player_makes_the_next_that_passes_a_neutrals_turn_over(tmp_path: Path) -> None:
    db = str(tmp_path / "league.db")
    with Tracker(db) as t:
        cid = t.create("world", "great-war-1914", ruleset=house_ruleset(tmp_path), dice="auto").id
        to_frances_placement(t, cid)
    served = ServedTracker(db, keys=str(tmp_path / "keys.db"))
    try:
        start = served.load(cid).version
        fred = Player(str(cid), "fred", ("France",), False)
        served.acting_as(fred, lambda: served.perform(cid, "next"))
        passed_ottoman_turn_over(served, cid, start)
        asked: list[Any] = [e for e in served.events(cid)[start:] if type(e).__name__ == "ActionAsked"]
        assert [(e.name, e.player, e.nation) for e in asked] == [("next", "fred", "France")]
    finally:
        served.close()


def test_rk3_f8_a_campaign_recorded_before_the_key_keeps_the_neutrals_credit_and_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded ruleset lacks the key, as a release before it recorded it: the `next` is
    the Ottoman Empire's, so France's move before it is locked as answered; the override undo
    records that lock, and `verify` re-runs it to the same events."""
    recorded_before(monkeypatch, KEY)
    with Tracker(str(tmp_path / "old.db")) as t:
        cid = t.create("world", "great-war-1914", ruleset=house_ruleset(tmp_path), dice="auto").id
        assert not t.load(cid).ruleset.neutrals_do_not_act and KEY not in t.load(cid).ruleset_data["record"]
        before = to_frances_placement(t, cid)
        start = t.load(cid).version
        t.perform(cid, "next")
        passed_ottoman_turn_over(t, cid, start)
        answered = f"action {before + 1} by France was answered by Ottoman Empire at event {start + 1}"
        with pytest.raises(RuleViolation, match=answered):
            t.undo(cid, to=before)
        undo: Any = t.undo(cid, to=before, override=True, reason="misclick", agreed_by=["Germany"])
        assert answered in [lock["because"] for lock in undo.locks]
        assert verify_campaign(t, cid).ok
