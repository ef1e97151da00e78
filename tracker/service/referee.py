"""Re-refereeing a recorded log: every action whose inputs were recorded (an ActionAsked event)
is run again through the referee on the state before it, with its recorded dice, and must
record exactly the events the log holds after it (same kinds and content; only times and
hashes differ). An edit that keeps the hash chain intact (a forger who re-hashes) then still
fails: the referee refuses the edited action, or records something else than the log says.

One fold over the log: each action is re-run on the state before it, and since its events
equal the log's, the state it leaves is the state the log gives. Only where a snapshot or an
undo needs a state in the middle of an action is the action re-run on a copy and its recorded
events applied instead.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from domain.campaign import Campaign, one_action
from domain.campaign.record import restore, savepoint
from domain.chain import UPCAST_ADDED
from domain.dice import Dice, ManualDice, Override
from domain.errors import InputError, TrackerError
from domain.text import plural
from projections.summary import rule_of
from tracker.service import actions
from tracker.service.undo_log import ASKED, CREATION

# Not part of what an action decides: where and when its events were stored.
_NOT_COMPARED = {"originator_id", "originator_version", "timestamp", "prev_hash", "hash", "originator_topic"}


class Mismatch(TrackerError):
    """A recorded action does not re-run to the events the log holds (exit 1)."""

    def __init__(self, version: int, message: str) -> None:
        super().__init__(message)
        self.version = version


@dataclass
class RefereeResult:
    actions_checked: int = 0
    # Actions recorded before the log began recording what was asked (older logs).
    unasked_actions: int = 0
    # The campaign the log folds to.
    campaign: Any = None
    # The version of the event the fold is at: the first of the action being run again, or
    # the event being applied (where a caller names the event when something else fails).
    at: int = 0


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _content(event: Any) -> dict[str, Any]:
    attrs = vars(event)
    return {k: _plain(v) for k, v in attrs.items() if k not in _NOT_COMPARED and k != UPCAST_ADDED}


def _fields(event: Any) -> dict[str, Any]:
    """`_content` without the plain form: what most events compare equal on already (a value
    held as a tuple on one side and a list on the other is compared in plain form after)."""
    return {k: v for k, v in vars(event).items() if k not in _NOT_COMPARED and k != UPCAST_ADDED}


class _Rollback(Exception):
    """Raised at the end of a re-run so that `one_action` puts the state back as it was."""


class _ReplayDice:
    """The rolls an action recorded, handed back in order with their source and reference."""

    def __init__(self, rolls: Sequence[Any], override: Override | None) -> None:
        self.rolls = list(rolls)
        self.used = 0
        self.override = override

    @property
    def source(self) -> str:
        return str(self.rolls[self.used].source) if self.used < len(self.rolls) else "manual"

    def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
        if self.used >= len(self.rolls):
            raise Mismatch(0, f"{what} rolls dice that the log does not record")
        r = self.rolls[self.used]
        self.used += 1
        if r.faces != faces or len(r.values) != count:
            # D1, D3: the action reads exactly the dice it rolls; other recorded dice (none, a
            # forged file's `[]`) would stop it in the interpreter's words, or be taken as rolled.
            raise Mismatch(
                r.originator_version,
                f"event {r.originator_version} (DiceRolled, roll {r.roll}) records {_dice(len(r.values), r.faces)} "
                f"where {what} rolls {_dice(count, faces)} (D1, D3)",
            )
        return Dice(tuple(r.values), str(r.source), r.reference)


def _dice(count: int, faces: int) -> str:
    return f"{count} D{faces}" if count else f"no D{faces}"


class History(Protocol):
    """The events of the log before an action run again, as the undo log reads them: newest
    first from `top` down, or those after `gt` up to `lte`."""

    def desc(self, top: int) -> Iterator[Any]: ...

    def between(self, gt: int, lte: int) -> Iterator[Any]: ...


class _ListHistory:
    """The `History` of a whole log held in memory (event N at index N - 1)."""

    def __init__(self, events: Sequence[Any]) -> None:
        self.events = events

    def desc(self, top: int) -> Iterator[Any]:
        return iter(self.events[top - 1 :: -1] if top > 0 else [])

    def between(self, gt: int, lte: int) -> Iterator[Any]:
        return iter(self.events[max(gt, 0) : lte])


class _MemoryLog:
    """The `tracker.undo_log.Log` of a log being refereed, for an action run again."""

    replaying = True

    def __init__(self, history: History, states: dict[int, dict[str, Any]], span: Sequence[Any]) -> None:
        self.history, self.states, self.span = history, states, span

    def desc(self, top: int) -> Iterator[Any]:
        return self.history.desc(top)

    def between(self, gt: int, lte: int) -> Iterator[Any]:
        return self.history.between(gt, lte)

    def state_before(self, version: int) -> dict[str, Any]:
        return self.states[version]

    def _revealed(self) -> Any:
        found = [e for e in self.span if type(e).__name__ == "SeedRevealed"]
        return found[0] if found else None

    def seed(self, epoch: int) -> str | None:
        e = self._revealed()
        return None if e is None else str(e.seed)

    def next_commitment(self, epoch: int) -> str:
        e = self._revealed()
        if e is None:
            raise Mismatch(0, "the log does not record the seed this action revealed")
        return str(e.next_commitment)

    def confirm(self, plan: Any) -> None:
        pass


def _describe(e: Any) -> str:
    kind = type(e).__name__
    rule = rule_of(e)
    return f"event {e.originator_version} ({kind}{', ' + rule if rule else ''})"


def _difference(recorded: dict[str, Any], replayed: dict[str, Any]) -> str:
    keys = [k for k in sorted(set(recorded) | set(replayed)) if recorded.get(k) != replayed.get(k)]
    k = keys[0]
    return f"{k} {_short(recorded.get(k))} where the referee records {_short(replayed.get(k))}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def referee_log(
    events: Sequence[Any],
    after_each: Callable[[Campaign], None] | None = None,
    stops: Collection[int] | None = None,
    result: RefereeResult | None = None,
) -> RefereeResult:
    """Re-run every asked action of `events` (a whole log, in order, chain already checked).

    `after_each(aggregate)` sees the state after every event, or only after the events whose
    versions are in `stops` (for the snapshot checks; an empty `stops` lets each action's
    re-run move the state on, with no copy of it). Raises Mismatch naming the first event the
    referee does not record as the log does; `result`, when given, is the one filled in (its
    `at` then says where the fold was when anything raised)."""
    # Undo restores the state before an earlier event: keep a copy of just those states.
    wanted = {e.undone_from for e in events if type(e).__name__ == "ActionUndone"}
    return referee_stream(events, _ListHistory(events), wanted, after_each, stops, result)


def referee_stream(
    events: Iterable[Any],
    history: History,
    wanted: Collection[int],
    after_each: Callable[[Campaign], None] | None = None,
    stops: Collection[int] | None = None,
    result: RefereeResult | None = None,
) -> RefereeResult:
    """`referee_log` over events as they come (a log read a page at a time), holding one
    action's events at once: `history` gives an action run again the events before it, and
    `wanted` names the versions whose state before them an undo restores (the `undone_from`
    of every ActionUndone of the log)."""
    result = RefereeResult() if result is None else result
    states: dict[int, dict[str, Any]] = {}
    unasked: set[Any] = set()
    agg: Any = None
    span: list[Any] = []
    opening: _Opening | None = None
    for e in events:
        if opening is not None and (type(e).__name__ == ASKED or e.action != CREATION):
            opening.check()
            opening = None
        if type(e).__name__ == ASKED:
            if span:
                agg = _referee_span(agg, history, states, span, wanted, after_each, stops, result)
            span = [e]
        elif span:
            span.append(e)
        else:
            if opening is not None:
                opening.recorded.append(e)
            elif agg is not None:
                # Before the log recorded what was asked (older logs): applied as recorded.
                unasked.add(e.action)
            result.at = e.originator_version
            agg = _apply(agg, [e], states, wanted, after_each, stops)
            if e.originator_version == 1:
                opening = _Opening(agg, e)
    if opening is not None:
        opening.check()
    if span:
        agg = _referee_span(agg, history, states, span, wanted, after_each, stops, result)
    result.unasked_actions = len(unasked)
    result.campaign = agg
    return result


class _Opening:
    """What a campaign's creation records after its Created event (F8: the turns of nations
    still neutral in round 1 passed over), worked out again from the Created event and
    compared with the log's events of the creation once they have all been read."""

    def __init__(self, created: Campaign, event: Any) -> None:
        saved = savepoint(created)
        try:
            created.open_first_turn()
            # Led by the Created event itself, as an action's events are led by what was asked.
            self.expected = [event, *created.collect_events()]
        finally:
            restore(created, saved)
        self.recorded = [event]

    def check(self) -> None:
        # A log created before the creation recorded them holds none: it is taken as recorded.
        if len(self.recorded) > 1 or len(self.expected) == 1:
            _compare(self.recorded, self.expected, "the campaign's creation")


