"""How `tracker shell` reads a line before it runs it: split as a shell splits a command line,
and the words that leave the shell (`exit`, `quit`) with the status they leave with."""

from __future__ import annotations

import re
import shlex

import click

from domain.errors import InputError

EXIT_WORDS = ("exit", "quit")
# A status a process leaves with: one byte, as a Unix shell's `exit N` takes it.
STATUS = re.compile(r"[0-9]{1,3}")
MAX_STATUS = 255
EXIT_USAGE = "exit [STATUS] (or quit [STATUS]): leave the shell, with exit status STATUS (0 to 255) when given."


def split_line(line: str) -> list[str]:
    """A command line as a shell splits it; a leading `tracker` is allowed and dropped."""
    try:
        args = shlex.split(line)
    except ValueError as e:
        raise InputError(f"cannot read the line: {e}") from None
    if args and args[0] == "tracker":
        args = args[1:]
    return args


class Leave(Exception):
    """The shell is left: with `status`, or with its own when None (0 at the prompt; piped, the
    status of the last line that failed)."""

    def __init__(self, status: int | None) -> None:
        super().__init__(status)
        self.status = status


def leave(args: list[str]) -> int:
    """An `exit` or `quit` line, split (`args[0]` the word): raises Leave. `exit 3` leaves with
    status 3, as a Unix shell does. Anything else after the word is said on one line, and the
    shell leaves with status 2 (bad usage), as bash does on `exit now`: the line asks to leave,
    and a script's lines after its `exit` must not run. `exit --help` (`help exit`) prints what
    the word takes and leaves nothing (status 0)."""
    rest = args[1:]
    if rest in (["--help"], ["-h"]):
        click.echo(EXIT_USAGE)
        return 0
    if not rest:
        raise Leave(None)
    if len(rest) == 1 and STATUS.fullmatch(rest[0]) and int(rest[0]) <= MAX_STATUS:
        raise Leave(int(rest[0]))
    given = " ".join(rest)
    click.echo(
        f"Error: {args[0]} takes a status from 0 to {MAX_STATUS} or nothing (`exit`, `exit 3`, `quit`), "
        f"not {given!r}: leaving with status 2",
        err=True,
    )
    raise Leave(2)
