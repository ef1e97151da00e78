"""Map coordinates for a scenario file that gives none, or some: a layout computed from the
adjacency by a graph library (around the zones whose x and y were typed by hand, which stay
where they are), and the coordinates written back into the file's text, under each zone's table
header, leaving its comments and order alone."""

from __future__ import annotations

import json
import math
import random
import tomllib
from typing import Any

from domain.errors import InputError
from domain.scenario import MAX_COORDINATE, GameMap
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


def computed_positions(
    game_map: GameMap, source: str = "the map", typed: dict[str, tuple[int, int]] | None = None
) -> dict[str, tuple[int, int]]:
    """A force-directed layout of the zones (networkx's spring layout, or ForceAtlas2 on a map
    of more than SPRING_LAYOUT_MOST zones; seeded), as integer x/y with x to the right and y
    downwards, spanning LAYOUT_WIDTH. The `typed` zones keep their x and y and the others are
    laid out around them (`around_typed`). A map too large to lay out is refused, naming `source`."""
    if typed:
        return around_typed(game_map, typed, source)
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
    return _apart(laid, height)


def _apart(laid: dict[str, tuple[int, int]], height: float) -> dict[str, tuple[int, int]]:
    """A layout whose boxes would overlap where the map draws them, moved onto the grid of
    `_on_grid`; one whose boxes are apart, as it is. A force-directed layout of a few hundred
    zones piles them up in places, and the drawing, left to push them apart pair by pair, took
    half a minute on a map of a thousand and still left boxes on top of each other."""
    import numpy as np

    box_w, box_h = _box(LAYOUT_WIDTH, height, len(laid))
    at = np.array(list(laid.values()), dtype=float)
    # Row by row, not every pair at once: a map of 2,000 zones would need 4 million at a time.
    for i in range(len(at) - 1):
        near = np.abs(at[i + 1 :] - at[i])
        if bool(((near[:, 0] < box_w) & (near[:, 1] < box_h)).any()):
            break
    else:
        return laid
    placed = {z: (float(x), float(y)) for z, (x, y) in laid.items()}
    # Cells a whole unit wider than a box: rounded to whole numbers, no two boxes overlap still.
    cell = (math.ceil(box_w) + 1, math.ceil(box_h) + 1)
    gridded = _on_grid(placed, {}, (0.0, 0.0, float(LAYOUT_WIDTH), height), cell)
    return {z: (round(gridded[z][0]), round(gridded[z][1])) for z in laid}


def around_typed(
    game_map: GameMap, typed: dict[str, tuple[int, int]], source: str = "the map"
) -> dict[str, tuple[int, int]]:
    """Every zone's x and y: the `typed` zones' as they are, the others laid out around them
    (networkx's spring layout with the typed zones fixed, seeded), within the drawing area
    (LAYOUT_WIDTH by LAYOUT_WIDTH / LAYOUT_ASPECT from 0, 0, grown to hold the typed zones), on
    a grid of cells the drawing's boxes fit in (`_on_grid`). A zone is started beside its typed
    neighbours, so that the map grows out from what its author placed."""
    zones = list(game_map.adjacency)
    if len(zones) > SPRING_LAYOUT_MOST:
        raise InputError(
            f"{source}: {len(zones)} zones: the others are laid out around typed coordinates on a map "
            f"of at most {SPRING_LAYOUT_MOST}; give every zone x and y, or --force lays out every zone"
        )
    free = [z for z in zones if z not in typed]
    if not free:
        return {z: typed[z] for z in zones}
    # Imported here: only drawing a map without coordinates needs the graph library.
    import networkx as nx

    x0, y0, width, height = _frame(typed)
    # The layout's own units: the frame's width is 1 (the spring layout's forces are tuned to a
    # unit square); the same scale both ways, so that the typed zones keep their shape.
    pos = {z: ((x - x0) / width, (y - y0) / width) for z, (x, y) in typed.items()}
    pos.update(_started(game_map, pos, free, height / width))
    graph = nx.Graph()
    graph.add_nodes_from(zones)
    graph.add_edges_from((a, b) for a, near in game_map.adjacency.items() for b in sorted(near) if a < b)
    raw = nx.spring_layout(
        graph, k=_spacing(graph, height / width), pos=pos, fixed=list(typed), iterations=300, seed=LAYOUT_SEED
    )
    placed = {z: (x0 + float(raw[z][0]) * width, y0 + float(raw[z][1]) * width) for z in free}
    placed = _on_grid(placed, typed, (x0, y0, width, height), _box(width, height, len(zones)))
    return {z: typed[z] if z in typed else (round(placed[z][0]), round(placed[z][1])) for z in zones}


