"""Play by e-mail with files: a campaign that exists here is continued by the events of an
export (`tracker export --since SEQ` writes only the events after SEQ, with the hash of event
SEQ they continue from). Import fast-forwards the campaign when the file continues its chain,
after checking the chain, the dice and every action through the referee; refuses a fork
naming the first event where the two copies differ; and changes nothing for events it
already holds (importing the same file twice says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, cast
from uuid import UUID

import sqlalchemy.exc
from eventsourcing.persistence import IntegrityError, StoredEvent

from domain.errors import InputError
from tracker.interchange.format import (
    ImportRefused,
    LineProblem,
    ParsedExport,
    Progress,
    Row,
    decode_row,
    event_topics,
    referee_events,
    ticking,
)
from tracker.service.application import SNAPSHOT_INTERVAL, Tracker
from tracker.service.verify import verify_events
from tracker.storage.recorder import TrackerRecorder


@dataclass(frozen=True)
class Continued:
    """What an import into an existing campaign did: events appended (none when the file was
    imported before), from which event on, and the head now."""

    campaign: str
    since: int
    first_new: int
    appended: int
    head_seq: int
    head_hash: str
    actions_refereed: int


def _same(event: Any) -> Any:
    return event


def _short(digest: str) -> str:
    return f"{digest[:16]}..."


def continue_campaign(
    tracker: Tracker, cid: UUID, name: str, parsed: ParsedExport, progress: Progress | None = None
) -> Continued:
    """Fast-forward campaign `cid` with the file's events that continue it (see the module)."""
    source = parsed.source
    header = parsed.header
    since = header.get("since", 0)
    if not isinstance(since, int) or isinstance(since, bool) or since < 0:
        raise InputError(f"{source}: line 1: field 'since' must be an event number (0 or more)")
    local = [tracker.decode(s) for s in tracker.stored_events(cid)]
    end = len(local)
    _check_continues(source, name, header, since, local)
    rows = parsed.read_all()
    _check_rows(source, header, rows, since, local)
    new_rows = [row for row in rows if row.seq > end]
    if not new_rows:
        return Continued(name, since, end + 1, 0, end, local[-1].hash, 0)

    decoded = _decode_rows(tracker, cid, source, new_rows, progress)
    events = [*local, *decoded]
    line_of = {row.seq: row.line for row in new_rows}
    report = verify_events(
        ((e.originator_version, partial(_same, e)) for e in events), lambda epoch: tracker.seed_for(cid, epoch)
    )
    if not report.ok:
        line = line_of.get(report.bad_version or 0, 1)
        raise ImportRefused(source, line, f"{report.problem}")
    # Every action re-run by the referee on the state before it, the new ones included.
    referee_events(source, new_rows, events, report)
    _append(tracker, cid, name, source, new_rows)
    head = new_rows[-1]
    if head.seq // SNAPSHOT_INTERVAL > end // SNAPSHOT_INTERVAL:
        tracker.app.take_snapshot(cid, version=head.seq - head.seq % SNAPSHOT_INTERVAL)
    return Continued(name, since, end + 1, len(new_rows), head.seq, head.hash, report.actions_refereed)


def _check_continues(source: str, name: str, header: dict[str, Any], since: int, local: list[Any]) -> None:
    """The file continues this campaign: the event it follows is here, with the hash it names."""
    end = len(local)
    if since > end:
        raise ImportRefused(
            source,
            1,
            f"this file continues campaign {name!r} after event {since}, but the campaign here ends at event "
            f"{end}: import the files in between first",
        )
    if since > 0 and header.get("since_hash") != local[since - 1].hash:
        raise ImportRefused(
            source,
            1,
            f"this file continues event {since} with hash {_short(str(header.get('since_hash')))}, but event "
            f"{since} of campaign {name!r} here has hash {_short(local[since - 1].hash)}: it continues another "
            "campaign, or another history of this one; nothing was imported",
        )


def _check_rows(source: str, header: dict[str, Any], rows: list[Row], since: int, local: list[Any]) -> None:
    """The file's events follow on in order, agree with those both copies hold, and end at the
    header's last hash."""
    if not rows:
        raise ImportRefused(source, 2, "the file has no events")
    for i, row in enumerate(rows):
        if row.seq != since + 1 + i:
            raise ImportRefused(source, row.line, f"event {row.seq} is out of order: expected event {since + 1 + i}")
    # Events both copies hold must be the same events: the first that differs is the fork.
    for row in rows:
        if row.seq > len(local):
            break
        mine = local[row.seq - 1]
        if row.hash != mine.hash:
            raise ImportRefused(
                source,
                row.line,
                f"fork at event {row.seq}: here it is {type(mine).__name__} ({_short(mine.hash)}), in the file "
                f"{row.kind} ({_short(row.hash)}); the copies went different ways after event {row.seq - 1}, "
                "so nothing was imported (agree on one history: undo here, or import the other side's full export "
                "under another name with --as)",
            )
    if header["last_hash"] != rows[-1].hash:
        raise ImportRefused(
            source, 1, f"the header's last_hash is not the hash of the last event (line {rows[-1].line})"
        )


def _decode_rows(tracker: Tracker, cid: UUID, source: str, new_rows: list[Row], progress: Progress | None) -> list[Any]:
    topics = event_topics()
    mapper = tracker.app.mapper
    decoded: list[Any] = []
    with ticking(progress, len(new_rows)) as tick:
        for row in new_rows:
            try:
                decoded.append(decode_row(row, mapper, cid, topics))
            except LineProblem as e:
                raise ImportRefused(source, row.line, str(e)) from None
            tick(1)
    return decoded


def _append(tracker: Tracker, cid: UUID, name: str, source: str, new_rows: list[Row]) -> None:
    """Store the new events in one transaction; one recorded here meanwhile refuses them all."""
    stored = [
        StoredEvent(originator_id=cid, originator_version=row.seq, topic=row.topic, state=row.state.encode("utf-8"))
        for row in new_rows
    ]
    recorder = cast(TrackerRecorder, tracker.app.recorder)
    try:
        with recorder.transaction(commit=True) as session:
            recorder.insert_events(stored, session=session)
    except (IntegrityError, sqlalchemy.exc.IntegrityError):
        raise ImportRefused(
            source,
            new_rows[0].line,
            f"campaign {name!r} recorded event {new_rows[0].seq} here while the file was imported: nothing was "
            "imported; look at the campaign and import again",
        ) from None
