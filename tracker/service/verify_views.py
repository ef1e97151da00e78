"""`tracker verify`'s checks of the views and the rows that name events against the log: the
event index row by row beside the walk, the last event the views read, rows beyond the log's
end (a cut tail), and with `--projections` every view row against a rebuild."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.persistence import Notification
from sqlalchemy import create_engine, func, inspect, select
from sqlalchemy.engine import Connection
from sqlalchemy.pool import StaticPool

from projections import board, schema, views
from projections.summary import summary
from tracker.service.verify_referee import snapshot_table
from tracker.service.verify_report import VerifyReport, fail

if TYPE_CHECKING:
    from tracker.service.application import Tracker
    from tracker.service.verify_registry import Seen


def check_beyond_the_end(t: Tracker, cid: UUID, report: VerifyReport, last_seq: int) -> None:
    """Rows that name events the log no longer has: the tail was cut after they were written."""
    existing = set(inspect(t.engine).get_table_names())
    key = -1
    if schema.campaigns.name in existing:
        with t.engine.connect() as conn:
            found = views.campaign_key(conn, cid)
        key = -1 if found is None else found
    checks: list[tuple[str, Any]] = [
        ("an event index row", select(func.max(schema.event_index.c.seq)).where(schema.event_index.c.c == key)),
        (
            "the projections' position",
            select(func.max(schema.campaigns.c.last_seq)).where(schema.campaigns.c.campaign_id == str(cid)),
        ),
    ]
    for name, table in schema.HISTORIES.items():
        checks.append((f"a {name} history row", select(func.max(table.c.from_seq)).where(table.c.c == key)))
        checks.append((f"a {name} history row", select(func.max(table.c.to_seq)).where(table.c.c == key)))
    existing = set(inspect(t.engine).get_table_names())
    with t.engine.connect() as conn:
        snapshots = snapshot_table(t)
        if snapshots is not None:
            top = conn.execute(
                select(func.max(snapshots.c.originator_version)).where(snapshots.c.originator_id == cid)
            ).scalar()
            if top is not None and top > last_seq:
                fail(
                    report,
                    last_seq + 1,
                    f"a snapshot is at event {top}, beyond the last event {last_seq}: events after "
                    f"{last_seq} were deleted",
                )
                return
        for what, query in checks:
            if query.get_final_froms()[0].name not in existing:
                continue
            top = conn.execute(query).scalar()
            if top is not None and top > last_seq:
                fail(
                    report,
                    last_seq + 1,
                    f"{what} names event {top}, beyond the last event {last_seq}: events after {last_seq} "
                    "were deleted (or the views were edited)",
                )
                return
        if schema.tracking.name in existing:
            position = conn.execute(
                select(schema.tracking.c.notification_id).where(schema.tracking.c.name == schema.NAME)
            ).scalar()
            newest = t.max_notification_id()
            if position is not None and position > newest:
                fail(
                    report,
                    last_seq + 1,
                    f"the projections have read up to row {position} of the log, which now ends at row {newest}: "
                    "recorded events were deleted",
                )


def views_followed(t: Tracker, cid: UUID) -> tuple[int, int, str] | None:
    """The views' key of the campaign, and the last event they read with its hash."""
    existing = set(inspect(t.engine).get_table_names())
    if not {schema.campaigns.name, schema.event_index.name} <= existing:
        return None
    with t.engine.connect() as conn:
        row = conn.execute(
            select(schema.campaigns.c.key, schema.campaigns.c.last_seq, schema.campaigns.c.last_hash).where(
                schema.campaigns.c.campaign_id == str(cid)
            )
        ).first()
    return None if row is None else (row[0], row[1], row[2])


class IndexCheck:
    """The views were written from the log as it was when they read it: every event index row
    must still be what the log's event gives: its kind, and for an action the line that shows
    who asked it (other lines are words a newer tracker may put otherwise, and are not
    compared, so views written by an earlier release still verify). A forger who edits an
    event and re-hashes the chain after it (an action's player, a time: what the referee does
    not decide) must rewrite these rows too. The rows are read a page at a time beside the
    walk; rows beyond the log's end are checked before (`check_beyond_the_end`)."""

    def __init__(self, t: Tracker, key: int) -> None:
        self.rows = self._rows(t, key)
        self.row: Any = next(self.rows, None)
        self.problem: tuple[int, str] | None = None

    @staticmethod
    def _rows(t: Tracker, key: int) -> Iterator[Any]:
        index = schema.event_index
        after = None
        while True:
            query = select(index.c.seq, index.c.kind, index.c.summary).where(index.c.c == key)
            if after is not None:
                query = query.where(index.c.seq > after)
            with t.engine.connect() as conn:
                rows = conn.execute(query.order_by(index.c.seq).limit(_INDEX_PAGE)).all()
            yield from rows
            if len(rows) < _INDEX_PAGE:
                return
            after = rows[-1][0]

    def take(self, event: Any) -> None:
        seq = event.originator_version
        while self.problem is None and self.row is not None and self.row[0] <= seq:
            row_seq, kind, text = self.row
            self.row = next(self.rows, None)
            if row_seq < seq:
                continue  # a row of no event (the walk has passed every event from 1)
            actual = type(event).__name__
            # Who asked an action is in its line; other lines are the words of the tracker that
            # wrote the views, which a newer one may put otherwise: their kind is compared.
            now = summary(event) if kind == actual == "ActionAsked" else text if kind == actual else actual
            if (kind, text) != (actual, now):
                self.problem = (
                    seq,
                    f"event {seq} ({actual}) is not what the event index (tracker_event_index) read there: it "
                    f"shows {kind} {_short(text)}, the log now gives {_short(now)}: the event was rewritten (and "
                    "the chain re-hashed) after the views read it, or the views were edited",
                )


