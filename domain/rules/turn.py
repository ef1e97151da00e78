"""Turn sequence (T1-T3): rounds of national turns, each a fixed order of phases."""

from __future__ import annotations

from domain.board import Board
from domain.errors import RuleViolation


def next_position(
    turn_order: tuple[str, ...], phases: tuple[str, ...], round_: int, nation: str, phase: str
) -> tuple[int, str, str]:
    """T1, T2: the (round, nation, phase) after the given one."""
    p = phases.index(phase)
    if p + 1 < len(phases):
        return round_, nation, phases[p + 1]
    n = turn_order.index(nation)
    if n + 1 < len(turn_order):
        return round_, turn_order[n + 1], phases[0]
    return round_ + 1, turn_order[0], phases[0]


def require_turn(board: Board, nation: str, phases: tuple[str, ...], action: str) -> None:
    """T3: an action is legal only in its phase and only for the nation whose turn it is."""
    if nation not in board.scenario.nations:
        from domain.errors import InputError

        raise InputError(f"unknown nation {nation!r} (known: {', '.join(board.scenario.nations)})")
    if nation != board.nation:
        raise RuleViolation(
            "T3", f"{action} is for the nation whose turn it is: it is {board.nation}'s turn, not {nation}'s"
        )
    if board.phase not in phases:
        raise RuleViolation(
            "T3",
            f"{action} is legal in {' or '.join(phases)}; it is {board.nation}'s {board.phase} phase",
        )
