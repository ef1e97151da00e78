"""Read models of the board, kept from the application's notification log.

One projector follows the log of every campaign in the database and writes, in the same
transaction as its tracking position:

- an event index (turn, phase, nation, zones, kind, battle, rule, one-line summary, undo marks);
- the history of units, NTR and nations (balance, losses, technology) as rows valid from one
  event to another, so the board after any event is one indexed query, not a replay;
- the span of events of every phase of every national turn, to find "the end of turn N".

Every read catches up first, so nobody sees a stale board.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from sqlalchemy import (
    Boolean,
    Column,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    and_,
    bindparam,
    delete,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine

from projections.summary import rule_of, summary

NAME = "board"
BATCH = 500
REBUILD_BATCH = 5000

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
    }
)

metadata = MetaData()
tracking = Table(
    "tracker_projection_tracking",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("notification_id", Integer, nullable=False),
)
event_index = Table(
    "tracker_event_index",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("notification_id", Integer, nullable=False),
    Column("turn", Integer, nullable=False),
    Column("round", Integer, nullable=False),
    Column("nation", String(100), nullable=False),
    Column("phase", String(40), nullable=False),
    Column("actor", String(100)),
    Column("kind", String(40), nullable=False),
    Column("rule", String(10)),
    Column("battle", Integer),
    Column("zones", Text, nullable=False),  # "|zone|zone|" for LIKE filters
    Column("nations", Text, nullable=False),  # "|nation|nation|"
    Column("summary", Text, nullable=False),
    Column("dice", Boolean, nullable=False),
    Column("undone_by", Integer),
    Index("tracker_event_index_turn", "campaign_id", "turn", "seq"),
)
unit_history = Table(
    "tracker_unit_history",
    metadata,
    Column("campaign_id", String(36), nullable=False),
    Column("unit_id", String(40), nullable=False),
    Column("type", String(40), nullable=False),
    Column("nation", String(100), nullable=False),
    Column("zone", String(100), nullable=False),
    Column("damage", Integer, nullable=False),
    Column("from_seq", Integer, nullable=False),
    Column("to_seq", Integer),
    Index("tracker_unit_history_at", "campaign_id", "from_seq"),
    Index("tracker_unit_history_open", "campaign_id", "unit_id", "to_seq"),
)
ntr_history = Table(
    "tracker_ntr_history",
    metadata,
    Column("campaign_id", String(36), nullable=False),
    Column("nation", String(100), nullable=False),
    Column("zone", String(100), nullable=False),
    Column("count", Integer, nullable=False),
    Column("from_seq", Integer, nullable=False),
    Column("to_seq", Integer),
    Index("tracker_ntr_history_at", "campaign_id", "from_seq"),
)
nation_history = Table(
    "tracker_nation_history",
    metadata,
    Column("campaign_id", String(36), nullable=False),
    Column("nation", String(100), nullable=False),
    Column("balance", Integer, nullable=False),
    Column("ntr_lost", Integer, nullable=False),
    Column("tech", Text, nullable=False),  # JSON {technology: level}
    Column("from_seq", Integer, nullable=False),
    Column("to_seq", Integer),
    Index("tracker_nation_history_at", "campaign_id", "from_seq"),
)
phase_index = Table(
    "tracker_phase_index",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("turn", Integer, primary_key=True),
    Column("phase", String(40), primary_key=True),
    Column("round", Integer, nullable=False),
    Column("nation", String(100), nullable=False),
    Column("first_seq", Integer, nullable=False),
    Column("last_seq", Integer, nullable=False),
)
stopped = Table(
    "tracker_projection_stopped",
    metadata,
    Column("campaign_id", String(36), primary_key=True),
    Column("seq", Integer, nullable=False),
    Column("problem", Text, nullable=False),
)
VIEWS = (event_index, unit_history, ntr_history, nation_history, phase_index, stopped)
HISTORIES = {"unit": unit_history, "ntr": ntr_history, "nation": nation_history}


def turn_number(turn_order: list[str] | tuple[str, ...], round_: int, nation: str) -> int:
    """National turns counted from 1 across the campaign (T1): round 1's first nation is turn 1."""
    return (round_ - 1) * len(turn_order) + turn_order.index(nation) + 1


def _rows_of(agg: Any) -> dict[str, dict[Any, tuple[Any, ...]]]:
    """The board as comparable rows: what changed between two events is a set difference."""
    units = {uid: (u["type"], u["nation"], u["at"], u["damage"]) for uid, u in agg.units.items()}
    ntr = {(n, z): (c,) for n, zones in agg.ntr.items() for z, c in zones.items()}
    nations = {
        n: (agg.balances[n], agg.ntr_lost.get(n, 0), tuple(sorted(agg.tech[n].items()))) for n in agg.balances
    }
    return {"unit": units, "ntr": ntr, "nation": nations}


