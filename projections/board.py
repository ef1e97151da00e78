"""Read models of the board, kept from the application's notification log.

One projector follows the log of every campaign in the database and writes, in the same
transaction as its tracking position, the rows of each event (`projections.rows`): an event
index and the history of units, NTR, nations and each nation's totals. Every CHECKPOINT events
the history rows still open are closed and opened again, so the rows valid after an event all
start at or after the checkpoint before it: the board query reads a bounded range, however
long the log.

Each campaign is projected on its own: an event that cannot be read, applied or written stops
that campaign's projections (recorded with the reason, reported by every read of it) and
never the others'. A log that was cut after it was projected (rows deleted, ids reused) is
detected, not silently skipped. Every read catches up first, so nobody sees a stale board.

The tables are in `projections.schema`, the rows of one event in `projections.rows`, the batched
writes of a page in `projections.batch`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, Engine

from domain.errors import TrackerError
from domain.memory import collector_paused
from projections.batch import Batch
from projections.positions import turn_number
from projections.rows import (
    KEY_COLUMNS,
    KINDS,
    NAMED,
    NATION,
    PARTS,
    ROWS,
    UNCHANGED,
    Change,
    Followed,
    bar,
    battle_zones,
    index_row,
    kind_of,
    link_battle,
    named_nation_changes,
    named_unit_changes,
    rows_of,
    turn_of,
    with_tally,
    with_unit_changes,
    write_changes,
    write_history,
)
from projections.schema import HISTORIES, NAME, VIEWS, campaigns, ensure_schema, insert_tracking_row, tracking

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
ASKED = "ActionAsked"


def checkpoint_before(seq: int) -> int:
    """The checkpoint at or before event `seq`: every history row valid after `seq` starts there or later."""
    return seq - seq % CHECKPOINT


class _Stop(Exception):
    """This campaign cannot be projected past event `seq`."""

    def __init__(self, seq: int, problem: str) -> None:
        super().__init__(problem)
        self.seq = seq
        self.problem = problem


def _describe(e: BaseException) -> str:
    # The library's error, where the mapper said it in its own words (an unreadable stored row).
    if isinstance(e, TrackerError) and e.__cause__ is not None:
        e = e.__cause__
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
        self.followed: dict[UUID, Followed] = {}
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
            # Made here, or by another process at the same moment: locked either way.
            insert_tracking_row(conn)
            conn.execute(update(tracking).where(tracking.c.name == NAME).values(name=NAME))
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
        self._project_all(batch, f, items)
        batch.flush(conn)
        conn.execute(
            update(campaigns).where(campaigns.c.key == f.key).values(last_seq=f.agg.version, last_hash=f.last_hash)
        )
        self.followed[cid] = f
        return f.key

    def _follow(self, conn: Connection, cid: UUID, version: int, known: Any) -> Followed:
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
            return Followed(key, None, {n: {} for n in HISTORIES}, {n: {} for n in HISTORIES}, [], "")
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
            cols = [table.c[c] for c in KEY_COLUMNS[name]]
            rows = conn.execute(
                select(*cols, table.c.from_seq).where(
                    table.c.c == key, table.c.from_seq >= floor, table.c.to_seq.is_(None)
                )
            )
            since[name] = {(r[0] if len(cols) == 1 else tuple(r[: len(cols)])): r[-1] for r in rows}
        rows_now = rows_of(agg)
        for name in HISTORIES:
            if set(rows_now[name]) != set(since[name]):
                raise _Stop(
                    version, "the views do not match the log before this event: run `tracker projections rebuild`"
                )
        f = Followed(key, agg, rows_now, since, list(agg.scenario.turn_order), agg.last_hash)
        f.battle_zone = battle_zones(agg)
        return f

    def _project_all(self, batch: Batch, f: Followed, items: list[Any]) -> None:
        """Fold a page's events of one campaign into `f` and add their rows to `batch`.

        One loop over the page, with what every event reads held in local names. Most events
        (asked actions, phases) change no row of the board and name no place but their nation
        (`plain` kinds): their index row is made here, as `index_row` makes it, without a call."""
        decode = self.decode
        add_row = batch.index_rows.append
        kinds = KINDS
        key = f.key
        every = CHECKPOINT
        agg = f.agg
        last_hash = f.last_hash
        # The national turn of the last plain event's round and nation: it changes once a turn.
        last_round: Any = None
        last_nation: Any = None
        turn = 0
        for n in items:
            seq = n.originator_version
            try:
                event = decode(n)
                data = event.__dict__
                if data.get("prev_hash") != last_hash and seq > 1:
                    raise _Stop(
                        seq,
                        f"event {seq} does not follow the projected event {seq - 1} (its previous hash "
                        "differs): the log was cut and rewritten, or edited",
                    )
                kind = kinds.get(event.__class__) or kind_of(event.__class__)
                if kind.adjusted and agg is not None:
                    # AD1: the owners before, for the nations a territory handed over names.
                    f.owners_before = dict(agg.owners)
                agg = event.mutate(agg)
                if kind.plain:
                    round_, nation = agg.round, agg.nation
                    if round_ != last_round or nation != last_nation:
                        last_round, last_nation = round_, nation
                        turn = turn_of(f, agg)
                    by = data.get("nation")
                    row = [
                        key,
                        seq,
                        turn,
                        round_,
                        nation,
                        agg.phase,
                        kind.name,
                        kind.index_rule,
                        None,
                        "",
                        bar(by) if by.__class__ is str else "",
                        kind.summary(event),
                        None,
                    ]
                    if seq % every:
                        add_row(row)
                        last_hash = data.get("hash", "")
                        continue
                    new_rows = f.rows
                    changes: list[Change] | None = None
                else:
                    row = index_row(f, agg, event, data, kind, seq)
                    changes, new_rows = _board_rows(f, agg, data, kind)
            except _Stop:
                raise
            except Exception as e:  # noqa: BLE001 - an unreadable or inapplicable event stops this campaign only
                raise _Stop(seq, _describe(e)) from None
            add_row(row)
            if kind.links:
                link_battle(batch, kind, data, seq)
            if kind.undo:
                batch.mark_undone(event.undone_from, event.undone_to, seq)
                # RK3: the battles of the state put back, a battle taken back in part among them.
                f.battle_zone = battle_zones(agg)
            _write_rows(batch, f, kind.named_in, changes, new_rows, seq, not seq % every)
            last_hash = data.get("hash", "")
        # Only a page projected whole moves the campaign on: after a stop the projector drops
        # what it follows and starts again from the database.
        f.agg = agg
        f.last_hash = last_hash


def _write_rows(
    batch: Any, f: Followed, named_in: str, changes: list[Change] | None, new_rows: dict[str, Any], seq: int,
    checkpoint: bool,
) -> None:  # fmt: skip
    """An event's board rows into the history: the named rows it `changes` in place, and the
    rows of every table that differs from `f.rows` (or all of them, at a `checkpoint`)."""
    if changes:
        write_changes(batch, f, named_in, changes, seq)
    if new_rows is not f.rows or checkpoint:
        write_history(batch, f, new_rows, seq, checkpoint)
        f.rows = new_rows


def _board_rows(f: Followed, agg: Any, data: dict[str, Any], kind: Any) -> tuple[list[Change] | None, dict[str, Any]]:
    """What an event of `kind` changes of the board: the rows it changes of the table its
    named fields name (`kind.named_in`), when only those can have changed (none when no row
    of that table did), and the board's rows after it otherwise (the same object as before
    when the event changes none, or changes only those rows and not the totals)."""
    board = kind.board
    if board == UNCHANGED:
        return None, f.rows
    if board == NAMED:
        changes = named_unit_changes(f.rows["unit"], agg, data, kind.named)
        return changes, with_unit_changes(agg, f.rows, changes) if changes else f.rows
    if board == NATION:
        return named_nation_changes(f.rows["nation"], agg, data, kind.named[0]), f.rows
    if board == PARTS:
        parts = kind.parts
        new_rows = {name: rows(agg) if name in parts else f.rows[name] for name, rows in ROWS.items()}
        # The totals follow the units and NTR: kept when neither was touched.
        new_rows["tally"] = f.rows["tally"]
        if "unit" in parts or "ntr" in parts:
            with_tally(agg, new_rows)
        return None, new_rows
    return None, rows_of(agg)


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
