"""Recording one action (issue 28): a snapshot that falls inside the action just saved is taken
from the aggregate in memory, after that action, and loads the same state as the whole log;
the writes of one database go through one kept connection, which a disposed engine renews."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support import advance
from tracker.service.application import SNAPSHOT_INTERVAL, Tracker
from tracker.storage.event_app import replay_checked


def test_a_snapshot_inside_the_last_action_is_taken_after_it_without_loading(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with Tracker(db) as t:
        cid = t.create("s", "north-sea-1914", dice="manual").id
        loads: list[Any] = []
        original = t.app.repository.get

        def counted(*args: Any, **kwargs: Any) -> Any:
            loads.append(args)
            return original(*args, **kwargs)

        t.app.repository.get = counted  # type: ignore[method-assign]

        def one(c: Any, _dice: Any) -> int:
            advance(c)
            return int(c.version)

        ends = [t.execute(cid, one)]
        loads.clear()  # the first action loads the campaign; the others run on the copy kept
        while ends[-1] < 2 * SNAPSHOT_INTERVAL + 5:
            ends.append(t.execute(cid, one))
        assert loads == [], "each snapshot was taken from the aggregate in memory"
        assert t.app.snapshots is not None
        taken = [s.originator_version for s in t.app.snapshots.get(cid)]
    # One snapshot per interval, each at the end of the action that crossed it.
    assert len(taken) == 2
    for multiple, version in zip((SNAPSHOT_INTERVAL, 2 * SNAPSHOT_INTERVAL), taken, strict=True):
        assert version == min(v for v in ends if v >= multiple)
    with Tracker(db) as fresh:
        loaded = fresh.load(cid)
        folded = replay_checked(None, [fresh.decode(s) for s in fresh.stored_events(cid)])
    assert vars(loaded).keys() == vars(folded).keys()
    for key in vars(folded):
        assert getattr(loaded, key) == getattr(folded, key), key


def test_writes_go_through_one_kept_connection_which_a_disposed_engine_renews(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "w.db")) as t:
        cid = t.create("w", "north-sea-1914", dice="manual").id
        datastore = t.app.factory.datastore  # type: ignore[attr-defined]
        t.execute(cid, lambda c, _dice: advance(c))
        writer = datastore.writer()
        t.execute(cid, lambda c, _dice: advance(c))
        assert datastore.writer() is writer
        t.engine.dispose()
        t.execute(cid, lambda c, _dice: advance(c))
        assert datastore.writer() is not writer and writer.closed
        assert t.load(cid).version == len(t.stored_events(cid))
