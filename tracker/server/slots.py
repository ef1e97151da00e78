"""The process's trackers (`Service`): each held in a `Slot` that gives it to one request at a
time, writers and readers apart, a campaign's requests striped onto the same ones."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from sqlalchemy import func, select

from domain.errors import TrackerError
from tracker.server.responses import outage, tracker_error
from tracker.server.served import ServedTracker
from tracker.service.players import Player

T = TypeVar("T")


# Trackers that record, per process, on PostgreSQL (which takes concurrent writers; on SQLite,
# one writer at a time is all the file allows); and trackers that answer reads.
WRITERS = 4
READERS = 4


class Slot:
    """One tracker, made on first use, and the lock that gives it to one request at a time.

    With `grouped` (the recording tracker on a SQLite file), its commits are made durable in
    groups (see `Datastore.commit_in_groups`): a request records and commits under the lock,
    then leaves the lock to the next one while it waits for the disk, and one flush answers
    for every commit made before it began. No request is answered before every commit it
    could have seen is durable, its own included."""

    def __init__(
        self, make: Callable[[], ServedTracker], tracker: ServedTracker | None = None, grouped: bool = False
    ) -> None:
        self.make = make
        self.grouped = grouped
        self.tracker = tracker
        if tracker is not None and grouped:
            tracker.commit_in_groups()
        self.lock = threading.Lock()

    def run(self, fn: Callable[[ServedTracker], T]) -> T:
        with self.lock:
            if self.tracker is None:
                self.tracker = self._made()
                if self.grouped:
                    self.tracker.commit_in_groups()
            tracker = self.tracker
            if not self.grouped:
                return fn(tracker)
            try:
                result = fn(tracker)
            except BaseException as e:
                # A refusal too is answered only once what it was refused on is durable.
                error: BaseException | None = e
            else:
                error = None
        tracker.durable()
        if error is not None:
            raise error
        return result

    def _made(self) -> ServedTracker:
        """A tracker made on a request's first use of this slot, while the server runs. A
        database that does not answer then is an outage, as for any request (503 with
        Retry-After, the driver's reason in the log), not the client's usage error (400) that
        opening a database says at a command line, naming where the database is."""
        try:
            return self.make()
        except TrackerError as e:
            # `Tracker` raises its one line from None: the driver's error is its context.
            cause = e.__context__
            if isinstance(cause, Exception) and outage(cause) is not None:
                raise cause from None
            raise

    def close(self) -> None:
        with self.lock:
            if self.tracker is not None:
                self.tracker.close()
                self.tracker = None


class Service:
    """The process's trackers, each given to one request at a time. A campaign's requests go
    to the trackers of its stripe (by name), so its actions take turns on one tracker, whose
    working copy stays warm, while actions on other stripes' campaigns run at the same time;
    two writers on one campaign (another process's) are settled by the recorder's version
    check and retry. Reads have trackers of their own, so a page never waits behind an action."""

    def __init__(self, make: Callable[[bool], ServedTracker], writers: int = WRITERS, readers: int = READERS) -> None:
        self.tracker = make(False)
        try:
            reader = make(True)
        except BaseException:
            self.tracker.close()
            raise
        grouped = self.tracker.url.startswith("sqlite")
        if grouped:
            writers = 1
        self.writers = [Slot(lambda: make(False), self.tracker, grouped)] + [
            Slot(lambda: make(False), grouped=grouped) for _ in range(writers - 1)
        ]
        self.readers = [Slot(lambda: make(True), reader)] + [Slot(lambda: make(True)) for _ in range(readers - 1)]

    def _stripe(self, slots: list[Slot], name: str | None) -> Slot:
        if name is None:
            # The campaign a command without --campaign acts on: the only one there is.
            known = self.tracker.registry.names()
            name = known[0][0] if len(known) == 1 else None
        return slots[zlib.crc32((name or "").encode()) % len(slots)]

    async def call(self, fn: Callable[[ServedTracker], T], name: str | None = None, player: Player | None = None) -> T:
        """`fn(tracker)` for a read about campaign `name` by `player` (None: no token), in a
        worker thread, alone on a reading tracker; errors as raised."""
        return await anyio.to_thread.run_sync(self._stripe(self.readers, name).run, as_player(player, fn))

    async def act(self, fn: Callable[[ServedTracker], T], name: str | None = None, player: Player | None = None) -> T:
        """`fn(tracker)` for anything that may record on campaign `name`, alone on its stripe's
        recording tracker."""
        return await anyio.to_thread.run_sync(self.act_now, fn, name, player)

    def act_now(self, fn: Callable[[ServedTracker], T], name: str | None = None, player: Player | None = None) -> T:
        """`act` in the calling thread (a worker thread already: it waits for the stripe)."""
        return self._stripe(self.writers, name).run(as_player(player, fn))

    async def run(
        self, fn: Callable[[ServedTracker], T], write: bool = False, name: str | None = None,
        player: Player | None = None,
    ) -> T:  # fmt: skip
        """As `call` (or `act`), with a user's error (TrackerError) turned into its JSON answer."""
        try:
            return await (self.act(fn, name, player) if write else self.call(fn, name, player))
        except TrackerError as e:
            raise tracker_error(e) from None

    def close(self) -> None:
        for slot in [*self.writers, *self.readers]:
            slot.close()

    def check_token(self, token: str) -> Player | None:
        """The player holding `token`, or None (unknown, malformed or revoked)."""
        return self.tracker.players.authenticate(token)

    def last_version(self, name: str) -> int:
        """The campaign's last event version, read straight from the database (no lock: the
        engine is shared safely between threads, and this is all a stream needs)."""
        t = self.tracker
        cid = t.registry.lookup(name)
        if cid is None:
            return 0
        table = t.recorder.table
        with t.engine.connect() as conn:
            value = conn.execute(
                select(func.max(table.c.originator_version)).where(table.c.originator_id == cid)
            ).scalar()
        return int(value or 0)


def as_player(player: Player | None, fn: Callable[[ServedTracker], T]) -> Callable[[ServedTracker], T]:
    """`fn` run with every campaign it reads checked against `player` (see `ServedTracker.acting_as`)."""
    return lambda t: t.acting_as(player, lambda: fn(t))
