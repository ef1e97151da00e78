"""Play by e-mail with files: a campaign that exists here is continued by the events of an
export (`tracker export --since SEQ` writes only the events after SEQ, with the hash of event
SEQ they continue from). Import fast-forwards the campaign when the file continues its chain,
after checking the chain, the dice and every action through the referee; refuses a fork
naming the first event where the two copies differ; and changes nothing for events it
already holds (importing the same file twice says so).
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, cast
from uuid import UUID

import sqlalchemy.exc
from eventsourcing.persistence import IntegrityError, StoredEvent

from domain.errors import InputError
from tracker.interchange.format import (
    STDIN,
    ImportRefused,
    LineProblem,
    ParsedExport,
    Progress,
    Row,
    decode_row,
    event_topics,
    plain_content,
    referee_events,
    ticking,
)
from tracker.service.application import Tracker
from tracker.service.verify import verify_events
from tracker.storage.event_app import SNAPSHOT_INTERVAL
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
    # Every action of the log, from the campaign's creation on, is re-refereed (each one's
    # state is the fold of all before it); `file_actions` of them came in the file.
    actions_refereed: int
    file_actions: int = 0


@dataclass(frozen=True)
class Mended:
    """What `--resolve theirs` did at a fork: this copy's history kept aside under `archive`,
    and the campaign under its own name going on from the file's."""

    campaign: str
    archive: str
    fork: int
    kept: int
    head_seq: int
    head_hash: str
    actions_refereed: int  # the whole log's, as `Continued`'s
    file_actions: int = 0


@dataclass(frozen=True)
class KeptMine:
    """`--resolve mine` at a fork: nothing changes here; the events after `since` are what
    the other side imports with --resolve theirs."""

    campaign: str
    campaign_id: UUID
    fork: int

    @property
    def since(self) -> int:
        return self.fork - 1


def _same(event: Any) -> Any:
    return event


def actions_in(events: list[Any]) -> int:
    """The actions that begin among `events` (each recorded from an ActionAsked event on)."""
    return sum(type(e).__name__ == "ActionAsked" for e in events)


def _short(digest: str) -> str:
    return f"{digest[:16]}..."


def continue_campaign(
    tracker: Tracker,
    cid: UUID,
    name: str,
    parsed: ParsedExport,
    progress: Progress | None = None,
    resolve: str | None = None,
) -> Continued | Mended | KeptMine:
    """Fast-forward campaign `cid` with the file's events that continue it (see the module).
    At a fork, `resolve` says which history goes on: None refuses (naming each copy's first
    differing action), "theirs" gives way (`give_way`), "mine" keeps this copy's (`KeptMine`)."""
    source = parsed.source
    header = parsed.header
    since = header.get("since", 0)
    if not isinstance(since, int) or isinstance(since, bool) or since < 0:
        raise InputError(f"{source}: line 1: field 'since' must be an event number (0 or more)")
    local = [tracker.decode(s) for s in tracker.stored_events(cid)]
    end = len(local)
    _check_continues(source, name, header, since, local)
    rows = _read_in_order(parsed, since)
    fork = _check_rows(source, header, rows, since, local)
    held = [row for row in rows if row.seq <= end and (fork is None or row.seq < fork)]
    _check_held(tracker, cid, source, held, local)
    if fork is not None:
        theirs_rows = [row for row in rows if row.seq >= fork]
        theirs = [*local[: fork - 1], *_decode_rows(tracker, cid, source, theirs_rows, progress)]
        # The file's history is checked before it is called a fork: an edited file is refused
        # for what is wrong with it, not offered to `--resolve`, and the fork's words
        # describe actions the referee records.
        report = _verified(tracker, cid, source, theirs, theirs_rows)
        if resolve is None:
            # The name `--resolve theirs` would keep this copy under: a fork mended here before
            # may have taken the plain one.
            archive = _free_name(tracker, archive_name(name, fork))
            raise _fork_refusal(source, archive, fork, local, theirs, theirs_rows[0].line)
        if resolve == "mine":
            return KeptMine(name, cid, fork)
        brought = actions_in(theirs[fork - 1 :])
        return give_way(tracker, cid, name, source, fork, theirs_rows, theirs, report.actions_refereed, brought)
    new_rows = [row for row in rows if row.seq > end]
    if not new_rows:
        return Continued(name, since, end + 1, 0, end, local[-1].hash, 0)

    decoded = _decode_rows(tracker, cid, source, new_rows, progress)
    events = [*local, *decoded]
    report = _verified(tracker, cid, source, events, new_rows)
    _append(tracker, cid, name, source, new_rows)
    head = new_rows[-1]
    if head.seq // SNAPSHOT_INTERVAL > end // SNAPSHOT_INTERVAL:
        tracker.app.take_snapshot(cid, version=head.seq - head.seq % SNAPSHOT_INTERVAL)
    return Continued(
        name, since, end + 1, len(new_rows), head.seq, head.hash, report.actions_refereed, actions_in(decoded)
    )


