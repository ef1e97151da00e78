"""ASW combat on the ASW nation's own turn (AS1-AS5) as a pure state machine: the search of
every hunter against every submarine, rounds of the shared volley, and submerging."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from domain.board import Board
from domain.dice import clamp_target
from domain.errors import RuleViolation
from domain.procedures import volley
from domain.procedures.base import (
    Context,
    Decision,
    Die,
    DieGroup,
    Ended,
    Fact,
    Facts,
    Need,
    Outcome,
    Piece,
    Roll,
    Side,
    as_ids,
    check_counts,
    evolve,
    grouped,
    keeps_hash,
    left_by_type,
    rolling_order,
)
from domain.procedures.fight import Fight, VolleyStep, goes_on
from domain.rules import asw as asw_rules


class AswStep(Enum):
    SEARCHERS = "searchers"
    SEARCH = "search"
    VOLLEY = "volley"
    DECIDE = "decide"
    ENDED = "ended"


@keeps_hash
@dataclass(frozen=True)
class AswCombat:
    """ASW combat: the hunters (attacker) against the enemy submarines in the zone."""

    step: AswStep
    attacker: str
    defender: str
    subs: tuple[Piece, ...]  # AS1: every enemy submarine in the zone
    eligible: tuple[Piece, ...]  # AS1, F7: the units that may take part (a board fact)
    fight: Fight | None = None  # hunters against the detected submarines
    undetected: tuple[Piece, ...] = ()
    submerged: tuple[Piece, ...] = ()
    hunters: tuple[str, ...] = ()  # the units taking part
    started: tuple[int, int] = (0, 0)
    result: str = ""


def start(
    ctx: Context, attacker: str, defender: str, subs: tuple[Piece, ...], eligible: tuple[Piece, ...]
) -> AswCombat:
    """AS1: the ASW nation chooses the units taking part (AS2)."""
    return AswCombat(
        AswStep.SEARCHERS,
        attacker,
        defender,
        tuple(sorted(subs)),
        tuple(sorted(eligible)),
        started=(len(eligible), len(subs)),
    )


def need(s: AswCombat, ctx: Context) -> Need:
    if s.step == AswStep.SEARCHERS:
        ids = tuple(p.id for p in s.eligible)
        return Decision(s.attacker, "AS2", "searchers", (("units", ids),), ids)
    if s.step == AswStep.SEARCH:
        groups, dice = search_dice(s, ctx)
        return Roll(s.attacker, "AS2", groups, "asw_search", dice)
    if s.step == AswStep.VOLLEY:
        assert s.fight is not None
        return volley.need(s.fight, ctx)
    if s.step == AswStep.DECIDE:
        assert s.fight is not None
        ids = tuple(p.id for p in s.fight.defenders)
        return Decision(s.defender, "AS5", "submerge", (("units", ids),), ids)
    return Ended(outcome(s, ctx))


def search_groups(s: AswCombat, ctx: Context) -> tuple[DieGroup, ...]:
    """AS2: one die per hunter against each submarine, grouped by submarine and target number;
    a submarine is detected if any of its dice succeeds."""
    return search_dice(s, ctx)[0]


def search_dice(s: AswCombat, ctx: Context) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    """AS2: the search's groups, and its dice in rolling order: each hunter, in its rolling order
    (`rolling_order`), against each submarine."""
    assert s.fight is not None
    key = ("asw_search", s.hunters, s.fight.attackers, s.subs)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _search_dice(s, ctx, s.fight.attackers)
    return found


def _search_dice(
    s: AswCombat, ctx: Context, hunters: tuple[Piece, ...]
) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    board = ctx.board(hunters + s.subs)
    faces = ctx.ruleset.faces_for("asw_search")
    keyed: list[tuple[tuple[tuple[str, ...], int], Die]] = []
    for uid in s.hunters:
        for sub in s.subs:
            spec = asw_rules.search_roll(board, board.units[uid], board.units[sub.id])
            keyed.append(((("detects", sub.id), clamp_target(spec.target, faces)), Die(uid, spec, 0, sub.id)))
    return grouped(keyed, faces, {("detects", sub.id): 1 for sub in s.subs})


def decide(
    s: AswCombat, ctx: Context, choice: object | None, side: Side | None = None, board: Board | None = None
) -> tuple[AswCombat, Facts]:
    """The units searching (AS2), a volley's targets or screens (AS3, HA1: `side` and `board` as
    in `volley.decide`), or the submarines submerging (AS5); None takes the default."""
    if s.step == AswStep.SEARCHERS:
        ids = [p.id for p in s.eligible] if choice is None else as_ids(choice)
        unknown = [u for u in ids if u not in {p.id for p in s.eligible}]
        if unknown or not ids or len(set(ids)) != len(ids):
            raise RuleViolation("AS2", "name at least one eligible searching unit, each once")
        ids = rolling_order(ctx, s.eligible, ids)
        hunters = tuple(p for p in s.eligible if p.id in ids)
        fight = Fight("asw", s.attacker, s.defender, hunters, ())
        facts: Facts = (Fact("searchers", "AS2", tuple(ids), default=choice is None, side="attacker"),)
        return evolve(s, step=AswStep.SEARCH, fight=fight, hunters=tuple(ids)), facts
    if s.step == AswStep.VOLLEY:
        assert s.fight is not None
        return volley.through(s, ctx, volley.decide(s.fight, ctx, choice, side, board), after_volley)
    if s.step == AswStep.DECIDE:
        assert s.fight is not None
        detected = s.fight.defenders
        chosen = [p.id for p in detected] if choice is None else as_ids(choice)
        asw_rules.check_submerge([p.id for p in detected], chosen)
        diving = tuple(p for p in detected if p.id in chosen)
        fight = evolve(s.fight, defenders=tuple(p for p in detected if p.id not in chosen))
        s = evolve(s, fight=fight, submerged=tuple(sorted(s.submerged + diving)))
        facts = (Fact("submerged", "AS5", tuple(chosen), default=choice is None, side="defender"),) if chosen else ()
        if fight.defenders and goes_on(fight, ctx):
            ns, more = _next_round(s, ctx)
            return ns, facts + more
        return _end(s, "submerged" if diving else "fought", "AS5", facts)
    raise RuleViolation("AS5", "the ASW combat has ended")


def _next_round(s: AswCombat, ctx: Context) -> tuple[AswCombat, Facts]:
    assert s.fight is not None
    begun = volley.begin(s.fight, ctx, "main")
    facts: Facts = (Fact("round", "AS3", (), 1),)
    if begun is None:
        return _end(s, "fought", "AS5", facts)
    return evolve(s, step=AswStep.VOLLEY, fight=begun[0]), facts + begun[1]


def after_volley(s: AswCombat, ctx: Context) -> tuple[AswCombat, Facts]:
    """AS4, AS5: once a volley is over, the submarines left decide whether to submerge while
    anyone could still fire another round; otherwise the combat ends. A state whose volley is
    not over is returned as it is."""
    fight = s.fight
    assert fight is not None
    if fight.step != VolleyStep.DONE:
        return s, ()
    # The submarines sunk leave the zone's (as the combat read back from the board has it).
    afloat = {p.id for p in s.undetected + fight.defenders + s.submerged}
    s = evolve(s, subs=tuple(p for p in s.subs if p.id in afloat))
    if fight.defenders and goes_on(fight, ctx):
        return evolve(s, step=AswStep.DECIDE), ()
    return _end(s, "fought", "AS5")


def _end(s: AswCombat, why: str, rule: str, facts: Facts = ()) -> tuple[AswCombat, Facts]:
    """AS2: no submarine detected; AS3: none of the detected can be fought; AS5: the fight is
    over (sunk, submerged, or nobody left can attack)."""
    assert s.fight is not None
    if why == "fought" and not s.fight.defenders:
        why = "submarines_sunk" if not s.submerged else "submerged"
    elif why == "fought" and not s.fight.attackers:
        why = "hunters_sunk"
    return evolve(s, step=AswStep.ENDED, result=why), facts + (Fact("ended", rule),)


def roll(s: AswCombat, ctx: Context, counts: tuple[tuple[int, ...], ...]) -> tuple[AswCombat, Facts]:
    """The search (AS2) or a round's volley (AS4), as the number of dice of each group per result."""
    if s.step == AswStep.VOLLEY:
        assert s.fight is not None
        return volley.through(s, ctx, volley.roll(s.fight, ctx, counts), after_volley)
    if s.step != AswStep.SEARCH:
        raise RuleViolation("AS2", f"the ASW combat waits for {s.step.value}, not dice")
    assert s.fight is not None
    groups = search_groups(s, ctx)
    check_counts(groups, counts)
    found = {g.effect[1] for g, c in zip(groups, counts, strict=True) if c[1]}
    detected = tuple(p for p in s.subs if p.id in found)
    fight = evolve(s.fight, defenders=detected)
    s = evolve(s, fight=fight, undetected=tuple(p for p in s.subs if p.id not in found))
    facts = (Fact("detected", "AS2", tuple(p.id for p in detected), default=True),)
    if detected and goes_on(fight, ctx):
        ns, more = _next_round(s, ctx)
        return ns, facts + more
    return _end(s, "not_detected" if not detected else "fought", "AS3" if detected else "AS2", facts)


def outcome(s: AswCombat, ctx: Context) -> Outcome:
    afloat = {p.id for p in s.fight.attackers} if s.fight else set(s.hunters)
    hunters = tuple(p for p in s.eligible if p.id in afloat or p.id not in s.hunters)
    subs_left = (s.fight.defenders if s.fight else ()) + s.undetected + s.submerged
    return Outcome(
        procedure="asw",
        result=s.result,
        attacker_left=left_by_type(ctx, hunters),
        defender_left=left_by_type(ctx, tuple(sorted(subs_left))),
        attacker_units_lost=s.started[0] - len(hunters),
        defender_units_lost=s.started[1] - len(subs_left),
        holder="both" if subs_left and hunters else "attacker" if hunters else "defender",
    )
