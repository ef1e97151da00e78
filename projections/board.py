"""Read models of the board, kept from the application's notification log.

One projector follows the log of every campaign in the database and writes, in the same
transaction as its tracking position:

- an event index (turn, phase, nation, zones, kind, battle, rule, one-line summary, undo marks),
  which also answers "the end of turn N" (its last event not undone);
- the history of units, NTR, nations (balance, losses, technology) and each nation's totals
  (units, their cost, NTR at sea: what a chart draws) as rows valid from one event to
  another, so the board after any event is one indexed query, not a replay. Every CHECKPOINT
  events the rows still open are closed and opened again, so the rows valid after an event all
  start at or after the checkpoint before it: the board query reads a bounded range, however
  long the log.

Each campaign is projected on its own: an event that cannot be read, applied or written stops
that campaign's projections (recorded with the reason, reported by every read of it) and
never the others'. A log that was cut after it was projected (rows deleted, ids reused) is
detected, not silently skipped. Every read catches up first, so nobody sees a stale board.

The tables are in `projections.schema`, the batched writes of a page in `projections.batch`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any
from uuid import UUID

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, Engine

from domain.memory import collector_paused
from projections.batch import Batch
from projections.positions import turn_number
from projections.schema import HISTORIES, NAME, SCHEMA, VIEWS, campaigns, ensure_schema, tracking
from projections.summary import rule_of, rule_of_kind, summary_of_kind

__all__ = ["turn_number"]

BATCH = 500
# A history row still open at the end of a page is inserted, then closed by an UPDATE in a
# later page: long pages settle most rows in memory (a checkpoint closes every row within
# CHECKPOINT events), so a rebuild runs thousands of those updates fewer, and fewer statements.
# A page's decoded events are held at once: 20,000 keep a rebuild of great-war-1914 under
# 90 MiB (50,000 took 125 MiB, no faster).
REBUILD_BATCH = 20000
# A rebuild commits every this many pages: each commit of a SQLite file in WAL mode waits for
# its write to reach the disk (and copies the log into the file), which cost a tenth of a
# rebuild at one commit every 5,000 events; the write lock is still let go every second or so,
# so a player recording meanwhile waits no longer.
REBUILD_PAGES_PER_COMMIT = 1
CHECKPOINT = 500

# Events that never change units, NTR or a nation's figures: no need to compare boards.
_BOARD_UNCHANGED = frozenset(
    {
        "PhaseAdvanced",
        "DiceRolled",
        "BattleAdvanced",
        "SearchersChosen",
        "DetectionsRecorded",
        "HitsScored",
        "CasualtiesChosen",
        "ConvoyAttackDeclared",
        "SeedRevealed",
        "BattleEnded",
        "ActionAsked",
        "ConvoyPassed",
    }
)
# Events that change one part of the board only (their apply touches nothing else the rows
# hold): the other parts' rows are kept, not built again and compared.
_BOARD_PARTS = {
    "UnitsMoved": frozenset({"unit"}),
    "ResourcesCollected": frozenset({"nation"}),
    "ResearchPaid": frozenset({"nation"}),
    "TechnologyAdvanced": frozenset({"nation"}),
}
# Events that change the rows of the units they name (in these fields) and nothing else the
# rows hold: only those units' rows are built again and compared.
_UNITS_NAMED = {"UnitsMoved": ("units", "carried")}
ASKED = "ActionAsked"
_BATTLE_STARTS = frozenset({"ConvoyAttackDeclared", "InterceptionStarted", "AswCombatStarted", "NavalBattleStarted"})
# The columns that name a history row's unit, NTR or nation.
_KEY_COLUMNS = {"unit": ("unit_id",), "ntr": ("nation", "zone"), "nation": ("nation",), "tally": ("nation",)}


def checkpoint_before(seq: int) -> int:
    """The checkpoint at or before event `seq`: every history row valid after `seq` starts there or later."""
    return seq - seq % CHECKPOINT


_unit_values = itemgetter("type", "nation", "at", "damage")


def _unit_rows(agg: Any) -> dict[Any, tuple[Any, ...]]:
    return {uid: _unit_values(u) for uid, u in agg.units.items()}


def _ntr_rows(agg: Any) -> dict[Any, tuple[Any, ...]]:
    return {(n, z): (c,) for n, zones in agg.ntr.items() for z, c in zones.items()}


def _nation_rows(agg: Any) -> dict[Any, tuple[Any, ...]]:
    return {n: (agg.balances[n], agg.ntr_lost.get(n, 0), tuple(sorted(agg.tech[n].items()))) for n in agg.balances}


_ROWS = {"unit": _unit_rows, "ntr": _ntr_rows, "nation": _nation_rows}
# The ruleset's unit costs, by the recorded ruleset they were read from (which a campaign never
# changes): read once, not on every event that changes units.
_COSTS: dict[int, tuple[Any, dict[str, int]]] = {}


def _costs_of(agg: Any) -> dict[str, int]:
    data = agg.ruleset_data
    found = _COSTS.get(id(data))
    if found is None or found[0] is not data:
        if len(_COSTS) > 100:
            _COSTS.clear()
        # The recorded data is kept with its costs, so its id cannot be another's meanwhile.
        found = _COSTS[id(data)] = (data, {name: u.cost for name, u in agg.ruleset.units.items()})
    return found[1]


Rows = dict[Any, tuple[Any, ...]]


def _tally_rows(agg: Any, units: Rows, ntr: Rows) -> Rows:
    """Each nation's totals from the unit and NTR rows: (units, their cost, NTR at sea)."""
    costs = _costs_of(agg)
    count = dict.fromkeys(agg.balances, 0)
    cost = dict.fromkeys(agg.balances, 0)
    at_sea = dict.fromkeys(agg.balances, 0)
    for type_, nation, _at, _damage in units.values():
        count[nation] = count.get(nation, 0) + 1
        cost[nation] = cost.get(nation, 0) + costs.get(type_, 0)
    for (nation, _zone), (n,) in ntr.items():
        at_sea[nation] = at_sea.get(nation, 0) + n
    return {n: (count[n], cost.get(n, 0), at_sea.get(n, 0)) for n in count}


