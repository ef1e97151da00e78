"""A group typing its own board: `scenario check` tells every warning a broken border leaves
true, `scenario map` draws a board with coordinates for some zones only, and a layout around a
few typed zones is as tidy as one around none."""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.ruleset import load_ruleset
from domain.scenario import GameMap, scenario_from_dict, scenario_text
from domain.scenario_check import check_scenario
from domain.scenario_layout import computed_positions
from tests.map_svg import drawn
from tracker.cli.main import cli

# A small Baltic: Berlin a port inland and the White Sea joined to nothing (both true whatever
# else is wrong), Riga joined to the map only by Eastern Baltic's list.
BALTIC = """\
[scenario]
name = "baltic"
title = "Baltic"
turn_order = ["Germany", "Russia"]

[sides]
"Central Powers" = ["Germany"]
"Entente" = ["Russia"]

[nations.Germany]
code = "DE"
resources = 10

[nations.Russia]
code = "RU"
resources = 10

[map.sea."Kattegat"]
adjacent = ["Western Baltic"]

[map.sea."Western Baltic"]
adjacent = ["Eastern Baltic", "Kiel"]

[map.sea."Eastern Baltic"]
adjacent = ["Gulf of Finland", "Riga"]

[map.sea."Gulf of Finland"]
adjacent = ["Petrograd"]

[map.sea."White Sea"]

[map.land."Kiel"]
owner = "Germany"
port = true

[map.land."Riga"]
owner = "Russia"
port = true

[map.land."Petrograd"]
owner = "Russia"
port = true

[map.land."Berlin"]
owner = "Germany"
port = true
adjacent = ["Kiel"]

[[units]]
nation = "Germany"
type = "destroyer"
at = "Western Baltic"

[[units]]
nation = "Russia"
type = "destroyer"
at = "Gulf of Finland"
"""

BERLIN_INLAND = ("warning", "map.land.Berlin.port")
WHITE_SEA_CUT_OFF = ("warning", "map.sea.White Sea")


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def findings(text: str) -> list[tuple[str, str]]:
    return [(f.level, f.key) for f in check_scenario(text, "baltic.toml").findings]


def test_the_baltic_has_its_two_warnings_and_no_error() -> None:
    assert findings(BALTIC) == [WHITE_SEA_CUT_OFF, BERLIN_INLAND]


@pytest.mark.parametrize(
    ("slip", "error"),
    [
        ('adjacent = ["Gulf of Finland", "Rigaa"]', "map.sea.Eastern Baltic.adjacent"),
        ('adjacant = ["Gulf of Finland", "Riga"]', "map.sea.Eastern Baltic.adjacant"),
        ('adjacent = ["Gulf of Finland", "Riga", 7]', "map.sea.Eastern Baltic.adjacent"),
    ],
)
def test_a_misspelt_neighbour_hides_no_warning_about_other_zones(slip: str, error: str) -> None:
    # Riga is joined to nothing over the borders read: whether it is cut off, or a port inland,
    # waits on the error (the neighbour meant may be it); Berlin and the White Sea do not.
    text = BALTIC.replace('adjacent = ["Gulf of Finland", "Riga"]', slip)
    assert findings(text) == [("error", error), WHITE_SEA_CUT_OFF, BERLIN_INLAND]


def test_a_neighbour_misspelt_in_a_cut_off_part_holds_back_that_part_only() -> None:
    text = BALTIC.replace('[map.sea."White Sea"]\n', '[map.sea."White Sea"]\nadjacent = ["Barents Sae"]\n')
    text += '\n[map.sea."Barents Sea"]\n\n[map.sea."Arctic"]\n'
    assert findings(text) == [
        ("error", "map.sea.White Sea.adjacent"),
        BERLIN_INLAND,
        ("warning", "map.sea.Arctic"),
    ]


def test_check_with_a_misspelt_neighbour_prints_the_other_zones_warnings(tmp_path: Path) -> None:
    path = tmp_path / "baltic.toml"
    path.write_text(BALTIC.replace('"Gulf of Finland", "Riga"]', '"Gulf of Finland", "Rigaa"]'))
    out = run("scenario", "check", str(path), code=1)
    assert "unknown zone 'Rigaa' in adjacency list (did you mean 'Riga'?)" in out
    assert "map.land.Berlin.port: a port with no sea zone beside it (PU2)" in out
    assert "map.sea.White Sea: nobody can reach it from the rest of the map" in out
    assert "Riga:" not in out and "Riga.port" not in out
    assert out.splitlines()[-1].startswith(f"{path}: 1 error, 2 warnings")


# ----- a map with coordinates for some zones -----


def typed(text: str, zones: dict[str, tuple[int, int]]) -> str:
    for zone, (x, y) in zones.items():
        header = next(h for h in (f'[map.sea."{zone}"]\n', f'[map.land."{zone}"]\n') if h in text)
        text = text.replace(header, f"{header}x = {x}\ny = {y}\n")
    return text


