"""The question an odds advice answers (`tracker odds need`, `escorts`, `buy`): which of a
nation's units can reach a sea zone in time (F4, F7, F8, SM1), and who fights whom there."""

from __future__ import annotations

import shlex
from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation
from domain.rules import asw
from domain.rules.economy import shares_carriers
from domain.rules.interception import eligible_searchers
from domain.rules.movement import stopped_in_hostile_zone
from domain.text import possessive
from tracker.analysis.hand import MAX_UNITS_PER_SIDE

# Phases of a turn before its combat movement ends: a unit may still move to attack (F4, F7);
# to hold a zone it may also move in non-combat movement.
BEFORE_COMBAT = ("research", "purchase", "combat_movement")
TO_HOLD = (*BEFORE_COMBAT, "naval_combat", "land_combat", "noncombat_movement")


@dataclass(frozen=True)
class Reach:
    """A unit that can be in the zone at the end of the phase, `steps` moves away (0: there)."""

    unit: Unit
    steps: int


@dataclass
class Question:
    """One search: who fights whom in `zone`, and which side's force is being chosen."""

    board: Board
    zone: str
    nation: str  # the nation whose force is chosen
    hold: bool  # choose the defending force (`--hold`) rather than the attacking one
    pool: list[Reach]  # the units the force is chosen from
    others: dict[str, list[Unit]]  # the other side's units by nation (all of them fight)
    allies: list[Unit] = field(default_factory=list)  # `--hold`: allied units in the zone, defending too
    fixed: bool = False  # no unit may move any more: the force is the pool, all of it
    # SM2-SM4: submarines left out of the pool, each with the zone on its way where the enemy
    # may intercept it (a detected submarine never reaches its destination).
    intercepted: list[tuple[Unit, str]] = field(default_factory=list)
    # `--enemy-type`: the enemy types weighed (empty: every enemy unit), and the enemy units
    # that fight but are not weighed, by nation.
    enemy_types: tuple[str, ...] = ()
    left_out: dict[str, list[Unit]] = field(default_factory=dict)


def hostile_zones(board: Board, nation: str) -> frozenset[str]:
    """SM1: the zones hostile for `nation` (`Board.is_hostile_for`), found in one pass over
    the units rather than one per zone a path goes through."""
    return frozenset(
        u.at for u in board.units.values() if board.unit_type(u).hostile and board.enemies(nation, u.nation)
    )


def searched_zones(board: Board, nation: str, hostile: frozenset[str]) -> frozenset[str]:
    """SM2: the hostile zones where a submarine group of `nation` passing through would pause
    for the enemy's interception search (the referee's own test, `eligible_searchers`)."""
    return frozenset(z for z in hostile if eligible_searchers(board, nation, z))


def steps_to(
    board: Board,
    unit: Unit,
    zone: str,
    hostile: frozenset[str] | None = None,
    searched: frozenset[str] = frozenset(),
) -> int | None:
    """F4, F7, F8, SM1: the fewest moves for a unit from where it is to `zone`, None when there
    is no path: ships over sea zones, stopping at no hostile zone on the way unless submarines;
    aircraft over land and sea; no unit through a neutral's territory. `hostile`: the
    `hostile_zones` of the unit's nation, when known; `searched`: zones a submarine may not
    pass (`searched_zones`: it could be detected there and stopped, SM2-SM4)."""
    game_map = board.scenario.game_map
    if unit.at == zone:
        return 0
    ut = board.unit_type(unit)
    blocked: frozenset[str] = searched if ut.is_submarine else frozenset()
    if ut.is_naval and not ut.is_submarine:
        blocked = hostile if hostile is not None else hostile_zones(board, unit.nation)
    seen = {unit.at}
    queue = deque([(unit.at, 0)])
    while queue:
        here, steps = queue.popleft()
        if here != unit.at and here in blocked:
            continue  # a surface ship must stop in a hostile zone (SM1)
        for nxt in game_map.adjacency.get(here, ()):
            owner = board.owners.get(nxt)
            if nxt in seen or (ut.is_naval and not game_map.is_sea(nxt)):
                continue
            if owner is not None and owner != unit.nation and owner in board.neutral:
                continue  # F8
            if nxt == zone:
                return steps + 1
            seen.add(nxt)
            queue.append((nxt, steps + 1))
    return None


