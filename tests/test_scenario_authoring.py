"""A newcomer entering a board of their own (the guide's "Enter your own board"): the slips the
check-map-fix loop meets on a board of some sixty zones, each said so that they can act on it,
and a computed map they can read."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.scenario import scenario_text
from tests.map_svg import drawn
from tracker.cli.main import cli
from tracker.reports.board_map import BOX_HEIGHT, BOX_WIDTH

NORTH_SEA = scenario_text("north-sea-1914")[0]


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def without_coordinates(text: str) -> str:
    return re.sub(r"^[xy] = -?\d+\n", "", text, flags=re.MULTILINE)


def with_coordinates_for(text: str, zones: dict[str, tuple[int, int]]) -> str:
    """`text` with x and y under the headers of `zones` only (as typed for a few zones)."""
    for zone, (x, y) in zones.items():
        header = f'[map.sea."{zone}"]\n'
        assert text.count(header) == 1, zone
        text = text.replace(header, f"{header}x = {x}\ny = {y}\n")
    return text


def grid_board(rows: int, cols: int) -> str:
    """A board of rows x cols sea zones, each bordering the next east and south, as a long
    coastline of sea zones is; without coordinates."""
    zones = []
    for r in range(rows):
        for c in range(cols):
            near = [f"Sea {r}-{c + 1}"] if c + 1 < cols else []
            near += [f"Sea {r + 1}-{c}"] if r + 1 < rows else []
            listed = ", ".join(f'"{n}"' for n in near + (["Home"] if (r, c) == (0, 0) else []))
            zones.append(f'[map.sea."Sea {r}-{c}"]\nadjacent = [{listed}]\n')
    return (
        '[scenario]\nname = "grid"\ntitle = "Grid"\nturn_order = ["A", "B"]\n\n'
        '[sides]\n"X" = ["A"]\n"Y" = ["B"]\n\n'
        '[nations.A]\ncode = "A"\nresources = 1\n\n[nations.B]\ncode = "B"\nresources = 1\n\n'
        + "\n".join(zones)
        + '\n[map.land."Home"]\nowner = "A"\n\n'
        '[[units]]\nnation = "A"\ntype = "destroyer"\nat = "Sea 0-0"\n\n'
        f'[[units]]\nnation = "B"\ntype = "destroyer"\nat = "Sea {rows - 1}-{cols - 1}"\n'
    )


# ----- the computed map of a board of many zones -----


def test_a_sixty_zone_board_without_coordinates_is_drawn_with_neighbours_side_by_side(tmp_path: Path) -> None:
    board = tmp_path / "grid.toml"
    board.write_text(grid_board(6, 10))
    picture = tmp_path / "map.svg"
    run("scenario", "map", str(board), "-o", str(picture))
    boxes = {zone: shown["box"] for zone, shown in drawn(picture.read_text()).items()}
    assert len(boxes) == 61
    for i, (a, (x1, y1)) in enumerate(sorted(boxes.items())):
        for b, (x2, y2) in sorted(boxes.items())[i + 1 :]:
            assert abs(x1 - x2) >= BOX_WIDTH or abs(y1 - y2) >= BOX_HEIGHT, (a, b)
    # Laid out for a 900-wide page, the boxes were pushed apart until neighbours stood across
    # the map, their lines crossing everywhere: a line to a neighbour spans about one box.
    links = [
        math.dist(boxes[f"Sea {r}-{c}"], boxes[near]) / BOX_WIDTH
        for r in range(6)
        for c in range(10)
        for near in ([f"Sea {r}-{c + 1}"] if c < 9 else []) + ([f"Sea {r + 1}-{c}"] if r < 5 else [])
    ]
    assert sum(links) / len(links) < 1.5


def test_a_board_with_its_own_coordinates_is_drawn_as_before() -> None:
    # The built-in boards are spread as their authors set them: nothing changes for them (the
    # height includes the legend's band below the zones: two rows on the small map, one here).
    out = run("scenario", "map", "north-sea-1914", "-o", "-")
    assert 'viewBox="0 0 1110.1 984.5"' in out
    out = run("scenario", "map", "great-war-1914", "-o", "-")
    assert 'viewBox="0 0 4258.0 2240.0"' in out


# ----- coordinates typed for a few zones -----


def test_check_says_which_zones_have_coordinates_and_how_to_get_the_rest(tmp_path: Path) -> None:
    board = tmp_path / "board.toml"
    board.write_text(with_coordinates_for(without_coordinates(NORTH_SEA), {"Skagerrak": (840, 170)}))
    out = run("scenario", "check", str(board), code=1)
    assert (
        "no x and y: once one zone has a map position, every zone needs one (1 of 17 have one): "
        "given for Skagerrak; give every zone x and y, or none, or let "
        "`tracker scenario map FILE --write-coordinates` lay out the rest"
    ) in out


def test_check_names_the_zones_still_without_coordinates_when_most_have_them(tmp_path: Path) -> None:
    board = tmp_path / "board.toml"
    board.write_text(NORTH_SEA.replace("x = 200\ny = 880\n", "", 1))
    out = run("scenario", "check", str(board), code=1)
    assert "(16 of 17 have one): missing for Bay of Biscay; give every zone x and y" in out


def test_write_coordinates_on_a_board_with_some_lays_out_the_rest_around_them(tmp_path: Path) -> None:
    board = tmp_path / "board.toml"
    text = with_coordinates_for(without_coordinates(NORTH_SEA), {"Skagerrak": (840, 170), "Irish Sea": (9, 9)})
    board.write_text(text)
    out = run("scenario", "map", str(board), "--write-coordinates")
    assert out == f"Wrote x and y for 15 zones into {board} (kept the 2 zones typed by hand).\n"
    sea = tomllib.loads(board.read_text())["map"]["sea"]
    assert (sea["Skagerrak"]["x"], sea["Skagerrak"]["y"], sea["Irish Sea"]["x"], sea["Irish Sea"]["y"]) == (
        840,
        170,
        9,
        9,
    )


def test_write_coordinates_force_computes_every_zone_of_a_board_with_some(tmp_path: Path) -> None:
    board = tmp_path / "board.toml"
    # Skagerrak with x but no y: a slip of its own, replaced all the same.
    text = with_coordinates_for(without_coordinates(NORTH_SEA), {"Skagerrak": (840, 170), "Irish Sea": (9, 9)})
    text = text.replace("x = 9\ny = 9\n", "x = 9\n")
    board.write_text(text)
    out = run("scenario", "map", str(board), "--write-coordinates", "--force", "-o", str(tmp_path / "m.svg"))
    assert "Wrote x and y for 17 zones" in out
    written = board.read_text()
    data = tomllib.loads(written)
    zones = {**data["map"]["sea"], **data["map"]["land"]}
    assert all(isinstance(z.get("x"), int) and isinstance(z.get("y"), int) for z in zones.values())
    # Replaced where they stood, not written twice.
    assert written.count("\nx = ") == 17 and written.count("\ny = ") == 17
    run("scenario", "check", str(board))
    # A second run writes the same layout.
    run("scenario", "map", str(board), "--write-coordinates", "--force")
    assert board.read_text() == written


# ----- TOML a newcomer writes -----


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            'ntr = { "Heligoland Bight" = 2,  # the bight\n  "Skagerrak" = 1 }',
            "a comment cannot go inside { ... }, written on one line: put the comment on the line above",
        ),
        (
            'ntr = { "Heligoland Bight" = 2,\n  "Skagerrak" = 1 }',
            "an inline table { ... } ends on the line it begins: close it with } on this line, "
            "or write it as a [table] of its own",
        ),
        (
            'ntr = { "Heligoland Bight" = 2, "Skagerrak" = 1, }',
            "no comma after the last entry of { ... }",
        ),
    ],
    ids=["comment", "two lines", "trailing comma"],
)
def test_an_inline_table_written_as_an_array_is_said_so(tmp_path: Path, line: str, said: str) -> None:
    board = tmp_path / "board.toml"
    text = NORTH_SEA.replace('ntr = { "Heligoland Bight" = 2, "Skagerrak" = 1 }', line, 1)
    assert text != NORTH_SEA
    board.write_text(text)
    out = run("scenario", "check", str(board), code=1)
    number = text[: text.index(line)].count("\n") + 1
    assert out.startswith(f"{board}:{number}: error: nations.Germany.ntr: not valid TOML (")
    assert said in out


@pytest.mark.parametrize(
    ("old", "new", "key", "meant"),
    [
        ('owner = "Britain"', 'owner = "Britain # the fortress"', "owner", "Britain"),
        ('at = "Heligoland Bight"', 'at = "Heligoland Bight  # U-boat base"', "at", "Heligoland Bight"),
        ('type = "submarine"', 'type = "submarine #U-9"', "type", "submarine"),
        ('nation = "Germany"', 'nation = "Germany# Hochseeflotte"', "nation", "Germany"),
        ('"Northern North Sea", ', '"Northern North Sea # the Grand Fleet", ', "adjacent", "Northern North Sea"),
    ],
)
def test_a_comment_inside_quotes_is_said_to_be_part_of_the_name(
    tmp_path: Path, old: str, new: str, key: str, meant: str
) -> None:
    board = tmp_path / "board.toml"
    board.write_text(NORTH_SEA.replace(old, new, 1))
    out = run("scenario", "check", str(board), code=1)
    finding = next(line for line in out.splitlines() if f".{key}: " in line)
    assert f"(did you mean {meant!r}? a '#' inside the quotes is part of the text, not a comment)" in finding


# ----- nations and sides -----


def test_a_nation_on_a_side_without_a_table_is_reported_at_its_side_with_the_table_meant(tmp_path: Path) -> None:
    board = tmp_path / "board.toml"
    text = NORTH_SEA.replace('"Entente" = ["Britain", "France"]', '"Entente" = ["Britian", "France"]', 1)
    board.write_text(text)
    out = run("scenario", "check", str(board), code=1)
    number = text[: text.index('"Entente" = ')].count("\n") + 1
    expected = (
        f"{board}:{number}: error: sides.Entente: nation 'Britian' has no [nations.Britian] table "
        "(did you mean 'Britain'?)"
    )
    assert expected in out.splitlines()
