"""The reliability suite: crashes, concurrent writers, random play, mutated data files and
tampering, on SQLite and PostgreSQL. Its figures are printed at the end of the run.

The default sizes keep the whole test run short; `TRACKER_RELIABILITY=heavy` (set by
`.ci/run`) runs the full sizes: 40 kills per backend, 4 x 200 concurrent actions, 2,000+
state-machine steps, 3,000 data-file mutants.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from typing import Any

import pytest

HEAVY = os.environ.get("TRACKER_RELIABILITY", "").lower() == "heavy"

_FIGURES = pytest.StashKey[dict[str, dict[str, Any]]]()


def size(default: int, heavy: int) -> int:
    """A test's size: the default run, or the heavy CI run."""
    return heavy if HEAVY else default


class Figures:
    """What the suite measured, by area, added up across tests."""

    def __init__(self, store: dict[str, dict[str, Any]]) -> None:
        self.store = store

    def add(self, area: str, **counts: int) -> None:
        row = self.store.setdefault(area, defaultdict(int))
        for key, value in counts.items():
            row[key] += value


@pytest.fixture(name="size")
def size_fixture() -> Any:
    """`size(default, heavy)`: a test's size for this run."""
    return size


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Figures:
    return Figures(request.config.stash.setdefault(_FIGURES, {}))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist each worker measures its share: it hands its figures to the
    controller, which prints the sum."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        store = session.config.stash.get(_FIGURES, {})
        workeroutput["reliability_figures"] = json.dumps({area: dict(row) for area, row in store.items()})


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """The controller adds up the figures a worker measured (pytest-xdist)."""
    given = getattr(node, "workeroutput", {}).get("reliability_figures")
    if given:
        figures = Figures(node.config.stash.setdefault(_FIGURES, {}))
        for area, counts in json.loads(given).items():
            figures.add(area, **counts)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    store = config.stash.get(_FIGURES, {})
    if not store:
        return
    terminalreporter.section(f"reliability figures ({'heavy' if HEAVY else 'default'} sizes)")
    for area in sorted(store):
        cells = ", ".join(f"{key} {value:,}" for key, value in sorted(store[area].items()))
        terminalreporter.write_line(f"{area:<28} {cells}")