def landing_steps(board: Board, nation: str, zone: str) -> int | None:
    """F7, F8: the fewest map steps from `zone` to where an air unit of `nation` may end its
    turn: a territory of its side (never through or on a neutral's), or none at all with a
    friendly carrier in the zone; None when there is no such place."""
    game_map = board.scenario.game_map
    if any(board.unit_type(u).carries > 0 and shares_carriers(board, nation, u.nation) for u in board.units_at(zone)):
        return 0
    seen = {zone}
    queue = deque([(zone, 0)])
    while queue:
        here, steps = queue.popleft()
        for nxt in game_map.adjacency.get(here, ()):
            if nxt in seen:
                continue
            seen.add(nxt)
            owner = board.owners.get(nxt)
            if owner is not None and owner != nation and owner in board.neutral:
                continue  # F8
            if owner is not None and game_map.is_land(nxt) and board.allies(nation, owner):
                return steps + 1
            queue.append((nxt, steps + 1))
    return None


def next_round(board: Board) -> Board:
    """F8: the board as the next round finds it at war: a nation whose entry round it is is
    neutral no more (its units and NTR can be attacked, its territory entered), the units where
    they are now. Advice about the nation's next turn weighs that board."""
    neutral = frozenset(n for n in board.neutral if board.scenario.nations[n].entry_round > board.round + 1)
    return board if neutral == board.neutral else replace(board, neutral=neutral)


def can_move(board: Board, nation: str, phases: tuple[str, ...] = BEFORE_COMBAT) -> bool:
    """T3, F4: the nation's units may still move this turn, in one of `phases`."""
    return board.nation == nation and board.phase in phases


def stays(board: Board, unit: Unit, hostile: frozenset[str], ended: Collection[str] = ()) -> bool:
    """SM1, SM4, SM5: the unit may not move again this turn: a ship (not a submarine) that
    entered a hostile zone this turn was stopped there (the referee's own test,
    `stopped_in_hostile_zone`), and a submarine that submerged, retreated or stopped to attack has
    ended its movement (`ended`: the campaign's `movement_ended`)."""
    return unit.id in ended or stopped_in_hostile_zone(board, unit, hostile)


def reach(
    board: Board,
    nation: str,
    zone: str,
    next_turn: bool = False,
    phases: tuple[str, ...] = BEFORE_COMBAT,
    ended: Collection[str] = (),
    intercepted: list[tuple[Unit, str]] | None = None,
) -> list[Reach]:
    """F4, F7, SM1: the nation's naval and air units that can be in `zone` when it next fights
    or is attacked: with the moves left this turn while it is in one of `phases`, the units
    already there otherwise; with `next_turn`, a full allowance (its next turn's reach).
    `ended`: units whose movement has ended this turn (SM4, SM5; see `stays`). `intercepted`:
    a list to take the submarines that could get there only through a zone where the enemy may
    intercept them (SM2-SM4), each with that zone; they are then left out, not being ones to
    count on (a detected submarine fights, submerges or retreats, and goes no further)."""
    moving = next_turn or can_move(board, nation, phases)
    hostile = hostile_zones(board, nation) if moving else frozenset()
    searched = searched_zones(board, nation, hostile) if intercepted is not None and moving else frozenset()
    back: list[int | None] = []  # F7: the way from the zone to a landing place, found once
    out = []
    for unit in sorted(board.units.values(), key=lambda u: u.id):
        ut = board.unit_type(unit)
        if unit.nation != nation or not (ut.is_naval or ut.is_air):
            continue
        if not moving or (not next_turn and stays(board, unit, hostile, ended)):
            if unit.at == zone:
                out.append(Reach(unit, 0))
            continue
        steps = steps_to(board, unit, zone, hostile)
        left = ut.move if next_turn else ut.move - unit.moved
        if ut.is_submarine and searched and steps is not None and steps <= left:
            safe = steps_to(board, unit, zone, hostile, searched)
            if safe is None or safe > left:
                assert intercepted is not None  # `searched` is only found for it
                intercepted.append((unit, searched_on_way(board, unit, zone, searched, left)))
                continue
            steps = safe
        if steps is not None and ut.is_air:
            # F7: the range covers the way back too; an air unit that could not land after
            # the battle is lost, so it is not one to count on (nor an enemy's to fear).
            if not back:
                back.append(landing_steps(board, nation, zone))
            home = back[0]
            steps = None if home is None or steps + home > left else steps
        if steps is not None and steps <= left:
            out.append(Reach(unit, steps))
    return out


