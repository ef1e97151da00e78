"""Recording: every command is one action, all or nothing (RK2, RK3), put back from a savepoint
if it fails; undo (RK3) and redo (RK4) record compensating events."""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from domain.campaign.base import CampaignBase
from domain.campaign.events import ActionAsked, ActionRedone, ActionUndone, DiceRolled, Event
from domain.campaign.state import UNDOABLE_STATE
from domain.chain import recorded_fields
from domain.dice import Override
from domain.errors import RuleViolation
from domain.rules import record

if TYPE_CHECKING:
    from domain.campaign import Campaign

_F = TypeVar("_F", bound=Callable[..., Any])

# Recorded once at creation and never mutated: not worth copying for a rollback.
_IMMUTABLE_STATE = frozenset({"ruleset_data", "scenario_data"})


# Values kept as they are by a copy: most of the state's leaves, told apart without a call.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_copy(value: Any) -> Any:
    """A deep copy of the aggregate's plain state (dicts, lists, scalars), several times faster
    than copy.deepcopy, which every command would otherwise pay for."""
    if isinstance(value, dict):
        return {k: v if type(v) in _SCALARS else _plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else _plain_copy(v) for v in value]
    return value


@contextlib.contextmanager
def one_action(campaign: Campaign, rollback: bool = True) -> Iterator[None]:
    """Every command run inside is one action, all or nothing (RK2, RK3): if anything raises
    part-way, the aggregate is put back as it was, and every event recorded carries the
    version of the first one, the unit undo takes back. A CLI command that starts a battle
    and plays it out (`--auto`) is one action, not two.

    `rollback=False` is for a caller that throws the aggregate away when the action fails (a
    working copy loaded for this action alone): nothing is copied then, since nothing would
    ever be put back."""
    if campaign.__dict__.get("_in_command"):
        yield
        return
    saved = savepoint(campaign) if rollback else None
    before = (campaign.version, campaign.last_hash, campaign.__dict__.get("_modified_on"))
    campaign.__dict__["_in_command"] = True
    campaign.__dict__["_action"] = campaign.version + 1
    try:
        yield
    except BaseException:
        if saved is not None:
            restore(campaign, saved)
        else:
            _take_back_asked(campaign, *before)
        raise
    finally:
        campaign.__dict__.pop("_in_command", None)
        campaign.__dict__.pop("_action", None)


def _take_back_asked(campaign: Campaign, version: int, last_hash: str, modified_on: Any) -> None:
    """Without a savepoint, an action refused before it recorded anything but what was asked
    (most refusals: a rule checked before any dice or change) is taken back all the same, so
    that the caller may keep the copy: ActionAsked changes nothing but the version, the time
    and the hash chain (its `apply` does nothing). Anything more recorded, and the copy is
    left as the failure made it, for the caller to throw away."""
    pending = campaign.pending_events
    if len(pending) != 1 or type(pending[0]) is not ActionAsked or pending[0].originator_version != version + 1:
        return
    pending.clear()
    campaign.__dict__["_version"] = version
    campaign.__dict__["_modified_on"] = modified_on
    campaign.last_hash = last_hash


def savepoint(campaign: object) -> dict[str, Any]:
    """The aggregate's state, copied so that `restore` can put it back exactly."""
    return {
        k: (list(v) if k == "_pending_events" else v if k in _IMMUTABLE_STATE else _plain_copy(v))
        for k, v in campaign.__dict__.items()
    }


def restore(campaign: object, saved: dict[str, Any]) -> None:
    campaign.__dict__.clear()
    campaign.__dict__.update(saved)


def command(method: _F) -> _F:
    """Make a command one action on the aggregate (see `one_action`)."""

    @functools.wraps(method)
    def wrapper(self: Campaign, *args: Any, **kwargs: Any) -> Any:
        with one_action(self):
            return method(self, *args, **kwargs)

    return cast(_F, wrapper)


