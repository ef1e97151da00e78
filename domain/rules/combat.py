"""Naval battles (NC1-NC5) as pure functions: where one may start, opening fire, fire values,
who can still hit whom, and where an attacker may retreat."""

from __future__ import annotations

import shlex

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation, require_each_once
from domain.rules import asw, targets
from domain.rules.convoy import Roll
from domain.rules.economy import takes_part_at_sea
from domain.text import plural, possessive


def sides_in(
    board: Board, nation: str, zone: str, committed: frozenset[str] = frozenset()
) -> tuple[list[Unit], list[Unit]]:
    """NC1, F7: the attacker's own units in the zone, and every unit of its enemies there; an
    air unit that already took part in a search or battle this phase stays out."""
    here = sorted(
        (u for u in board.units_at(zone) if not (board.unit_type(u).is_air and u.id in committed)),
        key=lambda u: u.id,
    )
    # F7: on its own turn an air unit fights where it flew, or aboard a carrier of its side.
    own = [u for u in here if u.nation == nation and takes_part_at_sea(board, u)]
    return own, [u for u in here if board.enemies(nation, u.nation)]


def check_start(
    board: Board, nation: str, zone: str, fought: list[list[str]], committed: frozenset[str] = frozenset()
) -> tuple[list[Unit], list[Unit]]:
    """NC1: the moving nation has naval or air units in a sea zone with enemy naval units."""
    game_map = board.scenario.game_map
    if not game_map.knows(zone):
        raise InputError(f"unknown zone {zone!r}")
    if not game_map.is_sea(zone):
        raise RuleViolation("NC1", f"{zone} is a land territory, not a sea zone")
    if ["naval", zone] in fought:
        raise RuleViolation("NC1", f"{nation} has already fought a naval battle in {zone} this phase")
    attackers, defenders = sides_in(board, nation, zone, committed)
    if not attackers:
        grounded = [u.id for u in board.units_at(zone) if u.nation == nation and not takes_part_at_sea(board, u)]
        if grounded:
            raise RuleViolation(
                "F7",
                f"{', '.join(grounded)} in {zone} flew nowhere this turn and no carrier of {possessive(nation)} side "
                "there has room for it: on its own turn an air unit fights only where it flew in combat movement or "
                "aboard a carrier of its side",
            )
        raise RuleViolation("NC1", f"{nation} has no units in {zone} (zone holds: {board.describe_zone(zone)})")
    if not any(board.unit_type(u).is_naval for u in defenders):
        neutral = sorted({u.nation for u in board.units_at(zone) if u.nation in board.neutral})
        if neutral:
            who, whose = board.still_neutral(neutral)
            raise RuleViolation("F8", f"{who}: {whose} units in {zone} cannot be attacked")
        raise RuleViolation(
            "NC1",
            f"there are no naval units of {possessive(nation)} enemies in {zone} "
            f"(zone holds: {board.describe_zone(zone)})",
        )
    return attackers, defenders


def check_not_submarines_alone(
    board: Board,
    nation: str,
    zone: str,
    defenders: list[Unit],
    attacking: bool,
    fought: list[list[str]],
    committed: frozenset[str] = frozenset(),
) -> None:
    """NC1, AS1: a zone holding only enemy submarines calls for ASW combat, not a naval battle,
    unless the nation's submarines stopped there to attack (`attacking`, SM5: submarine against
    submarine, NC6). A campaign recorded before the ruleset said so could start one. The
    refusal names `asw start` only where the nation may start it (AS1)."""
    if not board.ruleset.submarines_alone_call_for_asw or attacking:
        return
    if defenders and all(board.unit_type(u).is_submarine for u in defenders):
        subs = ", ".join(u.id for u in defenders)
        raise RuleViolation(
            "NC1",
            f"{zone} holds only enemy submarines ({subs}): that calls for ASW combat (AS1), not a naval "
            f"battle{_asw_way(board, nation, zone, fought, committed)}",
        )


def _asw_way(board: Board, nation: str, zone: str, fought: list[list[str]], committed: frozenset[str]) -> str:
    """AS1: the command that starts ASW combat in the zone, or why the nation cannot (a hint to
    a command that would be refused in turn is no way forward)."""
    if ["asw", zone] in fought:
        return f", and {nation} has already fought ASW combat there this phase (AS1)"
    if not asw.eligible_units(board, nation, zone, committed):
        return (
            f", and {nation} has nothing there that may start it (AS1: a destroyer or cruiser, or an air unit "
            "that can search, flown there in combat movement or aboard a carrier of its side)"
        )
    return f": tracker asw start --zone {shlex.quote(zone)}"