_INDEX_PAGE = 2000


def check_views_last_hash(report: VerifyReport, seen: Seen, last_seq: int, last_hash: str) -> None:
    """The last event the views read must still have the hash they read: it covers every event
    up to it, times included."""
    now = seen.hash_of(last_seq)
    if now is None or not last_hash or now == last_hash:
        return
    back = [v for v in report.stamped_back if v <= last_seq]
    sign = f" (event {back[0]} is stamped before the event it follows: an edited time?)" if back else ""
    fail(
        report,
        last_seq,
        f"the views (tracker_projection_campaigns) read event {last_seq} with hash {last_hash[:16]}..., but the "
        f"log's event {last_seq} has hash {now[:16]}...: the log up to event {last_seq} was rewritten after the "
        f"views read it, or the views were edited{sign}",
    )


def _short(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def check_projections(t: Tracker, cid: UUID, report: VerifyReport) -> None:
    """Compare this campaign's view rows with a rebuild into a scratch in-memory database, up
    to the position the views have reached; the user's database is only read."""
    existing = set(inspect(t.engine).get_table_names())
    followed = views_followed(t, cid)
    if schema.tracking.name not in existing or followed is None:
        # Not "0 view rows match": nothing was compared, and a reader should know why.
        report.projection_rows_checked = 0
        report.notes.append(
            "Projections: not built yet for this campaign (the first `tracker log`, `state --turn` or "
            "report builds them), so there is nothing to compare with a rebuild."
        )
        return
    with t.engine.connect() as conn:
        position = conn.execute(
            select(schema.tracking.c.notification_id).where(schema.tracking.c.name == schema.NAME)
        ).scalar()
        mine = _view_rows(conn, cid)
    events = t.app.recorder.events_record_cls.__table__  # type: ignore[attr-defined]

    def select_notifications(start: int, limit: int) -> list[Notification]:
        query = (
            select(events.c.id, events.c.originator_id, events.c.originator_version, events.c.topic, events.c.state)
            .where(events.c.id >= start, events.c.id <= (position or 0), events.c.originator_id == cid)
            .order_by(events.c.id)
            .limit(limit)
        )
        with t.engine.connect() as source:
            return [
                Notification(
                    id=r.id,
                    originator_id=r.originator_id,
                    originator_version=r.originator_version,
                    topic=r.topic,
                    state=bytes(r.state),
                )
                for r in source.execute(query)
            ]

    scratch = create_engine("sqlite://", poolclass=StaticPool)
    try:
        projector = board.BoardProjector(
            scratch, select_notifications, t.app.mapper.to_domain_event, lambda c, v: t.load(c, version=v)
        )
        projector.rebuild()
        with scratch.connect() as conn:
            rebuilt = _view_rows(conn, cid)
    finally:
        scratch.dispose()
    report.projection_rows_checked = sum(len(rows) for rows in mine.values())
    last = t.recorder.last_version(cid)
    if followed[1] < last:
        # The views catch up on the next read: the rows compared are those up to where they are.
        report.notes.append(
            f"Projections: the views have read the log up to event {followed[1]} of {last}; the rows "
            "up to there were compared (the next `tracker log` or `state --turn` brings them up to date)."
        )
    first: tuple[int, str, str] | None = None
    for name in mine:
        stored_only = sorted(set(mine[name]) - set(rebuilt[name]), key=lambda r: (r[0], repr(r)))
        rebuilt_only = sorted(set(rebuilt[name]) - set(mine[name]), key=lambda r: (r[0], repr(r)))
        # Duplicated rows are a difference too, though sets hide them.
        if not stored_only and not rebuilt_only and sorted(mine[name], key=repr) != sorted(rebuilt[name], key=repr):
            stored_only = [next(r for r in mine[name] if mine[name].count(r) != rebuilt[name].count(r))]
        candidates = [(r[0], f"stored row {r[1:]} is not in the rebuild") for r in stored_only]
        candidates += [(r[0], f"the rebuild has row {r[1:]} that the stored views lack") for r in rebuilt_only]
        if candidates:
            seq, what = min(candidates, key=lambda c: c[0])
            if first is None or seq < first[0]:
                first = (seq, name, what)
    if first is not None:
        seq, name, what = first
        fail(
            report,
            seq,
            f"projection {name} differs from a rebuild of the log at event {seq}: {what} "
            "(run `tracker projections rebuild` after finding out why)",
        )


# Per view: the event a row belongs to first (to name the first difference), then its columns.
_SEQ_COLUMN = {
    "tracker_projection_campaigns": "last_seq",
    "tracker_event_index": "seq",
    "tracker_unit_history": "from_seq",
    "tracker_ntr_history": "from_seq",
    "tracker_nation_history": "from_seq",
    "tracker_tally_history": "from_seq",
}


def _view_rows(conn: Connection, cid: UUID) -> dict[str, list[tuple[Any, ...]]]:
    """One campaign's rows of every view, without the campaign's key (which differs between
    databases), each led by the event it belongs to."""
    found = views.campaign_key(conn, cid)
    key = -1 if found is None else found
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table in schema.VIEWS:
        seq_col = table.c[_SEQ_COLUMN[table.name]]
        if table is schema.campaigns:
            columns = [c for c in table.c if c.name not in ("key", "campaign_id")]
            where = table.c.campaign_id == str(cid)
        else:
            columns = [c for c in table.c if c.name != "c"]
            where = table.c.c == key
        out[table.name] = [tuple(r) for r in conn.execute(select(seq_col, *columns).where(where))]
    return out
