"""Record-keeping rules RK3 and D4: which actions an undo may take back without an override,
and whose agreement an override needs.

An undo is planned over the events from the first one it takes back to the end of the log,
undone ones included: an answer or a roll that was itself undone later still happened, and
still locks what came before it (the other side saw it). Events are read by their kind and
fields only, so this module needs nothing from the aggregate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from domain.dice import Override
from domain.errors import InputError, RuleViolation
from domain.scenario import Scenario
from domain.text import listed, plural, possessive

UNDO = "ActionUndone"
REDO = "ActionRedone"
# Who records what a league server does by itself (a seed reveal at a round's end, or on its
# first serve of a campaign), as the player of its actions.
AUTOMATIC = "tracker serve"

# Kinds of event that name a nation which did not act: a phase change names the nation whose
# turn comes next, a turn passed over or an entry into the war (F8) a neutral's. Who recorded
# one is the phasing nation (PL2, RK3), and it is nobody's move in the stale-view message.
NAMES_NOT_THE_ACTOR = frozenset({"PhaseAdvanced", "TurnPassedOver", "WarEntered"})
# Choices recorded without a nation field: who made them follows from the battle.
_SEARCHER_CHOOSES = frozenset({"SearchersChosen", "SubmarinesDetected"})
_NATION_FIELDS = ("nation", "attacker", "roller")
# A battle's steps that wait on a decision which, when it is to go on (fight on, submerge
# nothing, go on), records no event of its own: the action's first event is the battle moving on.
_DECISIONS = frozenset({"decide", "continue"})
_MOVING_ON = frozenset({"BattleAdvanced", "RoundStarted"})
_BATTLE_STARTS = {
    "ConvoyAttackDeclared": "convoy",
    "InterceptionStarted": "interception",
    "AswCombatStarted": "asw",
    "NavalBattleStarted": "naval",
}


@dataclass(frozen=True)
class PlannedAction:
    """One action an undo would take back: its first event, whose it is, its events."""

    start: int
    nation: str
    events: tuple[Any, ...]

    @property
    def rolls(self) -> list[int]:
        return [e.roll for e in self.events if type(e).__name__ == "DiceRolled"]


@dataclass(frozen=True)
class Lock:
    """RK3: why an action can no longer be undone without an override."""

    action: int
    nation: str
    # As the undo event records it (verify compares what a re-run records: never reworded).
    because: str
    # Said after `because` in a refusal, not recorded: that the roll or answer which locks was
    # itself undone since, and why it locks all the same.
    since: str = ""


@dataclass(frozen=True)
class UndoPlan:
    first: int
    last: int
    actions: tuple[PlannedAction, ...]
    locks: tuple[Lock, ...]
    # The rolls taken back, with where and by whom they were made (to flag a reroll later).
    undone_rolls: tuple[dict[str, Any], ...]
    # Whose agreement an override needs is read from its sides (F5): not part of the plan.
    scenario: Scenario | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def rolls(self) -> list[int]:
        return [r for a in self.actions for r in a.rolls]


def _kind(event: Any) -> str:
    return type(event).__name__


def automatic_reveal(events: Sequence[Any]) -> bool:
    """D5: whether an action's events (what was asked first) are a seed reveal the server
    recorded by itself: nobody's action."""
    if not events or _kind(events[0]) != "ActionAsked":
        return False
    asked = events[0]
    return getattr(asked, "name", None) == "dice reveal" and getattr(asked, "player", None) == AUTOMATIC


