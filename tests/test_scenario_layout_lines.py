"""A computed map layout keeps the line between two adjacent zones clear of the other zones'
boxes where it can: a line drawn under a box reads as a border that does not exist. The
`tracker scenario new` template's own map drew England to English Channel under the North Sea."""

from __future__ import annotations

import dataclasses
import random
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.ruleset import load_ruleset
from domain.scenario import GameMap, Scenario, read_scenario, scenario_from_dict, scenario_text
from domain.scenario_layout import computed_positions
from tests.test_scenario_layout_fixed import TYPED, bare
from tracker.cli.main import cli
from tracker.reports.board_map import BOX_HEIGHT, BOX_WIDTH, GAP, map_layout


def scenario_of(text: str, source: str) -> Scenario:
    return scenario_from_dict(tomllib.loads(text), source, load_ruleset("twtea-3e")[0])


def under(a: tuple[float, float], b: tuple[float, float], box: tuple[float, float]) -> bool:
    """Whether the line from `a` to `b` passes under the drawn box centred on `box` (touching
    its edge is not under it): clipped to the box's columns and rows, something is left."""
    low, high = 0.0, 1.0
    for start, delta, centre, half in (
        (a[0], b[0] - a[0], box[0], BOX_WIDTH / 2),
        (a[1], b[1] - a[1], box[1], BOX_HEIGHT / 2),
    ):
        if delta == 0:
            if abs(start - centre) >= half:
                return False
            continue
        t1, t2 = sorted(((centre - half - start) / delta, (centre + half - start) / delta))
        low, high = max(low, t1), min(high, t2)
    return high - low > 1e-9


def lines_under_boxes(positions: dict[str, tuple[float, float]], game_map: GameMap) -> list[tuple[str, str, str]]:
    """Each line between adjacent zones drawn under a third zone's box: the two zones and it."""
    lines = sorted({tuple(sorted((a, b))) for a, near in game_map.adjacency.items() for b in near})
    return [
        (a, b, zone)
        for a, b in lines
        for zone, at in positions.items()
        if zone not in (a, b) and under(positions[a], positions[b], at)
    ]


def drawn_lines_under_boxes(scenario: Scenario) -> list[tuple[str, str, str]]:
    return lines_under_boxes(map_layout(scenario).positions, scenario.game_map)


def test_the_check_counts_a_line_under_a_box_and_not_one_beside_it() -> None:
    game_map = GameMap(
        sea=frozenset("ABC"), land={}, adjacency={"A": frozenset("B"), "B": frozenset("A"), "C": frozenset()}
    )
    assert lines_under_boxes({"A": (0, 0), "B": (600, 0), "C": (300, 40)}, game_map) == [("A", "B", "C")]
    assert lines_under_boxes({"A": (0, 0), "B": (600, 0), "C": (300, BOX_HEIGHT / 2 + 1)}, game_map) == []


def test_the_new_board_template_draws_no_line_under_another_zones_box(tmp_path: Path) -> None:
    path = tmp_path / "my-board.toml"
    result = CliRunner().invoke(cli, ["scenario", "new", "my-board", "-o", str(path)])
    assert result.exit_code == 0, result.output
    data, source = read_scenario(str(path))
    scenario = scenario_from_dict(data, source, load_ruleset("twtea-3e")[0])
    assert not scenario.game_map.positions, "the template gives no coordinates: they are computed"
    # England to English Channel was drawn under the North Sea.
    assert drawn_lines_under_boxes(scenario) == []


def test_north_sea_1914_laid_out_without_its_coordinates_draws_no_line_under_another_box() -> None:
    # One line was drawn under another zone's box before.
    assert drawn_lines_under_boxes(scenario_of(bare(scenario_text("north-sea-1914")[0]), "ns.toml")) == []


@pytest.mark.parametrize(
    ("typed", "most"),
    # 114 lines of 148 zones drawn under another's box, and 172 around three typed zones, before:
    # some are left where no move of a zone by two cells helps.
    [(False, 40), (True, 50)],
    ids=["none typed", "three typed"],
)
def test_the_world_map_laid_out_draws_few_lines_under_other_boxes(typed: bool, most: int) -> None:
    scenario = scenario_of(bare(scenario_text("great-war-1914")[0]), "gw.toml")
    at = {zone: (x, y) for (_, zone), (x, y, _) in TYPED.items()} if typed else {}
    positions = computed_positions(scenario.game_map, "gw.toml", at)
    assert all(positions[zone] == xy for zone, xy in at.items())
    # Drawn as `tracker scenario map` draws it with the coordinates written in.
    laid = dataclasses.replace(scenario.game_map, positions=positions)
    assert len(drawn_lines_under_boxes(dataclasses.replace(scenario, game_map=laid))) <= most


def planar_board(zones: int, seed: int) -> GameMap:
    """Zones at random points, each bordering its two to four nearest: a board of regions."""
    rng = random.Random(seed)
    at = [(rng.random() * 1.6, rng.random()) for _ in range(zones)]
    near: dict[int, set[int]] = {i: set() for i in range(zones)}
    for i, (x, y) in enumerate(at):
        nearest = sorted(range(zones), key=lambda j: (at[j][0] - x) ** 2 + (at[j][1] - y) ** 2)
        for j in nearest[1 : rng.randint(2, 4) + 1]:
            near[i].add(j)
            near[j].add(i)
    names = [f"Sea {i}" for i in range(zones)]
    return GameMap(
        sea=frozenset(names), land={}, adjacency={names[i]: frozenset(names[j] for j in near[i]) for i in near}
    )


def test_a_board_of_60_regions_is_laid_out_with_few_lines_under_boxes_apart_and_the_same_every_time() -> None:
    game_map = planar_board(60, 4)
    positions = computed_positions(game_map, "regions.toml")
    assert computed_positions(game_map, "regions.toml") == positions
    # Any scenario drawn with this map: the drawing takes nothing else from it.
    scenario = dataclasses.replace(scenario_of(scenario_text("north-sea-1914")[0], "ns.toml"), game_map=game_map)
    drawn = map_layout(scenario).positions
    # 85 before.
    assert len(lines_under_boxes(drawn, game_map)) <= 30
    boxes = list(drawn.values())
    for i, (x1, y1) in enumerate(boxes):
        for x2, y2 in boxes[i + 1 :]:
            assert abs(x1 - x2) >= BOX_WIDTH + GAP - 1 or abs(y1 - y2) >= BOX_HEIGHT + GAP - 1