def _event_zones_and_nations(event: Any) -> tuple[set[str], set[str]]:
    zones: set[str] = set()
    nations: set[str] = set()
    data = vars(event)
    for key in ("zone",):
        if isinstance(data.get(key), str):
            zones.add(data[key])
    for key in ("path", "hostile_passed"):
        if isinstance(data.get(key), list):
            zones.update(data[key])
    for key in ("nation", "attacker", "defender", "roller"):
        if isinstance(data.get(key), str):
            nations.add(data[key])
    return zones, nations


@dataclass
class _Followed:
    """A campaign the projector is following: its state after the last projected event."""

    agg: Any
    rows: dict[str, dict[Any, tuple[Any, ...]]]
    turn_order: list[str]
    phase_key: tuple[int, str] | None = None
    battle_zone: dict[int, str] = field(default_factory=dict)


class BoardProjector:
    """Follows the notification log and keeps the board views up to date."""

    def __init__(
        self,
        engine: Engine,
        select_notifications: Callable[[int, int], list[Any]],
        decode: Callable[[Any], Any],
        load_version: Callable[[UUID, int], Any],
    ) -> None:
        self.engine = engine
        self.select_notifications = select_notifications
        self.decode = decode
        self.load_version = load_version
        self.followed: dict[UUID, _Followed] = {}
        self.position: int | None = None
        metadata.create_all(engine, checkfirst=True)

    # ----- catching up -----

    def catch_up(
        self,
        progress: Callable[[int], None] | None = None,
        batch_size: int = BATCH,
        last_id: Callable[[], int] | None = None,
    ) -> int:
        """Project every notification not yet projected; returns how many were processed."""
        if last_id is not None and self._position_now() >= last_id():
            # Up to date: a read takes no write lock.
            return 0
        done = 0
        while True:
            with self.engine.begin() as conn:
                start = self._lock_position(conn)
                if start != self.position:
                    # Someone else projected meanwhile: our in-memory states are not theirs.
                    self.followed.clear()
                notifications = self.select_notifications(start + 1, batch_size)
                if not notifications:
                    self.position = start
                    return done
                batch = _Batch(conn)
                for n in notifications:
                    self._project(batch, n)
                batch.flush()
                last = notifications[-1].id
                conn.execute(update(tracking).where(tracking.c.name == NAME).values(notification_id=last))
            self.position = last
            done += len(notifications)
            if progress is not None:
                progress(len(notifications))

    def _position_now(self) -> int:
        with self.engine.connect() as conn:
            value = conn.execute(select(tracking.c.notification_id).where(tracking.c.name == NAME)).scalar()
        return int(value or 0)

    def _lock_position(self, conn: Connection) -> int:
        # The first statement writes, so SQLite takes its write lock and PostgreSQL locks the
        # row: two processes catching up at once take turns instead of projecting twice.
        result = conn.execute(update(tracking).where(tracking.c.name == NAME).values(name=NAME))
        if result.rowcount == 0:
            conn.execute(insert(tracking).values(name=NAME, notification_id=0))
        return int(
            conn.execute(select(tracking.c.notification_id).where(tracking.c.name == NAME)).scalar_one()
        )

    def rebuild(self, progress: Callable[[int], None] | None = None) -> int:
        """Drop and rebuild every view from the start of the log."""
        with self.engine.begin() as conn:
            for table in VIEWS:
                conn.execute(delete(table))
            conn.execute(delete(tracking).where(tracking.c.name == NAME))
        self.followed.clear()
        self.position = None
        return self.catch_up(progress, batch_size=REBUILD_BATCH)

    # ----- one event -----

    def _follow(self, cid: UUID, version: int) -> _Followed:
        f = self.followed.get(cid)
        if f is not None and f.agg.version == version - 1:
            return f
        agg = None if version == 1 else self.load_version(cid, version - 1)
        rows = _rows_of(agg) if agg is not None else {"unit": {}, "ntr": {}, "nation": {}}
        turn_order = list(agg.scenario.turn_order) if agg is not None else []
        f = _Followed(agg, rows, turn_order)
        if agg is not None:
            f.phase_key = (turn_number(turn_order, agg.round, agg.nation), agg.phase)
            f.battle_zone = {b["id"]: b["zone"] for b in agg.battles.values()}
        self.followed[cid] = f
        return f

    def _project(self, batch: _Batch, notification: Any) -> None:
        cid = notification.originator_id
        seq = notification.originator_version
        key = str(cid)
        if key in batch.stopped:
            return
        try:
            event = self.decode(notification)
            f = self._follow(cid, seq)
            agg = event.mutate(f.agg)
        except Exception as e:  # noqa: BLE001 - an unreadable event must not stop other campaigns
            # A stored event that cannot be read or applied (an edited row, say) stops this
            # campaign's projections at that event; `tracker verify` tells the rest.
            self.followed.pop(cid, None)
            problem = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            batch.stop(key, seq, problem[:500])
            return
        f.agg = agg
        if not f.turn_order:
            f.turn_order = list(agg.scenario.turn_order)
        turn = turn_number(f.turn_order, agg.round, agg.nation)
        kind = type(event).__name__
        zones, nations = _event_zones_and_nations(event)
        battle = getattr(event, "battle", None)
        if kind in ("ConvoyAttackDeclared", "InterceptionStarted", "AswCombatStarted", "NavalBattleStarted"):
            f.battle_zone[event.battle] = event.zone
        if battle is not None and battle in f.battle_zone:
            zones.add(f.battle_zone[battle])
        unit = getattr(event, "unit", None)
        if isinstance(unit, str):
            u = agg.units.get(unit) or f.rows["unit"].get(unit)
            if isinstance(u, dict):
                nations.add(u["nation"])
            elif isinstance(u, tuple):
                nations.add(u[1])
        actor = next(
            (
                getattr(event, k)
                for k in ("nation", "roller", "attacker")
                if isinstance(getattr(event, k, None), str)
            ),
            None,
        )
        batch.index(
            {
                "campaign_id": key,
                "seq": seq,
                "notification_id": notification.id,
                "turn": turn,
                "round": agg.round,
                "nation": agg.nation,
                "phase": agg.phase,
                "actor": actor,
                "kind": kind,
                "rule": rule_of(event) or None,
                "battle": battle,
                "zones": "|" + "|".join(sorted(zones)) + "|" if zones else "",
                "nations": "|" + "|".join(sorted(nations)) + "|" if nations else "",
                "summary": summary(event),
                "dice": kind == "DiceRolled",
                "undone_by": None,
            }
        )
        if kind == "ActionUndone":
            batch.mark_undone(key, event.undone_from, event.undone_to, seq)
            # Phases entered by the undone events were never played, as far as turn lookups go.
            batch.drop_phases(key, event.undone_from)
        new_rows = f.rows if kind in _BOARD_UNCHANGED else _rows_of(agg)
        for name in HISTORIES:
            old, new = f.rows[name], new_rows[name]
            if old == new:
                continue
            for k in old:
                if old[k] != new.get(k):
                    batch.close(name, key, k, seq)
            for k in new:
                if old.get(k) != new[k]:
                    batch.open(name, key, k, _history_row(name, key, k, new[k], seq))
        f.rows = new_rows
        phase_key = (turn, agg.phase)
        if phase_key != f.phase_key:
            # A phase entered again after an undo starts a fresh span.
            f.phase_key = phase_key
            batch.phase(key, turn, agg.phase, agg.round, agg.nation, seq, new_span=True)
        else:
            batch.phase(key, turn, agg.phase, agg.round, agg.nation, seq, new_span=False)


