"""Snapshots stored compressed (`tracker.storage.event_app.COMPRESSED`): a new one round-trips
to the state the log gives, and one stored plain, as snapshots were before, still loads and
still passes `tracker verify`."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any
from uuid import UUID

from click.testing import CliRunner
from sqlalchemy import select, update

from tests.support import advance as advance_passing
from tracker.cli.main import cli
from tracker.service.application import SNAPSHOT_INTERVAL, Tracker
from tracker.storage.event_app import COMPRESSED


def _campaign_past_a_snapshot(t: Tracker) -> UUID:
    cid = t.create("zipped", "north-sea-1914").id
    c = t.load(cid)
    while c.version < SNAPSHOT_INTERVAL + 7:
        advance_passing(c)
    t.app.save(c)
    return cid


def _snapshot_rows(t: Tracker) -> list[Any]:
    assert t.app.snapshots is not None
    table = t.app.snapshots.recorder.events_record_cls.__table__  # type: ignore[attr-defined]
    with t.engine.connect() as conn:
        return list(conn.execute(select(table.c.originator_version, table.c.state)))


def _replayed(t: Tracker, cid: UUID) -> dict[str, Any]:
    replayed: Any = None
    for event in t.events(cid):
        replayed = event.mutate(replayed)
    return dict(vars(replayed)) | {"_pending_events": []}


def _loaded_fresh(db: str, cid: UUID) -> dict[str, Any]:
    fresh = Tracker(db)  # nothing cached: the campaign comes from its snapshot
    try:
        return dict(vars(fresh.load(cid))) | {"_pending_events": []}
    finally:
        fresh.close()


def test_a_snapshot_is_stored_compressed_and_loads_the_state_of_the_log(tmp_path: Path) -> None:
    db = str(tmp_path / "z.db")
    with Tracker(db) as t:
        cid = _campaign_past_a_snapshot(t)
        [(version, state)] = _snapshot_rows(t)
        assert version >= SNAPSHOT_INTERVAL and state.startswith(COMPRESSED)
        plain = zlib.decompress(state[len(COMPRESSED) :])
        assert len(state) * 3 < len(plain), "compressed to under a third"
        assert "units" in json.loads(plain)["state"]
        assert _loaded_fresh(db, cid) == _replayed(t, cid)
    verified = CliRunner().invoke(cli, ["--db", db, "verify"])
    assert verified.exit_code == 0 and "1 snapshot matches the log" in verified.output, verified.output


def test_a_snapshot_stored_plain_as_before_still_loads_and_verifies(tmp_path: Path) -> None:
    db = str(tmp_path / "plain.db")
    with Tracker(db) as t:
        cid = _campaign_past_a_snapshot(t)
        [(version, state)] = _snapshot_rows(t)
        plain = zlib.decompress(state[len(COMPRESSED) :])
        assert t.app.snapshots is not None
        table = t.app.snapshots.recorder.events_record_cls.__table__  # type: ignore[attr-defined]
        with t.engine.begin() as conn:
            conn.execute(update(table).where(table.c.originator_version == version).values(state=plain))
        [(_, stored)] = _snapshot_rows(t)
        assert stored.startswith(b"{")
        assert _loaded_fresh(db, cid) == _replayed(t, cid)
    verified = CliRunner().invoke(cli, ["--db", db, "verify"])
    assert verified.exit_code == 0 and "1 snapshot matches the log" in verified.output, verified.output
