"""Export a campaign's event log to a file and import it into any database (`tracker export`/`import`).

The file format, and reading and verifying a file, are in `tracker.export_format`.

Import refuses, naming the line, a file that is not valid (bad JSON, a missing field: exit 2)
or does not verify (an edited, deleted or reordered event, a broken chain, a header that does
not match its events: exit 1). It writes the campaign's name and all its events in one
transaction, so a failure never leaves half a campaign.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from importlib import metadata
from typing import TYPE_CHECKING, Any, BinaryIO
from uuid import UUID

import sqlalchemy.exc
from eventsourcing.persistence import IntegrityError, StoredEvent

from domain.campaign import Campaign
from domain.errors import InputError, TrackerError
from tracker.interchange.format import (
    FORMAT,
    FORMAT_VERSION,
    ImportRefused,
    Progress,
    event_topics,
    parse_export,
    plain_content,
    ticking,
    verify_export,
)
from tracker.service.application import Tracker
from tracker.service.verify import verify_events
from tracker.storage.mapper import uncompressed
from tracker.storage.store import check_campaign_name

if TYPE_CHECKING:
    from tracker.interchange.pbem import Continued, KeptMine, Mended


class ExportRefused(TrackerError):
    """The campaign's own log does not verify, so its export could not be imported (exit 1)."""


# ----- export -----


@dataclass(frozen=True)
class ExportResult:
    campaign: str
    events: int
    last_hash: str
    dice_mode: str
    rolls_unrevealed: int  # auto rolls an importer cannot re-derive: their seed is still secret
    header: str  # the file's first line, without its newline
    body: Any = field(repr=False)  # a binary file holding the event lines (see `chunks`)
    since: int = 0  # a continuation: the events after this one
    head_seq: int = 0

    def chunks(self, size: int = 1 << 20) -> Iterator[bytes]:
        """The export file as UTF-8, header first, a megabyte at a time: a long log's export is
        written without ever being held whole."""
        yield (self.header + "\n").encode("utf-8")
        self.body.seek(0)
        while block := self.body.read(size):
            yield block

    @property
    def text(self) -> str:
        """The whole export as one string (for a short log; `chunks` for any)."""
        return b"".join(self.chunks()).decode("utf-8")


def _tool_version() -> str:
    try:
        return f"twtea-naval-tracker {metadata.version('twtea-naval-tracker')}"
    except metadata.PackageNotFoundError:
        return "twtea-naval-tracker"


def _registered_name(tracker: Tracker, cid: UUID) -> str:
    for name, registered in tracker.registry.names():
        if registered == str(cid):
            return name
    return tracker.load(cid).name


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _event_line(s: StoredEvent, event: Any, state: str) -> str:
    return _line(
        {
            "seq": s.originator_version,
            "kind": type(event).__name__,
            "topic": s.topic,
            "timestamp": event.timestamp.isoformat(),
            "prev_hash": event.prev_hash,
            "hash": event.hash,
            "event": plain_content(event),
            "state": state,
        }
    )


# Export lines kept in memory before they go to a temporary file.
_SPOOL_BYTES = 4 << 20


