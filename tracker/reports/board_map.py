"""The board as a map: a layout of the scenario's zones and an SVG drawing of units and NTR.

The map is drawn from the scenario alone: its sea zones, land territories and adjacency,
placed where the scenario's `x`/`y` keys say, or, when it gives none, where the seeded graph
layout of `tracker scenario map` puts them (the same scenario always gives the same picture).
A large map keeps its own scale and font, so names stay legible; the viewer pans and zooms
it by its viewBox. Boxes have one
size for a whole map, so a zone stays in its place from turn to turn and only its contents
change. The SVG is self-contained (no script, no external reference): the browser viewer
shows it and the HTML turn report inlines it. Besides units and NTR it marks what reading the
board needs: ports (PU2), aircraft aboard carriers (F7) and neutral nations (F8), with a legend
below the map.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape
from operator import itemgetter
from typing import Any

from domain.ruleset import Ruleset
from domain.scenario import GameMap, Scenario
from domain.scenario_layout import BOX_HEIGHT, BOX_WIDTH, DRAWN_PAGE, FULL_SCALE, GAP, ROOM_PER_ZONE, computed_positions
from domain.text import unit_order
from tracker.reports.board_marks import (
    CHAR_WIDTH,
    DEFS,
    NEUTRAL_HATCH,
    NEUTRAL_INK,
    PORT_MARK,
    aboard,
    legend_height,
    legend_svg,
    mark_aboard,
    marks_shown,
    neutral_note,
    neutral_until,
)
from tracker.reports.palette import LAND_FILL, NEUTRAL_STRIPE, PALETTE, SEA_FILL, colour_of, ink

MARGIN = 12
# The box, the gap, the page a small map is spread over, the span drawn at its own scale (see
# `_scale`) and the room per zone: the scenario layout's, which places zones to fit them.
CANVAS = DRAWN_PAGE
FULL_SCALE_SPAN = FULL_SCALE
LINE = 13
# A zone's name, bold, and its owner's code: their size, and a glyph's width at that size (a
# wide font's: DejaVu Sans, chromium's sans-serif on Linux), for fitting them to the box.
NAME_SIZE = 11.5
NAME_CHAR_WIDTH = 7.1
# The smallest a zone's name is set (a longer one is cut, with its whole name on hover).
MIN_NAME_SIZE = 7.0
# Each colour's shade for letters on a box (a neutral's hatched one too).
INK = {c: ink(c, (SEA_FILL, LAND_FILL, NEUTRAL_STRIPE)) for c in PALETTE}


@dataclass(frozen=True)
class MapLayout:
    """Where each zone's box sits (its centre), in SVG user units, and the drawing's size."""

    positions: dict[str, tuple[float, float]]
    width: float
    height: float
    # Where the legend's band below the zones starts (the drawing's height includes it).
    legend_y: float = 0.0
    # What `map_svg` draws the same on every board of this layout (the links, an empty zone's
    # box), kept with it: a layout is made once per map (`_laid_out`), and a long-running
    # process draws its map again on every page.
    drawn: dict[Any, str] = field(default_factory=dict, compare=False, repr=False)
    frames: dict[Any, _ZoneFrame] = field(default_factory=dict, compare=False, repr=False)


def _separate(positions: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """Push overlapping boxes apart along the axis where they overlap least, in a fixed
    order, until none overlaps (or a bounded number of passes). Each pass takes the pairs
    as comparing every box with every later one would, but finds them in a grid of cells
    (`_Cells`): a map of 2,000 zones took seconds a pass compared pair by pair."""
    zones = list(positions)
    pos = [list(positions[z]) for z in zones]
    cells = _Cells(pos)
    for _ in range(200):
        moved = False
        for i in range(len(pos)):
            moved = _push_apart_from(i, pos, cells) or moved
        if not moved:
            break
    return {z: (p[0], p[1]) for z, p in zip(zones, pos, strict=True)}


# What two boxes' centres must be apart, across and down, for the boxes not to overlap.
_NEED_X, _NEED_Y = BOX_WIDTH + GAP, BOX_HEIGHT + GAP


class _Cells:
    """The boxes by the grid cell their centre lies in. A cell is a little larger than the
    distance boxes must keep, so two boxes that overlap lie in the same or adjacent cells
    however a float rounds."""

    def __init__(self, pos: list[list[float]]) -> None:
        self.pos = pos
        self.size = (_NEED_X + 1.0, _NEED_Y + 1.0)
        self.cell_of = [self.cell(p) for p in pos]
        self.members: dict[tuple[int, int], set[int]] = {}
        for i, cell in enumerate(self.cell_of):
            self.members.setdefault(cell, set()).add(i)

    def cell(self, p: list[float]) -> tuple[int, int]:
        return math.floor(p[0] / self.size[0]), math.floor(p[1] / self.size[1])

    def near(self, i: int, after: int) -> list[int]:
        """The boxes after `after` in the order that may overlap box `i`, in that order."""
        cx, cy = self.cell_of[i]
        found = [
            j
            for x in (cx - 1, cx, cx + 1)
            for y in (cy - 1, cy, cy + 1)
            for j in self.members.get((x, y), ())
            if j > after
        ]
        return sorted(found)

    def moved(self, i: int) -> bool:
        """Box `i` filed under the cell it has moved to; whether that is another cell."""
        cell = self.cell(self.pos[i])
        if cell == self.cell_of[i]:
            return False
        self.members[self.cell_of[i]].discard(i)
        self.members.setdefault(cell, set()).add(i)
        self.cell_of[i] = cell
        return True


def _push_apart_from(i: int, pos: list[list[float]], cells: _Cells) -> bool:
    """Box `i` pushed apart from each later box it overlaps, those taken in order as box `i`
    moves (as comparing it with every later box would); whether any overlapped. Only box `i`
    and the one pushed move, so the boxes near it change only when box `i` changes cell."""
    a = pos[i]
    candidates = cells.near(i, i)
    k = 0
    pushed = False
    while k < len(candidates):
        j = candidates[k]
        k += 1
        b = pos[j]
        dx, dy = b[0] - a[0], b[1] - a[1]
        over_x, over_y = _NEED_X - abs(dx), _NEED_Y - abs(dy)
        if over_x <= 0 or over_y <= 0:
            continue
        pushed = True
        if over_x / _NEED_X < over_y / _NEED_Y:
            push = over_x / 2 + 0.5
            sign = 1.0 if dx >= 0 else -1.0
            a[0] -= sign * push
            b[0] += sign * push
        else:
            push = over_y / 2 + 0.5
            sign = 1.0 if dy >= 0 else -1.0
            a[1] -= sign * push
            b[1] += sign * push
        cells.moved(j)
        if cells.moved(i):
            candidates, k = cells.near(i, j), 0
    return pushed


# The layout of each map drawn lately, by the map itself (kept, so that its id is not reused): a
# campaign's scenario is loaded once a process, and the key of `_laid_out` (every zone's
# neighbours, sorted) costs a tenth of drawing a map of 148 zones.
_LAYOUTS: dict[int, tuple[GameMap, MapLayout]] = {}


def map_layout(scenario: Scenario) -> MapLayout:
    """The scenario's own coordinates when it gives them, else the layout `tracker scenario map`
    computes (so both draw the same map); scaled (see `_scale`), boxes kept apart, shifted so
    the drawing starts at the margin. The same map is laid out once per process."""
    game_map = scenario.game_map
    known = _LAYOUTS.get(id(game_map))
    if known is not None and known[0] is game_map:
        return known[1]
    zones = tuple(game_map.adjacency)
    edges = tuple(tuple(sorted(game_map.adjacency[z])) for z in zones)
    positions = tuple(game_map.positions.get(z, (0, 0)) for z in zones) if game_map.positions else None
    layout = _laid_out(zones, edges, positions, frozenset(game_map.sea))
    if len(_LAYOUTS) >= 16:
        _LAYOUTS.clear()
    _LAYOUTS[id(game_map)] = (game_map, layout)
    return layout


@functools.lru_cache(maxsize=16)
def _laid_out(
    zones: tuple[str, ...],
    edges: tuple[tuple[str, ...], ...],
    given: tuple[tuple[int, int], ...] | None,
    sea: frozenset[str],
) -> MapLayout:
    """`map_layout` on the map's hashable parts: a page redrawn on every action, on a big map,
    should not redo the layout (a graph layout of a hundred zones takes a noticeable moment)."""
    if given is not None:
        raw = {z: (float(x), float(y)) for z, (x, y) in zip(zones, given, strict=True)}
    else:
        game_map = GameMap(sea=sea, land={}, adjacency=dict(zip(zones, map(frozenset, edges), strict=True)))
        raw = {z: (float(x), float(y)) for z, (x, y) in computed_positions(game_map).items()}
    xs, ys = [p[0] for p in raw.values()], [p[1] for p in raw.values()]
    scale = _scale(max(xs) - min(xs), max(ys) - min(ys), len(zones))
    placed = _separate({z: ((raw[z][0] - min(xs)) * scale, (raw[z][1] - min(ys)) * scale) for z in zones})
    left = min(p[0] for p in placed.values()) - BOX_WIDTH / 2 - MARGIN
    top = min(p[1] for p in placed.values()) - BOX_HEIGHT / 2 - MARGIN
    positions = {z: (round(x - left, 1), round(y - top, 1)) for z, (x, y) in placed.items()}
    width = max(p[0] for p in positions.values()) + BOX_WIDTH / 2 + MARGIN
    legend_y = max(p[1] for p in positions.values()) + BOX_HEIGHT / 2 + MARGIN
    height = legend_y + legend_height(width, MARGIN) + MARGIN
    return MapLayout(positions, round(width, 1), round(height, 1), round(legend_y, 1))


def _scale(width: float, height: float, zones: int) -> float:
    """Map units per coordinate unit. A small map is fitted to CANVAS, so a hand-made board
    fills the page; a large one keeps its own scale, where its author set the boxes apart:
    shrinking a world map to a page would pile its boxes up, and pushing them apart again
    would scramble it. Either is spread further when its zones would not fit the area it
    covers (ROOM_PER_ZONE), as forty zones laid out over a page would not. The viewer's pan
    and zoom show a large map's parts."""
    span = max(width, height, 1e-9)
    fitted = 1.0 if span > FULL_SCALE_SPAN else CANVAS / span
    # A map in one row or column still needs its boxes' room across.
    area = max(width, span / 4) * max(height, span / 4)
    needed = zones * (BOX_WIDTH + GAP) * (BOX_HEIGHT + GAP) * ROOM_PER_ZONE
    return max(fitted, math.sqrt(needed / area))


