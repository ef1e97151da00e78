"""The board map marks what reading the board needs beyond units and NTR: a port's anchor
(PU2), the air units aboard a carrier (F7), a neutral nation's territory and units (F8), and a
legend for them and for the links' two styles."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from domain.ruleset import Ruleset, load_ruleset
from domain.scenario import Scenario, read_scenario, scenario_from_dict
from tests.map_svg import SVG, drawn, parsed_units
from tracker.reports.board_map import BOX_HEIGHT, board_svg, map_layout
from tracker.reports.views import board_now
from tracker.service.application import Tracker


@pytest.fixture(scope="module")
def rs() -> Ruleset:
    return load_ruleset("twtea-3e")[0]


@pytest.fixture(scope="module")
def world(rs: Ruleset) -> Scenario:
    return scenario_from_dict(read_scenario("great-war-1914")[0], "great-war-1914", rs)


@pytest.fixture(scope="module")
def north_sea(rs: Ruleset) -> Scenario:
    return scenario_from_dict(read_scenario("north-sea-1914")[0], "north-sea-1914", rs)


def boxes(svg: str) -> dict[str, ET.Element]:
    """Each zone's <g>, by its name."""
    return {g.get("data-zone", ""): g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("data-zone")}


def title(g: ET.Element) -> str:
    found = g.find(f"{SVG}title")
    return "".join(found.itertext()) if found is not None else ""


def line_of(g: ET.Element, nation: str) -> ET.Element:
    return next(t for t in g.iter(f"{SVG}text") if t.get("data-nation") == nation)


def empty_board(scenario: Scenario, **extra: Any) -> dict[str, Any]:
    return {"units": [], "ntr": {}, "owners": dict(scenario.game_map.land), **extra}


def unit(uid: str, unit_type: str, nation: str, at: str) -> dict[str, Any]:
    return {"id": uid, "type": unit_type, "nation": nation, "at": at, "damage": 0}


# ----- PU2: ports -----


def test_pu2_a_port_territory_has_an_anchor_and_no_other_zone_has_one(world: Scenario, rs: Ruleset) -> None:
    zones = boxes(board_svg(empty_board(world), world, rs))
    marked = {z for z, g in zones.items() if g.find(f"{SVG}use[@class='port']") is not None}
    assert marked == set(world.game_map.ports)
    # The scenario marks some territories not ports (East Prussia, a coast without a naval yard).
    assert "East Prussia" in world.game_map.land and "East Prussia" not in marked
    assert "Southern England" in marked
    port = zones["Southern England"].find(f"{SVG}use[@class='port']")
    assert port is not None and "PU2" in title(port), "the anchor says what it is on hover"


# ----- F7: aircraft aboard carriers -----


def test_f7_air_units_on_their_carrier_are_shown_aboard_it(north_sea: Scenario, rs: Ruleset) -> None:
    zone = "Central North Sea"
    units = [
        unit("GB-CV1", "aircraft_carrier", "Britain", zone),
        unit("GB-FT1", "fighter", "Britain", zone),
        unit("GB-BM1", "bomber", "Britain", zone),
        unit("GB-DD1", "destroyer", "Britain", zone),
    ]
    svg = board_svg(empty_board(north_sea, units=units), north_sea, rs)
    line = line_of(boxes(svg)[zone], "Britain")
    text = "".join(line.itertext())
    assert "1 CV [1 FT, 1 BM]" in text, text
    aboard = line.find(f".//{SVG}tspan[@class='aboard']")
    assert aboard is not None and "".join(aboard.itertext()) == "[1 FT, 1 BM]"
    # Every unit is still counted once.
    assert parsed_units(drawn(svg)[zone]["nations"]["Britain"]) == Counter(CV=1, FT=1, BM=1, DD=1)


def test_f7_air_units_beyond_the_carriers_room_are_in_flight_and_an_allys_are_aboard_apart(
    north_sea: Scenario, rs: Ruleset
) -> None:
    zone = "Central North Sea"
    units = [
        unit("GB-CV1", "aircraft_carrier", "Britain", zone),  # room for 2
        unit("GB-FT1", "fighter", "Britain", zone),
        unit("FR-FT1", "fighter", "France", zone),  # aboard the British carrier (friendly_carriers)
        unit("DE-FT1", "fighter", "Germany", zone),  # an enemy's: no carrier of its side
    ]
    svg = board_svg(empty_board(north_sea, units=units), north_sea, rs)
    g = boxes(svg)[zone]
    assert "".join(line_of(g, "Britain").itertext()).endswith("1 CV [1 FT]")
    assert "".join(line_of(g, "France").itertext()).endswith("[1 FT]")
    german = line_of(g, "Germany")
    assert "".join(german.itertext()).endswith("1 FT") and german.find(f".//{SVG}tspan[@class='aboard']") is None
    # A second British air unit takes the carrier's last place (a nation's own carriers hold its
    # air units first, as `next` counts them): the French fighter has none, it is in flight.
    crowded = [*units, unit("GB-BM1", "bomber", "Britain", zone)]
    g = boxes(board_svg(empty_board(north_sea, units=crowded), north_sea, rs))[zone]
    assert "".join(line_of(g, "Britain").itertext()).endswith("1 CV [1 FT, 1 BM]")
    french = line_of(g, "France")
    assert "".join(french.itertext()).endswith("1 FT") and french.find(f".//{SVG}tspan[@class='aboard']") is None