def plan_undo(
    events: Sequence[Any],
    before: dict[str, Any],
    scenario: Scenario,
    undos_answer_nothing: bool = True,
    reveals_answer_nothing: bool = True,
    neutrals_do_not_act: bool = True,
    deciders_decide: bool = True,
) -> UndoPlan:
    """RK3: the live actions among `events` (every event from the first one undone to the last
    recorded) and the locks on them. `before` is the game state just before the first event.
    `undos_answer_nothing` (the ruleset's key): an undo is no answer of the side whose turn it
    was recorded in; a campaign recorded before the key counted it as one.
    `reveals_answer_nothing` (the ruleset's key): nor is a seed reveal the server recorded by
    itself (D5); a campaign recorded before the key counted it as the phasing nation's.
    `neutrals_do_not_act` (the ruleset's key): an action is never the neutral's whose turn it
    passed over (F8); see `_actor`.
    `deciders_decide` (the ruleset's key): a decision that records no event of its own (to
    fight on, NC4) is the deciding nation's; see `deciders`."""
    position = (before["round"], before["nation"], before["phase"])
    battles = {str(k): (b["kind"], b["attacker"], b["defender"]) for k, b in before.get("battles", {}).items()}
    undone: set[int] = set()
    # The undo event that took each event back (the first one, an undo may be undone in turn).
    undone_by: dict[int, int] = {}
    undos: set[int] = set()  # the actions that are undos
    groups: dict[int, list[Any]] = {}
    positions: dict[int, tuple[int, str, str]] = {}
    for e in events:
        version, kind = e.originator_version, _kind(e)
        positions[version] = position
        if kind == UNDO:
            undone.update(range(e.undone_from, e.undone_to + 1))
            undone.update(range(e.action, version + 1))
            for v in range(e.undone_from, e.undone_to + 1):
                undone_by.setdefault(v, version)
            undos.add(e.action)
            restored = e.restored
            position = (
                restored.get("round", position[0]),
                restored.get("nation", position[1]),
                restored.get("phase", position[2]),
            )
            continue
        if kind in _BATTLE_STARTS:
            attacker = e.attacker if kind == "ConvoyAttackDeclared" else e.nation
            battles[str(e.battle)] = (_BATTLE_STARTS[kind], attacker, e.defender)
        if kind == "PhaseAdvanced":
            position = (e.round, e.nation, e.phase)
        groups.setdefault(e.action, []).append(e)
    decided = deciders(events, before.get("battles", {})) if deciders_decide else {}
    phasing = {start: positions[evts[0].originator_version][1] for start, evts in groups.items()}
    actors = {
        start: decided.get(start) or _actor(evts, phasing[start], battles, neutrals_do_not_act)
        for start, evts in groups.items()
    }
    live = {start for start in groups if start not in undone}
    locks = _locks(groups, actors, live, undos, undone_by, scenario, undos_answer_nothing, reveals_answer_nothing)
    actions = tuple(PlannedAction(s, actors[s], tuple(groups[s])) for s in sorted(live))
    undone_rolls = _undone_rolls(actions, positions)
    last = events[-1].originator_version if events else 0
    first = events[0].originator_version if events else 0
    return UndoPlan(first, last, actions, tuple(locks), undone_rolls, scenario)


def _undone_rolls(
    actions: Sequence[PlannedAction], positions: dict[int, tuple[int, str, str]]
) -> tuple[dict[str, Any], ...]:
    """The dice rolls among the actions an undo takes back, each with its turn position."""
    return tuple(
        {
            "roll": e.roll,
            "roller": e.roller,
            "rule": e.rule,
            "kind": e.kind,
            "unit": e.unit,
            "round": positions[e.originator_version][0],
            "nation": positions[e.originator_version][1],
            "phase": positions[e.originator_version][2],
        }
        for a in actions
        for e in a.events
        if _kind(e) == "DiceRolled"
    )


