"""Naval battles (NC1-NC6) as a pure state machine: opening fire, rounds of the shared volley,
submerging and retreat at the end of a round, and how the battle ends."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from domain.board import Board
from domain.errors import RuleViolation, require_each_once
from domain.procedures import volley
from domain.procedures.base import (
    SIDES,
    Context,
    Decision,
    Ended,
    Fact,
    Facts,
    Need,
    Outcome,
    Piece,
    Side,
    evolve,
    keeps_hash,
    left_by_type,
)
from domain.procedures.fight import Fight, VolleyStep, goes_on
from domain.rules import combat
from domain.text import possessive


class NavalStep(Enum):
    VOLLEY = "volley"
    DECIDE = "decide"
    ENDED = "ended"


@keeps_hash
@dataclass(frozen=True)
class NavalBattle:
    """A naval battle between the moving nation's units in a zone and its enemies' there."""

    fight: Fight
    step: NavalStep
    retreat_zones: tuple[str, ...] = ()  # NC1: where the attacker may retreat (a board fact)
    waiting: tuple[Side, ...] = ()
    submerged: tuple[Piece, ...] = ()
    retreated: tuple[Piece, ...] = ()
    started: tuple[int, int] = (0, 0)  # units each side began with
    result: str = ""


@dataclass(frozen=True)
class NavalDecision:
    """NC4, NC1: the submarines of a side that submerge, and the attacker's retreat zone."""

    submerge: tuple[str, ...] = ()
    retreat_to: str | None = None


_FIGHT_ON = NavalDecision()  # NC4: the default, no submarine submerges and nobody retreats
_ROUND = Fact("round", "NC3", (), 1)  # NC3: another round (facts are values: one serves all)


def start(
    ctx: Context,
    attacker: str,
    defender: str,
    attackers: tuple[Piece, ...],
    defenders: tuple[Piece, ...],
    retreat_zones: tuple[str, ...] = (),
) -> tuple[NavalBattle, Facts]:
    """NC1, NC2: round one opens with the submarines' opening fire; each enemy escort cancels
    the opening fire of the ruleset's number of submarines."""
    fight = Fight("naval", attacker, defender, tuple(sorted(attackers)), tuple(sorted(defenders)))
    board = ctx.board(fight.pieces)
    opening: list[str] = []
    facts: list[Fact] = [Fact("round", "NC2", (), 1)]
    for side in SIDES:
        own = [board.units[p.id] for p in fight.side(side)]
        subs = [u for u in own if board.unit_type(u).is_submarine]
        if not subs:
            continue
        enemy = [board.units[p.id] for p in fight.side("defender" if side == "attacker" else "attacker")]
        escorts = combat.escorts(board, enemy)
        firing, cancelled = combat.opening_fire(board, subs, escorts)
        opening += firing
        lists = (("cancelled", tuple(cancelled)), ("escorts", tuple(e.id for e in escorts)))
        facts.append(Fact("opening_fire", "NC2", tuple(firing), len(cancelled), side=side, lists=lists))
    state = NavalBattle(
        evolve(fight, opening=tuple(opening)),
        NavalStep.VOLLEY,
        retreat_zones=tuple(retreat_zones),
        started=(len(attackers), len(defenders)),
    )
    state, more = _to_targets(state, ctx, "opening" if opening else "main")
    return state, tuple(facts) + more


def _to_targets(s: NavalBattle, ctx: Context, stage: str) -> tuple[NavalBattle, Facts]:
    begun = volley.begin(s.fight, ctx, "opening" if stage == "opening" else "main")
    if begun is None:
        facts = volley.withheld(s.fight, ctx, "opening" if stage == "opening" else "main", ())
        if stage == "opening":
            ns, more = _to_targets(s, ctx, "main")
            return ns, facts + more
        ns, more = _after_round(s, ctx)
        return ns, facts + more
    fight, facts = begun
    return evolve(s, fight=fight, step=NavalStep.VOLLEY), facts


def after_volley(s: NavalBattle, ctx: Context) -> tuple[NavalBattle, Facts]:
    """NC2: opening-fire casualties go before the other units fire; NC3 after the round. A
    state whose volley is not over is returned as it is."""
    if s.fight.step != VolleyStep.DONE:
        return s, ()
    # Not memoised: the odds enumeration keeps what follows a volley by what it left of each
    # side, so each position comes here once, and hashing it would cost more than it saves.
    return _next_volley(s, ctx)


def _next_volley(s: NavalBattle, ctx: Context) -> tuple[NavalBattle, Facts]:
    if s.fight.stage == "opening":
        if s.fight.attackers and s.fight.defenders:
            return _to_targets(s, ctx, "main")
        return _close(s)
    return _after_round(s, ctx)


def _after_round(s: NavalBattle, ctx: Context) -> tuple[NavalBattle, Facts]:
    """NC1, NC4: the battle ends when a side is gone or nobody can hit; otherwise the sides with
    submarines (and the attacker, who may retreat) decide."""
    f = s.fight
    if not f.attackers or not f.defenders or not goes_on(f, ctx):
        return _close(s)
    waiting: list[Side] = []
    if s.retreat_zones or _subs(ctx, f.attackers):
        waiting.append("attacker")
    if _subs(ctx, f.defenders):
        waiting.append("defender")
    if waiting:
        # Between rounds no volley is open (a round whose main volley nobody could fire ends
        # with its opening one): the battle read back from the log has it so too.
        return evolve(s, step=NavalStep.DECIDE, waiting=tuple(waiting), fight=evolve(f, stage="main")), ()
    return _next_round(s, ctx)


def _subs(ctx: Context, pieces: tuple[Piece, ...]) -> tuple[str, ...]:
    subs = ctx.ruleset.submarines
    return tuple(p.id for p in pieces if p.type in subs)


