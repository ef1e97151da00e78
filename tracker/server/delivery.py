"""The server's delivery worker: sends the outbox's turn hand-offs (`tracker.service.notify`)
to their channels, retrying with exponential backoff, each marked delivered once. It reads
only the database, so a restarted server (or another process on the same PostgreSQL database)
goes on where one stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from tracker.cli.common import next_command
from tracker.service.notify import Backoff, Outbox, Sender, Senders, deliver

log = logging.getLogger("tracker.delivery")


@dataclass(frozen=True)
class DeliverySettings:
    """How the worker delivers: the viewer's base URL for links, the backoff, how often the
    outbox is read, and the sender (tests give a fake)."""

    public_url: str | None = None
    backoff: Backoff = field(default_factory=Backoff)
    poll: float = 2.0
    sender: Sender = field(default_factory=Senders)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ, **kwargs: Any) -> DeliverySettings:
        """Settings, with the backoff from TRACKER_NOTIFY_BACKOFF ("FIRST,CAP,ATTEMPTS" in
        seconds) and the polling from TRACKER_NOTIFY_POLL when they are set."""
        backoff = environ.get("TRACKER_NOTIFY_BACKOFF")
        if backoff:
            first, cap, limit = backoff.split(",")
            kwargs.setdefault("backoff", Backoff(float(first), float(cap), int(limit), lease=max(float(cap), 1.0)))
        poll = environ.get("TRACKER_NOTIFY_POLL")
        if poll:
            kwargs.setdefault("poll", float(poll))
        return cls(**kwargs)


class Worker:
    """Delivers what is due, every `poll` seconds, off the event loop."""

    def __init__(self, engine: Engine, settings: DeliverySettings) -> None:
        self.outbox = Outbox(engine)
        self.settings = settings

    def step(self) -> int:
        """One pass over the due messages, a log line for each attempt; how many were delivered."""
        s = self.settings
        delivered = 0
        for row in self.outbox.due(time.time()):
            started = time.perf_counter()
            why = deliver(self.outbox, row, s.sender, next_command, s.backoff, s.public_url)
            delivered += why is None
            # The channel by number and kind only: its target is a webhook URL or an address.
            fields = {
                "job": "delivery",
                "outbox": row["id"],
                "channel": row["channel_id"],
                "kind": row["kind"],
                "version": row["version"],
                "outcome": "delivered" if why is None else why,
                "ms": round((time.perf_counter() - started) * 1000, 1),
                "campaign": row["campaign_id"],
                "player": row.get("player"),
            }
            message = "notification %s to channel %s: %s"
            log.info(message, row["id"], row["channel_id"], fields["outcome"], extra={"fields": fields})
        return delivered

    async def run(self) -> None:
        while True:
            try:
                await asyncio.to_thread(self.step)
            except Exception as e:  # noqa: BLE001 - the worker outlives a database hiccup
                # The kind only: a message could carry a channel's URL.
                log.warning("notification delivery failed: %s", type(e).__name__)
            await asyncio.sleep(self.settings.poll)


@contextlib.asynccontextmanager
async def delivering(engine: Engine, settings: DeliverySettings | None) -> AsyncIterator[None]:
    """The worker for the server's lifespan (none without settings: an app built by a test)."""
    if settings is None:
        yield
        return
    task = asyncio.create_task(Worker(engine, settings).run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
