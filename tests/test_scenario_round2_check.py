"""Entering one's own board, the last slips `scenario check` and `tracker new` name: a nation
typed as its code (`GB`, as the map draws it), a title too long to head a page, a zone listed
twice in one `adjacent` list, the line of a file that is not UTF-8 in --json, and where the
template says the title is shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.test_scenario_tools import edited, line_with
from tracker.cli.commands.scenario import template
from tracker.cli.main import cli

BOARD = template("myboard")
# The longest title not warned about (domain.scenario_check.MAX_TITLE).
MAX_TITLE = 120
SUMMARY = "(4 sea zones, 3 land territories, 2 nations, 7 unit groups)"
GB = "(did you mean 'Britain'? GB is its code on the map)"


def invoke(*args: str, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "myboard.toml"
    path.write_text(text, encoding="utf-8")
    return path


def checked(path: Path, code: int) -> list[str]:
    """`scenario check`'s lines, its exit status checked."""
    result = invoke("scenario", "check", str(path))
    assert result.exit_code == code, result.output
    return result.output.strip().splitlines()


def refused_by_new(tmp_path: Path, path: Path) -> str:
    result = invoke("--db", str(tmp_path / "c.db"), "new", "c1", "--scenario", str(path))
    assert result.exit_code == 2, result.output
    return result.output


# ----- a nation typed as its code -----


def test_an_owner_typed_as_its_nation_s_code_is_named_for_the_nation(tmp_path: Path) -> None:
    text = edited(BOARD, '[map.land."Scotland"]\nowner = "Britain"', '[map.land."Scotland"]\nowner = "GB"')
    path = written(tmp_path, text)
    line = line_with(text, 'owner = "GB"')
    message = f"map.land.Scotland.owner: unknown nation 'GB' {GB}"
    assert checked(path, 1) == [f"{path}:{line}: error: {message}", f"{path}: 1 error, 0 warnings {SUMMARY}"]
    assert f"{path}:{line}: {message}" in refused_by_new(tmp_path, path)


def test_a_unit_s_nation_typed_as_its_code_in_any_case_is_named_for_the_nation(tmp_path: Path) -> None:
    text = edited(BOARD, 'nation = "Germany"\ntype = "bomber"', 'nation = "de"\ntype = "bomber"')
    path = written(tmp_path, text)
    line = line_with(text, 'nation = "de"')
    message = "units[2].nation: unknown nation 'de' (did you mean 'Germany'? DE is its code on the map)"
    assert checked(path, 1)[0] == f"{path}:{line}: error: {message}"
    assert f"{path}:{line}: {message}" in refused_by_new(tmp_path, path)


def test_a_code_in_the_turn_order_is_named_for_its_nation(tmp_path: Path) -> None:
    text = edited(BOARD, 'turn_order = ["Germany", "Britain"]', 'turn_order = ["Germany", "GB"]')
    path = written(tmp_path, text)
    assert checked(path, 1)[0] == (
        f"{path}:{line_with(text, 'turn_order =')}: error: scenario.turn_order: must list every nation exactly "
        f"once (missing: Britain; no such nation: GB {GB})"
    )


def test_a_side_listing_a_nation_s_code_is_one_slip_named_at_the_side(tmp_path: Path) -> None:
    # Britain's table is then on no side, and the units and owners naming it stand: one slip.
    text = edited(BOARD, '"Entente" = ["Britain"]', '"Entente" = ["GB"]')
    path = written(tmp_path, text)
    line = line_with(text, '"Entente" = ["GB"]')
    message = f"sides.Entente: nation 'GB' has no [nations.GB] table {GB}"
    assert checked(path, 1) == [f"{path}:{line}: error: {message}", f"{path}: 1 error, 0 warnings {SUMMARY}"]
    assert f"{path}:{line}: {message}" in refused_by_new(tmp_path, path)


def test_a_misspelt_nation_is_still_named_as_it_was(tmp_path: Path) -> None:
    text = edited(BOARD, '[map.land."Scotland"]\nowner = "Britain"', '[map.land."Scotland"]\nowner = "Britian"')
    path = written(tmp_path, text)
    assert checked(path, 1)[0].endswith("unknown nation 'Britian' (did you mean 'Britain'?)")


# ----- warnings: a long title, a zone listed twice -----


def test_a_title_longer_than_the_limit_is_a_warning_naming_its_length(tmp_path: Path) -> None:
    title = "The North Sea " * 10  # 140 characters
    text = edited(BOARD, 'title = "myboard: a new board"', f'title = "{title}"')
    path = written(tmp_path, text)
    assert checked(path, 0)[0] == (
        f"{path}:{line_with(text, 'title = ')}: warning: scenario.title: the title is 140 characters long: it "
        f"heads every report and the viewer's board page, where one of more than {MAX_TITLE} wraps over lines; "
        "shorten it (a comment can keep the rest)"
    )


