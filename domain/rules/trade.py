"""Naval trade resources: placement within the scenario's limits (CV6) and collection (F6)."""

from __future__ import annotations

from domain.board import Board
from domain.errors import InputError, RuleViolation


def check_ntr_placement(board: Board, nation: str, zone: str, count: int) -> None:
    """CV6: NTR are placed again only by an explicit action, within the scenario's limits."""
    game_map = board.scenario.game_map
    if count < 1:
        raise InputError(f"NTR count must be at least 1, got {count}")
    if not game_map.knows(zone):
        raise InputError(f"unknown zone {zone!r}")
    limits = board.scenario.nations[nation].ntr_max
    if zone not in limits:
        allowed = ", ".join(sorted(limits)) or "none"
        raise RuleViolation("CV6", f"{nation} has no trade route in {zone} (its NTR zones: {allowed})")
    present = board.ntr.get(nation, {}).get(zone, 0)
    if present + count > limits[zone]:
        raise RuleViolation(
            "CV6",
            f"{zone} holds {present} {nation} NTR and the scenario allows {limits[zone]}; cannot place {count} more",
        )


def collection(board: Board, nation: str) -> tuple[int, int]:
    """F6: (value of the NTR the nation has at sea, its other income from the scenario); each
    NTR is worth the ruleset's `ntr_value`."""
    value = sum(board.ntr.get(nation, {}).values()) * board.ruleset.ntr_value
    return value, board.scenario.nations[nation].income
