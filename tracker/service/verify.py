"""`tracker verify`: walk a campaign's stored log, check the hash chain, re-derive auto dice, and
list every dice switch, override and reroll (D4, RK3); check its head, snapshots, views, the
registry's rows and its dice seed against that log. A roll from the wrong source without a
recorded override is a D4 problem.

What one database proves. The chain shows any edited, deleted, inserted or reordered row,
unless whoever edited it also re-hashed every event after it. A re-hashed edit is caught by
what the forger must rewrite as well: a head posted before (`--head`, the one anchor outside
the database); the referee, which runs every asked action again (any decision, die or rule);
the auto dice, derived from their seed; the snapshots (the hash of their last event); and the
views, written from the log as it was (each event index row's kind and summary, which shows
who asked an action, and the hash of the last event the views read). An action's time is
neither decided by the referee nor shown by the index: its edit is caught by the views' last
hash, and named where it breaks the order of one action's events (one process stamps them in
order). Across actions the stamps come from different machines' clocks (server processes,
PBEM copies), so a step back there is only noted. The registry is checked against the log: a
campaign's registered name is its Created event's or the one its import was given; a seed
missing here is excused only where the log shows the campaign served (an event recorded
through a league server: a Created event naming its creator, an action naming who asked,
PL1) or an import mark names a head the log holds.

What it cannot prove. Whoever can write every table and knows the format can re-hash the
chain and rewrite the snapshots and views to match: only a head posted earlier, or another
copy's export, shows that. PBEM copies share one log, so no event can say which copy imported
it: an import mark written by hand with a head of the log and the registered name (or in the
form an earlier tracker wrote, which names no head) passes for an import's, and then the
missing seed is excused; the rolls it would check are reported as not re-derived, and the
copy that holds the seed still checks them. Before a served campaign records its first event
through the server, the log cannot tell its seed moved to the key store from a deleted one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent
from sqlalchemy import create_engine, func, inspect, select
from sqlalchemy.engine import Connection
from sqlalchemy.pool import StaticPool

from domain.chain import GENESIS, chain_hash, event_content, unhashed
from domain.dice import commitment, derive_roll
from domain.errors import InputError
from projections import board, schema, views
from projections.summary import summary

if TYPE_CHECKING:
    from tracker.service.application import Tracker
    from tracker.storage.store import ImportMark


@dataclass
class VerifyReport:
    events: int = 0
    rolls_checked: int = 0
    rolls_unchecked: int = 0
    problem: str | None = None
    bad_version: int | None = None
    notes: list[str] = field(default_factory=list)
    # D4, RK3: what the group agreed to outside the normal course, each {seq, kind, text}.
    switches: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)
    rerolls: list[dict[str, Any]] = field(default_factory=list)
    # D4: rolls from a source the campaign did not use, with no override (older logs may hold some).
    dice_problems: list[str] = field(default_factory=list)
    # The head: the last event's sequence number and hash, for a group to post and check later.
    head_seq: int = 0
    head_hash: str = GENESIS
    commitments: list[str] = field(default_factory=list)
    seeds_revealed: int = 0
    snapshots_checked: int = 0
    projection_rows_checked: int | None = None
    # Actions run again by the referee with their recorded inputs and dice, and those recorded
    # before the log held what was asked (checked by their hashes only).
    actions_refereed: int = 0
    actions_unasked: int = 0
    # Events stamped before the event they follow, in another action (see _LogWalk.check_time).
    stamped_back: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The log is intact: chain, order, dice derivation (D4 problems are listed apart)."""
        return self.problem is None

    def as_json(self) -> dict[str, Any]:
        """What `tracker verify --json` prints (and the server's /verify answers)."""
        return {
            "ok": self.ok and not self.dice_problems,
            "events": self.events,
            "head": {"seq": self.head_seq, "hash": self.head_hash},
            "rolls_checked": self.rolls_checked,
            "rolls_unchecked": self.rolls_unchecked,
            "snapshots_checked": self.snapshots_checked,
            "actions_refereed": self.actions_refereed,
            "actions_checked_by_hash_only": self.actions_unasked,
            "projection_rows_checked": self.projection_rows_checked,
            "problem": self.problem,
            "bad_event": self.bad_version,
            "dice_switches": self.switches,
            "overrides": self.overrides,
            "rerolls": self.rerolls,
            "dice_problems": self.dice_problems,
            "notes": self.notes,
        }