def _spacing(graph: Any, depth: float) -> float:
    """The spring layout's distance between zones (its `k`) for the map to fill a frame of
    width 1 and height `depth`: a layout's size grows with `k` in proportion, so the map laid
    out freely once, at networkx's own `k`, says how far to shrink or grow it."""
    import networkx as nx

    k = 1.0 / math.sqrt(len(graph))
    free = nx.spring_layout(graph, k=k, seed=LAYOUT_SEED, iterations=300, scale=None)
    xs = [float(p[0]) for p in free.values()]
    ys = [float(p[1]) for p in free.values()]
    area = max(max(xs) - min(xs), k) * max(max(ys) - min(ys), k)
    return k * math.sqrt(depth / area)


def _frame(typed: dict[str, tuple[int, int]]) -> tuple[float, float, float, float]:
    """The drawing area the zones are laid out in, as left, top, width and height: the one a
    computed layout spans, grown to hold every typed zone."""
    xs = [x for x, _ in typed.values()]
    ys = [y for _, y in typed.values()]
    left, top = min(0, *xs), min(0, *ys)
    right = max(LAYOUT_WIDTH, *xs)
    bottom = max(LAYOUT_WIDTH / LAYOUT_ASPECT, *ys)
    return float(left), float(top), float(right - left), float(bottom - top)


def _started(
    game_map: GameMap, pos: dict[str, tuple[float, float]], free: list[str], depth: float
) -> dict[str, tuple[float, float]]:
    """Where each free zone starts (layout units): beside the zones placed before it, outwards
    from the typed ones in breadth-first order; a zone with no path to a typed one anywhere in
    the frame (a width of 1, `depth` high). Jittered, seeded: two zones never start as one."""
    rng = random.Random(LAYOUT_SEED)
    step = (depth / (len(free) + len(pos))) ** 0.5
    started = dict(pos)
    todo = list(free)
    while todo:
        reached = [z for z in todo if any(n in started for n in sorted(game_map.adjacency[z]))]
        if not reached:
            # Zones out of reach of any typed one: anywhere in the frame, where forces sort them.
            for z in todo:
                started[z] = (rng.random(), rng.random() * depth)
            break
        for z in reached:
            near = [started[n] for n in sorted(game_map.adjacency[z]) if n in started]
            x = sum(p[0] for p in near) / len(near)
            y = sum(p[1] for p in near) / len(near)
            started[z] = (x + rng.uniform(-step, step), y + rng.uniform(-step, step))
        todo = [z for z in todo if z not in started]
    return {z: started[z] for z in free}


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


def _on_grid(
    placed: dict[str, tuple[float, float]],
    typed: dict[str, tuple[int, int]],
    frame: tuple[float, float, float, float],
    box: tuple[float, float],
) -> dict[str, tuple[float, float]]:
    """The free zones moved onto a grid of box-sized cells over the frame, each to the free cell
    nearest where the layout put it (the nearest pairs first), a cell whose box would overlap a
    typed zone's taken: no two boxes overlap and none leaves the frame. A frame too full for
    every zone gets more rows below it."""
    # Imported here, as the graph library is: only a layout needs it.
    import numpy as np

    left, top, width, height = frame
    box_w, box_h = box
    columns = max(1, int(width // box_w) + 1)
    rows = max(1, int(height // box_h) + 1)
    step = width / max(columns - 1, 1)
    while True:
        grid = [(left + c * step, top + r * box_h) for r in range(rows) for c in range(columns)]
        cells = [
            (cx, cy)
            for cx, cy in grid
            if not any(abs(cx - x) < box_w and abs(cy - y) < box_h for x, y in typed.values())
        ]
        if len(cells) >= len(placed):
            break
        rows += 1
    zones = list(placed)
    at = np.array([placed[z] for z in zones])
    grid_at = np.array(cells)
    distance = ((at[:, None, :] - grid_at[None, :, :]) ** 2).sum(axis=2)
    # Nearest pairs first; a stable sort, so that ties go the same way every time.
    order = np.argsort(distance, axis=None, kind="stable")
    moved: dict[str, tuple[float, float]] = {}
    taken: set[int] = set()
    for flat in order.tolist():
        i, j = divmod(flat, len(cells))
        if zones[i] in moved or j in taken:
            continue
        moved[zones[i]] = cells[j]
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
