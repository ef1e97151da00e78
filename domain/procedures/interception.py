"""Interceptions of a submarine group passing a hostile zone (SM2-SM5) as a pure state machine:
the search, which submarines were found, rounds of the shared volley against the units that
found them, and after each round fight on, submerge or retreat; then go on or stop."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from domain.board import Board
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
    keeps_hash,
    left_by_type,
    rolling_order,
    searcher_dice,
)
from domain.procedures.fight import Fight, VolleyStep, goes_on
from domain.rules import interception as rules


class InterceptionStep(Enum):
    SEARCHERS = "searchers"
    SEARCH = "search"
    DETECT = "detect"
    VOLLEY = "volley"
    DECIDE = "decide"
    CONTINUE = "continue"
    ENDED = "ended"


@dataclass(frozen=True)
class InterceptionDecision:
    """SM4: per detected submarine, submerge, retreat, or (named in neither) fight on."""

    submerge: tuple[str, ...] = ()
    retreat: tuple[str, ...] = ()


@keeps_hash
@dataclass(frozen=True)
class Interception:
    """The moving nation's submarine group (attacker) paused in a zone where the enemy may search."""

    step: InterceptionStep
    attacker: str
    defender: str
    subs: tuple[Piece, ...]
    eligible: tuple[Piece, ...]  # SM2: the enemy units that may search (a board fact)
    can_retreat: bool = False  # SM4: the group came from another zone
    route_goes_on: bool = False  # SM5: the zone is not the group's destination
    searchers: tuple[Piece, ...] = ()
    found: int = 0
    hunters: tuple[str, ...] = ()  # SM3: the units whose search succeeded fight
    fight: Fight | None = None  # detected submarines against the units that found them
    undetected: tuple[Piece, ...] = ()
    submerged: tuple[Piece, ...] = ()
    retreated: tuple[Piece, ...] = ()
    stopping: tuple[str, ...] = ()
    result: str = ""
    started: int = 0  # the group's submarines at the start (the outcome counts the lost)


def start(
    ctx: Context,
    attacker: str,
    defender: str,
    subs: tuple[Piece, ...],
    eligible: tuple[Piece, ...],
    can_retreat: bool = False,
    route_goes_on: bool = False,
) -> Interception:
    """SM2: the enemy chooses which eligible units search (none is allowed)."""
    return Interception(
        InterceptionStep.SEARCHERS,
        attacker,
        defender,
        tuple(subs),
        tuple(sorted(eligible)),
        can_retreat,
        route_goes_on,
        undetected=tuple(subs),
        started=len(subs),
    )


def need(s: Interception, ctx: Context) -> Need:
    if s.step == InterceptionStep.SEARCHERS:
        ids = tuple(p.id for p in s.eligible)
        return Decision(s.defender, "SM2", "searchers", (("units", ids),), ids)
    if s.step == InterceptionStep.SEARCH:
        groups, dice = search_dice(s, ctx)
        return Roll(s.defender, "SM3", groups, "interception_search", dice)
    if s.step == InterceptionStep.DETECT:
        ids = tuple(p.id for p in s.subs)
        return Decision(s.defender, "SM3", "detect", (("units", ids),), ids[: s.found])
    if s.step == InterceptionStep.VOLLEY:
        assert s.fight is not None
        return volley.need(s.fight, ctx)
    if s.step == InterceptionStep.DECIDE:
        assert s.fight is not None
        ids = tuple(p.id for p in s.fight.attackers)
        return Decision(
            s.attacker,
            "SM4",
            "decide",
            (("submerge", ids), ("retreat", ids if s.can_retreat else ())),
            InterceptionDecision(ids),
        )
    if s.step == InterceptionStep.CONTINUE:
        return Decision(s.attacker, "SM5", "stop", (("units", tuple(p.id for p in _free(s))),), ())
    return Ended(outcome(s, ctx))


def search_dice(s: Interception, ctx: Context) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    """SM3: one die per searching unit (see `searcher_dice`)."""
    return searcher_dice(ctx, "interception_search", s.attacker, s.searchers, s.subs, rules.search_roll, "finds")


def _free(s: Interception) -> tuple[Piece, ...]:
    return s.undetected + (s.fight.attackers if s.fight else ())


