"""Hand-offs: who owes what before and after an action (`waited`: `Campaign.pending` with the
phasing nation's phase end), the outbox's payload when the game passes to someone, whom each
channel tells, and `Handoffs`, the application service's hook that writes them with the
action's events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from sqlalchemy import bindparam, func, select
from sqlalchemy.engine import Connection, Engine

from tracker.service.notify.outbox import Channel, Outbox
from tracker.service.notify.tables import OVERRIDE_VERSIONS, channels_table


class _Where(TypedDict):
    campaign: str
    title: str
    round: int
    phase: str
    nation: str
    reasons: list[str]  # owed, turn, seed, override, approved, undone
    newly_owing: list[str]
    pending: list[dict[str, Any]]  # each `pending` item, cut to `ITEM_KEYS`


# A base class with total=False rather than NotRequired: the annotations are strings here, and
# TypedDict on Python 3.11 reads NotRequired in a string as required.
class HandoffPayload(_Where, total=False):
    """The outbox's payload of a hand-off (`describe`), kept as JSON in its row."""

    # An override request (RK3) asked for or approved: see `override_requested` and `approved`.
    override: dict[str, Any]
    # An undo: the nations waited for before it and for nothing after (see `handoff`), and the
    # events it took back (first, last).
    relieved: list[str]
    undone: list[int]


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


def waited(campaign: Any) -> list[dict[str, Any]]:
    """What the game waits for, as `tracker pending` lists it (`pending(turn=True)`) but for the
    battles the phasing nation may start (they wait for nobody): every open item, after the
    phasing nation's phase end (`turn_item`, T3) when nothing blocks it."""
    items: list[dict[str, Any]] = campaign.pending()
    # The phase end is owed too: without it the move coming back to the phasing nation (an
    # enemy's CV1 answer, a battle ended by the other side) read as nobody owing anything.
    # Built here rather than by `pending(turn=True)`, whose optional battles cost a board.
    if any(item["blocking"] for item in items):
        return items
    return [campaign.turn_item(), *items]


def before(campaign: Any) -> Before:
    """The state an action's hand-off is measured against."""
    return Before(owed(waited(campaign)), campaign.round, campaign.nation)


def handoff(prior: Before, campaign: Any, events: Sequence[Any], name: str) -> HandoffPayload | None:
    """The hand-off an action made (see the module docstring), as the outbox's payload, or None.

    A hand-off: a nation owes something (a choice, a roll, its phase end) and owed nothing
    before, the turn passed to another nation (or round), or a round's dice seed was
    revealed. A nation that owed something before and owes now is not told again: it was
    waited for already (a unit it bought, the next step of its own battle)."""
    items = waited(campaign)
    owing = {nation for nation, _ in prior.owed}
    newly = sorted({nation for nation, _ in owed(items)} - owing)
    reasons = []
    if newly:
        reasons.append("owed")
    if (campaign.round, campaign.nation) != (prior.round, prior.nation):
        reasons.append("turn")
    if any(type(e).__name__ == "SeedRevealed" for e in events):
        reasons.append("seed")
    # An undo that took back the action passing the game to someone: told they owed
    # something, they are told that they no longer do (else they answer a move undone).
    undo = next((e for e in events if type(e).__name__ == "ActionUndone"), None)
    relieved = sorted(owing - {nation for nation, _ in owed(items)}) if undo is not None else []
    if relieved:
        reasons.append("undone")
    if not reasons:
        return None
    payload = describe(campaign, name, items, reasons, newly)
    if relieved:
        assert undo is not None
        payload["relieved"] = relieved
        payload["undone"] = [undo.undone_from, undo.undone_to]
    return payload