# A mapping, not a `Board`: a scenario's opening (`tracker scenario map`) is drawn too.
def zone_contents(board: Mapping[str, Any], scenario: Scenario, ruleset: Ruleset) -> dict[str, dict[str, Any]]:
    """Per zone holding anything (a zone left out holds nothing): units by nation as (count,
    type, damaged) in the ruleset's order, NTR by nation, and the units' IDs by nation (shown on
    hover); the board is the shape `state --json` prints."""
    zones = scenario.game_map.adjacency
    type_order = {name: i for i, name in enumerate(ruleset.units)}
    nation_order = {n: i for i, n in enumerate(scenario.turn_order)}
    contents: dict[str, dict[str, Any]] = {}

    def content_of(zone: str) -> dict[str, Any]:
        content = contents.get(zone)
        if content is None:
            content = contents[zone] = {"units": {}, "ntr": {}, "ids": {}}
        return content

    # Per (zone, nation, type): [where it is shown, count, damaged, zone, nation, type]; shown
    # by nation in turn order, then by type in the ruleset's order, then as first seen on the
    # board, written as one number (numbers sort several times faster than tuples).
    counts: dict[tuple[str, str, str], list[Any]] = {}
    nations, types, seen = len(nation_order) + 1, len(type_order) + 1, len(board["units"]) + 1
    for u in board["units"]:
        zone, nation, unit_type = u["at"], u["nation"], u["type"]
        if zone not in zones:
            continue
        if u.get("id"):  # a scenario's starting forces have no IDs yet
            content_of(zone)["ids"].setdefault(nation, []).append(u["id"])
        entry = counts.get((zone, nation, unit_type))
        if entry is None:
            place = nation_order.get(nation, nations - 1) * types + type_order.get(unit_type, types - 1)
            entry = counts[zone, nation, unit_type] = [place * seen + len(counts), 0, 0, zone, nation, unit_type]
        entry[1] += 1
        if u["damage"]:
            entry[2] += 1
    units = ruleset.units
    for _shown, count, damaged, zone, nation, unit_type in sorted(counts.values(), key=itemgetter(0)):
        abbr = units[unit_type].abbr if unit_type in units else unit_type
        content_of(zone)["units"].setdefault(nation, []).append(
            {"type": unit_type, "abbr": abbr, "count": count, "damaged": damaged}
        )
    for nation in sorted(board["ntr"], key=lambda n: nation_order.get(n, 99)):
        for zone, count in board["ntr"][nation].items():
            if count and zone in zones:
                content_of(zone)["ntr"][nation] = count
    neutral = neutral_until(board, scenario)
    for zone in scenario.game_map.sea:
        if zone in contents:
            aboard(contents[zone]["units"], scenario, ruleset, neutral)
    return contents


