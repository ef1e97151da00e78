"""Dice: verifiable `auto` dice from a secret seed, `manual` dice typed in by players (D1-D4).

An auto die is derived from the campaign seed and its position (roll number, die index)
with HMAC-SHA256 and rejection sampling, so anyone holding the revealed seed can re-derive
every roll, and nobody can choose a roll without breaking the seed commitment.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from domain.errors import DiceError, RuleViolation
from domain.text import plural

SCHEME = "hmac-sha256/v1"


def new_seed() -> str:
    return secrets.token_hex(32)


def commitment(seed_hex: str) -> str:
    """The hash published in the campaign's first event before any die is rolled."""
    return hashlib.sha256(b"twtea-seed:" + bytes.fromhex(seed_hex)).hexdigest()


def derive_die(seed_hex: str, roll_number: int, index: int, faces: int) -> int:
    """One uniform die in 1..faces for position (roll_number, index) of the campaign sequence.

    Values of the 64-bit draw at or above the largest multiple of `faces` are rejected
    and redrawn with the next counter, so every face is exactly equally likely.
    """
    key = bytes.fromhex(seed_hex)
    limit = (1 << 64) - ((1 << 64) % faces)
    counter = 0
    while True:
        message = f"{roll_number}:{index}:{counter}".encode()
        draw = int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")
        if draw < limit:
            return draw % faces + 1
        counter += 1


def derive_roll(seed_hex: str, roll_number: int, count: int, faces: int) -> list[int]:
    return [derive_die(seed_hex, roll_number, i, faces) for i in range(count)]


@dataclass(frozen=True)
class Dice:
    """The values of one roll and where they came from."""

    values: tuple[int, ...]
    source: str  # "auto" or "manual"
    reference: str | None = None


@dataclass(frozen=True)
class Override:
    """RK3: an exception the group agreed to (a locked undo, or typed dice in an auto-dice
    campaign under D4), with the written reason and the nations of the other side that agreed."""

    reason: str
    agreed_by: tuple[str, ...]


class DiceSource(Protocol):
    """What a rule procedure asks for dice; the campaign numbers the roll.

    `source` says where the dice come from ("auto": the tracker rolls, "manual": typed in),
    so the campaign can refuse the wrong one (D4) before anything is rolled."""

    source: str
    override: Override | None

    def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice: ...


class AutoDice:
    source = "auto"
    override: Override | None = None

    def __init__(self, seed_hex: str) -> None:
        self.seed_hex = seed_hex

    def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
        return Dice(tuple(derive_roll(self.seed_hex, roll_number, count, faces)), "auto")


