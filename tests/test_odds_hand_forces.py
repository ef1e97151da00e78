"""`tracker odds` of a position given by hand: its forces name nations of the scenarios (the
built-in ones, or the selected campaign's) by name or code, and unit types of the ruleset by
name or abbreviation, each refused in one line naming what was typed and what is taken; and
`--exact` prints exactly what its help promises, every chance as a fraction."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.data import __file__ as data_init
from domain.errors import InputError
from tracker.analysis import odds as view
from tracker.cli.main import cli

DATA = Path(data_init).parent
BUILT_IN = "Britain, France, Russia, Japan, Italy, United States, Germany, Austria-Hungary, Ottoman Empire"


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def nodb(tmp_path: Path) -> str:
    return str(tmp_path / "none.db")


@pytest.mark.parametrize(
    ("attacker", "defender", "typed"),
    [
        ("Atlantis:battleship=1", "Britain:cruiser=1", "'Atlantis' in 'Atlantis:battleship=1'"),
        ("Germany:battleship=1", "Britian:cruiser=1", "'Britian' in 'Britian:cruiser=1'"),
        ("Germany:battleship=1", "XX:cruiser=1", "'XX' in 'XX:cruiser=1'"),
    ],
)
def test_a_nation_no_scenario_has_is_refused_naming_it_and_the_nations_taken(
    nodb: str, attacker: str, defender: str, typed: str
) -> None:
    out = run(nodb, "odds", "naval", "--attacker", attacker, "--defender", defender, code=2)
    assert out == f"Error: unknown nation {typed} (known, by name or code: {BUILT_IN})\n"
    assert not Path(nodb).exists()  # looked for a campaign, made no database


def test_a_bare_unit_type_is_not_taken_for_a_nation_without_units(nodb: str) -> None:
    """CV2: a convoy's defender may be a nation alone; `--defender destroyer` was a nation
    called "destroyer" defending with merchant defence only."""
    out = run(
        nodb, "odds", "convoy", "--attacker", "Germany:submarine=2", "--defender", "destroyer", "--ntr", "3", code=2
    )
    assert out == "Error: 'destroyer' is a unit type, not a force: a force is NATION:TYPE=N[,TYPE=N...]\n"
    out = run(nodb, "odds", "convoy", "--attacker", "Germany:submarine=2", "--defender", "Mordor", "--ntr", "3", code=2)
    assert out.startswith("Error: unknown nation 'Mordor' in 'Mordor' (known, by name or code: Britain, ")


def test_an_unknown_unit_type_is_refused_naming_it_and_the_rulesets_types(nodb: str) -> None:
    out = run(nodb, "odds", "naval", "--attacker", "Germany:zeppelin=1", "--defender", "Britain:cruiser=1", code=2)
    assert out.startswith("Error: unknown unit type 'zeppelin' in 'Germany:zeppelin=1' (known: submarine, destroyer,")


def test_codes_and_abbreviations_in_any_case_are_the_same_position_as_the_names(nodb: str) -> None:
    named = ["--attacker", "Germany:battleship=1,destroyer=1", "--defender", "Britain:cruiser=1", "--json"]
    typed = ["--attacker", "de:BB=1,Destroyer", "--defender", "GB:ca", "--json"]
    by_name, by_code = (json.loads(run(nodb, "odds", "naval", *args)) for args in (named, typed))
    assert by_code == by_name
    # The same nation under its code and its name is one nation, on one side only.
    out = run(nodb, "odds", "naval", "--attacker", "DE:battleship", "--defender", "Germany:cruiser", code=2)
    assert out == "Error: Germany cannot be on both sides\n"
    # --tech names it as the forces do.
    tech = ["--tech", "de:advanced_submarine", "--ntr", "3"]
    out = run(nodb, "odds", "convoy", "--attacker", "Germany:submarine=1", "--defender", "gb", *tech)
    assert "Odds of a convoy position" in out


def test_a_nation_of_the_selected_campaigns_own_scenario_is_taken(tmp_path: Path) -> None:
    scenario = tmp_path / "atlantis.toml"
    text = (DATA / "scenarios" / "north-sea-1914.toml").read_text()
    scenario.write_text(text.replace('name = "north-sea-1914"', 'name = "atlantis"').replace("France", "Atlantis"))
    db = str(tmp_path / "c.db")
    run(db, "new", "c1", "--scenario", str(scenario), "--dice", "auto")
    out = run(db, "odds", "naval", "--attacker", "Atlantis:cruiser=1", "--defender", "Germany:destroyer=1")
    assert out.startswith("Odds of a naval position: attacker Atlantis:cruiser=1")
    out = run(db, "odds", "naval", "--attacker", "Lemuria:cruiser=1", "--defender", "Germany:destroyer=1", code=2)
    assert out.startswith("Error: unknown nation 'Lemuria'") and out.rstrip().endswith(", Atlantis)")


def test_nations_reads_more_only_for_a_name_it_does_not_know() -> None:
    asked: list[int] = []

    def more() -> dict[str, str]:
        asked.append(1)
        return {"Atlantis": "AT"}

    nation_of = view.nations({"Germany": "DE"}, more)
    assert nation_of("de", "de:bb") == "Germany" and not asked
    assert nation_of("at", "at:bb") == "Atlantis" and nation_of("ATLANTIS", "x") == "Atlantis"
    assert asked == [1]
    with pytest.raises(
        InputError, match=r"unknown nation 'Mu' in 'Mu:bb' \(known, by name or code: Germany, Atlantis\)"
    ):
        nation_of("Mu", "Mu:bb")


# ----- --exact: what its help promises -----


def test_exact_odds_give_every_chance_as_a_fraction_in_the_json(nodb: str) -> None:
    args = ["odds", "naval", "--attacker", "Germany:battleship=1", "--defender", "Britain:cruiser=1"]
    data = json.loads(run(nodb, *args, "--exact", "--json"))
    assert data["holder_exact"] == {"attacker": "259/289", "defender": "9/289", "none": "21/289"}
    assert sum(Fraction(v) for v in data["holder_exact"].values()) == 1
    assert data["truncated_exact"] == "0/1" == data["expected_exact"]["ntr_destroyed"]
    assert {k: float(Fraction(v)) for k, v in data["holder_exact"].items()} == pytest.approx(data["holder"])
    plain = json.loads(run(nodb, *args, "--json"))
    assert "holder_exact" not in plain and "truncated_exact" not in plain


def test_exact_odds_say_which_figures_are_exact_and_the_help_says_the_same(nodb: str) -> None:
    args = ["odds", "naval", "--attacker", "Germany:battleship=1", "--defender", "Britain:cruiser=1"]
    text = run(nodb, *args, "--exact")
    assert "Expected (standard deviation; exact where a fraction follows):" in text
    assert "  rounds: 1.384 (0.667)\n" in text  # a decimal, and said to be one
    assert "Expected (standard deviation):" in run(nodb, *args)
    helped = " ".join(run(nodb, "odds", "--help").split())
    assert "the rounds' mean and the standard deviations stay decimals" in helped


def test_exact_odds_print_the_mass_left_in_a_loop_as_a_fraction() -> None:
    data: view.OddsSummary = {
        "procedure": "naval", "outcomes": [], "expected": {}, "sd": {}, "p": {}, "holder": {},
        "truncated": 1 / 3, "states": 2, "expected_exact": {}, "p_exact": {}, "truncated_exact": "1/3",
    }  # fmt: skip
    assert "(not counted): 1/3\n" in view.render(data, "T", exact=True)
    assert "(not counted): 0.333\n" in view.render(data, "T", exact=False)