class _Roll(NamedTuple):
    """An auto roll as re-deriving it needs it."""

    epoch: int
    roll: int
    values: tuple[int, ...]
    faces: int


class _Broken(Exception):
    """The walk found the first problem of a log: the event it names and what is wrong."""

    def __init__(self, version: int, problem: str) -> None:
        super().__init__(problem)
        self.version = version
        self.problem = problem


@dataclass
class _LogWalk:
    """What a walk over a log has learnt so far: the chain's last hash, the dice epochs and
    their seeds, the rolls seen, and the dice source in force with its agreed exceptions."""

    report: VerifyReport
    prev_hash: str = GENESIS
    expected_version: int = 1
    commitments: list[str] = field(default_factory=list)
    revealed: dict[int, str] = field(default_factory=dict)
    # Auto rolls to re-derive once the seeds are known: what each needs, not the whole event.
    rolls: list[tuple[int, _Roll]] = field(default_factory=list)
    roll_count: int = 0
    mode: str = "auto"
    typed_allowed: set[int] = field(default_factory=set)  # actions with a TypedDiceAccepted event
    redo_actions: set[int] = field(default_factory=set)
    seen_rolls: dict[int, tuple[int, list[int]]] = field(default_factory=dict)
    # The event before: when it was stamped, its action and kind.
    prev_time: datetime | None = None
    prev_action: Any = None
    prev_kind: str = ""
    # Contents already worked out by whoever decoded the events (an import, comparing each
    # with its line), by version: hashed as they are instead of worked out again.
    contents: dict[int, dict[str, Any]] = field(default_factory=dict)

    def step(self, version: int, decode: Callable[[], Any]) -> Any:
        """Take the next stored event: its place, its link in the chain, its time, then what it
        says; returns the event."""
        self.check_place(version)
        event = self.read(version, decode)
        kind = type(event).__name__
        stored_hash = self.check_link(version, kind, event)
        self.check_time(version, kind, event)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, version, event)
        self.prev_hash = stored_hash
        self.expected_version += 1
        self.report.events += 1
        self.report.head_seq, self.report.head_hash = version, stored_hash
        return event

    def check_place(self, version: int) -> None:
        expected = self.expected_version
        if version == expected:
            return
        if version > expected:
            missing = f"event {expected}" if version == expected + 1 else f"events {expected}-{version - 1}"
            raise _Broken(expected, f"{missing} missing: the log jumps to event {version}")
        raise _Broken(version, f"event {version} is out of order (expected event {expected})")

    def read(self, version: int, decode: Callable[[], Any]) -> Any:
        try:
            return decode()
        except Exception as e:  # noqa: BLE001 - any decoding failure means an edited row
            raise _Broken(
                version, f"event {version} cannot be read ({type(e).__name__}): the stored row was edited"
            ) from None

    def check_link(self, version: int, kind: str, event: Any) -> Any:
        """The event follows the one before it and its content matches its hash; returns the hash."""
        attrs = dict(vars(event))
        stored_hash = attrs.get("hash")
        if attrs.get("prev_hash") != self.prev_hash:
            raise _Broken(
                version,
                f"event {version} ({kind}) does not follow event {version - 1}: "
                "an event before it was edited, deleted or reordered",
            )
        content = self.contents.pop(version, None)
        if content is None:
            content = event_content(attrs)
        digest = chain_hash(self.prev_hash, kind, version, event.timestamp, content)
        if digest != stored_hash:
            raise _Broken(version, f"event {version} ({kind}) was edited: its content does not match its hash")
        return stored_hash

    def check_time(self, version: int, kind: str, event: Any) -> None:
        """One process stamps the events of an action one after another, so within an action
        time never goes back: a re-hashed edit of an action's time that puts it after its own
        events is named here. Across actions the stamps come from the clocks of whichever
        machines recorded them (server processes, PBEM copies), so a step back is only noted."""
        stamp, action = event.timestamp, getattr(event, "action", None)
        before = self.prev_time
        if before is not None and stamp < before - _CLOCK_SLACK:
            if action is not None and action == self.prev_action:
                raise _Broken(
                    version - 1,
                    f"event {version - 1} ({self.prev_kind}) is stamped {before.isoformat()}, after event {version} "
                    f"({kind}) of the same action ({stamp.isoformat()}): one process stamps an action's events "
                    "in order, so one of these times was edited",
                )
            self.report.stamped_back.append(version)
        self.prev_time, self.prev_action, self.prev_kind = stamp, action, kind

    def created(self, version: int, event: Any) -> None:
        self.commitments.append(event.seed_commitment)
        self.mode = event.dice_mode

    def dice_source_switched(self, version: int, event: Any) -> None:
        self.mode = event.mode
        self.report.switches.append(
            {"seq": version, "kind": "DiceSourceSwitched", "text": f"{event.previous} -> {event.mode}: {event.reason}"}
        )

    def typed_dice_accepted(self, version: int, event: Any) -> None:
        self.typed_allowed.add(event.action)
        self.report.overrides.append(
            {
                "seq": version,
                "kind": "TypedDiceAccepted",
                "text": f"typed dice from roll {event.roll}, agreed by {', '.join(event.agreed_by)}: {event.reason}",
            }
        )

    def action_undone(self, version: int, event: Any) -> None:
        self.mode = event.restored.get("dice_mode", self.mode)
        if not event.override:
            return
        agreed = ", ".join(event.agreed_by) or "nobody recorded"
        taken = f", taking back roll(s) {', '.join(map(str, event.rolls))}" if event.rolls else ""
        self.report.overrides.append(
            {
                "seq": version,
                "kind": "ActionUndone",
                "text": f"undo of events {event.undone_from}-{event.undone_to}"
                f"{taken}, agreed by {agreed}: {event.reason}",
            }
        )

    def action_redone(self, version: int, event: Any) -> None:
        self.redo_actions.add(event.action)

    def dice_rerolled(self, version: int, event: Any) -> None:
        self.report.rerolls.append(
            {
                "seq": version,
                "kind": "DiceRerolled",
                "text": f"roll {event.roll} rerolls roll {event.rerolls} (taken back by event {event.undo})",
            }
        )

    def seed_revealed(self, version: int, event: Any) -> None:
        if not 0 <= event.epoch < len(self.commitments) or event.epoch != len(self.revealed):
            raise _Broken(version, f"event {version} (SeedRevealed) names dice epoch {event.epoch} out of order")
        if commitment(event.seed) != self.commitments[event.epoch]:
            raise _Broken(version, f"event {version} (SeedRevealed): seed does not match its commitment")
        self.revealed[event.epoch] = event.seed
        self.commitments.append(event.next_commitment)

    def dice_rolled(self, version: int, event: Any) -> None:
        if not 0 <= event.epoch < len(self.commitments):
            raise _Broken(version, f"event {version} (DiceRolled) names unknown dice epoch {event.epoch}")
        if event.action in self.redo_actions and event.roll in self.seen_rolls:
            # RK4: a redo re-records a roll with its number; it must say what the roll said.
            if self.seen_rolls[event.roll] != (event.epoch, list(event.values)):
                raise _Broken(version, f"event {version} (DiceRolled) redoes roll {event.roll} with other values")
        elif event.roll != self.roll_count + 1:
            raise _Broken(
                version,
                f"event {version} (DiceRolled) is roll {event.roll}, expected roll {self.roll_count + 1}",
            )
        else:
            self.roll_count += 1
            self.seen_rolls[event.roll] = (event.epoch, list(event.values))
            if event.source == "auto":
                self.rolls.append((version, _Roll(event.epoch, event.roll, tuple(event.values), event.faces)))
        if event.source != self.mode and not (event.source == "manual" and event.action in self.typed_allowed):
            self.report.dice_problems.append(
                f"D4: event {version} (roll {event.roll}) has {event.source} dice in a campaign of {self.mode} dice, "
                "with no recorded switch or override"
            )
        if event.values and not all(1 <= v <= event.faces for v in event.values):
            raise _Broken(version, f"event {version} (DiceRolled): a die is outside 1..{event.faces}")

    def finish(self, local_seed: Callable[[int], str | None]) -> VerifyReport:
        """The report once every event is taken (see `verify_events`)."""
        return _finish(self, local_seed)

    def rederive_rolls(self, local_seed: Callable[[int], str | None]) -> None:
        """Every auto roll whose seed is revealed in the log, or still held here, must be what
        the seed gives at its position."""
        report = self.report
        for version, roll in self.rolls:
            seed = self.revealed.get(roll.epoch)
            if seed is None:
                candidate = local_seed(roll.epoch)
                if candidate is not None and commitment(candidate) == self.commitments[roll.epoch]:
                    seed = candidate
            if seed is None:
                report.rolls_unchecked += 1
                continue
            expected = derive_roll(seed, roll.roll, len(roll.values), roll.faces)
            if list(roll.values) != expected:
                raise _Broken(
                    version,
                    f"event {version} (DiceRolled, roll {roll.roll}): values {list(roll.values)} "
                    f"are not what the seed gives ({expected})",
                )
            report.rolls_checked += 1


