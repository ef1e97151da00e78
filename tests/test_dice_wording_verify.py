"""D4: `tracker verify` says what it checked of typed dice (order and range: they have no seed
to re-derive), not "0 auto roll(s) re-derived", in a manual-dice campaign and in one that
switched its dice source; `verify --json` keeps its keys. Plays north-sea-1914 on SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import cli_on


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "c.db")


def first_line(db: str) -> str:
    return cli_on(db)("verify").splitlines()[0]


def test_d4_verify_of_a_manual_campaign_counts_its_typed_rolls_not_auto_ones(db: str) -> None:
    run = cli_on(db)
    run("new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    assert "; no typed roll yet (manual dice have no seed to re-derive); " in first_line(db)
    run("research", "advanced_asw", "--dice", "3")
    line = first_line(db)
    assert "auto roll" not in line
    assert "; 1 typed roll checked for order and range (dice typed by players have no seed to re-derive); " in line
    data = json.loads(run("verify", "--json"))
    assert (data["rolls_checked"], data["rolls_unchecked"]) == (0, 0)


def test_d4_verify_after_a_switch_names_both_the_auto_and_the_typed_rolls(db: str) -> None:
    run = cli_on(db)
    run("new", "m", "--scenario", "north-sea-1914", "--dice", "manual")
    run("research", "advanced_asw", "--dice", "3")
    run("dice", "switch", "auto", "--reason", "the seed is back")
    assert "; 0 auto rolls re-derived from the seed and 1 typed roll checked" in first_line(db)
    run("research", "advanced_submarine")
    run("dice", "switch", "manual", "--reason", "physical dice again")
    assert "; 1 auto roll re-derived from the seed and 1 typed roll checked" in first_line(db)
    data = json.loads(run("verify", "--json"))
    assert data["ok"] and (data["rolls_checked"], data["rolls_unchecked"]) == (1, 0)
    assert "rolls_typed" not in data  # the JSON keys stay those docs/json.md lists


def test_d4_verify_of_an_auto_campaign_still_says_only_auto_rolls(db: str) -> None:
    run = cli_on(db)
    run("new", "a", "--scenario", "north-sea-1914")
    run("research", "advanced_asw")
    line = first_line(db)
    assert "; 1 auto roll re-derived from the seed; " in line and "typed" not in line


def test_d4_typed_dice_under_an_override_are_counted_as_typed(db: str) -> None:
    run = cli_on(db)
    run("new", "a", "--scenario", "north-sea-1914")
    run("research", "advanced_asw", "--dice", "3", "--override", "--reason", "dice server", "--agreed-by", "Britain")
    assert "; 0 auto rolls re-derived from the seed and 1 typed roll checked" in first_line(db)
