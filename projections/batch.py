"""The writes of one campaign's projected events in one page (`projections.board` folds the
events, this module writes their rows): event index rows, undo marks and history rows opened
and closed, in a few batched statements."""

from __future__ import annotations

import json
from itertools import chain
from operator import itemgetter
from typing import Any

from sqlalchemy import bindparam, case, func, select, update
from sqlalchemy.engine import Connection

from projections.schema import HISTORIES, event_index

_INDEX_COLUMNS = tuple(c.name for c in event_index.columns)
assert _INDEX_COLUMNS[1] == "seq" and _INDEX_COLUMNS[-1] == "undone_by"
_KIND, _BATTLE, _ZONES = (_INDEX_COLUMNS.index(c) for c in ("kind", "battle", "zones"))
_HISTORY_COLUMNS = {name: tuple(c.name for c in table.columns) for name, table in HISTORIES.items()}
# A history row is a list of its values in the order of its table's columns, to_seq last (set
# when a later event of the page closes it): no dict made and unpacked again per row.
assert all(columns[:2] == ("c", "from_seq") and columns[-1] == "to_seq" for columns in _HISTORY_COLUMNS.values())


def _history_row(name: str, key: int, k: Any, value: tuple[Any, ...], seq: int) -> list[Any]:
    if name in ("unit", "tally"):
        return [key, seq, k, *value, None]
    if name == "ntr":
        return [key, seq, *k, *value, None]
    balance, lost, tech = value
    return [key, seq, k, balance, lost, _tech_json(tech), None]


_TECH_JSON: dict[tuple[tuple[str, int], ...], str] = {}


def _tech_json(tech: tuple[tuple[str, int], ...]) -> str:
    """A nation's levels as stored: a campaign has a handful of distinct ones, each dumped once."""
    found = _TECH_JSON.get(tech)
    if found is None:
        found = json.dumps(dict(tech), sort_keys=True)
        if len(_TECH_JSON) < 10_000:
            _TECH_JSON[tech] = found
    return found


