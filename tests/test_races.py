"""Races between two writers on one campaign, the interleaving forced: the second writer's
action runs after the first one's commit, on a copy it loaded before. The version conflict
makes it run again on the newer state; it is recorded there only if it means the same
(RK2, RK3, T2, CV2-CV5, D3), otherwise refused with nothing recorded."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import RuleViolation
from tracker.service.application import Tracker
from tracker.service.performing import StaleView


def _kinds(t: Tracker, cid: Any, after: int) -> list[str]:
    return [type(e).__name__ for e in t.events(cid)[after:]]


def _convoy_battle(t: Tracker, name: str) -> Any:
    """Britain's collect_resources with German U-boats declared on the Western Approaches,
    where no ship and no aircraft can search: the merchant defence roll (CV2, Britain's) is
    followed at once by the convoy table roll (CV5, Germany's), no choice between them, unless
    the roll is a 20 (Germany then picks the submarine sunk)."""
    cid = t.create(name, "north-sea-1914", dice="auto").id
    t.perform(
        cid,
        "adjust",
        {
            "add": ["Germany:submarine:Western Approaches:2"],
            "remove": "gb-bm1,fr-bm1,gb-ft1,gb-tp1",
            "reason": "race test",
        },
    )
    while (c := t.load(cid)).nation != "Britain" or c.phase != "collect_resources":
        if c.convoy_attacks_open():
            t.perform(cid, "convoy pass", {"by": next(iter(c.convoy_attacks_open()))})
        else:
            t.perform(cid, "next")
    t.perform(cid, "convoy declare", {"by": "Germany", "zone": "Western Approaches", "subs": "de-ss6,de-ss7"})
    return cid


@pytest.mark.parametrize("step", ["battle step", "convoy roll"])
def test_cv2_two_players_answering_one_battle_step_take_it_once(db_url: str, unique_name: str, step: str) -> None:
    """Two players both answer the merchant defence roll (CV2). The loser of the race used to
    be run again on the newer state, where it rolled the battle's next step too (CV5: the
    convoy table, Germany's roll) as if it had been asked for."""
    with Tracker(db_url) as mine, Tracker(db_url) as theirs:
        cid = _convoy_battle(mine, unique_name)  # `mine` keeps its copy, at the declaration
        theirs.perform(cid, step, {"battle": 1})
        before = len(theirs.events(cid))
        assert theirs.load(cid).battles["1"]["step"] != "merchant_defence"
        with pytest.raises(StaleView, match="meanwhile; look and run again"):
            mine.perform(cid, step, {"battle": 1})
        assert len(theirs.events(cid)) == before


def test_cv2_a_battle_action_is_still_retried_when_the_battle_is_as_it_was(db_url: str, unique_name: str) -> None:
    """The retry stays for an action the other writer's did not change the meaning of: a dice
    seed revealed meanwhile (D3) leaves the battle's step as it was."""
    with Tracker(db_url) as mine, Tracker(db_url) as theirs:
        cid = _convoy_battle(mine, unique_name)
        theirs.perform(cid, "dice reveal")
        before = len(theirs.events(cid))
        done = mine.perform(cid, "battle step", {"battle": 1})
        assert done.asked == before + 1
        assert _kinds(theirs, cid, before)[:2] == ["ActionAsked", "DiceRolled"]
        # CV2: a total of 20 (one roll in a hundred) sinks a submarine, Germany's pick.
        assert theirs.load(cid).battles["1"]["step"] in ("convoy_table", "merchant_casualty")


def test_d3_two_reveals_at_once_do_not_publish_the_fresh_seed_as_well(db_url: str, unique_name: str) -> None:
    """D3: `dice reveal` publishes the seed the dice were rolled from. The loser of two reveals
    at once used to reveal the fresh seed the winner had just committed to, before any roll."""
    with Tracker(db_url) as mine, Tracker(db_url) as theirs:
        cid = mine.create(unique_name, "north-sea-1914", dice="auto").id
        mine.perform(cid, "next")  # `mine` keeps its copy
        theirs.perform(cid, "dice reveal")
        before = len(theirs.events(cid))
        with pytest.raises(StaleView, match="a dice seed was revealed"):
            mine.perform(cid, "dice reveal")
        assert len(theirs.events(cid)) == before
        assert theirs.load(cid).dice_epoch == 1


def test_t3_an_action_refused_on_a_kept_copy_behind_the_log_runs_on_the_log(db_url: str, unique_name: str) -> None:
    """A shell keeps the campaign as it last saved it. Another shell's `next` moved Germany
    to combat_movement (the prompt says so); a move here was refused "T3: ... it is Germany's
    purchase phase" from the kept copy, since only a save's conflict ever found it stale."""
    with Tracker(db_url) as mine, Tracker(db_url) as theirs:
        cid = mine.create(unique_name, "north-sea-1914", dice="manual").id
        mine.perform(cid, "next")
        mine.perform(cid, "buy", {"unit_type": "submarine"})  # `mine` keeps its copy, in purchase
        theirs.perform(cid, "next")
        done = mine.perform(cid, "move", {"units": "de-dd1", "path": ["Skagerrak"]})
        assert [type(e).__name__ for e in done.events] == ["UnitsMoved"]
        assert done.campaign.phase == "combat_movement"
        # A refusal on the log itself is still one, and records nothing.
        before = len(theirs.events(cid))
        with pytest.raises(RuleViolation, match="T3"):
            mine.perform(cid, "buy", {"unit_type": "submarine"})
        assert len(theirs.events(cid)) == before


def test_t2_seen_given_as_the_log_stands_is_not_refused_on_a_kept_copy_behind_it(db_url: str, unique_name: str) -> None:
    """`--seen` with the version the player looked at (after another writer's action) was
    refused from the kept copy: "--seen 5: this campaign has only 3 events"."""
    with Tracker(db_url) as mine, Tracker(db_url) as theirs:
        cid = mine.create(unique_name, "north-sea-1914", dice="manual").id
        mine.perform(cid, "next")  # `mine` keeps its copy, at event 3
        theirs.perform(cid, "buy", {"unit_type": "submarine"})
        seen = theirs.load(cid).version
        done = mine.perform(cid, "next", seen=seen)
        assert done.asked == seen + 1 and done.campaign.phase == "combat_movement"


def _casualties_both_sides(t: Tracker, name: str) -> Any:
    """A naval battle whose volley hit both sides: Germany and Britain each place their hits
    (HA7), both waited for at once."""
    cid = t.create(name, "north-sea-1914", dice="manual").id
    t.perform(cid, "next")
    t.perform(cid, "next")
    t.perform(cid, "move", {"units": "de-bb1,de-bb2,de-ca1", "path": ["Central North Sea"]})
    t.perform(cid, "next")
    t.perform(cid, "battle start", {"zone": "Central North Sea"})
    t.perform(cid, "battle targets", {"battle": 1, "targets": "de-ss1=gb-ca1,de-ss2=gb-dd1"})
    t.perform(cid, "battle screen", {"battle": 1})
    t.perform(cid, "battle fire", {"battle": 1, "dice": [1, 9, 9, 9, 9, 1, 1, 1]})
    assert t.load(cid).battles["1"]["waiting"] == ["Germany", "Britain"]
    return cid


def test_ha7_both_sides_placing_their_hits_at_once_are_both_recorded(db_url: str, unique_name: str) -> None:
    """The other side answering its own part of the step the battle waits for leaves this
    side's answer meaning what it meant: it is run again and recorded, not refused."""
    with Tracker(db_url) as mine, Tracker(db_url) as theirs:
        cid = _casualties_both_sides(mine, unique_name)
        theirs.perform(cid, "battle casualties", {"battle": 1, "nation": "gb"})
        done = mine.perform(cid, "battle casualties", {"battle": 1, "nation": "Germany"})
        assert [type(e).__name__ for e in done.events][0] == "CasualtiesChosen"
        assert done.campaign.battles["1"]["step"] == "decide"  # both sides' hits placed


def test_ha7_one_side_placing_its_hits_twice_at_once_is_refused_the_second_time(db_url: str, unique_name: str) -> None:
    with Tracker(db_url) as mine, Tracker(db_url) as theirs:
        cid = _casualties_both_sides(mine, unique_name)
        theirs.perform(cid, "battle casualties", {"battle": 1, "nation": "Germany"})
        before = len(theirs.events(cid))
        with pytest.raises(StaleView, match="Germany recorded"):
            mine.perform(cid, "battle casualties", {"battle": 1, "nation": "de", "units": "de-ca1,de-bb1,de-bb2"})
        assert len(theirs.events(cid)) == before