# How far the clock may step back within one action (a wall clock set back while an action
# waits for typed dice) before its times count as edited.
_CLOCK_SLACK = timedelta(seconds=1)

# What each kind of event tells the walk; the others are only links of the chain.
_HANDLERS: dict[str, Callable[[_LogWalk, int, Any], None]] = {
    "Created": _LogWalk.created,
    "DiceSourceSwitched": _LogWalk.dice_source_switched,
    "TypedDiceAccepted": _LogWalk.typed_dice_accepted,
    "ActionUndone": _LogWalk.action_undone,
    "ActionRedone": _LogWalk.action_redone,
    "DiceRerolled": _LogWalk.dice_rerolled,
    "SeedRevealed": _LogWalk.seed_revealed,
    "DiceRolled": _LogWalk.dice_rolled,
}


def verify_events(
    events: Iterable[tuple[int, Callable[[], Any]]],
    local_seed: Callable[[int], str | None] = lambda epoch: None,
    contents: dict[int, dict[str, Any]] | None = None,
) -> VerifyReport:
    """Check a log given as (stored version, decode) pairs in stored order.

    `local_seed(epoch)` supplies seeds this database still keeps secret; revealed seeds
    come from the log itself. The first problem found stops the walk and names the event.
    `contents`, filled in by `decode` as it goes, holds the event contents (`event_content`)
    it worked out already, by version: each is taken from there rather than worked out again.
    """
    walk = _LogWalk(VerifyReport())
    if contents is not None:
        walk.contents = contents
    try:
        for version, decode in events:
            walk.step(version, decode)
    except _Broken as broken:
        return _fail(walk.report, broken.version, broken.problem)
    return walk.finish(local_seed)


