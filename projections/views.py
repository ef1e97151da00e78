"""Reading the board's read models (see `projections.board` and `projections.schema`): the board at any event, the
events of a turn, the last event of a turn or phase, the history of units, NTR and nations,
each answered from the history tables' rows valid at that point, without replaying events."""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypedDict
from uuid import UUID

from sqlalchemy import Table, and_, func, or_, select, text
from sqlalchemy.engine import Connection

from projections.board import ASKED, checkpoint_before
from projections.schema import (
    HISTORIES,
    VIEWS,
    campaigns,
    event_index,
    nation_history,
    ntr_history,
    tally_history,
    unit_history,
)


class UnitOnBoard(TypedDict):
    """One unit as a board lists it: where it is (`at`, a zone) and its damage (0 or more)."""

    id: str
    type: str
    nation: str
    at: str
    damage: int


class _BoardViewFields(TypedDict):
    seq: int
    turn: int
    round: int
    nation: str  # the nation whose turn it is
    phase: str
    units: list[UnitOnBoard]  # sorted by id
    ntr: dict[str, dict[str, int]]  # nation -> zone -> NTR there (zones with none left out)
    balances: dict[str, int]
    ntr_lost: dict[str, int]
    tech: dict[str, dict[str, int]]  # nation -> technology -> level


# A base class with total=False rather than NotRequired: the annotations are strings here, and
# TypedDict on Python 3.11 reads NotRequired in a string as required.
class BoardView(_BoardViewFields, total=False):
    """The board after an event (`Views.board_at`); the service adds who owns each territory."""

    owners: dict[str, str]  # territory -> owning nation (AD1)
    neutral: list[str]  # the nations not at war yet, in turn order (F8)


def campaign_key(conn: Connection, cid: UUID) -> int | None:
    value = conn.execute(select(campaigns.c.key).where(campaigns.c.campaign_id == str(cid))).scalar()
    return None if value is None else int(value)


def stopped_at(conn: Connection, cid: UUID) -> tuple[int, str] | None:
    """Where and why this campaign's projections stopped, if they did."""
    row = conn.execute(
        select(campaigns.c.stopped_seq, campaigns.c.problem).where(
            campaigns.c.campaign_id == str(cid), campaigns.c.stopped_seq.is_not(None)
        )
    ).first()
    return None if row is None else (row.stopped_seq, row.problem)


def _valid_at(table: Table, key: int, seq: int) -> Any:
    return and_(
        table.c.c == key,
        table.c.from_seq >= checkpoint_before(seq),
        table.c.from_seq <= seq,
        or_(table.c.to_seq.is_(None), table.c.to_seq > seq),
    )


