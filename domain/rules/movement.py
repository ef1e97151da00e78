"""Naval and air movement (F4, F7, SM1): adjacency, allowance, air range, hostile zones."""

from __future__ import annotations

import shlex
from collections.abc import Container
from dataclasses import dataclass

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation, require_each_once
from domain.rules.economy import neutral_carriers, shares_carriers
from domain.text import plural, possessive, type_name

MOVE_PHASES = ("combat_movement", "noncombat_movement")


@dataclass(frozen=True)
class PlannedMove:
    """A legal move: the units, the full path (start first) and what it passed."""

    unit_ids: tuple[str, ...]
    path: tuple[str, ...]
    hostile_passed: tuple[str, ...]  # hostile zones a submarine group moved through (SM1/SM2)
    carried: tuple[str, ...] = ()  # aircraft that sail with their carriers (F7)


def resolve_units(board: Board, nation: str, unit_ids: list[str]) -> list[Unit]:
    if not unit_ids:
        raise InputError("name at least one unit to move")
    require_each_once(unit_ids, "unit")
    units = []
    for uid in unit_ids:
        unit = board.units.get(uid)
        if unit is None:
            raise board.unknown_unit(uid)
        if unit.nation != nation:
            raise RuleViolation("T3", f"{uid} belongs to {unit.nation}, not {nation}")
        units.append(unit)
    starts = {u.at for u in units}
    if len(starts) > 1:
        raise RuleViolation("F4", f"units of one move must start together; they are in {', '.join(sorted(starts))}")
    return units


def plan_move(board: Board, nation: str, unit_ids: list[str], path: list[str]) -> PlannedMove:
    """Check a move of a group of units along `path` (zones after the start) and describe it."""
    units = resolve_units(board, nation, unit_ids)
    game_map = board.scenario.game_map
    start = units[0].at
    if not path:
        raise InputError("give a destination (--to) or a path (--path)")
    for zone in path:
        if not game_map.knows(zone):
            raise InputError(f"unknown zone {zone!r}")
    if path[0] == start:
        where = f"{units[0].id} is" if len(units) == 1 else "these units are"
        raise RuleViolation("F4", f"{where} already in {start}: name the zones to move through after it")
    if all(board.unit_type(u).is_naval for u in units):
        ashore = next((z for z in path if game_map.is_land(z)), None)
        if ashore is not None:
            raise RuleViolation("F4", f"naval units cannot enter {ashore}, a land territory")
    # F8 before adjacency: a neutral's territory named beyond the first step would otherwise
    # be refused as "not adjacent", with no way there offered and the real reason unsaid.
    check_neutral_territory(board, nation, path)
    full = [start, *path]
    for a, b in zip(full, full[1:], strict=False):
        if not game_map.adjacent(a, b):
            # A destination alone (`--to`): on a large map the player may not know the way.
            hint = _route_hint(board, nation, units, start, b) if len(path) == 1 else ""
            raise RuleViolation("F4", f"{b} is not adjacent to {a}{hint}")
    types = {board.unit_type(u).category for u in units}
    if len(types) > 1:
        raise RuleViolation("F4", _mixed_move(board, nation, units, path))
    steps = len(path)
    for u in units:
        ut = board.unit_type(u)
        left = ut.move - u.moved
        if steps > left:
            rule = "F7" if ut.is_air else "F4"
            what = "range" if ut.is_air else "movement"
            raise RuleViolation(
                rule,
                f"{u.id} ({type_name(u.type)}) has {left} of {ut.move} {what} left this turn; "
                f"the path is {plural(steps, 'step')}",
            )
    hostile_passed: list[str] = []
    if "naval" in types:
        for zone in path:
            if not game_map.is_sea(zone):
                raise RuleViolation("F4", f"naval units cannot enter {zone}, a land territory")
        _require_not_stopped(board, units)
        for zone in path[:-1]:
            if board.is_hostile_for(nation, zone):
                blockers = [u for u in units if not board.unit_type(u).is_submarine]
                if blockers:
                    raise RuleViolation(
                        "SM1",
                        f"{blockers[0].id} ({type_name(blockers[0].type)}) must stop in {zone}, a hostile zone "
                        f"({board.describe_zone(zone)}); only submarines may move through",
                    )
                hostile_passed.append(zone)
        carried = aircraft_aboard_leaving(board, nation, units)
    else:
        _check_air_landing(board, nation, units, path[-1])
        carried = []
    return PlannedMove(tuple(u.id for u in units), tuple(full), tuple(hostile_passed), tuple(carried))