def _locks(
    groups: dict[int, list[Any]],
    actors: dict[int, str],
    live: set[int],
    undos: set[int],
    undone_by: dict[int, int],
    scenario: Scenario,
    undos_answer_nothing: bool,
    reveals_answer_nothing: bool,
) -> list[Lock]:
    """RK3: the locks on the live actions, oldest first, found walking back once: the first
    roll after each action, and the first action of each side after it (an undo, and the
    server's own seed reveal, answering nothing where the ruleset says so)."""
    locks: list[Lock] = []
    next_roll: Any = None
    first_of_side: dict[str, tuple[str, int]] = {}
    for start in sorted(groups, reverse=True):
        evts = groups[start]
        nation = actors[start]
        if start in live:
            lock = _lock(start, nation, evts, next_roll, first_of_side, scenario, undone_by)
            if lock is not None:
                locks.append(lock)
        rolls = [e for e in evts if _kind(e) == "DiceRolled"]
        if rolls:
            next_roll = rolls[0]
        answers = start not in undos or not undos_answer_nothing
        if answers and reveals_answer_nothing and automatic_reveal(evts):
            # The server's reveal at a round's end: the round's last `next` is not answered by
            # the nation whose turn the reveal was recorded in (it did nothing).
            answers = False
        if answers:
            # An undo answers nothing (RK3 lists choices, searches, targets, screens): one recorded
            # after `next` opened another side's turn is the phasing nation's, and taking the
            # undone action's own turn back further must not need that side's agreement.
            first_of_side[scenario.side_of(nation)] = (nation, evts[0].originator_version)
    locks.reverse()
    return locks


def _lock(
    start: int,
    nation: str,
    events: Sequence[Any],
    next_roll: Any,
    first_of_side: dict[str, tuple[str, int]],
    scenario: Scenario,
    undone_by: dict[int, int],
) -> Lock | None:
    """RK3: the action is locked if it rolled dice, if dice were rolled after it, or if a nation
    of another side acted after it (the earliest such answer is named). A roll or an answer
    undone since still locks (the other side saw it): the refusal says so, since the log marks
    it undone."""
    own = [e.roll for e in events if _kind(e) == "DiceRolled"]
    if own:
        return Lock(start, nation, f"action {start} by {nation} rolled dice (roll {', '.join(map(str, own))})")
    if next_roll is not None:
        undo = undone_by.get(next_roll.originator_version)
        since = f"roll {next_roll.roll} was undone since by event {undo}, but its dice were seen: they still lock"
        return Lock(
            start,
            nation,
            f"action {start} by {nation} is followed by dice (roll {next_roll.roll} at event "
            f"{next_roll.originator_version})",
            since if undo is not None else "",
        )
    side = scenario.side_of(nation)
    answers = [answer for other, answer in first_of_side.items() if other != side]
    if answers:
        by, at = min(answers, key=lambda a: a[1])
        undo = undone_by.get(at)
        since = f"{possessive(by)} answer was undone since by event {undo}, but it was seen: it still locks"
        return Lock(
            start,
            nation,
            f"action {start} by {nation} was answered by {by} at event {at}",
            since if undo is not None else "",
        )
    return None


def _steps(battles: dict[str, Any]) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {str(k): (str(b.get("step")), tuple(b.get("waiting", ()))) for k, b in battles.items()}


def deciders(events: Sequence[Any], battles: dict[str, Any]) -> dict[int, str]:
    """NC4, SM4, AS5, SM5: the nation that made each action among `events` (by the action's
    first event) which is a decision after a battle's round to go on, recording no event of its
    own (see `_decider`). `battles` are the battles (each with its step and waiting nations)
    before the first event; an undo among the events puts back those it restored."""
    # Each battle's step and the nations it waits for, as the log goes: what an action found.
    steps = _steps(battles)
    found: dict[int, dict[str, tuple[str, tuple[str, ...]]]] = {}
    groups: dict[int, list[Any]] = {}
    for e in events:
        kind = _kind(e)
        if kind == UNDO:
            steps = _steps(e.restored.get("battles", {}))
            continue
        if e.action not in groups:
            found[e.action] = dict(steps)
        if kind == "BattleAdvanced":
            steps[str(e.battle)] = (e.step, tuple(e.waiting))
        groups.setdefault(e.action, []).append(e)
    made = {start: _decider(evts, found[start]) for start, evts in groups.items()}
    return {start: nation for start, nation in made.items() if nation is not None}


