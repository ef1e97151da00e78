"""Errors the model raises: a refused action names its rule, bad data names its file and key."""

from __future__ import annotations

from collections.abc import Iterable


class TrackerError(Exception):
    """Base of every error a user can cause; the CLI prints it as one line."""

    exit_code = 1


class RuleViolation(TrackerError):
    """An action breaks a rule; nothing is recorded (RK2)."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"{rule}: {reason}")
        self.rule = rule
        self.reason = reason


class InputError(TrackerError):
    """A name, value or option the user typed does not exist or is malformed."""

    exit_code = 2


class Unavailable(InputError):
    """A database or key store, named right, that does not answer now (a server stopped or out
    of reach, a file locked): the same command may work once it answers."""


class DataFileError(InputError):
    """A ruleset or scenario file is invalid: names the file, the key path and the problem."""

    def __init__(self, source: str, key: str, problem: str) -> None:
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {problem}")
        self.source = source
        self.key = key
        self.problem = problem


class DiceError(TrackerError):
    """Manually entered dice have the wrong count or a value out of range (D3)."""


def require_each_once(names: Iterable[str], what: str) -> None:
    """The names a player listed (units to move, submarines to submerge) name each one once; the
    first named twice is said, with `what` it is."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"{what} {name} is named twice")
        seen.add(name)
