"""The application service: persistence wiring, campaign selection, commands with conflict retry.

Each command loads the campaign (from its latest snapshot), lets the aggregate check and
record, and saves all new events in one transaction. If another writer recorded first, the
unique (campaign, version) key refuses the save; the command is then re-run on the fresh
state, so its legality is checked again and nothing is recorded twice.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar
from uuid import UUID

import sqlalchemy.exc
from eventsourcing.application import AggregateNotFoundError, Application, Repository
from eventsourcing.persistence import (
    OperationalError,
    PersistenceError,
    RecordConflictError,
    StoredEvent,
)

from domain.campaign import Campaign
from domain.dice import AutoDice, Dice, DiceSource, ManualDice, NoDice, commitment, new_seed
from domain.errors import InputError, RuleViolation, TrackerError
from domain.ruleset import load_ruleset, ruleset_from_dict
from domain.scenario import read_scenario, scenario_from_dict
from projections.board import BoardProjector, Views, ensure_schema, stopped_at
from tracker.recorder import CampaignSnapshot, LogDamaged, StaleCopy, TrackerRecorder
from tracker.store import Registry, database_url

T = TypeVar("T")


def board_in(v: Views, turn: int | None = None, phase: str | None = None, at: int | None = None) -> dict[str, Any]:
    """The board at the end of a national turn (or one of its phases), or after an event."""
    if turn is not None:
        seq = v.seq_at_end_of(turn, phase)
        if seq is None:
            what = f"phase {phase} of turn {turn}" if phase else f"turn {turn}"
            raise InputError(f"{what} has not been played in this campaign")
    else:
        assert at is not None
        seq = at
    try:
        return v.board_at(seq)
    except LookupError:
        raise InputError(f"no event {seq} in this campaign") from None

SNAPSHOT_INTERVAL = 200
MAX_ATTEMPTS = 30


class ConflictError(TrackerError):
    """Another writer kept recording on the same campaign; the action was not recorded."""


class MissingSeedDice:
    """Auto dice whose seed this database does not hold (an imported campaign): an action
    that rolls nothing still runs; one that rolls asks for physical dice."""

    def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
        raise InputError(
            f"{what} needs {count} D{faces}, and this database does not hold the campaign's dice seed "
            "(was it imported?); roll physical dice and pass them with --dice"
        )


class CampaignRepository(Repository[UUID]):
    """Loads campaigns from their latest snapshot, putting back the scenario and ruleset a
    snapshot leaves out (see `tracker.recorder.CampaignSnapshot`) from the first event."""

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


class TrackerApplication(Application[UUID]):
    """The eventsourcing application holding every campaign in one database."""

    name = "Tracker"
    snapshotting_intervals = {Campaign: SNAPSHOT_INTERVAL}
    snapshot_class = CampaignSnapshot

    def construct_repository(self) -> Repository[UUID]:
        return CampaignRepository(event_store=self.events, snapshot_store=self.snapshots)

    def take_snapshot(
        self, aggregate_id: UUID, version: int | None = None, projector_func: Any = None
    ) -> None:
        # A snapshot only speeds up loading: failing to write one must never look like
        # a failed action (the events are already committed by then).
        try:
            if projector_func is None:
                super().take_snapshot(aggregate_id, version)
            else:
                super().take_snapshot(aggregate_id, version, projector_func)
        except (RecordConflictError, PersistenceError):
            pass


class Tracker:
    """Campaigns in one database: create, select, load, act, read the stored log."""

    def __init__(self, db: str | None = None) -> None:
        self.url = database_url(db)
        env = {
            "PERSISTENCE_MODULE": "tracker.recorder:TrackerFactory",
            "SQLALCHEMY_URL": self.url,
            "CREATE_TABLE": "y",
        }
        try:
            self.app = TrackerApplication(env=env)
            engine = self.app.factory.datastore.engine  # type: ignore[attr-defined]
            self.engine = engine
            self.registry = Registry(engine)
            # The write checks read the projections' position, so their tables must exist.
            ensure_schema(engine)
            self.recorder.check_projection_position = True
            self._projector: BoardProjector | None = None
            # Campaigns as this process last saved them, and dice seeds, keyed by campaign:
            # a long session (the demo, a benchmark, a play shell) then runs each action on
            # the copy it kept; another writer's events in between make the save conflict
            # (unique version), and the action runs again on the stored log.
            self._working: dict[UUID, Campaign] = {}
            self._seeds: dict[tuple[UUID, int], str] = {}
        except (PersistenceError, sqlalchemy.exc.SQLAlchemyError) as e:
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise InputError(f"cannot open database {self.safe_url}: {reason}") from None

    @property
    def safe_url(self) -> str:
        from sqlalchemy.engine import make_url

        return make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        self.app.close()
        engine = getattr(self.app.factory, "datastore", None)
        if engine is not None and engine.engine is not None:
            engine.engine.dispose()

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- campaigns -----

    def campaign_names(self) -> list[str]:
        """Registered campaigns that have been recorded (a crashed creation leaves none)."""
        return [name for name, cid in self.registry.names() if self._exists(UUID(cid))]

    def _exists(self, cid: UUID) -> bool:
        return bool(self.app.recorder.select_events(cid, limit=1))

    def create(
        self,
        name: str,
        scenario: str,
        ruleset: str | None = None,
        dice: str | None = None,
        seed: str | None = None,
    ) -> Campaign:
        """Record a new campaign from a scenario and a ruleset (built-in names or TOML files)."""
        name = name.strip()
        if not name or len(name) > 200:
            raise InputError("a campaign name must have 1 to 200 characters")
        scenario_data, scenario_source = read_scenario(scenario)
        declared = scenario_data.get("scenario", {}).get("ruleset", "twtea-3e")
        ruleset_obj, ruleset_data = load_ruleset(
            ruleset or (declared if isinstance(declared, str) else "twtea-3e")
        )
        parsed = scenario_from_dict(scenario_data, scenario_source, ruleset_obj)
        dice_mode = dice or parsed.dice
        if dice_mode not in ("auto", "manual"):
            raise InputError(f"dice mode must be auto or manual, got {dice_mode!r}")
        # Check the recorded copies parse the same way before anything is written.
        ruleset_from_dict(ruleset_data, "ruleset")
        cid_text = self.registry.claim(name, str(uuid.uuid4()))
        cid = UUID(cid_text)
        if self._exists(cid):
            raise InputError(f"campaign {name!r} already exists in {self.safe_url}")
        # A given seed is for demonstrations and tests that must replay the same story.
        stored_seed = self.registry.seed(cid_text, 0, seed or new_seed())
        assert stored_seed is not None
        seed = stored_seed
        campaign = Campaign.create(cid, name, scenario_data, ruleset_data, dice_mode, commitment(seed))
        try:
            self.app.save(campaign)
        except RecordConflictError:
            raise ConflictError(f"campaign {name!r} was created by another writer at the same time") from None
        return campaign

    def campaign_id(self, name: str | None) -> UUID:
        """The campaign named, or the only one in the database."""
        if name:
            cid = self.registry.lookup(name)
            if cid is None or not self._exists(UUID(cid)):
                known = ", ".join(self.campaign_names()) or "none"
                raise InputError(f"no campaign named {name!r} in {self.safe_url} (campaigns: {known})")
            return UUID(cid)
        names = self.campaign_names()
        if not names:
            raise InputError(
                f"no campaign in {self.safe_url}: create one with `tracker new NAME --scenario S`"
            )
        if len(names) > 1:
            raise InputError(
                f"{len(names)} campaigns in {self.safe_url}; pick one with --campaign ({', '.join(names)})"
            )
        cid = self.registry.lookup(names[0])
        assert cid is not None
        return UUID(cid)

    @property
    def recorder(self) -> TrackerRecorder:
        recorder = self.app.recorder
        assert isinstance(recorder, TrackerRecorder)
        return recorder

    def _working_copy(self, cid: UUID) -> Campaign:
        """The campaign as last saved by this process, or loaded from its latest snapshot.

        No query checks the kept copy: if another writer recorded meanwhile, saving on it
        conflicts with their version and the action runs again on a fresh load."""
        cached = self._working.pop(cid, None)
        return cached if cached is not None else self.load(cid)

    def name_of(self, campaign: Campaign) -> str:
        """The name the campaign is registered under here: the recorded one, or the one given
        to `import --as`."""
        return self.registry.name_of(str(campaign.id)) or campaign.name

    def load(self, cid: UUID, version: int | None = None) -> Campaign:
        try:
            campaign: Any = self.app.repository.get(cid, version=version)
        except AggregateNotFoundError:
            raise InputError(f"campaign {cid} not found") from None
        assert isinstance(campaign, Campaign)
        return campaign

    # ----- dice -----

    def dice_for(
        self, campaign: Campaign, values: Sequence[int] | None = None, reference: str | None = None
    ) -> DiceSource:
        """Manual values when given (or required); otherwise the campaign's auto dice."""
        if values is not None:
            return ManualDice(values, reference)
        if campaign.dice_mode == "manual":
            return NoDice()
        key = (campaign.id, campaign.dice_epoch)
        seed = self._seeds.get(key) or self.registry.seed(str(campaign.id), campaign.dice_epoch)
        # A seed that does not match the log's commitment (left by a crashed creation whose
        # name was reused, say) must never roll: nobody could verify its dice.
        if seed is None or commitment(seed) != campaign.commitments[campaign.dice_epoch]:
            return MissingSeedDice()
        self._seeds[key] = seed
        return AutoDice(seed)

    def seed_for(self, cid: UUID, epoch: int) -> str | None:
        return self.registry.seed(str(cid), epoch)

    # ----- commands -----

    def execute(
        self,
        cid: UUID,
        command: Callable[[Campaign, DiceSource], T],
        dice_values: Sequence[int] | None = None,
        reference: str | None = None,
    ) -> T:
        """Run a command on the current state and record its events atomically.

        A refused command raises before anything is saved. A version conflict with another
        writer re-runs the command on the new state, up to MAX_ATTEMPTS times.
        """
        stale = 0
        for attempt in range(MAX_ATTEMPTS):
            # The working copy is taken out of the cache: if anything below fails it is simply
            # dropped, and the next action starts from the stored log again.
            campaign = self._working_copy(cid)
            follows = (campaign.version, campaign.last_hash)
            dice = self.dice_for(campaign, dice_values, reference)
            result = command(campaign, dice)
            if isinstance(dice, ManualDice):
                dice.check_all_used()
            if not campaign.pending_events:
                self._working[cid] = campaign
                return result
            try:
                self.app.save(campaign, follows=follows)
                self._working[cid] = campaign
                return result
            except StaleCopy as e:
                # The event this copy ends with was replaced (a cut log written again): load
                # afresh once; a snapshot that disagrees with the log stops here.
                stale += 1
                if stale > 1:
                    raise LogDamaged(
                        f"event {e.version} of this campaign is not the one its latest snapshot follows: the log "
                        "was cut below the snapshot and written again; nothing was recorded (run `tracker verify`)"
                    ) from None
            except RecordConflictError:
                # Random back-off so two writers in lock-step do not keep colliding.
                time.sleep(random.uniform(0, 0.005 * (attempt + 1)))
            except OperationalError as e:
                # SQLite reports a writer holding the lock past the busy timeout this way.
                if "locked" not in str(e):
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise ConflictError(
            f"another writer kept recording on this campaign; the action was not recorded "
            f"after {MAX_ATTEMPTS} attempts, try again"
        )

    # ----- read models -----

    @property
    def projector(self) -> BoardProjector:
        if self._projector is None:
            recorder = self.recorder
            self._projector = BoardProjector(
                self.engine,
                lambda start, limit: recorder.select_notifications(start, limit),
                self.app.mapper.to_domain_event,
                lambda cid, version: self.load(cid, version=version),
                recorder.last_version,
            )
        return self._projector

    def catch_up(self, cid: UUID | None = None) -> None:
        """Bring the projections up to the end of the log before anything is read from them;
        with `cid`, refuse when that campaign's projections stopped (naming where and why)."""
        self.projector.catch_up(last_id=self.max_notification_id)
        if cid is not None:
            with self.engine.connect() as conn:
                problem = stopped_at(conn, cid)
            if problem is not None:
                raise InputError(
                    f"the history of this campaign cannot be read past event {problem[0]} ({problem[1]}); "
                    "run `tracker verify`"
                )

    @contextmanager
    def views(self, cid: UUID) -> Iterator[Views]:
        """The campaign's views, caught up once: every read of one command goes through this."""
        self.catch_up(cid)
        with self.engine.connect() as conn:
            yield Views(conn, cid)

    def board_at(
        self, cid: UUID, turn: int | None = None, phase: str | None = None, at: int | None = None
    ) -> dict[str, Any]:
        """The board at the end of a national turn (or one of its phases), or after an event,
        answered from the projections without replaying the log."""
        with self.views(cid) as v:
            return board_in(v, turn=turn, phase=phase, at=at)

    def max_notification_id(self) -> int:
        return self.recorder.max_notification_id() or 0

    # ----- the stored log -----

    def stored_events(self, cid: UUID) -> list[StoredEvent]:
        return list(self.app.recorder.select_events(cid))

    def decode(self, stored: StoredEvent) -> Campaign.Event:
        return self.app.mapper.to_domain_event(stored)  # type: ignore[return-value]

    def events(self, cid: UUID) -> list[Campaign.Event]:
        return [self.decode(s) for s in self.stored_events(cid)]

    # ----- undo -----

    def undo(
        self, cid: UUID, to: int | None = None, override: bool = False, reason: str = ""
    ) -> Campaign.Event:
        """RK3: undo the last undoable action, or every action after event `to`."""

        def command(campaign: Campaign, _dice: DiceSource) -> Campaign.Event:
            undone_from, actions, rolls = self.undo_plan(cid, campaign.version, to)
            restored = self.load(cid, version=undone_from - 1).game_state()
            campaign.undo(undone_from, actions, restored, rolls, override, reason)
            event = campaign.pending_events[-1]
            assert isinstance(event, Campaign.ActionUndone)
            return event

        return self.execute(cid, command)

    def undo_plan(self, cid: UUID, version: int, to: int | None) -> tuple[int, list[int], list[int]]:
        """(first event undone, actions undone, dice rolls among them) for an undo at `version`."""
        if to is not None:
            if to < 1 or to >= version:
                raise InputError(f"--to must name an event between 1 and {version - 1}, got {to}")
            first = to + 1
        else:
            first = self._last_undoable_action(cid, version)
        after = [self.decode(s) for s in self.app.recorder.select_events(cid, gt=first - 1, lte=version)]
        if after and after[0].action != first:
            raise InputError(
                f"event {first} is part of the action that began at event {after[0].action}; "
                f"undo --to {after[0].action - 1} to take that whole action back"
            )
        undone = self._undone_versions(after)
        actions = sorted({e.action for e in after if e.originator_version not in undone})
        rolls = [
            e.roll for e in after if isinstance(e, Campaign.DiceRolled) and e.originator_version not in undone
        ]
        return first, actions, rolls

    @staticmethod
    def _undone_versions(events: Sequence[Campaign.Event]) -> set[int]:
        undone: set[int] = set()
        for e in events:
            if isinstance(e, Campaign.ActionUndone):
                undone.update(range(e.undone_from, e.undone_to + 1))
        return undone

    def _last_undoable_action(self, cid: UUID, version: int) -> int:
        """Walk back past undo events and what they undid to the most recent live action."""
        undone: set[int] = set()
        top = version
        while top > 0:
            page = self.app.recorder.select_events(cid, lte=top, desc=True, limit=500)
            if not page:
                break
            for stored in page:
                e = self.decode(stored)
                v = e.originator_version
                if isinstance(e, Campaign.ActionUndone):
                    undone.update(range(e.undone_from, e.undone_to + 1))
                    undone.update(range(e.action, v + 1))
                    continue
                if v in undone:
                    continue
                if isinstance(e, Campaign.Created):
                    break
                return e.action
            top = page[-1].originator_version - 1
        raise RuleViolation("RK3", "there is no action to undo")

    def reveal_seed(self, cid: UUID) -> str:
        """Publish the current dice seed in the log and commit to a fresh one (D3)."""

        def command(campaign: Campaign, _dice: DiceSource) -> str:
            seed = self.registry.seed(str(cid), campaign.dice_epoch)
            if seed is None:
                raise InputError("this database does not hold the campaign's dice seed")
            nxt = self.registry.seed(str(cid), campaign.dice_epoch + 1, new_seed())
            assert nxt is not None
            campaign.reveal_seed(seed, commitment(nxt))
            return seed

        return self.execute(cid, command, dice_values=None)