def _units_text(groups: list[dict[str, Any]]) -> list[str]:
    """A nation's units in a zone as the parts of its line: "2 DD", "1 BB (1 dmg)"; a carrier
    with the air units aboard it in brackets, "1 CV [1 FT, 1 BM]"; air units aboard an ally's
    carriers on their own, "[1 FT]" (F7)."""
    parts = []
    for g in groups:
        shown = g["count"] - g.get("aboard", 0) - g.get("aboard_ally", 0)
        if shown:
            hurt = f" ({g['damaged']} dmg)" if g["damaged"] else ""
            carrying = f" [{g['carrying']}]" if g.get("carrying") else ""
            parts.append(f"{shown} {g['abbr']}{hurt}{carrying}")
        if g.get("aboard_ally"):
            parts.append(f"[{g['aboard_ally']} {g['abbr']}]")
    return parts


def _wrap(parts: list[str], first_width: float, width: float) -> list[str]:
    """Join the parts of a label with ', ', a line each time the box is full (a part is never
    split: a carrier stays with what it carries)."""
    text = ", ".join(parts)
    if text and len(text) * CHAR_WIDTH <= first_width:
        return [text]  # the whole label fits the first line, so every start of it does
    lines: list[str] = []
    current = ""
    for part in parts:
        candidate = f"{current}, {part}" if current else part
        limit = first_width if not lines else width
        if current and len(candidate) * CHAR_WIDTH > limit:
            lines.append(current + ",")
            current = part
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def _glyphs(text: str) -> int:
    """How many average glyphs wide a text is set: a wide character (CJK, most emoji) counts
    twice, a combining accent not at all."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _cut(text: str, glyphs: float) -> str:
    """The longest start of `text` at most `glyphs` wide (`_glyphs`)."""
    for end in range(len(text), 0, -1):
        if _glyphs(text[:end]) <= glyphs:
            return text[:end].rstrip()
    return ""


def _slug(zone: str) -> str:
    """The zone's name as an ID of its own ("Sea (1)" is sea-_28_1_29_): a space as "-", any
    other character but a letter or digit by its code point (names differ in more than case)."""
    return "".join(ch if ch.isalnum() else "-" if ch == " " else f"_{ord(ch):x}_" for ch in zone.lower())


def _links_svg(scenario: Scenario, pos: dict[str, tuple[float, float]]) -> list[str]:
    """A line per pair of adjacent zones, once each: solid between sea zones, dashed otherwise."""
    out = ['<g class="links" stroke="#9aa7b4" stroke-width="1.6">']
    drawn = set()
    for a, near in scenario.game_map.adjacency.items():
        for b in sorted(near):
            pair = tuple(sorted((a, b)))
            if pair in drawn:
                continue
            drawn.add(pair)
            dash = "" if scenario.game_map.is_sea(a) and scenario.game_map.is_sea(b) else ' stroke-dasharray="5 4"'
            (x1, y1), (x2, y2) = pos[pair[0]], pos[pair[1]]
            out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"{dash}/>')
    out.append("</g>")
    return out


def _content_lines(content: Mapping[str, Any], code: dict[str, str]) -> list[tuple[str | None, str, str]]:
    """The lines of a zone's box under its name, as (nation, label, text): each nation's units,
    wrapped, then the NTR; cut to what the box holds, the last line saying how many are left out."""
    lines: list[tuple[str | None, str, str]] = []
    for nation, groups in content["units"].items():
        for i, text in enumerate(_wrap(_units_text(groups), BOX_WIDTH - 40, BOX_WIDTH - 40)):
            lines.append((nation, code.get(nation, nation) if i == 0 else "", text))
    if content["ntr"]:
        ntr = ", ".join(f"{code.get(n, n)} {count}" for n, count in content["ntr"].items())
        lines.append((None, "NTR", ntr))
    room = int((BOX_HEIGHT - 22) // LINE)
    if len(lines) > room:
        hidden = len(lines) - room + 1
        lines = lines[: room - 1] + [(None, "", f"... {hidden} more lines")]
    return lines


@dataclass(frozen=True)
class _ZoneFrame:
    """What a zone's box draws whatever it holds: the opening of its <g>, its escaped title (to
    which the units' IDs are added), its frame and name, and where its lines start."""

    opening: str
    title: str
    frame: tuple[str, ...]
    left: str  # a line's x, written out
    text_left: str  # the x of a line's text after its label
    first_line: float  # the first line's y
    noted: str | None = None  # the neutral owner its title already names (F8)


