"""The reliability catalogue's figures: what the suite measured, by area, added up across
tests and across pytest-xdist workers, printed at the end of the run (tests/conftest.py)."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from typing import Any

import pytest

HEAVY = os.environ.get("TRACKER_RELIABILITY", "").lower() == "heavy"

FIGURES = pytest.StashKey[dict[str, dict[str, Any]]]()


class Figures:
    """What the suite measured, by area, added up across tests."""

    def __init__(self, store: dict[str, dict[str, Any]]) -> None:
        self.store = store

    def add(self, area: str, **counts: int) -> None:
        row = self.store.setdefault(area, defaultdict(int))
        for key, value in counts.items():
            row[key] += value


def hand_over(config: pytest.Config) -> None:
    """A pytest-xdist worker gives its figures to the controller, which prints the sum."""
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        store = config.stash.get(FIGURES, {})
        workeroutput["reliability_figures"] = json.dumps({area: dict(row) for area, row in store.items()})


def take_over(node: Any) -> None:
    """The controller adds up the figures a worker measured."""
    given = getattr(node, "workeroutput", {}).get("reliability_figures")
    if given:
        figures = Figures(node.config.stash.setdefault(FIGURES, {}))
        for area, counts in json.loads(given).items():
            figures.add(area, **counts)


def print_figures(terminalreporter: Any, config: pytest.Config) -> None:
    store = config.stash.get(FIGURES, {})
    if not store:
        return
    terminalreporter.section(f"reliability figures ({'heavy' if HEAVY else 'default'} sizes)")
    for area in sorted(store):
        cells = ", ".join(f"{key} {value:,}" for key, value in sorted(store[area].items()))
        terminalreporter.write_line(f"{area:<32} {cells}")
