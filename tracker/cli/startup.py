"""What a process the command line started does once: keep the garbage collector off what it
imported."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_settling = False


def settle_imports_from_now() -> None:
    """In a process the command line started (not in a caller's, a test's or the benchmark's),
    keep the garbage collector off what has been imported so far, off the imports of the
    command and the storage stack while they run (`importing`), and off what they imported,
    until the storage stack is open (`settle_imports`).

    Modules, classes and functions live as long as the process, and every collection during a
    command's start walked them again (the domain's event classes, then SQLAlchemy's): about
    a fifth of the CPU of a cold `tracker state`. `gc.freeze` leaves them out of later
    collections; whatever is made afterwards is collected as usual."""
    global _settling
    _settling = True
    gc.freeze()


@contextmanager
def importing() -> Iterator[None]:
    """Around an import made on demand (a command's module, the storage stack and opening
    it): while the process settles, no collection runs inside (what an import makes lives
    as long as the process), and all of it is frozen after. Elsewhere, nothing changes."""
    if not _settling or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def settle_imports() -> None:
    """Once per process, after the storage stack is imported (see `settle_imports_from_now`);
    a long-running process (a shell, a server) freezes nothing after that."""
    global _settling
    if _settling:
        _settling = False
        gc.freeze()