class Batch:
    """The writes of one campaign's events in one page, made with a few executemany statements.

    Rows opened and closed within the page are settled in memory; only rows opened by an
    earlier page are closed with UPDATE (by primary key), before this page's rows are inserted.
    """

    def __init__(self, key: int) -> None:
        self.key = key
        # Event index rows, their values in the order of the table's columns: one per event of
        # the page, in the order of the events (consecutive, so an event's row is found by its number).
        self.index_rows: list[list[Any]] = []
        self.undone: list[dict[str, Any]] = []
        # Index rows that take their battle from rows of an earlier page (`borrow_battle`,
        # `lend_battle`): set by UPDATE once this page's rows are in, in the order of the events.
        self.lent: list[dict[str, Any]] = []
        self.borrowed: list[dict[str, Any]] = []
        self.borrowing: list[int] = []
        self.new_rows: dict[str, list[list[Any]]] = {name: [] for name in HISTORIES}
        # The rows opened in this page and still open, by table and key: a key has one open
        # row at a time, so its key alone finds it.
        self.open_here: dict[str, dict[Any, list[Any]]] = {name: {} for name in HISTORIES}
        self.closes: dict[str, list[dict[str, Any]]] = {name: [] for name in HISTORIES}

    def mark_undone(self, first: int, last: int, by: int) -> None:
        rows = self.index_rows
        if rows:
            base = rows[0][1]
            for row in rows[max(first - base, 0) : max(last - base + 1, 0)]:
                if first <= row[1] <= last and row[-1] is None:
                    row[-1] = by
        self.undone.append({"k": self.key, "first": first, "last": last, "by": by})

    def borrow_battle(self, seq: int, first: int, last: int) -> None:
        """Event `seq` (this page's last row so far) takes the battle of the first of events
        `first`-`last` that has one, if any does, and its zones when it names none (so that
        `log --zone` finds a battle's reroll or undo): found among this page's rows when they
        are all here and settled, else by the database once the page is written."""
        rows = self.index_rows
        base = rows[0][1]
        if first >= base and not any(first <= s <= last for s in self.borrowing):
            row = rows[seq - base]
            for earlier in rows[first - base : last - base + 1]:
                if earlier[_BATTLE] is not None:
                    row[_BATTLE] = earlier[_BATTLE]
                    row[_ZONES] = row[_ZONES] or earlier[_ZONES]
                    return
            return
        self.borrowing.append(seq)
        self.borrowed.append({"k": self.key, "by": seq, "first": first, "last": last})

    def lend_battle(self, seq: int, battle: int, kind: str) -> None:
        """Event `seq`, if it is of `kind` and has no battle, takes `battle` and the zones of
        this page's last row (the lender's) when it names none."""
        rows = self.index_rows
        base, zones = rows[0][1], rows[-1][_ZONES]
        if seq >= base:
            row = rows[seq - base]
            if row[_KIND] == kind and row[_BATTLE] is None:
                row[_BATTLE] = battle
                row[_ZONES] = row[_ZONES] or zones
            return
        self.lent.append({"k": self.key, "at": seq, "battle": battle, "of": kind, "zones_lent": zones})

    def open(self, name: str, k: Any, value: tuple[Any, ...], seq: int) -> None:
        row = _history_row(name, self.key, k, value, seq)
        self.new_rows[name].append(row)
        self.open_here[name][k] = row

    def reopen(self, name: str, since: dict[Any, int], values: dict[Any, tuple[Any, ...]], seq: int) -> None:
        """A checkpoint at event `seq`: close every row of `since` (where each row of `name`
        still open began) that began before it and open it again there, with its value in
        `values`. Most rows of the board, at every checkpoint: `close` and `open` in one loop."""
        key = self.key
        open_here = self.open_here[name]
        added = self.new_rows[name]
        for k, began in since.items():
            if began < seq:
                row = open_here.get(k)
                if row is not None and row[1] == began:
                    row[-1] = seq
                else:
                    self.close(name, k, began, seq)
                row = _history_row(name, key, k, values[k], seq)
                added.append(row)
                open_here[k] = row
                # A value replaced, no key added or removed: the loop goes on over the same keys.
                since[k] = seq

    def close(self, name: str, k: Any, began: int, seq: int) -> None:
        open_here = self.open_here[name]
        row = open_here.get(k)
        if row is not None and row[1] == began:
            del open_here[k]
            row[-1] = seq
            return
        params: dict[str, Any] = {"k": self.key, "f": began, "to": seq}
        if name == "unit":
            params["b_unit"] = k
        elif name == "ntr":
            params["b_nation"], params["b_zone"] = k
        else:
            params["b_nation"] = k
        self.closes[name].append(params)

    def flush(self, conn: Connection) -> None:
        if self.undone:
            conn.execute(
                update(event_index)
                .where(
                    event_index.c.c == bindparam("k"),
                    event_index.c.seq >= bindparam("first"),
                    event_index.c.seq <= bindparam("last"),
                    event_index.c.undone_by.is_(None),
                )
                .values(undone_by=bindparam("by")),
                self.undone,
            )
        if self.index_rows:
            _insert(conn, event_index.name, _INDEX_COLUMNS, self.index_rows)
        if self.lent:
            conn.execute(
                update(event_index)
                .where(
                    event_index.c.c == bindparam("k"),
                    event_index.c.seq == bindparam("at"),
                    event_index.c.kind == bindparam("of"),
                    event_index.c.battle.is_(None),
                )
                .values(
                    battle=bindparam("battle"),
                    zones=case((event_index.c.zones == "", bindparam("zones_lent")), else_=event_index.c.zones),
                ),
                self.lent,
            )
        # One at a time, in order: a row may borrow from one that borrowed before it.
        for borrowed in self.borrowed:
            conn.execute(_BORROW, borrowed)
        for name, table in HISTORIES.items():
            if self.closes[name]:
                match = [table.c.c == bindparam("k"), table.c.from_seq == bindparam("f")]
                if name == "unit":
                    match.append(table.c.unit_id == bindparam("b_unit"))
                else:
                    match.append(table.c.nation == bindparam("b_nation"))
                    if name == "ntr":
                        match.append(table.c.zone == bindparam("b_zone"))
                conn.execute(update(table).where(*match).values(to_seq=bindparam("to")), self.closes[name])
            if self.new_rows[name]:
                _insert(conn, table.name, _HISTORY_COLUMNS[name], self.new_rows[name])


_EARLIER = event_index.alias("earlier")


def _first_with_battle(column: Any) -> Any:
    """`column` of the first of a range of index rows that has a battle (`Batch.borrow_battle`)."""
    return (
        select(column)
        .where(
            _EARLIER.c.c == bindparam("k"),
            _EARLIER.c.seq >= bindparam("first"),
            _EARLIER.c.seq <= bindparam("last"),
            _EARLIER.c.battle.is_not(None),
        )
        .order_by(_EARLIER.c.seq)
        .limit(1)
        .scalar_subquery()
    )


