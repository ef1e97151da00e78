"""Submarine movement through hostile zones (SM1-SM5) as pure functions: where a move pauses,
who may search, the search target numbers, and the moving player's choices after a round."""

from __future__ import annotations

from domain.board import Board, Unit
from domain.errors import RuleViolation, require_each_once
from domain.rules.convoy import Roll
from domain.rules.economy import takes_part_at_sea
from domain.text import type_name


def can_search(board: Board, unit: Unit) -> bool:
    """SM2: destroyers and cruisers; air units only with a technology that gives them a value
    (TE4). Judged on the searcher's own technology: a target number cut to 0 by the
    submarines' technology still allows the (hopeless) roll."""
    ut = board.unit_type(unit)
    value, _ = board.ruleset.modified(
        "interception_search", unit.type, ut.search.get("interception", 0), board.acquired(unit.nation)
    )
    return value > 0


def eligible_searchers(board: Board, mover: str, zone: str, committed: frozenset[str] = frozenset()) -> list[Unit]:
    """SM2: the enemy units in `zone` that may roll an interception search: its ships there,
    and aircraft based there (on carriers, F7) under Advanced ASW, once per phase each."""
    return sorted(
        (
            u
            for u in board.units_at(zone)
            if board.enemies(mover, u.nation)
            and can_search(board, u)
            and not (board.unit_type(u).is_air and u.id in committed)
            and takes_part_at_sea(board, u)
        ),
        key=lambda u: u.id,
    )


def pause_index(board: Board, mover: str, route: list[str], after: int) -> int | None:
    """SM2: the first zone of `route` past position `after`, short of the destination, that is
    hostile (SM1) and holds an enemy unit that may search: the group pauses there."""
    for i in range(after + 1, len(route) - 1):
        zone = route[i]
        if board.is_hostile_for(mover, zone) and eligible_searchers(board, mover, zone):
            return i
    return None


def deciding_nation(board: Board, units: list[Unit]) -> str:
    """The nation that makes a side's choices: the one with most units there, then the first
    in turn order (HA7: the nation a battle names for a side assigns for it)."""
    order = board.scenario.turn_order
    counts: dict[str, int] = {}
    for u in units:
        counts[u.nation] = counts.get(u.nation, 0) + 1
    return min(counts, key=lambda n: (-counts[n], order.index(n) if n in order else len(order), n))


def check_searchers(
    board: Board, mover: str, zone: str, chosen: list[str], committed: frozenset[str] = frozenset()
) -> list[Unit]:
    """SM2: the searching side chooses which of its eligible units roll (none is allowed)."""
    eligible = eligible_searchers(board, mover, zone, committed)

    names = ", ".join(sorted(u.id for u in eligible)) or "none"

    def why_not(unit: Unit) -> RuleViolation:
        if unit.nation in board.neutral:
            return RuleViolation("F8", f"{unit.id} belongs to {unit.nation}, neutral in round {board.round}")
        if not board.enemies(mover, unit.nation):
            return RuleViolation("SM2", f"{unit.id} belongs to {unit.nation}, not an enemy of {mover}")
        if unit.at != zone:
            return RuleViolation("SM2", f"{unit.id} is not in {zone} (it is in {unit.at})")
        if unit.id in committed and can_search(board, unit):
            return RuleViolation("F7", f"{unit.id} has already taken part in a search or battle this phase")
        return RuleViolation(
            "SM2",
            f"{unit.id} ({type_name(unit.type)}) cannot search for submarines passing through: only destroyers "
            f"and cruisers, and aircraft on carriers with Advanced ASW (TE4) (eligible: {names})",
        )

    return board.choose(eligible, chosen, why_not)


def search_roll(board: Board, unit: Unit, mover: str) -> Roll:
    """SM3 with TE3 (one less against Advanced Submarines) and TE4 (escorts 3, air 4), TE5."""
    base = board.unit_type(unit).search.get("interception", 0)
    target, mods = board.ruleset.modified(
        "interception_search", unit.type, base, board.acquired(unit.nation), board.acquired(mover)
    )
    return Roll(unit.id, base, target, tuple(mods))


def _unknown(board: Board | None, uid: str, among: list[str]) -> None:
    """A unit named outside `among` that the board does not hold at all is named as unknown
    (or as sunk, and where), as every command names it, not as one outside the choice."""
    if board is not None and uid not in among and uid not in board.units:
        raise board.unknown_unit(uid)


def check_detected(subs: list[str], found: int, chosen: list[str], board: Board | None = None) -> list[str]:
    """SM3: each success detects one submarine of the group; the searching side names them."""
    require_each_once(chosen, "submarine")
    for uid in chosen:
        _unknown(board, uid, subs)
        if uid not in subs:
            raise RuleViolation("SM3", f"{uid} is not in the submarine group ({', '.join(subs)})")
    if len(chosen) != found:
        raise RuleViolation(
            "SM3",
            f"{found} search(es) succeeded: name {found} of {', '.join(subs)} as found, got {len(chosen)}",
        )
    return list(chosen)


def check_decisions(
    detected: list[str], submerge: list[str], retreat: list[str], retreat_zone: str | None, board: Board | None = None
) -> None:
    """SM4: after each round the moving player chooses, per surviving detected submarine,
    fight on (not named), submerge, or retreat to the zone it came from."""
    for uid in submerge + retreat:
        _unknown(board, uid, detected)
        if uid not in detected:
            raise RuleViolation(
                "SM4",
                f"{uid} is not a detected submarine in this fight (detected: {', '.join(detected) or 'none'})",
            )
    both = set(submerge) & set(retreat)
    if both:
        raise RuleViolation("SM4", f"{', '.join(sorted(both))} cannot both submerge and retreat")
    require_each_once(submerge, "submarine")
    require_each_once(retreat, "submarine")
    if retreat and retreat_zone is None:
        raise RuleViolation("SM4", "these submarines are where their move began: there is no zone to retreat to")


def check_stops(free: list[str], stop: list[str], board: Board | None = None) -> None:
    """SM5: undetected submarines continue to their destination or stop in the zone."""
    require_each_once(stop, "submarine")
    for uid in stop:
        _unknown(board, uid, free)
        if uid not in free:
            raise RuleViolation("SM5", f"{uid} is not free to go on or stop here (free: {', '.join(free) or 'none'})")
