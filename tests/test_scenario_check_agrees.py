"""`tracker new` and `scenario map` refuse a broken scenario file with the first error
`scenario check` lists, at the same line and key path and in the same words (the loader alone
stopped at its own first problem: a zone named twice at its first table, a misspelt table as the
one it stands for missing, [scenario]'s unknown keys after every other table's problems); a
neutral's units start on no land but its own (F8); a nation code in small letters is told its
capitals."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from domain.scenario import SOME_POSITIONS
from tests.test_scenario_slips import BOARD
from tests.test_scenario_tools import MISTAKES, NORTH_SEA, SLIPS, edited, line_with
from tracker.cli.main import cli


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def template(tmp_path: Path) -> str:
    """The board `tracker scenario new` writes (a valid one)."""
    path = tmp_path / "my-board.toml"
    assert invoke("scenario", "new", "my-board", "-o", str(path)).exit_code == 0
    return path.read_text(encoding="utf-8")


def zone_named_twice(text: str) -> str:
    return text + '\n[map.land."North Sea"]\nowner = "Britain"\n'


def misspelt_table(text: str) -> str:
    return edited(text, "\n[sides]\n", "\n[side]\n")


def several_errors(text: str) -> str:
    """An unknown key in [scenario] (read last by the loader) above a nation's NTR in no zone."""
    text = edited(text, 'dice = "auto"\n', 'dice = "auto"\ndicee = 1\n')
    return edited(text, '"Heligoland Bight" = 2 }', '"Heligolnd Bight" = 2 }')


def code_twice_in_sides(text: str) -> str:
    """A nation on two sides, a code in small letters and a unit of an unknown type: three errors."""
    text = edited(text, '"Entente" = ["Britain"]', '"Entente" = ["Britain", "Germany"]')
    text = edited(text, 'code = "GB"', 'code = "gb"')
    return edited(text, 'type = "cruiser"', 'type = "zeppelin"')


TEMPLATE_BREAKS = {
    "zone named twice": zone_named_twice,
    "misspelt table": misspelt_table,
    "several errors": several_errors,
    "errors in three tables": code_twice_in_sides,
    "unknown ruleset": lambda t: edited(t, 'ruleset = "twtea-3e"', 'ruleset = "twtea-9e"'),
}
# The seeded mistakes of the check's own tests, those that are errors, on north-sea-1914.
SEEDED = [case for case in MISTAKES + SLIPS if case.values[1] == "error"]


def first_error(path: Path) -> str:
    """The first error `scenario check` lists, as the refusals say it (no "error: " level)."""
    result = invoke("scenario", "check", str(path))
    assert result.exit_code == 1, result.output
    line = next(line for line in result.output.splitlines() if ": error: " in line)
    return line.replace(": error: ", ": ", 1)


def refusal_of_new(tmp_path: Path, path: Path) -> str:
    """What `tracker new` refuses the file with (exit 2, no database left), without the hint."""
    db = tmp_path / "c.db"
    result = invoke("--db", str(db), "new", "c1", "--scenario", str(path))
    assert result.exit_code == 2, result.output
    assert not db.exists()
    hint = f" (`tracker scenario check {shlex.quote(str(path))}` lists every problem)"
    said = result.output.strip()
    assert said.startswith("Error: ") and said.endswith(hint), said
    return said.removeprefix("Error: ").removesuffix(hint)


def refusal_of_map(tmp_path: Path, path: Path) -> str:
    """What `scenario map` refuses the file with (exit 2, no drawing), without the count of the
    others and the hint."""
    svg = tmp_path / "map.svg"
    result = invoke("scenario", "map", str(path), "-o", str(svg))
    assert result.exit_code == 2, result.output
    assert not svg.exists()
    hint = f"; `tracker scenario check {shlex.quote(str(path))}` lists every problem"
    said = result.output.strip()
    assert said.startswith("Error: ") and said.endswith(hint), said
    said = said.removeprefix("Error: ").removesuffix(hint)
    return said.rsplit(" (and ", 1)[0] if said.endswith(" more)") else said


