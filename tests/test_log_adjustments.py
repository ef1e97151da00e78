"""AD1 in the log's filters: `log --zone Z` and `log --nation N` (and the viewer's timeline and
the API's /log, which filter alike) find an adjustment by what it changes: where units are
added or removed and whose they are, the NTR changed, whose resources or technology, the
territory handed over with its old and new owner, the nations whose entry it brings forward.
They found it only by the nation whose turn it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

ADJUST = [
    "adjust",
    "--owner=Flanders=France",
    "--add=Britain:destroyer:Irish Sea",
    "--remove=DE-SS3",
    "--ntr=France:Bay of Biscay=-1",
    "--resources=Austria-Hungary=3",
    "--reason=an agreed change",
]


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    for args in (["new", "a", "--scenario", "north-sea-1914"], ["next"], ADJUST):
        result = CliRunner().invoke(cli, ["--db", path, *args])
        assert result.exit_code == 0, result.output
    return path


@pytest.mark.parametrize(
    "where",
    [
        ["--zone", "Flanders"],  # the territory handed over
        ["--zone", "Irish Sea"],  # a unit added
        ["--zone", "Heligoland Bight"],  # where the unit removed was
        ["--zone", "Bay of Biscay"],  # NTR changed
        ["--nation", "Germany"],  # Flanders' owner before, and DE-SS3's
        ["--nation", "France"],  # the new owner, and its NTR
        ["--nation", "Britain"],  # the unit added is Britain's
        ["--nation", "Austria-Hungary"],  # its resources
    ],
)
def test_ad1_log_filters_find_an_adjustment_by_what_it_changes(db: str, where: list[str]) -> None:
    result = CliRunner().invoke(cli, ["--db", db, "log", *where, "--kind", "Adjusted"])
    assert result.exit_code == 0 and "ADJUSTMENT" in result.output.upper() and "an agreed change" in result.output


def test_ad1_an_adjustment_is_not_found_where_it_changes_nothing(db: str) -> None:
    result = CliRunner().invoke(cli, ["--db", db, "log", "--zone", "Skagerrak", "--kind", "Adjusted"])
    assert result.exit_code == 0 and "an agreed change" not in result.output


def test_ad1_explain_names_the_territory_handed_over_and_how_a_unit_left(db: str) -> None:
    """`explain` listed the units and resources an adjustment changed, but not the territory
    it handed over, and called a unit it removed "sunk"."""
    result = CliRunner().invoke(cli, ["--db", db, "explain", "5"])
    assert result.exit_code == 0, result.output
    assert "Changed: Flanders: held by Germany -> France" in result.output
    assert "Changed: DE-SS3 removed by the adjustment from Heligoland Bight" in result.output
    assert "sunk" not in result.output