# What a message keeps of each `pending` item: its words and everything `next_command` reads, so
# the command a message names is the one `tracker pending` names: `dice` (a campaign rolling its
# own dice is not told to type them, D4), `count` (PU2: placing fewer than were bought leaves the
# phase open), `units` and `landing` (F7: the flight that lands a stranded air unit, not "move
# UNIT --to ZONE"), `decisions` (NC4: submerge, retreat) and `eligible` (CV3: nobody may search).
ITEM_KEYS = (
    "text", "kind", "battle", "step", "waiting", "zone", "nation", "unit_type", "rule", "blocking", "legal", "dice",
    "count", "units", "landing", "decisions", "eligible",
)  # fmt: skip


def describe(
    campaign: Any,
    name: str,
    items: Sequence[Mapping[str, Any]] | None = None,
    reasons: Sequence[str] = (),
    newly: Sequence[str] = (),
) -> HandoffPayload:
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
        "pending": [{k: item.get(k) for k in ITEM_KEYS} for item in (waited(campaign) if items is None else items)],
    }


def override_requested(campaign: Any, name: str, request: Mapping[str, Any]) -> HandoffPayload:
    """The hand-off of an override request (RK3): the nations whose agreement it needs now owe
    an approval. `request`: {"id", "requested_by", "agreed_by", "reason"}."""
    payload = describe(campaign, name, reasons=["override"], newly=list(request["agreed_by"]))
    payload["override"] = {k: request[k] for k in ("id", "requested_by", "agreed_by", "reason")}
    return payload


def approved(payload: HandoffPayload | None, campaign: Any, name: str, request: Mapping[str, Any]) -> HandoffPayload:
    """An action recorded by the approval of an override request: its hand-off (if any) with the
    approval added, told to the player who asked (see `concerns`)."""
    payload = describe(campaign, name) if payload is None else payload
    payload["reasons"] = [*payload["reasons"], "approved"]
    payload["override"] = {k: request[k] for k in ("id", "requested_by", "agreed_by", "approved_by")}
    return payload


def request_closed(number: int, request: Mapping[str, Any] | None, version: int, asker_plays: bool) -> str | None:
    """Why override request `number` (RK3) can no longer be approved, so that a message asking
    for its approval no longer holds: not recorded (any more), approved (or its approval under
    way), void since anything else was recorded after it (`version`, the campaign's last event,
    is not the one it was asked at: `approve` refuses it), or its asker's token revoked (the
    same); None while it is open. `request` as `Players.override_request` gives it."""
    if request is None:
        return f"override request {number} is not recorded"
    if request["approved_by"] is not None:
        return f"override request {number} was approved by {request['approved_by']}"
    if version != request["seen"]:
        return f"override request {number} is void: the campaign moved on since it was asked"
    if not asker_plays:
        return f"override request {number} can no longer be approved: {request['requested_by']}'s token was revoked"
    return None


def still_owed(payload: Mapping[str, Any], campaign: Any, nations: Sequence[str] | None) -> bool:
    """Whether what a hand-off told `nations` of (None: a group channel, every nation) is still
    what the game waits for from them: each item it listed for them pending still, and for
    the turn or a phase end it listed, still that round, phase and nation. A reminder is sent
    only then."""

    def theirs(nation: str) -> bool:
        return nations is None or nation in nations

    mine = [item for item in payload["pending"] if any(theirs(n) for n in item.get("waiting") or ())]
    told = {(n, _key(item)) for item in mine for n in item.get("waiting") or () if theirs(n)}
    # A phase end's key names no phase: the position tells whether it is still the same one.
    turn = ("turn" in payload["reasons"] and theirs(payload["nation"])) or any(i.get("kind") == "turn" for i in mine)
    if not told and not turn:
        return False
    if not told <= owed(waited(campaign)):
        return False
    where = (campaign.round, campaign.nation, campaign.phase)
    return not turn or where == (payload["round"], payload["nation"], payload["phase"])


