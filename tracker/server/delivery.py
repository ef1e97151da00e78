"""The server's delivery worker: sends the outbox's turn hand-offs (`tracker.service.notify`)
to their channels, retrying with exponential backoff, each marked delivered once. It reads
only the database, so a restarted server (or another process on the same PostgreSQL database)
goes on where one stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from domain.errors import InputError, TrackerError
from tracker.cli.common import next_command
from tracker.service.history import log_records
from tracker.service.notify import Backoff, Outbox, Sender, Senders, mask, normal_url, outbox_table, remind
from tracker.service.notify.delivery import prepare, send_prepared

log = logging.getLogger("tracker.delivery")
# At most this many lines of summary in one e-mail: the attached export holds them all.
SINCE_LINES = 60
# Actions asked for no nation's turn of their own (see `last_acted`).
NOBODYS = frozenset({"undo", "redo"})
# At most this many channels are sent to at once in one pass over the outbox.
SENDERS = 8
# A URL or an e-mail address in an error's message (a database quotes the value it refused):
# a channel's target, shown masked as `notify list` shows it.
_TARGET = re.compile(r"""[A-Za-z][\w+.-]*://[^\s'"<>]+|[^\s'"<>(),;:@]+@[^\s'"<>(),;:@]+""")
# The most characters of an error's message a failed pass's line shows.
SHOWN = 200


def failure(e: BaseException) -> str:
    """An error that stopped a pass over the outbox, for the log: its kind and the first line
    of its message (a database's reason: `no such column`, `connection refused`), at most
    SHOWN characters, with any URL or address in it masked."""
    line = (str(e).strip().splitlines() or [""])[0]
    line = _TARGET.sub(lambda m: mask(m.group()), line)
    line = line if len(line) <= SHOWN else line[:SHOWN] + "..."
    return f"{type(e).__name__}: {line}" if line else type(e).__name__


@dataclass(frozen=True)
class DeliverySettings:
    """How the worker delivers: the viewer's base URL for links, the backoff, how often the
    outbox is read, and the sender (tests give a fake)."""

    public_url: str | None = None
    backoff: Backoff = field(default_factory=Backoff)
    poll: float = 2.0
    sender: Sender = field(default_factory=Senders)

    def __post_init__(self) -> None:
        # `HTTPS://host` is taken as `https://host` (a scheme's case means nothing, RFC 3986
        # 3.1): the links the messages carry say it as every other link does.
        if self.public_url is not None:
            object.__setattr__(self, "public_url", normal_url(self.public_url))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ, **kwargs: Any) -> DeliverySettings:
        """Settings, with the backoff from TRACKER_NOTIFY_BACKOFF ("FIRST,CAP,ATTEMPTS" in
        seconds) and the polling from TRACKER_NOTIFY_POLL when they are set."""
        backoff = environ.get("TRACKER_NOTIFY_BACKOFF")
        if backoff:
            # A bad value stopped the server with "not enough values to unpack", and a negative
            # one retried at once for ever: each is a positive number, said in one line.
            parts = backoff.split(",")
            numbers = [n for n in map(_positive, parts) if n is not None]
            if len(numbers) != 3 or len(parts) != 3 or not numbers[2].is_integer() or numbers[0] > numbers[1]:
                raise InputError(
                    f"TRACKER_NOTIFY_BACKOFF must be FIRST,CAP,ATTEMPTS: seconds before the first retry, the "
                    f"longest wait (at least FIRST) and how many attempts, each above 0; got {backoff[:60]!r}"
                )
            first, cap, limit = numbers
            kwargs.setdefault("backoff", Backoff(first, cap, int(limit), lease=max(cap, 1.0)))
        poll = environ.get("TRACKER_NOTIFY_POLL")
        if poll:
            if _positive(poll) is None:
                raise InputError(f"TRACKER_NOTIFY_POLL must be seconds above 0, got {poll[:60]!r}")
            kwargs.setdefault("poll", float(poll))
        return cls(**kwargs)


