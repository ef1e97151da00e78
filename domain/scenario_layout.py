"""Map coordinates for a scenario file that gives none, or some: a layout computed from the
adjacency by a graph library (around the zones whose x and y were typed by hand, which stay
where they are), and the coordinates written back into the file's text, under each zone's table
header, leaving its comments and order alone."""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from typing import Any

from domain.errors import InputError
from domain.scenario import MAX_COORDINATE, GameMap
from domain.scenario_lines import UNTANGLE_MOST, Tangle, untangled
from domain.toml_lines import key_lines, value_span

# A fixed seed: the same map always gets the same layout.
LAYOUT_SEED = 1914
# The width the coordinates span. Any scale draws the same (the drawing rescales to its own
# canvas); this one gives round numbers that are easy to nudge by hand.
LAYOUT_WIDTH = 1000
# Map boxes are about twice as wide as tall: a layout spread wider than high keeps them apart.
LAYOUT_ASPECT = 1.6
# networkx's spring layout turns to scipy's sparse matrices from this many zones on, and scipy
# is no dependency of the tracker: larger maps get ForceAtlas2, as force-directed, numpy only.
SPRING_LAYOUT_MOST = 499
# Both layouts compare every pair of zones at each step: beyond this, minutes and gigabytes.
MAX_LAYOUT_ZONES = 2000
# The map drawing's measures (tracker/reports/board_map.py draws with these): a zone's box and
# the gap around it; the width a small map is spread over before boxes are pushed apart; a map
# whose coordinates span more than FULL_SCALE drawn at its own scale; the room a map needs per
# zone, in boxes (each with its gap): spread thinner, the boxes are pushed apart so far that
# neighbours end up across the map. Zones laid out around typed ones are kept a box apart, so
# that the drawing need not push boxes (typed ones too) apart.
BOX_WIDTH = 184
BOX_HEIGHT = 88
GAP = 14
DRAWN_BOX = (float(BOX_WIDTH + GAP), float(BOX_HEIGHT + GAP))
DRAWN_PAGE = 900.0
FULL_SCALE = 1500.0
ROOM_PER_ZONE = 2.0
# The least a layout is shrunk to fit typed zones (`_fitted`), of the size it is laid out at.
MIN_FIT_SCALE = 0.25


def computed_positions(
    game_map: GameMap, source: str = "the map", typed: dict[str, tuple[int, int]] | None = None
) -> dict[str, tuple[int, int]]:
    """A force-directed layout of the zones (networkx's spring layout, or ForceAtlas2 on a map
    of more than SPRING_LAYOUT_MOST zones; seeded), as integer x/y with x to the right and y
    downwards, spanning LAYOUT_WIDTH. The `typed` zones keep their x and y and the others are
    laid out around them (`around_typed`). A map too large to lay out is refused, naming `source`."""
    if typed:
        return around_typed(game_map, typed, source)
    return _apart(_spread(game_map, source), LAYOUT_WIDTH / LAYOUT_ASPECT, game_map.adjacency)


def _spread(game_map: GameMap, source: str) -> dict[str, tuple[int, int]]:
    """The force-directed layout of `computed_positions` spanning LAYOUT_WIDTH, boxes apart or
    not."""
    zones = len(game_map.adjacency)
    if zones > MAX_LAYOUT_ZONES:
        raise InputError(
            f"{source}: {zones} zones without coordinates, and a layout is computed for at most "
            f"{MAX_LAYOUT_ZONES}: give every zone x and y"
        )
    # Imported here: only drawing a map without coordinates needs the graph library.
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(game_map.adjacency)
    graph.add_edges_from((a, b) for a, near in game_map.adjacency.items() for b in sorted(near) if a < b)
    if len(graph) == 1:
        return {zone: (0, 0) for zone in graph}
    if len(graph) <= SPRING_LAYOUT_MOST:
        raw = nx.spring_layout(graph, seed=LAYOUT_SEED, iterations=300)
    elif hasattr(nx, "forceatlas2_layout"):
        raw = nx.forceatlas2_layout(graph, seed=LAYOUT_SEED, max_iter=100)
    else:
        raise InputError(
            f"{source}: {zones} zones without coordinates: laying out more than {SPRING_LAYOUT_MOST} "
            "needs networkx 3.4 or later; give every zone x and y"
        )
    xs = [float(p[0]) for p in raw.values()]
    ys = [float(p[1]) for p in raw.values()]
    span_x = max(max(xs) - min(xs), 1e-9)
    span_y = max(max(ys) - min(ys), 1e-9)
    height = LAYOUT_WIDTH / LAYOUT_ASPECT
    laid = {
        zone: (
            round((float(p[0]) - min(xs)) / span_x * LAYOUT_WIDTH),
            # The layout's y grows upwards; the map's grows downwards.
            round((max(ys) - float(p[1])) / span_y * height),
        )
        for zone, p in raw.items()
    }
    return laid


