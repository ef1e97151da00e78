"""The eventsourcing application under `tracker.application.Tracker`: a repository that loads a
campaign from its latest lean snapshot, snapshots taken from the aggregate just saved, the
tracker's mapper, and a replay that checks every event's hash as it goes."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from typing import Any, cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application, ProcessingEvent, Repository
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import Mapper, PersistenceError, RecordConflictError, StoredEvent

from domain.campaign import Campaign
from domain.chain import GENESIS, chain_hash, event_content
from domain.errors import InputError
from tracker.storage.mapper import DamagedLogError as DamagedLogError
from tracker.storage.mapper import TrackerMapper
from tracker.storage.mapper import uncompressed as uncompressed
from tracker.storage.recorder import CampaignSnapshot
from tracker.storage.rows import COMPRESSED as COMPRESSED

# A snapshot every this many events: loading replays at most this many.
SNAPSHOT_INTERVAL = 200
# A stored snapshot's state is compressed (`COMPRESSED`): a campaign's state is about 19 KB of
# JSON on the great-war-1914 board, a seventh of a campaign's database at one snapshot every
# 200 events, and a sixth of that compressed.


class CampaignRepository(Repository[UUID]):
    """Loads campaigns from their latest snapshot, putting back the scenario and ruleset a
    snapshot leaves out (see `tracker.storage.recorder.CampaignSnapshot`) from the first event."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Recorded once per campaign and never changed: one read per campaign and process.
        self.created: dict[UUID, Any] = {}

    def _reconstruct_aggregate(self, aggregate_id: UUID, version: int | None, projector_func: Any) -> Any:
        gt = None
        snapshots: list[Any] = []
        if self.snapshot_store is not None:
            snapshots = list(self.snapshot_store.get(originator_id=aggregate_id, desc=True, limit=1, lte=version))
        if snapshots:
            gt = snapshots[0].originator_version
            if isinstance(snapshots[0], CampaignSnapshot) and snapshots[0].needs_created_event:
                snapshots[0] = snapshots[0].with_created(self.created_event(aggregate_id))
        events = self.event_store.get(originator_id=aggregate_id, gt=gt, lte=version)
        aggregate = projector_func(None, [*snapshots, *events])
        if aggregate is None:
            raise AggregateNotFoundError(f"Aggregate {aggregate_id!r} version {version!r} not found.")
        return aggregate

    def created_event(self, aggregate_id: UUID) -> Any:
        if aggregate_id not in self.created:
            found = list(self.event_store.get(originator_id=aggregate_id, lte=1))
            if not found:
                raise AggregateNotFoundError(f"Aggregate {aggregate_id!r} has no first event.")
            self.created[aggregate_id] = found[0]
        return self.created[aggregate_id]


class CampaignMapper(TrackerMapper):
    """The tracker's mapper, storing snapshots compressed (`COMPRESSED`); events are stored as
    `TrackerMapper` stores them (the database keeps the rare one over `COMPRESS_OVER` bytes
    compressed too). Reads both, and snapshots stored uncompressed before."""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        stored = super().to_stored_event(domain_event)
        # With eventsourcing's own cipher or compressor configured, the state is theirs.
        if not isinstance(domain_event, Snapshot) or self.cipher is not None or self.compressor is not None:
            return stored
        return StoredEvent(
            originator_id=stored.originator_id,
            originator_version=stored.originator_version,
            topic=stored.topic,
            state=COMPRESSED + zlib.compress(stored.state),
        )

    # Reading is `TrackerMapper`'s: it inflates a compressed state (a snapshot, a large event)
    # itself. A log's reader (a rebuild, verify, export) calls it for every event.
    event_from_stored = TrackerMapper.to_domain_event


