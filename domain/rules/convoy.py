"""Convoy battles (CV1-CV7) as pure functions: who may attack, who may search, target numbers."""

from __future__ import annotations

from dataclasses import dataclass

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation, require_each_once
from domain.rules.economy import takes_part_at_sea
from domain.ruleset import AppliedModifier
from domain.text import phase_name, possessive, type_name


@dataclass(frozen=True)
class Roll:
    """What one die needs: the base value, the modified target and the modifiers applied."""

    unit: str
    base: int
    target: int
    modifiers: tuple[AppliedModifier, ...]


def submarines_of(board: Board, nation: str, zone: str) -> list[Unit]:
    return [u for u in board.units_at(zone) if u.nation == nation and board.unit_type(u).is_submarine]


def check_declaration(board: Board, attacker: str, zone: str, submarines: list[str], declared: list[list[str]]) -> str:
    """CV1: returns the defender (the nation whose collect phase it is)."""
    scenario = board.scenario
    if attacker not in scenario.nations:
        raise InputError(f"unknown nation {attacker!r}")
    if not scenario.game_map.knows(zone):
        raise InputError(f"unknown zone {zone!r}")
    defender = board.nation
    if board.phase != "collect_resources":
        raise RuleViolation(
            "CV1",
            "convoy attacks happen in the NTR owner's collect resources phase; "
            f"it is {possessive(defender)} {phase_name(board.phase)}",
        )
    neutral = next((n for n in (attacker, defender) if n in board.neutral), None)
    if neutral is not None:
        raise RuleViolation("F8", f"{board.still_neutral([neutral])[0]}: no convoy attack by or on it")
    if not board.enemies(attacker, defender):
        raise RuleViolation("CV1", f"{attacker} is not an enemy of {defender}")
    ntr = board.ntr.get(defender, {}).get(zone, 0)
    if ntr <= 0:
        raise RuleViolation("CV1", f"{zone} holds no NTR of {defender}")
    subs = submarines_of(board, attacker, zone)
    if not subs:
        raise RuleViolation("CV1", f"{attacker} has no submarines in {zone} (zone holds: {board.describe_zone(zone)})")
    if [attacker, zone] in declared:
        raise RuleViolation("CV1", f"{attacker} has already attacked convoys in {zone} this phase")
    if not submarines:
        raise RuleViolation("CV1", "name at least one taking-part submarine")
    ids = {u.id for u in subs}
    for uid in submarines:
        if uid not in ids:
            raise RuleViolation(
                "CV1",
                f"{uid} is not one of {possessive(attacker)} submarines in {zone} (there: {', '.join(sorted(ids))})",
            )
    require_each_once(submarines, "submarine")
    return defender


def air_can_join(board: Board, unit: Unit, zone: str, committed: frozenset[str]) -> bool:
    """F7: outside combat movement an air unit joins from where it is, if the zone is within the
    range it has left this turn (flying over no neutral's territory, F8) and it has taken part
    in no search or battle this phase; one at sea only from aboard a carrier of its side (an
    air unit whose carrier was sunk sits out until it lands, `takes_part_at_sea`)."""
    if unit.id in committed or not takes_part_at_sea(board, unit):
        return False
    distance = board.air_distance(unit, zone)
    return distance is not None and distance <= board.range_left(unit)


def eligible_searchers(board: Board, defender: str, zone: str, committed: frozenset[str] = frozenset()) -> list[Unit]:
    """CV3: ships of the NTR owner and its allies in the zone, and their aircraft that can reach
    it (F7), with a convoy search value above 0; never a neutral's (F8)."""
    found = []
    for u in board.units.values():
        if not board.allies(defender, u.nation):
            continue
        ut = board.unit_type(u)
        if ut.search.get("convoy", 0) <= 0:
            continue
        if (ut.is_naval and u.at == zone) or (ut.is_air and air_can_join(board, u, zone, committed)):
            found.append(u)
    return sorted(found, key=lambda u: u.id)


def check_searchers(
    board: Board, defender: str, zone: str, chosen: list[str], committed: frozenset[str] = frozenset()
) -> list[Unit]:
    def why_not(unit: Unit) -> RuleViolation:
        ut = board.unit_type(unit)
        if unit.nation in board.neutral:
            return RuleViolation("F8", f"{unit.id} belongs to {unit.nation}, neutral in round {board.round}")
        if not board.allies(defender, unit.nation):
            return RuleViolation("CV3", f"{unit.id} is not {possessive(defender)} or an ally's")
        if ut.search.get("convoy", 0) <= 0:
            return RuleViolation("CV3", f"{unit.id} ({type_name(unit.type)}) cannot search for submarines")
        if ut.is_air:
            if unit.id in committed:
                return RuleViolation("F7", f"{unit.id} has already taken part in a search or battle this phase")
            if not takes_part_at_sea(board, unit):
                return RuleViolation(
                    "F7",
                    f"{unit.id} is at sea in {unit.at} and no carrier of {possessive(unit.nation)} side there has "
                    "room for it: an air unit whose carrier was sunk sits out until it lands",
                )
            return board.out_of_range(unit, zone)
        return RuleViolation("CV3", f"{unit.id} is in {unit.at}, not in {zone}")

    return board.choose(eligible_searchers(board, defender, zone, committed), chosen, why_not)


def search_roll(board: Board, unit: Unit, attacker: str) -> Roll:
    """CV3 with TE3 (against Advanced Submarines: one less) and TE4 (+1 with Advanced ASW)."""
    base = board.unit_type(unit).search["convoy"]
    target, mods = board.ruleset.modified(
        "convoy_search", unit.type, base, board.acquired(unit.nation), board.acquired(attacker)
    )
    return Roll(unit.id, base, target, tuple(mods))


def attack_roll(board: Board, unit: Unit, attacker: str) -> Roll:
    """CV4: a detecting unit fires at its attack value, one less against Advanced Submarines."""
    base = board.unit_type(unit).attack
    target, mods = board.ruleset.modified(
        "convoy_attack", unit.type, base, board.acquired(unit.nation), board.acquired(attacker)
    )
    return Roll(unit.id, base, target, tuple(mods))


def return_fire_roll(board: Board, sub: Unit) -> Roll:
    """CV4: each submarine fires back at its defense value (+1 with Advanced Submarine)."""
    base = board.unit_type(sub).defense
    target, mods = board.ruleset.modified("submarine_defense", sub.type, base, board.acquired(sub.nation))
    return Roll(sub.id, base, target, tuple(mods))


def convoy_table(board: Board, sub: Unit, value: int) -> tuple[int, int, tuple[AppliedModifier, ...]]:
    """CV5: (adjusted roll, NTR destroyed, modifiers); Advanced Submarine adds +1, a 10 stays 10."""
    faces = board.ruleset.faces_for("convoy_table")
    adjusted, mods = board.ruleset.modified("convoy_table", sub.type, value, board.acquired(sub.nation))
    adjusted = max(1, min(faces, adjusted))
    return adjusted, board.ruleset.convoy_result(adjusted), tuple(mods)


def ship_targets(board: Board, detecting: list[str]) -> list[Unit]:
    """CV4, HA2: submarine hits fall only on detecting ships, never on aircraft."""
    return [board.units[uid] for uid in detecting if uid in board.units and board.unit_type(board.units[uid]).is_naval]
