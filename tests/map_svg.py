"""Reading the board map back out of its SVG, for the map, report and viewer tests."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

from domain.ruleset import Ruleset
from domain.scenario import Scenario

SVG = "{http://www.w3.org/2000/svg}"


def drawn(svg: str) -> dict[str, dict[str, Any]]:
    """What the SVG shows per zone: {zone: {"nations": {nation: text}, "ntr": text, "box": (x, y)}}."""
    root = ET.fromstring(svg)
    zones: dict[str, dict[str, Any]] = {}
    for g in root.iter(f"{SVG}g"):
        zone = g.get("data-zone")
        if zone is None:
            continue
        assert zone not in zones, f"{zone} drawn twice"
        rect = g.find(f"{SVG}rect")
        assert rect is not None
        nations: dict[str, str] = {}
        ntr = ""
        last = None
        for text in g.findall(f"{SVG}text"):
            nation = text.get("data-nation")
            # The first tspan is the label (a nation's code or NTR), the rest what is there.
            spans = text.findall(f"{SVG}tspan")
            units = "".join(spans[1].itertext()) if len(spans) > 1 else ""
            if nation is not None:
                # A nation's units may wrap onto further lines: they carry the same data-nation.
                nations[nation] = (nations[nation] + " " + units) if nation in nations and last == nation else units
                last = nation
            elif text.get("class") == "ntr":
                ntr = units
        zones[zone] = {"nations": nations, "ntr": ntr, "box": (float(rect.get("x", 0)), float(rect.get("y", 0)))}
    return zones


def expected_units(board: dict[str, Any], rs: Ruleset) -> dict[str, dict[str, Counter[str]]]:
    out: dict[str, dict[str, Counter[str]]] = {}
    for u in board["units"]:
        out.setdefault(u["at"], {}).setdefault(u["nation"], Counter())[rs.units[u["type"]].abbr] += 1
    return out


def parsed_units(text: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for count, abbr in re.findall(r"(\d+) ([A-Z]+)", text):
        counts[abbr] += int(count)
    return counts


def assert_map_shows(svg: str, board: dict[str, Any], scenario: Scenario, rs: Ruleset) -> None:
    zones = drawn(svg)
    assert set(zones) == set(scenario.game_map.adjacency), "every zone drawn once"
    units = expected_units(board, rs)
    for zone, shown in zones.items():
        want = units.get(zone, {})
        assert set(shown["nations"]) == set(want), zone
        for nation, text in shown["nations"].items():
            assert parsed_units(text) == want[nation], (zone, nation, text)
        codes = {scenario.nations[n].code: n for n in scenario.nations}
        ntr = {codes[c]: int(k) for c, k in re.findall(r"([A-Z]+) (\d+)", shown["ntr"])}
        assert ntr == {n: z[zone] for n, z in board["ntr"].items() if z.get(zone)}, zone
