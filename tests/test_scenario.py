"""The built-in scenario is a playable board, and a bad scenario file is refused with its key path."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from domain.errors import DataFileError, InputError
from domain.ruleset import Ruleset, load_ruleset
from domain.scenario import Scenario, read_scenario, scenario_from_dict


@pytest.fixture(scope="module")
def rs() -> Ruleset:
    return load_ruleset("twtea-3e")[0]


@pytest.fixture(scope="module")
def loaded() -> tuple[dict[str, Any], str]:
    return read_scenario("north-sea-1914")


@pytest.fixture(scope="module")
def sc(loaded: tuple[dict[str, Any], str], rs: Ruleset) -> Scenario:
    data, source = loaded
    return scenario_from_dict(data, source, rs)


@pytest.fixture
def raw(loaded: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """A private copy of the built-in raw data, safe to break."""
    return copy.deepcopy(loaded[0])


def group_index(data: dict[str, Any], nation: str, unit_type: str) -> int:
    """Position of a starting unit group in the [[units]] list (for the `units[i]` key path)."""
    for i, group in enumerate(data["units"]):
        if group["nation"] == nation and group["type"] == unit_type:
            return i
    raise AssertionError(f"no {nation} {unit_type} group in the scenario")


def refused(data: dict[str, Any], rs: Ruleset, key: str, problem: str) -> DataFileError:
    """Validate `data` as sc.toml and expect a DataFileError naming the file, the key path and the problem."""
    with pytest.raises(DataFileError, match=re.escape(f"sc.toml: {key}: ") + problem) as info:
        scenario_from_dict(data, "sc.toml", rs)
    assert info.value.key == key
    return info.value


# ----- the built-in scenario -----


def test_builtin_scenario_reads_with_its_name_as_source(loaded: tuple[dict[str, Any], str]) -> None:
    data, source = loaded
    assert source == "north-sea-1914"
    assert data["scenario"]["ruleset"] == "twtea-3e"


def test_unknown_scenario_is_an_input_error_listing_the_builtins() -> None:
    with pytest.raises(InputError, match="north-sea-1914"):
        read_scenario("baltic-1916")


def test_builtin_scenario_has_enough_map(sc: Scenario) -> None:
    assert len(sc.game_map.sea) >= 8
    assert len(sc.game_map.land) >= 4
    assert not sc.game_map.sea & set(sc.game_map.land)


def test_f5_builtin_scenario_has_two_sides_and_four_nations(sc: Scenario) -> None:
    assert len(sc.nations) == 4
    assert len({n.side for n in sc.nations.values()}) == 2
    assert sc.turn_order == ("Germany", "Britain", "Austria-Hungary", "France")
    assert sc.are_enemies("Germany", "Britain")
    assert sc.are_enemies("France", "Austria-Hungary")
    assert not sc.are_enemies("Germany", "Austria-Hungary")
    assert not sc.are_enemies("Britain", "France")


def test_f1_builtin_scenario_has_every_kind_of_force(sc: Scenario, rs: Ruleset) -> None:
    classes = {rs.units[g.type].unit_class for g in sc.units}
    assert {"submarine", "escort", "capital", "transport", "air"} <= classes
    types = {g.type for g in sc.units}
    assert {"submarine", "destroyer", "battleship", "aircraft_carrier", "transport", "fighter", "bomber"} <= types


def test_both_sides_have_submarines_and_escorts(sc: Scenario, rs: Ruleset) -> None:
    for side in {n.side for n in sc.nations.values()}:
        classes = {rs.units[g.type].unit_class for g in sc.units if sc.side_of(g.nation) == side}
        assert {"submarine", "escort"} <= classes, side


def test_adjacency_is_symmetric(sc: Scenario) -> None:
    game_map = sc.game_map
    for zone, neighbours in game_map.adjacency.items():
        assert neighbours, f"{zone} is adjacent to nothing"
        for other in neighbours:
            assert game_map.adjacent(other, zone), f"{other} -> {zone} missing"


def test_adjacency_listed_once_holds_both_ways(sc: Scenario) -> None:
    # The file lists Skagerrak -> Heligoland Bight only under Skagerrak.
    assert sc.game_map.adjacent("Heligoland Bight", "Skagerrak")
    assert sc.game_map.adjacent("Skagerrak", "Heligoland Bight")
    assert not sc.game_map.adjacent("Heligoland Bight", "Dover Strait")


@pytest.mark.parametrize(
    ("start", "goal", "steps"),
    [
        ("Heligoland Bight", "Heligoland Bight", 0),
        ("Flanders", "Northern France", 1),
        ("Heligoland Bight", "Dover Strait", 2),
        ("Flanders", "Northern North Sea", 3),
        ("Heligoland Bight", "Bay of Biscay", 4),
        ("Northern Germany", "Western Approaches", 4),
    ],
)
def test_f7_distance_counts_map_steps_over_sea_and_land(sc: Scenario, start: str, goal: str, steps: int) -> None:
    assert sc.game_map.distance(start, goal) == steps
    assert sc.game_map.distance(goal, start) == steps


def test_distance_to_an_unknown_place_is_none(sc: Scenario) -> None:
    assert sc.game_map.distance("Skagerrak", "Atlantis") is None


def test_land_territories_have_owners(sc: Scenario) -> None:
    assert sc.game_map.land["England"] == "Britain"
    assert sc.game_map.land["Flanders"] == "Germany"
    assert sc.game_map.is_land("Brittany")
    assert sc.game_map.is_sea("Irish Sea")


def test_te2_head_starts_and_f6_trade_of_builtin_scenario(sc: Scenario) -> None:
    assert sc.nations["Germany"].tech == {"advanced_submarine": 1}
    assert sc.nations["Britain"].tech == {"advanced_asw": 1}
    assert sc.nations["Britain"].ntr["Central North Sea"] == 3
    assert sc.nations["Britain"].ntr_max["Central North Sea"] == 4
    # Without ntr_max a nation may hold as many NTR as it starts with.
    assert sc.nations["France"].ntr_max == sc.nations["France"].ntr


def test_carrier_may_hold_its_aircraft_at_sea(sc: Scenario) -> None:
    at_sea = [g for g in sc.units if g.type == "fighter" and sc.game_map.is_sea(g.at)]
    assert [(g.nation, g.at) for g in at_sea] == [("Britain", "Northern North Sea")]


# ----- bad scenarios -----


def test_unknown_zone_in_an_adjacency_list_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["map"]["sea"]["Northern North Sea"]["adjacent"].append("North Sea")
    refused(raw, rs, "map.sea.Northern North Sea.adjacent", "unknown zone 'North Sea' in adjacency list")


def test_zone_adjacent_to_itself_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["map"]["land"]["England"]["adjacent"] = ["England"]
    refused(raw, rs, "map.land.England.adjacent", "a zone cannot be adjacent to itself")


def test_land_owned_by_unknown_nation_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["map"]["land"]["Brittany"]["owner"] = "Spain"
    refused(raw, rs, "map.land.Brittany.owner", "unknown nation 'Spain'")


def test_naval_unit_placed_on_land_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    i = group_index(raw, "Germany", "destroyer")
    raw["units"][i]["at"] = "Northern Germany"
    refused(raw, rs, f"units[{i}].at", r"naval unit destroyer cannot start on land \(Northern Germany\)")


def test_air_unit_in_a_territory_of_the_other_side_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    i = group_index(raw, "Germany", "bomber")
    raw["units"][i]["at"] = "England"
    refused(raw, rs, f"units[{i}].at", "air unit cannot start in England, a territory of the other side")


def test_air_unit_in_an_allied_territory_is_accepted(raw: dict[str, Any], rs: Ruleset) -> None:
    i = group_index(raw, "Britain", "bomber")
    raw["units"][i]["at"] = "Northern France"
    sc = scenario_from_dict(raw, "sc.toml", rs)
    assert sc.units[i].at == "Northern France"


def test_f7_air_units_at_sea_without_a_carrier_are_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    i = group_index(raw, "Germany", "fighter")
    raw["units"][i]["at"] = "Heligoland Bight"
    at_sea = r"1 Germany air unit at sea in Heligoland Bight but carriers of its side there hold 0 \(F7\)"
    refused(raw, rs, f"units[{i}].at", at_sea)


def test_f7_air_units_at_sea_beyond_carrier_capacity_are_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    i = group_index(raw, "Britain", "fighter")
    raw["units"][i]["count"] = 2  # the carrier holds 2: accepted
    scenario_from_dict(copy.deepcopy(raw), "sc.toml", rs)
    raw["units"][i]["count"] = 3
    at_sea = r"3 Britain air units at sea in Northern North Sea but carriers of its side there hold 2"
    refused(raw, rs, f"units[{i}].at", at_sea)


def test_f7_an_allied_carrier_carries_another_nations_aircraft(raw: dict[str, Any], rs: Ruleset) -> None:
    i = group_index(raw, "France", "bomber")
    raw["units"][i]["at"] = "Northern North Sea"  # beside the British carrier, with room for one
    scenario_from_dict(copy.deepcopy(raw), "sc.toml", rs)
    raw["units"][i]["count"] = 2
    over = r"3 air units of France's side at sea in Northern North Sea \(Britain 1, France 2\) but carriers"
    refused(raw, rs, f"units[{i}].at", over)


@pytest.mark.parametrize("count", [0, -1])
def test_unit_count_below_one_is_refused(raw: dict[str, Any], rs: Ruleset, count: int) -> None:
    raw["units"][0]["count"] = count
    refused(raw, rs, "units[0].count", rf"value {count} is out of range \(minimum 1\)")


def test_unit_count_that_is_not_an_integer_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["units"][1]["count"] = "three"
    refused(raw, rs, "units[1].count", "expected an integer, got a string")


def test_unknown_unit_type_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["units"][4]["type"] = "zeppelin"
    refused(raw, rs, "units[4].type", "reference to unknown unit 'zeppelin'")


def test_unknown_nation_in_units_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["units"][2]["nation"] = "Russia"
    refused(raw, rs, "units[2].nation", "unknown nation 'Russia'")


def test_unknown_zone_in_units_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["units"][3]["at"] = "Baltic Sea"
    refused(raw, rs, "units[3].at", "unknown zone 'Baltic Sea'")


def test_unknown_key_in_a_unit_group_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["units"][5]["cuont"] = 2
    refused(raw, rs, "units[5].cuont", "unknown key")


def test_duplicate_nation_code_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["France"]["code"] = "GB"
    refused(raw, rs, "nations.France.code", "two nations share a code")


def test_nation_on_two_sides_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["sides"]["Entente"].append("Germany")
    refused(raw, rs, "sides.Entente", "nation 'Germany' is on two sides")


def test_nation_on_no_side_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["sides"]["Entente"].remove("France")
    refused(raw, rs, "nations.France", r"nation is on no side \(see \[sides\]\)")


def test_turn_order_missing_a_nation_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["scenario"]["turn_order"].remove("France")
    refused(raw, rs, "scenario.turn_order", "must list every nation exactly once")


def test_turn_order_listing_a_nation_twice_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["scenario"]["turn_order"][3] = "Germany"
    refused(raw, rs, "scenario.turn_order", "must list every nation exactly once")


@pytest.mark.parametrize(
    ("where", "typed", "key", "problem"),
    [
        (
            "ntr",
            "heligoland bigth",
            "nations.Germany.ntr.heligoland bigth",
            "unknown zone (did you mean 'Heligoland Bight'?)",
        ),
        (
            "at",
            "Heligoland Bigth",
            "units[{i}].at",
            "unknown zone 'Heligoland Bigth' (did you mean 'Heligoland Bight'?)",
        ),
        ("nation", "Germny", "units[{i}].nation", "unknown nation 'Germny' (did you mean 'Germany'?)"),
        (
            "type",
            "submarin",
            "units[{i}].type",
            "reference to unknown unit 'submarin' (did you mean 'submarine'?) (known: ",
        ),
        ("key", "cuont", "units[{i}].cuont", "unknown key (did you mean 'count'?)"),
    ],
)
def test_a_mistyped_name_is_refused_naming_the_one_it_looks_like(
    raw: dict[str, Any], rs: Ruleset, where: str, typed: str, key: str, problem: str
) -> None:
    i = group_index(raw, "Germany", "submarine")
    if where == "ntr":
        raw["nations"]["Germany"]["ntr"] = {typed: 1}
    elif where == "key":
        raw["units"][i][typed] = 2
    else:
        raw["units"][i][where] = typed
    refused(raw, rs, key.format(i=i), re.escape(problem))


def test_a_name_like_none_known_is_refused_without_a_guess(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["units"][3]["at"] = "Pacific"
    error = refused(raw, rs, "units[3].at", "unknown zone 'Pacific'")
    assert "did you mean" not in str(error)


def test_f6_ntr_in_a_land_territory_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["Britain"]["ntr"]["England"] = 1
    refused(raw, rs, "nations.Britain.ntr.England", r"NTR can only be in sea zones \(F6\)")


def test_ntr_in_an_unknown_zone_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["France"]["ntr"]["Mediterranean"] = 1
    refused(raw, rs, "nations.France.ntr.Mediterranean", "unknown zone")


def test_cv6_starting_ntr_above_ntr_max_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["Britain"]["ntr"]["Irish Sea"] = 4
    refused(raw, rs, "nations.Britain.ntr.Irish Sea", "4 is above ntr_max 3")


def test_te2_head_start_above_maximum_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["Germany"]["tech"]["advanced_submarine"] = 3
    refused(raw, rs, "nations.Germany.tech.advanced_submarine", r"head start 3 is above the maximum 2 \(TE2\)")


def test_te2_head_start_of_two_is_accepted(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["Germany"]["tech"]["advanced_submarine"] = 2
    assert scenario_from_dict(raw, "sc.toml", rs).nations["Germany"].tech == {"advanced_submarine": 2}


def test_head_start_in_unknown_technology_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["France"]["tech"] = {"zeppelins": 1}
    refused(raw, rs, "nations.France.tech.zeppelins", "unknown technology")


def test_unknown_key_in_scenario_table_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["scenario"]["turns"] = 6
    refused(raw, rs, "scenario.turns", "unknown key")


def test_unknown_key_in_a_nation_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["Germany"]["incme"] = 12
    refused(raw, rs, "nations.Germany.incme", "unknown key")


def test_unknown_top_level_key_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["weather"] = {"fog": True}
    refused(raw, rs, "weather", "unknown key")


def test_zone_both_sea_and_land_is_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["map"]["land"]["Skagerrak"] = {"owner": "Germany"}
    refused(raw, rs, "map.sea.Skagerrak", "'Skagerrak' is both a sea zone and a land territory")


def test_negative_resources_are_refused(raw: dict[str, Any], rs: Ruleset) -> None:
    raw["nations"]["France"]["resources"] = -5
    refused(raw, rs, "nations.France.resources", r"value -5 is out of range \(minimum 0\)")


@pytest.mark.parametrize(
    ("path", "value", "maximum"),
    [
        (("nations", "Germany", "resources"), 2**63, "1000000"),
        (("nations", "Germany", "income"), 2**31, "1000000"),
        (("nations", "Britain", "ntr", "Central North Sea"), 10**6, "10000"),
        (("nations", "Britain", "ntr_max", "Central North Sea"), 2**40, "10000"),
    ],
)
def test_scenario_numbers_are_bounded_to_sane_maxima_naming_the_key(
    raw: dict[str, Any], rs: Ruleset, path: tuple[str, ...], value: int, maximum: str
) -> None:
    table = raw
    for key in path[:-1]:
        table = table.setdefault(key, {})
    table[path[-1]] = value
    with pytest.raises(DataFileError) as info:
        scenario_from_dict(raw, "my.toml", rs)
    assert info.value.key == ".".join(path)
    assert str(info.value) == f"my.toml: {'.'.join(path)}: value {value} is out of range (maximum {maximum})"


@pytest.mark.parametrize("value", [3, 100, 101, 10**20])
def test_te2_a_head_start_of_any_size_names_the_te2_maximum_not_a_readers_bound(
    raw: dict[str, Any], rs: Ruleset, value: int
) -> None:
    """A level of 101 was refused as "out of range (maximum 100)", a bound no rule sets, while
    100 was refused as above TE2's maximum: every level above TE2's is refused as such."""
    raw["nations"]["Germany"]["tech"] = {"advanced_asw": value}
    refused(
        raw,
        rs,
        "nations.Germany.tech.advanced_asw",
        rf"head start {value} is above the maximum {rs.max_head_start} \(TE2\)",
    )