def _with_tally(agg: Any, rows: dict[str, Rows]) -> dict[str, Rows]:
    """`rows` with the nations' totals worked out again from their unit and NTR rows."""
    rows["tally"] = _tally_rows(agg, rows["unit"], rows["ntr"])
    return rows


def _rows_of(agg: Any) -> dict[str, Rows]:
    """The board as comparable rows: what changed between two events is a set difference."""
    return _with_tally(agg, {name: rows(agg) for name, rows in _ROWS.items()})


_ZONE_KEYS = frozenset({"zone", "path", "hostile_passed"})
_NATION_KEYS = frozenset({"nation", "attacker", "defender", "roller"})
_PLACE_KEYS = _ZONE_KEYS | _NATION_KEYS
# How a place field of an event reads: a nation named, a zone named, zones listed.
_NATION, _ZONE, _ZONES = 0, 1, 2
# How an event changes the board's rows (see `_BOARD_UNCHANGED`, `_UNITS_NAMED`, `_BOARD_PARTS`).
_UNCHANGED, _NAMED, _PARTS, _WHOLE = 0, 1, 2, 3


def _fields_of(cls: type) -> set[str]:
    """The fields an event class declares, its bases' included: what its stored state can hold
    (upcasting only adds declared fields)."""
    fields: set[str] = set()
    for c in cls.__mro__:
        fields.update(vars(c).get("__annotations__", {}))
    return fields