def searched_on_way(board: Board, unit: Unit, zone: str, searched: frozenset[str], left: int) -> str:
    """SM2: the first zone where the enemy may intercept a submarine on a way of at most
    `left` moves to `zone` that passes one (`reach` knows there is such a way)."""
    for z in sorted(searched - {unit.at, zone}):
        there = steps_to(board, unit, z, None, searched - {z})
        on = steps_to(board, replace(unit, at=z), zone)
        if there is not None and on is not None and there + on <= left:
            return z
    return min(searched - {unit.at, zone}, default=zone)


def require_sea_zone(board: Board, zone: str) -> None:
    game_map = board.scenario.game_map
    if not game_map.knows(zone):
        raise InputError(f"unknown zone {zone!r}")
    if not game_map.is_sea(zone):
        raise RuleViolation("NC1", f"{zone} is a land territory, not a sea zone")


def neutrals_there(board: Board, nation: str, zone: str) -> str:
    """F8: why units of another side in `zone` are nobody's to attack: '; Italy is neutral until
    round 4 (F8)', or '' when none is neutral."""
    other = sorted({u.nation for u in board.units_at(zone) if u.nation in board.neutral and u.nation != nation})
    if not other:
        return ""
    until = ", ".join(f"{n} until round {board.scenario.nations[n].entry_round}" for n in other)
    return f"; neutral, so nobody's enemy (F8): {until}"


def attack_question(
    board: Board, nation: str, zone: str, ended: Collection[str] = (), attacking: Collection[str] = ()
) -> Question:
    """NC1: `nation` attacks every enemy unit in `zone` with units that can get there
    (`ended`: units whose movement has ended this turn, `reach`; `attacking`: the zones where
    its submarines stopped to attack this turn, the campaign's `attack_zones`, SM5)."""
    require_sea_zone(board, zone)
    enemies = [u for u in board.units_at(zone) if board.enemies(nation, u.nation)]
    if not any(board.unit_type(u).is_naval for u in enemies):
        raise RuleViolation(
            "NC1",
            f"there are no naval units of {possessive(nation)} enemies in {zone} "
            f"(zone holds: {board.describe_zone(zone)})" + neutrals_there(board, nation, zone),
        )
    intercepted: list[tuple[Unit, str]] = []
    pool = reach(board, nation, zone, ended=ended, intercepted=intercepted)
    if not pool:
        raise RuleViolation("F4", f"no unit of {nation} can reach {zone} this phase" + _unless(intercepted))
    if submarines_alone(board, enemies) and zone not in attacking:
        raise RuleViolation("NC1", asw_instead(board, nation, zone, enemies, pool))
    others: dict[str, list[Unit]] = {}
    for u in enemies:
        others.setdefault(u.nation, []).append(u)
    return Question(
        board, zone, nation, False, pool, others, fixed=not can_move(board, nation), intercepted=intercepted
    )


def submarines_alone(board: Board, enemies: list[Unit]) -> bool:
    """NC1, AS1: enemy submarines alone call for ASW combat, not a naval battle (a ruleset
    may say otherwise, `submarines_alone_call_for_asw`)."""
    return board.ruleset.submarines_alone_call_for_asw and all(board.unit_type(u).is_submarine for u in enemies)