def _referee_span(
    agg: Any,
    history: History,
    states: dict[int, dict[str, Any]],
    span: list[Any],
    wanted: Collection[int],
    after_each: Callable[[Campaign], None] | None,
    stops: Collection[int] | None,
    result: RefereeResult,
) -> Any:
    """Re-run the action `span` holds (from its ActionAsked to the next) and move the state on."""
    first, last = span[0].originator_version, span[-1].originator_version
    result.at = first
    if first in wanted:
        states[first] = agg.game_state()
    inside = range(first, last) if stops is None else [v for v in range(first, last) if v in stops]
    if not inside and not any(v in wanted for v in range(first + 1, last + 1)):
        # Nothing needs the states within the span: the re-run itself moves the state
        # on (its events equal the log's, so applying those would give the same state).
        _check_span(agg, history, states, span, keep=True)
        # Only where and when the events were stored differs: take the log's.
        agg.last_hash = span[-1].hash
        agg.__dict__["_modified_on"] = span[-1].timestamp
        result.actions_checked += 1
        if after_each is not None and (stops is None or last in stops):
            after_each(agg)
        return agg
    _check_span(agg, history, states, span)
    result.actions_checked += 1
    return _apply(agg, span, states, wanted, after_each, stops, result)


def _apply(
    agg: Any,
    events: Sequence[Any],
    states: dict[int, dict[str, Any]],
    wanted: Collection[int],
    after_each: Callable[[Campaign], None] | None,
    stops: Collection[int] | None,
    result: RefereeResult | None = None,
) -> Any:
    for e in events:
        if result is not None:
            result.at = e.originator_version
        if agg is not None and agg.version + 1 in wanted:
            states[agg.version + 1] = agg.game_state()
        agg = e.mutate(agg)
        if after_each is not None and (stops is None or agg.version in stops):
            after_each(agg)
    return agg


