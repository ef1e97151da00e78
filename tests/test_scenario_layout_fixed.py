"""`tracker scenario map FILE --write-coordinates` on a file with x and y typed for a few zones:
those zones keep them, to the digit and as typed, and the others are laid out around them,
spread as a computed layout is, apart, the same every time; `--force` lays out every zone afresh."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.errors import InputError
from domain.ruleset import load_ruleset
from domain.scenario import GameMap, read_scenario, scenario_from_dict, scenario_text
from domain.scenario_layout import LAYOUT_ASPECT, LAYOUT_WIDTH, MAX_LAYOUT_ZONES, SPRING_LAYOUT_MOST, computed_positions
from tracker.cli.main import cli
from tracker.reports.board_map import map_layout

GREAT_WAR = scenario_text("great-war-1914")[0]
# Gibraltar at the left, as its author wants it, with a comment that must stay.
TYPED = {
    ("land", "Gibraltar"): (40, 420, "  # the Rock, at the left"),
    ("sea", "Northern North Sea"): (330, 60, ""),
    ("sea", "Strait of Otranto"): (560, 470, ""),
}


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def bare(text: str) -> str:
    """The scenario without any zone's x and y."""
    return re.sub(r"^[xy] = -?\d+\n", "", text, flags=re.MULTILINE)


def typed_board(text: str) -> str:
    """`text` without coordinates, but for those TYPED under their headers."""
    text = bare(text)
    for (kind, zone), (x, y, comment) in TYPED.items():
        header = re.search(rf'^\[map\.{kind}\."{zone}"\][^\n]*\n', text, flags=re.MULTILINE)
        assert header is not None, zone
        text = text[: header.end()] + f"x = {x}{comment}\ny = {y}\n" + text[header.end() :]
    return text