class _Kind:
    """What the projector does with every event of one class, worked out once per class: the
    per-event work is then a lookup and a few attribute reads, not set tests and string
    comparisons on the event's name and fields."""

    __slots__ = (
        "name",
        "rule",
        "summary",
        "places",
        "by_nation",
        "battle",
        "unit",
        "starts_battle",
        "undo",
        "board",
        "parts",
        "named",
    )

    def __init__(self, cls: type) -> None:
        name = self.name = cls.__name__
        fields = _fields_of(cls)
        # A constant rule, or None when it depends on the event (`rule_of` then decides).
        self.rule: str | None = rule_of_kind(name)
        self.summary = summary_of_kind(name)
        self.places: tuple[tuple[str, int], ...] = tuple(
            (key, _NATION if key in _NATION_KEYS else _ZONE if key == "zone" else _ZONES)
            for key in sorted(_PLACE_KEYS & fields)
        )
        self.battle = "battle" in fields
        self.unit = "unit" in fields
        # Most events (asked actions, phases, collections) name no place but their nation, and
        # neither battle nor unit: their index row needs no sets of names.
        self.by_nation = not self.battle and not self.unit and self.places == (("nation", _NATION),)
        self.starts_battle = name in _BATTLE_STARTS
        self.undo = name == "ActionUndone"
        self.parts: frozenset[str] = frozenset()
        self.named: tuple[str, ...] = ()
        if name in _BOARD_UNCHANGED:
            self.board = _UNCHANGED
        elif name in _UNITS_NAMED:
            self.board, self.named = _NAMED, _UNITS_NAMED[name]
        elif name in _BOARD_PARTS:
            self.board, self.parts = _PARTS, _BOARD_PARTS[name]
        else:
            self.board = _WHOLE


_KINDS: dict[type, _Kind] = {}


def _kind_of(cls: type) -> _Kind:
    found = _KINDS.get(cls)
    if found is None:
        found = _KINDS[cls] = _Kind(cls)
    return found


@dataclass
class _Followed:
    """A campaign the projector is following: its state after the last projected event, and
    where each open history row began."""

    key: int
    agg: Any
    rows: dict[str, dict[Any, tuple[Any, ...]]]
    since: dict[str, dict[Any, int]]
    turn_order: list[str]
    last_hash: str
    battle_zone: dict[int, str] = field(default_factory=dict)
    # National turn numbers by (round, nation), worked out once each.
    turns: dict[tuple[int, str], int] = field(default_factory=dict)


class _Stop(Exception):
    """This campaign cannot be projected past event `seq`."""

    def __init__(self, seq: int, problem: str) -> None:
        super().__init__(problem)
        self.seq = seq
        self.problem = problem


