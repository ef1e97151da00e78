"""What an undo (RK3) or a redo (RK4) concerns, read from the log: pure functions over a `Log`,
so that the application (reading the database) and `verify` (re-running recorded actions on
the events in memory) compute the same span, and so the same events."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from domain.errors import InputError, RuleViolation
from domain.rules.record import REDO, UNDO, automatic_reveal

ASKED = "ActionAsked"
# The action number of a campaign's Created event and of what its creation records with it.
CREATION = 1


class Log(Protocol):
    """Read access to a campaign's recorded events, for the actions that need more than the
    aggregate (undo, redo) and what the environment holds (dice seeds)."""

    # True when a recorded action is run again to check it: nothing outside the log is asked.
    replaying: bool

    def desc(self, top: int) -> Iterator[Any]:
        """Events from `top` down to the first, newest first."""
        ...

    def between(self, gt: int, lte: int) -> Iterator[Any]:
        """Events after `gt` up to `lte`, oldest first."""
        ...

    def state_before(self, version: int) -> dict[str, Any]:
        """The game state (what an undo restores) just before event `version`."""
        ...

    def seed(self, epoch: int) -> str | None: ...

    def next_commitment(self, epoch: int) -> str:
        """The commitment to a fresh seed for dice epoch `epoch` (D3), stored before the event
        that commits to it is saved. A seed stored by an attempt that saved nothing (a crash, a
        lost conflict) is never deleted, since another writer may have committed to it: first
        writer wins, so it is the one every later reveal of that epoch commits to."""
        ...

    def confirm(self, plan: Any) -> None:
        """Let the user see an undo's plan before it is saved (raises to cancel)."""
        ...


def _kind(e: Any) -> str:
    return type(e).__name__


def undo_span(log: Log, version: int, to: int | None, pass_over_reveals: bool = True) -> tuple[int, list[Any]]:
    """(first event undone, every event from it to `version`) for an undo after event `version`;
    without `to`, from the last live action (`last_undoable_action`)."""
    if to is not None:
        if version <= 1:
            # Only the creation is recorded: "between 1 and 0" would name no event at all.
            raise RuleViolation("RK3", "there is no action to undo: the campaign holds only its creation")
        if to < 1 or to >= version:
            raise InputError(f"--to must name an event between 1 and {version - 1}, got {to}")
        first = to + 1
    else:
        first = last_undoable_action(log, version, pass_over_reveals)
    after = list(log.between(first - 1, version))
    if after and after[0].action == CREATION:
        made = max(e.originator_version for e in after if e.action == CREATION)
        if made >= version:
            raise RuleViolation("RK3", "there is no action to undo")
        raise InputError(
            f"event {first} was recorded with the campaign's creation, which no undo takes back; "
            f"undo --to {made} or a later event"
        )
    if after and after[0].action != first:
        raise InputError(
            f"event {first} is part of the action that began at event {after[0].action}; "
            f"undo --to {after[0].action - 1} to take that whole action back"
        )
    if to is not None:
        # Going back to a point that an undo already took back would bring it back to life.
        for e in after:
            if _kind(e) == UNDO and e.undone_from <= to <= e.undone_to:
                raise InputError(
                    f"event {to} was undone by event {e.originator_version}; undo --to an event still in play"
                )
    return first, after


def last_undoable_action(log: Log, version: int, pass_over_reveals: bool = True) -> int:
    """Walk back past undo events and what they undid to the most recent live action; with
    `pass_over_reveals` (RK3, D5, the ruleset's key), past a seed reveal the server recorded
    by itself too: nobody's action, which stays in effect whatever is undone, so a player's
    `undo` after the round's last `next` takes that `next` back (with the reveal after it)."""
    undone: set[int] = set()
    automatic: dict[int, bool] = {}
    for e in log.desc(version):
        v = e.originator_version
        if _kind(e) == UNDO:
            undone.update(range(e.undone_from, e.undone_to + 1))
            undone.update(range(e.action, v + 1))
            continue
        if v in undone:
            continue
        action = int(e.action)
        if _kind(e) == "Created" or action == CREATION:
            break  # the creation, and what it passed over (F8), is no action to undo
        if pass_over_reveals:
            if action not in automatic:
                automatic[action] = automatic_reveal(list(log.between(action - 1, action)))
            if automatic[action]:
                continue
        return action
    raise RuleViolation("RK3", "there is no action to undo")


