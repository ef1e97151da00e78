"""The board map's marks beyond units and NTR, and its legend: a port's anchor (PU2), the air
units aboard a carrier (F7), a neutral nation's hatching and grey italics (F8).

Kept apart from `board_map`, which draws the zones and calls these: what a map defines once
(`DEFS`, the anchor and the hatching that boxes and legends refer to by id), which air units
a zone's carriers hold, who is neutral, and the legend in the band below the zones.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from html import escape
from typing import Any

from domain.ruleset import Ruleset
from domain.scenario import Scenario
from tracker.reports.palette import LAND_FILL, NEUTRAL_STRIPE

CHAR_WIDTH = 6.1  # an average glyph of the 11px sans-serif the labels use, for line wrapping
BOLD_CHAR_WIDTH = 7.0  # the same glyph set bold (the legend's samples)
# A neutral's units are set in italics, in this grey (it reads on every fill, stripes included).
NEUTRAL_INK = "#5c6670"
# The ids of what a map defines once and every box refers to (the port's anchor, the hatching);
# the viewer's legend refers to them too.
PORT_MARK = "board-map-port"
NEUTRAL_HATCH = "board-map-neutral"
# The legend's rows: their height, and the gap between two of its entries.
LEGEND_LINE = 18
LEGEND_GAP = 18
# What every map defines once: a port's anchor in a white disc (PU2), and a neutral's hatching (F8).
DEFS = (
    f'<defs><symbol id="{PORT_MARK}" viewBox="-8 -8 16 16">'
    '<circle r="7.3" fill="#fff" stroke="#24476b" stroke-width="1.1"/>'
    '<g fill="none" stroke="#24476b" stroke-width="1.3" stroke-linecap="round"><circle cy="-3.9" r="1.3"/>'
    '<path d="M0-2.6V4.7M-2.6-0.9H2.6M-4.3 1.3Q-3.6 4.7 0 4.7Q3.6 4.7 4.3 1.3"/></g></symbol>'
    f'<pattern id="{NEUTRAL_HATCH}" width="7" height="7" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)">'
    f'<rect width="7" height="7" fill="{LAND_FILL}"/><rect width="2.5" height="7" fill="{NEUTRAL_STRIPE}"/>'
    "</pattern></defs>"
)
# F7: what a carrier holds, in brackets on its nation's line ("1 CV [1 FT, 1 BM]").
_ABOARD = re.compile(r"\[[^\]]*\]")
# The legend's entries: the mark (`marks_shown`), what its sample draws (a kind, or text set in
# bold), and what it says.
_LEGEND = (
    ("line", "line", "sea zone to sea zone"),
    ("dash", "dash", "coast or land border"),
    ("port", "port", "port: new ships beside it, new aircraft on it (PU2)"),
    ("aboard", "1 CV [1 FT]", "air units aboard the carrier (F7)"),
    ("neutral", "neutral", "a neutral's territory; its units in grey italics (F8)"),
    ("damaged", "1 BB (1 dmg)", "damaged"),
    ("NTR", "NTR", "naval trade resources (F6)"),
)
MARKS = frozenset(mark for mark, _, _ in _LEGEND)
_SAMPLE_WIDTH = {"line": 22.0, "dash": 22.0, "port": 14.0, "neutral": 22.0, "NTR": 26.0}


def neutral_until(board: Mapping[str, Any], scenario: Scenario) -> dict[str, int]:
    """F8: the nations neutral on this board, each with the round it enters the war. A board
    of a campaign says who (`neutral`: an entry brought forward is not); a scenario's opening
    board, which does not, has those whose entry round is after its round (the first)."""
    names = board.get("neutral")
    if names is None:
        names = scenario.neutral(board.get("round", 1))
    return {n: scenario.nations[n].entry_round for n in scenario.turn_order if n in names}


def neutral_note(until: int) -> str:
    """F8: what a neutral's territory and units say on hover."""
    return f"neutral until round {until} (F8)"


def mark_aboard(line: str) -> str:
    """A line of units (escaped) with what its carriers hold in a <tspan class="aboard">."""
    return _ABOARD.sub(r'<tspan class="aboard">\g<0></tspan>', line) if "[" in line else line


def aboard(
    groups: dict[str, list[dict[str, Any]]], scenario: Scenario, ruleset: Ruleset, neutral: Mapping[str, int]
) -> None:
    """F7: which of a sea zone's air units sit on carriers, as the rules count their places: a
    nation's own carriers first (its air groups get `aboard`, its last carrier group `carrying`,
    what they hold, "1 FT, 1 BM"), then the room its allies' carriers have left
    (`friendly_carriers`; `aboard_ally`). An air unit there with no place is in flight (it flew
    there to fight, F7). A neutral's carriers hold its own air units only (F8: nobody's ally)."""
    units = ruleset.units
    room: dict[str, int] = {}
    air: dict[str, list[dict[str, Any]]] = {}
    for nation, nation_groups in groups.items():
        kinds = [(g, units.get(g["type"])) for g in nation_groups]
        room[nation] = sum(u.carries * g["count"] for g, u in kinds if u is not None)
        air[nation] = [g for g, u in kinds if u is not None and u.is_air]
    if not any(room.values()) or not any(air.values()):
        return
    for nation, planes in air.items():
        carried = []
        for g in planes:
            on = min(g["count"], room[nation])
            if on:
                room[nation] -= on
                g["aboard"] = on
                carried.append(f"{on} {g['abbr']}")
        if carried:
            carrier = [g for g in groups[nation] if g["type"] in units and units[g["type"]].carries][-1]
            carrier["carrying"] = ", ".join(carried)
    if not ruleset.friendly_carriers:
        return
    side = {n: scenario.nations[n].side if n in scenario.nations and n not in neutral else None for n in groups}
    for nation, planes in air.items():
        allies = [n for n in groups if n != nation and side[n] is not None and side[n] == side[nation]]
        for g in planes:
            left = g["count"] - g.get("aboard", 0)
            for ally in allies:
                on = min(left, room[ally])
                if on:
                    room[ally] -= on
                    left -= on
                    g["aboard_ally"] = g.get("aboard_ally", 0) + on


