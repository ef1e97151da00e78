"""Map coordinates for a scenario file that gives none: a layout computed from the adjacency by
a graph library, and the same coordinates written back into the file's text, under each zone's
table header, leaving its comments and order alone."""

from __future__ import annotations

import json
import tomllib

from domain.errors import InputError
from domain.scenario import GameMap
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


def computed_positions(game_map: GameMap, source: str = "the map") -> dict[str, tuple[int, int]]:
    """A force-directed layout of the zones (networkx's spring layout, or ForceAtlas2 on a map
    of more than SPRING_LAYOUT_MOST zones; seeded), as integer x/y with x to the right and y
    downwards, spanning LAYOUT_WIDTH. A map too large to lay out is refused, naming `source`."""
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
    return {
        zone: (
            round((float(p[0]) - min(xs)) / span_x * LAYOUT_WIDTH),
            # The layout's y grows upwards; the map's grows downwards.
            round((max(ys) - float(p[1])) / span_y * height),
        )
        for zone, p in raw.items()
    }


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
