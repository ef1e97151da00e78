"""A group entering its own board: what `tracker new` says of a file `scenario check` refuses
(its line and key path, as the check says it), a large map laid out without boxes on top of
each other and in seconds, `[units]` for `[[units]]` whichever comes first, and a unit type
typed as the abbreviation the map draws."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.scenario_check import check_scenario
from tracker.cli.commands.scenario import template
from tracker.cli.main import cli
from tracker.reports.board_map import BOX_HEIGHT, BOX_WIDTH, GAP, map_layout

TEMPLATE = template("my-board")


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def edited(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def line_with(text: str, fragment: str, start: int = 0) -> int:
    return text.count("\n", 0, text.index(fragment, start)) + 1


def refused_by_new(tmp_path: Path, text: str) -> str:
    """What `tracker new` says of the file (it must refuse it, creating no database)."""
    board = tmp_path / "board.toml"
    board.write_text(text, encoding="utf-8")
    db = tmp_path / "c.db"
    out = run("--db", str(db), "new", "c", "--scenario", str(board), code=2)
    assert not db.exists()
    assert len(out.strip().splitlines()) == 1 and "Traceback" not in out
    return out


# ----- `tracker new`: the check's line and key path -----


def test_new_names_the_line_and_key_of_a_key_given_twice(tmp_path: Path) -> None:
    text = edited(TEMPLATE, 'code = "DE"\n', 'code = "DE"\ncode = "DX"\n')
    out = refused_by_new(tmp_path, text)
    second = line_with(text, 'code = "DX"')
    assert out.startswith(
        f"Error: {tmp_path / 'board.toml'}:{second}: nations.Germany.code: not valid TOML "
        f"(Cannot overwrite a value: also at line {second - 1})"
    ), out


@pytest.mark.parametrize("text", ["", "# our board, to do\n"], ids=["empty", "comments"])
def test_new_says_an_empty_file_is_empty_at_line_1(tmp_path: Path, text: str) -> None:
    out = refused_by_new(tmp_path, text)
    assert out.startswith(f"Error: {tmp_path / 'board.toml'}:1: no scenario in the file: it is empty"), out


def test_new_names_the_line_of_a_name_holding_a_tab(tmp_path: Path) -> None:
    # The key path is shown escaped (`Western\tApproaches`): the line is found all the same.
    text = edited(
        TEMPLATE, 'ntr = { "North Sea" = 2, "Western Approaches"', 'ntr = { "North Sea" = 2, "Western\\tApproaches"'
    )
    out = refused_by_new(tmp_path, text)
    line = line_with(text, "Western\\tApproaches")
    assert out.startswith(f"Error: {tmp_path / 'board.toml'}:{line}: nations.Britain.ntr.Western\\tApproaches: "), out


# ----- [units] for [[units]] -----


def test_a_first_group_written_units_is_the_line_shown(tmp_path: Path) -> None:
    first = TEMPLATE.index("\n[[units]]\n")
    text = TEMPLATE[:first] + "\n[units]\n" + TEMPLATE[first + len("\n[[units]]\n") :]
    board = tmp_path / "board.toml"
    board.write_text(text)
    (error,) = json.loads(run("scenario", "check", str(board), "--json", code=1))["errors"]
    assert error["line"] == line_with(text, "\n[units]\n") + 1 and error["key"] == "units"
    assert error["message"].endswith("each group of starting forces is a [[units]] table, with double brackets)")


def test_a_lone_units_table_is_counted_as_one_group(tmp_path: Path) -> None:
    first = TEMPLATE.index("\n[[units]]\n")
    text = TEMPLATE[:first] + '\n[units]\nnation = "Germany"\ntype = "submarine"\nat = "Heligoland Bight"\n'
    board = tmp_path / "board.toml"
    board.write_text(text)
    out = run("scenario", "check", str(board), code=1)
    assert "units: expected a list of tables ([[units]])" in out
    assert out.endswith("(4 sea zones, 3 land territories, 2 nations, 1 unit group)\n"), out


# ----- a unit type typed as the map draws it -----


@pytest.mark.parametrize(("typed", "meant", "abbr"), [("CA", "cruiser", "CA"), ("dd", "destroyer", "DD")])
def test_a_unit_type_typed_as_its_abbreviation_is_named(tmp_path: Path, typed: str, meant: str, abbr: str) -> None:
    text = edited(TEMPLATE, 'type = "cruiser"', f'type = "{typed}"')
    board = tmp_path / "board.toml"
    board.write_text(text)
    out = run("scenario", "check", str(board), code=1)
    assert (
        f"units[5].type: reference to unknown unit {typed!r} (did you mean {meant!r}? {abbr} is its abbreviation" in out
    )


def test_an_empty_zone_name_is_not_taken_for_an_abbreviation(tmp_path: Path) -> None:
    board = tmp_path / "board.toml"
    board.write_text(edited(TEMPLATE, 'at = "English Channel"', 'at = ""'))
    assert "units[5].at: unknown zone ''\n" in run("scenario", "check", str(board), code=1)


# ----- a large map without coordinates -----


def chain_board(zones: int) -> str:
    """A board of `zones` sea zones in a chain with seeded links back, none placed."""
    rng = random.Random(1)
    rows = [
        '[scenario]\nname = "big"\nturn_order = ["Germany", "Britain"]\n',
        '[sides]\n"A" = ["Germany"]\n"B" = ["Britain"]\n',
        '[nations.Germany]\ncode = "DE"\nresources = 10\n',
        '[nations.Britain]\ncode = "GB"\nresources = 10\n',
    ]
    for i in range(1, zones + 1):
        near = [f'"Sea {i - 1}"'] if i > 1 else []
        if i > 30:
            near.append(f'"Sea {rng.randrange(i - 30, i - 1)}"')
        rows.append(f'[map.sea."Sea {i}"]\nadjacent = [{", ".join(near)}]\n')
    rows.append('[[units]]\nnation = "Germany"\ntype = "submarine"\nat = "Sea 1"\n')
    rows.append(f'[[units]]\nnation = "Britain"\ntype = "destroyer"\nat = "Sea {zones}"\n')
    return "\n".join(rows)


def test_a_large_map_laid_out_keeps_every_box_apart() -> None:
    # A force-directed layout piles zones up; left to the drawing to push apart pair by pair,
    # a map of 300 kept dozens of boxes on top of each other (and one of 1,000 took half a minute).
    result = check_scenario(chain_board(300), "big.toml", None)
    assert result.scenario is not None and not result.errors
    layout = map_layout(result.scenario)
    boxes = list(layout.positions.values())
    for i, (x1, y1) in enumerate(boxes):
        for x2, y2 in boxes[i + 1 :]:
            # A gap between them (to a rounding), as the drawing keeps its boxes.
            apart = abs(x1 - x2) >= BOX_WIDTH + GAP - 1 or abs(y1 - y2) >= BOX_HEIGHT + GAP - 1
            assert apart, "two zone boxes overlap, or touch"
