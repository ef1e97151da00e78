"""Hit allocation (HA): who may take hits, the cheapest legal default, and checking a choice."""

from __future__ import annotations

from collections import Counter

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation


def hits_to_sink(board: Board, unit: Unit) -> int:
    """F3, NC5: hits a unit can still take before it sinks."""
    return board.unit_type(unit).hits - unit.damage


def capacity(board: Board, candidates: list[Unit]) -> int:
    return sum(hits_to_sink(board, u) for u in candidates)


def default_casualties(board: Board, candidates: list[Unit], hits: int) -> list[str]:
    """HA7: the cheapest legal choice: hits that only damage capital ships first, then the
    cheapest units; a unit appears once per hit it takes."""
    hits = min(hits, capacity(board, candidates))
    chosen: list[str] = []
    remaining = {u.id: hits_to_sink(board, u) for u in candidates}
    by_id = {u.id: u for u in candidates}
    while len(chosen) < hits:
        # A hit that leaves the unit afloat costs nothing; otherwise lose the cheapest unit.
        afloat = [uid for uid, left in remaining.items() if left > 1]
        if afloat:
            pick = min(afloat, key=lambda uid: (-board.unit_type(by_id[uid]).cost, uid))
        else:
            pick = min(
                (uid for uid, left in remaining.items() if left > 0),
                key=lambda uid: (board.unit_type(by_id[uid]).cost, uid),
            )
        chosen.append(pick)
        remaining[pick] -= 1
    return chosen


def check_casualties(
    board: Board, rule: str, owner: str, candidates: list[Unit], hits: int, chosen: list[str]
) -> list[str]:
    """HA7: the owner's choice must name exactly the hits that can be taken, among the
    candidates the rules allow, no unit more often than it has hits left."""
    by_id = {u.id: u for u in candidates}
    needed = min(hits, capacity(board, candidates))
    for uid in chosen:
        if uid not in by_id:
            if uid in board.units and board.units[uid].nation != owner:
                raise RuleViolation(
                    "HA7", f"{uid} belongs to {board.units[uid].nation}; {owner} chooses its own losses"
                )
            if uid not in board.units:
                raise InputError(f"unknown unit {uid!r}")
            legal = ", ".join(sorted(by_id)) or "none"
            raise RuleViolation(rule, f"{uid} cannot take these hits (legal: {legal})")
    if len(chosen) != needed:
        raise RuleViolation(
            "HA7",
            f"{owner} must assign {needed} hit(s), got {len(chosen)} (legal: {', '.join(sorted(by_id))})",
        )
    for uid, n in Counter(chosen).items():
        if n > hits_to_sink(board, by_id[uid]):
            raise RuleViolation(
                "HA7", f"{uid} can take {hits_to_sink(board, by_id[uid])} more hit(s), assigned {n}"
            )
    return chosen
