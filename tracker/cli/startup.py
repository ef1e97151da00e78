"""What a process the command line started does once: keep the garbage collector off what it
imported."""

from __future__ import annotations

_settling = False


def settle_imports_from_now() -> None:
    """In a process the command line started (not in a caller's, a test's or the benchmark's),
    keep the garbage collector off what has been imported so far, and once more when the
    storage stack has been imported (`settle_imports`).

    Modules, classes and functions live as long as the process, and every full collection of
    a command's start walked them all again (the domain's event classes, then SQLAlchemy's):
    about a fifth of the CPU of a cold `tracker state`. `gc.freeze` leaves them out of later
    collections; whatever is made afterwards is collected as usual."""
    global _settling
    _settling = True
    import gc

    gc.freeze()


def settle_imports() -> None:
    """Once per process, after the storage stack is imported (see `settle_imports_from_now`);
    a long-running process (a shell, a server) freezes nothing after that."""
    global _settling
    if _settling:
        _settling = False
        import gc

        gc.freeze()
