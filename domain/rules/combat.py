"""Naval battles (NC1-NC5) as pure functions: where one may start, opening fire, fire values,
who can still hit whom, and where an attacker may retreat."""

from __future__ import annotations

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation
from domain.rules import hits
from domain.rules.convoy import Roll


def sides_in(board: Board, nation: str, zone: str) -> tuple[list[Unit], list[Unit]]:
    """NC1: the attacker's own units in the zone, and every unit of its enemies there."""
    here = sorted(board.units_at(zone), key=lambda u: u.id)
    return [u for u in here if u.nation == nation], [u for u in here if board.enemies(nation, u.nation)]


def check_start(board: Board, nation: str, zone: str, fought: list[list[str]]) -> tuple[list[Unit], list[Unit]]:
    """NC1: the moving nation has naval or air units in a sea zone with enemy naval units."""
    game_map = board.scenario.game_map
    if not game_map.knows(zone):
        raise InputError(f"unknown zone {zone!r}")
    if not game_map.is_sea(zone):
        raise RuleViolation("NC1", f"{zone} is a land territory, not a sea zone")
    if ["naval", zone] in fought:
        raise RuleViolation("NC1", f"{nation} has already fought a naval battle in {zone} this phase")
    attackers, defenders = sides_in(board, nation, zone)
    if not attackers:
        raise RuleViolation("NC1", f"{nation} has no units in {zone} (zone holds: {board.describe_zone(zone)})")
    if not any(board.unit_type(u).is_naval for u in defenders):
        raise RuleViolation(
            "NC1", f"there are no enemy naval units of {nation} in {zone} (zone holds: {board.describe_zone(zone)})"
        )
    return attackers, defenders


def due_zones(board: Board, nation: str, fought: list[list[str]]) -> list[str]:
    """NC1: sea zones where the nation's surface ships or aircraft that moved this turn share
    the zone with enemy naval units, and no naval battle has been fought there this phase.
    Submarines are left out: they may stop among enemies and attack or not (SM5)."""
    zones = set()
    for u in board.units.values():
        ut = board.unit_type(u)
        if u.nation == nation and u.moved and not ut.is_submarine and board.scenario.game_map.is_sea(u.at):
            zones.add(u.at)
    return sorted(
        z
        for z in zones
        if ["naval", z] not in fought
        and any(board.enemies(nation, u.nation) and board.unit_type(u).is_naval for u in board.units_at(z))
    )


def opening_fire(board: Board, subs: list[Unit], enemy_escorts: list[Unit]) -> tuple[list[str], list[str]]:
    """NC2: (submarines with opening fire, submarines whose opening fire is cancelled). Each
    enemy escort cancels the ruleset's number of submarines; the last in order are cancelled,
    as the rules leave the choice open and the submarines are alike."""
    ids = sorted(u.id for u in subs)
    cancelled = min(len(ids), len(enemy_escorts) * board.ruleset.opening_fire_cancelled_per_escort)
    return ids[: len(ids) - cancelled], ids[len(ids) - cancelled :]


def escorts(board: Board, units: list[Unit]) -> list[Unit]:
    """F2: destroyers and cruisers."""
    return [u for u in units if board.unit_type(u).unit_class == "escort"]


def fire_roll(board: Board, unit: Unit, attacking: bool) -> Roll:
    """NC2, NC3: a unit fires at its attack value on the attacking side and its defense value on
    the defending side; Advanced Submarine adds +1 to submarines (TE3)."""
    ut = board.unit_type(unit)
    base = ut.attack if attacking else ut.defense
    if not ut.is_submarine:
        return Roll(unit.id, base, base, ())
    context = "submarine_attack" if attacking else "submarine_defense"
    target, mods = board.ruleset.modified(context, unit.type, base, board.acquired(unit.nation))
    return Roll(unit.id, base, target, tuple(mods))


def can_hit(board: Board, unit: Unit, attacking: bool, enemies: list[Unit]) -> bool:
    """Whether a unit has a value to hit with and an enemy its hits may fall on (HA1-HA4)."""
    if fire_roll(board, unit, attacking).target <= 0 or not enemies:
        return False
    if hits.is_selective(board, unit):
        return bool(hits.selective_targets(board, unit, enemies))
    return True


def check_submerge(nation: str, subs: list[str], chosen: list[str]) -> None:
    """NC4: a side's submarines still in the battle may submerge."""
    if len(set(chosen)) != len(chosen):
        raise InputError("a submarine is named twice")
    for uid in chosen:
        if uid not in subs:
            there = ", ".join(subs) or "none"
            raise RuleViolation("NC4", f"{uid} is not one of {nation}'s submarines in this battle (there: {there})")


def retreat_zones(board: Board, nation: str, zone: str) -> list[str]:
    """NC1 (settled here): an attacker retreats, all together, to an adjacent sea zone that
    holds no enemy warship (not hostile, SM1)."""
    game_map = board.scenario.game_map
    return sorted(
        z for z in game_map.adjacency.get(zone, ()) if game_map.is_sea(z) and not board.is_hostile_for(nation, z)
    )


def check_retreat(board: Board, nation: str, zone: str, to: str) -> None:
    if not board.scenario.game_map.knows(to):
        raise InputError(f"unknown zone {to!r}")
    options = retreat_zones(board, nation, zone)
    if to not in options:
        why = (
            "not adjacent"
            if not board.scenario.game_map.adjacent(zone, to)
            else "a land territory"
            if not board.scenario.game_map.is_sea(to)
            else f"hostile ({board.describe_zone(to)})"
        )
        raise RuleViolation(
            "NC1",
            f"{nation} cannot retreat from {zone} to {to}: {why} (retreat to an adjacent sea zone without enemy "
            f"warships: {', '.join(options) or 'none'})",
        )
