"""Who fights whom in a volley (NC2, NC3, NC6, AS3, AS4, SM4, CV4): the two sides and the volley
in progress, who fires at what, whether anyone could fire another round, and the dice of a
volley grouped by target number and by what a hit does."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from domain.board import Board, Unit
from domain.dice import clamp_target
from domain.procedures.base import (
    SIDES,
    Context,
    Die,
    DieGroup,
    Piece,
    Side,
    die_groups,
    evolve,
    keeps_hash,
    other,
)
from domain.rules import asw, combat, convoy
from domain.rules import hits as hits_rules
from domain.rules import targets as targets_rules
from domain.rules.convoy import Roll as Spec

Kind = Literal["naval", "convoy", "asw", "interception"]
Stage = Literal["opening", "main", "next"]


class VolleyStep(Enum):
    TARGETS = "targets"
    SCREENING = "screening"
    FIRE = "fire"
    CASUALTIES = "casualties"
    DONE = "done"


@dataclass(frozen=True)
class Shot:
    """A selective shot (HA1, HA3, AS3, SM4): its target, and the escort screening it."""

    firer: str
    target: str
    screen: str | None = None

    @property
    def lands_on(self) -> str:
        return self.screen or self.target


@dataclass(frozen=True)
class Firer:
    unit: str
    attacking: bool
    legal: tuple[str, ...] | None  # the targets of a selective shot; None: hits placed by the owner


@keeps_hash
@dataclass(frozen=True)
class Fight:
    """Two sides fighting, and the volley in progress.

    Naval battles: the attacker's units and the defender's. Convoy rounds (CV4): the attacker's
    submarines in the zone and the detecting units. ASW combat: the hunters and the detected
    submarines. Interceptions: the detected submarines and the hunters."""

    kind: Kind
    attacker: str  # the nation that makes the attacking side's choices (HA7)
    defender: str
    attackers: tuple[Piece, ...]
    defenders: tuple[Piece, ...]
    opening: tuple[str, ...] = ()  # NC2: submarines firing first in round one
    stage: Literal["opening", "main"] = "main"
    step: VolleyStep = VolleyStep.DONE
    waiting: tuple[Side, ...] = ()
    shots: tuple[Shot, ...] = ()
    hits: tuple[str, ...] = ()  # selective hits landing, one entry per hit
    groups: tuple[tuple[Side, str, int], ...] = ()  # non-selective hits: side hit, firing class, hits
    chosen: tuple[tuple[Side, tuple[str, ...]], ...] = ()

    def side(self, side: Side) -> tuple[Piece, ...]:
        return self.attackers if side == "attacker" else self.defenders

    def nation(self, side: Side) -> str:
        return self.attacker if side == "attacker" else self.defender

    def side_of(self, uid: str) -> Side:
        return "attacker" if any(p.id == uid for p in self.attackers) else "defender"

    @property
    def pieces(self) -> tuple[Piece, ...]:
        return self.attackers + self.defenders


_HUNTING: dict[str, Side] = {"interception": "defender", "asw": "attacker"}
_TARGET_RULE = {"interception": "SM4", "asw": "AS3", "convoy": "CV4"}
_FIRE_RULE = {"interception": "SM4", "asw": "AS4", "convoy": "CV4"}
_DICE_KIND = {"naval": "naval_combat", "convoy": "convoy_combat"}


def hunting(kind: Kind) -> Side | None:
    """The side hunting submarines: the interceptors (SM4) or the ASW nation (AS3)."""
    return _HUNTING.get(kind)


def target_rule(f: Fight, stage: str) -> str:
    return _TARGET_RULE.get(f.kind, "NC2" if stage == "opening" else "HA1")


def fire_rule(f: Fight) -> str:
    return _FIRE_RULE.get(f.kind, "NC2" if f.stage == "opening" else "NC3")


def dice_kind(kind: Kind) -> str:
    return _DICE_KIND.get(kind, "asw_combat")


def volley(f: Fight, ctx: Context, stage: Stage, board: Board | None = None) -> tuple[Firer, ...]:
    """Who fires in this volley, in rolling order, with the legal targets of selective shots.

    NC2: "opening" is the submarines firing first in round one, "main" the rest of a round,
    "next" a whole round to come (whether the fight goes on). NC6: a unit with nothing its hits
    may fall on fires no die."""
    if f.kind == "naval" and stage == "next" and not f.opening:
        # With no opening fire the whole round to come is the round's main volley: one key.
        stage = "main"
    # Looked up first by the identity of the sides (the states of one fight share them), then
    # by their value. The identities stay valid: the entry keeps the sides it names alive.
    alike = ("volley_of", id(f.attackers), id(f.defenders), id(f.opening), f.kind, f.attacker, stage)
    same = ctx.memo.get(alike)
    if same is not None:
        firers: tuple[Firer, ...] = same[3]
        return firers
    key = ("volley", f.kind, f.attacker, f.attackers, f.defenders, f.opening, stage)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _volley(f, ctx, stage, board)
    ctx.memo[alike] = (f.attackers, f.defenders, f.opening, found)
    return found


def _volley(f: Fight, ctx: Context, stage: Stage, given: Board | None) -> tuple[Firer, ...]:
    if f.kind == "naval":
        return _naval_volley(f, ctx, stage, given)
    board = given or ctx.board(f.pieces)
    units = board.units
    fire: list[Firer] = []
    if f.kind == "convoy":
        if stage == "next":
            return ()  # CV7: one round only
        subs, detecting = f.attackers, f.defenders
        ships = [units[p.id] for p in detecting if board.unit_type(units[p.id]).is_naval]
        for p in detecting if subs else ():
            # CV4, HA3: a detecting aircraft picks a submarine; a ship's hits are placed by the
            # submarines' owner (HA7).
            u = units[p.id]
            legal = tuple(s.id for s in subs) if board.unit_type(u).is_air else None
            if convoy.attack_roll(board, u, f.attacker).target > 0:
                fire.append(Firer(p.id, False, legal))
        for s in subs if ships else ():
            targets = targets_rules.selective_targets(board, units[s.id], ships)
            fire.append(Firer(s.id, True, tuple(t.id for t in targets)))
        return tuple(fire)
    hunters_side = hunting(f.kind)
    if hunters_side is not None:
        hunters = f.side(hunters_side)
        detected = f.side(other(hunters_side))
        for side in SIDES:
            if side == hunters_side:
                for p in hunters:
                    if detected and asw.can_attack(board, units[p.id]):
                        fire.append(Firer(p.id, side == "attacker", tuple(s.id for s in detected)))
            else:
                targets_pool = [units[p.id] for p in hunters]
                for s in detected:
                    legal = tuple(t.id for t in targets_rules.selective_targets(board, units[s.id], targets_pool))
                    if legal:
                        fire.append(Firer(s.id, side == "attacker", legal))
    return tuple(fire)


def _naval_volley(f: Fight, ctx: Context, stage: Stage, board: Board | None) -> tuple[Firer, ...]:
    fire: list[Firer] = []
    for side in SIDES:
        enemy_pieces = f.side(other(side))
        enemies: list[Unit] | None = None
        # Whether a unit fires and at what (NC2, NC3, HA1-HA4, NC6) depends on its type and its
        # nation's technology (the context's) and on the enemies, not on which unit of the
        # type it is nor on the rest of its side: worked out once per side and enemies, and
        # each unit's firer once per those (None: it does not fire).
        reach_key = ("reach", side, enemy_pieces)
        reach: dict[Any, Any] | None = ctx.memo.get(reach_key)
        if reach is None:
            reach = ctx.memo[reach_key] = {}
        for p in f.side(side):
            opened = p.id in f.opening
            if (stage == "opening" and not opened) or (stage == "main" and opened):
                continue
            firer: Firer | bool | None = reach.get(p)
            if firer is None:
                kind = (p.type, p.nation)
                found = reach.get(kind)
                if found is None:
                    board = board or ctx.board(f.pieces)
                    u = board.units[p.id]
                    if enemies is None:
                        enemies = [board.units[e.id] for e in enemy_pieces]
                    if combat.fire_roll(board, u, side == "attacker").target <= 0:
                        found = reach[kind] = (False, None)
                    elif targets_rules.is_selective(board, u):
                        legal = tuple(t.id for t in targets_rules.naval_targets(board, u, enemies))
                        found = reach[kind] = (bool(legal), legal)
                    else:
                        found = reach[kind] = (combat.has_target(board, u, enemies), None)
                firer = reach[p] = Firer(p.id, side == "attacker", found[1]) if found[0] else False
            if isinstance(firer, Firer):
                fire.append(firer)
    return tuple(fire)


def goes_on(f: Fight, ctx: Context) -> bool:
    """Whether anyone would still have something to fire at in another round."""
    return bool(volley(f, ctx, "next"))


def roller(f: Fight, ctx: Context) -> str:
    firing = volley(f, ctx, f.stage)
    return f.attacker if firing and firing[0].attacking else f.defender


def _spec(f: Fight, board: Board, x: Firer, shot: Shot | None) -> Spec:
    unit = board.units[x.unit]
    if f.kind == "convoy":
        return convoy.return_fire_roll(board, unit) if x.attacking else convoy.attack_roll(board, unit, f.attacker)
    if f.kind == "naval":
        return combat.fire_roll(board, unit, x.attacking)
    if (x.attacking and hunting(f.kind) == "attacker") or (not x.attacking and hunting(f.kind) == "defender"):
        assert shot is not None
        return asw.attack_roll(board, unit, board.units[shot.target])
    return asw.return_fire_roll(board, unit, moving=f.kind == "interception")


def fire_groups(f: Fight, ctx: Context) -> tuple[DieGroup, ...]:
    """SM4, AS4, NC2, NC3, CV4: one die per firing unit, grouped by target number and by what a
    hit does (lands on one unit, or adds to a firing class's hits on a side)."""
    return fire_dice(f, ctx)[0]


def fire_dice(f: Fight, ctx: Context) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    """The groups of the volley's roll and each die in rolling order (the attacking side's
    firers first, then by unit), as the referee rolls and records them."""
    key = ("fire_dice", f)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _fire_dice(f, ctx)
    return found


def _fire_dice(f: Fight, ctx: Context) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    shots = {s.firer: s for s in f.shots}
    pieces = {p.id: p for p in f.pieces} if shots else {}
    # What a die is depends on its firer (its unit and side) and its shot (the pieces it aims
    # at and lands on), not on the rest of the fight: worked out once per those, in a table
    # per procedure, stage and attacker. Keyed by the firer's identity (the states of a fight
    # share their firers); each entry keeps its firer alive, so the identity stays its own.
    table_key = ("dice", f.kind, f.stage, f.attacker)
    table = ctx.memo.get(table_key)
    if table is None:
        table = ctx.memo[table_key] = {}
    counts: dict[tuple[tuple[str, ...], int], int] = {}
    shooters: list[_Shooter] = []
    caps: dict[tuple[str, ...], int] = {}
    board: Board | None = None
    for x in volley(f, ctx, f.stage):
        shot = shots.get(x.unit)
        if shot is None:
            if x.legal is not None:
                continue
            key: object = id(x)
        else:
            key = (id(x), shot.target, shot.screen, pieces.get(shot.target), pieces.get(shot.lands_on))
        slot = table.get(key)
        if slot is not None and slot[0] is x:
            found = slot[1]
        else:
            board = board or ctx.board(f.pieces)
            found = _shooter(f, ctx, board, x, shot)
            table[key] = (x, found)
        if found.cap is not None:
            caps[found.effect] = found.cap
        elif found.effect not in caps:
            caps[found.effect] = _capacity(f, ctx, found.effect[1])
        counts[found.key] = counts.get(found.key, 0) + 1
        shooters.append(found)
    made = ctx.memo.get(("die_groups",))
    if made is None:
        made = ctx.memo[("die_groups",)] = {}
    groups, index = die_groups(counts, ctx.ruleset.faces_for(dice_kind(f.kind)), caps, made)
    # Each die made once per group it counts in.
    dice: list[Die] = []
    for shooter in shooters:
        i = index[shooter.key]
        die = shooter.by_group.get(i)
        dice.append(die if die is not None else shooter.in_group(i))
    return groups, tuple(dice)


@dataclass
class _Shooter:
    """One unit's die in a volley: what a hit does, the target number, the die as recorded
    (by the group it counts in), and the hits its effect can take when it lands on one unit."""

    effect: tuple[str, ...]
    target: int
    die: Die
    cap: int | None
    by_group: dict[int, Die]
    key: tuple[tuple[str, ...], int] = field(init=False)  # its group's: (effect, target)

    def __post_init__(self) -> None:
        self.key = (self.effect, self.target)

    def in_group(self, group: int) -> Die:
        found = self.by_group.get(group)
        if found is None:
            found = self.by_group[group] = evolve(self.die, group=group)
        return found


def _shooter(f: Fight, ctx: Context, board: Board, x: Firer, shot: Shot | None) -> _Shooter:
    spec = _spec(f, board, x, shot)
    target = clamp_target(spec.target, ctx.ruleset.faces_for(dice_kind(f.kind)))
    side: Side = "attacker" if x.attacking else "defender"
    if shot is None:
        effect = ("class", other(side), board.unit_type(board.units[x.unit]).unit_class)
        return _Shooter(effect, target, Die(x.unit, spec, 0), None, {})
    # AS3, SM4: a hunter's hit is the procedure's own; a submarine's or an aircraft's
    # selective shot is HA1's or HA3's.
    air = board.unit_type(board.units[x.unit]).is_air
    how = fire_rule(f) if side == hunting(f.kind) else "HA3" if air else "HA1"
    cap = hits_rules.hits_to_sink(board, board.units[shot.lands_on])
    die = Die(x.unit, spec, 0, shot.target, shot.screen, how)
    return _Shooter(("unit", shot.lands_on), target, die, cap, {})


def _capacity(f: Fight, ctx: Context, side: Side) -> int:
    """The hits a side can still take in all (the cap of a firing class's hits on it), looked
    up by the identity of the side's units (the entry keeps them alive)."""
    own = f.side(side)
    key = ("capacity", id(own))
    slot = ctx.memo.get(key)
    if slot is not None and slot[0] is own:
        counted: int = slot[1]
        return counted
    found = sum(ctx.hits_left(p) for p in own)
    ctx.memo[key] = (own, found)
    return found


def fire_waiting(f: Fight, ctx: Context) -> tuple[Side, ...]:
    """SM4, AS4, NC2, NC3: the sides whose units fire this volley, in rolling order."""
    sides: list[Side] = ["attacker" if x.attacking else "defender" for x in volley(f, ctx, f.stage)]
    return tuple(dict.fromkeys(sides))