def asw_instead(board: Board, nation: str, zone: str, enemies: list[Unit], pool: list[Reach]) -> str:
    """NC1, AS1, SM5: why no naval battle against submarines alone is weighed, and the
    `tracker odds asw` line of the ASW combat the units that can be there may fight instead.
    The referee refuses that battle unless the nation's submarines stopped there to attack
    (SM5), which they do only where the enemy may intercept them: never in a zone of enemy
    submarines alone, so moving in does not make one."""
    subs = ", ".join(u.id for u in enemies)
    why = (
        f"{zone} holds only enemy submarines ({subs}): that calls for ASW combat (AS1), not a naval battle, "
        "whoever moves in (SM5: submarines stop to attack only where the enemy may intercept them)"
    )
    hunters = [r.unit for r in pool if asw.can_search(board, r.unit)]
    if not hunters:
        return f"{why}, and no unit of {nation} that can be there may start it (AS1)"
    if len(enemies) > MAX_UNITS_PER_SIDE:
        # `tracker odds asw` refuses them all, and weighing some of them is another combat.
        return f"{why}; {len(enemies)} submarines are more than exact odds weigh ({MAX_UNITS_PER_SIDE} a side)"
    with_whom = f"every unit of {nation} that can be there and search"
    if len(hunters) > MAX_UNITS_PER_SIDE:
        # As many as `tracker odds asw` takes: those whose dice need least, against these submarines.
        with_whom = f"the {MAX_UNITS_PER_SIDE} units of {nation} that can be there and search best (of {len(hunters)})"
        hunters = best_hunters(board, hunters, enemies[0])
    attacker = force_text(nation, counted(hunters))
    defenders = [force_text(n, c) for n, c in sorted(by_nation(enemies).items())]
    words = ["tracker odds asw", f"--attacker {shlex.quote(attacker)}"]
    words += [f"--defender {shlex.quote(d)}" for d in defenders]
    words += [f"--tech {shlex.quote(t)}" for t in tech_texts(board, {nation, *(u.nation for u in enemies)})]
    return f"{why}; its odds with {with_whom}: {' '.join(words)}"


def best_hunters(board: Board, hunters: list[Unit], sub: Unit) -> list[Unit]:
    """The `MAX_UNITS_PER_SIDE` hunters whose search dice (AS2), then attack dice (AS4), hit
    most often against `sub`; of those alike, the cheapest (PU1)."""

    def key(u: Unit) -> tuple[int, int, int, str]:
        search, attack = asw.search_roll(board, u, sub).target, asw.attack_roll(board, u, sub).target
        return (-search, -attack, board.unit_type(u).cost, u.id)

    return sorted(hunters, key=key)[:MAX_UNITS_PER_SIDE]


def counted(units: list[Unit]) -> dict[str, int]:
    """Units as counts by type."""
    out: dict[str, int] = {}
    for u in units:
        out[u.type] = out.get(u.type, 0) + 1
    return out


def force_text(nation: str, counts: Mapping[str, int]) -> str:
    """A force as `tracker odds` reads it: 'Germany:battleship=1,destroyer=2'."""
    return f"{nation}:" + ",".join(f"{t}={n}" for t, n in sorted(counts.items()) if n)


def tech_texts(board: Board, nations: set[str]) -> tuple[str, ...]:
    """The technology levels of the nations in a battle, as `tracker odds --tech` reads them."""
    out = []
    for nation in sorted(nations):
        levels = {t: v for t, v in sorted(board.tech.get(nation, {}).items()) if v}
        if levels:
            out.append(f"{nation}:" + ",".join(f"{t}={v}" for t, v in levels.items()))
    return tuple(out)


def _unless(intercepted: list[tuple[Unit, str]]) -> str:
    """SM2: why the submarines that could get there are not counted on: ' without passing a
    zone where the enemy may intercept it (SM2: DE-SS1 through Southern North Sea)'."""
    if not intercepted:
        return ""
    ways = ", ".join(f"{u.id} through {z}" for u, z in intercepted)
    return f" without passing a zone where the enemy may intercept it (SM2: {ways})"


