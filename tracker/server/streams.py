"""Standard streams per thread, for the command lines the server runs: each command writes to
its own buffers while others run at the same time in other threads, and is told that its
output goes to a terminal exactly when the client's does (so click keeps or strips colour as
it would there). Other threads, and the process outside any command, use the real streams.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

_local = threading.local()
_installed = threading.Lock()


class ThreadStream(io.TextIOBase):
    """sys.stdout, sys.stderr or sys.stdin: this thread's buffer while a command runs in it,
    the process's own stream otherwise."""

    def __init__(self, real: TextIO, which: str) -> None:
        self.real = real
        self.which = which

    def _mine(self) -> io.StringIO | None:
        streams: dict[str, io.StringIO] | None = getattr(_local, "streams", None)
        return streams[self.which] if streams is not None else None

    def write(self, text: str) -> int:
        mine = self._mine()
        return (mine if mine is not None else self.real).write(text)

    def read(self, size: int | None = -1) -> str:
        mine = self._mine()
        return (mine if mine is not None else self.real).read(-1 if size is None else size)

    def readline(self, size: int = -1) -> str:  # type: ignore[override]
        mine = self._mine()
        return (mine if mine is not None else self.real).readline(size)

    def flush(self) -> None:
        if self._mine() is None:
            self.real.flush()

    def isatty(self) -> bool:
        if self._mine() is None:
            return self.real.isatty()
        # Only stdout counts as the client's terminal: input never comes from one (a command
        # that would ask for dice does not), and a progress bar on stderr could not move.
        return bool(getattr(_local, "terminal", False)) and self.which == "stdout"

    def readable(self) -> bool:
        return self.which == "stdin"

    def writable(self) -> bool:
        return self.which != "stdin"

    def fileno(self) -> int:
        if self._mine() is not None:
            raise io.UnsupportedOperation("a command's output is captured for the client")
        return self.real.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8" if self._mine() is not None else str(getattr(self.real, "encoding", "utf-8"))

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return "strict" if self._mine() is not None else getattr(self.real, "errors", None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def install() -> None:
    """Put the per-thread streams in place of sys.stdin, sys.stdout and sys.stderr (once)."""
    with _installed:
        for which in ("stdin", "stdout", "stderr"):
            current = getattr(sys, which)
            if not isinstance(current, ThreadStream):
                setattr(sys, which, ThreadStream(current, which))


@contextmanager
def captured(terminal: bool) -> Iterator[dict[str, io.StringIO]]:
    """This thread's stdout and stderr as buffers (and an empty stdin) while the block runs;
    `terminal`: whether they count as a terminal (the client's stdout is one)."""
    install()
    streams = {"stdin": io.StringIO(""), "stdout": io.StringIO(), "stderr": io.StringIO()}
    _local.streams, _local.terminal = streams, terminal
    try:
        yield streams
    finally:
        _local.streams, _local.terminal = None, False
