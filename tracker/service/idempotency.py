"""Idempotency keys: a client that lost an answer (a dropped connection, a server killed after
it recorded) asks again with the same key, and the action is not recorded twice.

A request carrying a key runs as a `KeyedRequest`. The first action it records writes the key
(with the player who sent it, the events it recorded, the answer and the request's fingerprint)
in the transaction of its events, so the key is stored exactly when the events are. A repeat of
the key by the same player records nothing and is answered the stored answer. The same key sent
with another request (another action, other inputs, another command line) is refused with
`KeyReused`, as the IETF draft on the Idempotency-Key header asks (HTTP 422): answering it the
first answer would tell the client that what it asked now was recorded. A server that renders
more than the action's events (the command line's output) replaces the stored answer with the
full one once it is rendered; if it is killed before, a repeat gets the answer written with the
events.

Keys never expire. There is one row per request that recorded something, holding its answer
(a few lines, of the size of the events it names), and it says which request recorded which
events; a key that expired would let a client that retries late (a laptop woken days after a
dropped connection) record the action again.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, Text, insert, select, update
from sqlalchemy.engine import Connection, Engine

from domain.errors import InputError, TrackerError
from tracker.service.shapes import CommandAnswer, StoredRequest

if TYPE_CHECKING:
    from tracker.service.performing import Outcome, Performing

MAX_KEY = 100

metadata = MetaData()
keys_table = Table(
    "tracker_request_keys",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("key", String(MAX_KEY), primary_key=True),
    # Who sent it ("campaign/name" of the token's player): another player's equal key is theirs.
    Column("player", String(300), primary_key=True),
    Column("first_version", Integer, nullable=False),  # the request's first event (its ActionAsked)
    Column("last_version", Integer, nullable=False),
    # JSON: what the request answered, with the request's fingerprint (see `_stored`).
    Column("answer", Text, nullable=False),
    Column("complete", Integer, nullable=False),  # 1: the full answer; 0: the one written with the events
    Column("created_at", Float, nullable=False),
    Index("tracker_request_keys_by_key", "key", "player"),
)


def check_key(text: str) -> str:
    """An idempotency key as a client sends it: 1 to 100 printable ASCII characters (a UUID)."""
    if not 1 <= len(text) <= MAX_KEY or not all("!" <= ch <= "~" for ch in text):
        raise InputError(f"Idempotency-Key must be 1 to {MAX_KEY} printable ASCII characters without spaces")
    return text


def fingerprint(asked: Mapping[str, Any]) -> str:
    """What a request asks (its route, the action or command line, the campaign), as the
    SHA-256 of its canonical JSON: two requests that ask the same have the same fingerprint."""
    text = json.dumps(asked, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class KeyReused(TrackerError):
    """An idempotency key the same player sent before with another request (HTTP 422): nothing
    was recorded for this one."""

    exit_code = 2

    def __init__(self, stored: StoredRequest) -> None:
        super().__init__(
            f"this Idempotency-Key was used for a different request (the one that recorded events "
            f"{stored['first']}-{stored['last']}): nothing was recorded; send a new key with a new request"
        )
        self.stored = stored


# The answer column holds {"fingerprint": ..., "answer": ...}; a row written before fingerprints
# were kept holds the answer alone, and matches any request (it cannot be told apart).
_WRAPPED = {"fingerprint", "answer"}


def _stored(answer: Mapping[str, Any], fingerprint: str | None) -> str:
    if fingerprint is None:
        return json.dumps(answer, default=str)
    return json.dumps({"fingerprint": fingerprint, "answer": answer}, default=str)


def _read(text: str) -> tuple[dict[str, Any], str | None]:
    """(answer, fingerprint or None) of an answer column."""
    data = json.loads(text)
    if isinstance(data, dict) and set(data) == _WRAPPED:
        return dict(data["answer"]), str(data["fingerprint"])
    return data, None


class RepeatedRequest(TrackerError):
    """The request's key was recorded with an action already (by another server process, in the
    time this one ran the request): nothing was recorded again; the stored answer stands."""

    def __init__(self, stored: StoredRequest) -> None:
        super().__init__(f"this request was recorded already (events {stored['first']}-{stored['last']})")
        self.stored = stored


class RequestKeys:
    """The keys of one database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        from sqlalchemy import inspect

        # Made when missing, as the other side tables; looked for first, so a database that
        # has the table commits nothing more than the request's own events.
        if not inspect(engine).has_table(keys_table.name):
            from sqlalchemy.exc import DatabaseError

            try:
                metadata.create_all(engine, checkfirst=True)
            except DatabaseError:
                # Two processes opening a fresh database race to make it: the loser finds it.
                if not inspect(engine).has_table(keys_table.name):
                    raise

    def find(
        self, key: str, player: str, campaign_id: str | None = None, fingerprint: str | None = None
    ) -> StoredRequest | None:
        """The request `player` sent with `key` (on `campaign_id`, or on any campaign), or None;
        KeyReused when it was stored with another `fingerprint` than the one given."""
        query = select(keys_table).where(keys_table.c.key == key, keys_table.c.player == player)
        if campaign_id is not None:
            query = query.where(keys_table.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            row = conn.execute(query.limit(1)).mappings().first()
        if row is None:
            return None
        answer, stored_as = _read(row["answer"])
        found: StoredRequest = {
            "campaign_id": row["campaign_id"],
            "first": row["first_version"],
            "last": row["last_version"],
            "answer": answer,
            "complete": bool(row["complete"]),
        }
        if fingerprint is not None and stored_as is not None and stored_as != fingerprint:
            raise KeyReused(found)
        return found

    def complete(
        self, campaign_id: str, key: str, player: str, answer: Mapping[str, Any], fingerprint: str | None = None
    ) -> None:
        """Replace the answer written with the events by the request's full answer."""
        with self.engine.begin() as conn:
            conn.execute(
                update(keys_table)
                .where(keys_table.c.campaign_id == campaign_id, keys_table.c.key == key, keys_table.c.player == player)
                .values(answer=_stored(answer, fingerprint), complete=1)
            )


@dataclass
class KeyedRequest:
    """A request under way with an idempotency key: the first action it records writes the key
    (`found`, in the events' transaction); `recorded` then holds the campaign it was written for.
    `answer` gives the answer stored with the events from what the action recorded;
    `fingerprint` what the request asks (see `fingerprint`; None: not compared)."""

    keys: RequestKeys
    key: str
    player: str
    answer: Callable[[Outcome], Mapping[str, Any]]
    fingerprint: str | None = None
    # The action of the attempt being saved, and the campaign the key was written for.
    pending: Outcome | None = field(default=None, repr=False)
    recorded: str | None = None
    # What was stored for the key, when an action found it recorded (by another process), or
    # the refusal of a key another process recorded with another request.
    repeated: StoredRequest | None = None
    reused: KeyReused | None = None

    @property
    def open(self) -> bool:
        """Whether the key is still to be written (later actions of the request record without it)."""
        return self.recorded is None

    def check(self, campaign_id: str) -> None:
        """Before an action: RepeatedRequest when the key was recorded on this campaign, and
        KeyReused when it was recorded for another request."""
        try:
            stored = self.keys.find(self.key, self.player, campaign_id, self.fingerprint)
        except KeyReused as e:
            # Kept: a command line reports the error as its own output, not as this refusal.
            self.reused = e
            raise
        if stored is not None:
            self.repeated = stored
            raise RepeatedRequest(stored)

    def found(self, campaign: Any) -> Callable[[Connection], None] | None:
        """At the save of `campaign`: the write of the key in the save's transaction, or None."""
        done = self.pending
        if done is None or done.campaign is not campaign:
            return None
        row = {
            "campaign_id": str(campaign.id),
            "key": self.key,
            "player": self.player,
            "first_version": done.asked,
            "last_version": campaign.version,
            "answer": _stored(self.answer(done), self.fingerprint),
            "complete": 0,
            "created_at": time.time(),
        }

        def write(conn: Connection) -> None:
            conn.execute(insert(keys_table).values(**row))

        return write

    def saved(self, campaign: Any) -> None:
        """After the save's commit: the key is written; the request's later actions go without."""
        if self.pending is not None and self.pending.campaign is campaign:
            self.recorded = str(campaign.id)
        self.pending = None


def events_answer(done: Outcome) -> CommandAnswer:
    """A command's answer from the events its action recorded (one line each, as `log` says
    them): what a repeat is answered when the server stopped before it rendered the output."""
    from projections.summary import as_record

    campaign = done.campaign
    records = [as_record(e.originator_version, e, campaign.scenario, campaign.ruleset) for e in done.events]
    text = "".join(f"{r['summary']}   [{r['rule']}]\n" for r in records)
    return {"exit": 0, "stdout": text, "stderr": ""}


def answered_once(
    tracker: Performing,
    request: KeyedRequest,
    run: Callable[[], dict[str, Any]],
    campaign_id: str | None = None,
    full: bool = False,
) -> dict[str, Any]:
    """`run()` as `request`, or, when its key was recorded before (on `campaign_id`, or on any
    campaign), the answer stored then, with nothing recorded again; KeyReused when it was
    recorded for another request. `full`: the answer `run` returns replaces the one written
    with the events (a command line's rendered output)."""
    stored = request.keys.find(request.key, request.player, campaign_id, request.fingerprint)
    if stored is not None:
        return dict(stored["answer"])
    try:
        result = tracker.with_key(request, run)
    except RepeatedRequest as e:
        return dict(e.stored["answer"])
    if request.reused is not None:
        # Found by an action inside `run` (written meanwhile by another server process).
        raise request.reused
    if request.repeated is not None:
        # Found by an action inside `run` (a command line, which said it as an error).
        return dict(request.repeated["answer"])
    if full and request.recorded is not None:
        answer = {k: v for k, v in result.items() if k != "refused"}
        request.keys.complete(request.recorded, request.key, request.player, answer, request.fingerprint)
    return result
