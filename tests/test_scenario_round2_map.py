"""The map drawing pushes overlapping boxes apart in a pass over the boxes near each box (a grid
of cells), not over every pair: a board whose typed coordinates crowd is drawn fast, and a
board that drew before draws the same."""

from __future__ import annotations

import random

import pytest

from domain.scenario_layout import BOX_HEIGHT, BOX_WIDTH, GAP
from tracker.reports import board_map

NEED_X, NEED_Y = BOX_WIDTH + GAP, BOX_HEIGHT + GAP


def every_pair_compared(positions: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """The drawing's separation as it was, comparing every pair of boxes on each pass: what the
    grid's must give, to the last digit."""
    zones = list(positions)
    pos = {z: list(positions[z]) for z in zones}
    for _ in range(200):
        moved = False
        for i, a in enumerate(zones):
            for b in zones[i + 1 :]:
                dx, dy = pos[b][0] - pos[a][0], pos[b][1] - pos[a][1]
                over_x, over_y = NEED_X - abs(dx), NEED_Y - abs(dy)
                if over_x <= 0 or over_y <= 0:
                    continue
                moved = True
                if over_x / NEED_X < over_y / NEED_Y:
                    push, sign = over_x / 2 + 0.5, 1.0 if dx >= 0 else -1.0
                    pos[a][0] -= sign * push
                    pos[b][0] += sign * push
                else:
                    push, sign = over_y / 2 + 0.5, 1.0 if dy >= 0 else -1.0
                    pos[a][1] -= sign * push
                    pos[b][1] += sign * push
        if not moved:
            break
    return {z: (p[0], p[1]) for z, p in pos.items()}


def crowded(zones: int, seed: int, density: float) -> dict[str, tuple[float, float]]:
    """Zones typed at random over an area `density` times too small for their boxes."""
    rnd = random.Random(seed)
    width = (zones * NEED_X * NEED_Y / density * 1.6) ** 0.5
    return {f"Z{i}": (rnd.uniform(-width / 3, width), rnd.uniform(0, width / 1.6)) for i in range(zones)}


def clustered(zones: int, seed: int = 3) -> list[tuple[int, int]]:
    """Integer coordinates typed in clusters of 25 (each piling its boxes up) far apart."""
    rnd = random.Random(seed)
    spread = (zones // 25) ** 0.5
    centres = [(rnd.uniform(0, 3000 * spread), rnd.uniform(0, 2000 * spread)) for _ in range(max(1, zones // 25))]
    return [
        (int(cx + rnd.uniform(-150, 150)), int(cy + rnd.uniform(-80, 80)))
        for cx, cy in (centres[i % len(centres)] for i in range(zones))
    ]


def overlapping(
    positions: dict[str, tuple[float, float]], apart: tuple[float, float] = (NEED_X, NEED_Y)
) -> list[tuple[str, str]]:
    """The pairs of boxes closer than `apart` (with their gap, by default), found by sorting
    along x (a test of 1,000 zones)."""
    boxes = sorted(positions.items(), key=lambda item: item[1][0])
    found = []
    for i, (a, (ax, ay)) in enumerate(boxes):
        for b, (bx, by) in boxes[i + 1 :]:
            if bx - ax >= apart[0]:
                break
            if abs(by - ay) < apart[1]:
                found.append((a, b))
    return found


@pytest.mark.parametrize("density", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("seed", range(3))
def test_separating_boxes_by_grid_cells_gives_what_comparing_every_pair_gave(seed: int, density: float) -> None:
    positions = crowded(90, seed, density)
    assert board_map._separate(positions) == every_pair_compared(positions)


def test_boxes_typed_on_one_spot_are_separated_as_before() -> None:
    positions = {f"Z{i}": (100.0, 100.0) for i in range(30)}
    assert board_map._separate(positions) == every_pair_compared(positions)


def test_a_pass_compares_each_box_with_the_boxes_near_it_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2,000 boxes a box apart on a grid, a few crowded: compared pair by pair, 2 million pairs
    # a pass; near each other, a handful per box.
    positions = {f"Z{i}": (float(i % 50 * 250), float(i // 50 * 130)) for i in range(2000)}
    positions.update({f"Z{i}": (float(i % 50 * 250 + 30), float(i // 50 * 130 + 20)) for i in range(0, 2000, 97)})
    compared: list[int] = []
    near = board_map._Cells.near

    def counted(cells: board_map._Cells, i: int, after: int) -> list[int]:
        found = near(cells, i, after)
        compared.append(len(found))
        return found

    monkeypatch.setattr(board_map._Cells, "near", counted)
    separated = board_map._separate(positions)
    passes = sum(1 for _ in compared) / len(positions)
    assert not overlapping(separated)
    assert sum(compared) / passes < 10 * len(positions)


def test_a_crowded_map_of_a_thousand_zones_is_drawn_with_no_box_over_another() -> None:
    zones = tuple(f"Z{i}" for i in range(1000))
    layout = board_map._laid_out(zones, tuple(() for _ in zones), tuple(clustered(len(zones))), frozenset(zones))
    # The gap between boxes is kept to the tenth of a unit the drawing rounds positions to.
    assert not overlapping(layout.positions, (NEED_X - 0.2, NEED_Y - 0.2))
