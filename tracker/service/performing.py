"""Actions by name (`tracker.actions`) on a campaign in the database: what was asked is recorded
first, in the transaction of what the action records, and undo, redo and the dice source go
through them (mixed into `tracker.application.Tracker`); and the errors a recording ends in
when another writer came first."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from domain.campaign import Campaign
from domain.dice import DiceSource, Override, commitment
from domain.errors import InputError, TrackerError
from domain.rules.record import NAMES_NOT_THE_ACTOR, UndoPlan, deciders
from domain.text import plural
from tracker.service import actions
from tracker.service.idempotency import KeyedRequest, RequestKeys

T = TypeVar("T")

if TYPE_CHECKING:
    from eventsourcing.persistence import StoredEvent
    from sqlalchemy.engine import Engine

    from tracker.storage.event_app import TrackerApplication
    from tracker.storage.store import Registry


class ConflictError(TrackerError):
    """Another writer kept recording on the same campaign; the action was not recorded."""


class StaleView(ConflictError):
    """The campaign moved past the version the user saw; nothing was recorded (exit 1)."""


# Actions whose meaning depends on the state the user looked at: never re-run on a newer one.
SEEN_DEPENDENT = frozenset({"undo", "redo", "next"})


class UndoCancelled(TrackerError):
    """The user said no when asked to confirm an undo; nothing was recorded."""


class Performing:
    """Actions by name, undo, redo and the dice source, on the campaigns of a `Tracker`."""

    if TYPE_CHECKING:
        # What Tracker (tracker.application) provides, declared for type checkers only;
        # `execute` runs a command and records its events, retried on conflicts.
        app: TrackerApplication
        registry: Registry
        engine: Engine
        execute: Callable[..., Any]

        def load(self, cid: UUID, version: int | None = None) -> Campaign: ...

        def decode(self, stored: StoredEvent) -> Campaign.Event: ...

        def action_seed(self, cid: UUID, epoch: int) -> str | None: ...

        def next_seed(self, cid: UUID, epoch: int) -> str: ...

    def perform(
        self,
        cid: UUID,
        name: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        seen: int | None = None,
        player: str | None = None,
        nation: str | None = None,
        ask: Callable[[str, int, int], list[int]] | None = None,
        confirm: Callable[[UndoPlan], bool] | None = None,
    ) -> Outcome:
        """Run the registered action `name` with `inputs` (checked first: an InputError names
        the input), recording an ActionAsked event (name, inputs, the version seen, who asked)
        before the events the action records, all in one transaction. `confirm` sees an undo's
        plan before anything is saved; `ask` supplies manual dice at a terminal."""
        action = actions.get(name)
        clean = action.validate(inputs or {})
        values = reference = override = None
        if action.rolls:
            values, reference = clean["dice"], clean["ref"]
            if clean["override"]:
                if values is None:
                    raise InputError("--override goes with --dice: typed dice in an auto-dice campaign (D4)")
                override = Override(clean["reason"], tuple(clean["agreed_by"]))
        if values is not None:
            ask = None
        if seen is not None and not 1 <= seen <= 2**31 - 1:
            raise InputError(f"--seen must be an event number between 1 and {2**31 - 1}, got {seen}")
        # What the user saw: given, or for an action whose meaning depends on it (undo, redo,
        # next), the state the first attempt ran on; a retry after a conflict is then refused.
        saw: list[int] = [] if seen is None else [seen]
        # What the action's meaning rests on (a battle's step, the seed epoch) as its first
        # attempt found it, with that attempt's version: a retry on a state where it changed
        # would do something else than was asked (a second step of the battle), so it is refused.
        found: list[tuple[int, Any]] = []

        # A request with an idempotency key writes it with the first action it records.
        keyed = self.keyed if self.keyed is not None and self.keyed.open else None

        def command(campaign: Campaign, dice: DiceSource) -> Outcome:
            start = campaign.version
            if keyed is not None:
                # Checked on every attempt: a conflict's winner may be this request's first try.
                keyed.check(str(cid))
            if not saw and name in SEEN_DEPENDENT:
                saw.append(start)
            if saw and saw[0] != start:
                self._refuse_stale(cid, saw[0], start)
            if action.depends is not None:
                now = copy.deepcopy(action.depends(campaign, clean))
                if not found:
                    found.append((start, now))
                elif found[0][1] != now:
                    self._refuse_stale(cid, found[0][0], start)
            done = self.record_action(campaign, dice, name, clean, saw[0] if saw else start, player, nation, confirm)
            if keyed is not None:
                keyed.pending = done
            return done

        try:
            outcome: Outcome = self.execute(cid, command, values, reference, override, ask)
            return outcome
        except _NothingRecorded as nothing:
            return Outcome(name, 0, [], nothing.value, self.load(cid))
        except IntegrityError:
            # Another server process wrote the key meanwhile (its events are saved, these not).
            if keyed is not None:
                keyed.check(str(cid))
            raise

    # ----- idempotency keys -----

    keyed: KeyedRequest | None = None

    def with_key(self, request: KeyedRequest, fn: Callable[[], T]) -> T:
        """`fn()` as a request with an idempotency key (see `tracker.service.idempotency`)."""
        before, self.keyed = self.keyed, request
        try:
            return fn()
        finally:
            self.keyed = before

    @property
    def request_keys(self) -> RequestKeys:
        """The idempotency keys of this database (their table made on first use)."""
        keys = self.__dict__.get("_request_keys")
        if keys is None:
            keys = self.__dict__["_request_keys"] = RequestKeys(self.engine)
        return cast(RequestKeys, keys)

    def record_action(
        self,
        campaign: Campaign,
        dice: DiceSource,
        name: str,
        clean: dict[str, Any],
        seen: int,
        player: str | None = None,
        nation: str | None = None,
        confirm: Callable[[UndoPlan], bool] | None = None,
    ) -> Outcome:
        """Record on `campaign` what was asked (action `name`, its checked inputs `clean`) and
        what the action records, without saving: `perform`'s work inside `execute`, also run by
        a command that records an action of its own after another (a server's seed reveal)."""
        start = campaign.version
        campaign.ask(name, clean, seen, player, nation)
        value = actions.get(name).perform(campaign, dice, clean, _StoredLog(self, campaign.id, confirm))
        events = [e for e in campaign.pending_events if e.originator_version > start + 1]
        if not events:
            # Nothing happened: what was asked is not recorded alone (see one_action).
            raise _NothingRecorded(value)
        return Outcome(name, start + 1, cast(list[Campaign.Event], events), value, campaign)

    def _refuse_stale(self, cid: UUID, seen: int, now: int) -> None:
        """RK3, RK4, T2: the campaign moved past what the user saw: say who recorded what."""
        if seen > now:
            raise InputError(f"--seen {seen}: this campaign has only {now} events")
        who: list[str] = []
        revealed = 0
        # RK3, RK4: an undo or a redo meanwhile changed what the board was, not only added to
        # it; the player whose command raced it is told which, or reads it as a plain move.
        undone: list[str] = []
        events: list[Any] = list(_StoredLog(self, cid, None).between(seen, now))
        # RK3, NC4: a decision to go on (fight on) records no event of its own: its events name
        # the next round's choosers or none, but the action is the deciding nation's.
        decided = deciders(events, self.load(cid, version=seen).battles) if events else {}
        for e in events:
            kind = type(e).__name__
            if kind == "ActionUndone":
                undone.append(f"undo event {e.originator_version} took back events {e.undone_from}-{e.undone_to}")
            elif kind == "ActionRedone":
                undone.append(f"redo event {e.originator_version} put back action {e.original}")
            # A seed revealed (D4, the server's at a round's end) is nobody's move.
            if kind == "SeedRevealed" or (kind == "ActionAsked" and getattr(e, "name", None) == "dice reveal"):
                revealed += 1
                continue
            # A phase change names the nation whose turn comes next, and a turn passed over or
            # an entry into the war (F8) a neutral's, not who recorded it.
            if kind in NAMES_NOT_THE_ACTOR:
                continue
            fields = (getattr(e, f, None) for f in ("nation", "attacker", "roller"))
            nation = decided.get(e.action) or next((v for v in fields if isinstance(v, str)), None)
            if nation and nation not in who:
                who.append(nation)
        moved = now - seen - revealed
        if moved and not who:
            who.append(self.load(cid, version=seen).nation)
        parts = [f"{' and '.join(who)} recorded {plural(moved, 'event')}"] if moved else []
        if revealed:
            parts.append(f"a dice seed was revealed ({plural(revealed, 'event')}, D4)")
        among = f" ({'; '.join(undone)})" if undone else ""
        raise StaleView(f"{' and '.join(parts)} meanwhile{among}; look and run again")

    # ----- undo (RK3) and redo (RK4) -----

    def undo(
        self,
        cid: UUID,
        to: int | None = None,
        override: bool = False,
        reason: str = "",
        agreed_by: Sequence[str] = (),
        confirm: Callable[[UndoPlan], bool] | None = None,
    ) -> Campaign.Event:
        """RK3: undo the last undoable action, or every action after event `to`."""
        return self.undo_with_plan(cid, to, override, reason, agreed_by, confirm)[0]

    def undo_with_plan(
        self,
        cid: UUID,
        to: int | None = None,
        override: bool = False,
        reason: str = "",
        agreed_by: Sequence[str] = (),
        confirm: Callable[[UndoPlan], bool] | None = None,
    ) -> tuple[Campaign.Event, UndoPlan]:
        """The undo event and what it took back. `confirm` sees the plan once the aggregate has
        accepted it and before anything is saved; if it says no, nothing is recorded."""
        inputs = {"to": to, "override": override, "reason": reason, "agreed_by": list(agreed_by)}
        done = self.perform(cid, "undo", inputs, confirm=confirm)
        event = done.events[-1]
        assert isinstance(event, Campaign.ActionUndone)
        return event, done.value

    def redo(self, cid: UUID, every: bool = False) -> list[list[Campaign.Event]]:
        """RK4: re-record the most recently undone action (`every`: all the actions of the last
        undo still to redo, in order) with its recorded dice. Returns the events of each redo."""
        return cast(list[list[Campaign.Event]], self.perform(cid, "redo", {"all": every}).value)

    # ----- dice source (D4) -----

    def switch_dice(self, cid: UUID, mode: str, reason: str) -> Campaign.Event:
        """D4: record a switch of the campaign's dice source. Auto dice can resume only where
        this database holds the campaign's current seed."""
        return self.perform(cid, "dice switch", {"mode": mode, "reason": reason}).events[-1]

    def reveal_seed(self, cid: UUID) -> str:
        """Publish the current dice seed in the log and commit to a fresh one (D3)."""
        return cast(str, self.perform(cid, "dice reveal").value)


class _NothingRecorded(Exception):
    def __init__(self, value: Any) -> None:
        super().__init__("nothing recorded")
        self.value = value


@dataclass
class Outcome:
    """What an action recorded: the event holding what was asked, the events after it, the
    action's own result, and the campaign as it now stands."""

    action: str
    asked: int
    events: list[Campaign.Event]
    value: Any
    campaign: Campaign


class _StoredLog:
    """The `tracker.undo_log.Log` of a campaign in the database, for actions being recorded."""

    replaying = False

    def __init__(self, tracker: Performing, cid: UUID, confirm: Callable[[UndoPlan], bool] | None) -> None:
        self.tracker, self.cid, self._confirm = tracker, cid, confirm

    def desc(self, top: int) -> Iterator[Campaign.Event]:
        recorder = self.tracker.app.recorder
        while top > 0:
            page = recorder.select_events(self.cid, lte=top, desc=True, limit=200)
            if not page:
                return
            for stored in page:
                yield self.tracker.decode(stored)
            top = page[-1].originator_version - 1

    def between(self, gt: int, lte: int) -> Iterator[Campaign.Event]:
        recorder = self.tracker.app.recorder
        while gt < lte:
            page = recorder.select_events(self.cid, gt=gt, lte=lte, limit=500)
            if not page:
                return
            for stored in page:
                yield self.tracker.decode(stored)
            gt = page[-1].originator_version

    def state_before(self, version: int) -> dict[str, Any]:
        return self.tracker.load(self.cid, version=version - 1).game_state()

    def seed(self, epoch: int) -> str | None:
        return self.tracker.action_seed(self.cid, epoch)

    def next_commitment(self, epoch: int) -> str:
        return commitment(self.tracker.next_seed(self.cid, epoch))

    def confirm(self, plan: Any) -> None:
        if self._confirm is not None and not self._confirm(plan):
            raise UndoCancelled("undo cancelled: nothing was recorded")