def _next_round(s: NavalBattle, ctx: Context) -> tuple[NavalBattle, Facts]:
    """NC3: another round; opening fire was for the first round only."""
    s = evolve(s, fight=evolve(s.fight, opening=()) if s.fight.opening else s.fight, waiting=())
    ns, facts = _to_targets(s, ctx, "main")
    return ns, (_ROUND,) + facts


def _close(s: NavalBattle, facts: Facts = ()) -> tuple[NavalBattle, Facts]:
    """NC1: the battle ends, and why."""
    f = s.fight
    if s.retreated:
        result = "retreated"
    elif not f.attackers and any(p.nation == f.attacker for p in s.submerged):
        result = "submerged"
    elif not f.attackers and not f.defenders:
        result = "mutual_destruction"
    elif not f.attackers:
        result = "defender_wins"
    elif not f.defenders:
        result = "attacker_wins"
    else:
        result = "no_hit_possible"
    return evolve(s, step=NavalStep.ENDED, waiting=(), result=result), facts + (Fact("ended", "NC1"),)


def need(s: NavalBattle, ctx: Context) -> Need:
    """What the battle waits for: the volley's targets, screens, dice or casualties; a side's
    decision after a round (default: fight on); or nothing (its outcome)."""
    if s.step == NavalStep.VOLLEY:
        return volley.need(s.fight, ctx)
    if s.step == NavalStep.DECIDE:
        side = s.waiting[0]
        subs = _subs(ctx, s.fight.side(side))
        zones = s.retreat_zones if side == "attacker" else ()
        return Decision(
            s.fight.nation(side), "NC4", "naval_decide", (("submerge", subs), ("retreat", zones)), NavalDecision()
        )
    return Ended(outcome(s, ctx))


def decide(
    s: NavalBattle, ctx: Context, choice: object | None, side: Side | None = None, board: Board | None = None
) -> tuple[NavalBattle, Facts]:
    """A volley's targets, screens or casualties (HA1-HA7: `side` and `board` as in
    `volley.decide`), or a side's submerging and the attacker's retreat after a round (NC4,
    NC1; `side` is the first waiting side unless named); None takes the default."""
    if s.step == NavalStep.VOLLEY:
        return volley.through(s, ctx, volley.decide(s.fight, ctx, choice, side, board), after_volley)
    if s.step != NavalStep.DECIDE:
        raise RuleViolation("NC1", "the battle has ended")
    side = s.waiting[0] if side is None else side
    d = choice if isinstance(choice, NavalDecision) else _FIGHT_ON
    if d.submerge:
        subs = _subs(ctx, s.fight.side(side))
        require_each_once(d.submerge, "submarine")
        for uid in d.submerge:
            if uid not in subs:
                raise RuleViolation(
                    "NC4", f"{uid} is not one of {possessive(s.fight.nation(side))} submarines in this battle"
                )
    if d.retreat_to is not None and (side != "attacker" or d.retreat_to not in s.retreat_zones):
        raise RuleViolation("NC1", f"no retreat to {d.retreat_to}")
    f = s.fight
    noted: list[Fact] = []
    diving = tuple(p for p in f.side(side) if p.id in d.submerge) if d.submerge else ()
    if diving:
        kept = tuple(p for p in f.side(side) if p.id not in d.submerge)
        f = evolve(f, attackers=kept) if side == "attacker" else evolve(f, defenders=kept)
        noted.append(Fact("submerged", "NC4", tuple(d.submerge), side=side))
    waiting = tuple(x for x in s.waiting if x != side)
    s = evolve(s, fight=f, submerged=tuple(sorted(s.submerged + diving)) if diving else s.submerged, waiting=waiting)
    if d.retreat_to is not None:
        lists = (("to", (d.retreat_to,)),)
        noted.append(Fact("retreated", "NC1", tuple(p.id for p in f.attackers), side="attacker", lists=lists))
        s = evolve(s, fight=evolve(f, attackers=()), retreated=f.attackers)
        return _close(s, tuple(noted))
    if s.waiting and (f.attackers and f.defenders or not ctx.ruleset.gone_side_ends_battle):
        return s, tuple(noted)
    # NC1: a side gone (its last submarine submerged) ends the battle; nobody decides further.
    if f.attackers and f.defenders and goes_on(f, ctx):
        ns, more = _next_round(s, ctx)
        return ns, tuple(noted) + more
    return _close(s, tuple(noted))


def roll(s: NavalBattle, ctx: Context, counts: tuple[tuple[int, ...], ...]) -> tuple[NavalBattle, Facts]:
    if s.step != NavalStep.VOLLEY or s.fight.step != VolleyStep.FIRE:
        raise RuleViolation("NC3", "the battle does not wait for dice")
    return volley.through(s, ctx, volley.roll(s.fight, ctx, counts), after_volley)


def outcome(s: NavalBattle, ctx: Context) -> Outcome:
    """Survivors in the zone include submerged submarines (NC4); retreated units left it. In a
    naval battle the attacking side is the moving nation's units alone (NC1)."""
    f = s.fight
    att_here = f.attackers + tuple(p for p in s.submerged if p.nation == f.attacker)
    def_here = f.defenders + tuple(p for p in s.submerged if p.nation != f.attacker)
    holder = "both" if att_here and def_here else "attacker" if att_here else "defender" if def_here else "none"
    return Outcome(
        procedure="naval",
        result=s.result,
        attacker_left=left_by_type(ctx, att_here + s.retreated),
        defender_left=left_by_type(ctx, def_here),
        attacker_units_lost=s.started[0] - len(att_here) - len(s.retreated),
        defender_units_lost=s.started[1] - len(def_here),
        holder=holder,
    )
