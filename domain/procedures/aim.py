"""Who fires at whom in a volley, chosen before any die: the selective firers' targets and
the escorts' screens (HA1-HA3, AS3, SM4), with their defaults, worked out once per position."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from domain.board import Board
from domain.procedures.base import SIDES, Context, Fact, Facts, Side, evolve, other
from domain.procedures.fight import Fight, Shot, VolleyStep, volley
from domain.rules import targets as targets_rules


@cache
def targets_open(rule: str, sides: tuple[Side, ...]) -> Fact:
    """The fact that a volley's targets are open to these sides (facts are values: one serves
    every volley alike)."""
    return Fact("targets_open", rule, sides)


def screen_choices(f: Fight, ctx: Context) -> dict[Side, dict[str, tuple[str, ...]]]:
    """HA1, HA3: per side, this volley's shots at its units that one of its escorts could take."""
    firing = {x.unit: x for x in volley(f, ctx, f.stage) if x.legal}
    need: dict[Side, dict[str, tuple[str, ...]]] = {}
    for shot in f.shots:
        x = firing.get(shot.firer)
        if x is None or shot.target not in (x.legal or ()):
            continue
        # A shot's target is on the side its firer fires at.
        side: Side = "defender" if x.attacking else "attacker"
        options = _screen_options(f, ctx, side, shot.target)
        if options:
            need.setdefault(side, {})[shot.firer] = options
    return need


def _screen_options(f: Fight, ctx: Context, side: Side, target: str) -> tuple[str, ...]:
    """HA1, HA3: the escorts of `side` that may take a hit on `target`; they depend on the
    side's units alone, so they are worked out once per side and target."""
    own = f.side(side)
    key = ("screen_options", own, target)
    found = ctx.memo.get(key)
    if found is None:
        board = ctx.board(f.pieces)
        units = [board.units[p.id] for p in own]
        found = ctx.memo[key] = tuple(u.id for u in targets_rules.screen_options(board, board.units[target], units))
    return found


def to_screening(f: Fight, ctx: Context) -> tuple[Fight, Facts]:
    need = screen_choices(f, ctx)
    if need:
        return evolve(f, step=VolleyStep.SCREENING, waiting=tuple(s for s in SIDES if s in need)), ()
    return evolve(f, step=VolleyStep.FIRE, waiting=()), ()


def _shots_at(f: Fight, side: Side) -> dict[str, str]:
    own = {p.id for p in f.side(side)}
    return {s.firer: s.target for s in f.shots if s.target in own}


@dataclass
class Targeting:
    """A side's selective firers this volley: their legal targets, the default targets, the
    shots these make, and the fact that records them (one per rule it is recorded under)."""

    legal: dict[str, list[str]]
    picked: dict[str, str]
    shots: dict[str, Shot]
    facts: dict[str, Fact]

    def fact(self, rule: str, side: Side) -> Fact:
        found = self.facts.get(rule)
        if found is None:
            found = self.facts[rule] = targets_fact(rule, side, self.picked, True)
        return found


def targets_fact(rule: str, side: Side, picked: dict[str, str], default: bool) -> Fact:
    return Fact("targets", rule, tuple(sorted(picked)), pairs=tuple(sorted(picked.items())), default=default, side=side)


def targeting_of(f: Fight, ctx: Context, side: Side, board: Board | None = None) -> Targeting:
    """HA1, HA3, AS3, SM4: the legal targets of a side's selective firers this volley, and the
    default targets; they depend on the firers, their legal targets and the enemy's units
    alone, so they are worked out once per those."""
    firing = volley(f, ctx, f.stage, board)
    attacking = side == "attacker"
    plan = tuple((x.unit, x.legal) for x in firing if x.legal and x.attacking == attacking)
    key = ("targeting", side, plan, f.side(other(side)))
    found = ctx.memo.get(key)
    if found is None:
        legal = {unit: list(targets or ()) for unit, targets in plan}
        picked = targets_rules.default_targets(board or ctx.board(f.pieces), legal)
        found = ctx.memo[key] = Targeting(legal, picked, {k: Shot(k, t) for k, t in picked.items()}, {})
    return found


def default_targets(f: Fight, ctx: Context, side: Side) -> dict[str, str]:
    return dict(targeting_of(f, ctx, side).picked)


@dataclass(frozen=True)
class Screening:
    """The shots at a side's units this volley (firer -> target), the rule its screening is
    recorded under, its default screens, the shots these make and the fact that records them."""

    shots_at: dict[str, str]
    rule: str
    screens: dict[str, str]
    screened: dict[str, Shot]
    fact: Fact


def screens_fact(rule: str, side: Side, screens: dict[str, str], default: bool) -> Fact:
    values = tuple(sorted(screens.values()))
    return Fact("screens", rule, values, pairs=tuple(sorted(screens.items())), default=default, side=side)


def screening_of(f: Fight, ctx: Context, side: Side) -> Screening:
    """HA1, HA3: a side's screening this volley; it depends on the shots and the side's units
    alone, so it is worked out once per those."""
    shots_at = _shots_at(f, side)
    own = f.side(side)
    key = ("screening", side, tuple(shots_at.items()), own)
    found = ctx.memo.get(key)
    if found is None:
        board = ctx.board(f.pieces)
        units = [board.units[p.id] for p in own]
        # HA3: screening against aircraft alone is HA3's; any other shot makes it HA1's.
        air = bool(shots_at) and all(board.unit_type(board.units[x]).is_air for x in shots_at)
        rule = "HA3" if air else "HA1"
        screens = targets_rules.default_screens(board, shots_at, units)
        screened = {k: Shot(k, shots_at[k], e) for k, e in screens.items()}
        found = ctx.memo[key] = Screening(shots_at, rule, screens, screened, screens_fact(rule, side, screens, True))
    return found


def default_screens(f: Fight, ctx: Context, side: Side) -> dict[str, str]:
    return dict(screening_of(f, ctx, side).screens)
