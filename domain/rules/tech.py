"""Technology research (TE1, TE2): one paid roll per technology per turn, levels to acquire."""

from __future__ import annotations

from domain.board import Board
from domain.errors import InputError, RuleViolation
from domain.text import plural

# Words of a technology's ID shown in capitals: "advanced_asw" is "Advanced ASW" to players.
_ACRONYMS = frozenset({"asw"})


def technology_name(technology: str) -> str:
    """A technology as players read it, "Advanced ASW" for "advanced_asw" (the ID events record
    and commands take); the reports and `explain` name the built-in ones so."""
    return " ".join(w.upper() if w in _ACRONYMS else w.capitalize() for w in technology.split("_"))


def check_research(board: Board, nation: str, technology: str, rolled_this_turn: int) -> None:
    rs = board.ruleset
    if technology not in rs.technologies:
        raise InputError(f"unknown technology {technology!r} (known: {', '.join(rs.technologies)})")
    level = board.tech.get(nation, {}).get(technology, 0)
    if level >= rs.research_levels:
        raise RuleViolation("TE2", f"{nation} has already acquired {technology_name(technology)} (level {level})")
    if rolled_this_turn >= rs.research_rolls_per_turn:
        raise RuleViolation(
            "TE1",
            f"{nation} has already made {plural(rolled_this_turn, 'research roll')} for "
            f"{technology_name(technology)} this turn",
        )
    balance = board.balances.get(nation, 0)
    if balance < rs.research_cost:
        raise RuleViolation("TE1", f"a research roll costs {rs.research_cost} and {nation} has {balance}")


def research_succeeds(board: Board, value: int) -> bool:
    """TE1: a roll at or above the ruleset's success value advances the technology a level."""
    return value >= board.ruleset.research_success_min