def _positive(text: str) -> float | None:
    """`text` as a number of seconds above 0 and at most a year, else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value <= 86_400 * 365 else None


def last_acted(tracker: Any, campaign_id: Any, nations: Sequence[str], version: int) -> int:
    """The last event of the last action of `nations` up to event `version` (0: none yet): the
    one before the next action's record (ActionAsked, PL1), so what they did is not news."""
    # The record's own nation (the one the action was for), not the index's phasing nation.
    # An undo or redo is nobody's turn: the phasing nation when it was asked is often the one
    # the turn had just passed to, whose copy then lacks the events the undo took back.
    asked = [
        (r["seq"], (r.get("data") or {}).get("nation") or r["nation"])
        for r in log_records(tracker, campaign_id, kind="ActionAsked", asked=True, with_data=True)
        if r["seq"] <= version and (r.get("data") or {}).get("name") not in NOBODYS
    ]
    mine = [seq for seq, nation in asked if nation in nations]
    if not mine:
        return 0
    after = [seq for seq, _ in asked if seq > mine[-1]]
    return after[0] - 1 if after else version


def summary_since(tracker: Any, campaign_id: Any, since: int, version: int) -> list[str]:
    """The summary lines of the events after `since` up to `version` (what a player who last
    acted at `since` has not seen), the latest `SINCE_LINES` of them."""
    rows = log_records(tracker, campaign_id)
    lines = [r["summary"] for r in rows if since < r["seq"] <= version and not r.get("undone_by")]
    return lines[-SINCE_LINES:]


