"""The outbox of one database: its channels added and removed, hand-offs written in the
transaction of the events that cause them, rows taken for delivery and reminders, and the log
of their attempts."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection, Engine

from tracker.service.notify.tables import (
    OVERRIDE_VERSIONS,
    NotifyError,
    attempts_table,
    channels_table,
    ensure_tables,
    outbox_table,
)


class Channel(TypedDict):
    """A notification channel as stored (`tracker notify list`); `target` is the URL or address
    itself: shown masked, never logged."""

    id: int
    campaign_id: str
    kind: str
    target: str
    format: str
    player: str | None
    mention: str | None
    created_at: float
    remind: float | None
    attach_export: int | None


class Due(TypedDict):
    """An outbox row due for an attempt (or a reminder), with where and how its channel sends it."""

    id: int
    campaign_id: str
    channel_id: int
    version: int
    payload: str
    created_at: float
    status: str
    attempts: int
    next_attempt_at: float
    delivered_at: float | None
    last_error: str | None
    kind: str
    target: str
    format: str
    mention: str | None
    player: str | None
    remind: float | None
    attach_export: int | None


class Try(TypedDict):
    """One attempt at delivering a notification."""

    at: float
    ok: bool
    status: str


class Sent(TypedDict):
    """A notification of the campaign as `tracker notify log` lists it."""

    id: int
    channel_id: int
    version: int
    created_at: float
    status: str
    attempts: int
    delivered_at: float | None
    last_error: str | None
    tries: list[Try]


def _unused_channel_id() -> Any:
    """A new channel's id past every channel's and every message's: SQLite hands the highest
    id out again once its row is removed, and the removed channel's messages, which stay in
    the log, would become the new channel's (its log, its reminders, in any campaign). One
    statement with the insert, so two processes adding at once cannot take the same id."""
    highest_channel = select(func.coalesce(func.max(channels_table.c.id), 0)).scalar_subquery()
    highest_told = select(func.coalesce(func.max(outbox_table.c.channel_id), 0)).scalar_subquery()
    # SQLite's max() of two arguments is the greater of them.
    return select(func.max(highest_channel, highest_told) + 1).scalar_subquery()


def _with_channel() -> Any:
    """Outbox rows with what their channel says of where and how they go."""
    c = channels_table.c
    return select(outbox_table, c.kind, c.target, c.format, c.mention, c.player, c.remind, c.attach_export).join(
        channels_table, c.id == outbox_table.c.channel_id
    )


@dataclass
class Outbox:
    """The channels and the outbox of one database."""

    engine: Engine
    _ready: bool = field(default=False, repr=False)

    def ready(self) -> None:
        if not self._ready:
            ensure_tables(self.engine)
            self._ready = True

    def channels(self, campaign_id: str) -> list[Channel]:
        self.ready()
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(channels_table).where(channels_table.c.campaign_id == campaign_id).order_by(channels_table.c.id)
            ).mappings()
            return [cast(Channel, dict(r)) for r in rows]

    def channel(self, campaign_id: str, channel_id: int) -> Channel:
        for c in self.channels(campaign_id):
            if c["id"] == channel_id:
                return c
        raise NotifyError(f"no notification channel {channel_id} in this campaign (see tracker notify list)")

    def add(
        self,
        campaign_id: str,
        kind: str,
        target: str,
        fmt: str,
        player: str | None,
        mention: str | None,
        remind: float | None = None,
        attach_export: bool = False,
    ) -> int:
        self.ready()
        numbered: dict[str, Any] = {}
        if self.engine.dialect.name == "sqlite":
            numbered["id"] = _unused_channel_id()
        with self.engine.begin() as conn:
            result = conn.execute(
                insert(channels_table).values(
                    **numbered,
                    campaign_id=campaign_id,
                    kind=kind,
                    target=target,
                    format=fmt,
                    player=player,
                    mention=mention,
                    created_at=time.time(),
                    remind=remind,
                    attach_export=int(attach_export),
                )
            )
            key = result.inserted_primary_key
            assert key is not None
            return int(key[0])

    def remove(self, campaign_id: str, channel_id: int) -> None:
        self.channel(campaign_id, channel_id)
        unsent = select(outbox_table.c.id).where(
            outbox_table.c.channel_id == channel_id, outbox_table.c.status == "pending"
        )
        with self.engine.begin() as conn:
            # Their attempts too: SQLite numbers the next message as a deleted one was, and it
            # would list them as its own.
            conn.execute(delete(attempts_table).where(attempts_table.c.outbox_id.in_(unsent)))
            conn.execute(
                delete(outbox_table).where(outbox_table.c.channel_id == channel_id, outbox_table.c.status == "pending")
            )
            conn.execute(delete(channels_table).where(channels_table.c.id == channel_id))

    def write(
        self,
        conn: Connection,
        campaign_id: str,
        version: int,
        payload: Mapping[str, Any],
        channels: Sequence[Mapping[str, Any]],
    ) -> int:
        """The outbox rows of one hand-off, in the caller's transaction: one per channel told."""
        now = time.time()
        rows = [
            {
                "campaign_id": campaign_id,
                "channel_id": c["id"],
                "version": version,
                "payload": json.dumps(payload, sort_keys=True),
                "created_at": now,
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now,
            }
            for c in channels
        ]
        if rows:
            conn.execute(insert(outbox_table), rows)
        return len(rows)

    def enqueue_test(self, campaign_id: str, channel_id: int, payload: Mapping[str, Any], hold: float = 0.0) -> int:
        """A test message for one channel, delivered like any other (`tracker notify test`).
        `hold`: seconds no worker takes it, for the caller's own attempt (then it is due, as a
        row whose worker died mid-send is)."""
        self.channel(campaign_id, channel_id)
        with self.engine.begin() as conn:
            # A test has no version of its own: a negative one never meets an action's.
            lowest = conn.execute(
                select(outbox_table.c.version)
                .where(
                    outbox_table.c.channel_id == channel_id,
                    outbox_table.c.version < 0,
                    outbox_table.c.version > -OVERRIDE_VERSIONS,
                )
                .order_by(outbox_table.c.version)
                .limit(1)
            ).scalar()
            now = time.time()
            result = conn.execute(
                insert(outbox_table).values(
                    campaign_id=campaign_id,
                    channel_id=channel_id,
                    version=(lowest or 0) - 1,
                    payload=json.dumps({**payload, "test": True}, sort_keys=True),
                    created_at=now,
                    status="pending",
                    attempts=0,
                    next_attempt_at=now + hold,
                )
            )
            key = result.inserted_primary_key
            assert key is not None
            return int(key[0])

    def due(self, now: float, limit: int = 20, row_id: int | None = None) -> list[Due]:
        """Undelivered rows whose next attempt is due, oldest first, with their channel."""
        self.ready()
        query = (
            _with_channel()
            .where(outbox_table.c.status == "pending", outbox_table.c.next_attempt_at <= now)
            .order_by(outbox_table.c.id)
            .limit(limit)
        )
        if row_id is not None:
            query = query.where(outbox_table.c.id == row_id)
        with self.engine.connect() as conn:
            return [cast(Due, dict(r)) for r in conn.execute(query).mappings()]

    def claim(self, row: Mapping[str, Any], lease: float) -> bool:
        """Take a due row for one attempt: another worker (a second server process) that read
        it too finds it taken and leaves it, so it is not sent twice."""
        with self.engine.begin() as conn:
            return bool(
                conn.execute(
                    update(outbox_table)
                    .where(
                        outbox_table.c.id == row["id"],
                        outbox_table.c.status == "pending",
                        outbox_table.c.next_attempt_at == row["next_attempt_at"],
                    )
                    .values(next_attempt_at=time.time() + lease)
                ).rowcount
            )

    def attempted(self, row_id: int, ok: bool, status: str, retry_at: float | None) -> bool:
        """Record one attempt; a delivered row is marked once (False when another worker had
        already marked it). `retry_at` None after a failure: given up."""
        now = time.time()
        with self.engine.begin() as conn:
            values: dict[str, Any] = {"attempts": outbox_table.c.attempts + 1, "last_error": None if ok else status}
            if ok:
                # A delivered row's next attempt is its reminder's clock (see `reminders_due`).
                values.update(status="delivered", delivered_at=now, next_attempt_at=now)
            elif retry_at is None:
                values.update(status="failed")
            else:
                values.update(next_attempt_at=retry_at)
            marked = conn.execute(
                update(outbox_table)
                .where(outbox_table.c.id == row_id, outbox_table.c.status == "pending")
                .values(**values)
            ).rowcount
            conn.execute(insert(attempts_table).values(outbox_id=row_id, at=now, ok=int(ok), status=status))
            return bool(marked)

    def overtaken(self, row: Mapping[str, Any]) -> bool:
        """Whether a newer hand-off (a later version) was written for the row's channel and
        campaign: it tells where the game stands now, which the row no longer does."""
        query = select(outbox_table.c.id).where(
            outbox_table.c.channel_id == row["channel_id"],
            outbox_table.c.campaign_id == row["campaign_id"],
            outbox_table.c.version > row["version"],
        )
        with self.engine.connect() as conn:
            return conn.execute(query.limit(1)).first() is not None

    def delivered_between(self, channel_id: int, campaign_id: str, first: int, last: int) -> bool:
        """Whether the channel was sent a hand-off of the campaign made by one of its events
        `first` to `last` (an undo's range: what it told of is taken back)."""
        query = select(outbox_table.c.id).where(
            outbox_table.c.channel_id == channel_id,
            outbox_table.c.campaign_id == campaign_id,
            outbox_table.c.version >= first,
            outbox_table.c.version <= last,
            outbox_table.c.status == "delivered",
        )
        with self.engine.connect() as conn:
            return conn.execute(query.limit(1)).first() is not None

    def superseded(self, row_id: int, why: str) -> bool:
        """Give up an undelivered row without sending it (status "superseded", `why` as its
        last error); False when it was no longer pending."""
        with self.engine.begin() as conn:
            return bool(
                conn.execute(
                    update(outbox_table)
                    .where(outbox_table.c.id == row_id, outbox_table.c.status == "pending")
                    .values(status="superseded", last_error=why)
                ).rowcount
            )

    def reminders_due(self, now: float, limit: int = 20) -> list[Due]:
        """Delivered hand-offs of reminding channels whose interval has passed since they were
        sent or last reminded, each its channel's latest (an older one was overtaken)."""
        self.ready()
        newer = outbox_table.alias("newer")
        later = (
            select(newer.c.id)
            .where(
                newer.c.channel_id == outbox_table.c.channel_id,
                newer.c.campaign_id == outbox_table.c.campaign_id,
                newer.c.version > outbox_table.c.version,
            )
            .exists()
        )
        query = (
            _with_channel()
            .where(
                outbox_table.c.status == "delivered",
                outbox_table.c.version > 0,
                channels_table.c.remind.is_not(None),
                outbox_table.c.next_attempt_at + channels_table.c.remind <= now,
                ~later,
            )
            .order_by(outbox_table.c.id)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [cast(Due, dict(r)) for r in conn.execute(query).mappings()]

    def claim_reminder(self, row: Mapping[str, Any], until: float) -> bool:
        """Take a due reminder (the next is due `remind` seconds after `until`): a second
        worker that read the same row finds it taken, so a reminder is not sent twice."""
        with self.engine.begin() as conn:
            return bool(
                conn.execute(
                    update(outbox_table)
                    .where(
                        outbox_table.c.id == row["id"],
                        outbox_table.c.status == "delivered",
                        outbox_table.c.next_attempt_at == row["next_attempt_at"],
                    )
                    .values(next_attempt_at=until)
                ).rowcount
            )

    def reminded(self, row_id: int, ok: bool, status: str) -> None:
        """Log a reminder's attempt with the row's others, marked as a reminder."""
        with self.engine.begin() as conn:
            conn.execute(
                insert(attempts_table).values(
                    outbox_id=row_id, at=time.time(), ok=int(ok), status=f"reminder: {status}"
                )
            )

    def log(self, campaign_id: str) -> list[Sent]:
        """Every notification of the campaign: when, to which channel, status, attempts."""
        self.ready()
        query = (
            select(
                outbox_table.c.id,
                outbox_table.c.channel_id,
                outbox_table.c.version,
                outbox_table.c.created_at,
                outbox_table.c.status,
                outbox_table.c.attempts,
                outbox_table.c.delivered_at,
                outbox_table.c.last_error,
            )
            .where(outbox_table.c.campaign_id == campaign_id)
            .order_by(outbox_table.c.id)
        )
        with self.engine.connect() as conn:
            rows = [dict(r) for r in conn.execute(query).mappings()]
            tries = conn.execute(
                select(attempts_table)
                .where(attempts_table.c.outbox_id.in_([r["id"] for r in rows]))
                .order_by(attempts_table.c.id)
            ).mappings()
            by_row: dict[int, list[Try]] = {}
            for t in tries:
                by_row.setdefault(t["outbox_id"], []).append(Try(at=t["at"], ok=bool(t["ok"]), status=t["status"]))
        return [cast(Sent, {**r, "tries": by_row.get(r["id"], [])}) for r in rows]
