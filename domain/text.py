"""Small helpers for the words in messages: counts with their noun in the right number."""

from __future__ import annotations

_IRREGULAR = {"die": "dice", "search": "searches", "battleship": "battleships", "aircraft_carrier": "aircraft carriers"}


def plural(n: int, noun: str) -> str:
    """'1 die', '3 dice', '2 destroyers', '1 hit'."""
    if n == 1:
        return f"{n} {noun.replace('_', ' ')}"
    many = _IRREGULAR.get(noun) or (
        noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
    )
    return f"{n} {many.replace('_', ' ')}"
