"""Reading the board's read models (see `projections.board` and `projections.schema`): the board at any event, the
events of a turn, the last event of a turn or phase, the history of units, NTR and nations,
each answered from the history tables' rows valid at that point, without replaying events."""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Iterator
from typing import Any
from uuid import UUID

from sqlalchemy import Table, and_, func, or_, select
from sqlalchemy.engine import Connection

from projections.board import ASKED, checkpoint_before
from projections.schema import (
    HISTORIES,
    VIEWS,
    campaigns,
    event_index,
    nation_history,
    ntr_history,
    unit_history,
)


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

    def board_at(self, seq: int) -> dict[str, Any]:
        """The board after event `seq` (LookupError when there is no such event)."""
        conn, key = self.conn, self.key
        position = self.position(seq)
        if position is None:
            raise LookupError(seq)
        units = conn.execute(
            select(
                unit_history.c.unit_id,
                unit_history.c.type,
                unit_history.c.nation,
                unit_history.c.zone,
                unit_history.c.damage,
            ).where(_valid_at(unit_history, key, seq))
        ).all()
        ntr_rows = conn.execute(
            select(ntr_history.c.nation, ntr_history.c.zone, ntr_history.c.count).where(
                _valid_at(ntr_history, key, seq)
            )
        ).all()
        nation_rows = sorted(
            conn.execute(
                select(
                    nation_history.c.nation,
                    nation_history.c.balance,
                    nation_history.c.ntr_lost,
                    nation_history.c.tech,
                ).where(_valid_at(nation_history, key, seq))
            ).all()
        )
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
                for u in sorted(units)
            ],
            "ntr": {n: dict(sorted(z.items())) for n, z in sorted(ntr.items())},
            "balances": {r.nation: r.balance for r in nation_rows},
            "ntr_lost": {r.nation: r.ntr_lost for r in nation_rows},
            "tech": {r.nation: json.loads(r.tech) for r in nation_rows},
        }

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
            query = select(table).where(table.c.c == self.key, table.c.from_seq <= upto).order_by(table.c.from_seq)
            cursors.append((name, list(self.conn.execute(query))))

        def tagged(name: str, rows: list[Any]) -> Iterator[tuple[str, Any]]:
            for r in rows:
                yield name, r

        yield from heapq.merge(*[tagged(name, rows) for name, rows in cursors], key=lambda item: item[1].from_seq)


def board_at(conn: Connection, cid: UUID, seq: int) -> dict[str, Any]:
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
