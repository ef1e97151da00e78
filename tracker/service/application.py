"""The application service: persistence wiring, campaign selection, commands with conflict retry.

Each command loads the campaign (from its latest snapshot), lets the aggregate check and
record, and saves all new events in one transaction. If another writer recorded first, the
unique (campaign, version) key refuses the save; the command is then re-run on the fresh
state, so its legality is checked again and nothing is recorded twice. Actions by name, and
undo, redo and the dice source through them, are `tracker.performing`'s, mixed into `Tracker`;
the reads answered from the projections (catching them up, the board at a point) are
`tracker.service.read_models`' functions, which `Tracker`'s methods call.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

import sqlalchemy.exc
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import (
    OperationalError,
    PersistenceError,
    RecordConflictError,
    StoredEvent,
)

from domain.campaign import Campaign, one_action
from domain.dice import (
    AutoDice,
    DiceSource,
    ManualDice,
    MissingSeedDice,
    NoDice,
    Override,
    PromptDice,
    commitment,
    new_seed,
)
from domain.errors import InputError, TrackerError, Unavailable
from domain.scenario import Scenario
from projections.board import BoardProjector
from projections.schema import ensure_schema
from projections.views import BoardView, Views
from tracker.service import read_models
from tracker.service.describe import install_describer
from tracker.service.new_campaign import prepare_campaign
from tracker.service.passed_over import PassedOver, passed_over
from tracker.service.performing import ConflictError, Outcome, Performing, UndoCancelled
from tracker.storage.event_app import SNAPSHOT_INTERVAL, DamagedLogError, TrackerApplication, replay_checked
from tracker.storage.recorder import LogDamaged, StaleCopy, TrackerRecorder
from tracker.storage.store import Registry, database_url, read_only_copy, require_tracker_tables

if TYPE_CHECKING:
    # Imported when an action is recorded (`handoffs`): a command that only reads never needs it.
    from tracker.service.notify import Handoffs, PendingHandoff

T = TypeVar("T")

# Every campaign the tracker loads speaks its words: pending, the gates of `next`, refusals.
install_describer()


MAX_ATTEMPTS = 30


def driver_reason(error: BaseException) -> str:
    """The first line of the driver's own words for a failed open, as `tracker db current` says
    it: SQLAlchemy's text prefixes the driver's class name ("(psycopg.OperationalError) ...")
    and eventsourcing's errors wrap SQLAlchemy's, neither of which a user can act on."""
    cause = error
    if isinstance(cause, PersistenceError) and cause.__cause__ is not None:
        cause = cause.__cause__
    cause = getattr(cause, "orig", None) or cause
    text = str(cause).strip()
    return text.splitlines()[0] if text else "the driver gave no reason"


class Tracker(Performing):
    """Campaigns in one database: create, select, load, act, read the stored log."""

    def __init__(self, db: str | None = None, create: bool = True) -> None:
        self.url = database_url(db, create)
        # A database this process may not write is read from a private copy (see store.py).
        self._scratch = read_only_copy(self.url)
        self.read_only = self._scratch is not None
        env = {
            "PERSISTENCE_MODULE": "tracker.storage.recorder:TrackerFactory",
            "SQLALCHEMY_URL": self._opened_url(),
            "CREATE_TABLE": "y",
        }
        try:
            if not create and self.url.startswith("postgresql"):
                require_tracker_tables(self.url)
            self.app = TrackerApplication(env=env)
            if self.read_only:
                self.app.refuse_saves = f"database {self.safe_url} is read-only: it can be read, not recorded to"
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
            self._recorded: set[UUID] = set()
            self._seeds: dict[tuple[UUID, int], str] = {}
            self._committed: dict[str, str] = {}
            self._handoffs: Handoffs | None = None
        except (PersistenceError, sqlalchemy.exc.SQLAlchemyError) as e:
            if self._scratch is not None:
                self._scratch.cleanup()
            # A database that does not answer (OperationalError) may answer later: said as such.
            gone = isinstance(e, (sqlalchemy.exc.OperationalError, OperationalError))
            raise (Unavailable if gone else InputError)(
                f"cannot open database {self.safe_url}: {driver_reason(e)}"
            ) from None

    def _opened_url(self) -> str:
        if self._scratch is None:
            return self.url
        from sqlalchemy.engine import make_url

        name = Path(make_url(self.url).database or "campaign.db").name
        return f"sqlite:///{Path(self._scratch.name) / name}"

    def require_writable(self) -> None:
        """Refuse to record anything when the database was opened from a read-only copy."""
        if self.app.refuse_saves is not None:
            raise InputError(self.app.refuse_saves)

    @property
    def safe_url(self) -> str:
        from sqlalchemy.engine import make_url

        return make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        self.app.close()
        engine = getattr(self.app.factory, "datastore", None)
        if engine is not None and engine.engine is not None:
            engine.engine.dispose()
        if self._scratch is not None:
            self._scratch.cleanup()

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- campaigns -----

    def campaign_names(self) -> list[str]:
        """Registered campaigns that have been recorded (a crashed creation leaves none)."""
        return [name for name, cid in self.registry.names() if self._exists(UUID(cid))]

    def _exists(self, cid: UUID) -> bool:
        # A recorded campaign stays recorded (the log is only appended to), so a campaign seen
        # once is not looked for again: a server asks on every request.
        if cid in self._recorded:
            return True
        if self.recorder.has_events(cid):
            self._recorded.add(cid)
            return True
        return False

    def create(
        self,
        name: str,
        scenario: str,
        ruleset: str | None = None,
        dice: str | None = None,
        seed: str | None = None,
        created_by: str | None = None,
    ) -> Campaign:
        """Record a new campaign from a scenario and a ruleset (built-in names or TOML files),
        checked as `prepare_campaign` checks them; `created_by` names the player who created it
        through a league server (PL1)."""
        made = prepare_campaign(name, scenario, ruleset, dice)
        cid_text = self.registry.claim(made.name, str(uuid.uuid4()))
        cid = UUID(cid_text)
        if self._exists(cid):
            raise InputError(f"campaign {made.name!r} already exists in {self.safe_url}")
        # A given seed is for demonstrations and tests that must replay the same story.
        stored_seed = self.registry.seed(cid_text, 0, seed or new_seed())
        assert stored_seed is not None
        campaign = Campaign.create(
            cid, made.name, made.scenario_data, made.ruleset_data, made.dice_mode, commitment(stored_seed), created_by
        )
        try:
            self.app.save(campaign)
        except RecordConflictError:
            raise ConflictError(f"campaign {made.name!r} was created by another writer at the same time") from None
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
            raise InputError(f"no campaign in {self.safe_url}: create one with `tracker new NAME --scenario S`")
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
        conflicts with their version, and an action refused on it finds it behind the log
        (see `execute`); either way the action runs again on a fresh load."""
        cached = self._working.pop(cid, None)
        return cached if cached is not None else self.load(cid)

    def forget_if_behind(self, cid: UUID) -> None:
        """Drop the copy of the campaign this process kept from its last action when another
        writer recorded since (one query): for a long-lived process (the shell) that shows the
        campaign as it stands and then acts on what it showed, so its next action runs on that
        state, not on the copy behind it (where a `next` is refused as stale)."""
        kept = self._working.get(cid)
        if kept is not None and kept.version != self.recorder.last_version(cid):
            self._working.pop(cid, None)

    def advanced(self, campaign: Campaign) -> Campaign:
        """`campaign`, changed in place, with the events recorded after its version applied,
        each checked against the hash chain as `load` checks them."""
        stored = self.recorder.select_events(campaign.id, gt=campaign.version)
        return replay_checked(campaign, [self.decode(s) for s in stored])  # type: ignore[no-any-return]

    def name_of(self, campaign: Campaign) -> str:
        """The name the campaign is registered under here: the recorded one, or the one given
        to `import --as`."""
        return self.registry.name_of(str(campaign.id)) or campaign.name

    def load(self, cid: UUID, version: int | None = None) -> Campaign:
        """The campaign (at `version`) from its latest snapshot and the events after it, each
        checked against the hash chain as it is applied: loading trusts nothing `verify` does
        not check. A snapshot must sit on the log: its last hash is the hash of the event at
        its version (a snapshot left beyond a cut tail, or a foreign one, is refused)."""
        snapshot: list[int] = []

        def project(initial: Any, items: Iterable[Any]) -> Any:
            def events() -> Iterator[Any]:
                for item in items:
                    if isinstance(item, Campaign.Snapshot):
                        snapshot.append(item.originator_version)
                    yield item

            return replay_checked(initial, events())

        try:
            campaign: Any = self.app.repository.get(cid, version=version, projector_func=project)
        except AggregateNotFoundError:
            raise InputError(f"campaign {cid} not found") from None
        assert isinstance(campaign, Campaign)
        if snapshot and campaign.version == snapshot[0]:
            # No event after the snapshot vouched for its last hash: ask the event it names.
            at = self.app.recorder.select_events(cid, gt=snapshot[0] - 1, lte=snapshot[0])
            if not at or self.decode(at[0]).hash != campaign.last_hash:
                last = self.app.recorder.select_events(cid, desc=True, limit=1)
                end = last[0].originator_version if last else 0
                raise DamagedLogError(
                    f"the snapshot at event {snapshot[0]} does not match the log (which ends at event {end}): "
                    "events were deleted or the snapshot was edited; run `tracker verify`"
                )
        return campaign

    # ----- dice -----

    def dice_for(
        self,
        campaign: Campaign,
        values: Sequence[int] | None = None,
        reference: str | None = None,
        override: Override | None = None,
        ask: Callable[[str, int, int], list[int]] | None = None,
    ) -> DiceSource:
        """Typed values when given (the campaign refuses them if it rolls its own dice, D4, unless
        overridden); otherwise the campaign's own dice: none in a manual campaign, auto dice from
        the seed in an auto one."""
        if override is not None and campaign.dice_mode == "manual":
            raise InputError("this campaign uses manual dice: typed dice need no --override (D4)")
        if values is not None:
            return ManualDice(values, reference, override)
        if override is not None:
            raise InputError("--override goes with --dice: typed dice in an auto-dice campaign (D4)")
        if campaign.dice_mode == "manual":
            # A player at a terminal is asked for each roll as it comes (`ask`).
            return NoDice() if ask is None else PromptDice(ask)
        key = (campaign.id, campaign.dice_epoch)
        seed = self._seeds.get(key) or self.registry.seed(str(campaign.id), campaign.dice_epoch)
        # A seed that does not match the log's commitment (left by a crashed creation whose
        # name was reused, say) must never roll: nobody could verify its dice.
        if seed is None or self._commitment(seed) != campaign.commitments[campaign.dice_epoch]:
            return MissingSeedDice(self.registry.seeds_kept_in)
        self._seeds[key] = seed
        return AutoDice(seed)

    def _commitment(self, seed: str) -> str:
        """`commitment(seed)`, worked out once per seed this process holds (it is checked
        before every action's dice, and the hash is a tenth of a short action's CPU)."""
        found = self._committed.get(seed)
        if found is None:
            found = self._committed[seed] = commitment(seed)
        return found

    def seed_for(self, cid: UUID, epoch: int) -> str | None:
        return self.registry.seed(str(cid), epoch)

    def action_seed(self, cid: UUID, epoch: int) -> str | None:
        """`seed_for` in an action being recorded: the seed `dice_for` already read for it
        (and checked against the log) when there is one, so the store is read once."""
        return self._seeds.get((cid, epoch)) or self.seed_for(cid, epoch)

    def next_seed(self, cid: UUID, epoch: int) -> str:
        """The seed of the epoch a reveal commits to: a fresh one, stored unless the store holds
        one already (first writer wins), then kept, so an attempt run again after a conflict
        commits to the same seed without asking the store."""
        key = (cid, epoch)
        seed = self._seeds.get(key) or self.registry.seed(str(cid), epoch, new_seed())
        assert seed is not None
        self._seeds[key] = seed
        return seed

    # ----- commands -----

    def execute(
        self,
        cid: UUID,
        command: Callable[[Campaign, DiceSource], T],
        dice_values: Sequence[int] | None = None,
        reference: str | None = None,
        override: Override | None = None,
        ask: Callable[[str, int, int], list[int]] | None = None,
    ) -> T:
        """Run a command on the current state and record its events atomically; in a manual
        campaign without typed dice, `ask` (a terminal prompt) supplies each roll's dice.

        A refused command raises before anything is saved. A version conflict with another
        writer re-runs the command on the new state, up to MAX_ATTEMPTS times.
        """
        stale = 0
        for attempt in range(MAX_ATTEMPTS):
            # The working copy is taken out of the cache: if anything below fails it is simply
            # dropped, and the next action starts from the stored log again.
            kept = cid in self._working
            campaign = self._working_copy(cid)
            if self.keyed is not None:
                self.keyed.pending = None  # an earlier attempt's action is not this one's
            follows = (campaign.version, campaign.last_hash)
            try:
                handoffs = self.handoffs.start(cid, campaign)
                dice = self.dice_for(campaign, dice_values, reference, override, ask)
                # However many aggregate commands the callback runs, they are one action. A
                # failed one that recorded more than what was asked leaves this copy behind (it
                # is not put back in the cache), so the aggregate keeps no copy to roll back to:
                # that copy was a sixth of an action's CPU.
                with one_action(campaign, rollback=False):
                    result = command(campaign, dice)
                if isinstance(dice, ManualDice):
                    dice.check_all_used()
                self._follow_up(campaign, dice, result)
            except TrackerError as refused:
                # A refusal reaches no save, so no conflict tells that a kept copy was behind
                # the log: asked here, on the refusal's path alone, so that an action is never
                # refused on a state another writer moved past (a move "in the purchase phase"
                # while the shell's prompt says combat_movement); it runs on the log instead.
                if not kept or isinstance(refused, UndoCancelled) or self.recorder.last_version(cid) == follows[0]:
                    if (campaign.version, campaign.last_hash) == follows and not campaign.pending_events:
                        # Refused before it recorded more than what was asked (taken back): the
                        # copy is as it was, and the next action need not load the log again.
                        self._working[cid] = campaign
                    raise
                continue
            if not campaign.pending_events:
                self._working[cid] = campaign
                return result
            try:
                self._save(campaign, follows, handoffs)
                self._working[cid] = campaign
                if self.keyed is not None:
                    self.keyed.saved(campaign)
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

    @property
    def handoffs(self) -> Handoffs:
        """The turn hand-offs of this database's actions (see `tracker.service.notify`)."""
        if self._handoffs is None:
            from tracker.service.notify import Handoffs

            datastore = self.app.factory.datastore  # type: ignore[attr-defined]
            # On a SQLite file, read just before each action on the connection that writes it.
            read = datastore.read_on_writer if datastore.is_sqlite_filedb else None
            self._handoffs = Handoffs(self.engine, self.name_of, read)
        return self._handoffs

    def _save(self, campaign: Campaign, follows: tuple[int, str], handoffs: PendingHandoff | None) -> None:
        """Save an action's events; a hand-off it makes is written to the outbox, and a
        request's idempotency key to its table, in the same transaction (the events' insert
        joins it through `session`), so neither is ever lost nor written without the events."""
        written = [
            w
            for w in (
                handoffs.found(campaign) if handoffs is not None else None,
                self.keyed.found(campaign) if self.keyed is not None else None,
            )
            if w is not None
        ]
        if not written:
            self.app.save(campaign, follows=follows)
            return
        with self.recorder.transaction(commit=True) as session:
            self.app.save(campaign, follows=follows, session=session)
            for write in written:
                write(session)

    def _follow_up(self, campaign: Campaign, dice: DiceSource, result: Any) -> None:
        """`follow_up` as an action of its own; what it records (a server's seed reveal at a
        round's end) is told with the action's `Outcome`, as it is saved with it."""
        with one_action(campaign, rollback=False):
            before = len(campaign.pending_events)
            self.follow_up(campaign, dice)
            if isinstance(result, Outcome):
                result.events.extend(
                    cast(Campaign.Event, e)
                    for e in campaign.pending_events[before:]
                    if type(e).__name__ != "ActionAsked"
                )

    def follow_up(self, campaign: Campaign, dice: DiceSource) -> None:
        """What the service records by itself after an action, as an action of its own saved
        with it in one transaction (nothing here; a server's end-of-round seed reveal)."""

    def append_log(
        self, cid: UUID, name: str, stored: Sequence[StoredEvent], campaign: Campaign, name_registered: bool
    ) -> None:
        """Record a whole checked log as a new campaign (`import`): its name, the mark that it
        was imported and every event in one transaction, the events in one batch insert; then
        a snapshot of `campaign` (the state the log gives) and the projections caught up once.

        Raises IntegrityError when the name or the events were taken meanwhile: nothing is
        recorded then."""
        self.record_log(cid, name, stored, name_registered)
        if len(stored) >= SNAPSHOT_INTERVAL:
            # Only speeds up loading (and never fails the import: the events are committed).
            self.app.put_snapshot(cid, campaign.version, campaign)
        self.projector.catch_up_log(last_id=self.max_notification_id)

    def record_log(self, cid: UUID, name: str, stored: Sequence[StoredEvent], name_registered: bool) -> None:
        """The write of `append_log`: one transaction, the events in one batch insert, and the
        import's mark naming the name and head it recorded (which `verify` checks)."""
        from tracker.storage.store import campaigns_table, mark_imported, seeds_table

        self.require_writable()
        self.registry.upgrade_import_marks()
        head = (stored[-1].originator_version, self.decode(stored[-1]).hash)
        recorder = self.recorder
        with recorder.transaction(commit=True) as session:
            if not name_registered:
                session.execute(campaigns_table.insert().values(name=name, campaign_id=str(cid)))
            else:
                # Seeds a crashed creation left behind belong to no event of this campaign.
                session.execute(seeds_table.delete().where(seeds_table.c.campaign_id == str(cid)))
            mark_imported(session, str(cid), name, *head)
            recorder.insert_events(stored, session=session)

    # ----- read models -----

    @property
    def projector(self) -> BoardProjector:
        if self._projector is None:
            recorder = self.recorder
            self._projector = BoardProjector(
                self.engine,
                lambda start, limit: recorder.select_notifications(start, limit),
                self.app.event_from_stored,
                lambda cid, version: self.load(cid, version=version),
                recorder.last_version,
            )
        return self._projector

    def catch_up(self, cid: UUID | None = None) -> None:
        """Bring the projections up to the end of the log before anything is read from them;
        with `cid`, refuse when that campaign's projections stopped (see `read_models`)."""
        read_models.catch_up(self, cid)

    @contextmanager
    def views(self, cid: UUID) -> Iterator[Views]:
        """The campaign's views, caught up once: every read of one command goes through this."""
        self.catch_up(cid)
        with self.engine.connect() as conn:
            yield Views(conn, cid)

    def board_at(
        self, cid: UUID, turn: int | None = None, phase: str | None = None, at: int | None = None
    ) -> BoardView:
        """The board at the end of a national turn (or one of its phases), or after an event,
        answered from the projections without replaying the log."""
        with self.views(cid) as v:
            return self.board_from(v, turn=turn, phase=phase, at=at)

    def board_from(
        self,
        v: Views,
        turn: int | None = None,
        phase: str | None = None,
        at: int | None = None,
        scenario: Scenario | None = None,
    ) -> BoardView:
        """`board_at` on views a command already caught up (no second catch-up); `scenario`,
        the campaign's, when the caller holds it already."""
        return read_models.board_from(self, v, turn=turn, phase=phase, at=at, scenario=scenario)

    def passed_over(self, cid: UUID, turn: int, v: Views | None = None) -> PassedOver | None:
        """F8: national turn `turn` if the campaign passed it over (see `passed_over`), the
        entries adjustments brought forward counted from the turn each was recorded in (AD1);
        `v`, the views a command already holds."""
        campaign = self.load(cid)
        if not campaign.entered:
            return passed_over(campaign, turn, {})
        if v is None:
            with self.views(cid) as opened:
                return passed_over(campaign, turn, read_models.entries_brought_forward(self, opened))
        return passed_over(campaign, turn, read_models.entries_brought_forward(self, v))

    def owners_at(self, v: Views, seq: int, scenario: Scenario | None = None) -> dict[str, str]:
        """AD1: every territory's owner after event `seq`, by territory (see `adjusted_at`)."""
        if scenario is None:
            scenario = self.load(v.cid, version=1).scenario
        return self.adjusted_at(v, seq, scenario)[0]

    def adjusted_at(self, v: Views, seq: int, scenario: Scenario) -> tuple[dict[str, str], tuple[str, ...]]:
        """AD1: every territory's owner after event `seq`, by territory, and the nations whose
        entry into the war an adjustment brought forward by then (F8; see `read_models`)."""
        return read_models.adjusted_at(self, v, seq, scenario)

    def max_notification_id(self) -> int:
        return self.recorder.max_notification_id() or 0

    # ----- the stored log -----

    def stored_events(self, cid: UUID) -> list[StoredEvent]:
        return list(self.app.recorder.select_events(cid))

    def decode(self, stored: StoredEvent) -> Campaign.Event:
        """An event of the log (not a snapshot) as the domain's event."""
        return self.app.event_from_stored(stored)  # type: ignore[no-any-return]

    def events(self, cid: UUID) -> list[Campaign.Event]:
        return [self.decode(s) for s in self.stored_events(cid)]