def _describe(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {text}"[:500]


class BoardProjector:
    """Follows the notification log and keeps the board views up to date."""

    def __init__(
        self,
        engine: Engine,
        select_notifications: Callable[[int, int], list[Any]],
        decode: Callable[[Any], Any],
        load_version: Callable[[UUID, int], Any],
        last_version: Callable[[UUID], int] | None = None,
    ) -> None:
        self.engine = engine
        self.select_notifications = select_notifications
        self.decode = decode
        self.load_version = load_version
        self.last_version = last_version
        self.followed: dict[UUID, _Followed] = {}
        self.position: int | None = None
        ensure_schema(engine)

    # ----- catching up -----

    def catch_up(
        self,
        progress: Callable[[int], None] | None = None,
        batch_size: int = BATCH,
        last_id: Callable[[], int] | None = None,
        pages_per_commit: int = 1,
    ) -> int:
        """Project every notification not yet projected; returns how many were processed."""
        if last_id is not None:
            position, end = self.position_now(), last_id()
            if position == end:
                # Up to date: a read takes no write lock.
                return 0
            if position > end:
                self._log_was_cut(position, end)
                return 0
        with collector_paused():
            return self._catch_up(progress, batch_size, pages_per_commit)

    def _catch_up(self, progress: Callable[[int], None] | None, batch_size: int, pages_per_commit: int) -> int:
        done = 0
        while True:
            with self.engine.begin() as conn:
                start = self._lock_position(conn)
                if start != self.position:
                    # Someone else projected meanwhile: our in-memory states are not theirs.
                    self.followed.clear()
                last = start
                for _ in range(pages_per_commit):
                    count, last = self._page(conn, last, batch_size)
                    if not count:
                        break
                    done += count
                    if progress is not None:
                        progress(count)
                if last == start:
                    self.position = start
                    return done
                conn.execute(update(tracking).where(tracking.c.name == NAME).values(notification_id=last))
            self.position = last
            if not count:
                return done

    def _page(self, conn: Connection, start: int, batch_size: int) -> tuple[int, int]:
        """Project the page of notifications after `start`: how many there were, and the last one's id."""
        notifications = self.select_notifications(start + 1, batch_size)
        if not notifications:
            return 0, start
        by_campaign: dict[UUID, list[Any]] = {}
        run_of: Any = None
        run: list[Any] = []
        for n in notifications:
            # A page holds long runs of one campaign, whose notifications share its id
            # object: the id is hashed (a Python call) once a run, not once an event.
            if n.originator_id is not run_of:
                run_of = n.originator_id
                run = by_campaign.setdefault(run_of, [])
            run.append(n)
        known = _campaign_rows(conn, by_campaign)
        for cid, items in by_campaign.items():
            self._project_campaign(conn, cid, items, known.get(str(cid)))
        return len(notifications), notifications[-1].id

    def catch_up_log(self, last_id: Callable[[], int] | None = None) -> int:
        """`catch_up` after a whole log was appended at once (an import): in the pages of a
        rebuild, committed a few pages at a time rather than one short page a commit."""
        return self.catch_up(batch_size=REBUILD_BATCH, last_id=last_id, pages_per_commit=REBUILD_PAGES_PER_COMMIT)

    def position_now(self) -> int:
        with self.engine.connect() as conn:
            value = conn.execute(select(tracking.c.notification_id).where(tracking.c.name == NAME)).scalar()
        return int(value or 0)

    def _lock_position(self, conn: Connection) -> int:
        # The first statement writes, so SQLite takes its write lock and PostgreSQL locks the
        # row: two processes catching up at once take turns instead of projecting twice.
        result = conn.execute(update(tracking).where(tracking.c.name == NAME).values(name=NAME))
        if result.rowcount == 0:
            conn.execute(insert(tracking).values(name=NAME, notification_id=0, schema=SCHEMA))
        return int(conn.execute(select(tracking.c.notification_id).where(tracking.c.name == NAME)).scalar_one())

    def _log_was_cut(self, position: int, end: int) -> None:
        """The log ends before rows already projected: stop every campaign whose projected
        events are gone, so none of its reads shows what the log no longer holds."""
        self.followed.clear()
        with self.engine.begin() as conn:
            rows = conn.execute(
                select(campaigns.c.key, campaigns.c.campaign_id, campaigns.c.last_seq).where(
                    campaigns.c.stopped_seq.is_(None)
                )
            ).all()
            for row in rows:
                stored = self.last_version(UUID(row.campaign_id)) if self.last_version is not None else 0
                if stored < row.last_seq:
                    first = stored + 1
                    conn.execute(
                        update(campaigns)
                        .where(campaigns.c.key == row.key)
                        .values(
                            stopped_seq=first,
                            problem=(
                                f"events {first}-{row.last_seq} were deleted from the log after they were "
                                f"projected (the log ends at row {end}, the projections had reached row {position})"
                            ),
                        )
                    )

    def rebuild(self, progress: Callable[[int], None] | None = None) -> int:
        """Drop and rebuild every view from the start of the log."""
        with self.engine.begin() as conn:
            for table in reversed(VIEWS):
                conn.execute(delete(table))
            conn.execute(delete(tracking).where(tracking.c.name == NAME))
        self.followed.clear()
        self.position = None
        return self.catch_up(progress, batch_size=REBUILD_BATCH, pages_per_commit=REBUILD_PAGES_PER_COMMIT)

    # ----- one campaign's events of a page -----

    def _project_campaign(self, conn: Connection, cid: UUID, items: list[Any], known: Any) -> None:
        if known is not None and known.stopped_seq is not None:
            return
        try:
            with conn.begin_nested():
                key = self._project_events(conn, cid, items, known)
            return
        except _Stop as stop:
            self.followed.pop(cid, None)
            first_bad: tuple[int, str] | None = (stop.seq, stop.problem)
        except Exception:  # noqa: BLE001 - a failed write: find the event, one at a time
            self.followed.pop(cid, None)
            first_bad = None
        if first_bad is None or first_bad[0] > items[0].originator_version:
            # Project what can be projected before the event that failed, one event per savepoint.
            for n in items:
                try:
                    with conn.begin_nested():
                        self._project_events(conn, cid, [n], _campaign_rows(conn, {cid: []}).get(str(cid)))
                except _Stop as stop:
                    first_bad = (stop.seq, stop.problem)
                    break
                except Exception as e:  # noqa: BLE001 - the view rows of this event cannot be written
                    first_bad = (n.originator_version, f"its view rows cannot be written ({_describe(e)})")
                    break
            self.followed.pop(cid, None)
        assert first_bad is not None
        key = _ensure_campaign(conn, cid)
        conn.execute(
            update(campaigns).where(campaigns.c.key == key).values(stopped_seq=first_bad[0], problem=first_bad[1])
        )

    def _project_events(self, conn: Connection, cid: UUID, items: list[Any], known: Any) -> int:
        first = items[0].originator_version
        f = self.followed.get(cid)
        if f is None or f.agg is None or f.agg.version != first - 1:
            f = self._follow(conn, cid, first, known)
        batch = Batch(f.key)
        for n in items:
            self._project(batch, f, n)
        batch.flush(conn)
        conn.execute(
            update(campaigns).where(campaigns.c.key == f.key).values(last_seq=f.agg.version, last_hash=f.last_hash)
        )
        self.followed[cid] = f
        return f.key

    def _follow(self, conn: Connection, cid: UUID, version: int, known: Any) -> _Followed:
        """Start following a campaign at event `version`, from the store and the views."""
        projected = 0 if known is None else known.last_seq
        if projected != version - 1:
            if projected >= version:
                raise _Stop(
                    version,
                    f"event {version} was recorded again after events up to {projected} were projected: "
                    "the log was cut and rewritten",
                )
            raise _Stop(version, f"events {projected + 1}-{version - 1} are missing from the log")
        key = known.key if known is not None else _ensure_campaign(conn, cid)
        if version == 1:
            return _Followed(key, None, {n: {} for n in HISTORIES}, {n: {} for n in HISTORIES}, [], "")
        try:
            agg = self.load_version(cid, version - 1)
        except Exception as e:  # noqa: BLE001 - the stored log cannot rebuild the state before this event
            raise _Stop(version, f"the state before this event cannot be loaded ({_describe(e)})") from None
        if known is not None and known.last_hash and agg.last_hash != known.last_hash:
            raise _Stop(
                version,
                f"event {version - 1} in the log is not the one projected (its hash differs): "
                "the log was cut and rewritten, or edited",
            )
        since: dict[str, dict[Any, int]] = {}
        floor = checkpoint_before(version - 1)
        for name, table in HISTORIES.items():
            cols = [table.c[c] for c in _KEY_COLUMNS[name]]
            rows = conn.execute(
                select(*cols, table.c.from_seq).where(
                    table.c.c == key, table.c.from_seq >= floor, table.c.to_seq.is_(None)
                )
            )
            since[name] = {(r[0] if len(cols) == 1 else tuple(r[: len(cols)])): r[-1] for r in rows}
        rows_now = _rows_of(agg)
        for name in HISTORIES:
            if set(rows_now[name]) != set(since[name]):
                raise _Stop(
                    version, "the views do not match the log before this event: run `tracker projections rebuild`"
                )
        f = _Followed(key, agg, rows_now, since, list(agg.scenario.turn_order), agg.last_hash)
        f.battle_zone = {b["id"]: b["zone"] for b in agg.battles.values()}
        return f

    def _project(self, batch: Batch, f: _Followed, notification: Any) -> None:
        seq = notification.originator_version
        try:
            event = self.decode(notification)
            data = event.__dict__
            if data.get("prev_hash") != f.last_hash and seq > 1:
                raise _Stop(
                    seq,
                    f"event {seq} does not follow the projected event {seq - 1} (its previous hash differs): "
                    "the log was cut and rewritten, or edited",
                )
            agg = event.mutate(f.agg)
            kind = _KINDS.get(event.__class__) or _kind_of(event.__class__)
            row = _index_row(f, agg, event, data, kind, seq)
            named: list[Any] | None = None
            board = kind.board
            if board == _UNCHANGED:
                new_rows = f.rows
            elif board == _NAMED:
                new_rows, named = _named_unit_rows(f.rows, agg, data, kind.named)
            elif board == _PARTS:
                parts = kind.parts
                new_rows = {name: rows(agg) if name in parts else f.rows[name] for name, rows in _ROWS.items()}
                # The totals follow the units and NTR: kept when neither was touched.
                new_rows["tally"] = f.rows["tally"]
                if "unit" in parts or "ntr" in parts:
                    _with_tally(agg, new_rows)
            else:
                new_rows = _rows_of(agg)
        except _Stop:
            raise
        except Exception as e:  # noqa: BLE001 - an unreadable or inapplicable event stops this campaign only
            raise _Stop(seq, _describe(e)) from None
        batch.index_rows.append(row)
        if kind.undo:
            batch.mark_undone(event.undone_from, event.undone_to, seq)
        checkpoint = seq % CHECKPOINT == 0
        if new_rows is not f.rows or checkpoint:
            _write_history(batch, f, new_rows, seq, checkpoint, named)
            f.rows = new_rows
        f.agg = agg
        f.last_hash = data.get("hash", "")


def _index_row(f: _Followed, agg: Any, event: Any, data: dict[str, Any], kind: _Kind, seq: int) -> list[Any]:
    """The event index row of an event, in the order of the table's columns (undone_by last,
    set by a later undo of the page)."""
    round_, nation = agg.round, agg.nation
    turn = f.turns.get((round_, nation))
    if turn is None:
        if not f.turn_order:
            f.turn_order = list(agg.scenario.turn_order)
        turn = f.turns[round_, nation] = turn_number(f.turn_order, round_, nation)
    rule = kind.rule
    if kind.by_nation:
        # Most events: no place but their nation, no battle, no unit (no sets of names made).
        named = data.get("nation")
        battle, zones, nations = None, "", _bar(named) if named.__class__ is str else ""
    else:
        battle, zones, nations = _places(f, agg, event, data, kind)
    return [
        f.key,
        seq,
        turn,
        round_,
        nation,
        agg.phase,
        kind.name,
        (rule if rule is not None else rule_of(event)) or None,
        battle,
        zones,
        nations,
        kind.summary(event),
        None,
    ]


def _places(f: _Followed, agg: Any, event: Any, data: dict[str, Any], kind: _Kind) -> tuple[Any, str, str]:
    """An event's battle, and the zones and nations its index row names (as `_bars` stores them)."""
    zones: set[str] | None = None
    nations: set[str] | None = None
    for key, how in kind.places:
        value = data.get(key)
        if how == _NATION:
            if value.__class__ is str:
                if nations is None:
                    nations = {value}
                else:
                    nations.add(value)
        elif how == _ZONE:
            if value.__class__ is str:
                if zones is None:
                    zones = {value}
                else:
                    zones.add(value)
        elif value.__class__ is list and value:
            if zones is None:
                zones = set(value)
            else:
                zones.update(value)
    battle = None
    if kind.battle:
        battle = data.get("battle")
        if kind.starts_battle:
            f.battle_zone[event.battle] = event.zone
        if battle is not None and battle in f.battle_zone:
            if zones is None:
                zones = {f.battle_zone[battle]}
            else:
                zones.add(f.battle_zone[battle])
    if kind.unit:
        unit = data.get("unit")
        if unit.__class__ is str:
            u = agg.units.get(unit)
            owner = u["nation"] if u is not None else f.rows["unit"][unit][1] if unit in f.rows["unit"] else None
            if owner is not None:
                if nations is None:
                    nations = {owner}
                else:
                    nations.add(owner)
    return battle, "" if zones is None else _bars(zones), "" if nations is None else _bars(nations)


# One name as the index stores it, made once per name: most events name one nation or zone.
_ONE_BAR: dict[str, str] = {}


def _bar(only: str) -> str:
    """One name as the index stores it (see `_bars`)."""
    found = _ONE_BAR.get(only)
    if found is None:
        found = f"|{only}|"
        if len(_ONE_BAR) < 10_000:
            _ONE_BAR[only] = found
    return found


def _bars(values: set[str]) -> str:
    """Names as the index stores them for LIKE filters: "|a|b|" (sorted), or ""."""
    if len(values) == 1:
        for only in values:
            return _bar(only)
    return "|" + "|".join(sorted(values)) + "|" if values else ""


def _named_unit_rows(
    rows: dict[str, dict[Any, tuple[Any, ...]]], agg: Any, data: dict[str, Any], fields: tuple[str, ...]
) -> tuple[dict[str, dict[Any, tuple[Any, ...]]], list[Any]]:
    """The board's rows after an event that changes only the units it names (`_UNITS_NAMED`),
    and those units."""
    units = dict(rows["unit"])
    named: list[Any] = []
    for key in fields:
        for uid in data.get(key) or ():
            u = agg.units.get(uid)
            if u is None:
                units.pop(uid, None)
            else:
                units[uid] = _unit_values(u)
            named.append(uid)
    new = {"unit": units, "ntr": rows["ntr"], "nation": rows["nation"], "tally": rows["tally"]}
    old = rows["unit"]
    # A move changes where units are: their nation's totals change only if one is gone, new,
    # or of another type or nation than it was.
    if any(uid not in old or uid not in units or old[uid][:2] != units[uid][:2] for uid in named):
        _with_tally(agg, new)
    return new, named


def _write_history(
    batch: Batch,
    f: _Followed,
    new_rows: dict[str, dict[Any, tuple[Any, ...]]],
    seq: int,
    checkpoint: bool,
    named: list[Any] | None = None,
) -> None:
    """Close the history rows that changed at event `seq` and open their new values (only the
    `named` units' rows can have changed, when given); at a checkpoint, re-open every row that
    began before it (see the module docstring)."""
    for name in HISTORIES:
        old, new = f.rows[name], new_rows[name]
        since = f.since[name]
        keys = dict.fromkeys(named) if named is not None and name == "unit" else None
        if old is not new and (keys is not None or old != new):
            # Key by key: a change touches a few of the board's rows, and comparing each row
            # with its own costs less than hashing every row into sets.
            before = old.items() if keys is None else [(k, old[k]) for k in keys if k in old]
            after = new.items() if keys is None else [(k, new[k]) for k in keys if k in new]
            for k, value in before:
                if new.get(k) != value:
                    batch.close(name, k, since.pop(k), seq)
            for k, value in after:
                if old.get(k) != value:
                    batch.open(name, k, value, seq)
                    since[k] = seq
        if checkpoint:
            batch.reopen(name, since, new, seq)


def _campaign_rows(conn: Connection, cids: Iterable[UUID]) -> dict[str, Any]:
    keys = [str(c) for c in cids]
    if not keys:
        return {}
    rows = conn.execute(select(campaigns).where(campaigns.c.campaign_id.in_(keys)))
    return {r.campaign_id: r for r in rows}


def _ensure_campaign(conn: Connection, cid: UUID) -> int:
    key = conn.execute(select(campaigns.c.key).where(campaigns.c.campaign_id == str(cid))).scalar()
    if key is None:
        key = conn.execute(
            insert(campaigns).values(campaign_id=str(cid), last_seq=0, last_hash="").returning(campaigns.c.key)
        ).scalar_one()
    return int(key)
