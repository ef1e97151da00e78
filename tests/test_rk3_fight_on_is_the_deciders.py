"""RK3, NC4: a nation's decision after a round of a naval battle to fight on records no event of
its own (a submerge or a retreat records one, RK1), so the undo rule credited the action to the
nation the battle's next events named: Britain's decision to fight on, after Germany's, counted
as Germany's, and Germany's player took both back with a plain `undo`, no override asked of
Britain, though Britain had answered.

As the rule stands (`[record] deciders_decide`), the decision is the deciding nation's: Britain's
answer locks Germany's decision before it. A campaign recorded before the key keeps the credit
it was refereed by, so its undo verifies as recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from domain.errors import RuleViolation
from tests.support import recorded_before, to_the_decide_step
from tracker.service.application import Tracker
from tracker.service.verify import verify_campaign

TWTEA = Path(__file__).parent.parent / "domain" / "data" / "rulesets" / "twtea-3e.toml"
KEY = "deciders_decide"


def both_fight_on(t: Tracker, cid: UUID) -> tuple[int, int]:
    """Germany, then Britain, decide to fight on; the starts of the two actions."""
    germany = t.load(cid).version + 1
    t.perform(cid, "battle decide", {"battle": 1, "nation": "Germany"})
    britain = t.load(cid).version + 1
    t.perform(cid, "battle decide", {"battle": 1, "nation": "Britain"})
    assert t.load(cid).battles["1"]["round"] == 2
    return germany, britain


def test_rk3_nc4_britains_decision_to_fight_on_answers_germanys_and_locks_it(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("fight", "north-sea-1914", dice="manual").id
        assert t.load(cid).ruleset.deciders_decide
        assert t.load(cid).ruleset_data["record"][KEY] is True
        decide = to_the_decide_step(t, cid)
        germany, britain = both_fight_on(t, cid)
        answered = f"action {germany} by Germany was answered by Britain at event {britain}"
        with pytest.raises(RuleViolation, match=answered):
            t.undo(cid, to=decide)
        assert t.load(cid).battles["1"]["round"] == 2  # refused: nothing appended
        undo: Any
        undo, plan = t.undo_with_plan(cid, to=decide, override=True, reason="a misclick", agreed_by=["Britain"])
        assert [a.nation for a in plan.actions] == ["Germany", "Britain"]
        assert answered in [lock["because"] for lock in undo.locks]
        assert t.load(cid).battles["1"]["step"] == "decide"
        assert verify_campaign(t, cid).ok


def test_rk3_nc4_a_decision_alone_is_still_taken_back_by_its_own_nation(tmp_path: Path) -> None:
    """Germany's decision with nobody's answer after it: a plain undo, credited to Germany."""
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("fight", "north-sea-1914", dice="manual").id
        decide = to_the_decide_step(t, cid)
        t.perform(cid, "battle decide", {"battle": 1, "nation": "Germany"})
        undo: Any
        undo, plan = t.undo_with_plan(cid, to=decide)
        assert [a.nation for a in plan.actions] == ["Germany"] and plan.locks == ()
        assert verify_campaign(t, cid).ok


def test_rk3_nc4_a_campaign_recorded_before_the_key_keeps_the_old_credit_and_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded ruleset lacks the key, as a release before it recorded it: Britain's
    decision counts as the action of the nation the next round's events name, and the plain
    undo over both decisions goes through as it did; `verify` re-runs it to the same events."""
    recorded_before(monkeypatch, KEY)
    with Tracker(str(tmp_path / "old.db")) as t:
        cid = t.create("fight", "north-sea-1914", dice="manual").id
        assert not t.load(cid).ruleset.deciders_decide and KEY not in t.load(cid).ruleset_data["record"]
        decide = to_the_decide_step(t, cid)
        both_fight_on(t, cid)
        undo: Any
        undo, plan = t.undo_with_plan(cid, to=decide)
        assert [a.nation for a in plan.actions] == ["Germany", "Germany"] and plan.locks == ()
        assert verify_campaign(t, cid).ok
