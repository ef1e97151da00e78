"""ASW combat (AS1-AS5, and the ASW rounds of an interception, SM4) as pure functions: who may
start it and take part, search and attack target numbers, and the submarines' return fire."""

from __future__ import annotations

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation, require_each_once
from domain.rules.convoy import Roll
from domain.rules.economy import takes_part_at_sea
from domain.text import possessive, type_name


def enemy_submarines(board: Board, nation: str, zone: str) -> list[Unit]:
    return sorted(
        (u for u in board.units_at(zone) if board.enemies(nation, u.nation) and board.unit_type(u).is_submarine),
        key=lambda u: u.id,
    )


def _value(board: Board, unit: Unit, roll: str, base: int) -> int:
    value, _ = board.ruleset.modified(roll, unit.type, base, board.acquired(unit.nation))
    return value


def can_search(board: Board, unit: Unit) -> bool:
    """AS2: escorts at 2, bombers and transport planes at 3, every air unit under TE4."""
    return _value(board, unit, "asw_search", board.unit_type(unit).search.get("asw", 0)) > 0


def can_attack(board: Board, unit: Unit) -> bool:
    """AS3, SM4: escorts attack submarines; air units only under TE4."""
    return _value(board, unit, "asw_attack", board.unit_type(unit).asw_attack) > 0


def eligible_units(board: Board, nation: str, zone: str, committed: frozenset[str] = frozenset()) -> list[Unit]:
    """AS1, AS2, F7: the nation's own units in `zone` that may search: ships there, and air units
    it flew there in combat_movement (or that sit on its carriers there, `takes_part_at_sea`),
    each air unit in at most one search or battle per phase."""
    return sorted(
        (
            u
            for u in board.units_at(zone)
            if u.nation == nation
            and can_search(board, u)
            and not (board.unit_type(u).is_air and u.id in committed)
            and takes_part_at_sea(board, u)
        ),
        key=lambda u: u.id,
    )


def check_start(
    board: Board, nation: str, zone: str, fought: list[list[str]], committed: frozenset[str] = frozenset()
) -> list[Unit]:
    """AS1: returns the enemy submarines in the zone."""
    if not board.scenario.game_map.knows(zone):
        raise InputError(f"unknown zone {zone!r}")
    if not board.scenario.game_map.is_sea(zone):
        raise RuleViolation("AS1", f"{zone} is a land territory, not a sea zone")
    if ["asw", zone] in fought:
        raise RuleViolation("AS1", f"{nation} has already fought ASW combat in {zone} this phase")
    subs = enemy_submarines(board, nation, zone)
    neutral = sorted(
        {u.nation for u in board.units_at(zone) if u.nation in board.neutral and board.unit_type(u).is_submarine}
    )
    if not subs and neutral:
        who, whose = board.still_neutral(neutral)
        raise RuleViolation("F8", f"{who}: {whose} submarines in {zone} cannot be searched")
    if not subs:
        raise RuleViolation(
            "AS1",
            f"there are no enemy submarines of {nation} in {zone} (zone holds: {board.describe_zone(zone)})",
        )
    if not eligible_units(board, nation, zone, committed):
        # AS1 names both ways an air unit takes part on its own turn (F7): flown there, or aboard.
        raise RuleViolation(
            "AS1",
            f"{nation} has no destroyer or cruiser in {zone} and no air unit there that can search, flown there "
            "in combat movement or aboard its carriers (AS2: bombers and transport planes; every air unit with "
            f"Advanced ASW, TE4) (zone holds: {board.describe_zone(zone)})",
        )
    return subs


def check_searchers(
    board: Board, nation: str, zone: str, chosen: list[str], committed: frozenset[str] = frozenset()
) -> list[Unit]:
    """AS2: at least one of the nation's eligible units takes part."""

    def why_not(unit: Unit) -> RuleViolation:
        if unit.nation != nation:
            return RuleViolation(
                "AS1", f"{unit.id} belongs to {unit.nation}; only {possessive(nation)} own units take part"
            )
        if not can_search(board, unit):
            return RuleViolation(
                "AS2",
                f"{unit.id} ({type_name(unit.type)}) cannot search for submarines: destroyers and cruisers, "
                "bombers and transport planes (every air unit with Advanced ASW, TE4)",
            )
        if board.unit_type(unit).is_air and unit.at == zone:
            return RuleViolation("F7", f"{unit.id} has already taken part in a search or battle this phase")
        if board.unit_type(unit).is_air:
            return RuleViolation(
                "F7",
                f"{unit.id} is in {unit.at}: on its own turn an air unit fights only where it flew in combat movement "
                "or aboard its carriers in their zone",
            )
        return RuleViolation("AS1", f"{unit.id} is not in {zone} (it is in {unit.at})")

    eligible = eligible_units(board, nation, zone, committed)
    units = board.choose(eligible, chosen, why_not)
    if not units:
        raise RuleViolation(
            "AS2",
            f"name at least one searching unit (eligible: {', '.join(sorted(u.id for u in eligible)) or 'none'})",
        )
    return units


def search_roll(board: Board, unit: Unit, sub: Unit) -> Roll:
    """AS2 with TE3 (one less against Advanced Submarines) and TE4 (escorts 3, air 4)."""
    base = board.unit_type(unit).search.get("asw", 0)
    target, mods = board.ruleset.modified(
        "asw_search", unit.type, base, board.acquired(unit.nation), board.acquired(sub.nation)
    )
    return Roll(unit.id, base, target, tuple(mods))


def attack_roll(board: Board, unit: Unit, sub: Unit) -> Roll:
    """AS4, SM4: an ASW unit attacks its target at its ASW value (TE4 escorts 3, air 4), one
    less against Advanced Submarines (TE3)."""
    base = board.unit_type(unit).asw_attack
    target, mods = board.ruleset.modified(
        "asw_attack", unit.type, base, board.acquired(unit.nation), board.acquired(sub.nation)
    )
    return Roll(unit.id, base, target, tuple(mods))


def return_fire_roll(board: Board, sub: Unit, moving: bool) -> Roll:
    """A detected submarine fires once: at its attack value while it is the one moving (SM4),
    at its defense value when hunted on the enemy's turn (AS4); +1 with Advanced Submarine."""
    ut = board.unit_type(sub)
    context, base = ("submarine_attack", ut.attack) if moving else ("submarine_defense", ut.defense)
    target, mods = board.ruleset.modified(context, sub.type, base, board.acquired(sub.nation))
    return Roll(sub.id, base, target, tuple(mods))


def check_submerge(detected: list[str], chosen: list[str]) -> None:
    """AS5, NC4: only submarines still in the fight may submerge."""
    require_each_once(chosen, "submarine")
    for uid in chosen:
        if uid not in detected:
            raise RuleViolation(
                "AS5",
                f"{uid} is not a detected submarine in this fight (detected: {', '.join(detected) or 'none'})",
            )