class Undoing(CampaignBase):
    """RK1, RK3, RK4: what was asked, undo and redo."""

    def ask(
        self, name: str, inputs: dict[str, Any], seen: int, player: str | None = None, nation: str | None = None
    ) -> None:
        """RK1, PL1: record what was asked, as the first event of the action now running."""
        self._record(ActionAsked, name=name, inputs=inputs, seen=seen, player=player, nation=nation)

    def game_state(self) -> dict[str, Any]:
        """The part of the state an undo restores. Dice counters, commitments, battle numbers
        and the hash chain only ever move forward: the dice sequence never rewinds, and a roll
        made again after an override undo is recorded as a reroll (RK3)."""
        state = {k: getattr(self, k) for k in UNDOABLE_STATE}
        if self.entered:
            # F8: kept only when an entry was brought forward, so that undo events of campaigns
            # without one stay as they were recorded (verify re-runs them).
            state["entered"] = list(self.entered)
        return copy.deepcopy(state)

    @command
    def undo(
        self,
        undone_from: int,
        events: Sequence[Event],
        restored: dict[str, Any],
        override: Override | None = None,
        reason: str = "",
    ) -> record.UndoPlan:
        """RK3: append a compensating event that puts the board back as it was before
        `undone_from` (`restored`). `events` are every event from `undone_from` on, undone ones
        included. Locked actions (dice rolled, or the other side answered) need an override
        agreed by a nation of the other side, with a reason."""
        if undone_from <= 1 or undone_from > self.version:
            raise RuleViolation("RK3", f"nothing to undo at event {undone_from}")
        rules = self.ruleset
        plan = record.plan_undo(
            events,
            restored,
            self.scenario,
            rules.undos_answer_nothing,
            rules.reveals_answer_nothing,
            rules.neutrals_do_not_act,
            rules.deciders_decide,
        )
        if not plan.actions:
            raise RuleViolation("RK3", f"nothing to undo after event {undone_from - 1}: it was all undone already")
        agreed: tuple[str, ...] = ()
        if override is None:
            if plan.locks:
                raise RuleViolation("RK3", record.locked_message(plan))
        else:
            concerned = [lock.nation for lock in plan.locks]
            if not concerned and self.ruleset.every_override_agreed:
                # RK3: "every override needs it": with nothing locked, the agreement is still of
                # another side than the nation whose action the undo goes back to (a later action
                # of the other side is taken back with that side's own agreement).
                concerned = [plan.actions[0].nation]
            agreed = record.check_override(self.scenario, concerned, override, "an override undo")
        self._record(
            ActionUndone,
            undone_from=undone_from,
            # The last event before this action (which may have begun with what was asked).
            undone_to=self.__dict__.get("_action", self.version + 1) - 1,
            actions=[a.start for a in plan.actions],
            restored=restored,
            override=override is not None,
            # A plain undo may say why too (RK3); an override must (checked above).
            reason=override.reason.strip() if override is not None else reason.strip(),
            rolls=plan.rolls,
            agreed_by=list(agreed),
            locks=[{"action": lock.action, "nation": lock.nation, "because": lock.because} for lock in plan.locks],
            undone_rolls=[dict(r) for r in plan.undone_rolls] if override is not None else [],
        )
        return plan

    @command
    def redo(self, undo: int, original: int, events: Sequence[Event]) -> None:
        """RK4: re-record action `original` (its `events`), taken back by undo event `undo`, as
        it was. The caller checks that nothing new was recorded since that undo; the board is
        then exactly as it was before the action, so every event applies as it did."""
        copies = [e for e in events if type(e).__name__ not in ("ActionRedone", "ActionAsked")]
        if not copies or any(e.action != original for e in events):
            raise RuleViolation("RK4", f"action {original} cannot be redone: its events were not found")
        # Every action redone is an action again of its own, even when `redo --all` re-records
        # several in one command: undo and redo take them back and forth one by one. The first
        # one keeps what was asked (the redo itself) at its head.
        current = self.__dict__.get("_action")
        here = [e for e in self.pending_events if getattr(e, "action", None) == current]
        if any(type(e).__name__ != "ActionAsked" for e in here):
            self.__dict__["_action"] = self.version + 1
        self._record(
            ActionRedone,
            undo=undo,
            original=original,
            events=[e.originator_version for e in copies],
            rolls=[e.roll for e in copies if isinstance(e, DiceRolled)],
        )
        for e in copies:
            try:
                self._record(type(e), **copy.deepcopy(recorded_fields(dict(vars(e)))))
            except (KeyError, IndexError, ValueError, TypeError) as problem:
                raise RuleViolation(
                    "RK4",
                    f"action {original} cannot be redone: the board is no longer as it was before it "
                    f"(event {e.originator_version}: {type(problem).__name__})",
                ) from None