class Views:
    """Reads of one campaign's views on one connection (the caller caught up first)."""

    def __init__(self, conn: Connection, cid: UUID) -> None:
        self.conn = conn
        self.cid = cid
        key = campaign_key(conn, cid)
        self.key = -1 if key is None else key

    def position(self, seq: int) -> Any:
        return self.conn.execute(
            select(event_index.c.turn, event_index.c.round, event_index.c.nation, event_index.c.phase).where(
                event_index.c.c == self.key, event_index.c.seq == seq
            )
        ).one_or_none()

    def board_at(self, seq: int) -> BoardView:
        """The board after event `seq` (LookupError when there is no such event)."""
        conn, key = self.conn, self.key
        position = self.position(seq)
        if position is None:
            raise LookupError(seq)
        units = conn.execute(select(*_UNIT_COLUMNS).where(_valid_at(unit_history, key, seq))).all()
        ntr_rows = conn.execute(select(*_NTR_COLUMNS).where(_valid_at(ntr_history, key, seq))).all()
        nation_rows = conn.execute(select(*_NATION_COLUMNS).where(_valid_at(nation_history, key, seq))).all()
        return _board(seq, position, units, ntr_rows, nation_rows)

    def boards_at(self, seqs: Iterable[int]) -> dict[int, BoardView]:
        """The boards after each of these events, as `board_at` gives them, in one ranged query
        per history table (each point's rows valid at it, joined to the list of points), so
        many points cost a few queries, not a few each (LookupError for an unknown event)."""
        wanted = sorted(set(seqs))
        if not wanted:
            return {}
        conn, e = self.conn, event_index.c
        positions = {
            int(r.seq): r
            for r in conn.execute(
                select(e.seq, e.turn, e.round, e.nation, e.phase).where(e.c == self.key, e.seq.in_(wanted))
            )
        }
        for seq in wanted:
            if seq not in positions:
                raise LookupError(seq)
        found = self._valid_at_points(
            wanted,
            {
                "unit": (unit_history, _names(_UNIT_COLUMNS), None),
                "ntr": (ntr_history, _names(_NTR_COLUMNS), None),
                "nation": (nation_history, _names(_NATION_COLUMNS), None),
            },
        )
        return {
            seq: _board(seq, positions[seq], found["unit"][seq], found["ntr"][seq], found["nation"][seq])
            for seq in wanted
        }

    def tallies_at(self, seqs: Iterable[int]) -> dict[int, dict[str, list[tuple[Any, ...]]]]:
        """What a nation's figures are made of after each of these events, counted in the
        database rather than unit by unit: {"units": [(nation, type, damaged 0/1, count)],
        "ntr": [(nation, zone, count)], "nation": [(nation, balance, ntr_lost, tech)]}."""
        wanted = sorted(set(seqs))
        damaged = "CASE WHEN h.damage > 0 THEN 1 ELSE 0 END"
        tallies: dict[int, dict[str, list[tuple[Any, ...]]]] = self._valid_at_points(
            wanted,
            {
                "units": (unit_history, f"h.nation, h.type, {damaged}, count(*)", f"h.nation, h.type, {damaged}"),
                "ntr": (ntr_history, _names(_NTR_COLUMNS), None),
                "nation": (nation_history, _names(_NATION_COLUMNS), None),
            },
            by_point=True,
        )
        return tallies

    def sums_at(self, seqs: Iterable[int]) -> dict[int, dict[str, dict[str, Any]]]:
        """Each nation's totals after each of these events (what a chart of many points draws,
        a row per nation and point): {"units": {nation: (units, their total cost by the
        ruleset)}, "ntr": {nation: NTR at sea}, "balance": {nation: balance}}. One statement over
        the per-nation histories, whatever the number of points or the log's length."""
        wanted = sorted({int(seq) for seq in seqs})
        if not wanted:
            return {}
        # The points written out (numbers only): the statement stays cheap to compile however
        # many points there are. Both histories in one statement, a nation's row told from a
        # tally's by its missing unit count.
        points = ", ".join(f"({checkpoint_before(seq):d}, {seq:d})" for seq in wanted)
        valid = (
            " SELECT points.hi, h.nation, {columns} FROM points"
            f" JOIN {{table}} h ON h.c = {self.key:d} AND h.from_seq >= points.lo AND h.from_seq <= points.hi"
            " AND (h.to_seq IS NULL OR h.to_seq > points.hi)"
        )
        query = (
            f"WITH points (lo, hi) AS (VALUES {points})"
            + valid.format(columns="h.units, h.fleet_cost, h.ntr_at_sea", table=tally_history.name)
            + " UNION ALL"
            + valid.format(columns="NULL, NULL, h.balance", table=nation_history.name)
        )
        out: dict[int, dict[str, dict[str, Any]]] = {seq: {"units": {}, "ntr": {}, "balance": {}} for seq in wanted}
        for seq, nation, units, cost, value in self._driver_rows(query):
            at = out[seq]
            if units is None:
                at["balance"][nation] = value
            else:
                at["units"][nation] = (units, cost)
                at["ntr"][nation] = value
        return out

    def _valid_at_points(
        self, wanted: list[int], reads: dict[str, tuple[Table, str, str | None]], by_point: bool = False
    ) -> Any:
        """For each read {name: (history table, columns of its rows `h`, GROUP BY or None)}, its
        rows valid after each wanted event, by event: one ranged query a table, the points
        joined as a table of (checkpoint before, event). By name then event, or with
        `by_point` by event then name."""
        if not wanted:
            return {}
        # The points written out as SQL text: a statement built of many literal rows costs
        # more to compile than to run.
        rows_sql = ", ".join(f"(CAST(:lo{i} AS INTEGER), CAST(:hi{i} AS INTEGER))" for i in range(len(wanted)))
        params: dict[str, int] = {"key": self.key}
        for i, seq in enumerate(wanted):
            params[f"lo{i}"], params[f"hi{i}"] = checkpoint_before(seq), seq
        found: dict[str, dict[int, list[tuple[Any, ...]]]] = {}
        for name, (table, columns, group) in reads.items():
            query = (
                f"WITH points (lo, hi) AS (VALUES {rows_sql}) "
                f"SELECT points.hi, {columns} FROM points JOIN {table.name} h"
                " ON h.c = :key AND h.from_seq >= points.lo AND h.from_seq <= points.hi"
                " AND (h.to_seq IS NULL OR h.to_seq > points.hi)"
            )
            if group is not None:
                query += f" GROUP BY points.hi, {group}"
            rows = found[name] = {seq: [] for seq in wanted}
            for row in self.conn.execute(text(query), params):
                rows[row[0]].append(tuple(row)[1:])
        if by_point:
            return {seq: {name: found[name][seq] for name in reads} for seq in wanted}
        return found

    def seq_at_end_of(self, turn: int, phase: str | None = None) -> int | None:
        """The last event of a national turn, or of one of its phases, that was not undone:
        phases entered only by undone events were never played, as far as turn lookups go."""
        # What was asked (RK1) plays no phase by itself: an undo is asked in the phase it undoes.
        query = select(func.max(event_index.c.seq)).where(
            event_index.c.c == self.key,
            event_index.c.turn == turn,
            event_index.c.undone_by.is_(None),
            event_index.c.kind != ASKED,
        )
        if phase is not None:
            query = query.where(event_index.c.phase == phase)
        value = self.conn.execute(query).scalar()
        return None if value is None else int(value)

    def turn_ends(self, upto: int, only: list[int] | None = None) -> dict[int, tuple[int, int, str, str]]:
        """The last event not undone of every played national turn up to `upto` (or of the
        turns in `only`), by turn: (seq, round, nation, phase)."""
        if only is not None:
            return self._turn_ends_of(upto, only)
        ends = select(event_index.c.turn, func.max(event_index.c.seq).label("last")).where(
            event_index.c.c == self.key,
            event_index.c.undone_by.is_(None),
            event_index.c.turn <= upto,
            event_index.c.kind != ASKED,
        )
        if only is not None:
            ends = ends.where(event_index.c.turn.in_(only))
        sub = ends.group_by(event_index.c.turn).subquery()
        e = event_index.c
        query = select(e.turn, e.seq, e.round, e.nation, e.phase).join(sub, and_(e.c == self.key, e.seq == sub.c.last))
        return {int(r.turn): (int(r.seq), int(r.round), r.nation, r.phase) for r in self.conn.execute(query)}

    def _turn_ends_of(self, upto: int, only: list[int]) -> dict[int, tuple[int, int, str, str]]:
        """`turn_ends` of a few turns: each turn's last event read backwards through the turn
        index (a row or two a turn, where grouping the turns reads every event of each)."""
        turns = sorted({int(k) for k in only if k <= upto})
        if not turns:
            return {}
        key = int(self.key)
        # Numbers and the kind written out: the statement is cheap to compile for any turns.
        query = (
            f"WITH wanted (turn) AS (VALUES {', '.join(f'({k:d})' for k in turns)})"
            " SELECT e.turn, e.seq, e.round, e.nation, e.phase FROM wanted"
            f" JOIN {event_index.name} e ON e.c = {key:d} AND e.seq = ("
            f"SELECT x.seq FROM {event_index.name} x WHERE x.c = {key:d} AND x.turn = wanted.turn"
            f" AND x.undone_by IS NULL AND x.kind != '{ASKED}' ORDER BY x.seq DESC LIMIT 1)"
        )
        return {int(r[0]): (int(r[1]), int(r[2]), r[3], r[4]) for r in self.conn.exec_driver_sql(query).all()}

    def latest_turn_ends(self, upto: int, turns: list[int], span: int) -> dict[int, tuple[int, int, str, str]]:
        """For each of these turns, the last played national turn among it and the `span` - 1
        before it (none before turn 1 or after `upto`), with its end as `turn_ends` gives it, by that played turn:
        one statement, each turn's answer read backwards through the turn index from it."""
        asked = sorted({int(k) for k in turns if k <= upto})
        if not asked:
            return {}
        key = int(self.key)
        # As `_turn_ends_of`, a turn passed over (no events, F8) left for the one before it.
        query = (
            f"WITH wanted (turn) AS (VALUES {', '.join(f'({k:d})' for k in asked)})"
            " SELECT e.turn, e.seq, e.round, e.nation, e.phase FROM wanted"
            f" JOIN {event_index.name} e ON e.c = {key:d} AND e.seq = ("
            f"SELECT x.seq FROM {event_index.name} x WHERE x.c = {key:d} AND x.turn <= wanted.turn"
            f" AND x.turn > wanted.turn - {int(span):d} AND x.turn >= 1 AND x.undone_by IS NULL"
            f" AND x.kind != '{ASKED}'"
            " ORDER BY x.turn DESC, x.seq DESC LIMIT 1)"
        )
        return {int(r[0]): (int(r[1]), int(r[2]), r[3], r[4]) for r in self._driver_rows(query)}

    def _driver_rows(self, query: str) -> list[tuple[Any, ...]]:
        """The rows of a statement written out whole, read through the driver: for a read of
        many rows, SQLAlchemy's rows cost about as much again as the statement."""
        cursor = self.conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(query)
            return list(cursor.fetchall())
        finally:
            cursor.close()

    def index_rows(self, filters: Iterable[Any] = (), tail: int | None = None) -> list[Any]:
        """Index rows matching `filters`, oldest first; with `tail`, only the last that many,
        read from the end rather than the whole log."""
        query = select(event_index).where(event_index.c.c == self.key, *filters)
        if tail is None:
            return list(self.conn.execute(query.order_by(event_index.c.seq)))
        return list(self.conn.execute(query.order_by(event_index.c.seq.desc()).limit(tail)))[::-1]

    def history(self, upto: int) -> Iterator[tuple[str, Any]]:
        """Every history row that began at or before event `upto`, ordered by its first event,
        tagged with its kind ('unit', 'ntr', 'nation'): one pass builds a whole series."""
        cursors = []
        for name, table in HISTORIES.items():
            if name == "tally":
                continue  # the sums of the other rows: a walk through them makes its own
            query = select(table).where(table.c.c == self.key, table.c.from_seq <= upto).order_by(table.c.from_seq)
            cursors.append((name, list(self.conn.execute(query))))

        def tagged(name: str, rows: list[Any]) -> Iterator[tuple[str, Any]]:
            for r in rows:
                yield name, r

        yield from heapq.merge(*[tagged(name, rows) for name, rows in cursors], key=lambda item: item[1].from_seq)