def _mixed_move(board: Board, nation: str, units: list[Unit], path: list[str]) -> str:
    """F4, F7: why naval and air units do not move together. Aircraft named with the carriers
    they sit on sail with those carriers anyway (`aircraft_aboard_leaving`), as moving the
    carriers alone says: where the ships alone may make the move, the refusal says so and ends
    with the command without the aircraft."""
    ships = [u for u in units if board.unit_type(u).is_naval]
    planes = [u.id for u in units if not board.unit_type(u).is_naval]
    carried = aircraft_aboard_leaving(board, nation, ships) if ships else []
    if not carried or any(p not in carried for p in planes):
        return "move naval and air units separately"
    try:
        plan_move(board, nation, [u.id for u in ships], path)
    except RuleViolation:
        # Where the ships may not go (ashore, say), the aircraft may have been meant to fly.
        return "move naval and air units separately"
    carriers = [u.id for u in ships if board.unit_type(u).carries]
    where = f"--to {shlex.quote(path[0])}" if len(path) == 1 else f"--path {shlex.quote(','.join(path))}"
    command = f"tracker move {' '.join(u.id for u in ships)} {where}"
    goes = "goes" if len(planes) == 1 else "go"
    return (
        f"{', '.join(planes)} {'is' if len(planes) == 1 else 'are'} aboard {', '.join(carriers)} and {goes} "
        f"with {'it' if len(carriers) == 1 else 'them'} without being named: {command}"
    )


def _route_hint(board: Board, nation: str, units: list[Unit], start: str, goal: str) -> str:
    """The end of a refusal of a move to a zone that is not adjacent: the command moving along
    a shortest way there (its first steps, when the units have fewer left), or why surface
    ships have none (SM1); nothing where there is no way at all. The command ends the message,
    so a terminal shows it whole on a line of its own."""
    route = shortest_route(board, nation, units, start, goal)
    if route is None:
        if shortest_route(board, nation, units, start, goal, stop_at_hostile=False) is not None:
            return "; every way there passes a hostile zone, where surface ships must stop (SM1)"
        return ""
    left = min(board.unit_type(u).move - u.moved for u in units)
    if left <= 0:
        return f"; a shortest route there is {len(route)} steps, and these units have no move left this turn"
    command = f"tracker move {' '.join(u.id for u in units)} --path {shlex.quote(','.join(route[:left]))}"
    if len(route) <= left:
        return f"; a shortest route there ({len(route)} steps): {command}"
    return (
        f"; a shortest route there is {len(route)} steps, more than the {left} these units have left this turn; "
        f"its first {left}: {command}"
    )


def shortest_route(
    board: Board, nation: str, units: list[Unit], start: str, goal: str, stop_at_hostile: bool = True
) -> list[str] | None:
    """F4, SM1, F8: the zones after `start` of a shortest way to `goal` this group could take
    (ships by sea, surface ships stopping at no hostile zone on the way, nobody through a
    neutral's territory), the first in the map's order among equals; None without one. Only a
    suggestion: what the units have left to move is checked when they move."""
    game_map = board.scenario.game_map
    naval = all(board.unit_type(u).is_naval for u in units)
    stopped = stop_at_hostile and naval and any(not board.unit_type(u).is_submarine for u in units)

    def enters(zone: str) -> bool:
        return neutral_owner(board, nation, zone) is None and (game_map.is_sea(zone) or not naval)

    came: dict[str, str] = {start: start}
    frontier = [start]
    while frontier and goal not in came:
        following = []
        for zone in frontier:
            if zone != start and stopped and board.is_hostile_for(nation, zone):
                continue  # SM1: surface ships go no further than a hostile zone
            for near in sorted(game_map.adjacency[zone]):
                if near not in came and enters(near):
                    came[near] = zone
                    following.append(near)
        frontier = following
    if goal not in came:
        return None
    route = [goal]
    while came[route[-1]] != start:
        route.append(came[route[-1]])
    return route[::-1]


