"""Delivery of the outbox: each due row sent once, failures tried again with exponential
backoff until given up, and reminders while a hand-off is still owed. A hand-off that tells of
a state that no longer holds is given up unsent ("superseded", see `stale`), and one the game
has moved on from since is sent marked so (`moved_on`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tracker.service.notify.messages import CommandFor, Extras, message_body
from tracker.service.notify.outbox import Outbox
from tracker.service.notify.senders import Sender, SendFailed
from tracker.service.notify.tables import OVERRIDE_VERSIONS


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff: `first` seconds, doubled each attempt up to `cap`, `limit` attempts."""

    first: float = 30.0
    cap: float = 3600.0
    limit: int = 8
    # How long a row taken for an attempt stays taken (a worker that dies mid-send frees it then).
    lease: float = 60.0

    def retry_at(self, attempts: int, now: float) -> float | None:
        """When to try again after `attempts` failed attempts, or None: given up."""
        if attempts >= self.limit:
            return None
        return now + float(min(self.cap, self.first * 2 ** (attempts - 1)))


# Whether a delivered row's hand-off is still owed (see `still_owed`), for its reminder.
Owed = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
# Whether the action a row's hand-off followed was undone since (read from the log).
TakenBack = Callable[[Mapping[str, Any]], bool]
# What a hand-off still tells its channel when it is delivered (see `told_now`): "owed",
# "waiting" or "past"; None where it is not known.
Outdated = Callable[[Mapping[str, Any]], str | None]
# Why an override request's message (RK3) no longer holds, or None while the request is open
# (see `tracker.service.notify.request_closed`).
Closed = Callable[[Mapping[str, Any]], str | None]
# The reasons of a hand-off that only tells where the game stands (who owes what, whose turn),
# which a newer hand-off to the same channel tells again, as it stands then.
STATE_ONLY = frozenset({"owed", "turn"})
NOTHING_OWED = "superseded: nothing it told of is owed any more"
OVERTAKEN = "superseded by a newer message to this channel"


def stale(
    outbox: Outbox,
    row: Mapping[str, Any],
    taken_back: TakenBack | None = None,
    told: Outdated | None = None,
    closed: Closed | None = None,
) -> str | None:
    """Why an undelivered hand-off is given up unsent, or None: its action was undone (it
    tells of moves taken back); nothing it told its channel of is owed any more (`told`
    "past": played by file, the worker ran after the game moved on); or a newer hand-off was
    written for its channel once an attempt failed (it would arrive after the channel mends,
    telling of a turn long past) or once what it told of is no longer owed (`told`
    "waiting": the newer one tells of the game as it went on). An override request's message
    is given up once the request is no longer open (`closed`: approved, or void). A test
    message, or one that tells of more than where the game stands (a seed revealed, an
    override approved, an undo), is never given up as outdated."""
    if row["version"] <= -OVERRIDE_VERSIONS:
        why = closed(row) if closed is not None else None
        return f"superseded: {why}" if why is not None else None
    if row["version"] <= 0:
        return None
    if taken_back is not None and taken_back(row):
        return "superseded: its action was undone"
    try:
        reasons = set(json.loads(row["payload"])["reasons"])
    except (ValueError, KeyError, TypeError):
        return None  # an unreadable message is given up as such by `deliver`
    if not reasons <= STATE_ONLY:
        return None
    now = told(row) if told is not None else None
    if now == "past":
        return NOTHING_OWED
    if (row["attempts"] or now == "waiting") and outbox.overtaken(row):
        return OVERTAKEN
    return None


def deliver_due(
    outbox: Outbox,
    sender: Sender,
    command_for: CommandFor,
    backoff: Backoff,
    public_url: str | None = None,
    now: float | None = None,
    extras: Extras | None = None,
    owed_still: Owed | None = None,
    taken_back: TakenBack | None = None,
    told: Outdated | None = None,
    closed: Closed | None = None,
) -> int:
    """One pass of delivery: every due row sent once (unless `stale`), then (with `owed_still`)
    the reminders due; returns how many were delivered (reminders not counted)."""
    delivered = 0
    at = time.time() if now is None else now
    for row in outbox.due(at):
        why = deliver(outbox, row, sender, command_for, backoff, public_url, extras, taken_back, told, closed)
        delivered += why is None
    if owed_still is not None:
        for row in outbox.reminders_due(at):
            remind(outbox, row, sender, command_for, owed_still, public_url, at, extras)
    return delivered