def hold_question(board: Board, nation: str, zone: str, ended: Collection[str] = ()) -> Question:
    """NC1: which of `nation`'s units that can be in `zone` at the end of this phase must be
    there to hold it against each enemy nation's units within a full move of it (one nation
    attacks a zone at a time); allied units already there defend too. Ships only: aircraft
    must land by the end of the turn (F7), so none is counted on to stay. `ended`: as for
    `attack_question`."""
    require_sea_zone(board, zone)
    intercepted: list[tuple[Unit, str]] = []
    pool = reach(board, nation, zone, phases=TO_HOLD, ended=ended, intercepted=intercepted)
    pool = [r for r in pool if board.unit_type(r.unit).is_naval]
    allies = [u for u in board.units_at(zone) if u.nation != nation and board.allies(nation, u.nation)]
    allies = [u for u in allies if board.unit_type(u).is_naval or board.unit_type(u).is_air]
    if not pool and not allies:
        raise RuleViolation(
            "F4", f"no unit of {nation} can be in {zone} at the end of this phase" + _unless(intercepted)
        )
    others: dict[str, list[Unit]] = {}
    for enemy in board.scenario.nations:
        if board.enemies(nation, enemy):
            threat = [r.unit for r in reach(board, enemy, zone, next_turn=True)]
            if threat:
                others[enemy] = threat
    fixed = not can_move(board, nation, TO_HOLD)
    return Question(board, zone, nation, True, pool, others, allies, fixed=fixed, intercepted=intercepted)


def types_of(pool: list[Reach]) -> list[str]:
    return sorted({r.unit.type for r in pool})


def by_nation(units: list[Unit]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for u in units:
        counts = out.setdefault(u.nation, {})
        counts[u.type] = counts.get(u.type, 0) + 1
    return out


def pick(q: Question, counts: Mapping[str, int]) -> list[Reach]:
    return pick_from(q.pool, counts)


def pick_from(pool: list[Reach], counts: Mapping[str, int]) -> list[Reach]:
    """The units standing for the counts: of each type the nearest, undamaged first."""
    chosen: list[Reach] = []
    for t, n in counts.items():
        same = sorted((r for r in pool if r.unit.type == t), key=lambda r: (r.steps, r.unit.damage, r.unit.id))
        chosen += same[:n]
    return chosen


def full_force(q: Question) -> dict[str, int]:
    return full_force_of(q.pool)


def full_force_of(pool: list[Reach]) -> dict[str, int]:
    """The pool as counts by type, in type order (the order of a search's compositions)."""
    return {t: sum(1 for r in pool if r.unit.type == t) for t in types_of(pool)}


def only_types(q: Question, names: tuple[str, ...]) -> Question:
    """The question with its pool cut to the named unit types (`--type`)."""
    if not names:
        return q
    if q.fixed:
        raise InputError(f"no unit may move now, so every unit in {q.zone} fights (NC1): --type does not apply")
    _require_known(q.board, names)
    pool = [r for r in q.pool if r.unit.type in names]
    intercepted = [(u, z) for u, z in q.intercepted if u.type in names]
    return replace(q, pool=pool, intercepted=intercepted)


def only_enemy_types(q: Question, names: tuple[str, ...]) -> Question:
    """The question with the enemy cut to the named unit types (`--enemy-type`): only part of
    the enemy is weighed, and the answer says so (`left_out`), for the whole enemy fights."""
    if not names:
        return q
    _require_known(q.board, names)
    kept = {n: [u for u in us if u.type in names] for n, us in q.others.items()}
    left_out = {n: [u for u in us if u.type not in names] for n, us in q.others.items()}
    where = "within a full move of" if q.hold else "in"
    if not any(kept.values()):
        there = ", ".join(
            f"{n} {', '.join(f'{k} {t}' for t, k in sorted(counted(us).items()))}" for n, us in sorted(q.others.items())
        )
        raise InputError(
            f"--enemy-type {', '.join(names)}: no enemy unit of that type {where} {q.zone} (enemy: {there})"
        )
    if not q.hold and not any(q.board.unit_type(u).is_naval for us in kept.values() for u in us):
        raise RuleViolation(
            "NC1", f"--enemy-type {', '.join(names)} leaves no enemy naval unit in {q.zone}: a naval battle needs one"
        )
    others = {n: us for n, us in kept.items() if us}
    return replace(q, others=others, enemy_types=tuple(names), left_out={n: us for n, us in left_out.items() if us})


def _require_known(board: Board, names: tuple[str, ...]) -> None:
    unknown = [n for n in names if n not in board.ruleset.units]
    if unknown:
        raise InputError(f"unknown unit type {unknown[0]!r} (known: {', '.join(board.ruleset.units)})")