def due_zones(
    board: Board,
    nation: str,
    fought: list[list[str]],
    attack_zones: list[str],
    movement_ended: dict[str, str] | None = None,
) -> list[str]:
    """NC1: sea zones where a naval battle is due: the nation moved naval or air units into the
    zone this turn and enemy surface ships are there, or its submarines stopped there to
    attack (SM5) and enemy naval units are there; and no naval battle has been fought there
    this phase. Fleets that merely share a zone may fight but need not; a zone with only
    enemy submarines calls for ASW combat (AS1), which is optional. A submarine whose
    movement an interception ended (SM4: it submerged or retreated, `movement_ended`) did not
    move in to attack; nor, in a campaign recorded before the ruleset said
    `submarines_arriving_fight`, did any submarine."""
    game_map = board.scenario.game_map
    ended = movement_ended or {}
    subs_fight = board.ruleset.submarines_arriving_fight

    def enemy(zone: str, surface: bool) -> bool:
        return any(
            board.enemies(nation, u.nation)
            and board.unit_type(u).is_naval
            and not (surface and board.unit_type(u).is_submarine)
            for u in board.units_at(zone)
        )

    zones = {
        u.at
        for u in board.units.values()
        if u.nation == nation
        and u.moved
        and game_map.is_sea(u.at)
        and (not board.unit_type(u).is_submarine or (subs_fight and ended.get(u.id) != "SM4"))
    }
    due = {z for z in zones if enemy(z, surface=True)}
    due |= {z for z in attack_zones if enemy(z, surface=False) and any(u.nation == nation for u in board.units_at(z))}
    return sorted(z for z in due if ["naval", z] not in fought)


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
    """Whether a unit has a value to hit with and an enemy its hits may fall on (HA1-HA4, NC6)."""
    return fire_roll(board, unit, attacking).target > 0 and has_target(board, unit, enemies)


def has_target(board: Board, unit: Unit, enemies: list[Unit]) -> bool:
    """NC6, HA1-HA4: an enemy in the battle this unit's hits may fall on."""
    if targets.is_selective(board, unit):
        return bool(targets.naval_targets(board, unit, enemies))
    return any(targets.may_hit_submarines(board, unit) or not board.unit_type(e).is_submarine for e in enemies)


def check_submerge(nation: str, subs: list[str], chosen: list[str]) -> None:
    """NC4: a side's submarines still in the battle may submerge."""
    require_each_once(chosen, "submarine")
    for uid in chosen:
        if uid not in subs:
            there = ", ".join(subs) or "none"
            raise RuleViolation(
                "NC4", f"{uid} is not one of {possessive(nation)} submarines in this battle (there: {there})"
            )


def retreat_zones(board: Board, nation: str, zone: str) -> list[str]:
    """NC1 (settled here): an attacker retreats, all together, to a sea zone within the ruleset's
    retreat distance (1: adjacent) through sea zones that hold no enemy warship (not hostile,
    SM1)."""
    game_map = board.scenario.game_map
    reached: set[str] = set()
    frontier = {zone}
    for _ in range(board.ruleset.retreat_distance):
        frontier = {
            z
            for here in frontier
            for z in game_map.adjacency.get(here, ())
            if game_map.is_sea(z) and z != zone and z not in reached and not board.is_hostile_for(nation, z)
        }
        reached |= frontier
    return sorted(reached)


def check_retreat(board: Board, nation: str, zone: str, to: str) -> None:
    if not board.scenario.game_map.knows(to):
        raise InputError(f"unknown zone {to!r}")
    options = retreat_zones(board, nation, zone)
    if to not in options:
        game_map = board.scenario.game_map
        if not game_map.is_sea(to):
            why = "a land territory"
        elif board.is_hostile_for(nation, to):
            why = f"hostile ({board.describe_zone(to)})"
        else:
            within = plural(board.ruleset.retreat_distance, "sea zone")
            why = f"not within {within} over waters without enemy warships"
        raise RuleViolation(
            "NC1",
            f"{nation} cannot retreat from {zone} to {to}: {why} (retreat to a sea zone without enemy "
            f"warships: {', '.join(options) or 'none'})",
        )
