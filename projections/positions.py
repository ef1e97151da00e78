"""Turn positions shared by the views and the renderings, without any storage import."""

from __future__ import annotations


def turn_number(turn_order: list[str] | tuple[str, ...], round_: int, nation: str) -> int:
    """National turns counted from 1 across the campaign (T1): round 1's first nation is turn 1."""
    return (round_ - 1) * len(turn_order) + turn_order.index(nation) + 1


def turn_position(turn_order: list[str] | tuple[str, ...], turn: int) -> tuple[int, str]:
    """The round and nation of national turn `turn` (`turn_number`'s inverse, T1)."""
    return (turn - 1) // len(turn_order) + 1, turn_order[(turn - 1) % len(turn_order)]
