"""Slips a newcomer makes entering a board of their own, each answered where it is and as it is:
`--write-coordinates --force` replaces coordinates whatever they were typed as, a malformed table
is one error and not one per key it should hold, a name that needs quotes in TOML is shown with
them, and a map's refusal names a check that can be pasted back into a shell."""

from __future__ import annotations

import json
import shlex
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.scenario import scenario_text
from tests.test_scenario_tools import edited, run
from tracker.cli.main import cli

NORTH_SEA = scenario_text("north-sea-1914")[0]
SKAGERRAK = '[map.sea."Skagerrak"]\nx = 840\n'


def checked(tmp_path: Path, text: str, code: int = 1) -> str:
    path = tmp_path / "board.toml"
    path.write_text(text)
    return run("scenario", "check", str(path), code=code)


# ----- --write-coordinates --force replaces what it finds -----


@pytest.mark.parametrize(
    "typed",
    ["1.5", "1e3", "0x10", "nan", "inf", '"840"', "[8, 40]", "840.0  # nudged by hand", "+840 # kept"],
)
def test_force_replaces_a_coordinate_typed_as_anything(tmp_path: Path, typed: str) -> None:
    path = tmp_path / "board.toml"
    path.write_text(edited(NORTH_SEA, SKAGERRAK, f'[map.sea."Skagerrak"]\nx = {typed}\n'))
    out = run("scenario", "map", str(path), "--write-coordinates", "--force")
    assert out == f"Wrote x and y for 17 zones into {path}.\n"
    written = path.read_text()
    x = tomllib.loads(written)["map"]["sea"]["Skagerrak"]["x"]
    assert isinstance(x, int) and not isinstance(x, bool)
    # One line for one line, the comment typed after the value kept.
    assert len(written.splitlines()) == len(NORTH_SEA.splitlines())
    if "#" in typed:
        assert f"x = {x}  # " in written or f"x = {x} # " in written
    assert "0 errors, 0 warnings" in run("scenario", "check", str(path))


def test_force_replaces_a_coordinate_whose_value_runs_over_lines(tmp_path: Path) -> None:
    path = tmp_path / "board.toml"
    path.write_text(edited(NORTH_SEA, SKAGERRAK, '[map.sea."Skagerrak"]\nx = [\n  8,\n  40,\n]\n'))
    run("scenario", "map", str(path), "--write-coordinates", "--force")
    written = path.read_text()
    assert isinstance(tomllib.loads(written)["map"]["sea"]["Skagerrak"]["x"], int)
    assert len(written.splitlines()) == len(NORTH_SEA.splitlines())


def test_force_replaces_a_coordinate_under_a_quoted_key(tmp_path: Path) -> None:
    path = tmp_path / "board.toml"
    path.write_text(edited(NORTH_SEA, SKAGERRAK, '[map.sea."Skagerrak"]\n"x" = 840\n'))
    run("scenario", "map", str(path), "--write-coordinates", "--force")
    assert isinstance(tomllib.loads(path.read_text())["map"]["sea"]["Skagerrak"]["x"], int)


# ----- one error for one slip -----


def test_a_scenario_table_of_the_wrong_type_is_one_error_not_one_per_key(tmp_path: Path) -> None:
    text = NORTH_SEA.replace('[scenario]\nname = "north-sea-1914"', 'scenario = "north-sea-1914"\n[meta]\nname = "x"')
    out = checked(tmp_path, text)
    assert "scenario: expected a table, got a string" in out
    assert "missing required key" not in out


def test_a_nation_whose_units_cannot_be_placed_is_not_said_to_have_none(tmp_path: Path) -> None:
    # Austria-Hungary's every group names a mistyped zone: an error at each, and no warning
    # that it "starts with no unit", which the file plainly gives it.
    text = NORTH_SEA
    for unit_type in ("submarine", "destroyer"):
        group = f'nation = "Austria-Hungary"\ntype = "{unit_type}"\nat = "Skagerrak"'
        text = edited(text, group, group.replace("Skagerrak", "XSkagerrak"))
    out = checked(tmp_path, text)
    assert "unknown zone 'X" in out
    assert "starts with no unit" not in out


# ----- names shown as TOML writes them -----