def stopped_in_hostile_zone(board: Board, unit: Unit, hostile: Container[str] | None = None) -> bool:
    """SM1: a ship (not a submarine) that entered a hostile zone this turn was stopped there: a
    second move does not take it on. One that has not moved this turn may leave the zone. A
    campaign recorded before the ruleset said so let it go on (`ships_stopped_stay`).
    `hostile`: the zones hostile for the unit's nation, where the caller has them."""
    ut = board.unit_type(unit)
    if not (board.ruleset.ships_stopped_stay and unit.moved and ut.is_naval and not ut.is_submarine):
        return False
    return unit.at in hostile if hostile is not None else board.is_hostile_for(unit.nation, unit.at)


def _require_not_stopped(board: Board, units: list[Unit]) -> None:
    """SM1: refuses a move of a ship stopped in a hostile zone (`stopped_in_hostile_zone`)."""
    for u in units:
        if stopped_in_hostile_zone(board, u):
            raise RuleViolation(
                "SM1",
                f"{u.id} ({type_name(u.type)}) entered {u.at}, a hostile zone ({board.describe_zone(u.at)}), "
                "this turn and was stopped there; only submarines move on",
            )


def neutral_owner(board: Board, nation: str, zone: str) -> str | None:
    """F8: the neutral nation (not `nation`) whose territory `zone` is, if any."""
    owner = board.owners.get(zone)
    return owner if owner is not None and owner != nation and owner in board.neutral else None


def check_neutral_territory(board: Board, nation: str, path: list[str]) -> None:
    """F8: no unit of a belligerent enters (or flies over, or lands on) a neutral's territory."""
    for zone in path:
        owner = neutral_owner(board, nation, zone)
        if owner is not None:
            raise RuleViolation(
                "F8", f"{zone} is {possessive(owner)} territory and {owner} is neutral: no unit may enter it"
            )


def aircraft_aboard_leaving(board: Board, nation: str, moving: list[Unit]) -> list[str]:
    """F7: aircraft at sea sit on friendly carriers; when carriers sail, the aircraft the
    carriers staying behind cannot hold sail with them (as many as the moving ones hold). An
    ally's aircraft keep the places left behind first, so that the nation's own sail with it."""
    start = moving[0].at
    if not board.scenario.game_map.is_sea(start):
        return []
    moving_ids = {u.id for u in moving}
    here = [u for u in board.units_at(start) if shares_carriers(board, nation, u.nation)]
    staying_capacity = sum(board.unit_type(u).carries for u in here if u.id not in moving_ids)
    moving_capacity = sum(board.unit_type(u).carries for u in moving)
    aircraft = [u.id for u in sorted(here, key=lambda u: (u.nation == nation, u.id)) if board.unit_type(u).is_air]
    excess = aircraft[staying_capacity:]
    return excess[:moving_capacity]


def _check_air_landing(board: Board, nation: str, units: list[Unit], destination: str) -> None:
    """F7: after non-combat movement an air unit must be on its side's territory or a carrier."""
    if board.phase != "noncombat_movement":
        return
    game_map = board.scenario.game_map
    if game_map.is_land(destination):
        owner = board.owners[destination]
        if board.enemies(nation, owner):
            raise RuleViolation("F7", f"air units cannot land in {destination}, held by {owner}")
        return
    here = [u for u in board.units_at(destination) if shares_carriers(board, nation, u.nation)]
    capacity = sum(board.unit_type(u).carries for u in here)
    moving = {m.id for m in units}
    aboard = sum(1 for u in here if board.unit_type(u).is_air and u.id not in moving)
    if aboard + len(units) > capacity:
        whose = "friendly" if board.ruleset.friendly_carriers else nation
        raise RuleViolation(
            "F7",
            f"air units ending at sea need a carrier: {whose} carriers in {destination} "
            f"hold {capacity}, {aboard} already aboard{neutral_carriers(board, nation, destination)}",
        )
