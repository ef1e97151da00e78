"""Small helpers for the words in messages: counts with their noun in the right number, a
nation's possessive, a phase's and a unit type's names, names listed, a side's nations in the
order they are named, unit IDs in the order a player counts them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

_IRREGULAR = {"die": "dice", "search": "searches", "battleship": "battleships", "aircraft_carrier": "aircraft carriers"}


def plural(n: int, noun: str) -> str:
    """'1 die', '3 dice', '2 destroyers', '1 hit'."""
    if n == 1:
        return f"{n} {noun.replace('_', ' ')}"
    many = _IRREGULAR.get(noun) or (
        noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
    )
    return f"{n} {many.replace('_', ' ')}"


def possessive(name: str) -> str:
    """A name's possessive for a message: "Britain's", and "United States'" for a name ending in
    "s" (a plural name; the possessive of a singular one in "s" may take either form). Texts
    recorded in events keep the form they were recorded with (`verify` compares them exactly)."""
    return f"{name}'" if name.endswith(("s", "S")) else f"{name}'s"


def phase_name(phase: str) -> str:
    """A phase as a person reads it ("naval combat"); its ID (`naval_combat`) is what a command
    takes (`tracker next --to naval_combat`) and what JSON gives."""
    return phase.replace("_", " ")


def type_name(unit_type: str) -> str:
    """A unit type as a person reads it ("aircraft carrier"); its ID in the ruleset
    (`aircraft_carrier`) is what a command takes, what JSON gives and what events record."""
    return unit_type.replace("_", " ")


def listed(names: Sequence[str]) -> str:
    """'Britain', 'Britain and France', 'Britain, France and Russia'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def side_nations(nations: Iterable[str], deciding: str, turn_order: Sequence[str]) -> list[str]:
    """NC1, F5: a side's nations as its words name them: the nation deciding for the side first
    when it is among them (the battle names it for the side), then the others in the scenario's
    turn order, the order `deciding_nation` breaks ties by; none given, the deciding one."""
    found = set(nations)
    rest = sorted(found - {deciding}, key=lambda n: (turn_order.index(n) if n in turn_order else len(turn_order), n))
    return ([deciding] if deciding in found or not found else []) + rest


_NUMBERS = re.compile(r"(\d+)")


# A campaign has a few hundred unit IDs, each sorted again on every event the views summarise.
@lru_cache(maxsize=8192)
def unit_order(uid: str) -> tuple[str | int, ...]:
    """A sort key putting GB-BB8 before GB-BB10, for a board shown to players. Dice and the
    lists recorded in events keep the IDs' own order (`sorted`), which the referee rolls in."""
    return tuple(int(part) if part.isdecimal() else part for part in _NUMBERS.split(uid))
