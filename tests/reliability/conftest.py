"""The reliability suite: crashes, concurrent writers, random play, mutated data files and
tampering, on SQLite and PostgreSQL. Its figures are printed at the end of the run.

The default sizes keep the whole test run short; `TRACKER_RELIABILITY=heavy` (set by
`.ci/run`) runs the full sizes: per backend 40 kills of a writer, of a rebuild and of an export
and 100 of the server under 20 clients, 4 x 200 concurrent actions; 2,000+ state-machine steps,
3,000 mutants of each data file (6,000).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.figures import FIGURES, HEAVY, Figures


def size(default: int, heavy: int) -> int:
    """A test's size: the default run, or the heavy CI run."""
    return heavy if HEAVY else default


@pytest.fixture(name="size")
def size_fixture() -> Any:
    """`size(default, heavy)`: a test's size for this run."""
    return size


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Figures:
    return Figures(request.config.stash.setdefault(FIGURES, {}))
