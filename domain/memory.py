"""Memory habits shared by the long computations: the referee's replays, the projector and the
odds enumeration build many objects that reference counting alone frees."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: what is made there is freed by its reference
    counts, and each full collection in between would walk every object of the process again
    (a tenth of a projection rebuild; a fifth of a big battle's odds, whose memo tables grow
    to millions of objects)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