def _history_row(name: str, key: str, k: Any, value: tuple[Any, ...], seq: int) -> dict[str, Any]:
    if name == "unit":
        t, nation, zone, damage = value
        return {
            "campaign_id": key,
            "unit_id": k,
            "type": t,
            "nation": nation,
            "zone": zone,
            "damage": damage,
            "from_seq": seq,
            "to_seq": None,
        }
    if name == "ntr":
        return {
            "campaign_id": key,
            "nation": k[0],
            "zone": k[1],
            "count": value[0],
            "from_seq": seq,
            "to_seq": None,
        }
    balance, lost, tech = value
    return {
        "campaign_id": key,
        "nation": k,
        "balance": balance,
        "ntr_lost": lost,
        "tech": json.dumps(dict(tech), sort_keys=True),
        "from_seq": seq,
        "to_seq": None,
    }


class _Batch:
    """The writes of one page of notifications, made with a few executemany statements.

    Rows opened and closed within the page are settled in memory; only rows opened by an
    earlier page are closed with UPDATE, before this page's rows are inserted.
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.stopped = {row[0] for row in conn.execute(select(stopped.c.campaign_id))}
        self.index_rows: list[dict[str, Any]] = []
        self.index_by_seq: dict[tuple[str, int], dict[str, Any]] = {}
        self.undone: list[dict[str, Any]] = []
        self.new_rows: dict[str, list[dict[str, Any]]] = {name: [] for name in HISTORIES}
        self.open_here: dict[tuple[str, str, Any], dict[str, Any]] = {}
        self.closes: dict[str, list[dict[str, Any]]] = {name: [] for name in HISTORIES}
        self.phases: dict[tuple[str, int, str], dict[str, Any]] = {}
        self.phase_drops: list[dict[str, Any]] = []
        self.stops: list[dict[str, Any]] = []

    def stop(self, key: str, seq: int, problem: str) -> None:
        self.stopped.add(key)
        self.stops.append({"campaign_id": key, "seq": seq, "problem": problem})

    def index(self, row: dict[str, Any]) -> None:
        self.index_rows.append(row)
        self.index_by_seq[(row["campaign_id"], row["seq"])] = row

    def mark_undone(self, key: str, first: int, last: int, by: int) -> None:
        for seq in range(first, last + 1):
            row = self.index_by_seq.get((key, seq))
            if row is not None and row["undone_by"] is None:
                row["undone_by"] = by
        self.undone.append({"k": key, "first": first, "last": last, "by": by})

    def open(self, name: str, key: str, k: Any, row: dict[str, Any]) -> None:
        self.new_rows[name].append(row)
        self.open_here[(name, key, k)] = row

    def close(self, name: str, key: str, k: Any, seq: int) -> None:
        row = self.open_here.pop((name, key, k), None)
        if row is not None:
            row["to_seq"] = seq
            return
        params: dict[str, Any] = {"k": key, "to": seq}
        if name == "unit":
            params["b_unit"] = k
        elif name == "ntr":
            params["b_nation"], params["b_zone"] = k
        else:
            params["b_nation"] = k
        self.closes[name].append(params)

    def drop_phases(self, key: str, first: int) -> None:
        for span_key, span in list(self.phases.items()):
            if span_key[0] == key and (span["first_seq"] is None or span["first_seq"] >= first):
                del self.phases[span_key]
        self.phase_drops.append({"k": key, "first": first})

    def phase(
        self, key: str, turn: int, phase: str, round_: int, nation: str, seq: int, new_span: bool
    ) -> None:
        span = self.phases.get((key, turn, phase))
        if new_span or span is None:
            first = seq if new_span else None
            self.phases[(key, turn, phase)] = {
                "campaign_id": key,
                "turn": turn,
                "phase": phase,
                "round": round_,
                "nation": nation,
                "first_seq": first,
                "last_seq": seq,
            }
        else:
            span["last_seq"] = seq

    def flush(self) -> None:
        conn = self.conn
        if self.undone:
            conn.execute(
                update(event_index)
                .where(
                    event_index.c.campaign_id == bindparam("k"),
                    event_index.c.seq >= bindparam("first"),
                    event_index.c.seq <= bindparam("last"),
                    event_index.c.undone_by.is_(None),
                )
                .values(undone_by=bindparam("by")),
                self.undone,
            )
        if self.index_rows:
            conn.execute(insert(event_index), self.index_rows)
        for name, table in HISTORIES.items():
            if self.closes[name]:
                match = [table.c.campaign_id == bindparam("k"), table.c.to_seq.is_(None)]
                if name == "unit":
                    match.append(table.c.unit_id == bindparam("b_unit"))
                else:
                    match.append(table.c.nation == bindparam("b_nation"))
                    if name == "ntr":
                        match.append(table.c.zone == bindparam("b_zone"))
                conn.execute(update(table).where(*match).values(to_seq=bindparam("to")), self.closes[name])
            if self.new_rows[name]:
                conn.execute(insert(table), self.new_rows[name])
        self._flush_phases()
        if self.stops:
            conn.execute(insert(stopped), self.stops)

    def _flush_phases(self) -> None:
        conn = self.conn
        if self.phase_drops:
            conn.execute(
                delete(phase_index).where(
                    phase_index.c.campaign_id == bindparam("k"), phase_index.c.first_seq >= bindparam("first")
                ),
                self.phase_drops,
            )
        if not self.phases:
            return
        keep_first = [span for span in self.phases.values() if span["first_seq"] is None]
        if keep_first:
            # Spans that began in an earlier page keep their first event.
            existing = {
                (r.campaign_id, r.turn, r.phase): r.first_seq
                for r in conn.execute(
                    select(
                        phase_index.c.campaign_id,
                        phase_index.c.turn,
                        phase_index.c.phase,
                        phase_index.c.first_seq,
                    )
                    .where(phase_index.c.campaign_id.in_({s["campaign_id"] for s in keep_first}))
                    .where(phase_index.c.turn.in_({s["turn"] for s in keep_first}))
                )
            }
            for span in keep_first:
                span["first_seq"] = existing.get(
                    (span["campaign_id"], span["turn"], span["phase"]), span["last_seq"]
                )
        conn.execute(
            delete(phase_index).where(
                phase_index.c.campaign_id == bindparam("k"),
                phase_index.c.turn == bindparam("t"),
                phase_index.c.phase == bindparam("p"),
            ),
            [{"k": s["campaign_id"], "t": s["turn"], "p": s["phase"]} for s in self.phases.values()],
        )
        conn.execute(insert(phase_index), list(self.phases.values()))


def _valid_at(table: Table, key: str, seq: int) -> Any:
    return and_(
        table.c.campaign_id == key,
        table.c.from_seq <= seq,
        or_(table.c.to_seq.is_(None), table.c.to_seq > seq),
    )


def stopped_at(conn: Connection, cid: UUID) -> tuple[int, str] | None:
    """Where and why this campaign's projections stopped, if they did."""
    row = conn.execute(
        select(stopped.c.seq, stopped.c.problem).where(stopped.c.campaign_id == str(cid))
    ).first()
    return None if row is None else (row.seq, row.problem)


