"""A refused action (RK2: all or nothing) leaves the campaign a process holds as it was: when the
refusal came before anything but what was asked was recorded, the process keeps its copy and
the next action runs on it without reading the log again; when it came later (dice rolled), the
copy is thrown away and the next action loads the log. Either way nothing is recorded and the
next action records what it would have recorded on a fresh load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from domain.errors import TrackerError
from tracker.service.application import Tracker


def counting_loads(t: Tracker, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    loads: list[int] = []
    real = t.load

    def load(cid: Any, version: int | None = None) -> Any:
        loads.append(1)
        return real(cid, version)

    monkeypatch.setattr(t, "load", load)
    return loads


def test_rk2_a_rule_refusal_keeps_the_copy_and_the_next_action_reads_no_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("c", "north-sea-1914", dice="manual").id
        t.perform(cid, "next", {})
        before = t.load(cid)
        loads = counting_loads(t, monkeypatch)
        # T3: a research roll in the purchase phase is refused by its rule, after what was
        # asked was recorded in the working copy.
        with pytest.raises(TrackerError, match="T3"):
            t.perform(cid, "research", {"technology": "advanced submarine", "dice": [3]})
        assert len(t.events(cid)) == before.version  # nothing recorded
        done = t.perform(cid, "next", {})
        assert loads == []  # the copy the refusal ran on was kept, as it was
        assert done.campaign.version == before.version + len(done.events) + 1
        # What it recorded is what the log rebuilds: the copy held nothing of the refusal.
        monkeypatch.undo()
        fresh = Tracker(str(tmp_path / "c.db"))
        try:
            assert fresh.load(cid).game_state() == done.campaign.game_state()
            assert fresh.load(cid).last_hash == done.campaign.last_hash
        finally:
            fresh.close()


def test_rk2_a_refusal_after_dice_were_rolled_throws_the_copy_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("c", "north-sea-1914", dice="manual").id
        campaign = t.load(cid)
        assert campaign.phase == "research"
        loads = counting_loads(t, monkeypatch)
        # D1: more dice typed than the roll reads: refused once the roll was recorded.
        with pytest.raises(TrackerError, match="dice"):
            t.perform(cid, "research", {"technology": "advanced submarine", "dice": [3, 4]})
        assert len(t.events(cid)) == campaign.version
        loads.clear()
        t.perform(cid, "research", {"technology": "advanced submarine", "dice": [3]})
        assert loads == [1]  # the copy that had rolled was not kept