def test_f7_the_opening_carrier_of_the_north_sea_holds_its_fighter(tmp_path: Path, rs: Ruleset) -> None:
    with Tracker(str(tmp_path / "m.db")) as t:
        campaign = t.create("m", "north-sea-1914")
        svg = board_svg(board_now(campaign), campaign.scenario, campaign.ruleset)
    assert drawn(svg)["Northern North Sea"]["nations"]["Britain"].endswith("1 CV [1 FT]")


# ----- F8: neutral nations -----


def test_f8_a_neutrals_territory_and_units_are_marked_until_its_entry_round(world: Scenario, rs: Ruleset) -> None:
    assert world.nations["Italy"].entry_round == 4
    units = [
        unit("IT-BB1", "battleship", "Italy", "Tyrrhenian Sea"),
        unit("FR-BB1", "battleship", "France", "Tyrrhenian Sea"),
    ]
    # A scenario's opening board (round 1, no `neutral` key) and a campaign's in round 3.
    for board in (empty_board(world, units=units), empty_board(world, units=units, round=3, neutral=["Italy"])):
        zones = boxes(board_svg(board, world, rs))
        venetia = zones["Venetia"]
        assert "neutral" in (venetia.get("class") or "").split()
        assert "Italy: neutral until round 4 (F8)" in title(venetia)
        rect = venetia.find(f"{SVG}rect")
        assert rect is not None and rect.get("fill", "").startswith("url(#")
        assert line_of(zones["Tyrrhenian Sea"], "Italy").get("class") == "neutral"
        assert line_of(zones["Tyrrhenian Sea"], "France").get("class") is None
        assert "Italy: neutral until round 4 (F8)" in title(zones["Tyrrhenian Sea"])
        assert "neutral" not in (zones["Provence"].get("class") or "").split(), "a belligerent's is not"
    # From round 4 Italy is at war: nothing marks it (the United States still are neutral).
    zones = boxes(board_svg(empty_board(world, units=units, round=4, neutral=["United States"]), world, rs))
    assert "neutral" not in (zones["Venetia"].get("class") or "").split()
    assert "neutral" not in title(zones["Venetia"]) and "neutral" not in title(zones["Tyrrhenian Sea"])
    assert line_of(zones["Tyrrhenian Sea"], "Italy").get("class") is None
    assert "neutral" in (zones["Eastern United States"].get("class") or "").split()


def test_f8_a_new_campaigns_map_marks_its_neutrals(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "w.db")) as t:
        campaign = t.create("w", "great-war-1914")
        svg = board_svg(board_now(campaign), campaign.scenario, campaign.ruleset)
    neutral = {z for z, g in boxes(svg).items() if "neutral" in (g.get("class") or "").split()}
    owners = campaign.scenario.game_map.land
    assert neutral == {z for z, n in owners.items() if n in ("Italy", "United States", "Ottoman Empire")}


# ----- the legend -----


def test_the_map_has_a_legend_below_its_zones(world: Scenario, north_sea: Scenario, rs: Ruleset) -> None:
    for scenario in (world, north_sea):
        svg = board_svg(empty_board(scenario), scenario, rs)
        root = ET.fromstring(svg)
        legends = [g for g in root.iter(f"{SVG}g") if g.get("class") == "map-legend"]
        assert len(legends) == 1
        said = " ".join("".join(t.itertext()) for t in legends[0].iter(f"{SVG}text"))
        # An empty board draws links and ports; aboard and damaged are named only where drawn.
        for meaning in ("sea zone to sea zone", "coast or land border", "port"):
            assert meaning in said, meaning
        for meaning in ("aboard", "damaged"):
            assert meaning not in said, meaning
        assert legends[0].find(f"{SVG}line[@stroke-dasharray]") is not None, "a dashed line's sample"
        layout = map_layout(scenario)
        lowest = max(y for _, y in layout.positions.values()) + BOX_HEIGHT / 2
        assert lowest < layout.legend_y < layout.height, "below every zone, inside the drawing"