def _finish(walk: _LogWalk, local_seed: Callable[[int], str | None]) -> VerifyReport:
    """The end of a walk over a whole log: the dice re-derived, and what the report notes."""
    report = walk.report
    report.commitments = list(walk.commitments)
    report.seeds_revealed = len(walk.revealed)
    try:
        walk.rederive_rolls(local_seed)
    except _Broken as broken:
        return _fail(report, broken.version, broken.problem)
    if report.rolls_unchecked:
        report.notes.append(
            f"{report.rolls_unchecked} auto roll(s) not re-derived: their seed is neither revealed nor held here"
        )
    if report.stamped_back:
        report.notes.append(
            f"{len(report.stamped_back)} event(s) stamped before the event they follow, the first event "
            f"{report.stamped_back[0]}: recorded on machines whose clocks disagree, or a time was edited"
        )
    return report


def _fail(report: VerifyReport, version: int, problem: str) -> VerifyReport:
    report.problem = problem
    report.bad_version = version
    return report


# ----- a campaign in its database: the log, its head, snapshots, views and dice seed -----


@dataclass(frozen=True)
class Head:
    """A posted head: the sequence number and hash of the last event someone saw."""

    seq: int
    hash: str

    @classmethod
    def parse(cls, text: str) -> Head:
        seq, sep, digest = text.strip().partition(":")
        digest = digest.strip().lower()
        if not sep or not seq.strip().isdigit() or not 16 <= len(digest) <= 64:
            raise InputError(f"--head {text!r}: expected SEQ:HASH, e.g. 42:3f9a... (at least 16 hex digits)")
        if any(c not in "0123456789abcdef" for c in digest):
            raise InputError(f"--head {text!r}: the hash must be hexadecimal")
        number = int(seq)
        if not 1 <= number <= 2**31 - 1:
            raise InputError(f"--head {text!r}: the sequence number must be between 1 and {2**31 - 1}")
        return cls(number, digest)