@dataclass
class _ExportWriter:
    """One pass over a campaign's stored log as import will check it: each event decoded once,
    checked, written as a line when it comes after `since`, and applied."""

    tracker: Tracker
    name: str
    since: int
    topics: dict[str, type[Campaign.Event]] = field(default_factory=event_topics)
    # The event lines, in memory up to a few megabytes and in a temporary file beyond; the
    # result hands it on (a context manager would close it before the file is written).
    body: Any = field(default_factory=lambda: tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES))  # noqa: SIM115
    written: int = 0
    # Auto rolls written, by dice epoch: those of an epoch not yet revealed are unrevealed.
    auto_rolls: Counter[int] = field(default_factory=Counter)
    campaign: Any = None  # the campaign the events written so far fold to
    since_hash: str = ""

    def refused(self, problem: str) -> ExportRefused:
        return ExportRefused(
            f"campaign {self.name!r} does not verify, so its export would be refused: {problem} (see `tracker verify`)"
        )

    def write(self, s: StoredEvent) -> Any:
        event = self.tracker.decode(s)
        kind = type(event).__name__
        seq = s.originator_version
        if self.topics.get(s.topic) is not type(event):
            raise self.refused(f"event {seq} ({kind}): topic {s.topic!r} is not an event of a campaign")
        if (seq == 1) != (kind == "Created"):
            raise self.refused(
                f"event {seq} ({kind}): a campaign's first event, and only that one, is its Created event"
            )
        if isinstance(event, Campaign.DiceRolled) and event.source == "auto" and seq > self.since:
            self.auto_rolls[event.epoch] += 1
        if seq == self.since:
            self.since_hash = event.hash
        try:
            # An export holds each event's JSON, however the database keeps it (`COMPRESSED`).
            state = uncompressed(s).state.decode("utf-8")
        except UnicodeDecodeError:
            raise ExportRefused(f"event {seq}: its stored state is not UTF-8 JSON (compressed or encrypted?)") from None
        if seq > self.since:
            self.body.write((_event_line(s, event, state) + "\n").encode("utf-8"))
            self.written += 1
        try:
            self.campaign = event.mutate(self.campaign)
        except Exception as e:  # noqa: BLE001 - import would refuse an event it cannot apply
            raise self.refused(f"event {seq} ({kind}) cannot be applied ({type(e).__name__}: {e})") from None
        return event


def export_campaign(tracker: Tracker, cid: UUID, progress: Progress | None = None, since: int = 0) -> ExportResult:
    """The campaign's export, checked while it is written the way import checks it: one pass
    over the log, read a page at a time, decodes each event once, verifies it and applies it.
    The event lines go to a temporary file (see `ExportResult.chunks`), so a long log's export
    costs no more memory than a short one's.

    `progress` (see `Progress`) gets the campaign's event count and a tick per event written."""
    name = _registered_name(tracker, cid)
    last = tracker.recorder.last_version(cid)
    if not last:
        raise InputError(f"campaign {cid} has no events")
    if not 0 <= since < last:
        raise InputError(
            f"--since {since}: campaign {name!r} ends at event {last}, so there is nothing after it to export"
        )
    writer = _ExportWriter(tracker, name, since)
    head = [0]

    def walk(tick: Callable[[int], None]) -> Iterator[tuple[int, Callable[[], Any]]]:
        for page in tracker.recorder.event_pages(cid):
            for s in page:
                head[0] = s.originator_version
                yield s.originator_version, partial(writer.write, s)
                tick(1)  # the walk asks for the next event once this one is written and checked

    try:
        with ticking(progress, last) as tick:
            report = verify_events(walk(tick), lambda epoch: tracker.seed_for(cid, epoch))
    except ExportRefused:
        writer.body.close()
        raise
    except Exception as e:  # noqa: BLE001 - hashed but impossible content (e.g. an unknown epoch)
        writer.body.close()
        raise writer.refused(f"the log cannot be checked ({type(e).__name__}: {e})") from None
    if not report.ok:
        writer.body.close()
        raise writer.refused(str(report.problem))
    campaign = writer.campaign
    assert isinstance(campaign, Campaign)
    header = _export_header(name, writer.written, campaign.last_hash, since, writer.since_hash)
    return ExportResult(
        campaign=name,
        events=writer.written,
        last_hash=campaign.last_hash,
        dice_mode=campaign.dice_mode,
        rolls_unrevealed=sum(n for epoch, n in writer.auto_rolls.items() if epoch >= campaign.dice_epoch),
        header=_line(header),
        body=writer.body,
        since=since,
        head_seq=head[0],
    )


def _export_header(name: str, events: int, last_hash: str, since: int, since_hash: str) -> dict[str, Any]:
    header: dict[str, Any] = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "campaign": name,
        "events": events,
        "last_hash": last_hash,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "exported_by": _tool_version(),
    }
    if since:
        # A continuation (PBEM by file): the events after `since`, and the event they follow.
        header.update(since=since, since_hash=since_hash)
    return header


# ----- import -----


