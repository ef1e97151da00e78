"""Choice policies for the odds: how each side picks the targets of its selective shots (HA1,
HA3, AS3, SM4) and which of its units take the hits (HA7, and the screens of HA1/HA3), as pure
functions of the procedure state and the decision asked (`domain.procedures.odds.Policy`).

Targets: "spread" (the tracker's default: spread over the legal targets, most valuable first),
"focus" (every shot at the most valuable target it may pick), or a unit type (shots that may
pick a unit of that type do, spread over them; the others spread as by default).

Casualties: "cheapest" (the tracker's default, HA7: the fewest resources lost over every order
of placing the hits; hits that only damage a capital ship first, F3/NC5, then the cheapest
units), "costliest" (the most resources lost over every order, the most expensive units first,
a hit on a damaged capital ship before a fresh one: the owner's worst case), or "firepower"
(the least fire value lost over every order: hits that only damage first, then the units with
the weakest fire value, attack on the attacking side and defense on the defending one, NC2/NC3:
the guns kept). The same order of units decides which unit a screen exposes (HA1, HA3).

Every choice stays within HA1-HA6: the volley checks it as it checks a player's. A side's
choices read only that side's hits, which the odds rely on (each side's losses are worked out
apart)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from domain.board import Board, Unit
from domain.procedures.base import Context, Decision, Side
from domain.procedures.volley import Fight
from domain.rules import combat
from domain.rules import hits as hits_rules
from domain.rules import targets as targets_rules

TARGETS = ("spread", "focus")
CASUALTIES = ("cheapest", "costliest", "firepower")
DEFAULT_TARGETS = "spread"
DEFAULT_CASUALTIES = "cheapest"


def targets_choice(board: Board, legal: Mapping[str, tuple[str, ...]], how: str) -> dict[str, str] | None:
    """HA1, HA3, AS3, SM4: each firer's target under `how`; None for the tracker's default."""
    if how == "spread":
        return None
    if how == "focus":

        def rank(uid: str) -> tuple[int, str]:
            return (-board.unit_type(board.units[uid]).cost, uid)

        return {firer: min(options, key=rank) for firer, options in legal.items() if options}
    narrowed = {
        firer: [t for t in options if board.units[t].type == how] or list(options) for firer, options in legal.items()
    }
    return targets_rules.default_targets(board, narrowed)


def _value(board: Board, unit: Unit, attacking: bool) -> int:
    return combat.fire_roll(board, unit, attacking).target


def casualty_key(board: Board, how: str, attacking: bool) -> hits_rules.Key:
    """HA7: the order in which `how` loses units (the lowest key takes the next hit)."""

    def cost(uid: str) -> int:
        return board.unit_type(board.units[uid]).cost

    if how == "costliest":
        return lambda uid, left: (-cost(uid), left, uid)

    def firepower(uid: str, left: int) -> tuple[object, ...]:
        # F3, NC5: a hit that leaves the unit afloat costs nothing; the guns go last.
        return (left <= 1, _value(board, board.units[uid], attacking), cost(uid), uid)

    return firepower


def casualty_score(board: Board, how: str, attacking: bool, remaining: dict[str, int]) -> hits_rules.Score:
    """HA7: how `how` ranks the outcomes of the orders of placing the hits (the lowest is
    picked): "costliest" the most resources lost, "firepower" the least fire value lost."""

    def lost(hits: Counter[str]) -> tuple[int, int, int, int]:
        units = [board.units[uid] for uid in hits_rules.lost_units(hits, remaining)]
        value = sum(_value(board, u, attacking) for u in units)
        return value, sum(board.unit_type(u).cost for u in units), len(units), sum(hits.values())

    if how == "costliest":
        return lambda hits: tuple(-x for x in lost(hits)[1:])
    return lost


def casualties_choice(board: Board, f: Fight, side: Side, how: str) -> list[str] | None:
    """HA4-HA7: the units taking the side's non-selective hits under `how`, over every order
    the rules let the owner place them in; None for the tracker's default."""
    if how == "cheapest":
        return None
    attacking = side == "attacker"
    units = [board.units[p.id] for p in f.side(side)]
    ids = {u.id for u in units}
    taken = Counter(u for u in f.hits if u in ids)
    groups = [(c, n) for s, c, n in f.groups if s == side]
    placing = hits_rules.Placing(board, groups, units, taken, f.kind == "naval")
    return placing.best(casualty_key(board, how, attacking), casualty_score(board, how, attacking, placing.remaining))


def screens_choice(board: Board, f: Fight, side: Side, how: str) -> dict[str, str] | None:
    """HA1, HA3: per shot at the side, the unit exposed to it (its target or an escort, each
    escort once per volley) under `how`; None for the tracker's default."""
    if how == "cheapest":
        return None
    key = casualty_key(board, how, side == "attacker")
    own = [board.units[p.id] for p in f.side(side)]
    by_id = {u.id: u for u in own}
    shots = {s.firer: s.target for s in f.shots if s.target in by_id}
    exposed: Counter[str] = Counter()
    chosen: dict[str, str] = {}
    for firer in sorted(shots):
        target = by_id[shots[firer]]
        used = set(chosen.values())
        options = [target.id] + [u.id for u in targets_rules.screen_options(board, target, own) if u.id not in used]
        pick = min(
            options,
            key=lambda uid: (key(uid, hits_rules.hits_to_sink(board, by_id[uid]) - exposed[uid]), uid != target.id),
        )
        exposed[pick] += 1
        chosen[firer] = pick
    return chosen


def volley_choice(
    state: object, d: Decision, ctx: Context, targets: Mapping[Side, str], casualties: Mapping[Side, str]
) -> object | None:
    """The waiting side's choice in a volley (targets, screens, casualties) under the policies
    given per side; None for the tracker's default or any other decision."""
    f = getattr(state, "fight", None)
    if not isinstance(f, Fight) or not f.waiting or d.kind not in ("targets", "screens", "casualties"):
        return None
    side = f.waiting[0]
    board = ctx.board(f.pieces)
    if d.kind == "targets":
        return targets_choice(board, dict(d.options), targets.get(side, DEFAULT_TARGETS))
    if d.kind == "screens":
        return screens_choice(board, f, side, casualties.get(side, DEFAULT_CASUALTIES))
    return casualties_choice(board, f, side, casualties.get(side, DEFAULT_CASUALTIES))