def _zone_frame(
    zone: str,
    scenario: Scenario,
    at: tuple[float, float],
    owner: str | None,
    colour: dict[str, str],
    code: dict[str, str],
    until: int | None = None,
) -> _ZoneFrame:
    """`until`: the round the territory's owner enters the war, while it is neutral (F8)."""
    x, y = at
    half_w, half_h = BOX_WIDTH / 2, BOX_HEIGHT / 2
    sea = scenario.game_map.is_sea(zone)
    border = colour.get(owner, "#7d8b99") if owner else "#6f9fc8"
    kind = "sea" if sea else "land neutral" if until is not None else "land"
    title = zone if sea else f"{zone} ({owner})" if owner else zone
    if until is not None:
        title += f"\n{owner}: {neutral_note(until)}"
    fill = SEA_FILL if sea else f"url(#{NEUTRAL_HATCH})" if until is not None else LAND_FILL
    # PU2: a port's anchor sits on the box's top right corner, clear of its name.
    port = (
        f'<use class="port" href="#{PORT_MARK}" x="{x + half_w - 8}" y="{y - half_h - 8}" width="16" height="16">'
        "<title>Port (PU2): new ships are placed beside it, new aircraft on it</title></use>"
        if zone in scenario.game_map.ports
        else ""
    )
    # A name too long for the box ("German South West Africa DE") is set smaller, not left
    # running over the box's edge into its neighbour's.
    owner_width = _glyphs(code.get(owner, owner)) + 1 if owner else 0
    label = (_glyphs(zone) + owner_width) * NAME_CHAR_WIDTH
    room = BOX_WIDTH - 16
    size = NAME_SIZE if label <= room else math.floor(NAME_SIZE * room / label * 10) / 10
    shown = zone
    if size < MIN_NAME_SIZE:
        # Set smaller still, a name of a hundred letters would be a thin line: it is cut to
        # what fits at the smallest legible size, and the box's title (on hover) gives it whole.
        size = MIN_NAME_SIZE
        fits = room / (NAME_CHAR_WIDTH * MIN_NAME_SIZE / NAME_SIZE) - owner_width - 1
        shown = _cut(zone, fits) + "\u2026"
    return _ZoneFrame(
        opening=f'<g class="zone {kind}" id="zone-{_slug(zone)}" data-zone="{escape(zone)}"'
        + (f' data-owner="{escape(owner)}"' if owner else "")
        + ">",
        title=escape(title),
        frame=(
            f'<rect x="{x - half_w}" y="{y - half_h}" width="{BOX_WIDTH}" height="{BOX_HEIGHT}" '
            f'rx="{14 if sea else 4}" fill="{fill}" stroke="{border}" '
            f'stroke-width="{1.4 if sea else 2.4}"/>',
            f'<text x="{x - half_w + 8}" y="{y - half_h + 15}" font-weight="700" font-size="{size}">{escape(shown)}'
            + (
                f' <tspan font-weight="400" fill="{INK.get(border, border)}">{escape(code.get(owner, owner))}</tspan>'
                if owner
                else ""
            )
            + "</text>",
            *((port,) if port else ()),
        ),
        left=f"{x - half_w + 8}",
        text_left=f"{x - half_w + 38}",
        first_line=y - half_h + 15 + LINE + 2,
        noted=owner if until is not None else None,
    )


