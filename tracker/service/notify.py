"""Turn hand-off notifications: the channels a campaign's players are told on, the outbox of
hand-offs written in the same transaction as the events that cause them, and the messages.

A hand-off is found by comparing who owes what (`Campaign.pending`, the source of `tracker
pending`) before and after an action. Delivery (the server's worker, `tracker notify test`)
reads the outbox; sending is done by a `Sender`, which tests swap for a fake.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine

from domain.errors import InputError

# The command that answers a `pending` item (the command line's `next_command`).
CommandFor = Callable[[dict[str, Any]], str | None]

metadata = MetaData()
channels_table = Table(
    "tracker_notify_channels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(36), nullable=False, index=True),
    Column("kind", String(16), nullable=False),  # webhook | email
    Column("target", Text, nullable=False),  # the URL or address: shown masked, never logged
    Column("format", String(16), nullable=False),  # json | discord | slack | email
    Column("player", String(100), nullable=True),  # None: the campaign's group channel
    Column("mention", String(200), nullable=True),
    Column("created_at", Float, nullable=False),
    # Added after the first release: a table made before has them added on first use (see
    # `ensure_tables`). Seconds between reminders (None: none), and whether an e-mail carries
    # the export of the events since the player last acted.
    Column("remind", Float, nullable=True),
    Column("attach_export", Integer, nullable=True),
)
# The columns `ensure_tables` adds to a channel table made before them.
ADDED_CHANNEL_COLUMNS = ("remind", "attach_export")
# One row per channel per hand-off: the unique key makes a hand-off written twice (an action
# run again after a conflict writes its own version) impossible to deliver twice.
outbox_table = Table(
    "tracker_notify_outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(36), nullable=False),
    # No foreign key: a removed channel's delivered messages stay in the log.
    Column("channel_id", Integer, nullable=False),
    Column("version", Integer, nullable=False),  # the campaign's version after the action
    Column("payload", Text, nullable=False),  # JSON: the hand-off, see `handoff`
    Column("created_at", Float, nullable=False),
    Column("status", String(16), nullable=False, default="pending"),  # pending | delivered | failed
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Float, nullable=False),
    Column("delivered_at", Float, nullable=True),
    Column("last_error", Text, nullable=True),
    UniqueConstraint("channel_id", "campaign_id", "version", name="tracker_notify_once"),
)
attempts_table = Table(
    "tracker_notify_attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("outbox_id", Integer, nullable=False, index=True),
    Column("at", Float, nullable=False),
    Column("ok", Integer, nullable=False),
    Column("status", Text, nullable=False),  # an HTTP status or the error's first line
)

FORMATS = ("json", "discord", "slack", "email")
# An override request (RK3) records no event, so its hand-off's row takes a version of its own
# below every test message's (-1, -2, ...): -(OVERRIDE_VERSIONS + the request's number).
OVERRIDE_VERSIONS = 2**30


class NotifyError(InputError):
    """A channel that cannot be added, found or reached."""


def ensure_tables(engine: Engine) -> None:
    """The notification tables, made when missing (like the other side tables). Looked for
    first without a transaction, so an action on a database that has them commits nothing
    more than its own events."""
    from sqlalchemy import inspect

    inspector = inspect(engine)
    if all(inspector.has_table(table.name) for table in metadata.sorted_tables):
        _add_channel_columns(engine, {c["name"] for c in inspector.get_columns(channels_table.name)})
        return
    from sqlalchemy.exc import DatabaseError

    for attempt in range(_CREATE_ATTEMPTS):
        try:
            metadata.create_all(engine, checkfirst=True)
            return
        except DatabaseError:
            # Writers opening a fresh database together race to make the tables: the one that
            # lost finds one made ("already exists") and goes on once all are, making any the
            # winner has not made yet itself; anything else is raised.
            if all(inspect(engine).has_table(table.name) for table in metadata.sorted_tables):
                return
            if attempt == _CREATE_ATTEMPTS - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


_CREATE_ATTEMPTS = 5


def _add_channel_columns(engine: Engine, present: set[str]) -> None:
    """Give a channel table made before `remind` and `attach_export` those columns, once."""
    from sqlalchemy import inspect
    from sqlalchemy.exc import DBAPIError

    missing = [name for name in ADDED_CHANNEL_COLUMNS if name not in present]
    if not missing:
        return
    try:
        with engine.begin() as conn:
            for name in missing:
                kind = channels_table.c[name].type.compile(conn.dialect)
                conn.exec_driver_sql(f"ALTER TABLE {channels_table.name} ADD COLUMN {name} {kind}")
    except DBAPIError:
        # Another process added them at the same time: its columns stand.
        columns = {c["name"] for c in inspect(engine).get_columns(channels_table.name)}
        if not set(ADDED_CHANNEL_COLUMNS) <= columns:
            raise


def _with_channel() -> Any:
    """Outbox rows with what their channel says of where and how they go."""
    c = channels_table.c
    return select(outbox_table, c.kind, c.target, c.format, c.mention, c.player, c.remind, c.attach_export).join(
        channels_table, c.id == outbox_table.c.channel_id
    )


def mask(target: str) -> str:
    """A channel's URL or address as shown after it is added: enough to tell two apart."""
    if "@" in target and "://" not in target:
        user, _, host = target.partition("@")
        return f"{user[:1]}***@{host}"
    scheme, _, rest = target.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme}://{host}/***" if rest else "***"


