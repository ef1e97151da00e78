"""Technology research (TE1, TE2): one paid roll per technology per turn, levels to acquire."""

from __future__ import annotations

from domain.board import Board
from domain.errors import InputError, RuleViolation


def check_research(board: Board, nation: str, technology: str, rolled_this_turn: int) -> None:
    rs = board.ruleset
    if technology not in rs.technologies:
        raise InputError(f"unknown technology {technology!r} (known: {', '.join(rs.technologies)})")
    level = board.tech.get(nation, {}).get(technology, 0)
    if level >= rs.research_levels:
        raise RuleViolation("TE2", f"{nation} has already acquired {technology} (level {level})")
    if rolled_this_turn >= rs.research_rolls_per_turn:
        raise RuleViolation(
            "TE1", f"{nation} has already made {rolled_this_turn} research roll(s) for {technology} this turn"
        )
    balance = board.balances.get(nation, 0)
    if balance < rs.research_cost:
        raise RuleViolation("TE1", f"a research roll costs {rs.research_cost} and {nation} has {balance}")


def research_succeeds(board: Board, value: int) -> bool:
    """TE1: a roll at or above the ruleset's success value advances the technology a level."""
    return value >= board.ruleset.research_success_min