def told_now(payload: Mapping[str, Any], campaign: Any, nations: Sequence[str] | None) -> str:
    """What a hand-off about to be delivered still tells `nations` (None: a group channel, every
    nation) of where the game stands: "owed" while an item it listed for them is still owed,
    or the turn it told of is still that nation's in that round (or it told them nothing to
    check); "waiting" when none is, but a nation it told of is still waited for, for something
    else (a nation is told once while it goes on owing: this may be the only word it gets);
    "past" when none of them is waited for any more. Delivered late (played by file, the
    worker run after more was recorded), "roll battle 1" went out after battle 1 ended."""

    def theirs(nation: str) -> bool:
        return nations is None or nation in nations

    items = payload["pending"]
    told = {(n, _key(i)) for i in items if i.get("kind") != "turn" for n in i.get("waiting") or () if theirs(n)}
    # A phase end's key names no phase (T3): it is the one told of only in that round, phase and
    # nation, as `still_owed` reads it.
    ends = {n for i in items if i.get("kind") == "turn" for n in i.get("waiting") or () if theirs(n)}
    turn = "turn" in payload["reasons"] and theirs(payload["nation"])
    if not told and not ends and not turn:
        return "owed"
    now = owed(waited(campaign))
    told_of = (payload["round"], payload["nation"], payload["phase"])
    same_phase = ends and (campaign.round, campaign.nation, campaign.phase) == told_of
    if told & now or same_phase or (turn and (campaign.round, campaign.nation) == told_of[:2]):
        return "owed"
    named = {n for n, _ in told} | ends | ({payload["nation"]} if turn else set())
    return "waiting" if any(n in named for n, _ in now) else "past"


def concerns(payload: Mapping[str, Any], nations: Sequence[str], player: str | None = None) -> bool:
    """Whether a player of `nations` is told of this hand-off: they newly owe something, or owe
    nothing since an undo (`relieved`), or the turn passed to one of their nations, or
    (`player`) an override they asked for was approved."""
    if set(payload["newly_owing"]) & set(nations) or set(payload.get("relieved", ())) & set(nations):
        return True
    if "approved" in payload["reasons"] and payload["override"]["requested_by"] == player:
        return True
    return "turn" in payload["reasons"] and payload["nation"] in nations


def _only_relieved(payload: Mapping[str, Any], nations: Sequence[str], player: str | None) -> bool:
    """Whether a player of `nations` is told of a hand-off only as relieved by an undo."""
    if not set(payload.get("relieved", ())) & set(nations):
        return False
    rest = {**payload, "relieved": []}
    return not concerns(rest, nations, player)


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
        self._channels: dict[str, tuple[tuple[Any, ...], list[Channel]]] = {}
        # The override request (RK3) whose approval the action under way records, if any:
        # {"id", "requested_by", "agreed_by", "approved_by"} (set by the league server).
        self.approval: Callable[[str], Mapping[str, Any] | None] | None = None

    def start(self, campaign_id: Any, campaign: Any) -> PendingHandoff | None:
        """Before an action: None when nobody is told of this campaign (nothing more to do)."""
        channels = self.channels(str(campaign_id))
        if not channels:
            return None
        return PendingHandoff(self, str(campaign_id), channels, before(campaign))

    def channels(self, campaign_id: str) -> list[Channel]:
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
        self, campaign_id: str, payload: Mapping[str, Any], channels: Sequence[Channel] | None = None
    ) -> list[Channel]:
        """The campaign's channels (or those given) told of a hand-off: the group's, and those
        of the players it concerns. A player concerned only as relieved by an undo is told so
        only where their channel was sent word of an action it took back: a message still
        unsent is given up instead (`stale`), and its player never hears of either."""
        told = []
        for c in self.channels(campaign_id) if channels is None else channels:
            if c["player"] is not None:
                nations = self.nations_of(campaign_id, c["player"])
                if not concerns(payload, nations, c["player"]):
                    continue
                if _only_relieved(payload, nations, c["player"]) and not self.outbox.delivered_between(
                    c["id"], campaign_id, *payload["undone"]
                ):
                    continue
            told.append(c)
        return told

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
    channels: list[Channel]
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