class TrackerApplication(Application[UUID]):
    """The eventsourcing application holding every campaign in one database."""

    name = "Tracker"
    snapshotting_intervals = {Campaign: SNAPSHOT_INTERVAL}
    snapshot_class = CampaignSnapshot

    def construct_repository(self) -> Repository[UUID]:
        return CampaignRepository(event_store=self.events, snapshot_store=self.snapshots)

    def construct_mapper(self) -> Mapper[UUID]:
        return self.factory.mapper(transcoder=self.construct_transcoder(), mapper_class=CampaignMapper)

    @property
    def event_from_stored(self) -> Callable[[StoredEvent], Any]:
        """Decodes an event of the log (not a snapshot): the mapper's own method
        (`CampaignMapper.event_from_stored`), one call an event for whoever holds it."""
        return cast(CampaignMapper, self.mapper).event_from_stored

    # Set when the database is read from a private copy: nothing may be recorded there.
    refuse_saves: str | None = None

    def save(self, *objects: Any, **kwargs: Any) -> Any:
        if self.refuse_saves is not None:
            raise InputError(self.refuse_saves)
        if not all(type(o) is Campaign for o in objects):
            return super().save(*objects, **kwargs)
        # eventsourcing's save, with the campaigns' events collected directly: its own
        # collection asks a runtime-checkable protocol of every object, which costs more than
        # the rest of collecting.
        processing_event: ProcessingEvent[UUID] = ProcessingEvent()
        for campaign in objects:
            processing_event.events.extend(campaign.collect_events())
            processing_event.aggregates[campaign.id] = campaign
        processing_event.saved_kwargs.update(kwargs)
        recordings = self._record(processing_event)
        self._take_snapshots(processing_event)
        self._notify(recordings)
        return recordings

    def _take_snapshots(self, processing_event: Any) -> None:
        # A snapshot every SNAPSHOT_INTERVAL events: at the multiple itself, or, when the
        # multiple falls inside the last action saved, after that action. The aggregate just
        # saved is the state its events give (each was applied to it as it was triggered), so
        # that snapshot is taken from it instead of loading the campaign again; loading takes
        # the latest snapshot at or below the version asked for, wherever it sits.
        events = processing_event.events
        taken: set[tuple[UUID, int]] = set()
        for event in events:
            if event.originator_version % SNAPSHOT_INTERVAL:
                continue
            aggregate = processing_event.aggregates.get(event.originator_id)
            if not isinstance(aggregate, Campaign):
                continue
            action = _action_of(event)
            last = events[-1]
            in_last_action = (
                action is not None and last.originator_id == event.originator_id and _action_of(last) == action
            )
            at = aggregate if aggregate.version == event.originator_version or in_last_action else None
            version = aggregate.version if at is not None else event.originator_version
            if (event.originator_id, version) not in taken:
                taken.add((event.originator_id, version))
                self.put_snapshot(event.originator_id, version, at)

    def take_snapshot(self, aggregate_id: UUID, version: int | None = None, projector_func: Any = None) -> None:
        self.put_snapshot(aggregate_id, version, None)

    def put_snapshot(self, aggregate_id: UUID, version: int | None, aggregate: Campaign | None) -> None:
        """A `CampaignSnapshot` (without the scenario and ruleset) of the campaign at `version`."""
        # A snapshot only speeds up loading: failing to write one must never look like
        # a failed action (the events are already committed by then).
        if self.snapshots is None:
            return
        try:
            if aggregate is None:
                aggregate = self.repository.get(aggregate_id, version=version, projector_func=_fold)
            self.snapshots.put([CampaignSnapshot.take(aggregate)])
        except (RecordConflictError, PersistenceError):
            pass


def _action_of(event: Any) -> int | None:
    """The action an event belongs to (the version of its first event), if it says."""
    action: int | None = event.__dict__.get("action")
    return action


def _fold(initial: Any, events: Iterable[Any]) -> Any:
    """The state the events give after `initial` (a snapshot first, if there is one): what
    eventsourcing's own projector does, without its protocol checks of every event."""
    agg = initial
    for event in events:
        agg = event.mutate(agg)
    return agg


def replay_checked(initial: Any, events: Iterable[Any]) -> Any:
    """Apply events (after a snapshot, if `initial` or the first item is one), checking each
    one's link to the one before and its own hash, as `verify` does."""
    agg = initial
    for event in events:
        if isinstance(event, Campaign.Snapshot):
            agg = event.mutate(None)
            continue
        version = event.originator_version
        kind = type(event).__name__
        expected_prev = agg.last_hash if agg is not None else GENESIS
        attrs = vars(event)
        if attrs.get("prev_hash") != expected_prev or attrs.get("hash") != chain_hash(
            expected_prev, kind, version, event.timestamp, event_content(attrs)
        ):
            raise DamagedLogError(
                f"event {version} ({kind}) does not match the hash chain: the stored log was edited; "
                "run `tracker verify`"
            )
        try:
            agg = event.mutate(agg)
        except Exception as e:  # noqa: BLE001 - a hashed event that cannot be applied is damage too
            raise DamagedLogError(
                f"event {version} ({kind}) cannot be applied ({type(e).__name__}); run `tracker verify`"
            ) from None
    return agg