def _verified(tracker: Tracker, cid: UUID, source: str, events: list[Any], new_rows: list[Row]) -> Any:
    """The chain, the dice and every action of `events` checked, the new ones re-refereed on
    the state before them; the report, or ImportRefused naming the file's line."""
    line_of = {row.seq: row.line for row in new_rows}
    at = [0]

    def walk() -> Iterator[tuple[int, Callable[[], Any]]]:
        for e in events:
            at[0] = e.originator_version
            yield e.originator_version, partial(_same, e)

    try:
        report = verify_events(walk(), lambda epoch: tracker.seed_for(cid, epoch))
    except Exception as e:  # noqa: BLE001 - hashed but impossible content (a die that is not a number)
        raise ImportRefused(
            source,
            line_of.get(at[0], new_rows[0].line),
            f"event {at[0]} cannot be checked ({type(e).__name__}: {e}); nothing was imported",
        ) from None
    if not report.ok:
        raise ImportRefused(source, line_of.get(report.bad_version or 0, 1), f"{report.problem}")
    referee_events(source, new_rows, events, report)
    return report


def give_way(
    tracker: Tracker,
    cid: UUID,
    name: str,
    source: str,
    fork: int,
    theirs_rows: list[Row],
    theirs: list[Any],
    actions_refereed: int,
    file_actions: int = 0,
) -> Mended:
    """`--resolve theirs` at a fork: the file's history (`theirs`, checked from the first
    event already) goes on under the campaign's name (a new log: the events before the fork
    copied, then the file's); this copy's log, every event of it, is kept as campaign
    `NAME-fork-SEQ`. Nothing is deleted: the names move and the new log is written in one
    transaction."""
    archive = _free_name(tracker, archive_name(name, fork))
    new_cid = uuid.uuid4()
    shared = tracker.stored_events(cid)[: fork - 1]
    stored = [
        StoredEvent(originator_id=new_cid, originator_version=s.originator_version, topic=s.topic, state=s.state)
        for s in shared
    ] + [
        StoredEvent(originator_id=new_cid, originator_version=row.seq, topic=row.topic, state=row.state.encode("utf-8"))
        for row in theirs_rows
    ]
    mine_head = tracker.decode(tracker.stored_events(cid)[-1])
    _move_names(tracker, cid, new_cid, name, archive, (mine_head.originator_version, mine_head.hash), stored, theirs)
    tracker.catch_up()
    return Mended(
        name, archive, fork, mine_head.originator_version - fork + 1, theirs[-1].originator_version, theirs[-1].hash,
        actions_refereed, file_actions,
    )  # fmt: skip


def _free_name(tracker: Tracker, wanted: str) -> str:
    name, n = wanted, 1
    while tracker.registry.lookup(name) is not None:
        n += 1
        name = f"{wanted}-{n}"
    return name


def _move_names(
    tracker: Tracker,
    old: UUID,
    new: UUID,
    name: str,
    archive: str,
    old_head: tuple[int, str],
    stored: list[StoredEvent],
    theirs: list[Any],
) -> None:
    """One transaction: the old log registered as `archive` (its mark naming that name and
    its head, so `verify` knows the tracker gave it), the new log under `name` with its mark,
    the dice seeds the old log held given to the new one too (the same commitments), and the
    campaign's players and notification channels moved to the new log (`_follow_name`)."""
    from sqlalchemy import select

    from tracker.storage.store import campaigns_table, imported_table, mark_imported, seeds_table

    tracker.require_writable()
    tracker.registry.upgrade_import_marks()
    recorder = cast(TrackerRecorder, tracker.app.recorder)
    with recorder.transaction(commit=True) as session:
        session.execute(campaigns_table.update().where(campaigns_table.c.campaign_id == str(old)).values(name=archive))
        marked = imported_table.c.campaign_id == str(old)
        if session.execute(select(imported_table.c.campaign_id).where(marked)).first() is not None:
            session.execute(imported_table.update().where(marked).values(name=archive))
        else:
            mark_imported(session, str(old), archive, *old_head)
        session.execute(campaigns_table.insert().values(name=name, campaign_id=str(new)))
        mark_imported(session, str(new), name, theirs[-1].originator_version, theirs[-1].hash)
        seeds = session.execute(
            select(seeds_table.c.epoch, seeds_table.c.seed).where(seeds_table.c.campaign_id == str(old))
        ).all()
        for epoch, seed in seeds:
            session.execute(seeds_table.insert().values(campaign_id=str(new), epoch=epoch, seed=seed))
        _follow_name(session, old, new)
        recorder.insert_events(stored, session=session)