def remind(
    outbox: Outbox,
    row: Mapping[str, Any],
    sender: Sender,
    command_for: CommandFor,
    owed_still: Owed,
    public_url: str | None = None,
    now: float | None = None,
    extras: Extras | None = None,
) -> str | None:
    """One due reminder (`tracker notify add --remind`): sent again, marked as a reminder, while
    what the hand-off told of is still owed; None when it was sent, else why not."""
    at = time.time() if now is None else now
    payload = json.loads(row["payload"])
    if not owed_still(row, payload):
        # Answered (or overtaken): never reminded again.
        outbox.claim_reminder(row, float("inf"))
        return "no longer owed"
    if not outbox.claim_reminder(row, at):
        return "taken by another worker"
    try:
        body = message_body(row, {**payload, "reminder": True}, command_for, public_url, extras)
        status = sender.send(row, body)
    except (ValueError, KeyError, TypeError) as e:
        outbox.reminded(row["id"], False, f"unreadable message: {type(e).__name__}")
        return "unreadable message"
    except SendFailed as e:
        # Tried again at the next interval, like the reminder itself.
        outbox.reminded(row["id"], False, str(e))
        return str(e)
    outbox.reminded(row["id"], True, status)
    return None


def deliver(
    outbox: Outbox,
    row: Mapping[str, Any],
    sender: Sender,
    command_for: CommandFor,
    backoff: Backoff,
    public_url: str | None = None,
    extras: Extras | None = None,
    taken_back: TakenBack | None = None,
    told: Outdated | None = None,
    closed: Closed | None = None,
) -> str | None:
    """One attempt at one due row: None when it was delivered (and marked, once), else why not
    (a `stale` row is marked superseded instead, never sent)."""
    why, body = prepare(outbox, row, command_for, backoff, public_url, extras, taken_back, told, closed)
    if body is None:
        return why
    return send_prepared(outbox, row, body, sender, backoff)


def prepare(
    outbox: Outbox,
    row: Mapping[str, Any],
    command_for: CommandFor,
    backoff: Backoff,
    public_url: str | None = None,
    extras: Extras | None = None,
    taken_back: TakenBack | None = None,
    told: Outdated | None = None,
    closed: Closed | None = None,
) -> tuple[str | None, Mapping[str, Any] | None]:
    """`deliver`'s first half, which reads the database: the row taken for an attempt and its
    message made, (None, body); or (why not, None) when it is not to be sent. A message the
    game has moved on from, sent as the only word its channel gets of a nation still waited
    for (`told` "waiting"), says so (`moved_on`)."""
    if not outbox.claim(row, backoff.lease):
        return "taken by another worker", None
    found: list[str | None] = []

    def told_once(r: Mapping[str, Any]) -> str | None:
        # Asked by `stale`, and again for the mark: it loads the campaign.
        if not found:
            found.append(told(r) if told is not None else None)
        return found[0]

    why = stale(outbox, row, taken_back, told_once, closed)
    if why is not None:
        outbox.superseded(row["id"], why)
        return why, None
    try:
        payload = json.loads(row["payload"])
        if found == ["waiting"]:
            payload = {**payload, "moved_on": True}
        return None, message_body(row, payload, command_for, public_url, extras)
    except (ValueError, KeyError, TypeError) as e:
        # A row no message can be made of never blocks the ones behind it.
        outbox.attempted(row["id"], False, f"unreadable message: {type(e).__name__}", None)
        return "unreadable message", None


def send_prepared(
    outbox: Outbox, row: Mapping[str, Any], body: Mapping[str, Any], sender: Sender, backoff: Backoff
) -> str | None:
    """`deliver`'s second half: the message sent and the attempt marked; None when delivered."""
    try:
        status = sender.send(row, body)
    except SendFailed as e:
        outbox.attempted(row["id"], False, str(e), backoff.retry_at(row["attempts"] + 1, time.time()))
        return str(e)
    outbox.attempted(row["id"], True, status, None)
    return None
