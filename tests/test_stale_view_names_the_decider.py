"""RK3, NC4: a command given the version its player saw is refused once the campaign moved, and
the refusal names who moved. A decision after a naval battle's round to fight on records no
event of its own: its events (the next round's start) name no nation, so the refusal named the
phasing nation, "Germany recorded 3 events meanwhile", though Britain had decided. It names
the deciding nation, as the undo rule credits the action (`deciders`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import to_the_decide_step
from tracker.service.application import Tracker
from tracker.service.performing import StaleView


def test_rk3_nc4_a_stale_command_names_the_nation_that_decided_to_fight_on(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("fight", "north-sea-1914", dice="manual").id
        to_the_decide_step(t, cid)
        t.perform(cid, "battle decide", {"battle": 1, "nation": "Germany"})
        seen = t.load(cid).version
        t.perform(cid, "battle decide", {"battle": 1, "nation": "Britain"})
        assert t.load(cid).nation == "Germany" and t.load(cid).battles["1"]["round"] == 2
        moved = t.load(cid).version - seen
        with pytest.raises(StaleView) as refused:
            t.perform(cid, "battle step", {"battle": 1}, seen=seen)
        assert str(refused.value) == f"Britain recorded {moved} events meanwhile; look and run again"


def test_rk3_nc4_both_decisions_name_both_nations(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("fight", "north-sea-1914", dice="manual").id
        to_the_decide_step(t, cid)
        seen = t.load(cid).version
        t.perform(cid, "battle decide", {"battle": 1, "nation": "Britain"})
        t.perform(cid, "battle decide", {"battle": 1, "nation": "Germany"})
        moved = t.load(cid).version - seen
        with pytest.raises(StaleView, match=f"^Britain and Germany recorded {moved} events meanwhile; look"):
            t.perform(cid, "battle step", {"battle": 1}, seen=seen)