def _follow_name(session: Any, old: UUID, new: UUID) -> None:
    """The players and notification channels of the campaign the group plays go on with its
    name: left on the archive, the hand-offs of the game going on would reach nobody."""
    from tracker.service.notify import channels_table
    from tracker.service.players import players_table, public_table

    for table in (players_table, channels_table, public_table):
        session.execute(table.update().where(table.c.campaign_id == str(old)).values(campaign_id=str(new)))


def _check_continues(source: str, name: str, header: dict[str, Any], since: int, local: list[Any]) -> None:
    """The file continues this campaign: the event it follows is here, with the hash it names."""
    end = len(local)
    # Imported into a campaign of another name (`--campaign`, `--as`): perhaps the wrong one.
    other = header["campaign"] != name
    theirs = f" of campaign {header['campaign']!r}" if other else ""
    if since > end:
        missing = f"event {end + 1}" if since == end + 1 else f"events {end + 1}-{since}"
        # The sender may have given `--since` too high (no file in between exists): the export
        # that fills the gap is named, so the player knows what to ask for.
        raise ImportRefused(
            source,
            1,
            f"this file{theirs} continues campaign {name!r} after event {since}, but the campaign here ends at "
            f"event {end}: import the files in between first ({missing}, missing here), or ask the sender for "
            f"the events after {end}: `tracker --campaign {shlex.quote(header['campaign'])} export --since {end} "
            "FILE`; nothing was imported",
        )
    if since > 0 and header.get("since_hash") != local[since - 1].hash:
        raise ImportRefused(
            source,
            1,
            f"this file{theirs} continues event {since} with hash {_short(str(header.get('since_hash')))}, but "
            f"event {since} of campaign {name!r} here has hash {_short(local[since - 1].hash)}: it continues "
            "another campaign, or another history of this one; nothing was imported",
        )


def _read_in_order(parsed: ParsedExport, since: int) -> list[Row]:
    """The file's event lines, each checked as it is read to be the next event and to name
    the one before it: a file that repeats or skips an event, or goes on for ever, is refused
    where it goes wrong, not once it has all been read."""
    rows: list[Row] = []
    for row in parsed.iter_rows():
        expected = since + 1 + len(rows)
        if row.seq != expected:
            raise ImportRefused(parsed.source, row.line, f"event {row.seq} is out of order: expected event {expected}")
        if rows and row.prev_hash != rows[-1].hash:
            raise ImportRefused(
                parsed.source,
                row.line,
                f"event {row.seq}: its prev_hash is not the hash of event {rows[-1].seq} (line {rows[-1].line}): "
                "the hash chain is broken",
            )
        rows.append(row)
    return rows


def _check_rows(source: str, header: dict[str, Any], rows: list[Row], since: int, local: list[Any]) -> int | None:
    """The file's events (in order: `_read_in_order`) end at the header's last hash; the first
    event both copies hold that differs (the fork), or None when they agree."""
    if not rows:
        raise ImportRefused(source, 2, "the file has no events")
    declared = header["events"]
    if declared > len(rows):
        # A file cut short (a mail client's limit, a copy that stopped): said as a full
        # export's import says it, rather than as a header that does not match its events.
        last = since + len(rows)
        raise ImportRefused(
            source,
            rows[-1].line + 1,
            f"event {last + 1} missing: the file ends after event {last} but its header (line 1) declares "
            f"{declared} events, {since + 1}-{since + declared}; nothing was imported",
        )
    if header["last_hash"] != rows[-1].hash:
        raise ImportRefused(
            source, 1, f"the header's last_hash is not the hash of the last event (line {rows[-1].line})"
        )
    # Events both copies hold must be the same events: the first that differs is the fork.
    for row in rows:
        if row.seq > len(local):
            break
        if row.hash != local[row.seq - 1].hash:
            return row.seq
    return None