_UNIT_COLUMNS = (
    unit_history.c.unit_id,
    unit_history.c.type,
    unit_history.c.nation,
    unit_history.c.zone,
    unit_history.c.damage,
)
_NTR_COLUMNS = (ntr_history.c.nation, ntr_history.c.zone, ntr_history.c.count)
_NATION_COLUMNS = (nation_history.c.nation, nation_history.c.balance, nation_history.c.ntr_lost, nation_history.c.tech)


def _names(columns: tuple[Any, ...]) -> str:
    return ", ".join(f"h.{c.name}" for c in columns)


def _board(
    seq: int, position: Any, units: Sequence[Any], ntr_rows: Sequence[Any], nation_rows: Sequence[Any]
) -> BoardView:
    """The board of `board_at` from the rows valid after event `seq`: units (id, type,
    nation, zone, damage), NTR (nation, zone, count), nations (nation, balance, ntr_lost, tech)."""
    ntr: dict[str, dict[str, int]] = {}
    for nation, zone, count in ntr_rows:
        if count:
            ntr.setdefault(nation, {})[zone] = count
    nations = sorted(tuple(r) for r in nation_rows)
    return {
        "seq": seq,
        "turn": position.turn,
        "round": position.round,
        "nation": position.nation,
        "phase": position.phase,
        "units": [
            {"id": uid, "type": type_, "nation": nation, "at": zone, "damage": damage}
            for uid, type_, nation, zone, damage in sorted(tuple(u) for u in units)
        ],
        "ntr": {n: dict(sorted(z.items())) for n, z in sorted(ntr.items())},
        "balances": {nation: balance for nation, balance, _, _ in nations},
        "ntr_lost": {nation: lost for nation, _, lost, _ in nations},
        "tech": {nation: json.loads(tech) for nation, _, _, tech in nations},
    }


def board_at(conn: Connection, cid: UUID, seq: int) -> BoardView:
    """The board after event `seq`, from the views alone."""
    return Views(conn, cid).board_at(seq)


def seq_at_end_of(conn: Connection, cid: UUID, turn: int, phase: str | None) -> int | None:
    """The last event of a national turn, or of one of its phases."""
    return Views(conn, cid).seq_at_end_of(turn, phase)


def index_rows(conn: Connection, cid: UUID, filters: Iterable[Any] = ()) -> list[Any]:
    return Views(conn, cid).index_rows(filters)


def dump(conn: Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every view row, sorted, with its campaign's id in place of the campaign's key, for
    comparing a rebuild with the incremental result (keys follow the order of first projection)."""
    ids = {r.key: r.campaign_id for r in conn.execute(select(campaigns.c.key, campaigns.c.campaign_id))}
    out = {}
    for table in VIEWS:
        if table is campaigns:
            rows = [tuple(r)[1:] for r in conn.execute(select(table))]
        else:
            rows = [(ids.get(r[0], r[0]), *tuple(r)[1:]) for r in conn.execute(select(table))]
        out[table.name] = sorted(rows, key=repr)
    return out