def _head(group: Sequence[Any]) -> Any:
    """The event that says what an action did: its first one after what was asked."""
    return next((e for e in group if _kind(e) != ASKED), group[0])


def redo_tail(log: Log, version: int) -> list[list[Any]]:
    """The actions at the end of the log that are undos or redos, oldest first: what a redo
    may still put back (anything else recorded since an undo ends the chance, RK4)."""
    groups: dict[int, list[Any]] = {}
    for e in log.desc(version):
        groups.setdefault(e.action, []).insert(0, e)
        if e.originator_version == e.action and _kind(_head(groups[e.action])) not in (UNDO, REDO, ASKED):
            del groups[e.action]
            break
    return [groups[k] for k in sorted(groups) if _kind(_head(groups[k])) != ASKED]


def redo_stack(log: Log, version: int) -> list[tuple[int, list[int]]]:
    """(undo event, actions it took back still to redo, in order), most recent undo last."""
    stack: list[tuple[int, list[int]]] = []
    for group in redo_tail(log, version):
        head = _head(group)
        if _kind(head) == UNDO:
            # A seed reveal stays in effect after an undo (the seed is public, and the dice go
            # on from the next epoch, D5): a redo has nothing of it to put back, and recording
            # the reveal again would name an epoch already revealed.
            actions = [a for a in head.actions if not _reveals_seed(log, a)]
            if actions:
                stack.append((head.originator_version, actions))
        elif _kind(head) == REDO and stack and stack[-1][1][:1] == [head.original]:
            stack[-1][1].pop(0)
            if not stack[-1][1]:
                stack.pop()
    return stack


def _reveals_seed(log: Log, action: int) -> bool:
    """D5: whether `action` revealed a dice seed (its first event, or the one after what was
    asked)."""
    return any(e.action == action and _kind(e) == "SeedRevealed" for e in log.between(action - 1, action + 1))


# D5: what an undo takes back but cannot unmake. The undo is recorded over a seed reveal like
# over any action, yet the seed is public for good and the dice go on from the next epoch.
_STAYS_IN_EFFECT = {
    "SeedRevealed": ("the reveal stays in effect", "the seed stays public and the dice go on from the next epoch", "D5")
}


def stays_in_effect(kind: str) -> tuple[str, str, str] | None:
    """D5: for an event of `kind` that an undo took back but that still holds, (what stays,
    why, the rule); None when the undo took it back entirely."""
    return _STAYS_IN_EFFECT.get(kind)


def undone_mark(kind: str, undone_by: int) -> str:
    """The short note on an undone event in a listing (`log`, `replay`): by which undo, and
    what stays in effect all the same (D5)."""
    stays = stays_in_effect(kind)
    if stays is None:
        return f"(undone by {undone_by})"
    what, _why, rule = stays
    return f"(undone by {undone_by}, but {what}, {rule})"


def nothing_to_redo(log: Log, version: int) -> str:
    tail = redo_tail(log, version)
    undos = [_head(g) for g in tail if _kind(_head(g)) == UNDO]
    if undos and undos[-1].actions and all(_reveals_seed(log, a) for a in undos[-1].actions):
        return (
            f"nothing to redo: undo event {undos[-1].originator_version} took back only a dice seed "
            "reveal, which stays in effect (a revealed seed stays public, D5)"
        )
    if undos:
        return "nothing to redo: every action of the last undo was redone"
    # Named by what was asked: "event 5031 is not an undo" left the player to look up what
    # event 5031 was, when it is the action that ended the chance to redo.
    last = next(log.desc(version), None)
    asked = next(iter(log.between(last.action - 1, last.action)), None) if last is not None else None
    if asked is not None and _kind(asked) == ASKED:
        what = f"the last action, {asked.name} at event {asked.originator_version},"
    else:
        what = f"event {version}"
    return (
        f"nothing to redo: {what} is not an undo; redo puts back what an undo took, "
        "only while nothing new was recorded since"
    )


def actions_events(log: Log, actions: Sequence[int], undo: int) -> dict[int, list[Any]]:
    """The events of `actions` (in order, all before undo event `undo`), read in one pass."""
    wanted = set(actions)
    found: dict[int, list[Any]] = {}
    for e in log.between(actions[0] - 1, undo - 1):
        if e.action in wanted:
            found.setdefault(e.action, []).append(e)
        elif e.action > actions[-1]:
            break
    return found