class Worker:
    """Delivers what is due, every `poll` seconds, off the event loop: the hand-offs, then the
    reminders of the channels that want them while the same thing is still owed."""

    def __init__(self, engine: Engine, settings: DeliverySettings) -> None:
        self.outbox = Outbox(engine)
        self.settings = settings
        self._tracker: Any = None
        # While passes fail (the database down): the reason last logged, when the first failed
        # and how many have; one line each time the reason changes, one when delivery resumes.
        self._failing: str | None = None
        self._failing_since = 0.0
        self._failed_passes = 0

    def step(self) -> int:
        """One pass over the due messages and reminders, a log line for each attempt (as
        `deliver_due` does it, logged); how many hand-offs were delivered."""
        s = self.settings
        now = time.time()
        # Each message is made here, on this thread (it reads campaigns), then the channels are
        # sent to side by side, each one's messages in order: a receiver that hangs until the
        # timeout holds up its own channel, not every other channel of every campaign.
        by_channel: dict[Any, list[tuple[Any, Mapping[str, Any], float]]] = {}
        delivered = 0
        for row in self.outbox.due(now):
            started = time.perf_counter()
            why, body = prepare(
                self.outbox,
                row,
                next_command,
                s.backoff,
                s.public_url,
                self.extras,
                self.taken_back,
                self.told,
                self.request_closed,
            )
            if body is None:
                self._log(row, str(why), started, reminder=False)
            else:
                by_channel.setdefault(row["channel_id"], []).append((row, body, started))
        if by_channel:
            with ThreadPoolExecutor(max_workers=min(SENDERS, len(by_channel))) as pool:
                delivered = sum(pool.map(self._send_in_order, by_channel.values()))
        for row in self.outbox.reminders_due(now):
            started = time.perf_counter()
            why = remind(self.outbox, row, s.sender, next_command, self.owed_still, s.public_url, now, self.extras)
            self._log(row, "reminded" if why is None else why, started, reminder=True)
        return delivered

    def _send_in_order(self, messages: list[tuple[Any, Mapping[str, Any], float]]) -> int:
        """One channel's messages, sent in order until one fails (the rest wait for their
        lease to run out, and are tried again then); how many were delivered."""
        s = self.settings
        delivered = 0
        for row, body, started in messages:
            why = send_prepared(self.outbox, row, body, s.sender, s.backoff)
            self._log(row, "delivered" if why is None else why, started, reminder=False, failed=why is not None)
            if why is not None:
                break
            delivered += 1
        return delivered

    def _attempt(self, row: Mapping[str, Any]) -> tuple[str, bool]:
        """Which attempt a failed one was and what follows it, for its line, and whether it
        was the last: each failure read the same ("unreachable") and nothing said that the
        last of them gave the message up."""
        backoff = self.settings.backoff
        attempt = int(row["attempts"]) + 1
        retry = backoff.retry_at(attempt, 0.0)
        if retry is None:
            return f"attempt {attempt} of {backoff.limit}: given up, see tracker notify log", True
        return f"attempt {attempt} of {backoff.limit}, next in {retry:g} s", False

    def _log(self, row: Mapping[str, Any], outcome: str, started: float, reminder: bool, failed: bool = False) -> None:
        # The channel by number and kind only: its target is a webhook URL or an address.
        fields = {
            "job": "delivery",
            "outbox": row["id"],
            "channel": row["channel_id"],
            "kind": row["kind"],
            "version": row["version"],
            "outcome": outcome,
            "reminder": reminder,
            "ms": round((time.perf_counter() - started) * 1000, 1),
            # By name, as the request lines name it (an operator follows one campaign through
            # both); its id too, which stays when a campaign is renamed.
            "campaign": self.tracker.registry.name_of(row["campaign_id"]) or row["campaign_id"],
            "campaign_id": row["campaign_id"],
            "player": row.get("player"),
        }
        what = "reminder" if reminder else "notification"
        message = f"{what} %s to channel %s: %s"
        level, args = logging.INFO, [row["id"], row["channel_id"], outcome]
        if failed:
            attempt, last = self._attempt(row)
            fields["attempt"] = int(row["attempts"]) + 1
            message, level = message + " (%s)", logging.WARNING if last else logging.INFO
            args.append(attempt)
        log.log(level, message, *args, extra={"fields": fields})

    @property
    def tracker(self) -> Any:
        """The worker's own tracker on the server's database, opened on first use: it reads
        campaigns and their logs off the thread that serves requests."""
        if self._tracker is None:
            from tracker.service.application import Tracker

            self._tracker = Tracker(self.outbox.engine.url.render_as_string(hide_password=False), create=False)
        return self._tracker

    def close(self) -> None:
        if self._tracker is not None:
            self._tracker.close()
            self._tracker = None

    def nations(self, row: Mapping[str, Any]) -> Sequence[str] | None:
        """The nations of a row's channel's player (None: a group channel)."""
        if row.get("player") is None:
            return None
        from tracker.service.players import Players

        player = Players(self.outbox.engine).player(row["campaign_id"], row["player"])
        return player.nations if player is not None else ()

    def owed_still(self, row: Mapping[str, Any], payload: Mapping[str, Any]) -> bool:
        """Whether a delivered hand-off is still owed by its channel's player (see `still_owed`)."""
        from tracker.service.notify import still_owed

        campaign = self.tracker.load(UUID(row["campaign_id"]))
        return still_owed(payload, campaign, self.nations(row))

    def told(self, row: Mapping[str, Any]) -> str | None:
        """What a hand-off about to be delivered still tells its channel (see `told_now`); None
        for a message that cannot be read (given up as such when it is made)."""
        from tracker.service.notify import told_now

        try:
            # A campaign that cannot be loaded now (its log damaged, the database out of reach)
            # leaves the message as it was written; one campaign never stops the others' pass.
            campaign = self.tracker.load(UUID(row["campaign_id"]))
            return told_now(json.loads(row["payload"]), campaign, self.nations(row))
        except (TrackerError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def request_closed(self, row: Mapping[str, Any]) -> str | None:
        """Why the override request (RK3) a row asks approval of is no longer open (see
        `request_closed`), read when it is about to be sent; None while it is open, or when
        that cannot be read (it goes as written)."""
        from tracker.service.notify import OVERRIDE_VERSIONS, request_closed
        from tracker.service.players import Players

        cid, number = row["campaign_id"], -int(row["version"]) - OVERRIDE_VERSIONS
        players = Players(self.outbox.engine)
        try:
            request = players.override_request(cid, number)
        except InputError:
            return request_closed(number, None, 0, False)
        try:
            version = self.tracker.recorder.last_version(UUID(cid))
        except (TrackerError, ValueError):
            return None
        return request_closed(number, request, version, players.player(cid, request["requested_by"]) is not None)

    def taken_back(self, row: Mapping[str, Any]) -> bool:
        """Whether the action a row's hand-off followed was undone since: the last event it
        recorded (the row's version) is marked undone in the log."""
        records = log_records(self.tracker, UUID(row["campaign_id"]), seq=int(row["version"]))
        return bool(records and records[0]["undone_by"])

    def extras(self, row: Mapping[str, Any], payload: Mapping[str, Any]) -> Mapping[str, Any]:
        """A player's e-mail's additions: the summary of what happened since their nations last
        acted and, for a channel with `--attach-export`, the export of those events."""
        nations = self.nations(row)
        version = int(row["version"])
        if nations is None or version <= 0:
            return {}
        cid = UUID(row["campaign_id"])
        since = last_acted(self.tracker, cid, nations, version)
        more: dict[str, Any] = {"since": summary_since(self.tracker, cid, since, version)}
        if row.get("attach_export"):
            from domain.errors import InputError
            from tracker.interchange.transfer import export_campaign

            try:
                result = export_campaign(self.tracker, cid, None, since)
            except InputError:
                return more  # nothing after `since` to export: the message goes without it
            name = str(payload["campaign"]).replace("/", "-")
            more["attachment"] = (f"{name}-since-{since}.jsonl", b"".join(result.chunks()))
        return more

    def _pass(self) -> int | None:
        """One pass (`step`); while passes are failing, how many messages wait (counted first:
        the line that says delivery resumed tells how many it takes up)."""
        waiting = None
        if self._failing is not None:
            # Not counted is no failure of its own: the pass says why, with its own error.
            with contextlib.suppress(SQLAlchemyError):
                waiting = self.outbox_waiting()
        self.step()
        return waiting

    def outbox_waiting(self) -> int:
        """How many messages wait to be sent (pending, due now or later)."""
        with self.outbox.engine.connect() as conn:
            query = select(func.count()).select_from(outbox_table).where(outbox_table.c.status == "pending")
            return int(conn.execute(query).scalar() or 0)

    def failed(self, reason: str) -> None:
        """A pass that failed: said once, and again only when its reason changes (a database
        down for an hour was about 1,800 lines of the same words). Passes go on at each poll."""
        self._failed_passes += 1
        if self._failing == reason:
            return
        if self._failing is None:
            self._failing_since = time.monotonic()
        self._failing = reason
        log.warning(
            "notification delivery failed: %s; retried every %g s, said again if the reason changes and when "
            "delivery resumes",
            reason,
            self.settings.poll,
        )

    def resumed(self, waiting: int | None) -> None:
        """A pass that worked after failed ones: one line, with how long and how many waited."""
        if self._failing is None:
            return
        took = time.monotonic() - self._failing_since
        counted = "" if waiting is None else f": {waiting} message{'' if waiting == 1 else 's'} waiting"
        log.info("notification delivery resumed after %.0f s (%d failed passes)%s", took, self._failed_passes, counted)
        self._failing, self._failed_passes = None, 0

    async def run(self) -> None:
        try:
            while True:
                try:
                    waiting = await asyncio.to_thread(self._pass)
                except Exception as e:  # noqa: BLE001 - the worker outlives a database hiccup
                    # Its reason, but no channel's URL (see `failure`).
                    self.failed(failure(e))
                else:
                    self.resumed(waiting)
                await asyncio.sleep(self.settings.poll)
        finally:
            self.close()


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