def board_at(conn: Connection, cid: UUID, seq: int) -> dict[str, Any]:
    """The board after event `seq`, from the views alone."""
    key = str(cid)
    position = conn.execute(
        select(event_index.c.turn, event_index.c.round, event_index.c.nation, event_index.c.phase).where(
            event_index.c.campaign_id == key, event_index.c.seq == seq
        )
    ).one_or_none()
    if position is None:
        raise LookupError(seq)
    units = conn.execute(
        select(
            unit_history.c.unit_id,
            unit_history.c.type,
            unit_history.c.nation,
            unit_history.c.zone,
            unit_history.c.damage,
        )
        .where(_valid_at(unit_history, key, seq))
        .order_by(unit_history.c.unit_id)
    ).all()
    ntr_rows = conn.execute(
        select(ntr_history.c.nation, ntr_history.c.zone, ntr_history.c.count).where(
            _valid_at(ntr_history, key, seq)
        )
    ).all()
    nation_rows = conn.execute(
        select(
            nation_history.c.nation,
            nation_history.c.balance,
            nation_history.c.ntr_lost,
            nation_history.c.tech,
        ).where(_valid_at(nation_history, key, seq))
    ).all()
    ntr: dict[str, dict[str, int]] = {}
    for nation, zone, count in ntr_rows:
        if count:
            ntr.setdefault(nation, {})[zone] = count
    return {
        "seq": seq,
        "turn": position.turn,
        "round": position.round,
        "nation": position.nation,
        "phase": position.phase,
        "units": [
            {"id": u.unit_id, "type": u.type, "nation": u.nation, "at": u.zone, "damage": u.damage}
            for u in units
        ],
        "ntr": {n: dict(sorted(z.items())) for n, z in sorted(ntr.items())},
        "balances": {r.nation: r.balance for r in sorted(nation_rows)},
        "ntr_lost": {r.nation: r.ntr_lost for r in sorted(nation_rows)},
        "tech": {r.nation: json.loads(r.tech) for r in sorted(nation_rows)},
    }


def seq_at_end_of(conn: Connection, cid: UUID, turn: int, phase: str | None) -> int | None:
    """The last event of a national turn, or of one of its phases."""
    query = select(phase_index.c.last_seq).where(
        phase_index.c.campaign_id == str(cid), phase_index.c.turn == turn
    )
    if phase is not None:
        query = query.where(phase_index.c.phase == phase)
    seqs = [row[0] for row in conn.execute(query)]
    return max(seqs) if seqs else None


def index_rows(conn: Connection, cid: UUID, filters: Iterable[Any] = ()) -> list[Any]:
    query = (
        select(event_index).where(event_index.c.campaign_id == str(cid), *filters).order_by(event_index.c.seq)
    )
    return list(conn.execute(query))


def dump(conn: Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every view row, sorted, for comparing a rebuild with the incremental result."""
    out = {}
    for table in VIEWS:
        rows = [tuple(r) for r in conn.execute(select(table))]
        out[table.name] = sorted(rows, key=repr)
    return out