def zones_of(path: Path) -> dict[tuple[str, str], dict[str, object]]:
    tables = tomllib.loads(path.read_text())["map"]
    return {(kind, zone): table for kind in ("sea", "land") for zone, table in tables[kind].items()}


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy of great-war-1914 with three zones typed, after --write-coordinates, and what it said."""
    path = tmp_path_factory.mktemp("typed") / "board.toml"
    path.write_text(typed_board(GREAT_WAR))
    out = run("scenario", "map", str(path), "--write-coordinates")
    return path, out


def test_typed_zones_keep_their_coordinates_as_typed(laid_out: tuple[Path, str]) -> None:
    path, out = laid_out
    assert out == f"Wrote x and y for 145 zones into {path} (kept the 3 zones typed by hand).\n"
    zones = zones_of(path)
    for key, (x, y, _) in TYPED.items():
        assert (zones[key]["x"], zones[key]["y"]) == (x, y), key
    # Their lines as typed, the comment too: only the other zones' are written.
    assert '[map.land."Gibraltar"]  # the Rock and its dockyard\nx = 40  # the Rock, at the left\ny = 420\n' in (
        path.read_text()
    )


def test_every_zone_gets_coordinates_spread_about_as_a_computed_layout_is(laid_out: tuple[Path, str]) -> None:
    # Not within the drawing area from 0, 0 any more: kept there, the map was squeezed against
    # its edge around a typed zone (the drawing scales any coordinates to its page).
    path, _ = laid_out
    zones = zones_of(path)
    assert len(zones) == 148
    for key, table in zones.items():
        assert isinstance(table["x"], int) and isinstance(table["y"], int), key
    xs = [int(str(t["x"])) for t in zones.values()]
    ys = [int(str(t["y"])) for t in zones.values()]
    assert LAYOUT_WIDTH / 2 <= max(xs) - min(xs) <= 2 * LAYOUT_WIDTH
    assert LAYOUT_WIDTH / LAYOUT_ASPECT / 2 <= max(ys) - min(ys) <= 2 * LAYOUT_WIDTH
    assert "0 errors" in run("scenario", "check", str(path))


def test_the_drawing_needs_to_push_no_box_apart(laid_out: tuple[Path, str]) -> None:
    # Boxes that overlap are pushed apart by the drawing, typed zones too: where none does, the
    # drawing is the file's coordinates scaled, every zone where the scale puts it.
    path, _ = laid_out
    data, source = read_scenario(str(path))
    scenario = scenario_from_dict(data, source, load_ruleset("twtea-3e")[0])
    drawn = map_layout(scenario).positions
    given = scenario.game_map.positions
    a, b = "Gibraltar", "Strait of Otranto"
    scale = (drawn[b][0] - drawn[a][0]) / (given[b][0] - given[a][0])
    for zone, (x, y) in given.items():
        expected = (drawn[a][0] + (x - given[a][0]) * scale, drawn[a][1] + (y - given[a][1]) * scale)
        assert drawn[zone] == pytest.approx(expected, abs=1.0), zone


def test_the_layout_around_typed_zones_is_the_same_every_time(laid_out: tuple[Path, str], tmp_path: Path) -> None:
    path, _ = laid_out
    again = tmp_path / "again.toml"
    again.write_text(typed_board(GREAT_WAR))
    run("scenario", "map", str(again), "--write-coordinates")
    assert again.read_text() == path.read_text()


def test_a_board_whose_every_zone_has_coordinates_is_refused_without_force(laid_out: tuple[Path, str]) -> None:
    path, _ = laid_out
    text = path.read_text()
    out = run("scenario", "map", str(path), "--write-coordinates", code=2)
    assert out == f"Error: {path}: already has coordinates (148 zones); --force replaces them with a computed layout\n"
    assert path.read_text() == text


def test_force_lays_out_every_zone_afresh(tmp_path: Path) -> None:
    # The typed zones too: the layout of the board as if none had been typed.
    typed, untyped = tmp_path / "typed.toml", tmp_path / "untyped.toml"
    typed.write_text(typed_board(GREAT_WAR))
    untyped.write_text(bare(GREAT_WAR))
    out = run("scenario", "map", str(typed), "--write-coordinates", "--force")
    assert out == f"Wrote x and y for 148 zones into {typed}.\n"
    run("scenario", "map", str(untyped), "--write-coordinates")
    coordinates = {key: (t["x"], t["y"]) for key, t in zones_of(typed).items()}
    assert coordinates == {key: (t["x"], t["y"]) for key, t in zones_of(untyped).items()}


def test_a_zone_with_x_but_no_y_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "board.toml"
    text = typed_board(GREAT_WAR).replace("x = 330\ny = 60\n", "x = 330\n")
    path.write_text(text)
    line = text.split("\n").index("x = 330") + 1
    out = run("scenario", "map", str(path), "--write-coordinates", code=2)
    assert out == (
        f"Error: {path}:{line - 1}: map.sea.Northern North Sea.y: missing: a map position needs both x and y "
        "(leave both out to have them computed; --force computes every zone's)\n"
    )
    assert path.read_text() == text


def test_a_typed_coordinate_that_is_no_whole_number_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "board.toml"
    text = typed_board(GREAT_WAR).replace("x = 330\n", "x = 33.5\n")
    path.write_text(text)
    line = text.split("\n").index("x = 33.5") + 1
    out = run("scenario", "map", str(path), "--write-coordinates", code=2)
    assert out == (
        f"Error: {path}:{line}: map.sea.Northern North Sea.x: 33.5 is not a whole number from -100000 to 100000 "
        "(--force replaces it with a computed one)\n"
    )
    assert path.read_text() == text


def test_typed_zones_are_kept_by_the_layout_itself() -> None:
    chain = [f"Zone {i}" for i in range(12)]
    adjacency = {
        z: frozenset(n for n in (chain[i - 1] if i else None, chain[i + 1] if i < 11 else None) if n)
        for i, z in enumerate(chain)
    }
    game_map = GameMap(sea=frozenset(chain), land={}, adjacency=adjacency)
    typed = {"Zone 0": (0, 300), "Zone 11": (1000, 300)}
    positions = computed_positions(game_map, "chain.toml", typed)
    assert set(positions) == set(chain)
    assert positions["Zone 0"] == (0, 300) and positions["Zone 11"] == (1000, 300)
    assert len(set(positions.values())) == 12
    assert computed_positions(game_map, "chain.toml", typed) == positions


def test_a_map_of_more_than_499_zones_is_laid_out_around_a_typed_zone_as_without_one() -> None:
    # The layout around typed zones is the free one fitted to them: it lays out what the free
    # one does (ForceAtlas2 from 500 zones on), where it was refused from 500.
    zones = [f"Zone {i}" for i in range(SPRING_LAYOUT_MOST + 1)]
    near = {z: frozenset(zones[max(i - 1, 0) : i + 2]) - {z} for i, z in enumerate(zones)}
    game_map = GameMap(sea=frozenset(zones), land={}, adjacency=near)
    positions = computed_positions(game_map, "chain.toml", {"Zone 0": (0, 0)})
    assert positions["Zone 0"] == (0, 0) and len(set(positions.values())) == len(zones)


def test_a_map_too_large_to_lay_out_around_typed_zones_is_refused() -> None:
    zones = [f"Zone {i}" for i in range(MAX_LAYOUT_ZONES + 1)]
    game_map = GameMap(sea=frozenset(zones), land={}, adjacency={z: frozenset() for z in zones})
    with pytest.raises(InputError, match=f"^chain.toml: {MAX_LAYOUT_ZONES + 1} zones without coordinates"):
        computed_positions(game_map, "chain.toml", {"Zone 0": (0, 0)})


@pytest.mark.parametrize(
    "typed",
    [
        {"North Sea": (0, 0), "Western Approaches": (90_000, 40_000)},
        {"North Sea": (-100_000, -100_000), "Western Approaches": (100_000, 100_000)},
    ],
)
def test_zones_laid_out_around_typed_ones_far_apart_stay_within_the_coordinates_a_file_may_give(
    tmp_path: Path, typed: dict[str, tuple[int, int]]
) -> None:
    """Typed zones far apart scaled the layout up with them: England got y = -132494, which the
    check then refused (a scenario's coordinates are within +-100000), so the file written by the
    tool was rejected by the next step of the loop."""
    path = tmp_path / "my-board.toml"
    run("scenario", "new", "my-board", "-o", str(path))
    text = path.read_text()
    for zone, (x, y) in typed.items():
        header = f'[map.sea."{zone}"]\n'
        assert header in text, zone
        text = text.replace(header, f"{header}x = {x}\ny = {y}\n")
    path.write_text(text)
    run("scenario", "map", str(path), "--write-coordinates", "-o", str(tmp_path / "map.svg"))
    tables = tomllib.loads(path.read_text())["map"]
    laid = {zone: (t["x"], t["y"]) for kind in ("sea", "land") for zone, t in tables[kind].items()}
    assert all(abs(v) <= 100_000 for at in laid.values() for v in at), laid
    assert all(laid[zone] == at for zone, at in typed.items())
    assert ": 0 errors, 0 warnings" in run("scenario", "check", str(path))