# An index row's battle from the first of a range of rows that has one, and its zones when the
# row names none.
_BORROW = (
    update(event_index)
    .where(event_index.c.c == bindparam("k"), event_index.c.seq == bindparam("by"))
    .values(
        battle=_first_with_battle(_EARLIER.c.battle),
        zones=case(
            (event_index.c.zones == "", func.coalesce(_first_with_battle(_EARLIER.c.zones), "")),
            else_=event_index.c.zones,
        ),
    )
)

# Rows per INSERT on SQLite: one statement step for many rows costs a quarter less than one
# step per row (and stays far below SQLite's limit of bound values).
_ROWS_PER_INSERT = 50
# The columns that may hold NULL, by table. The sqlite3 driver binds None only after looking
# for an adapter (and making and dropping an AttributeError on the way), which costs more than
# the insert of the value. So, in each statement's rows, a nullable column that is NULL in
# every row is written as a NULL literal (no value bound at all), one that is NULL in none is
# bound as it is, and only one that is NULL in some rows is bound '' for NULL, which none of
# these columns ever holds, and turned back into NULL by the statement.
_NULLABLE = {table.name: {c.name for c in table.columns if c.nullable} for table in (event_index, *HISTORIES.values())}
_ALL_NULL, _NONE_NULL, _SOME_NULL = 0, 1, 2
_SQL: dict[tuple[str, int, tuple[int, ...]], str] = {}
# What a statement of a shape binds of its rows' values, by table, rows and shape (see `_bound`).
_BOUND: dict[tuple[str, int, tuple[int, ...]], tuple[Any, tuple[int, ...]]] = {}


def _insert_sql(table: str, columns: tuple[str, ...], rows: int, shape: tuple[int, ...]) -> str:
    """INSERT of `rows` rows, the nullable columns (in order) written as `shape` says."""
    found = _SQL.get((table, rows, shape))
    if found is None:
        how = dict(zip([c for c in columns if c in _NULLABLE[table]], shape, strict=True))
        one = (
            "("
            + ", ".join(
                "?" if how.get(c, _NONE_NULL) == _NONE_NULL else "NULL" if how[c] == _ALL_NULL else "NULLIF(?, '')"
                for c in columns
            )
            + ")"
        )
        found = f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * rows)}"
        _SQL[(table, rows, shape)] = found
    return found


def _bound(table: str, columns: tuple[str, ...], rows: int, shape: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """What a statement of this shape binds of its rows' values, one list of them all: a
    getter of the values bound (None when it binds them all, no column being a NULL literal),
    and where, among them, the columns begin whose NULL is bound ''."""
    key = (table, rows, shape)
    found = _BOUND.get(key)
    if found is None:
        width = len(columns)
        nullable = [i for i, c in enumerate(columns) if c in _NULLABLE[table]]
        how = dict(zip(nullable, shape, strict=True))
        kept = [i for i in range(width) if how.get(i) != _ALL_NULL]
        getter = None
        if len(kept) < width:
            getter = itemgetter(*(row * width + i for row in range(rows) for i in kept))
        blanks = tuple(at for at, i in enumerate(kept) if how.get(i) == _SOME_NULL)
        found = _BOUND[key] = (getter, blanks)
    return found


def _insert(conn: Connection, table: str, columns: tuple[str, ...], rows: list[Any]) -> None:
    """Insert rows (sequences of values in the order of `columns`) with plain driver statements:
    SQLAlchemy's parameter processing costs more than the inserts themselves on a rebuild."""
    if conn.dialect.paramstyle != "qmark":
        one = "(" + ", ".join(["%s"] * len(columns)) + ")"
        conn.exec_driver_sql(f"INSERT INTO {table} ({', '.join(columns)}) VALUES {one}", [tuple(r) for r in rows])
        return
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    width = len(columns)
    values = list(chain.from_iterable(rows))
    # Each nullable column's values, to see which statement's rows hold NULL there (see _NULLABLE).
    nulls = [values[i::width] for i, c in enumerate(columns) if c in _NULLABLE[table]]
    for first in range(0, len(rows), _ROWS_PER_INSERT):
        count = min(_ROWS_PER_INSERT, len(rows) - first)
        shape = []
        for column in nulls:
            found = column[first : first + count].count(None)
            shape.append(_NONE_NULL if not found else _ALL_NULL if found == count else _SOME_NULL)
        key = tuple(shape)
        bound, blanks = _bound(table, columns, count, key)
        chunk: Any = values[first * width : (first + count) * width]
        if bound is not None:
            chunk = bound(chunk)
        if blanks:
            chunk = list(chunk)
            step = len(chunk) // count
            for at in blanks:
                chunk[at::step] = ["" if v is None else v for v in chunk[at::step]]
        cursor.execute(_insert_sql(table, columns, count, key), chunk)