def _apart(
    laid: dict[str, tuple[int, int]], height: float, adjacency: Mapping[str, frozenset[str]]
) -> dict[str, tuple[int, int]]:
    """A layout whose boxes would overlap where the map draws them, or with a line under another
    zone's box, moved onto the grid of `_on_grid` and about it (`untangled`); any other as it
    is. A force-directed layout of a few hundred zones piles them up in places, and the drawing,
    left to push them apart pair by pair, took half a minute on a map of a thousand and still
    left boxes on top of each other."""
    import numpy as np

    box = _box(LAYOUT_WIDTH, height, len(laid))
    at = np.array(list(laid.values()), dtype=float)
    # Row by row, not every pair at once: a map of 2,000 zones would need 4 million at a time.
    overlap = any(bool((np.abs(at[i + 1 :] - at[i]) < box).all(axis=1).any()) for i in range(len(at) - 1))
    if not overlap and (len(laid) > UNTANGLE_MOST or not Tangle(laid, *_shown(box), adjacency).under.any()):
        return laid
    placed = {z: (float(x), float(y)) for z, (x, y) in laid.items()}
    # Cells a whole unit wider than a box: rounded to whole numbers, no two boxes overlap still.
    cell = (math.ceil(box[0]) + 1.0, math.ceil(box[1]) + 1.0)
    cells = _grid_cells({}, (0.0, 0.0, float(LAYOUT_WIDTH), height), cell, len(laid))
    gridded = untangled(_on_grid(placed, cells), {}, cells, *_shown(box), adjacency)
    moved = {z: (round(gridded[z][0]), round(gridded[z][1])) for z in laid}
    # Boxes apart as laid out, but a line under one: the grid only if it has fewer such lines.
    lines_of = [Tangle(layout, *_shown(box), adjacency).under.sum() for layout in (moved, laid)]
    if not overlap and lines_of[0] >= lines_of[1]:
        return laid
    return moved


def around_typed(
    game_map: GameMap, typed: dict[str, tuple[int, int]], source: str = "the map"
) -> dict[str, tuple[int, int]]:
    """Every zone's x and y: the `typed` zones' as they are, the others laid out around them:
    the map laid out as if none were typed (`computed_positions`' layout), turned, scaled and
    moved as a whole to fit the typed zones (`_fitted`), each zone then drawn along with the
    typed ones near it by what is left to fit (`_drawn_along`), on a grid of cells the
    drawing's boxes fit in (`_on_grid`), then moved about it to keep lines from under other
    zones' boxes (`untangled`). As tidy as a layout with none typed: a spring layout
    pinned at a typed zone, started around it, stayed in a tangle, and coordinates kept within
    the drawing area squeezed the map against its edge (the drawing scales any coordinates)."""
    zones = list(game_map.adjacency)
    free = [z for z in zones if z not in typed]
    if not free:
        return {z: typed[z] for z in zones}
    shape = _fitted({z: (float(x), float(y)) for z, (x, y) in _spread(game_map, source).items()}, typed)
    # Typed zones far apart scale the map up with them, and the zones beyond them can land past
    # the coordinates a scenario may give: they are drawn in at the edge, which the grid spreads.
    placed = {z: (_within(x), _within(y)) for z, (x, y) in _drawn_along(shape, typed, free, game_map).items()}
    x0, y0, width, height = _frame(typed, placed)
    box = _box(width, height, len(zones))
    cells = _grid_cells(typed, (x0, y0, width, height), box, len(placed))
    placed = untangled(_on_grid(placed, cells), typed, cells, *_shown(box), game_map.adjacency)
    laid = {z: typed[z] if z in typed else (round(placed[z][0]), round(placed[z][1])) for z in zones}
    beyond = next((z for z, at in laid.items() if max(map(abs, at)) > MAX_COORDINATE), None)
    if beyond is not None:
        raise InputError(
            f"{source}: no room to lay out {beyond} within {-MAX_COORDINATE} to {MAX_COORDINATE} around "
            "the zones typed: type their x and y closer together, or --force a layout of every zone"
        )
    return laid