def _decider(events: Sequence[Any], steps: dict[str, tuple[str, tuple[str, ...]]]) -> str | None:
    """NC4, SM4, AS5, SM5: the nation whose decision after a battle's round was to go on (fight
    on, submerge nothing, go on), which records no event of its own, or None when the action is
    no such decision. Its first event (after what was asked) is the battle moving on: the same
    step waiting for one nation fewer, which is the decider, or the next step or round, after
    the one nation the step still waited for. `steps` are each battle's step and waiting
    nations before the action."""
    first = next((e for e in events if _kind(e) != "ActionAsked"), None)
    if first is None or _kind(first) not in _MOVING_ON:
        return None
    step, waiting = steps.get(str(first.battle), ("", ()))
    if step not in _DECISIONS:
        return None
    if _kind(first) == "BattleAdvanced" and first.step == step:
        gone = [n for n in waiting if n not in first.waiting]
        return gone[0] if len(gone) == 1 else None
    return waiting[0] if len(waiting) == 1 else None


def _actor(
    events: Sequence[Any], phasing: str, battles: dict[str, tuple[str, str, str]], neutrals_do_not_act: bool = True
) -> str:
    """Whose action it is: the nation that moved, chose, declared or rolled first in it; a phase
    change, or a turn passed over or an entry into the war on the way to one (F8), is the phasing
    nation's. `neutrals_do_not_act` (the ruleset's key): recorded before it, an action whose
    first event naming a nation was a turn passed over or an entry was that neutral's (a `next`
    ending a turn of a ruleset without collect_resources)."""
    not_the_actor = NAMES_NOT_THE_ACTOR if neutrals_do_not_act else {"PhaseAdvanced"}
    for e in events:
        kind = _kind(e)
        if kind in not_the_actor:
            return phasing
        if kind in _SEARCHER_CHOOSES and str(e.battle) in battles:
            battle_kind, attacker, defender = battles[str(e.battle)]
            # The searching side: the NTR owner (CV3), the enemy of a moving group (SM3), the hunter (AS2).
            return attacker if battle_kind == "asw" else defender
        for field in _NATION_FIELDS:
            value = getattr(e, field, None)
            if isinstance(value, str):
                return value
    return phasing


def action_actor(events: Sequence[Any], phasing: str, battles: dict[str, tuple[str, str, str]]) -> str:
    """PL2: the nation an action acts for (see `_actor`), as the rule stands: checked only when
    the action is recorded (verify re-runs the recorded ask), so in every campaign a `next` that
    passes a neutral's turn over is the phasing nation's. `battles` maps each battle number to
    (kind, attacker, defender)."""
    return _actor(events, phasing, battles)


def locked_message(plan: UndoPlan) -> str:
    """RK3: why a plain undo is refused (the oldest lock, and whether the roll or answer behind
    it was undone since) and the override that would take it back, with whose agreement."""
    lock = plan.locks[0]
    since = f"; {lock.since}" if lock.since else ""
    more = f" (and {plural(len(plan.locks) - 1, 'more locked action')})" if len(plan.locks) > 1 else ""
    nations = list(dict.fromkeys(lock.nation for lock in plan.locks))
    scenario = plan.scenario
    if scenario is None or len(_by_side(scenario, nations)) < 2:
        whom = f"NATION (a nation of another side than {lock.nation})"
    else:
        whose = listed([possessive(n) for n in nations])
        whom = f"NATIONS (the locked actions are {whose}, so {_each_side_agrees(scenario, nations)})"
    return f"{lock.because}{since}{more}; undo it only with --override --reason TEXT --agreed-by {whom}"


def _by_side(scenario: Scenario, nations: Iterable[str]) -> dict[str, list[str]]:
    """F5: `nations` grouped by their side, in the order given."""
    sides: dict[str, list[str]] = {}
    for nation in nations:
        sides.setdefault(scenario.side_of(nation), []).append(nation)
    return sides


def _others(scenario: Scenario, nations: Sequence[str]) -> list[str]:
    """RK3: the nations that may agree for all of `nations` (one side's): those of another side."""
    return [n for n in scenario.nations if all(scenario.are_enemies(nation, n) for nation in nations)]