def decide(
    s: Interception, ctx: Context, choice: object | None, side: Side | None = None, board: Board | None = None
) -> tuple[Interception, Facts]:
    """The units searching (SM2), the submarines found (SM3), a volley's targets or screens
    (SM4, HA1: `side` and `board` as in `volley.decide`), fight on, submerge or retreat (SM4),
    and which free submarines stop (SM5); None takes the default."""
    if s.step == InterceptionStep.SEARCHERS:
        ids = [p.id for p in s.eligible] if choice is None else as_ids(choice)
        if any(u not in {p.id for p in s.eligible} for u in ids) or len(set(ids)) != len(ids):
            raise RuleViolation("SM2", "only the eligible units search, each once")
        ids = rolling_order(ctx, s.eligible, ids)
        chosen = tuple(next(p for p in s.eligible if p.id == u) for u in ids)
        facts: Facts = (Fact("searchers", "SM2", tuple(ids), default=choice is None, side="defender"),)
        if not chosen:
            ns, more = _over(evolve(s, searchers=()), ctx)
            return ns, facts + (Fact("found", "SM3"),) + more
        return evolve(s, step=InterceptionStep.SEARCH, searchers=chosen), facts
    if s.step == InterceptionStep.DETECT:
        ids = [p.id for p in s.subs[: s.found]] if choice is None else as_ids(choice)
        named = rules.check_detected([p.id for p in s.subs], s.found, ids, board)
        return _detected(s, ctx, tuple(named), choice is None)
    if s.step == InterceptionStep.VOLLEY:
        assert s.fight is not None
        return volley.through(s, ctx, volley.decide(s.fight, ctx, choice, side, board), after_volley)
    if s.step == InterceptionStep.DECIDE:
        assert s.fight is not None
        detected = s.fight.attackers
        ids = [p.id for p in detected]
        d = choice if isinstance(choice, InterceptionDecision) else InterceptionDecision(tuple(ids))
        rules.check_decisions(ids, list(d.submerge), list(d.retreat), "back" if s.can_retreat else None, board)
        diving = tuple(p for p in detected if p.id in d.submerge)
        leaving = tuple(p for p in detected if p.id in d.retreat)
        fight = evolve(s.fight, attackers=tuple(p for p in detected if p not in diving and p not in leaving))
        s = evolve(
            s,
            fight=fight,
            submerged=tuple(sorted(s.submerged + diving)),
            retreated=tuple(sorted(s.retreated + leaving)),
        )
        default = choice is None
        facts = ((Fact("submerged", "SM4", d.submerge, default=default, side="attacker"),) if diving else ()) + (
            (Fact("retreated", "SM4", d.retreat, default=default, side="attacker"),) if leaving else ()
        )
        if fight.attackers and goes_on(fight, ctx):
            ns, more = _next_round(s, ctx)
            return ns, facts + more
        ns, more = _over(s, ctx)
        return ns, facts + more
    if s.step == InterceptionStep.CONTINUE:
        free = [p.id for p in _free(s)]
        stop = [] if choice is None else as_ids(choice)
        rules.check_stops(free, stop, board)
        facts = (Fact("continued", "SM5", tuple(u for u in free if u not in stop), default=choice is None),)
        return _end(evolve(s, stopping=tuple(stop)), "SM5", facts)
    raise RuleViolation("SM5", "the interception has ended")


def _detected(s: Interception, ctx: Context, named: tuple[str, ...], default: bool) -> tuple[Interception, Facts]:
    """SM3, SM4: the detected submarines (named in this order) fight the units whose search
    found them."""
    detected = tuple(p for p in s.subs if p.id in named)
    fight = Fight("interception", s.attacker, s.defender, tuple(sorted(detected)), s.fight.defenders if s.fight else ())
    s = evolve(s, fight=fight, undetected=tuple(p for p in s.subs if p not in detected))
    ns, facts = _next_round(s, ctx)
    return ns, (Fact("detected", "SM3", named, default=default),) + facts


def _next_round(s: Interception, ctx: Context) -> tuple[Interception, Facts]:
    assert s.fight is not None
    begun = volley.begin(s.fight, ctx, "main")
    facts: Facts = (Fact("round", "SM4", (), 1),)
    if begun is None:
        ns, more = _over(s, ctx)
        return ns, facts + more
    return evolve(s, step=InterceptionStep.VOLLEY, fight=begun[0]), facts + begun[1]