def marks_shown(
    scenario: Scenario,
    contents: Mapping[str, Mapping[str, Any]],
    owners: Mapping[str, str],
    neutral: Mapping[str, int],
) -> frozenset[str]:
    """The marks of `MARKS` a map draws, for its legend to name those alone: the links of its
    two kinds, ports (PU2), air units in brackets aboard a carrier (F7), a neutral's hatched
    territory or grey units (F8), damage and NTR, from the zones' `contents` (`zone_contents`),
    the land's `owners` and the `neutral` nations."""
    game_map = scenario.game_map
    shown: set[str] = set()
    for zone, near in game_map.adjacency.items():
        for other in near:
            shown.add("line" if game_map.is_sea(zone) and game_map.is_sea(other) else "dash")
    if game_map.ports:
        shown.add("port")
    if any(owners.get(zone) in neutral for zone in game_map.adjacency if not game_map.is_sea(zone)):
        shown.add("neutral")
    for content in contents.values():
        if content["ntr"]:
            shown.add("NTR")
        for nation, groups in content["units"].items():
            if nation in neutral:
                shown.add("neutral")
            for g in groups:
                if g.get("carrying") or g.get("aboard_ally"):
                    shown.add("aboard")
                if g["damaged"]:
                    shown.add("damaged")
    return frozenset(shown)


def _entry_width(sample: str, text: str) -> float:
    return _SAMPLE_WIDTH.get(sample, len(sample) * BOLD_CHAR_WIDTH) + 5 + len(text) * CHAR_WIDTH


def _legend_rows(room: float, shown: Collection[str]) -> list[list[tuple[str, str]]]:
    """The legend's entries of the marks `shown` in rows no wider than `room`."""
    rows: list[list[tuple[str, str]]] = [[]]
    used = 0.0
    for mark, sample, text in _LEGEND:
        if mark not in shown:
            continue
        need = _entry_width(sample, text)
        if rows[-1] and used + LEGEND_GAP + need > room:
            rows.append([])
            used = 0.0
        used += need + (LEGEND_GAP if rows[-1] else 0)
        rows[-1].append((sample, text))
    return rows


def legend_height(width: float, margin: float, shown: Collection[str] = MARKS) -> float:
    """The height of the legend of a map this wide, with this margin either side, naming the
    marks `shown` (the band a map keeps for it: every mark it may come to show)."""
    return LEGEND_LINE * len(_legend_rows(width - 2 * margin - 16, shown)) + 8


def legend_svg(width: float, margin: float, top: float, shown: Collection[str] = MARKS) -> str:
    """The legend, a box in the band below the zones (from `top`) naming the marks `shown`
    (`marks_shown`: those the map draws): the links' two styles, a port's anchor, a carrier's
    brackets, a neutral's hatching, damage and NTR. No box when it shows none of them."""
    rows = [row for row in _legend_rows(width - 2 * margin - 16, shown) if row]
    if not rows:
        return ""
    out: list[str] = []
    widest = 0.0
    for r, row in enumerate(rows):
        x, y = 8.0, 8 + LEGEND_LINE * r + 13
        for sample, text in row:
            if sample in ("line", "dash"):
                dash = ' stroke-dasharray="5 4"' if sample == "dash" else ""
                out.append(
                    f'<line x1="{x}" y1="{y - 4}" x2="{x + 22}" y2="{y - 4}" stroke="#9aa7b4" '
                    f'stroke-width="1.6"{dash}/>'
                )
            elif sample == "port":
                out.append(f'<use href="#{PORT_MARK}" x="{x}" y="{y - 11}" width="14" height="14"/>')
            elif sample == "neutral":
                out.append(
                    f'<rect x="{x}" y="{y - 10}" width="22" height="12" fill="url(#{NEUTRAL_HATCH})" stroke="#7d8b99"/>'
                )
            else:
                out.append(f'<text x="{x}" y="{y}" font-weight="700">{mark_aboard(escape(sample))}</text>')
            text_x = x + _SAMPLE_WIDTH.get(sample, len(sample) * BOLD_CHAR_WIDTH) + 5
            out.append(f'<text x="{round(text_x, 1)}" y="{y}">{escape(text)}</text>')
            x += _entry_width(sample, text) + LEGEND_GAP
        widest = max(widest, x - LEGEND_GAP + 8)
    return "\n".join(
        [
            f'<g class="map-legend" transform="translate({margin} {top})">',
            f'<rect width="{round(widest, 1)}" height="{LEGEND_LINE * len(rows) + 8}" rx="4" fill="#fff" '
            'stroke="#c3ccd5"/>',
            *out,
            "</g>",
        ]
    )