# What an empty zone holds (`zone_contents` leaves it out).
_NOTHING: Mapping[str, Any] = {"units": {}, "ntr": {}}
# Nations and their codes, escaped once: every zone's lines name them again.
_name = functools.lru_cache(maxsize=1024)(escape)


def _zone_svg(
    frame: _ZoneFrame,
    content: Mapping[str, Any],
    colour: dict[str, str],
    code: dict[str, str],
    order: dict[str, int],
    neutral: Mapping[str, int],
) -> list[str]:
    """One zone's box as a <g>: its frame (sea or land, a land border in its owner's colour), its
    name and owner, and a line per nation present and for its NTR; a neutral's line in grey
    italics, its entry round on hover (F8)."""
    # The units' IDs, one line per nation, for the pointer resting on the zone (a tooltip).
    ids = content.get("ids", {})
    listed = "".join(
        "\n" + ", ".join(sorted(ids[n], key=unit_order) if len(ids[n]) > 1 else ids[n])
        for n in (sorted(ids, key=lambda n: order.get(n, len(order))) if len(ids) > 1 else ids)
    )
    if neutral:
        present = [n for n in neutral if n in content["units"] or n in content["ntr"]]
        listed += "".join(f"\n{n}: {neutral_note(neutral[n])}" for n in present if n != frame.noted)
    group = [frame.opening, f"<title>{frame.title}{escape(listed)}</title>", *frame.frame]
    line_y = frame.first_line
    for nation, label, text in _content_lines(content, code):
        fill = INK.get(colour.get(nation, ""), "#1b1f24") if nation else "#1b1f24"
        attr = f' data-nation="{_name(nation)}"' if nation else ' class="ntr"' if label == "NTR" else ""
        body = mark_aboard(escape(text))
        if nation in neutral:
            attr += f' class="neutral" font-style="italic" fill="{NEUTRAL_INK}"'
        group.append(
            f'<text x="{frame.left}" y="{line_y}"{attr}>'
            f'<tspan font-weight="700" fill="{fill}">{_name(label)}</tspan>'
            f'<tspan x="{frame.text_left}">{body}</tspan></text>'
        )
        line_y += LINE
    group.append("</g>")
    return group