def assert_refused_as_checked(tmp_path: Path, text: str) -> str:
    path = tmp_path / "board.toml"
    path.write_text(text, encoding="utf-8")
    first = first_error(path)
    assert refusal_of_new(tmp_path, path) == first
    if SOME_POSITIONS not in first:
        # x and y for some zones only: `scenario map` draws the board all the same (a warning).
        assert refusal_of_map(tmp_path, path) == first
    return first.removeprefix(f"{path}:")


# ----- 1. the refusal is the check's first error -----


@pytest.mark.parametrize("broken", list(TEMPLATE_BREAKS.values()), ids=list(TEMPLATE_BREAKS))
def test_new_and_map_refuse_the_template_broken_with_the_checks_first_error(
    tmp_path: Path, broken: Callable[[str], str]
) -> None:
    assert_refused_as_checked(tmp_path, broken(template(tmp_path)))


def test_the_three_reported_cases_name_the_line_and_key_the_check_names(tmp_path: Path) -> None:
    """Before, `tracker new` said `map.sea.North Sea` with no line, `sides: missing required
    key`, and the NTR's line below the unknown key."""
    text = template(tmp_path)
    twice = zone_named_twice(text)
    later, first = line_with(twice, '[map.land."North Sea"]'), line_with(twice, '[map.sea."North Sea"]')
    assert assert_refused_as_checked(tmp_path, twice) == (
        f"{later}: map.land.North Sea: 'North Sea' is both a sea zone and a land territory (also at line {first})"
    )
    assert assert_refused_as_checked(tmp_path, misspelt_table(text)) == (
        f"{line_with(text, '[sides]')}: side: unknown key (did you mean 'sides'?)"
    )
    several = several_errors(text)
    assert assert_refused_as_checked(tmp_path, several) == (
        f"{line_with(several, 'dicee')}: scenario.dicee: unknown key (did you mean 'dice'?)"
    )


@pytest.mark.parametrize("broken", [case.values[0] for case in SEEDED], ids=[case.id for case in SEEDED])
def test_new_and_map_refuse_each_seeded_mistake_with_the_checks_first_error(
    tmp_path: Path, broken: Callable[[str], str]
) -> None:
    assert_refused_as_checked(tmp_path, broken(NORTH_SEA))


def test_new_refuses_every_seeded_mistake_at_once_with_the_first_in_the_file(tmp_path: Path) -> None:
    # These edit the same lines of Brittany's table.
    overlapping = {"x without y", "territory without an owner", "coordinates for some zones only"}
    text = NORTH_SEA
    for case in MISTAKES:
        if case.values[1] == "error" and case.id not in overlapping:
            text = case.values[0](text)
    assert assert_refused_as_checked(tmp_path, text).startswith(f"{line_with(text, 'turn_order = ')}: ")


# ----- 2. F8: a neutral's units start on its own land only -----


def neutral_abroad(nation: str, enters: int, at: str, owner: str) -> str:
    return (
        f"{nation} (neutral until round {enters}) cannot start in {at}, {owner}'s territory: a neutral is "
        "nobody's ally, and until it enters the war its units may be on its own territory only, or at sea (F8)"
    )


def test_f8_a_neutrals_air_unit_cannot_start_on_an_allys_land(tmp_path: Path) -> None:
    # Sweden (Entente, entering in round 2) beside Russia (Entente, at war from the start).
    text = BOARD + '\n[[units]]\nnation = "Sweden"\ntype = "fighter"\nat = "Finland"\n'
    line = line_with(text, 'at = "Finland"')
    assert assert_refused_as_checked(tmp_path, text) == (
        f"{line}: units[5].at: {neutral_abroad('Sweden', 2, 'Finland', 'Russia')}"
    )


def test_f8_the_reported_board_a_neutral_fighter_in_prussia_is_refused(tmp_path: Path) -> None:
    """Sweden entering in round 3 on Germany's side, its fighter in Prussia (German land): the
    check was clean and the campaign started."""
    text = edited(BOARD, '"Central Powers" = ["Germany"]', '"Central Powers" = ["Germany", "Sweden"]')
    text = edited(text, '"Entente" = ["Russia", "Sweden"]', '"Entente" = ["Russia"]')
    text = edited(text, "entry_round = 2", "entry_round = 3")
    text += '\n[[units]]\nnation = "Sweden"\ntype = "fighter"\nat = "Prussia"\n'
    line = line_with(text, 'at = "Prussia"', 'nation = "Sweden"\ntype = "fighter"')
    assert assert_refused_as_checked(tmp_path, text) == (
        f"{line}: units[5].at: {neutral_abroad('Sweden', 3, 'Prussia', 'Germany')}"
    )


