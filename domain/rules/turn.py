"""Turn sequence (T1-T3): rounds of national turns, each a fixed order of phases; the turns of
neutral nations are passed over (F8)."""

from __future__ import annotations

from collections.abc import Callable

from domain.board import Board
from domain.errors import RuleViolation
from domain.scenario import MAX_ENTRY_ROUND
from domain.text import phase_name, possessive


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


def next_turn_f8(
    turn_order: tuple[str, ...],
    phases: tuple[str, ...],
    round_: int,
    nation: str,
    phase: str,
    at_war: Callable[[str, int], bool],
) -> tuple[tuple[int, str, str], list[tuple[int, str]]]:
    """T1, T2, F8: the (round, nation, phase) after the given one, where the phasing nation is
    at war, and the (round, nation) turns passed over on the way because their nation was
    still neutral. Entry rounds are bounded (MAX_ENTRY_ROUND): the search always ends."""
    passed: list[tuple[int, str]] = []
    position = next_position(turn_order, phases, round_, nation, phase)
    # A new turn opens on a neutral nation: pass over its whole turn, to the next nation's.
    while position[2] == phases[0] and not at_war(position[1], position[0]):
        passed.append((position[0], position[1]))
        if position[0] > max(round_, MAX_ENTRY_ROUND) + 1:
            raise RuleViolation("F8", "no nation of this scenario is ever at war")
        position = next_position(turn_order, phases, position[0], position[1], phases[-1])
    return position, passed


def require_turn(board: Board, nation: str, phases: tuple[str, ...], action: str) -> None:
    """T3: an action is legal only in its phase and only for the nation whose turn it is."""
    if nation not in board.scenario.nations:
        from domain.errors import InputError

        raise InputError(f"unknown nation {nation!r} (known: {', '.join(board.scenario.nations)})")
    if nation != board.nation:
        raise RuleViolation(
            "T3",
            f"{action} is for the nation whose turn it is: it is {possessive(board.nation)} turn, "
            f"not {possessive(nation)}",
        )
    if board.phase not in phases:
        raise RuleViolation(
            "T3",
            f"{action} is legal in {' or '.join(map(phase_name, phases))}; "
            f"it is {possessive(board.nation)} {phase_name(board.phase)} phase",
        )