def _each_side_agrees(scenario: Scenario, nations: Sequence[str]) -> str:
    """RK3 for an override concerning nations of more than one side, in words: each one's
    actions need a nation of another side than its own, so no nation agrees for all of them."""
    return f"{_every(scenario)}: {_one_of_each(scenario, nations)}"


def _one_of_each(scenario: Scenario, nations: Sequence[str]) -> str:
    """'one of Britain, France for Germany and one of Germany, Austria-Hungary for Britain'."""
    groups = _by_side(scenario, nations).values()
    return " and ".join(f"one of {', '.join(_others(scenario, g))} for {listed(g)}" for g in groups)


def _nation_named(scenario: Scenario, text: str) -> str:
    """The nation an `--agreed-by` names, as every command takes one: its name in any case, or
    its code (`britain`, `GB`)."""
    folded = text.casefold()
    for name, nation in scenario.nations.items():
        if folded in (name.casefold(), nation.code.casefold()):
            return name
    raise InputError(f"--agreed-by: no nation {text!r} (nations: {', '.join(scenario.nations)})")


def check_override(scenario: Scenario, nations: Iterable[str], override: Override, what: str) -> tuple[str, ...]:
    """RK3: an override names a reason and, for each nation whose locked action or typed roll it
    concerns, a nation of another side that agreed. Returns the agreeing nations, checked. An
    override concerning nations of more than one side needs a nation of another side for each:
    the refusal names every one still missing, not only the first."""
    if not override.reason.strip():
        raise InputError(f"{what} needs --reason TEXT, shown in reports")
    needed = list(dict.fromkeys(nations))
    agreed = tuple(dict.fromkeys(_nation_named(scenario, n.strip()) for n in override.agreed_by if n.strip()))
    several = len(_by_side(scenario, needed)) > 1
    if not agreed:
        if several:
            raise InputError(
                f"{what} needs --agreed-by NATIONS: it concerns {listed(needed)}, nations of different sides, "
                f"so {_each_side_agrees(scenario, needed)} (e.g. --agreed-by {_example(scenario, needed, ())}; RK3)"
            )
        others = ", ".join(dict.fromkeys(n for n in scenario.nations if needed and scenario.are_enemies(needed[0], n)))
        whom = f" ({others})" if others else ""
        raise InputError(f"{what} needs --agreed-by NATION: a nation of another side{whom} that agrees (RK3)")
    missing = [nation for nation in needed if not any(scenario.are_enemies(nation, a) for a in agreed)]
    if missing and several:
        covered = [n for n in needed if n not in missing]
        verb = "agrees" if len(agreed) == 1 else "agree"
        agrees = f"{listed(agreed)} {verb} for {listed(covered)} only; " if covered else ""
        raise RuleViolation(
            "RK3",
            f"{what} concerns {listed(needed)}, nations of different sides: each needs the agreement of "
            f"a nation of another side than its own, so {_every(scenario)}; {agrees}still needed: "
            f"{_one_of_each(scenario, missing)} (e.g. --agreed-by {_example(scenario, needed, agreed)})",
        )
    if missing:
        nation = missing[0]
        others = ", ".join(n for n in scenario.nations if scenario.are_enemies(nation, n))
        raise RuleViolation(
            "RK3",
            f"{what} concerns {nation}: it needs the agreement of a nation of another side "
            f"({others}), not {', '.join(agreed)}",
        )
    return agreed


def _every(scenario: Scenario) -> str:
    """Who must agree to an override concerning nations of different sides."""
    if len({n.side for n in scenario.nations.values()}) == 2:
        return "both sides must agree"
    return "a nation of another side must agree for each"


def _example(scenario: Scenario, needed: Sequence[str], agreed: Sequence[str]) -> str:
    """An `--agreed-by` that would do: the nations named, and the first nation that agrees for
    each nation still missing one."""
    chosen = list(agreed)
    for nation in needed:
        if not any(scenario.are_enemies(nation, a) for a in chosen):
            chosen.append(next(n for n in scenario.nations if scenario.are_enemies(nation, n)))
    return ",".join(chosen)