def test_a_title_of_the_limit_is_no_warning(tmp_path: Path) -> None:
    text = edited(BOARD, 'title = "myboard: a new board"', f'title = "{"x" * MAX_TITLE}"')
    assert checked(written(tmp_path, text), 0) == [f"{tmp_path / 'myboard.toml'}: 0 errors, 0 warnings {SUMMARY}"]


def test_a_zone_listed_twice_in_one_adjacent_list_is_a_warning(tmp_path: Path) -> None:
    text = edited(
        BOARD,
        'adjacent = ["Western Approaches", "England"]',
        'adjacent = ["Western Approaches", "England", "Western Approaches"]',
    )
    path = written(tmp_path, text)
    line = line_with(text, '"England", "Western Approaches"]')
    assert checked(path, 0)[0] == (
        f"{path}:{line}: warning: map.sea.English Channel.adjacent: 'Western Approaches' is listed twice in this "
        "list: a border is one, list it once"
    )


def test_a_zone_listed_three_times_over_lines_is_one_warning_at_the_list(tmp_path: Path) -> None:
    text = edited(
        BOARD,
        'adjacent = ["Heligoland Bight", "English Channel", "Scotland", "England"]',
        "adjacent = [\n"
        + "".join(f'  "{z}",\n' for z in ("Heligoland Bight", "England", "English Channel", "Scotland"))
        + '  "England",\n  "England",\n]',
    )
    path = written(tmp_path, text)
    lines = checked(path, 0)
    first = line_with(text, '  "England",')
    assert lines[0] == (
        f"{path}:{first}: warning: map.sea.North Sea.adjacent: 'England' is listed "
        "3 times in this list: a border is one, list it once"
    )
    assert lines[1] == f"{path}: 0 errors, 1 warning {SUMMARY}"


def test_an_unknown_zone_listed_twice_is_its_error_alone(tmp_path: Path) -> None:
    text = edited(BOARD, 'adjacent = ["Scotland"]', 'adjacent = ["Scotland", "Irish Sea", "Irish Sea"]')
    path = written(tmp_path, text)
    lines = checked(path, 1)
    assert len(lines) == 2 and "unknown zone 'Irish Sea'" in lines[0]


@pytest.mark.parametrize("builtin", ["north-sea-1914", "great-war-1914"])
def test_the_built_in_scenarios_have_no_such_warning(builtin: str) -> None:
    result = invoke("scenario", "check", builtin)
    assert result.exit_code == 0 and ", 0 warnings (" in result.output, result.output


# ----- a file that is not UTF-8: its line in --json -----


def test_check_json_of_a_file_not_utf8_gives_the_line_its_message_names(tmp_path: Path) -> None:
    path = tmp_path / "board.toml"
    path.write_bytes(BOARD.replace('"North Sea"]', '"Nordsj\xf6n"]', 1).encode("latin-1"))
    line = line_with(BOARD, '"North Sea"]')
    result = invoke("scenario", "check", str(path), "--json")
    assert result.exit_code == 2
    (error,) = json.loads(result.stdout)["errors"]
    assert error["line"] == line
    assert error["message"] == f"not a UTF-8 text file (line {line}: byte 0xf6 is not UTF-8): save it as UTF-8"


def test_check_json_of_stdin_not_utf8_gives_the_line_too() -> None:
    result = invoke("scenario", "check", "-", "--json", stdin=b"[scenario]\n\n# K\xf8benhavn\n")
    (error,) = json.loads(result.stdout)["errors"]
    assert (result.exit_code, error["file"], error["line"]) == (2, "<stdin>", 3)


# ----- the template says where the title is shown -----


def test_the_template_says_where_the_title_is_shown_and_it_is(tmp_path: Path) -> None:
    said = next(row for row in BOARD.splitlines() if row.startswith("# title:"))
    # The map drawing carries the title as its tooltip only: not drawn above the map.
    assert "above the map" not in said
    assert all(place in said for place in ("viewer's board page", "every report", "tooltip"))
    path = written(tmp_path, edited(BOARD, 'title = "myboard: a new board"', 'title = "Dogger Bank, 1915"'))
    svg = invoke("scenario", "map", str(path), "-o", "-").output
    assert re.search(r"<title>Dogger Bank, 1915</title>", svg)
    db = str(tmp_path / "c.db")
    assert invoke("--db", db, "new", "c1", "--scenario", str(path)).exit_code == 0
    report = invoke("--db", db, "report", "--all", "--format", "md").output.splitlines()
    assert report[0] == "# c1: campaign report, turn 1"
    assert "· Dogger Bank, 1915 ·" in report[2]
