"""The board map's legend names only the marks the map draws (`board_marks.marks_shown`): the
North Sea has no neutral nation, so no neutral's hatching (F8); damage (F3, NC5) and a
carrier's brackets (F7) only where a unit is damaged or aboard; NTR (F6) only where some lies.
Before, every legend named every mark, "a neutral's territory" on a map without one."""

from __future__ import annotations

import re
from typing import Any

import pytest

from domain.ruleset import Ruleset, load_ruleset
from domain.scenario import Scenario, read_scenario, scenario_from_dict
from tracker.reports.board_map import zone_contents
from tracker.reports.board_marks import MARKS, legend_height, legend_svg, marks_shown, neutral_until


@pytest.fixture(scope="module")
def rs() -> Ruleset:
    return load_ruleset("twtea-3e")[0]


def scenario(name: str, rs: Ruleset) -> Scenario:
    return scenario_from_dict(read_scenario(name)[0], name, rs)


def unit(uid: str, unit_type: str, nation: str, at: str, damage: int = 0) -> dict[str, Any]:
    return {"id": uid, "type": unit_type, "nation": nation, "at": at, "damage": damage}


def shown(sc: Scenario, rs: Ruleset, units: list[dict[str, Any]], ntr: dict[str, Any] | None = None) -> frozenset[str]:
    board = {"units": units, "ntr": ntr or {}, "owners": dict(sc.game_map.land)}
    return marks_shown(sc, zone_contents(board, sc, rs), board["owners"], neutral_until(board, sc))


def said(svg: str) -> list[str]:
    return re.findall(r'<text x="[\d.]+" y="[\d.]+">([^<]*)</text>', svg)


def test_f8_a_map_without_a_neutral_has_no_neutral_in_its_legend(rs: Ruleset) -> None:
    north_sea = scenario("north-sea-1914", rs)
    marks = shown(north_sea, rs, [unit("GB-DD1", "destroyer", "Britain", "Central North Sea")])
    assert marks == {"line", "dash", "port"}
    legend = said(legend_svg(900, 20, 0, marks))
    port = "port: new ships beside it, new aircraft on it (PU2)"
    assert legend == ["sea zone to sea zone", "coast or land border", port]
    assert not any("neutral" in text for text in legend)


def test_f8_a_map_with_neutrals_names_them(rs: Ruleset) -> None:
    world = scenario("great-war-1914", rs)
    marks = shown(world, rs, [])
    assert "neutral" in marks
    assert any("neutral" in text for text in said(legend_svg(900, 20, 0, marks)))


def test_f3_f6_f7_damage_ntr_and_carriers_are_named_where_the_map_draws_them(rs: Ruleset) -> None:
    north_sea = scenario("north-sea-1914", rs)
    zone = "Northern North Sea"
    units = [
        unit("GB-BB1", "battleship", "Britain", zone, damage=1),
        unit("GB-CV1", "aircraft_carrier", "Britain", zone),
        unit("GB-FT1", "fighter", "Britain", zone),
    ]
    marks = shown(north_sea, rs, units, {"Britain": {zone: 2}})
    assert {"damaged", "aboard", "NTR"} <= marks and "neutral" not in marks
    whole = [unit("GB-BB1", "battleship", "Britain", zone)]
    assert {"damaged", "aboard", "NTR"}.isdisjoint(shown(north_sea, rs, whole))


def test_the_band_kept_for_the_legend_holds_any_legend_of_the_map(rs: Ruleset) -> None:
    # A map's layout keeps the band for every mark; a legend of fewer marks fits in it.
    assert legend_height(400, 20, {"line"}) <= legend_height(400, 20) == legend_height(400, 20, MARKS)
    assert legend_svg(400, 20, 0, set()) == ""