def _check_span(
    agg: Campaign,
    history: History,
    states: dict[int, dict[str, Any]],
    span: Sequence[Any],
    keep: bool = False,
) -> None:
    """Re-run the action that `span` begins with on `agg` and compare. With `keep`, the state
    is left as the re-run made it (no copy; after a Mismatch it is not used again); else it
    is put back as it was."""
    asked = span[0]
    where = f"the action asked at event {asked.originator_version} ({asked.name})"
    try:
        action = actions.get(asked.name)
        inputs = action.validate(asked.inputs)
    except InputError as e:
        raise Mismatch(asked.originator_version, f"event {asked.originator_version} (ActionAsked): {e}") from None
    seen = asked.seen
    if type(seen) is not int or not 0 <= seen < asked.originator_version:
        # RK4, T2: what the player saw is an event before the action; the referee copies it
        # into the action it re-runs, so only this looks at it.
        raise Mismatch(
            asked.originator_version,
            f"event {asked.originator_version} (ActionAsked): seen {seen!r} is not an event before it (RK4)",
        )
    if asked.nation is not None and asked.nation not in agg.scenario.nations:
        # PL1: the nation acted for is one of the campaign's; the re-run copies it as it is.
        raise Mismatch(
            asked.originator_version,
            f"event {asked.originator_version} (ActionAsked): nation {_short(asked.nation)} is no nation of the "
            "campaign (PL1)",
        )
    dice = _dice_for(action, inputs, span)
    log = _MemoryLog(history, states, span)
    rerun = _rerun_in_place if keep else _rerun_rolled_back
    try:
        replayed = rerun(agg, asked, action, inputs, dice, log)
    except Mismatch as e:
        # Named at the event it found wrong, when it names one (a recorded roll).
        raise Mismatch(e.version or asked.originator_version, f"{where}: {e}") from None
    except TrackerError as e:
        # The referee refuses the action as recorded: name the rule it breaks.
        raise Mismatch(
            asked.originator_version,
            f"{where} is refused when the referee runs it again: {e}",
        ) from None
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
        raise Mismatch(
            asked.originator_version,
            f"{where} cannot be run again on the state before it ({type(e).__name__}: {e})",
        ) from None
    _compare(span, replayed, where)