# ----- hand-offs -----


@dataclass(frozen=True)
class Before:
    """Who owed what before an action, and whose turn it was."""

    owed: frozenset[tuple[str, str]]
    round: int
    nation: str


def _key(item: Mapping[str, Any]) -> str:
    return f"{item.get('kind')}:{item.get('battle')}:{item.get('step')}:{item.get('zone')}"


def owed(items: Iterable[Mapping[str, Any]]) -> frozenset[tuple[str, str]]:
    """(nation, what) pairs of `pending` items: one per nation each waits for."""
    return frozenset((nation, _key(item)) for item in items for nation in item.get("waiting", ()))


def before(campaign: Any) -> Before:
    """The state an action's hand-off is measured against."""
    return Before(owed(campaign.pending()), campaign.round, campaign.nation)


def handoff(prior: Before, campaign: Any, events: Sequence[Any], name: str) -> dict[str, Any] | None:
    """The hand-off an action made (see the module docstring), as the outbox's payload, or None.

    A hand-off: a nation owes something it did not owe before, the turn passed to another
    nation (or round), or a round's dice seed was revealed."""
    items = campaign.pending()
    now = owed(items)
    newly = sorted({nation for nation, what in now - prior.owed})
    reasons = []
    if newly:
        reasons.append("owed")
    if (campaign.round, campaign.nation) != (prior.round, prior.nation):
        reasons.append("turn")
    if any(type(e).__name__ == "SeedRevealed" for e in events):
        reasons.append("seed")
    if not reasons:
        return None
    return describe(campaign, name, items, reasons, newly)


# What a message keeps of each `pending` item: its words and what `next_command` reads.
ITEM_KEYS = ("text", "kind", "battle", "step", "waiting", "zone", "nation", "unit_type", "rule", "blocking", "legal")


def describe(
    campaign: Any,
    name: str,
    items: Sequence[Mapping[str, Any]] | None = None,
    reasons: Sequence[str] = (),
    newly: Sequence[str] = (),
) -> dict[str, Any]:
    """The outbox's payload: the campaign where it stands and what it waits for."""
    scenario = getattr(campaign, "scenario", None)
    return {
        "campaign": name,
        "title": getattr(scenario, "title", None) or name,
        "round": campaign.round,
        "phase": campaign.phase,
        "nation": campaign.nation,
        "reasons": list(reasons),
        "newly_owing": list(newly),
        "pending": [{k: item.get(k) for k in ITEM_KEYS} for item in (campaign.pending() if items is None else items)],
    }