def _check_held(tracker: Tracker, cid: UUID, source: str, held: list[Row], local: list[Any]) -> None:
    """The file's events this copy holds already (`local`: its log, decoded) are in it as they
    are here: a line edited by hand that kept its hash would otherwise pass for this copy's
    event (`Nothing to import`)."""
    # Each line says beside its state what the state says (as for new events) ...
    decoded = _decode_rows(tracker, cid, source, held, None)
    for row, theirs in zip(held, decoded, strict=True):
        # ... and the state says what this copy's event says (its stored bytes may differ).
        if plain_content(theirs) != plain_content(local[row.seq - 1]):
            raise ImportRefused(
                source,
                row.line,
                f"event {row.seq} ({row.kind}): the line is not event {row.seq} as held here, though its hash "
                "is: the line was edited; nothing was imported",
            )


def _asked_at(events: list[Any], seq: int) -> Any | None:
    """The ActionAsked that opened the action event `seq` belongs to (PL1), if any."""
    for e in reversed(events[:seq]):
        if type(e).__name__ == "ActionAsked":
            return e
    return None


def _action_words(asked: Any | None, other: Any | None = None) -> str:
    """An action as a player typed it, and who asked: `move (units=['DE-SS3'], ...)` asked by anna.
    An input left empty is shown where the `other` copy's action gave it otherwise: `--units ""`
    (nobody searches) is not the default (all search), and the fork is that difference."""
    if asked is None:
        return "no action (the campaign's first events)"
    theirs = other.inputs if other is not None and other.name == asked.name else {}
    given = ", ".join(
        f"{k}={v!r}"
        for k, v in asked.inputs.items()
        if v not in (None, False, [], "") or (v is not None and k in theirs and theirs[k] != v)
    )
    # Who asked: the player on a server (PL1), or the nation it was asked for; at one table, nobody.
    who = asked.player or asked.nation
    return f"`{asked.name}" + (f" ({given})" if given else "") + "`" + (f" asked by {who}" if who else "")


def _fork_refusal(source: str, archive: str, fork: int, mine: list[Any], theirs: list[Any], line: int) -> ImportRefused:
    """The fork, as the players must see it to agree: each copy's first differing action, and
    the two ways to mend it (`archive`: the name this copy's history would be kept under)."""
    mine_asked, theirs_asked = _asked_at(mine, fork), _asked_at(theirs, fork)
    here = _action_words(mine_asked, theirs_asked)
    there = _action_words(theirs_asked, mine_asked)
    ways = f"the copies went different ways after event {fork - 1}: here {here}, in the file {there}"
    if here == there and mine_asked is not None and theirs_asked is not None:
        # Two players who typed the same thing at once (both closed the phase, both entered
        # the dice server's roll): the words alone would read as no difference at all.
        differing = _differing(mine_asked, theirs_asked)
        if differing:
            ways += f" (the same words; the two differ in {', '.join(differing)})"
        else:
            mine_at, theirs_at = _when(mine_asked.timestamp, theirs_asked.timestamp)
            ways += (
                f": the same action, recorded on each copy at its own time (here {mine_at}, in the file "
                f"{theirs_at}), so their events differ"
            )
    # The file named as the player gave it, to copy; from stdin, they pipe it again.
    file = "FILE" if source == STDIN else shlex.quote(source)
    return ImportRefused(
        source,
        line,
        f"fork at event {fork}: {ways}; nothing was imported. To mend it, agree which history goes on: "
        f"`tracker import {file} --resolve theirs` here keeps this copy's events after the fork as campaign "
        f"{archive!r} and goes on from the file's; `--resolve mine` keeps this copy's and writes the file the "
        "other side imports with --resolve theirs",
    )


def _when(mine: datetime, theirs: datetime) -> tuple[str, str]:
    """Two times to tell apart: to the second, or to the microsecond when the seconds agree."""
    spec = "seconds" if mine.replace(microsecond=0) != theirs.replace(microsecond=0) else "microseconds"
    return mine.isoformat(timespec=spec), theirs.isoformat(timespec=spec)


def _differing(mine: Any, theirs: Any) -> list[str]:
    """What two actions asked with the same words differ in (the fields of their ActionAsked)."""
    a, b = plain_content(mine), plain_content(theirs)
    return sorted(k for k in set(a) | set(b) if k != "action" and a.get(k, ...) != b.get(k, ...))


def archive_name(name: str, fork: int) -> str:
    """The name a copy's history after a fork is kept under when it gives way (`--resolve theirs`)."""
    return f"{name}-fork-{fork}"


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