def _within(value: float) -> float:
    """`value` brought within the coordinates a scenario file may give (MAX_COORDINATE)."""
    return min(max(value, -MAX_COORDINATE), MAX_COORDINATE)


def _frame(
    typed: dict[str, tuple[int, int]], placed: dict[str, tuple[float, float]]
) -> tuple[float, float, float, float]:
    """The drawing area the zones are laid out in, as left, top, width and height: the one
    every zone, typed or placed, spans."""
    xs = [x for x, _ in typed.values()] + [x for x, _ in placed.values()]
    ys = [y for _, y in typed.values()] + [y for _, y in placed.values()]
    return float(min(xs)), float(min(ys)), float(max(max(xs) - min(xs), 1)), float(max(max(ys) - min(ys), 1))


def _fitted(shape: dict[str, tuple[float, float]], typed: dict[str, tuple[int, int]]) -> dict[str, tuple[float, float]]:
    """`shape` turned (or turned over), scaled and moved as a whole to put the typed zones as
    near where they were typed as it can (least squares); for one typed zone, moved alone,
    turned over whichever way puts it nearest."""
    import numpy as np

    names = list(shape)
    at = np.array([shape[z] for z in names])
    source = np.array([shape[z] for z in typed])
    target = np.array([typed[z] for z in typed], dtype=float)
    if len(typed) == 1:
        middle = at.mean(axis=0)
        flips = [np.array(f) for f in ((1.0, 1.0), (-1.0, 1.0), (1.0, -1.0), (-1.0, -1.0))]
        flip = min(flips, key=lambda f: float(np.linalg.norm(middle + f * (source[0] - middle) - target[0])))
        moved = target[0] + flip * (at - source[0])
    else:
        s_mid, t_mid = source.mean(axis=0), target.mean(axis=0)
        s_off, t_off = source - s_mid, target - t_mid
        u, sv, vt = np.linalg.svd(s_off.T @ t_off)
        turn = u @ vt  # may turn over too: a map may be drawn mirrored
        spread = float((s_off**2).sum())
        # Typed zones crowded together that the layout spreads far apart would shrink the map
        # to a heap: it keeps a quarter of its size at least.
        scale = max(float(sv.sum()) / spread if spread > 0 else 1.0, MIN_FIT_SCALE)
        moved = t_mid + scale * (at - s_mid) @ turn
    return {z: (float(x), float(y)) for z, (x, y) in zip(names, moved.tolist(), strict=True)}


def _drawn_along(
    shape: dict[str, tuple[float, float]], typed: dict[str, tuple[int, int]], free: list[str], game_map: GameMap
) -> dict[str, tuple[float, float]]:
    """Each free zone moved by the typed zones' moves from where `shape` puts them to where they
    were typed, each weighing less with the distance (a bell curve at least as wide as the
    move: a zone beside a typed one goes almost as far, one beyond it is not overtaken), all
    together at most one whole move."""
    links = [math.dist(shape[a], shape[b]) for a, near in game_map.adjacency.items() for b in near]
    reach = sum(links) / len(links) if links else 1.0
    moves = [(shape[t], (x - shape[t][0], y - shape[t][1])) for t, (x, y) in typed.items()]
    placed = {}
    for z in free:
        x, y = shape[z]
        weights = []
        for (tx, ty), (dx, dy) in moves:
            width = max(math.hypot(dx, dy), reach)
            weights.append(math.exp(-((x - tx) ** 2 + (y - ty) ** 2) / (2 * width * width)))
        total = max(1.0, sum(weights))
        placed[z] = (
            x + sum(w * m[1][0] for w, m in zip(weights, moves, strict=True)) / total,
            y + sum(w * m[1][1] for w, m in zip(weights, moves, strict=True)) / total,
        )
    return placed


