"""Every `tracker odds` line the odds commands suggest is one `tracker odds` takes: at most
`MAX_UNITS_PER_SIDE` units a side. `odds need` against submarines alone suggested an `odds asw`
line with every hunter that could be there (24 destroyers), `odds escorts` an `odds convoy`
line with 21 submarines, and `odds need` against a coalition of 28 units refused with the
`at most 20 units per side` of the battle it would weigh, without a way out (NC1, AS1, CV1)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import cli_on
from tracker.analysis.odds import MAX_UNITS_PER_SIDE
from tracker.cli.main import cli

TOO_MANY = "exact odds take at most"


def north_sea(tmp_path: Path, *adjust: str) -> str:
    """The North Sea at Germany's combat movement, adjusted as `adjust` says."""
    path = str(tmp_path / "n.db")
    run = cli_on(path)
    run("new", "n", "--scenario", "north-sea-1914")
    run("adjust", *adjust, "--reason", "a test position")
    run("next", "--to", "combat_movement")
    return path


def suggested(db: str, line: str) -> tuple[int, str]:
    """Run a suggested `tracker odds ...` line on `db`: exit status and output."""
    words = shlex.split(line)
    assert words[:2] == ["tracker", "odds"], line
    result = CliRunner().invoke(cli, ["--db", db, *words[1:]])
    return result.exit_code, result.output


def counts(line: str, option: str) -> list[int]:
    """The unit counts of each force given to `option` on a suggested line."""
    words = shlex.split(line)
    forces = [words[i + 1] for i, w in enumerate(words) if w == option]
    return [sum(int(part.rpartition("=")[2]) for part in f.partition(":")[2].split(",")) for f in forces]


def test_nc1_as1_the_asw_line_of_odds_need_names_at_most_twenty_hunters(tmp_path: Path) -> None:
    # Submarines alone in the Southern North Sea; 24 German destroyers and more can be there.
    db = north_sea(
        tmp_path,
        "--add",
        "Germany:destroyer:Heligoland Bight:22",
        "--add",
        "Britain:submarine:Southern North Sea:2",
        "--remove",
        "GB-CA2,GB-DD3,GB-DD4,GB-DD5",
    )
    result = CliRunner().invoke(cli, ["--db", db, "odds", "need", "--zone", "Southern North Sea"])
    assert result.exit_code == 1, result.output
    said = result.output.strip()
    assert f"the {MAX_UNITS_PER_SIDE} units of Germany that can be there and search best" in said
    line = said[said.index("tracker odds asw") :]
    assert sum(counts(line, "--attacker")) == MAX_UNITS_PER_SIDE
    code, out = suggested(db, line)
    assert code == 0, out
    assert "Odds of an asw position" in out


def test_as1_more_submarines_than_exact_odds_weigh_get_no_asw_line(tmp_path: Path) -> None:
    db = north_sea(
        tmp_path,
        "--add",
        "Britain:submarine:Southern North Sea:21",
        "--remove",
        "GB-CA2,GB-DD3,GB-DD4,GB-DD5",
    )
    result = CliRunner().invoke(cli, ["--db", db, "odds", "need", "--zone", "Southern North Sea"])
    assert result.exit_code == 1, result.output
    assert "tracker odds asw" not in result.output
    assert f"21 submarines are more than exact odds weigh ({MAX_UNITS_PER_SIDE} a side)" in result.output


def test_nc1_a_coalition_too_large_to_weigh_is_refused_with_an_enemy_type_that_fits(tmp_path: Path) -> None:
    # Britain's 18 and France's 12 in the Central North Sea: each fits, together they do not.
    db = north_sea(
        tmp_path,
        "--add",
        "Britain:destroyer:Central North Sea:15",
        "--add",
        "France:destroyer:Central North Sea:10",
    )
    result = CliRunner().invoke(cli, ["--db", db, "odds", "need", "--zone", "Central North Sea"])
    assert result.exit_code == 2, result.output
    (said,) = result.output.strip().splitlines()
    assert "Britain and France have 28 units in Central North Sea" in said and TOO_MANY in said
    assert "units per side (the defender has more)" not in said
    example = said.rpartition("e.g. ")[2].split()
    assert example[0] == "--enemy-type"
    again = CliRunner().invoke(cli, ["--db", db, "odds", "need", "--zone", "Central North Sea", *example])
    assert TOO_MANY not in again.output and "units per side" not in again.output, again.output


@pytest.mark.parametrize("submarines", [MAX_UNITS_PER_SIDE, MAX_UNITS_PER_SIDE + 1])
def test_cv1_escorts_give_a_convoy_line_only_where_odds_takes_it(tmp_path: Path, submarines: int) -> None:
    # GB-SS1 and GB-SS2 are in the Heligoland Bight, where Germany's NTR lies.
    db = north_sea(tmp_path, "--add", f"Britain:submarine:Heligoland Bight:{submarines - 2}")
    words = ["--db", db, "odds", "escorts", "--zone", "Heligoland Bight", "--type", "cruiser"]
    result = CliRunner().invoke(cli, words)
    assert result.exit_code == 0, result.output
    data = json.loads(CliRunner().invoke(cli, [*words, "--json"]).output)
    for window in data["windows"]:
        for line in window["commands"]:
            assert max(counts(line, "--attacker") + counts(line, "--defender")) <= MAX_UNITS_PER_SIDE
        fits = submarines <= MAX_UNITS_PER_SIDE
        assert bool(window["commands"]) == fits
        assert window["too_large_by_hand"] == ([] if fits else ["Britain"])
    if submarines > MAX_UNITS_PER_SIDE:
        assert "by hand: none for Britain's attack, more than the 20 units a side" in result.output
    else:
        line = data["windows"][0]["commands"][0]
        code, out = suggested(db, line)
        assert code == 0, out
