"""The file format of a campaign export (`tracker export`/`import`, see `tracker.transfer`), and
reading and checking a file of it: line by line as it is verified, every event decoded from its
stored state and compared with its line, the chain, the dice and every asked action re-run.

File format ``twtea-naval-tracker/events``, version 1
-----------------------------------------------------

UTF-8 text, one JSON object per line ("JSON lines"), lines separated by ``\\n`` (import also
reads ``\\r\\n``, and ``\\r`` alone); the file may be gzip-compressed as a whole.

Line 1 is the header::

    {"format": "twtea-naval-tracker/events", "version": 1, "campaign": "autumn",
     "events": 42, "last_hash": "<hash of the last event>",
     "exported_at": "2025-03-01T18:00:00+00:00", "exported_by": "twtea-naval-tracker 0.1.0"}

Lines 2 to events+1 hold the events in log order, one per line::

    {"seq": 3, "kind": "DiceRolled", "topic": "domain.campaign:Campaign.DiceRolled",
     "timestamp": "2025-03-01T17:59:58.123456+00:00",
     "prev_hash": "<hash of event 2>", "hash": "<this event's hash>",
     "event": {"action": 2, "roll": 1, "values": [6], ...},
     "state": "{\\"timestamp\\":{...},\\"prev_hash\\":...}"}

- ``seq`` is the event's version in the campaign (1, 2, 3, ... without gaps); ``kind`` the
  event class; ``topic`` the stored topic naming that class.
- ``event`` holds the event's recorded fields as plain JSON: every attribute except the
  originator id and version, the timestamp, the two hashes and ``originator_topic``. That is
  exactly what the hash covers, so anyone can check the chain with this file alone::

      hash = sha256(json.dumps({"prev": prev_hash, "kind": kind, "version": seq,
                                "timestamp": timestamp, "content": event},
                               sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                    .encode()).hexdigest()

  and each line's ``prev_hash`` is the previous line's ``hash`` (64 zeros for event 1).
- ``state`` is the stored row's state as it is (the eventsourcing JSONTranscoder's UTF-8 JSON,
  kept as a string so not a byte changes). With ``topic`` and ``seq`` it rebuilds the exact
  stored row; import checks that it decodes to exactly the ``kind``, ``timestamp``, hashes
  and ``event`` written beside it, so an edit to either one is refused.

Not in the file: the campaign's aggregate id (an import records the events under a new id,
which is not part of any hash), and the secret dice seeds. Seeds already revealed with
`tracker dice reveal` are in the log, so their rolls can be re-derived anywhere; rolls made
with a seed that is still secret are checked by the hash chain only, and an imported `auto`
campaign records further rolls with manual dice (``--dice``).
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Callable, Container, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any, BinaryIO, cast
from uuid import UUID

from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import get_topic

from domain.campaign import Campaign
from domain.chain import event_content, unhashed
from domain.errors import InputError, TrackerError
from tracker.interchange.compression import DAMAGED, broken_line, damage, decompressing, old_mac_lines
from tracker.interchange.shape import names_problem, shape_problem
from tracker.service.verify import VerifyReport, verify_events

# Long work reports its progress through an optional `progress(total)`: a context manager
# (such as `tracker.cli.common.progress` with its label bound) that yields `tick(n)`, called
# as each n more of the `total` items are done. The default, None, reports nothing.
Progress = Callable[[int], AbstractContextManager[Callable[[int], None]]]


def ticking(progress: Progress | None, total: int) -> AbstractContextManager[Callable[[int], None]]:
    if progress is None:
        return nullcontext(lambda _n: None)
    return progress(total)


FORMAT = "twtea-naval-tracker/events"
FORMAT_VERSION = 1

_HEADER_FIELDS: dict[str, type] = {"campaign": str, "events": int, "last_hash": str}
# What else a header may hold (checked in `parse_export` and `_check_since`): a field beyond
# these is refused, not ignored, as a field beyond `_EVENT_FIELDS` on an event's line is.
_HEADER_OPTIONAL: dict[str, type] = {"exported_at": str, "exported_by": str}
_HEADER_KNOWN = frozenset({"format", "version", "since", "since_hash", *_HEADER_FIELDS, *_HEADER_OPTIONAL})
_EVENT_FIELDS: dict[str, type] = {
    "seq": int,
    "kind": str,
    "topic": str,
    "timestamp": str,
    "prev_hash": str,
    "hash": str,
    "event": dict,
    "state": str,
}


class ImportRefused(TrackerError):
    """A well-formed export that does not verify: an edited, missing or reordered event (exit 1),
    saying that nothing was imported (where the problem does not say it already)."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        problem = problem if "nothing was imported" in problem else f"{problem}; nothing was imported"
        super().__init__(f"{source}: line {line}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


# ----- reading a file -----


@dataclass(frozen=True)
class Row:
    """One event line of an export."""

    line: int
    seq: int
    kind: str
    topic: str
    timestamp: str
    prev_hash: str
    hash: str
    event: dict[str, Any]
    state: str


# One line is one event; the largest, the campaign's creation, carries its scenario and
# ruleset twice (as fields and as stored state): a few hundred kilobytes for a big map.
MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_EVENTS = 100_000_000
_MAX_BLANK_LINES = 100


class ParsedExport:
    """An export read line by line as it is checked: the header at once, each event line
    when verification asks for it, so a file that goes wrong is refused where it does,
    without reading (or holding) the rest."""

    def __init__(self, source: str, header: dict[str, Any], lines: Iterator[tuple[int, bytes]]) -> None:
        self.source = source
        self.header = header
        self.rows: list[Row] = []
        self.last_line = 1
        self._lines = lines
        self._done = False

    def row(self, index: int) -> Row | None:
        """The event line at `index` (0 for event 1), read when first asked for; None past the end."""
        while len(self.rows) <= index and not self._done:
            try:
                number, raw = next(self._lines)
            except StopIteration:
                self._done = True
                break
            try:
                obj = _json_object(self.source, number, raw)
            except InputError as e:
                if len(self.rows) < self.header["events"]:
                    raise
                # Text after the last event: a mail's signature or footer, to remove.
                raise InputError(
                    f"{e}, after the {self.header['events']} events its header (line 1) declares: text was added "
                    "after the file's end (a mail signature or footer?); remove it, or send the file as an attachment"
                ) from None
            _check_fields(self.source, number, obj, _EVENT_FIELDS)
            if len(self.rows) >= self.header["events"]:
                raise ImportRefused(
                    self.source,
                    number,
                    f"event {obj['seq']} is beyond the {self.header['events']} events its header (line 1) declares",
                )
            self.rows.append(Row(line=number, **{k: obj[k] for k in _EVENT_FIELDS}))
            self.last_line = number
        return self.rows[index] if index < len(self.rows) else None

    def read_all(self) -> list[Row]:
        """Every event line (reading the rest of the file)."""
        while self.row(len(self.rows)) is not None:
            pass
        return self.rows

    def iter_rows(self) -> Iterator[Row]:
        index = 0
        while (row := self.row(index)) is not None:
            yield row
            index += 1


def _bad(source: str, line: int, problem: str) -> InputError:
    return InputError(f"{source}: line {line}: {problem}")


def _check_fields(
    source: str, line: int, obj: dict[str, Any], fields: dict[str, type], known: frozenset[str] | None = None
) -> None:
    """Each of `fields` there, of its JSON type; no field beyond `known` (default: `fields`)."""
    for key, kind in fields.items():
        if key not in obj:
            raise _bad(source, line, f"field {key!r} is missing")
        value = obj[key]
        # bool is an int to Python, never to this format.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise _bad(source, line, f"field {key!r} must be a JSON {_json_type(kind)}")
    for key in obj:
        if key not in (fields if known is None else known):
            # Nothing reads it: taken silently, it would look recorded and be lost.
            what = "a header" if line == 1 else "an event's line"
            raise _bad(source, line, f"field {str(key)[:60]!r} is not a field of {what} in this format")


def _json_type(kind: type) -> str:
    return {str: "string", int: "integer", dict: "object"}.get(kind, kind.__name__)


_SQLITE_MAGIC = b"SQLite format 3\x00"
# The source name of an export read from standard input (`import -`).
STDIN = "<stdin>"


def _lines(stream: BinaryIO, source: str) -> Iterator[tuple[int, bytes]]:
    """The file's lines with their numbers, one at a time, each at most MAX_LINE_BYTES long;
    blank lines only at the end."""
    number = 0
    blanks: list[int] = []
    while True:
        try:
            raw = stream.readline(MAX_LINE_BYTES + 1)
            if not number and (cr := old_mac_lines(raw, stream)) is not None:
                stream, raw = cr, cr.readline(MAX_LINE_BYTES + 1)
        except DAMAGED as e:
            # Found as the file is read: its events are checked, not written, until its end.
            raise InputError(f"{source}: {damage(e, number)}") from None
        if not raw:
            return
        number += 1
        if number == 1 and raw.startswith(_SQLITE_MAGIC):
            # A campaign database given where its export belongs: say so, not "not UTF-8 text".
            path = "DATABASE" if source == STDIN else source
            raise InputError(
                f"{source} is a SQLite database, not a campaign export: use it with --db {path}, "
                f"or write its export with `tracker --db {path} export FILE`"
            )
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise _bad(source, number, f"longer than {MAX_LINE_BYTES:,} bytes: not a line of a campaign export")
        if not raw.strip():
            blanks.append(number)
            if len(blanks) > _MAX_BLANK_LINES:
                raise _bad(source, blanks[0], "empty line")
            continue
        if blanks:
            raise _bad(source, blanks[0], "empty line")
        yield number, raw


def _json_object(source: str, number: int, raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(source, number, "not UTF-8 text") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        # Some of the parser's messages end in "at" ("Unterminated string starting at").
        where = f"{e.msg.removesuffix(' at')} at column {e.colno}"
        why = _broken_off(text, raw, e)
        if number == 1:
            raise _bad(source, 1, f"not a campaign export: no JSON header ({where}){why}") from None
        raise _bad(source, number, f"not valid JSON ({where}){why}") from None
    except RecursionError:
        raise _bad(source, number, "not valid JSON (nested too deeply)") from None
    except ValueError:
        # Python reads no integer of more than 4300 digits; no event of the tracker holds one.
        raise _bad(source, number, "a number there has more than 4300 digits") from None
    if not isinstance(obj, dict):
        raise _bad(source, number, "not a JSON object")
    return obj


def _broken_off(text: str, raw: bytes, error: json.JSONDecodeError) -> str:
    """What a line whose JSON runs on past its end says of the file (`broken_line`); an error
    inside the line says nothing more."""
    if error.pos < len(text.rstrip("\r\n")) and not error.msg.startswith("Unterminated string"):
        return ""
    return ": " + broken_line(raw.endswith(b"\n"))


def parse_export(data: bytes | BinaryIO, source: str) -> ParsedExport:
    """Read the header line and get ready to read the events one by one (`ParsedExport.row`).

    A line that is not what the format says is an input error (exit 2) naming the line; the
    event lines are checked as they are read. A gzip-compressed file is read as it is
    (`tracker.interchange.compression`).
    """
    stream = decompressing(io.BytesIO(data) if isinstance(data, bytes) else data, source)
    lines = _lines(stream, source)
    first = next(lines, None)
    if first is None:
        raise InputError(f"{source}: the file is empty, not a campaign export")
    # A file opened and saved again in some Windows editors begins with a byte order mark.
    header = _json_object(source, first[0], first[1].removeprefix(codecs.BOM_UTF8))
    if header.get("format") != FORMAT:
        raise _bad(source, 1, f"not a campaign export (its header must have format {FORMAT!r})")
    version = header.get("version")
    # `true == 1` and `1.0 == 1` in Python: a version is a whole number, neither of those.
    if version != FORMAT_VERSION or type(version) is not int:
        raise _bad(
            source, 1, f"export format version {version!r} is not supported (this tracker reads {FORMAT_VERSION})"
        )
    _check_fields(source, 1, header, _HEADER_FIELDS, _HEADER_KNOWN)
    for key, kind in _HEADER_OPTIONAL.items():
        if key in header and not isinstance(header[key], kind):
            raise _bad(source, 1, f"field {key!r} must be a JSON {_json_type(kind)}")
    if not 1 <= header["events"] <= MAX_EVENTS:
        raise _bad(source, 1, f"field 'events' must be between 1 and {MAX_EVENTS:,}")
    _check_since(source, header)
    return ParsedExport(source, header, lines)


def _check_since(source: str, header: dict[str, Any]) -> None:
    """A continuation's `since` (the event it follows) and `since_hash`, checked before either
    is quoted back, whichever database the file is imported into."""
    if "since" not in header:
        return
    since = header["since"]
    if type(since) is not int or not 0 <= since <= MAX_EVENTS:
        raise _bad(source, 1, f"field 'since' must be an event number, 0 to {MAX_EVENTS:,}")
    if since and not isinstance(header.get("since_hash"), str):
        raise _bad(source, 1, "field 'since_hash' must be a JSON string (the hash of event 'since')")


# ----- verifying it -----


@dataclass
class VerifiedExport:
    """Rows that rebuild the campaign exactly, with the verify report and the replayed campaign."""

    stored: list[StoredEvent]
    report: VerifyReport
    campaign: Campaign


class LineProblem(Exception):
    pass


def event_topics() -> dict[str, type[Campaign.Event]]:
    """The only topics an import may name: never import a module a file asks for."""
    topics: dict[str, type[Campaign.Event]] = {}
    for value in vars(Campaign).values():
        if isinstance(value, type) and issubclass(value, Campaign.Event) and value is not Campaign.Event:
            topics[get_topic(value)] = value
    return topics


def plain_content(event: Any) -> dict[str, Any]:
    """The recorded fields as they read back from JSON."""
    return cast(dict[str, Any], json.loads(json.dumps(event_content(dict(vars(event))), ensure_ascii=False)))


def decode_row(row: Row, mapper: Mapper[UUID], originator_id: UUID, topics: dict[str, Any]) -> Any:
    """Decode a row's stored state and check it says exactly what the row says beside it."""
    return decode_row_content(row, mapper, originator_id, topics)[0]


def decode_row_content(
    row: Row, mapper: Mapper[UUID], originator_id: UUID, topics: dict[str, Any]
) -> tuple[Any, dict[str, Any] | None]:
    """`decode_row`, and the event's content (`event_content`) when it was worked out on the
    way: the chain check then hashes it as it is."""
    cls = topics.get(row.topic)
    what = f"event {row.seq} ({row.kind})"
    if cls is None:
        raise LineProblem(f"{what}: topic {row.topic!r} is not an event of a campaign")
    if cls.__name__ != row.kind:
        raise LineProblem(f"{what}: its kind does not match its topic {row.topic!r}")
    if (row.seq == 1) != (row.kind == "Created"):
        raise LineProblem(f"{what}: a campaign's first event, and only that one, is its Created event")
    stored = StoredEvent(
        originator_id=originator_id, originator_version=row.seq, topic=row.topic, state=row.state.encode("utf-8")
    )
    try:
        event = mapper.to_domain_event(stored)
        attrs = vars(event)
        timestamp = attrs["timestamp"].isoformat()
        # What the stored state decodes to is plain JSON already (the usual case): compared as
        # it is, without a round trip through JSON; anything else in its plain form.
        content = event_content(attrs)
        same = content == row.event
        if not same:
            content = plain_content(event)
    except Exception as e:  # noqa: BLE001 - whatever breaks, the state was edited
        raise LineProblem(f"{what}: its state cannot be decoded ({type(e).__name__}): the line was edited") from e
    differing = [
        name
        for name, mine, stated in (
            ("timestamp", timestamp, row.timestamp),
            ("prev_hash", attrs.get("prev_hash"), row.prev_hash),
            ("hash", attrs.get("hash"), row.hash),
        )
        if mine != stated
    ]
    differing += sorted(k for k in set(content) | set(row.event) if content.get(k, ...) != row.event.get(k, ...))
    if differing:
        verb = "does" if len(differing) == 1 else "do"
        raise LineProblem(
            f"{what}: the line's {', '.join(differing)} {verb} not match its stored state: the line was edited"
        )
    # Line and state agree: what they say is checked before anything reads it.
    problem = shape_problem(event)
    if problem is not None:
        raise LineProblem(f"{what}: {problem}")
    return event, content if same else None


def verify_export(
    parsed: ParsedExport,
    mapper: Mapper[UUID],
    originator_id: UUID,
    local_seed: Callable[[int], str | None] = lambda epoch: None,
    tick: Callable[[int], None] = lambda _n: None,
) -> VerifiedExport:
    """Check every line, the hash chain, the dice and the header; replay the campaign.

    The first problem raises ImportRefused naming its line. The stored rows returned carry
    `originator_id`, which no hash covers. `tick(1)` is called as each event line has been
    checked.
    """
    source = parsed.source
    topics = event_topics()
    problems: dict[int, str] = {}
    decoded: list[Any] = []
    current = [1]

    contents: dict[int, dict[str, Any]] = {}

    def decode(row: Row) -> Any:
        try:
            event, content = decode_row_content(row, mapper, originator_id, topics)
        except LineProblem as e:
            problems[row.line] = str(e)
            raise
        if content is not None:
            contents[row.seq] = content
        decoded.append(event)
        return event

    def walk() -> Iterator[tuple[int, Callable[[], Any]]]:
        for row in parsed.iter_rows():
            current[0] = row.line
            yield row.seq, partial(decode, row)
            tick(1)  # the walk asks for the next line once this one is checked

    try:
        report = verify_events(walk(), local_seed, contents)
    except TrackerError:
        raise  # a line that cannot be read, or one beyond the header's count: named already
    except Exception as e:  # noqa: BLE001 - hashed but impossible content (e.g. an unknown epoch)
        raise ImportRefused(source, current[0], f"the event cannot be checked ({type(e).__name__}: {e})") from None
    if not report.ok:
        raise _refusal(parsed, report, current[0], problems)
    _check_complete(parsed)
    campaign = referee_events(source, parsed.rows, decoded, report)
    stored = [
        StoredEvent(
            originator_id=originator_id,
            originator_version=row.seq,
            topic=row.topic,
            state=row.state.encode("utf-8"),
        )
        for row in parsed.rows
    ]
    return VerifiedExport(stored, report, campaign)


def _refusal(parsed: ParsedExport, report: VerifyReport, current: int, problems: dict[int, str]) -> ImportRefused:
    """What a walk that found a problem refuses, naming the line: the line it was reading when
    it stopped there (a line out of place says where its rightful event is), else the line of
    the event the report names."""
    assert report.problem is not None
    source = parsed.source
    line_of = {row.seq: row.line for row in parsed.rows}
    if report.events >= len(parsed.rows):
        return ImportRefused(source, line_of.get(report.bad_version or 0, current), report.problem)
    line = current  # the walk stopped at the line it was reading
    problem = problems.get(line, report.problem)
    expected = report.events + 1
    here = parsed.rows[line - 2].seq
    later: list[int] = []
    if here != expected:
        # Reordered lines? Look further on for the event that belongs here.
        try:
            rest = parsed.read_all()
        except TrackerError:
            rest = parsed.rows  # the rest of the file is unreadable: say what we know
        later = [row.line for row in rest[line - 1 :] if row.seq == expected]
    if here != expected and later:
        problem = (
            f"event {here} is out of order: event {expected} belongs on this line "
            f"but is on line {later[0]} (lines were reordered)"
        )
    return ImportRefused(source, line, problem)


def _check_complete(parsed: ParsedExport) -> None:
    """The file holds every event its header declares, ending with the header's last hash."""
    source = parsed.source
    declared = parsed.header["events"]
    count = len(parsed.rows)
    if count == 0:
        raise ImportRefused(source, 2, "the file has no events (event 1, the campaign's creation, is missing)")
    if declared > count:
        raise ImportRefused(
            source,
            parsed.last_line + 1,
            f"event {count + 1} missing: the file ends after event {count} but its header (line 1) "
            f"declares {declared} events",
        )
    if parsed.header["last_hash"] != parsed.rows[-1].hash:
        raise ImportRefused(
            source, 1, f"the header's last_hash is not the hash of the last event (line {parsed.rows[-1].line})"
        )


def referee_events(source: str, rows: Sequence[Row], decoded: list[Any], report: VerifyReport) -> Campaign:
    """Re-run every asked action of the file through the referee (as `verify` does) and fold
    the campaign; the first event the referee does not record as the file does is refused,
    naming its line."""
    from tracker.service.referee import Mismatch, RefereeResult, referee_log

    line_of = {row.seq: row.line for row in rows}
    _check_unasked_names(source, line_of, decoded)
    result = RefereeResult()
    try:
        # The chain check hashed every event already: the actions run again record events
        # compared without their hashes, so none is hashed twice. No state in the middle of
        # an action is asked for (no `stops`): each re-run moves the state on itself.
        with unhashed():
            referee_log(decoded, stops=(), result=result)
    except Mismatch as e:
        raise ImportRefused(source, line_of.get(e.version, rows[0].line), str(e)) from None
    except Exception as e:  # noqa: BLE001 - the import must never record what cannot be loaded
        seq = result.at or 1
        kind = type(decoded[seq - 1]).__name__ if seq <= len(decoded) else "?"
        # The tracker's own refusal (a recorded scenario that does not load) says what is wrong.
        why = f": {e}" if isinstance(e, TrackerError) else f" ({type(e).__name__}: {e})"
        raise ImportRefused(
            source, line_of.get(seq, rows[-1].line), f"event {seq} ({kind}) cannot be applied{why}"
        ) from None
    report.actions_refereed = result.actions_checked
    report.actions_unasked = result.unasked_actions
    assert isinstance(result.campaign, Campaign)
    return result.campaign


def _check_unasked_names(source: str, line_of: dict[int, int], decoded: list[Any]) -> None:
    """The names held by the events the referee applies as recorded, running no action again
    (those of an action recorded before the log recorded what was asked, or written so by a
    script): each a nation, zone, technology, unit type or phase of the campaign, or the line is
    refused naming the field. A log that records what was asked from its creation on has none
    of these events, and costs nothing here."""
    from domain.campaign.state import scenario_from_recorded
    from domain.ruleset import ruleset_from_recorded

    unasked = []
    for event in decoded[1:]:
        if type(event).__name__ == "ActionAsked":
            break  # from here on every event is an action's, which the referee runs again
        # Not the creation's own (F8), which the referee works out again; nor one this database
        # recorded already (a continuation's), which is checked as it is.
        if event.action != 1 and event.originator_version in line_of:
            unasked.append(event)
    if not unasked:
        return
    created = decoded[0]
    try:
        ruleset = ruleset_from_recorded(created.ruleset)
        scenario = scenario_from_recorded(created.scenario, ruleset)
    except Exception:  # noqa: BLE001 - the referee refuses the campaign's creation itself
        return
    known: dict[str, Container[str]] = {
        "nation": scenario.nations,
        "zone": scenario.game_map.adjacency,
        "technology": ruleset.technologies,
        "unit type": ruleset.units,
        "phase": ruleset.phases,
    }
    for event in unasked:
        problem = names_problem(event, known)
        if problem is not None:
            seq = event.originator_version
            raise ImportRefused(source, line_of[seq], f"event {seq} ({type(event).__name__}): {problem}")