def test_f8_a_neutrals_air_unit_cannot_start_on_another_neutrals_land(tmp_path: Path) -> None:
    # Russia neutral until round 3, Sweden until round 2: Russia's fighter in Sweden's Scania.
    text = edited(BOARD, 'code = "RU"\n', 'code = "RU"\nentry_round = 3\n')
    text += '\n[[units]]\nnation = "Russia"\ntype = "fighter"\nat = "Scania"\n'
    line = line_with(text, 'at = "Scania"')
    assert assert_refused_as_checked(tmp_path, text) == (
        f"{line}: units[5].at: {neutral_abroad('Russia', 3, 'Scania', 'Sweden')}"
    )


def test_f8_a_neutrals_air_unit_on_an_enemys_land_is_refused_once(tmp_path: Path) -> None:
    text = BOARD + '\n[[units]]\nnation = "Sweden"\ntype = "fighter"\nat = "Schleswig"\n'
    line = line_with(text, 'at = "Schleswig"')
    assert assert_refused_as_checked(tmp_path, text) == (
        f"{line}: units[5].at: air unit cannot start in Schleswig, a territory of the other side"
    )
    result = invoke("scenario", "check", str(tmp_path / "board.toml"))
    assert "1 error, 0 warnings" in result.output


def test_f8_a_neutral_on_its_own_land_and_at_sea_is_clean(tmp_path: Path) -> None:
    # BOARD's Sweden (neutral until round 2) has a fighter in Svealand and a cruiser at sea.
    path = tmp_path / "board.toml"
    text = BOARD + '\n[[units]]\nnation = "Sweden"\ntype = "bomber"\nat = "Gotland"\n'
    path.write_text(text, encoding="utf-8")
    result = invoke("scenario", "check", str(path))
    assert result.exit_code == 0 and ": 0 errors, 0 warnings" in result.output, result.output
    assert invoke("--db", str(tmp_path / "c.db"), "new", "c1", "--scenario", str(path)).exit_code == 0


@pytest.mark.parametrize("name", ["north-sea-1914", "great-war-1914"])
def test_the_built_in_scenarios_stay_clean(name: str) -> None:
    result = invoke("scenario", "check", name)
    assert result.exit_code == 0 and f"{name}: 0 errors, 0 warnings" in result.output, result.output


# ----- 3. a nation code in small letters -----


@pytest.mark.parametrize(("code", "meant"), [("se", "SE"), ("Se", "SE"), ("sVeRiGe", "SVERIGE")])
def test_a_nation_code_in_small_letters_is_an_error_telling_its_capitals(tmp_path: Path, code: str, meant: str) -> None:
    """`code = "se"` passed and gave unit IDs such as `se-DD1`."""
    text = edited(BOARD, 'code = "SE"', f'code = "{code}"')
    line = line_with(text, f'code = "{code}"')
    assert assert_refused_as_checked(tmp_path, text) == (
        f"{line}: nations.Sweden.code: {code!r}: a nation code is written "
        f"in capitals (A-Z), as DE or GB (did you mean {meant!r}?)"
    )


def test_a_code_in_small_letters_of_another_nations_capitals_is_told_as_alike_only(tmp_path: Path) -> None:
    # 'de' beside Germany's 'DE': its capitals are taken, so the codes alike are the one error.
    text = edited(BOARD, 'code = "SE"', 'code = "de"')
    said = assert_refused_as_checked(tmp_path, text)
    line = line_with(text, 'code = "de"')
    assert said.startswith(f"{line}: nations.Sweden.code: codes 'DE' and 'de' differ")
    assert "1 error, 0 warnings" in invoke("scenario", "check", str(tmp_path / "board.toml")).output
