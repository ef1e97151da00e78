"""The event streams' shared watch: per server process, one task per watched campaign learns
the campaign's last version and tells every stream following it, so the database sees one
read per campaign per interval however many pages are open.

On SQLite the task reads the version every POLL_SECONDS. On PostgreSQL one LISTEN connection
per process hears the recorder's NOTIFY after every insert (by any process) and wakes the
tasks, which then read the version; they also read it every CHECK_SECONDS, in case a notice
was missed (a dropped connection). A task starts with the first stream following its campaign
and stops when the last one leaves; the LISTEN connection likewise with the first and last task.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import re
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import anyio.to_thread

log = logging.getLogger("tracker.server")

# How often a campaign's task reads its last version where nothing tells it of a write.
POLL_SECONDS = 0.5
# How often it reads it all the same where a LISTEN connection does.
CHECK_SECONDS = 15.0
# How long the LISTEN connection waits before connecting again after losing the server.
RECONNECT_SECONDS = 2.0


@dataclass(frozen=True)
class Channel:
    """A PostgreSQL notification channel: the server (a libpq URL) and the channel's name."""

    conninfo: str
    name: str


class Watch:
    """One campaign's last version as its task last read it (-1: not read yet), and the
    streams following it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.version = -1
        self.followers = 0
        # Replaced on each change: whoever waited on the old one learns of the change.
        self.changed = asyncio.Event()
        # Set by the LISTEN connection: something was recorded, read the version now.
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def publish(self, version: int) -> None:
        if version != self.version:
            self.version = version
            told, self.changed = self.changed, asyncio.Event()
            told.set()

    async def next_version(self, seen: int, timeout: float) -> int | None:
        """The campaign's last version once it is known and differs from `seen`, or None if
        that does not happen within `timeout` seconds."""
        changed = self.changed
        if self.version >= 0 and self.version != seen:
            return self.version
        try:
            await asyncio.wait_for(changed.wait(), timeout)
        except TimeoutError:
            return None
        return self.version if self.version != seen else None


class Watcher:
    """A process's watches: `follow(name)` gives a stream the campaign's `Watch`, starting its
    task if it is the first to follow it. `read(name)` reads a campaign's last version from
    the database (blocking: run in a worker thread); `channel`, on PostgreSQL, is where the
    recorder notifies."""

    def __init__(self, read: Callable[[str], int], channel: Channel | None = None) -> None:
        self.read = read
        self.channel = channel
        self.watches: dict[str, Watch] = {}
        self.listener: asyncio.Task[None] | None = None
        self.closed = False

    def close(self) -> None:
        """End every stream following a campaign here: the server is shutting down. A stream
        never ends by itself, and the ASGI server waits for every response to end before it
        stops, so without this one open page would keep a stopped server up for ever."""
        self.closed = True
        for watch in self.watches.values():
            told, watch.changed = watch.changed, asyncio.Event()
            told.set()

    @contextlib.asynccontextmanager
    async def follow(self, name: str) -> AsyncIterator[Watch]:
        """Campaign `name`'s watch while the block runs; its task stops when the last stream
        following it leaves."""
        watch = self.watches.get(name)
        if watch is None:
            watch = self.watches[name] = Watch(name)
            watch.task = asyncio.create_task(self._watch(watch), name=f"watch {name}")
            if self.channel is not None and self.listener is None:
                self.listener = asyncio.create_task(self._listen(self.channel), name="watch LISTEN")
        watch.followers += 1
        try:
            yield watch
        finally:
            watch.followers -= 1
            if watch.followers == 0:
                self._stop(watch)

    def _stop(self, watch: Watch) -> None:
        del self.watches[watch.name]
        assert watch.task is not None
        watch.task.cancel()
        if not self.watches and self.listener is not None:
            self.listener.cancel()
            self.listener = None

    async def _watch(self, watch: Watch) -> None:
        """Read the campaign's version, then wait for a wake-up (or the interval), and again."""
        interval = POLL_SECONDS if self.channel is None else CHECK_SECONDS
        while True:
            try:
                watch.publish(await anyio.to_thread.run_sync(self.read, watch.name))
            except Exception as e:  # noqa: BLE001 - a stream outlives a failed read; the next one may work
                log.warning("event stream of %r: reading its version failed (%s: %s)", watch.name, type(e).__name__, e)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(watch.wake.wait(), interval)
            # Cleared before reading: a notice arriving during the read wakes the next wait.
            watch.wake.clear()

    def _wake_all(self) -> None:
        for watch in self.watches.values():
            watch.wake.set()

    async def _listen(self, channel: Channel) -> None:
        """LISTEN on the channel and wake every watch at each notice; connect again when the
        connection is lost (waking them too: a notice may have been missed meanwhile)."""
        import psycopg

        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(channel.conninfo, autocommit=True)
                async with conn:
                    await conn.execute(f"LISTEN {channel.name}")
                    self._wake_all()
                    async for _notice in conn.notifies():
                        self._wake_all()
            except psycopg.Error as e:
                log.warning("event streams: LISTEN %s failed (%s: %s)", channel.name, type(e).__name__, e)
            self._wake_all()
            await asyncio.sleep(RECONNECT_SECONDS)


def channel_of(url: str, channel_name: str) -> Channel | None:
    """The channel the recorder notifies on for database URL `url` (a SQLAlchemy URL), or None
    if the database does not notify (anything but PostgreSQL) or nothing here could listen."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    # The LISTEN connection is psycopg's: without it, PostgreSQL is polled as SQLite is.
    if parsed.get_backend_name() != "postgresql" or importlib.util.find_spec("psycopg") is None:
        return None
    # The recorder names the channel unquoted, so PostgreSQL folds it to lower case.
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", channel_name):
        return None
    conninfo = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    return Channel(conninfo, channel_name.lower())


_watchers: weakref.WeakKeyDictionary[object, Watcher] = weakref.WeakKeyDictionary()


def watching(owner: object) -> Watcher | None:
    """The watcher of `owner`, if a stream made one."""
    return _watchers.get(owner)


def watcher_for(owner: object, make: Callable[[], Watcher]) -> Watcher:
    """The watcher of `owner` (the server's service: one per application), made on first use."""
    watcher = _watchers.get(owner)
    if watcher is None:
        watcher = _watchers[owner] = make()
    return watcher
