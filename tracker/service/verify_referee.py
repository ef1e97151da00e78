"""`tracker verify`'s fold over the log as it is walked: every asked action run again by the
referee, and every snapshot compared with the replay of the events up to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from sqlalchemy import select

from domain.chain import unhashed
from tracker.service.verify_report import Broken, VerifyReport
from tracker.storage.rows import state_bytes

if TYPE_CHECKING:
    from tracker.service.application import Tracker


def snapshot_table(t: Tracker) -> Any:
    snapshots = t.app.snapshots
    if snapshots is None:
        return None
    return getattr(snapshots.recorder, "events_record_cls").__table__  # noqa: B009 - SQLAlchemy recorder


class _Stop(Exception):
    """The fold found a problem (already in the report)."""


def referee_and_snapshots(t: Tracker, cid: UUID, report: VerifyReport, events: Iterator[Any]) -> tuple[int, str] | None:
    """One fold over the log as it is walked: every asked action re-run by the referee
    (tracker.referee), and each snapshot compared with the state the events up to its version
    give. Returns the first problem found, if any (the walk goes on to check the chain)."""
    from tracker.service.referee import Mismatch, referee_stream
    from tracker.storage.recorder import CampaignSnapshot

    mapper = t.app.mapper
    snapshots = t.app.snapshots
    table = snapshot_table(t)
    wanted: set[int] = set()
    if snapshots is not None and table is not None:
        with t.engine.connect() as conn:
            query = select(table.c.originator_version).where(table.c.originator_id == cid)
            wanted = {int(v) for v in conn.execute(query).scalars()}
    found: list[tuple[int, str]] = []

    def check_snapshot(agg: Any) -> None:
        if agg.version not in wanted:
            return
        assert snapshots is not None
        try:
            snap = snapshots.recorder.select_events(cid, gt=agg.version - 1, lte=agg.version)[0]
            stored_snapshot = mapper.to_domain_event(snap)
            stored_state = stored_snapshot.state  # type: ignore[attr-defined]
        except Exception as e:  # noqa: BLE001 - an unreadable snapshot row was edited
            found.append((agg.version, f"the snapshot at event {agg.version} cannot be read ({type(e).__name__})"))
            raise _Stop from None
        # The replay, through the same transcoder, as a snapshot of the same kind taken now
        # would store it (older ones hold the scenario and ruleset, newer ones leave them out).
        kind = CampaignSnapshot if isinstance(stored_snapshot, CampaignSnapshot) else type(agg).Snapshot
        replayed = mapper.to_domain_event(mapper.to_stored_event(kind.take(agg))).state  # type: ignore[attr-defined]
        if stored_state != replayed:
            keys = sorted(k for k in set(stored_state) | set(replayed) if stored_state.get(k) != replayed.get(k))
            why = (
                "the log up to it was rewritten after the snapshot was taken, or the snapshot was edited"
                if "last_hash" in keys
                else "the snapshot was edited"
            )
            found.append(
                (
                    agg.version,
                    f"the snapshot at event {agg.version} differs from the replay of the log up to it "
                    f"({', '.join(keys[:5])}): {why}",
                )
            )
            raise _Stop
        report.snapshots_checked += 1

    try:
        # The actions run again record events compared without their hashes: the chain
        # check hashes each stored event, and nothing hashes it twice.
        with unhashed():
            result = referee_stream(events, _StoredHistory(t, cid), _undone_from(t, cid), check_snapshot, stops=wanted)
    except Broken:
        raise
    except _Stop:
        return found[0]
    except Mismatch as e:
        return e.version, str(e)
    except Exception as e:  # noqa: BLE001 - a hashed event that cannot be applied
        return report.head_seq, f"the log cannot be replayed ({type(e).__name__}: {str(e)[:200]})"
    report.actions_refereed = result.actions_checked
    report.actions_unasked = result.unasked_actions
    return None


def _undone_from(t: Tracker, cid: UUID) -> set[int]:
    """The versions whose state before them an undo of the log restores (the referee keeps
    those states as it folds): read from the few ActionUndone rows before the walk."""
    table = t.recorder.table
    query = (
        select(table.c.originator_version, table.c.topic, table.c.state)
        .where(table.c.originator_id == cid, table.c.topic.like("%ActionUndone"))
        .order_by(table.c.originator_version)
    )
    with t.engine.connect() as conn:
        rows = conn.execute(query).all()
    versions = set()
    for version, topic, state in rows:
        try:
            event: Any = t.decode(
                StoredEvent(originator_id=cid, originator_version=version, topic=topic, state=state_bytes(state))
            )
        except Exception:  # noqa: BLE001 - an unreadable row: the walk names it
            continue
        if type(event).__name__ == "ActionUndone":
            versions.add(int(event.undone_from))
    return versions


class _StoredHistory:
    """The referee's `History` of a stored log: the events before an action run again (an
    undo or redo reads back), decoded from the database as asked for."""

    def __init__(self, t: Tracker, cid: UUID) -> None:
        self.t, self.cid = t, cid

    def desc(self, top: int) -> Iterator[Any]:
        recorder = self.t.recorder
        while top > 0:
            page = recorder.select_events(self.cid, lte=top, desc=True, limit=200)
            if not page:
                return
            for s in page:
                yield self.t.decode(s)
            top = page[-1].originator_version - 1

    def between(self, gt: int, lte: int) -> Iterator[Any]:
        for page in self.t.recorder.event_pages(self.cid, gt=max(gt, 0), lte=lte):
            for s in page:
                yield self.t.decode(s)