def test_a_nation_with_no_table_is_shown_the_header_to_write_quoted_where_toml_needs_it(tmp_path: Path) -> None:
    # `[nations.Austria.Hungary]` is a table Hungary inside a table Austria: the header to write
    # is the quoted one.
    text = NORTH_SEA.replace("Austria-Hungary", "Austria.Hungary").replace(
        '[nations."Austria.Hungary"]', "[nations.Austria.Hungary]"
    )
    assert "[nations.Austria.Hungary]" in text
    out = checked(tmp_path, text)
    assert "nation 'Austria.Hungary' has no [nations.\"Austria.Hungary\"] table" in out
    text = NORTH_SEA.replace('"Entente" = ["Britain", "France"]', '"Entente" = ["Britain", "France", "Low Countries"]')
    out = checked(tmp_path, text)
    assert "nation 'Low Countries' has no [nations.\"Low Countries\"] table" in out
    text = NORTH_SEA.replace('"Entente" = ["Britain", "France"]', '"Entente" = ["Britain", "France", "Italy"]')
    assert "nation 'Italy' has no [nations.Italy] table" in checked(tmp_path, text)


# ----- the check a refusal names can be pasted -----


def test_map_of_a_broken_file_names_a_check_a_shell_can_run(tmp_path: Path) -> None:
    path = tmp_path / "my board.toml"
    path.write_text(edited(NORTH_SEA, 'adjacent = ["Heligoland Bight"]\n', 'adjacent = ["Heligoland Bite"]\n'))
    out = run("scenario", "map", str(path), "-o", str(tmp_path / "m.svg"), code=2)
    assert f"`tracker scenario check {shlex.quote(str(path))}` lists every problem" in out
    assert out.count("\n") == 1


def test_check_says_what_the_file_writes_when_its_ruleset_cannot_be_read(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, 'ruleset = "twtea-3e"', 'ruleset = "no-such-rules"')
    out = checked(tmp_path, text)
    assert out.splitlines()[-1].endswith(
        ": 1 error, 0 warnings (11 sea zones, 6 land territories, 4 nations, 24 unit groups)"
    )
    data = json.loads(run("scenario", "check", str(tmp_path / "board.toml"), "--json", code=1))
    assert [e["key"] for e in data["errors"]] == ["scenario.ruleset"]


def test_a_file_without_a_map_is_one_error_not_one_per_zone_it_names(tmp_path: Path) -> None:
    start, end = NORTH_SEA.index("[map.sea."), NORTH_SEA.index("[[units]]")
    out = checked(tmp_path, NORTH_SEA[:start] + NORTH_SEA[end:])
    assert ": error: map: missing required key" in out
    assert "unknown zone" not in out
    assert out.splitlines()[-1].endswith(
        ": 1 error, 0 warnings (0 sea zones, 0 land territories, 4 nations, 24 unit groups)"
    )


# ----- scenario new -----


def test_new_to_a_dash_writes_the_template_to_stdout_not_to_a_file_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = run("scenario", "new", "mine", "-o", "-")
    assert not (tmp_path / "-").exists()
    assert tomllib.loads(out)["scenario"]["name"] == "mine"
    result = CliRunner().invoke(cli, ["scenario", "check", "-"], input=out)
    assert result.exit_code == 0 and "<stdin>: 0 errors, 0 warnings" in result.output


def test_new_names_next_commands_a_shell_can_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = run("scenario", "new", "mine", "-o", "my board.toml")
    assert out.splitlines()[1] == (
        "Next: tracker scenario check 'my board.toml'  and  tracker scenario map 'my board.toml' -o map.svg"
    )


# ----- a refused map changes nothing -----


@pytest.mark.parametrize("picture", ["missing/map.svg", "map.png"])
def test_write_coordinates_leaves_the_file_alone_when_the_picture_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, picture: str
) -> None:
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # as if it were not installed
    path = tmp_path / "board.toml"
    run("scenario", "new", "mine", "-o", str(path))
    before = path.read_text()
    out = run("scenario", "map", str(path), "--write-coordinates", "-o", str(tmp_path / picture), code=2)
    assert out.startswith("Error: ") and out.count("\n") == 1
    assert path.read_text() == before


def test_new_on_a_broken_scenario_file_names_the_line_of_its_first_problem(tmp_path: Path) -> None:
    """`tracker new --scenario FILE` named the key of the first problem but not its line, which
    `scenario check` gives (an editor jumps there)."""
    path = tmp_path / "mine.toml"
    CliRunner().invoke(cli, ["scenario", "new", "mine", "-o", str(path)])
    lines = path.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("resources = "))
    lines[at] = "resources = 99999999999"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "c.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "new", "x", "--scenario", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}:{at + 1}: nations.Germany.resources: value 99999999999" in result.output
    assert "lists every problem" in result.output and not db.exists()