def map_focus(
    board: Mapping[str, Any], scenario: Scenario, battles: list[dict[str, Any]]
) -> tuple[float, float] | None:
    """Where a map too large to show whole opens, in map units: the first open battle's zone,
    else the zone holding most of the acting nation's units (its fleet, not the map's middle);
    None when that nation has no unit on the board."""
    zone = battles[0]["zone"] if battles else None
    if zone is None:
        count: dict[str, int] = {}
        for u in board["units"]:
            if u["nation"] == board["nation"]:
                count[u["at"]] = count.get(u["at"], 0) + 1
        # Ties go to the zone first in the map's own order, so a board always opens alike.
        order = {z: i for i, z in enumerate(scenario.game_map.adjacency)}
        zone = min(count, key=lambda z: (-count[z], order.get(z, len(order))), default=None)
    return map_layout(scenario).positions.get(zone) if zone is not None else None


def map_svg(
    scenario: Scenario,
    layout: MapLayout,
    contents: dict[str, dict[str, Any]],
    owners: dict[str, str] | None = None,
    link: str | None = None,
    neutral: Mapping[str, int] | None = None,
) -> str:
    """The map as one <svg> element: adjacency lines, then a box per zone with its name, a
    line per nation present (its code and units) and its NTR, a port's anchor; the legend
    below. `owners` (territory -> nation) colours land borders; `link`, a format string with
    `{zone}`, makes each box a link; `neutral` (nation -> entry round, F8) hatches those
    nations' territories and greys their units. Every zone's box is a <g> with `data-zone`
    (and each nation line `data-nation`), so a page or a test can find what is drawn where."""
    neutral = neutral or {}
    nations = list(scenario.turn_order)
    colour = {n: colour_of(i) for i, n in enumerate(nations)}
    code = {n: scenario.nations[n].code for n in nations}
    owners = owners if owners is not None else dict(scenario.game_map.land)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board-map" viewBox="0 0 {layout.width} {layout.height}" '
        f'width="{layout.width}" height="{layout.height}" role="img" '
        f'aria-label="Map of {escape(scenario.title)}" font-family="system-ui, sans-serif" font-size="11">',
        f"<title>{escape(scenario.title)}</title>",
        DEFS,
    ]
    # The links, each box's frame and the empty boxes depend on the map alone (the layout's
    # key), and on the owner, its colour and code for a land box.
    drawn, frames = layout.drawn, layout.frames
    # Kept as the lines they are joined into (the SVG's lines are joined by "\n").
    if "links" not in drawn:
        drawn["links"] = "\n".join(_links_svg(scenario, layout.positions))
    out.append(drawn["links"])
    order = {n: i for i, n in enumerate(code)}
    sea = scenario.game_map.sea
    for zone in scenario.game_map.adjacency:
        owner = None if zone in sea else owners.get(zone)
        content = contents.get(zone)
        until = neutral.get(owner or "")
        key = (zone, owner, colour.get(owner or ""), code.get(owner or ""), until)
        frame = frames.get(key)
        if frame is None:
            frame = frames[key] = _zone_frame(zone, scenario, layout.positions[zone], owner, colour, code, until)
        if content is not None and (content["units"] or content["ntr"] or content.get("ids")):
            group = _zone_svg(frame, content, colour, code, order, neutral)
        else:
            empty = drawn.get(key)
            if empty is None:
                empty = drawn[key] = "\n".join(_zone_svg(frame, _NOTHING, colour, code, order, neutral))
            group = [empty]
        if link is not None:
            href = escape(link.format(zone=_quote(zone)))
            group = [f'<a href="{href}">', *group, "</a>"]
        out.extend(group)
    # The legend names the marks this map draws alone (no neutral's hatching on a map without one).
    shown = marks_shown(scenario, contents, owners, neutral)
    legend = drawn.get(("legend", shown))
    if legend is None:
        legend = drawn[("legend", shown)] = legend_svg(layout.width, MARGIN, layout.legend_y, shown)
    out.append(legend)
    out.append("</svg>")
    return "\n".join(out)


def _quote(zone: str) -> str:
    """A zone's name as one segment of its page's URL. A zone named "." or ".." gets a trailing
    %20 (which the page trims, as it trims what is typed): a browser would otherwise read the
    segment as "this folder" or "the folder above", as it does %2E too."""
    from urllib.parse import quote

    return quote(zone, safe="") + ("%20" if zone in (".", "..") else "")


def board_svg(board: Mapping[str, Any], scenario: Scenario, ruleset: Ruleset, link: str | None = None) -> str:
    """The map of one board (the shape `state --json` prints) for this scenario."""
    return map_svg(
        scenario,
        map_layout(scenario),
        zone_contents(board, scenario, ruleset),
        owners=board.get("owners"),
        link=link,
        neutral=neutral_until(board, scenario),
    )