@dataclass(frozen=True)
class ImportResult:
    campaign: str
    campaign_id: UUID
    exported_as: str
    recorded_name: str
    events: int
    last_hash: str
    dice_mode: str
    rolls_checked: int
    rolls_unchecked: int
    # What was checked of the dice, as `tracker verify` says it (auto rolls re-derived, typed
    # rolls checked for order and range).
    dice_checked: str


def _has_events(tracker: Tracker, cid: UUID) -> bool:
    return bool(tracker.app.recorder.select_events(cid, limit=1))


def _holding(tracker: Tracker, since: int, since_hash: object) -> list[str]:
    """The campaigns here whose event `since` has hash `since_hash` (a continuation's header):
    the copies a file continues, whatever name they were imported under."""
    found = []
    for name, cid in tracker.registry.names():
        at = tracker.app.recorder.select_events(UUID(cid), gt=since - 1, lte=since)
        if at and tracker.decode(at[0]).hash == since_hash:
            found.append(name)
    return found


def _check_name(name: str, source: str, from_file: bool) -> str:
    """The campaign name to import under: `--as`, or else the name in the file's header, whose
    refusal names the file and the way around it."""
    try:
        return check_campaign_name(name)
    except InputError as e:
        if from_file:
            raise InputError(
                f"{source}: line 1: the header's campaign name cannot be used: {e}; name it with --as NAME"
            ) from None
        raise InputError(f"--as: {e}") from None


def import_campaign(
    tracker: Tracker,
    data: bytes | BinaryIO,
    source: str,
    as_name: str | None = None,
    progress: Progress | None = None,
    resolve: str | None = None,
) -> ImportResult | Continued | Mended | KeptMine:
    """Verify an export and record it as a new campaign, name and events in one transaction;
    a file for a campaign that exists here continues it instead (`tracker.pbem`).

    `progress` (see `Progress`) gets the event count the header declares and a tick per event
    line checked; they are then written in one transaction."""
    parsed = parse_export(data, source)
    name = _check_name(as_name if as_name is not None else parsed.header["campaign"], source, as_name is None)
    taken = f"campaign {name!r} already exists in {tracker.safe_url}; import under another name with --as NAME"
    registered = tracker.registry.lookup(name)
    since = parsed.header.get("since", 0)
    if registered is not None and _has_events(tracker, UUID(registered)):
        existing = UUID(registered)
        first = parsed.row(0)
        created = tracker.app.recorder.select_events(existing, limit=1)[0]
        if since == 0 and first is not None and first.hash != tracker.decode(created).hash:
            raise InputError(taken)
        from tracker.interchange.pbem import continue_campaign

        return continue_campaign(tracker, existing, name, parsed, progress, resolve)
    if since:
        holders = _holding(tracker, since, parsed.header.get("since_hash"))
        # A copy imported under another name (`--as`) is found by the event the file continues.
        hint = (
            f"campaign {holders[0]!r} here holds event {since} it continues: name it with --as {holders[0]}"
            if len(holders) == 1
            else "import the campaign's full export first (or name it with --as); or is your copy in another "
            "database? name it with --db FILE"
        )
        raise ImportRefused(
            source,
            1,
            f"this file continues campaign {name!r} after event {since}, and {tracker.safe_url} has no campaign "
            f"{name!r}: {hint}",
        )
    # A name left registered by a creation that crashed before its first event is reused,
    # as `tracker new` does.
    cid = UUID(registered) if registered is not None else uuid.uuid4()
    with ticking(progress, parsed.header["events"]) as tick:
        verified = verify_export(parsed, tracker.app.mapper, cid, tick=tick)

    try:
        tracker.append_log(cid, name, verified.stored, verified.campaign, registered is not None)
    except (IntegrityError, sqlalchemy.exc.IntegrityError):
        raise InputError(f"{taken} (created while this import ran)") from None
    count = len(verified.stored)
    return ImportResult(
        campaign=name,
        campaign_id=cid,
        exported_as=parsed.header["campaign"],
        recorded_name=verified.campaign.name,
        events=count,
        last_hash=parsed.rows[-1].hash,
        dice_mode=verified.campaign.dice_mode,
        rolls_checked=verified.report.rolls_checked,
        rolls_unchecked=verified.report.rolls_unchecked,
        dice_checked=verified.report.dice_checked(),
    )