def override_requested(campaign: Any, name: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """The hand-off of an override request (RK3): the nations whose agreement it needs now owe
    an approval. `request`: {"id", "requested_by", "agreed_by", "reason"}."""
    payload = describe(campaign, name, reasons=["override"], newly=list(request["agreed_by"]))
    payload["override"] = {k: request[k] for k in ("id", "requested_by", "agreed_by", "reason")}
    return payload


def approved(payload: dict[str, Any] | None, campaign: Any, name: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """An action recorded by the approval of an override request: its hand-off (if any) with the
    approval added, told to the player who asked (see `concerns`)."""
    payload = describe(campaign, name) if payload is None else payload
    payload["reasons"] = [*payload["reasons"], "approved"]
    payload["override"] = {k: request[k] for k in ("id", "requested_by", "agreed_by", "approved_by")}
    return payload


def still_owed(payload: Mapping[str, Any], campaign: Any, nations: Sequence[str] | None) -> bool:
    """Whether what a hand-off told `nations` of (None: a group channel, every nation) is still
    what the game waits for from them: each item it listed for them pending still, and for
    the turn, still their turn in that round and phase. A reminder is sent only then."""

    def theirs(nation: str) -> bool:
        return nations is None or nation in nations

    told = {(n, _key(item)) for item in payload["pending"] for n in item.get("waiting") or () if theirs(n)}
    turn = "turn" in payload["reasons"] and theirs(payload["nation"])
    if not told and not turn:
        return False
    if not told <= owed(campaign.pending()):
        return False
    where = (campaign.round, campaign.nation, campaign.phase)
    return not turn or where == (payload["round"], payload["nation"], payload["phase"])


def concerns(payload: Mapping[str, Any], nations: Sequence[str], player: str | None = None) -> bool:
    """Whether a player of `nations` is told of this hand-off: they newly owe something, or the
    turn passed to one of their nations, or (`player`) an override they asked for was approved."""
    if set(payload["newly_owing"]) & set(nations):
        return True
    if "approved" in payload["reasons"] and payload["override"]["requested_by"] == player:
        return True
    return "turn" in payload["reasons"] and payload["nation"] in nations


# ----- the outbox -----


@dataclass
class Outbox:
    """The channels and the outbox of one database."""

    engine: Engine
    _ready: bool = field(default=False, repr=False)

    def ready(self) -> None:
        if not self._ready:
            ensure_tables(self.engine)
            self._ready = True

    def channels(self, campaign_id: str) -> list[dict[str, Any]]:
        self.ready()
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(channels_table).where(channels_table.c.campaign_id == campaign_id).order_by(channels_table.c.id)
            ).mappings()
            return [dict(r) for r in rows]

    def channel(self, campaign_id: str, channel_id: int) -> dict[str, Any]:
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
        with self.engine.begin() as conn:
            result = conn.execute(
                insert(channels_table).values(
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
        with self.engine.begin() as conn:
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

    def enqueue_test(self, campaign_id: str, channel_id: int, payload: Mapping[str, Any]) -> int:
        """A test message for one channel, delivered like any other (`tracker notify test`)."""
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
                    next_attempt_at=now,
                )
            )
            key = result.inserted_primary_key
            assert key is not None
            return int(key[0])

    def due(self, now: float, limit: int = 20, row_id: int | None = None) -> list[dict[str, Any]]:
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
            return [dict(r) for r in conn.execute(query).mappings()]

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

    def reminders_due(self, now: float, limit: int = 20) -> list[dict[str, Any]]:
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
            return [dict(r) for r in conn.execute(query).mappings()]

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

    def log(self, campaign_id: str) -> list[dict[str, Any]]:
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
            by_row: dict[int, list[dict[str, Any]]] = {}
            for t in tries:
                by_row.setdefault(t["outbox_id"], []).append(
                    {"at": t["at"], "ok": bool(t["ok"]), "status": t["status"]}
                )
        return [{**r, "tries": by_row.get(r["id"], [])} for r in rows]


# What a campaign's channels are, told in one row: how many, the highest id and the latest
# creation time. Adding a channel raises the count or, with a removal in between, the latest
# time (a new row is the newest, even where SQLite hands a removed row's id out again);
# removing one lowers the count or, with an addition in between, changes the others.
_CHANNELS_TOKEN_SQL = (
    "SELECT count(*), coalesce(max(id), 0), coalesce(max(created_at), 0) "
    f"FROM {channels_table.name} WHERE campaign_id = ?"
)
_channels_token = select(
    func.count(),
    func.coalesce(func.max(channels_table.c.id), 0),
    func.coalesce(func.max(channels_table.c.created_at), 0),
).where(channels_table.c.campaign_id == bindparam("campaign_id"))


class Handoffs:
    """The hook of the application service: an action's hand-off, measured against the state
    before it, is written to the outbox with its events (`Tracker._save`).

    A campaign's channel list is kept between actions and read again only when its token (see
    `_CHANNELS_TOKEN_SQL`) changed: one small query before each action instead of reading
    every channel, and a channel added or removed by any process is seen by the next action,
    as when the list was read every time."""

    def __init__(
        self,
        engine: Engine,
        name_of: Callable[[Any], str],
        read: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]] | None = None,
    ) -> None:
        self.outbox = Outbox(engine)
        self.engine = engine
        self.name_of = name_of
        # Where the token is read on SQLite (driver SQL): the store's writing connection when
        # given, which the action's write then finds warm.
        self.read = read
        self._channels: dict[str, tuple[tuple[Any, ...], list[dict[str, Any]]]] = {}
        # The override request (RK3) whose approval the action under way records, if any:
        # {"id", "requested_by", "agreed_by", "approved_by"} (set by the league server).
        self.approval: Callable[[str], Mapping[str, Any] | None] | None = None

    def start(self, campaign_id: Any, campaign: Any) -> PendingHandoff | None:
        """Before an action: None when nobody is told of this campaign (nothing more to do)."""
        channels = self.channels(str(campaign_id))
        if not channels:
            return None
        return PendingHandoff(self, str(campaign_id), channels, before(campaign))

    def channels(self, campaign_id: str) -> list[dict[str, Any]]:
        """The campaign's channels, read again only when their token changed."""
        token = self._token(campaign_id)
        if not token[0]:
            self._channels.pop(campaign_id, None)
            return []
        found = self._channels.get(campaign_id)
        if found is not None and found[0] == token:
            return found[1]
        channels = self.outbox.channels(campaign_id)
        # Kept under the token read before the list: a change in between is read again next time.
        self._channels[campaign_id] = (token, channels)
        return channels

    def _token(self, campaign_id: str) -> tuple[Any, ...]:
        self.outbox.ready()
        if self.engine.dialect.name == "sqlite" and self.read is not None:
            return tuple(self.read(_CHANNELS_TOKEN_SQL, (campaign_id,))[0])
        if self.engine.dialect.name == "sqlite":
            # Through the driver: SQLAlchemy's statement and result handling cost several
            # times the query, and this runs before every action.
            raw = self.engine.raw_connection()
            try:
                row = raw.cursor().execute(_CHANNELS_TOKEN_SQL, (campaign_id,)).fetchone()
            finally:
                raw.close()
        else:
            with self.engine.connect() as conn:
                row = conn.execute(_channels_token, {"campaign_id": campaign_id}).one()
        return tuple(row)

    def told(
        self, campaign_id: str, payload: Mapping[str, Any], channels: Sequence[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """The campaign's channels (or those given) told of a hand-off: the group's, and those
        of the players it concerns."""
        return [
            c
            for c in (self.channels(campaign_id) if channels is None else channels)
            if c["player"] is None or concerns(payload, self.nations_of(campaign_id, c["player"]), c["player"])
        ]

    def override_request(
        self, campaign_id: str, campaign: Any, request: Mapping[str, Any]
    ) -> Callable[[Connection, int], int] | None:
        """The write of an override request's hand-off, given the transaction that records the
        request and its number; None when nobody is told. `request` as `override_requested`'s,
        without its number."""
        payload = override_requested(campaign, self.name_of(campaign), {**request, "id": 0})
        told = self.told(campaign_id, payload)
        if not told:
            return None
        outbox = self.outbox

        def write(conn: Connection, number: int) -> int:
            payload["override"]["id"] = number
            return outbox.write(conn, campaign_id, -(OVERRIDE_VERSIONS + number), payload, told)

        return write

    def nations_of(self, campaign_id: str, player: str) -> Sequence[str]:
        from tracker.service.players import Players

        found = Players(self.engine).player(campaign_id, player)
        return found.nations if found is not None else ()


@dataclass
class PendingHandoff:
    """An action under way on a campaign with channels: what was owed before it."""

    handoffs: Handoffs
    campaign_id: str
    channels: list[dict[str, Any]]
    prior: Before

    def found(self, campaign: Any) -> Callable[[Connection], int] | None:
        """After the action (its events still pending): the write of its outbox rows, or None
        when it hands nothing off."""
        name = self.handoffs.name_of(campaign)
        payload = handoff(self.prior, campaign, campaign.pending_events, name)
        request = self.handoffs.approval(self.campaign_id) if self.handoffs.approval is not None else None
        if request is not None:
            payload = approved(payload, campaign, name, request)
        if payload is None:
            return None
        # Read before the write transaction: it then only inserts.
        told = self.handoffs.told(self.campaign_id, payload, self.channels)
        if not told:
            return None
        version = campaign.version
        outbox = self.handoffs.outbox

        def write(conn: Connection) -> int:
            return outbox.write(conn, self.campaign_id, version, payload, told)

        return write


# ----- messages -----


def message_text(payload: Mapping[str, Any], command_for: CommandFor, public_url: str | None) -> str:
    """The message's words: campaign and title, round, phase and nation, who is waited for and
    for what, the commands that answer, and the viewer's link when the server knows its URL."""
    head = f"{payload['title']} ({payload['campaign']})"
    if payload.get("test"):
        head = f"Test message from {head}"
    if payload.get("reminder"):
        head = f"Reminder: {head}"
    lines = [f"{head}: round {payload['round']} · {payload['nation']} · {payload['phase']}"]
    lines += override_lines(payload, public_url)
    if "seed" in payload["reasons"]:
        lines.append("The round's dice seed was revealed.")
    if "turn" in payload["reasons"]:
        lines.append(f"It is now {payload['nation']}'s turn.")
    for item in payload["pending"]:
        who = ", ".join(item.get("waiting") or [])
        lines.append(f"Waiting for {who}: {item['text']}" if who else str(item["text"]))
        command = command_for(item)
        if command:
            # The global option goes before each command: a database may hold several campaigns.
            named = re.sub(r"\btracker ", f"tracker --campaign {shlex.quote(payload['campaign'])} ", command)
            lines.append(f"  next: {named}")
    if not payload["pending"]:
        lines.append("Nothing pending: the phase may end (tracker next).")
    if public_url:
        lines.append(f"{public_url.rstrip('/')}/campaigns/{quote(payload['campaign'], safe='')}/board")
    return "\n".join(lines)


def override_lines(payload: Mapping[str, Any], public_url: str | None) -> list[str]:
    """What a message says of an override request (RK3) made or approved."""
    override = payload.get("override")
    if not override:
        return []
    number, asker = override["id"], override["requested_by"]
    if "approved" in payload["reasons"]:
        return [f"Override request {number} by {asker} was approved by {override['approved_by']} and recorded."]
    server = public_url.rstrip("/") if public_url else "URL"
    command = f"tracker --server {server} --campaign {shlex.quote(payload['campaign'])} approve {number}"
    return [
        f"Override request {number} by {asker} needs the agreement of {', '.join(override['agreed_by'])}: "
        f"{override['reason'] or 'no reason given'}",
        f"  next: {command}",
    ]


def webhook_body(fmt: str, text: str, payload: Mapping[str, Any], mention: str | None) -> dict[str, Any]:
    """The JSON a webhook posts. `json`: {"text", "campaign", "title", "round", "phase",
    "nation", "reasons", "newly_owing", "pending"} (the hand-off and its words)."""
    if mention:
        text = f"{mention} {text}"
    if fmt == "discord":
        # Only the channel's own mention pings: a name in a unit's text never does.
        users = [m.strip("<@!>") for m in (mention or "").split() if m.startswith("<@") and not m.startswith("<@&")]
        return {"content": text[:2000], "allowed_mentions": {"parse": [], "users": users}}
    if fmt == "slack":
        return {"text": text}
    return {"text": text, **{k: v for k, v in payload.items() if k != "test"}, "test": bool(payload.get("test"))}


SINCE = "Since you last acted:"


def email_body(text: str, payload: Mapping[str, Any], since: Sequence[str] = ()) -> dict[str, Any]:
    """An e-mail's subject and its text and HTML parts (the same words), with the summary of
    what happened since the player last acted (`since`, see `tracker.server.delivery`) in both."""
    import html

    subject = f"[{payload['title']}] round {payload['round']} · {payload['nation']} · {payload['phase']}"
    if payload.get("test"):
        subject = f"Test: {subject}"
    if payload.get("reminder"):
        subject = f"Reminder: {subject}"
    paragraphs = []
    for line in text.splitlines():
        if line.startswith("  next: "):
            paragraphs.append(f"<p>next: <code>{html.escape(line[len('  next: ') :])}</code></p>")
        elif line.startswith(("http://", "https://")):
            paragraphs.append(f'<p><a href="{html.escape(line)}">{html.escape(line)}</a></p>')
        else:
            paragraphs.append(f"<p>{html.escape(line)}</p>")
    if since:
        text = "\n".join([text, "", SINCE, *(f"- {line}" for line in since)])
        items = "".join(f"<li>{html.escape(line)}</li>" for line in since)
        paragraphs.append(f"<p>{SINCE}</p><ul>{items}</ul>")
    return {"subject": subject, "text": text, "html": "<html><body>" + "".join(paragraphs) + "</body></html>"}


# ----- sending -----


class Sender(Protocol):
    """Sends one message to one channel; raises `SendFailed` when it was not accepted."""

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str: ...


class SendFailed(Exception):
    """A channel did not accept a message (its status, or the error's first line)."""


class HttpSender:
    """Posts webhooks with the standard library."""

    def __init__(self, timeout: float = 10.0) -> None:
        self.timeout = timeout

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str:
        # Imported when a message is sent: recording an action never needs them.
        import urllib.error
        import urllib.request

        request = urllib.request.Request(
            channel["target"],
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "User-Agent": "twtea-naval-tracker"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (the channel's URL)
                return f"HTTP {response.status}"
        except urllib.error.HTTPError as e:
            raise SendFailed(f"HTTP {e.code}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise SendFailed(f"unreachable: {type(reason).__name__}") from None


@dataclass(frozen=True)
class SmtpSettings:
    """An SMTP server to send e-mail through (`tracker serve --smtp-host ...`)."""

    host: str
    port: int
    sender: str
    starttls: bool = False
    user: str | None = None
    password: str | None = None
    timeout: float = 30.0


class SmtpSender:
    """Sends e-mail channels' messages through an SMTP server, with the standard library."""

    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str:
        import smtplib
        from email.message import EmailMessage

        s = self.settings
        message = EmailMessage()
        message["Subject"] = body["subject"]
        message["From"] = s.sender
        message["To"] = channel["target"]
        message.set_content(body["text"])
        message.add_alternative(body["html"], subtype="html")
        if body.get("attachment"):
            filename, data = body["attachment"]
            message.add_attachment(data, maintype="application", subtype="jsonl", filename=filename)
        try:
            with smtplib.SMTP(s.host, s.port, timeout=s.timeout) as smtp:
                if s.starttls:
                    smtp.starttls()
                if s.user:
                    smtp.login(s.user, s.password or "")
                smtp.send_message(message)
        except smtplib.SMTPResponseException as e:
            raise SendFailed(f"SMTP {e.smtp_code}") from None
        except (smtplib.SMTPException, OSError) as e:
            raise SendFailed(f"SMTP: {type(e).__name__}") from None
        return "SMTP 250"


class Senders:
    """Each channel's message to the sender of its kind; e-mail only with an SMTP server."""

    def __init__(self, webhook: Sender | None = None, email: Sender | None = None) -> None:
        self.webhook = webhook or HttpSender()
        self.email = email

    def send(self, channel: Mapping[str, Any], body: Mapping[str, Any]) -> str:
        if channel["kind"] == "email":
            if self.email is None:
                raise SendFailed("no SMTP server: tracker serve --smtp-host")
            return self.email.send(channel, body)
        return self.webhook.send(channel, body)


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


# What a row's e-mail adds to its message, made by the server that sends it: {"since": the
# summary lines, "attachment": (file name, bytes)} (see `tracker.server.delivery`).
Extras = Callable[[Mapping[str, Any], Mapping[str, Any]], Mapping[str, Any]]
# Whether a delivered row's hand-off is still owed (see `still_owed`), for its reminder.
Owed = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]


def deliver_due(
    outbox: Outbox,
    sender: Sender,
    command_for: CommandFor,
    backoff: Backoff,
    public_url: str | None = None,
    now: float | None = None,
    extras: Extras | None = None,
    owed_still: Owed | None = None,
) -> int:
    """One pass of delivery: every due row sent once, then (with `owed_still`) the reminders
    due; returns how many were delivered (reminders not counted)."""
    delivered = 0
    at = time.time() if now is None else now
    for row in outbox.due(at):
        delivered += deliver(outbox, row, sender, command_for, backoff, public_url, extras) is None
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


def message_body(
    row: Mapping[str, Any],
    payload: Mapping[str, Any],
    command_for: CommandFor,
    public_url: str | None,
    extras: Extras | None = None,
) -> dict[str, Any]:
    """What is sent for one row: a webhook's JSON, or an e-mail's parts (with `extras`)."""
    text = message_text(payload, command_for, public_url)
    if row["kind"] != "email":
        return webhook_body(row["format"], text, payload, row["mention"])
    more = extras(row, payload) if extras is not None else {}
    body = email_body(text, payload, more.get("since", ()))
    if more.get("attachment"):
        body["attachment"] = more["attachment"]
    return body


def deliver(
    outbox: Outbox,
    row: Mapping[str, Any],
    sender: Sender,
    command_for: CommandFor,
    backoff: Backoff,
    public_url: str | None = None,
    extras: Extras | None = None,
) -> str | None:
    """One attempt at one due row: None when it was delivered (and marked, once), else why not."""
    if not outbox.claim(row, backoff.lease):
        return "taken by another worker"
    try:
        body = message_body(row, json.loads(row["payload"]), command_for, public_url, extras)
    except (ValueError, KeyError, TypeError) as e:
        # A row no message can be made of never blocks the ones behind it.
        outbox.attempted(row["id"], False, f"unreadable message: {type(e).__name__}", None)
        return "unreadable message"
    try:
        status = sender.send(row, body)
    except SendFailed as e:
        outbox.attempted(row["id"], False, str(e), backoff.retry_at(row["attempts"] + 1, time.time()))
        return str(e)
    outbox.attempted(row["id"], True, status, None)
    return None