def verify_campaign(
    t: Tracker,
    cid: UUID,
    head: Head | None = None,
    projections: bool = False,
    tick: Callable[[int], None] | None = None,
) -> VerifyReport:
    """Everything `tracker verify` checks for one campaign, stopping at the first problem:

    the hash chain and auto dice (`verify_events`); a posted head; index rows and projection
    positions beyond the last event (a cut tail); every asked action re-run and every snapshot
    against the replay of the events up to its version; the event index and the views' last
    hash against the log; the registry's rows (name, import mark) against the log; the
    campaign's current dice seed against its commitment, or the log's word that it is kept
    elsewhere; and with `projections`, every view row against a rebuild in a scratch database.

    The log is read once, a page at a time, and never held whole: each event is decoded and
    hashed once, and goes on to the referee and the event index check in the same pass. Each
    check keeps its own first problem; the report names the first in the order above.
    """
    mark = t.registry.import_mark(str(cid))
    followed = _views_followed(t, cid)
    seen = _Seen({s for s in (head and head.seq, mark and mark.head_seq, followed and followed[1]) if s})
    walk = _LogWalk(VerifyReport())
    report = walk.report
    index = _IndexCheck(t, followed[0]) if followed is not None else None

    def checked() -> Iterator[Any]:
        for page in t.recorder.event_pages(cid):
            for s in page:
                event = walk.step(s.originator_version, partial(t.decode, s))
                if tick is not None:
                    tick(1)
                seen.take(event)
                if index is not None:
                    index.take(event)
                yield event

    later: list[tuple[int, str] | None] = []
    try:
        events = checked()
        later.append(_referee_and_snapshots(t, cid, report, events))
        for _ in events:
            pass  # the referee stopped at a problem: the chain is still checked to the end
        walk.finish(lambda e: t.seed_for(cid, e))
    except _Broken as broken:
        _fail(report, broken.version, broken.problem)
    last = t.recorder.select_events(cid, desc=True, limit=1)
    last_seq = last[0].originator_version if last else 0
    if last:
        try:
            report.head_seq, report.head_hash = last_seq, t.decode(last[0]).hash
        except Exception:  # noqa: BLE001 - an unreadable last row: the report names it already
            report.head_seq = last_seq
    if not report.ok:
        return report
    later.append(index.problem if index is not None else None)
    checks: list[Callable[[], Any]] = [
        lambda: _check_head(report, seen, head),
        lambda: _check_beyond_the_end(t, cid, report, last_seq),
        *(partial(_fail, report, *problem) for problem in later if problem is not None),
        lambda: _check_views_last_hash(report, seen, *followed[1:]) if followed is not None else None,
        lambda: _check_registry(t, cid, report, seen, mark),
        lambda: _check_seed(t, cid, report, seen, mark),
        lambda: _check_projections(t, cid, report) if projections else None,
    ]
    for check in checks:
        check()
        if not report.ok:
            return report
    return report


@dataclass
class _Seen:
    """What the checks after the walk need of the log, kept as the walk goes by: its first
    event, the hashes of the events `wanted` names, and the first event recorded through a
    league server (see `_served_by`)."""

    wanted: set[int]
    first: Any = None
    count: int = 0
    hashes: dict[int, str] = field(default_factory=dict)
    served: int | None = None

    def take(self, event: Any) -> None:
        version = event.originator_version
        self.count += 1
        if self.first is None:
            self.first = event
        if version in self.wanted:
            self.hashes[version] = event.hash
        if self.served is None and _served(event):
            self.served = int(version)

    def hash_of(self, version: int) -> str | None:
        return self.hashes.get(version) if 1 <= version <= self.count else None