class ManualDice:
    """Physical or dice-server rolls typed in by a player, checked for count and range."""

    source = "manual"

    def __init__(self, values: Sequence[int], reference: str | None = None, override: Override | None = None) -> None:
        self.values = list(values)
        self.reference = reference
        # Typed dice in an auto-dice campaign need an override (D4, RK3).
        self.override = override
        self.used = 0
        # D3, CV4: what each roll took, in the order taken (first die, count, what for), for
        # the refusal of dice left over; a roll a step gave back (`used` set back) is dropped.
        self.taken: list[tuple[int, int, str]] = []

    def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
        remaining = self.values[self.used :]
        if len(remaining) < count:
            left = len(remaining)
            if self.used:
                # The action's earlier rolls took the first dice typed: say so, not "0 were entered".
                entered = (
                    f"{plural(len(self.values), 'die')} {'was' if len(self.values) == 1 else 'were'} entered and "
                    f"the rolls before it took {self.used}"
                )
            else:
                entered = f"{left} {'was' if left == 1 else 'were'} entered"
            raise DiceError(f"D3: {what} needs {plural(count, 'die')} (D{faces}) but {entered}")
        taken = remaining[:count]
        for v in taken:
            if not 1 <= v <= faces:
                raise DiceError(f"D1: die value {v} for {what} is out of range 1..{faces}")
        while self.taken and self.taken[-1][0] >= self.used:
            self.taken.pop()
        self.taken.append((self.used, count, what))
        self.used += count
        return Dice(tuple(taken), "manual", self.reference)

    def check_all_used(self) -> None:
        """D3: refuse dice left over, saying how many the action rolled (none, or "N dice", not
        "rolled 1", which reads as a one rolled) and what to type instead."""
        if self.used == len(self.values):
            return
        entered = plural(len(self.values), "die")
        if not self.used:
            raise DiceError(
                f"D3: {entered} entered ({', '.join(map(str, self.values))}) but the action rolled none: "
                "run it without --dice"
            )
        raise DiceError(
            f"D3: {entered} entered but the action rolled {plural(self.used, 'die')}{self._taken()}; "
            f"give --dice exactly {plural(self.used, 'value')}"
        )

    def _taken(self) -> str:
        """D3, CV4: which dice the action took for what, in the order taken (the order `tracker
        pending` lists a step's dice), and the ones left over."""
        taken = [t for t in self.taken if t[0] < self.used]
        parts = [f"{', '.join(map(str, self.values[i : i + n]))} for {what}" for i, n, what in taken[:12]]
        if len(taken) > 12:
            parts.append(f"and {plural(len(taken) - 12, 'more roll')}")
        order = " in the order `tracker pending` lists" if len(taken) > 1 else ""
        used = f", taken{order}: {'; '.join(parts)}" if parts else ""
        return f"{used}; left over: {', '.join(map(str, self.values[self.used :]))}"


class PromptDice(ManualDice):
    """Manual dice asked for at the moment a roll needs them (a player at a terminal): `ask`
    gets what the roll is for, how many dice and their faces, and returns the values."""

    def __init__(self, ask: Callable[[str, int, int], list[int]], reference: str | None = None) -> None:
        super().__init__([], reference)
        self.ask = ask

    def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
        missing = count - (len(self.values) - self.used)
        if missing > 0:
            self.values.extend(self.ask(what, missing, faces))
        return super().roll(roll_number, count, faces, what)


class NoDice:
    """For a manual-dice campaign when the player gave no values."""

    source = "manual"
    override: Override | None = None

    def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
        raise DiceError(
            f"D4: this campaign uses manual dice; {what} needs {count} D{faces}: roll them and pass them with --dice"
        )


class MissingSeedDice:
    """Auto dice whose seed this database does not hold (an imported campaign): an action
    that rolls nothing still runs; one that rolls is refused until the group switches the
    campaign to manual dice (D4), so auto and typed dice never mix silently."""

    source = "auto"
    override: Override | None = None

    def __init__(self, kept_in: str = "this database") -> None:
        self.kept_in = kept_in

    def roll(self, roll_number: int, count: int, faces: int, what: str) -> Dice:
        # A server started with another key store than the one holding the seed is told so
        # first: switching to physical dice would be the wrong mend there.
        why = (
            "(was the server started with another --keys? was the campaign imported?)"
            if self.kept_in != "this database"
            else "(was it imported?)"
        )
        raise RuleViolation(
            "D4",
            f"{what} needs {count} D{faces}, and {self.kept_in} does not hold the campaign's dice seed "
            f"{why}; go on with physical dice after a recorded switch: tracker dice switch manual --reason TEXT",
        )


def clamp_target(target: int, faces: int) -> int:
    """D2: a modified target number stays within 0..faces (0 cannot succeed)."""
    return max(0, min(faces, target))


_TYPED_DIE = re.compile(r"[+-]?[0-9]+")


def is_typed_die(word: str) -> bool:
    """D3: one die as typed: a whole number in the digits a keyboard types. int() also takes
    other scripts' digits ("٥" is 5) and underscores ("1_0"), which would be recorded as
    something not typed."""
    return _TYPED_DIE.fullmatch(word) is not None


def parse_dice(text: str) -> list[int]:
    """Dice typed as '3,7' or '3 7'."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if not all(is_typed_die(p) for p in parts):
        raise DiceError(f"D3: dice must be whole numbers, got {text!r}")
    return [int(p) for p in parts]
