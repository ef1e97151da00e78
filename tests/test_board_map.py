"""The board map: scenario positions (validated), a deterministic layout without them, an SVG
that shows each zone's units and NTR, and the same map in the HTML turn report."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.errors import DataFileError
from domain.ruleset import Ruleset, load_ruleset
from domain.scenario import read_scenario, scenario_from_dict
from domain.scenario_layout import computed_positions
from tests.map_svg import SVG, assert_map_shows, drawn, parsed_units
from tests.support import contrast
from tracker.cli.commands.scenario import opening_board
from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.reports.board_map import BOX_HEIGHT, BOX_WIDTH, LAND_FILL, SEA_FILL, board_svg, map_layout
from tracker.reports.views import board_now
from tracker.service.application import Tracker


@pytest.fixture(scope="module")
def rs() -> Ruleset:
    return load_ruleset("twtea-3e")[0]


@pytest.fixture
def raw() -> dict[str, Any]:
    return copy.deepcopy(read_scenario("north-sea-1914")[0])


def without_positions(data: dict[str, Any]) -> dict[str, Any]:
    for kind in ("sea", "land"):
        for zone in data["map"][kind].values():
            zone.pop("x", None)
            zone.pop("y", None)
    return data


def assert_no_overlap(svg: str) -> None:
    boxes = [z["box"] for z in drawn(svg).values()]
    for i, (x1, y1) in enumerate(boxes):
        for x2, y2 in boxes[i + 1 :]:
            assert abs(x1 - x2) >= BOX_WIDTH or abs(y1 - y2) >= BOX_HEIGHT, "two zone boxes overlap"


# ----- positions in the scenario file -----


def test_builtin_scenario_places_every_zone(rs: Ruleset, raw: dict[str, Any]) -> None:
    sc = scenario_from_dict(raw, "north-sea-1914", rs)
    assert set(sc.game_map.positions) == set(sc.game_map.adjacency)
    assert sc.game_map.positions["Heligoland Bight"] == (840, 380)


def test_a_position_needs_both_x_and_y(rs: Ruleset, raw: dict[str, Any]) -> None:
    del raw["map"]["sea"]["Skagerrak"]["y"]
    with pytest.raises(DataFileError, match=r"sc\.toml: map\.sea\.Skagerrak\.y: missing"):
        scenario_from_dict(raw, "sc.toml", rs)


def test_positions_are_all_or_none(rs: Ruleset, raw: dict[str, Any]) -> None:
    without_positions(raw)
    raw["map"]["land"]["Flanders"].update(x=1, y=2)
    with pytest.raises(DataFileError, match=r"sc\.toml: map\.sea\.Norwegian Sea: no x and y"):
        scenario_from_dict(raw, "sc.toml", rs)


@pytest.mark.parametrize("value", ["10", 1.5, 10**6, True])
def test_a_position_must_be_a_bounded_integer(rs: Ruleset, raw: dict[str, Any], value: object) -> None:
    raw["map"]["land"]["Brittany"]["x"] = value
    with pytest.raises(DataFileError, match=r"sc\.toml: map\.land\.Brittany\.x: "):
        scenario_from_dict(raw, "sc.toml", rs)


def test_a_scenario_without_positions_still_loads(rs: Ruleset, raw: dict[str, Any]) -> None:
    assert scenario_from_dict(without_positions(raw), "sc.toml", rs).game_map.positions == {}


# ----- layout and drawing -----


def test_layout_follows_the_scenario_positions(rs: Ruleset, raw: dict[str, Any]) -> None:
    sc = scenario_from_dict(raw, "north-sea-1914", rs)
    pos = map_layout(sc).positions
    # East is right and south is down, as in the file.
    assert pos["Northern Germany"][0] > pos["England"][0]
    assert pos["Bay of Biscay"][1] > pos["Norwegian Sea"][1]


def test_layout_without_positions_is_deterministic_and_keeps_boxes_apart(rs: Ruleset, raw: dict[str, Any]) -> None:
    sc = scenario_from_dict(without_positions(raw), "sc.toml", rs)
    first, again = map_layout(sc), map_layout(scenario_from_dict(copy.deepcopy(raw), "sc.toml", rs))
    assert first == again
    assert set(first.positions) == set(sc.game_map.adjacency)
    for zone, (x, y) in first.positions.items():
        assert BOX_WIDTH / 2 <= x <= first.width - BOX_WIDTH / 2, zone
        assert BOX_HEIGHT / 2 <= y <= first.height - BOX_HEIGHT / 2, zone

    # Neighbours are drawn nearer each other than the average pair of zones.
    def dist(a: str, b: str) -> float:
        (x1, y1), (x2, y2) = first.positions[a], first.positions[b]
        return float(((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5)

    zones = list(first.positions)
    pairs = [(a, b) for i, a in enumerate(zones) for b in zones[i + 1 :]]
    linked = [dist(a, b) for a, b in pairs if sc.game_map.adjacent(a, b)]
    assert sum(linked) / len(linked) < sum(dist(a, b) for a, b in pairs) / len(pairs)


def test_without_positions_the_map_is_laid_out_as_scenario_map_draws_it(rs: Ruleset, raw: dict[str, Any]) -> None:
    sc = scenario_from_dict(without_positions(raw), "sc.toml", rs)
    computed = computed_positions(sc.game_map)
    # `tracker scenario map` draws the scenario with the computed positions put in.
    given = dataclasses.replace(sc, game_map=dataclasses.replace(sc.game_map, positions=computed))
    assert map_layout(sc) == map_layout(given)


def test_a_world_map_keeps_its_own_scale_so_its_names_stay_legible(rs: Ruleset) -> None:
    sc = scenario_from_dict(read_scenario("great-war-1914")[0], "great-war-1914", rs)
    layout = map_layout(sc)
    given = sc.game_map.positions
    (ax, ay), (bx, by) = given["Heligoland Bight"], given["Cape Horn"]
    (px, py), (qx, qy) = layout.positions["Heligoland Bight"], layout.positions["Cape Horn"]
    assert (qx - px, qy - py) == (bx - ax, by - ay), "drawn one map unit per coordinate unit"
    svg = board_svg({"units": [], "ntr": {}, "owners": dict(sc.game_map.land)}, sc, rs)
    assert_no_overlap(svg)
    root = ET.fromstring(svg)
    # The whole map is the viewBox (what shows without the viewer's script); the text keeps
    # its size in map units, so zooming in on a part makes it legible.
    assert root.get("viewBox") == f"0 0 {layout.width} {layout.height}" and layout.width > 4000
    assert root.get("font-size") == "11"
    assert map_layout(sc) is layout, "laid out once, not on every page"


def test_the_opening_board_is_drawn_zone_by_zone(tmp_path: Path, rs: Ruleset) -> None:
    with Tracker(str(tmp_path / "m.db")) as t:
        campaign = t.create("m", "north-sea-1914")
        board = board_now(campaign)
        svg = board_svg(board, campaign.scenario, campaign.ruleset)
    assert_map_shows(svg, board, campaign.scenario, rs)
    assert_no_overlap(svg)
    zones = drawn(svg)
    assert parsed_units(zones["Heligoland Bight"]["nations"]["Germany"]) == Counter(SS=3, DD=2, CA=1, BB=2)
    assert zones["Western Approaches"]["ntr"] == "GB 4"


def test_every_nations_letters_read_on_the_boxes_of_a_nine_nation_map(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "w.db")) as t:
        campaign = t.create("w", "great-war-1914")
        board = board_now(campaign)
        svg = board_svg(board, campaign.scenario, campaign.ruleset)
    root = ET.fromstring(svg)
    inks = {e.get("fill") for e in root.iter(f"{SVG}tspan") if e.get("fill")}
    # Each nation's line of units in a colour of its own: nine nations, nine colours.
    by_nation = {
        line.get("data-nation"): line.find(f"{SVG}tspan").get("fill")  # type: ignore[union-attr]
        for line in root.iter(f"{SVG}text")
        if line.get("data-nation")
    }
    assert set(by_nation) == set(campaign.scenario.turn_order)
    assert len(set(by_nation.values())) == len(by_nation), by_nation
    for paper in (SEA_FILL, LAND_FILL):
        faint = sorted(ink for ink in inks if contrast(ink, paper) < 4.5)
        assert not faint, f"text hard to read on {paper}: {faint}"


def test_names_are_escaped_in_the_svg(rs: Ruleset, raw: dict[str, Any]) -> None:
    text = json.dumps(raw).replace("Skagerrak", "Skag<&>rak")
    sc = scenario_from_dict(json.loads(text), "sc.toml", rs)
    board = {"units": [], "ntr": {}, "owners": dict(sc.game_map.land)}
    svg = board_svg(board, sc, rs, link="/zone/{zone}")
    assert "Skag&lt;&amp;&gt;rak" in svg and "<&>" not in svg
    assert "Skag<&>rak" in drawn(svg)


# ----- the HTML report -----


def test_html_turn_report_has_the_map_at_the_end_of_the_turn(tmp_path: Path, rs: Ruleset) -> None:
    db = str(tmp_path / "demo.db")
    run_demo(db, lambda line: None)
    html = CliRunner().invoke(cli, ["--db", db, "report", "--turn", "2", "--format", "html"]).stdout
    board = json.loads(CliRunner().invoke(cli, ["--db", db, "state", "--turn", "2", "--json"]).stdout)
    match = re.search(r"<svg[^>]*class=\"board-map\".*?</svg>", html, re.DOTALL)
    assert match, "the report inlines the map"
    assert f"after event {board['seq']}" in html
    with Tracker(db) as t:
        scenario = t.load(t.campaign_id("demo")).scenario
    assert_map_shows(match.group(0), board, scenario, rs)
    assert "<a " not in match.group(0), "the report's map links nowhere outside the page"


def test_a_crowded_zone_wraps_and_says_what_does_not_fit(rs: Ruleset, raw: dict[str, Any]) -> None:
    sc = scenario_from_dict(raw, "north-sea-1914", rs)
    zone = "Central North Sea"
    naval = [name for name, u in rs.units.items() if u.is_naval]
    units = [
        {"id": f"{n[:2]}-{t}", "type": t, "nation": n, "at": zone, "damage": 0} for n in sc.turn_order for t in naval
    ]
    svg = board_svg({"units": units, "ntr": {"Britain": {zone: 3}}, "owners": {}}, sc, rs)
    box = next(g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("data-zone") == zone)
    rect = box.find(f"{SVG}rect")
    assert rect is not None
    bottom = float(rect.get("y", 0)) + float(rect.get("height", 0))
    lines = box.findall(f"{SVG}text")
    assert all(float(t.get("y", 0)) <= bottom - 4 for t in lines), "no text below the box"
    assert "more line" in "".join(lines[-1].itertext())


def test_zones_whose_names_differ_only_in_punctuation_get_ids_of_their_own(rs: Ruleset, raw: dict[str, Any]) -> None:
    """ "Sea (1)" and "Sea [1]" are two zones the check passes; both were drawn as
    id="zone-sea--1-", and a page embedding the map could pick the wrong one."""
    names = {"Skagerrak": "Sea (1)", "Irish Sea": "Sea [1]", "Bay of Biscay": "Sea & 2", "English Channel": "Sea + 2"}
    text = json.dumps(raw)
    for old, new in names.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    sc = scenario_from_dict(json.loads(text), "punctuated.toml", rs)
    svg = board_svg(opening_board(sc), sc, rs)
    ids = [e.get("id") for e in ET.fromstring(svg).iter() if (e.get("id") or "").startswith("zone-")]
    assert len(ids) == len(sc.game_map.adjacency) and len(set(ids)) == len(ids), Counter(ids).most_common(3)