def _check_head(report: VerifyReport, seen: _Seen, head: Head | None) -> None:
    if head is None:
        return
    if head.seq > report.head_seq:
        missing = f"event {head.seq}" if head.seq == report.head_seq + 1 else f"events {report.head_seq + 1}-{head.seq}"
        _fail(
            report,
            report.head_seq + 1,
            f"the log ends at event {report.head_seq}, but the posted head is event {head.seq}: {missing} were deleted",
        )
        return
    actual = seen.hash_of(head.seq) or ""
    if not actual.startswith(head.hash):
        _fail(
            report,
            head.seq,
            f"event {head.seq} has hash {actual[:16]}..., not the posted head's {head.hash[:16]}...: "
            "the history up to the posted head was rewritten",
        )
        return
    report.notes.append(f"Matches the posted head: event {head.seq} ({head.hash[:16]}...).")


def _check_beyond_the_end(t: Tracker, cid: UUID, report: VerifyReport, last_seq: int) -> None:
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
        snapshot_table = _snapshot_table(t)
        if snapshot_table is not None:
            top = conn.execute(
                select(func.max(snapshot_table.c.originator_version)).where(snapshot_table.c.originator_id == cid)
            ).scalar()
            if top is not None and top > last_seq:
                _fail(
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
                _fail(
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
                _fail(
                    report,
                    last_seq + 1,
                    f"the projections have read up to row {position} of the log, which now ends at row {newest}: "
                    "recorded events were deleted",
                )


def _snapshot_table(t: Tracker) -> Any:
    snapshots = t.app.snapshots
    if snapshots is None:
        return None
    return getattr(snapshots.recorder, "events_record_cls").__table__  # noqa: B009 - SQLAlchemy recorder


class _Stop(Exception):
    """The fold found a problem (already in the report)."""


def _referee_and_snapshots(
    t: Tracker, cid: UUID, report: VerifyReport, events: Iterator[Any]
) -> tuple[int, str] | None:
    """One fold over the log as it is walked: every asked action re-run by the referee
    (tracker.referee), and each snapshot compared with the state the events up to its version
    give. Returns the first problem found, if any (the walk goes on to check the chain)."""
    from tracker.service.referee import Mismatch, referee_stream
    from tracker.storage.recorder import CampaignSnapshot

    mapper = t.app.mapper
    snapshots = t.app.snapshots
    table = _snapshot_table(t)
    wanted: set[int] = set()
    if snapshots is not None and table is not None:
        with t.engine.connect() as conn:
            query = select(table.c.originator_version).where(table.c.originator_id == cid)
            wanted = {int(v) for v in conn.execute(query).scalars()}
    found: list[tuple[int, str]] = []

    def check_snapshot(agg: Any) -> None:
        if agg.version not in wanted:
            return
        assert snapshots is not None
        try:
            snap = snapshots.recorder.select_events(cid, gt=agg.version - 1, lte=agg.version)[0]
            stored_snapshot = mapper.to_domain_event(snap)
            stored_state = stored_snapshot.state  # type: ignore[attr-defined]
        except Exception as e:  # noqa: BLE001 - an unreadable snapshot row was edited
            found.append((agg.version, f"the snapshot at event {agg.version} cannot be read ({type(e).__name__})"))
            raise _Stop from None
        # The replay, through the same transcoder, as a snapshot of the same kind taken now
        # would store it (older ones hold the scenario and ruleset, newer ones leave them out).
        kind = CampaignSnapshot if isinstance(stored_snapshot, CampaignSnapshot) else type(agg).Snapshot
        replayed = mapper.to_domain_event(mapper.to_stored_event(kind.take(agg))).state  # type: ignore[attr-defined]
        if stored_state != replayed:
            keys = sorted(k for k in set(stored_state) | set(replayed) if stored_state.get(k) != replayed.get(k))
            why = (
                "the log up to it was rewritten after the snapshot was taken, or the snapshot was edited"
                if "last_hash" in keys
                else "the snapshot was edited"
            )
            found.append(
                (
                    agg.version,
                    f"the snapshot at event {agg.version} differs from the replay of the log up to it "
                    f"({', '.join(keys[:5])}): {why}",
                )
            )
            raise _Stop
        report.snapshots_checked += 1

    try:
        # The actions run again record events compared without their hashes: the chain
        # check hashes each stored event, and nothing hashes it twice.
        with unhashed():
            result = referee_stream(events, _StoredHistory(t, cid), _undone_from(t, cid), check_snapshot, stops=wanted)
    except _Broken:
        raise
    except _Stop:
        return found[0]
    except Mismatch as e:
        return e.version, str(e)
    except Exception as e:  # noqa: BLE001 - a hashed event that cannot be applied
        return report.head_seq, f"the log cannot be replayed ({type(e).__name__}: {str(e)[:200]})"
    report.actions_refereed = result.actions_checked
    report.actions_unasked = result.unasked_actions
    return None


def _undone_from(t: Tracker, cid: UUID) -> set[int]:
    """The versions whose state before them an undo of the log restores (the referee keeps
    those states as it folds): read from the few ActionUndone rows before the walk."""
    table = t.recorder.table
    query = (
        select(table.c.originator_version, table.c.topic, table.c.state)
        .where(table.c.originator_id == cid, table.c.topic.like("%ActionUndone"))
        .order_by(table.c.originator_version)
    )
    with t.engine.connect() as conn:
        rows = conn.execute(query).all()
    versions = set()
    for version, topic, state in rows:
        try:
            event: Any = t.decode(
                StoredEvent(originator_id=cid, originator_version=version, topic=topic, state=bytes(state))
            )
        except Exception:  # noqa: BLE001 - an unreadable row: the walk names it
            continue
        if type(event).__name__ == "ActionUndone":
            versions.add(int(event.undone_from))
    return versions


class _StoredHistory:
    """The referee's `History` of a stored log: the events before an action run again (an
    undo or redo reads back), decoded from the database as asked for."""

    def __init__(self, t: Tracker, cid: UUID) -> None:
        self.t, self.cid = t, cid

    def desc(self, top: int) -> Iterator[Any]:
        recorder = self.t.recorder
        while top > 0:
            page = recorder.select_events(self.cid, lte=top, desc=True, limit=200)
            if not page:
                return
            for s in page:
                yield self.t.decode(s)
            top = page[-1].originator_version - 1

    def between(self, gt: int, lte: int) -> Iterator[Any]:
        for page in self.t.recorder.event_pages(self.cid, gt=max(gt, 0), lte=lte):
            for s in page:
                yield self.t.decode(s)


def _views_followed(t: Tracker, cid: UUID) -> tuple[int, int, str] | None:
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


class _IndexCheck:
    """The views were written from the log as it was when they read it: every event index row
    must still be what the log's event gives: its kind, and for an action the line that shows
    who asked it (other lines are words a newer tracker may put otherwise, and are not
    compared, so views written by an earlier release still verify). A forger who edits an
    event and re-hashes the chain after it (an action's player, a time: what the referee does
    not decide) must rewrite these rows too. The rows are read a page at a time beside the
    walk; rows beyond the log's end are checked before (`_check_beyond_the_end`)."""

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


def _check_views_last_hash(report: VerifyReport, seen: _Seen, last_seq: int, last_hash: str) -> None:
    """The last event the views read must still have the hash they read: it covers every event
    up to it, times included."""
    now = seen.hash_of(last_seq)
    if now is None or not last_hash or now == last_hash:
        return
    back = [v for v in report.stamped_back if v <= last_seq]
    sign = f" (event {back[0]} is stamped before the event it follows: an edited time?)" if back else ""
    _fail(
        report,
        last_seq,
        f"the views (tracker_projection_campaigns) read event {last_seq} with hash {last_hash[:16]}..., but the "
        f"log's event {last_seq} has hash {now[:16]}...: the log up to event {last_seq} was rewritten after the "
        f"views read it, or the views were edited{sign}",
    )


def _short(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _check_registry(t: Tracker, cid: UUID, report: VerifyReport, seen: _Seen, mark: ImportMark | None) -> None:
    """The registry's rows say what the log cannot: the name this database gives the campaign,
    and that it was imported here. The name must be the one its Created event records, or
    the one its import was given (`import --as`); an import mark must name a head the log
    holds (an earlier tracker's marks name none, and are taken as they are)."""
    if mark is not None and not mark.legacy:
        if not mark.head_seq or not mark.head_hash:
            _fail(
                report,
                1,
                "tracker_imported marks this campaign as imported but names no head of its log: no import "
                "wrote that row, it was added behind the tracker's back",
            )
            return
        if seen.hash_of(mark.head_seq) != mark.head_hash:
            _fail(
                report,
                min(mark.head_seq, seen.count),
                f"tracker_imported marks this campaign as imported with head {mark.head_seq}:"
                f"{mark.head_hash[:16]}..., which its log does not hold: the row was not written by its import, "
                "or the log was rewritten after it",
            )
            return
    registered = t.registry.name_of(str(cid))
    recorded = seen.first.name
    if registered is None or registered == recorded:
        return
    if mark is not None and mark.name in (None, registered):
        report.notes.append(
            f"Registered here as {registered!r}, the name given to its import; its log names it {recorded!r}."
        )
        return
    imported = (
        f", and its import gave it the name {mark.name!r}" if mark is not None else ", and no import gave it that name"
    )
    _fail(
        report,
        1,
        f"tracker_campaigns registers this campaign as {registered!r}, but its Created event (event 1) names it "
        f"{recorded!r}{imported}: it was renamed behind the tracker's back",
    )


def _served(event: Any) -> bool:
    """An event recorded through a league server: the Created event of a campaign created
    there (it names its creator) or an action asked through one (PL1: only a server records
    the player who asked). From the first such event on its seeds live in the key store (D5)."""
    kind = type(event).__name__
    return (kind == "Created" and bool(getattr(event, "created_by", None))) or (
        kind == "ActionAsked" and event.player is not None
    )


def _check_seed(t: Tracker, cid: UUID, report: VerifyReport, seen: _Seen, mark: ImportMark | None) -> None:
    """An auto campaign's current seed must be here and match its commitment, or nobody could
    check the next rolls. It may be elsewhere only where the log says so (served: see
    `_served`) or an import mark checked against the log does (it stayed with the exported
    copy); tracker_served's word alone is not taken."""
    created = seen.first
    if created is None or created.dice_mode != "auto":
        return
    epoch = report.seeds_revealed
    seed = t.seed_for(cid, epoch)
    if seed is None:
        served = seen.served
        if served is not None:
            report.notes.append(
                f"Served campaign (event {served} was recorded through a league server): its dice seed is in the "
                "server's key store (D5); the rolls of revealed seeds were re-derived, and "
                "`tracker --server URL verify` checks the current one too."
            )
            return
        if mark is not None:
            report.notes.append(
                "Imported campaign: its dice seed stayed with the exported copy; later rolls need --dice."
            )
            return
        marked = (
            "; tracker_served marks it served, but no event of its log was recorded through a league server "
            "(its Created event names no creator, no action names a player): that row was not written by a server"
            if t.registry.is_served(str(cid))
            else ""
        )
        _fail(
            report,
            report.head_seq,
            f"D5: the dice seed of epoch {epoch} of this auto campaign is missing from the database: "
            f"its next rolls could not be checked{marked}",
        )
    elif commitment(seed) != report.commitments[epoch]:
        _fail(
            report,
            report.head_seq,
            f"D5: the dice seed of epoch {epoch} held here does not match the commitment in the log: it was replaced",
        )


def _check_projections(t: Tracker, cid: UUID, report: VerifyReport) -> None:
    """Compare this campaign's view rows with a rebuild into a scratch in-memory database, up
    to the position the views have reached; the user's database is only read."""
    existing = set(inspect(t.engine).get_table_names())
    if schema.tracking.name not in existing:
        report.projection_rows_checked = 0
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
        _fail(
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
