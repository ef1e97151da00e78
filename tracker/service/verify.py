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

Where each part lives: the walk over the log (its chain, times and dice) and the two entry
points are here; the report in `verify_report`, the referee and the snapshots in
`verify_referee`, the views in `verify_views`, the posted head, the registry and the dice seed
in `verify_registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import UUID

from domain.chain import GENESIS, chain_hash, event_content
from domain.dice import commitment, derive_roll
from domain.errors import TrackerError
from domain.text import plural
from tracker.service.verify_referee import referee_and_snapshots
from tracker.service.verify_registry import Head, Seen, check_head, check_registry, check_seed
from tracker.service.verify_report import Broken, VerifyReport, fail
from tracker.service.verify_views import (
    IndexCheck,
    check_beyond_the_end,
    check_projections,
    check_views_last_hash,
    views_followed,
)

if TYPE_CHECKING:
    from tracker.service.application import Tracker

# Defined beside this module and taken from here by the callers of `tracker verify`.
__all__ = ["Head", "VerifyReport", "verify_campaign", "verify_events"]


class _Roll(NamedTuple):
    """An auto roll as re-deriving it needs it."""

    epoch: int
    roll: int
    values: tuple[int, ...]
    faces: int


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
    listed_undone: set[int] = field(default_factory=set)  # rerolls and overrides listed as undone
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
            raise Broken(expected, f"{missing} missing: the log jumps to event {version}")
        raise Broken(version, f"event {version} is out of order (expected event {expected})")

    def read(self, version: int, decode: Callable[[], Any]) -> Any:
        try:
            return decode()
        except Exception as e:  # noqa: BLE001 - any decoding failure means an edited row
            # The library's error, where the mapper said it in its own words.
            cause = e.__cause__ if isinstance(e, TrackerError) and e.__cause__ is not None else e
            raise Broken(
                version, f"event {version} cannot be read ({type(cause).__name__}): the stored row was edited"
            ) from None

    def check_link(self, version: int, kind: str, event: Any) -> Any:
        """The event follows the one before it and its content matches its hash; returns the hash."""
        attrs = dict(vars(event))
        stored_hash = attrs.get("hash")
        if attrs.get("prev_hash") != self.prev_hash:
            raise Broken(
                version,
                f"event {version} ({kind}) does not follow event {version - 1}: "
                "an event before it was edited, deleted or reordered",
            )
        content = self.contents.pop(version, None)
        if content is None:
            content = event_content(attrs)
        digest = chain_hash(self.prev_hash, kind, version, event.timestamp, content)
        if digest != stored_hash:
            raise Broken(version, f"event {version} ({kind}) was edited: its content does not match its hash")
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
                raise Broken(
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
        # RK3, RK4: a reroll or typed-dice override taken back by this undo is no longer in play
        # (a redo records it again): say so, as reports strike it through.
        for item in (*self.report.rerolls, *self.report.overrides):
            seq = item["seq"]
            taken = event.undone_from <= seq <= event.undone_to and item["kind"] != "ActionUndone"
            if taken and seq not in self.listed_undone:
                self.listed_undone.add(seq)
                item["text"] += f" (undone by event {version})"
        if not event.override:
            return
        agreed = ", ".join(event.agreed_by) or "nobody recorded"
        rolls = "roll" if len(event.rolls) == 1 else "rolls"
        from projections.summary import spans

        # As runs ("rolls 59-470"): a long override undo takes back thousands of rolls.
        taken = f", taking back {rolls} {spans(list(event.rolls))}" if event.rolls else ""
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
            raise Broken(version, f"event {version} (SeedRevealed) names dice epoch {event.epoch} out of order")
        if commitment(event.seed) != self.commitments[event.epoch]:
            raise Broken(version, f"event {version} (SeedRevealed): seed does not match its commitment")
        self.revealed[event.epoch] = event.seed
        self.commitments.append(event.next_commitment)

    def dice_rolled(self, version: int, event: Any) -> None:
        if not 0 <= event.epoch < len(self.commitments):
            raise Broken(version, f"event {version} (DiceRolled) names unknown dice epoch {event.epoch}")
        if event.action in self.redo_actions and event.roll in self.seen_rolls:
            # RK4: a redo re-records a roll with its number; it must say what the roll said.
            if self.seen_rolls[event.roll] != (event.epoch, list(event.values)):
                raise Broken(version, f"event {version} (DiceRolled) redoes roll {event.roll} with other values")
        elif event.roll != self.roll_count + 1:
            raise Broken(
                version,
                f"event {version} (DiceRolled) is roll {event.roll}, expected roll {self.roll_count + 1}",
            )
        else:
            self.roll_count += 1
            self.seen_rolls[event.roll] = (event.epoch, list(event.values))
            if event.source == "auto":
                self.rolls.append((version, _Roll(event.epoch, event.roll, tuple(event.values), event.faces)))
            else:
                self.report.rolls_typed += 1
        if event.source != self.mode and not (event.source == "manual" and event.action in self.typed_allowed):
            self.report.dice_problems.append(
                f"D4: event {version} (roll {event.roll}) has {event.source} dice in a campaign of {self.mode} dice, "
                "with no recorded switch or override"
            )
        if event.values and not all(1 <= v <= event.faces for v in event.values):
            raise Broken(version, f"event {version} (DiceRolled): a die is outside 1..{event.faces}")

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
                raise Broken(
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
    except Broken as broken:
        return fail(walk.report, broken.version, broken.problem)
    return walk.finish(local_seed)


def _finish(walk: _LogWalk, local_seed: Callable[[int], str | None]) -> VerifyReport:
    """The end of a walk over a whole log: the dice re-derived, and what the report notes."""
    report = walk.report
    report.dice_mode = walk.mode
    report.commitments = list(walk.commitments)
    report.seeds_revealed = len(walk.revealed)
    try:
        walk.rederive_rolls(local_seed)
    except Broken as broken:
        return fail(report, broken.version, broken.problem)
    if report.rolls_unchecked:
        report.notes.append(
            f"{plural(report.rolls_unchecked, 'auto roll')} not re-derived: their seed is neither revealed "
            "nor held here"
        )
    if report.stamped_back:
        report.notes.append(
            f"{plural(len(report.stamped_back), 'event')} stamped before the event they follow, the first event "
            f"{report.stamped_back[0]}: recorded on machines whose clocks disagree, or a time was edited"
        )
    return report


# ----- a campaign in its database: the log, its head, snapshots, views and dice seed -----


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
    followed = views_followed(t, cid)
    seen = Seen({s for s in (head and head.seq, mark and mark.head_seq, followed and followed[1]) if s})
    walk = _LogWalk(VerifyReport())
    report = walk.report
    index = IndexCheck(t, followed[0]) if followed is not None else None

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
        later.append(referee_and_snapshots(t, cid, report, events))
        for _ in events:
            pass  # the referee stopped at a problem: the chain is still checked to the end
        walk.finish(lambda e: t.seed_for(cid, e))
    except Broken as broken:
        fail(report, broken.version, broken.problem)
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
        lambda: check_head(report, seen, head),
        lambda: check_beyond_the_end(t, cid, report, last_seq),
        *(partial(fail, report, *problem) for problem in later if problem is not None),
        lambda: check_views_last_hash(report, seen, *followed[1:]) if followed is not None else None,
        lambda: check_registry(t, cid, report, seen, mark),
        lambda: check_seed(t, cid, report, seen, mark),
        lambda: check_projections(t, cid, report) if projections else None,
    ]
    for check in checks:
        check()
        if not report.ok:
            return report
    return report