def _dice_for(action: actions.Action, inputs: dict[str, Any], span: Sequence[Any]) -> Any:
    """The dice the action is run again with: those typed with its inputs, else the rolls
    the log recorded for it (less those a redo copied), under any override it recorded."""
    rolls = [e for e in span if type(e).__name__ == "DiceRolled" and not _redone(e, span)]
    accepted = [e for e in span if type(e).__name__ == "TypedDiceAccepted"]
    override = Override(accepted[0].reason, tuple(accepted[0].agreed_by)) if accepted else None
    if action.rolls and inputs.get("dice") is not None:
        given = Override(inputs["reason"], tuple(inputs["agreed_by"])) if inputs["override"] else None
        return ManualDice(inputs["dice"], inputs["ref"], given)
    return _ReplayDice(rolls, override)


def _rerun_in_place(
    agg: Campaign, asked: Any, action: actions.Action, inputs: dict[str, Any], dice: Any, log: _MemoryLog
) -> list[Any]:
    """Run the action on the state itself, as `one_action` runs a command but without its
    savepoint: nothing is put back. Returns the events it recorded."""
    agg.__dict__["_in_command"] = True
    agg.__dict__["_action"] = agg.version + 1
    try:
        agg.ask(asked.name, inputs, asked.seen, asked.player, asked.nation)
        action.perform(agg, dice, inputs, log)
        if isinstance(dice, ManualDice):
            dice.check_all_used()
    finally:
        agg.__dict__.pop("_in_command", None)
        agg.__dict__.pop("_action", None)
    return list(agg.collect_events())


def _rerun_rolled_back(
    agg: Campaign, asked: Any, action: actions.Action, inputs: dict[str, Any], dice: Any, log: _MemoryLog
) -> list[Any]:
    """Run the action on the state itself inside one action, then roll it back: the savepoint
    taken by `one_action` is the only copy of the state this costs. Returns the events it
    would have recorded."""
    replayed: list[Any] = []
    try:
        with one_action(agg):
            agg.ask(asked.name, inputs, asked.seen, asked.player, asked.nation)
            action.perform(agg, dice, inputs, log)
            if isinstance(dice, ManualDice):
                dice.check_all_used()
            replayed = list(agg.pending_events)
            raise _Rollback
    except _Rollback:
        pass
    return replayed


def _compare(span: Sequence[Any], replayed: Sequence[Any], where: str) -> None:
    """The events the referee records for an action must be the log's, one for one."""
    for recorded, again in zip(span, replayed, strict=False):
        if type(recorded).__name__ != type(again).__name__:
            raise Mismatch(
                recorded.originator_version,
                f"{_describe(recorded)} is not what the referee records for {where}: it records "
                f"{type(again).__name__} there",
            )
        if _fields(recorded) == _fields(again):
            continue  # equal as they are, so equal in plain form too
        a, b = _content(recorded), _content(again)
        if a != b:
            raise Mismatch(
                recorded.originator_version,
                f"{_describe(recorded)} is not what the referee records for {where}: {_difference(a, b)}",
            )
    if len(span) > len(replayed):
        extra = span[len(replayed)]
        raise Mismatch(
            extra.originator_version,
            f"{_describe(extra)} was recorded by no action: the referee records "
            f"{plural(len(replayed) - 1, 'event')} for {where}",
        )
    if len(replayed) > len(span):
        missing = replayed[len(span)]
        raise Mismatch(
            span[-1].originator_version,
            f"{where} records {type(missing).__name__} after event {span[-1].originator_version}, "
            "which the log lacks: events were deleted",
        )


def _redone(roll: Any, span: Sequence[Any]) -> bool:
    """A roll re-recorded by a redo (RK4) is copied from the log, not rolled."""
    return any(type(e).__name__ == "ActionRedone" and roll.originator_version in _copies(e, span) for e in span)


def _copies(redo: Any, span: Sequence[Any]) -> set[int]:
    return {e.originator_version for e in span if e.action == redo.action and e is not redo}