def after_volley(s: Interception, ctx: Context) -> tuple[Interception, Facts]:
    """SM4, SM5: once a volley is over, the submarines left decide while anyone could still
    fire another round; otherwise the interception is over. A state whose volley is not over
    is returned as it is."""
    assert s.fight is not None
    if s.fight.step != VolleyStep.DONE:
        return s, ()
    # The submarines sunk leave the group (as the interception read back from the board has it).
    fight = s.fight
    afloat = {p.id for p in s.undetected + fight.attackers + s.submerged + s.retreated}
    s = evolve(s, subs=tuple(p for p in s.subs if p.id in afloat))
    if fight.attackers and goes_on(fight, ctx):
        return evolve(s, step=InterceptionStep.DECIDE), ()
    return _over(s, ctx)


def _over(s: Interception, ctx: Context) -> tuple[Interception, Facts]:
    """SM5: free submarines go on or stop when the zone is not their destination; otherwise the
    interception ends (SM5 when free submarines stay, SM4 when the fight took them all)."""
    if _free(s) and s.route_goes_on:
        return evolve(s, step=InterceptionStep.CONTINUE), ()
    return _end(s, "SM5" if _free(s) else "SM4")


def _end(s: Interception, rule: str, facts: Facts = ()) -> tuple[Interception, Facts]:
    detected = s.fight.attackers if s.fight else ()
    if not s.found:
        result = "not_detected"
    elif not detected and not s.submerged and not s.retreated and not s.undetected:
        result = "all_sunk"
    elif s.submerged:
        result = "submerged"
    elif s.retreated:
        result = "retreated"
    elif not detected:
        result = "detected_sunk"
    elif s.fight is not None and not s.fight.defenders:
        result = "hunters_sunk"
    else:
        result = "no_hit_possible"
    return evolve(s, step=InterceptionStep.ENDED, result=result), facts + (Fact("ended", rule),)


def roll(s: Interception, ctx: Context, counts: tuple[tuple[int, ...], ...]) -> tuple[Interception, Facts]:
    """The search (SM3) or a round's volley (SM4), as the number of dice of each group per result."""
    if s.step == InterceptionStep.VOLLEY:
        assert s.fight is not None
        return volley.through(s, ctx, volley.roll(s.fight, ctx, counts), after_volley)
    if s.step != InterceptionStep.SEARCH:
        raise RuleViolation("SM3", f"the interception waits for {s.step.value}, not dice")
    check_counts(search_dice(s, ctx)[0], counts)
    found_by = tuple(sorted(p for p, c in zip(s.searchers, counts, strict=True) if c[1]))
    found = min(len(found_by), len(s.subs))
    # SM3: the hunters are the units whose search succeeded.
    s = evolve(
        s,
        found=found,
        hunters=tuple(p.id for p in found_by),
        fight=Fight("interception", s.attacker, s.defender, (), tuple(sorted(found_by))),
    )
    facts = (Fact("found", "SM3", tuple(p.id for p in found_by), found),)
    if found == 0:
        ns, more = _over(evolve(s, fight=None), ctx)
        return ns, facts + more
    if found == len(s.subs):
        ns, more = _detected(s, ctx, tuple(p.id for p in s.subs), True)
        return ns, facts + more
    return evolve(s, step=InterceptionStep.DETECT), facts


def outcome(s: Interception, ctx: Context) -> Outcome:
    detected = s.fight.attackers if s.fight else ()
    subs_left = tuple(sorted(s.undetected + detected + s.submerged + s.retreated))
    afloat = {p.id for p in s.fight.defenders} if s.fight else set()
    hunters_left = tuple(p for p in s.eligible if p.id not in s.hunters or p.id in afloat)
    going = len([p for p in _free(s) if p.id not in s.stopping]) if s.route_goes_on else 0
    return Outcome(
        procedure="interception",
        result=s.result,
        attacker_left=left_by_type(ctx, subs_left),
        defender_left=left_by_type(ctx, hunters_left),
        attacker_units_lost=s.started - len(subs_left),
        defender_units_lost=len(s.eligible) - len(hunters_left),
        holder="both" if hunters_left else "attacker",
        extra=(
            ("submarines_going_on", going),
            ("submarines_submerged", len(s.submerged)),
            ("submarines_detected", s.found),
        ),
    )