def test_map_of_a_board_with_some_coordinates_is_drawn_around_them(tmp_path: Path) -> None:
    path = tmp_path / "baltic.toml"
    text = typed(BALTIC, {"Kattegat": (100, 100), "Riga": (900, 500)})
    path.write_text(text)
    picture = tmp_path / "map.svg"
    result = CliRunner().invoke(cli, ["scenario", "map", str(path), "-o", str(picture)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"Wrote {picture}: 9 zones, 2 from the file, the other 7 laid out around them "
        "(--write-coordinates writes those into the file).\n"
    )
    # The check's error, as a warning: `tracker new` still wants every zone's.
    line = text.split("\n").index('[map.sea."Western Baltic"]') + 1
    assert result.stderr == (
        f"{path}:{line}: warning: map.sea.Western Baltic: no x and y: once one zone has a map position, "
        "every zone needs one (2 of 9 have one): given for Kattegat, Riga; give every zone x and y, or none, "
        "or let `tracker scenario map FILE --write-coordinates` lay out the rest\n"
    )
    assert len(drawn(picture.read_text())) == 9
    assert path.read_text() == text
    # The preview is the map --write-coordinates then writes, the typed zones kept as typed.
    again = tmp_path / "again.svg"
    out = run("scenario", "map", str(path), "--write-coordinates", "-o", str(again))
    assert out.startswith(f"Wrote x and y for 7 zones into {path} (kept the 2 zones typed by hand).\n")
    assert again.read_text() == picture.read_text()
    assert "0 errors" in run("scenario", "check", str(path))


def test_map_of_a_board_with_some_coordinates_and_another_error_is_refused_at_that_one(tmp_path: Path) -> None:
    path = tmp_path / "baltic.toml"
    path.write_text(typed(BALTIC, {"Kattegat": (100, 100)}).replace('"Gulf of Finland", "Riga"]', '"Rigaa"]'))
    out = run("scenario", "map", str(path), "-o", str(tmp_path / "m.svg"), code=2)
    assert "map.sea.Eastern Baltic.adjacent: unknown zone 'Rigaa'" in out and "no x and y" not in out
    assert "(and" not in out


# ----- a layout around a typed zone is as tidy as one around none -----


def crossings(positions: dict[str, tuple[int, int]], game_map: GameMap) -> int:
    """Pairs of borders whose lines cross, drawn straight from zone to zone."""

    def side(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int]) -> bool:
        return (c[1] - a[1]) * (b[0] - a[0]) > (b[1] - a[1]) * (c[0] - a[0])

    borders = [(a, b) for a, near in game_map.adjacency.items() for b in near if a < b]
    count = 0
    for (a, b), (c, d) in itertools.combinations(borders, 2):
        if len({a, b, c, d}) < 4:
            continue
        p, q, r, s = (positions[z] for z in (a, b, c, d))
        count += side(p, r, s) != side(q, r, s) and side(p, q, r) != side(p, q, s)
    return count


def spread(positions: dict[str, tuple[int, int]], game_map: GameMap) -> float:
    """The mean length of a border, in widths of the map."""
    xs = [x for x, _ in positions.values()]
    borders = [math.dist(positions[a], positions[b]) for a, near in game_map.adjacency.items() for b in near]
    return sum(borders) / len(borders) / (max(xs) - min(xs))


@pytest.fixture(scope="module")
def north_sea() -> GameMap:
    text = re.sub(r"^[xy] = -?\d+\n", "", scenario_text("north-sea-1914")[0], flags=re.MULTILINE)
    return scenario_from_dict(tomllib.loads(text), "ns.toml", load_ruleset("twtea-3e")[0]).game_map


@pytest.mark.parametrize("zone", ["England", "Bay of Biscay", "Irish Sea"])
@pytest.mark.parametrize("at", [(40, 40), (840, 170)])
def test_a_layout_around_one_typed_zone_is_as_tidy_as_one_around_none(
    north_sea: GameMap, zone: str, at: tuple[int, int]
) -> None:
    free = computed_positions(north_sea, "ns.toml")
    around = computed_positions(north_sea, "ns.toml", {zone: at})
    assert around[zone] == at
    # Pinned at a zone and started around it, the spring layout crossed 5 to 28 borders here,
    # its longest border across most of the map; the free layout crosses none.
    assert crossings(free, north_sea) == 0
    assert crossings(around, north_sea) <= 1
    assert spread(around, north_sea) <= spread(free, north_sea) * 1.2


def test_check_of_a_map_that_is_no_table_lists_its_errors(tmp_path: Path) -> None:
    # `map = 3` above the tables: the check of ports inland read it as a table (AttributeError).
    path = tmp_path / "baltic.toml"
    path.write_text("map = 3\n" + BALTIC.split("[map.sea.", 1)[0])
    out = run("scenario", "check", str(path), code=1)
    assert f"{path}:1: error: map: expected a table, got an integer\n" in out