def _box(width: float, height: float, zones: int) -> tuple[float, float]:
    """A zone's box with its gap, in coordinates, on a map of `zones` spanning width by height:
    the drawing fits a small map to its page, draws a large one at its own scale, and spreads
    either further when its zones need the room."""
    span = max(width, height)
    fitted = 1.0 if span > FULL_SCALE else DRAWN_PAGE / span
    area = max(width, span / 4) * max(height, span / 4)
    roomy = (zones * DRAWN_BOX[0] * DRAWN_BOX[1] * ROOM_PER_ZONE / area) ** 0.5
    scale = max(fitted, roomy)
    return DRAWN_BOX[0] / scale, DRAWN_BOX[1] / scale


def _shown(box: tuple[float, float]) -> tuple[tuple[float, float], float]:
    """Half a zone's box as drawn, without its gap (a line through the gap passes under no box),
    and the box's width with its gap (`_box`): what `scenario_lines` weighs lines by."""
    return (box[0] * BOX_WIDTH / DRAWN_BOX[0] / 2, box[1] * BOX_HEIGHT / DRAWN_BOX[1] / 2), box[0]


def _grid_cells(
    typed: dict[str, tuple[int, int]], frame: tuple[float, float, float, float], box: tuple[float, float], count: int
) -> dict[tuple[int, int], tuple[float, float]]:
    """A grid of box-sized cells over the frame, by column and row, but for those whose box
    would overlap a typed zone's: at least `count` of them, a frame too full for as many
    getting more rows below it."""
    left, top, width, height = frame
    box_w, box_h = box
    columns = max(1, int(width // box_w) + 1)
    rows = max(1, int(height // box_h) + 1)
    step = width / max(columns - 1, 1)
    while True:
        grid = {(c, r): (left + c * step, top + r * box_h) for r in range(rows) for c in range(columns)}
        cells = {
            key: (cx, cy)
            for key, (cx, cy) in grid.items()
            if not any(abs(cx - x) < box_w and abs(cy - y) < box_h for x, y in typed.values())
        }
        if len(cells) >= count:
            return cells
        rows += 1


def _on_grid(
    placed: dict[str, tuple[float, float]], cells: dict[tuple[int, int], tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """The zones moved onto the cells of `_grid_cells`, each to the free cell nearest where the
    layout put it (the nearest pairs first): no two boxes overlap and none leaves the frame."""
    # Imported here, as the graph library is: only a layout needs it.
    import numpy as np

    zones = list(placed)
    centres = list(cells.values())
    at = np.array([placed[z] for z in zones])
    grid_at = np.array(centres)
    distance = ((at[:, None, :] - grid_at[None, :, :]) ** 2).sum(axis=2)
    # Nearest pairs first; a stable sort, so that ties go the same way every time.
    order = np.argsort(distance, axis=None, kind="stable")
    moved: dict[str, tuple[float, float]] = {}
    taken: set[int] = set()
    for flat in order.tolist():
        i, j = divmod(flat, len(centres))
        if zones[i] in moved or j in taken:
            continue
        moved[zones[i]] = centres[j]
        taken.add(j)
        if len(moved) == len(zones):
            break
    return moved


def typed_positions(text: str, source: str, game_map: GameMap) -> dict[str, tuple[int, int]]:
    """The x and y typed for each zone that has them, for a layout to keep. A zone with one of
    the two, or with one that is no whole number within MAX_COORDINATE, is refused, naming its
    line (`--force` replaces whatever was typed)."""
    tables: Any = tomllib.loads(text).get("map")
    if not isinstance(tables, dict):
        return {}
    lines = key_lines(text)
    typed: dict[str, tuple[int, int]] = {}
    for zone in game_map.adjacency:
        kind = "sea" if game_map.is_sea(zone) else "land"
        kinds = tables.get(kind)
        table = kinds.get(zone) if isinstance(kinds, dict) else None
        if not isinstance(table, dict) or not ("x" in table or "y" in table):
            continue
        given = []
        for key in ("x", "y"):
            found = lines.get(("map", kind, zone, key)) or lines.get(("map", kind, zone))
            where = f"{source}:{found.line}" if found is not None else source
            if key not in table:
                raise InputError(
                    f"{where}: map.{kind}.{zone}.{key}: missing: a map position needs both x and y (leave "
                    "both out to have them computed; --force computes every zone's)"
                )
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_COORDINATE:
                raise InputError(
                    f"{where}: map.{kind}.{zone}.{key}: {value!r} is not a whole number from {-MAX_COORDINATE} "
                    f"to {MAX_COORDINATE} (--force replaces it with a computed one)"
                )
            given.append(value)
        typed[zone] = (given[0], given[1])
    return typed


def with_positions(text: str, source: str, game_map: GameMap, positions: dict[str, tuple[int, int]]) -> str:
    """The scenario text with `x = ...` and `y = ...` for every zone: an existing line has its
    value replaced in place, a missing one is inserted under the zone's [map.sea."..."] or
    [map.land."..."] header. A zone written any other way (inline) is refused, naming it."""
    lines = key_lines(text)
    # Lines as TOML counts them (only "\n" ends one); a file written with "\r\n" gets its
    # new lines written the same way.
    rows = text.split("\n")
    cr = "\r" if any(row.endswith("\r") for row in rows) else ""
    replace: dict[int, str] = {}
    insert: dict[int, list[str]] = {}
    dropped: set[int] = set()
    for zone, (x, y) in positions.items():
        kind = "sea" if game_map.is_sea(zone) else "land"
        header = lines.get(("map", kind, zone))
        if header is None or not header.header:
            header_written = f"[map.{kind}.{json.dumps(zone, ensure_ascii=False)}]"
            raise InputError(
                f"{source}: map.{kind}.{zone}: not a {header_written} table of its own; "
                "give its x and y by hand, or write it as one"
            )
        header_row = rows[header.line - 1]
        indent = header_row[: len(header_row) - len(header_row.lstrip())]
        for key, value in (("x", x), ("y", y)):
            existing = lines.get(("map", kind, zone, key))
            if existing is None:
                insert.setdefault(header.line, []).append(f"{indent}{key} = {value}{cr}")
                continue
            # Whatever was typed there (1.5, "840", nan, a list over lines) is what --force
            # replaces: the whole value, keeping the key as written and a comment after it.
            row = rows[existing.line - 1]
            span = value_span(row)
            if span is None:
                raise InputError(f"{source}:{existing.line}: map.{kind}.{zone}.{key}: not a value to replace")
            start, end = span
            if existing.end > existing.line:
                replace[existing.line] = f"{row[:start]}{value}{cr}"
                dropped.update(range(existing.line + 1, existing.end + 1))
            else:
                replace[existing.line] = f"{row[:start]}{value}{row[end:]}"
    out: list[str] = []
    for number, row in enumerate(rows, start=1):
        if number in dropped:
            continue
        out.append(replace.get(number, row))
        out.extend(insert.get(number, []))
    result = "\n".join(out)
    _check_written(result, source, game_map, positions)
    return result


def _check_written(text: str, source: str, game_map: GameMap, positions: dict[str, tuple[int, int]]) -> None:
    """Read the edited text back: every zone has the coordinates meant for it, or nothing is written."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{source}: could not write the coordinates safely ({e}); the file is unchanged") from None
    for zone, (x, y) in positions.items():
        kind = "sea" if game_map.is_sea(zone) else "land"
        table = data.get("map", {}).get(kind, {}).get(zone)
        if not isinstance(table, dict) or (table.get("x"), table.get("y")) != (x, y):
            raise InputError(
                f"{source}: could not write the coordinates safely (map.{kind}.{zone} would not read "
                f"back as x = {x}, y = {y}); the file is unchanged"
            )
