"""The built-in ruleset carries the numbers of RULES.md, and a bad ruleset file is refused clearly."""

from __future__ import annotations

import copy
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from domain.errors import DataFileError, InputError
from domain.ruleset import AMENDED, Ruleset, load_ruleset, read_builtin_or_file, read_toml, ruleset_from_dict

ADV_SUB = frozenset({"advanced_submarine"})
ADV_ASW = frozenset({"advanced_asw"})


@pytest.fixture(scope="module")
def loaded() -> tuple[Ruleset, dict[str, Any]]:
    return load_ruleset("twtea-3e")


@pytest.fixture(scope="module")
def rs(loaded: tuple[Ruleset, dict[str, Any]]) -> Ruleset:
    return loaded[0]


@pytest.fixture
def raw(loaded: tuple[Ruleset, dict[str, Any]]) -> dict[str, Any]:
    """A private copy of the built-in raw data, safe to break."""
    return copy.deepcopy(loaded[1])


def refused(data: dict[str, Any], key: str, problem: str) -> DataFileError:
    """Parse `data` as my.toml and expect a DataFileError naming the file, the key path and the problem."""
    with pytest.raises(DataFileError, match=re.escape(f"my.toml: {key}: ") + problem) as info:
        ruleset_from_dict(data, "my.toml")
    assert info.value.source == "my.toml"
    assert info.value.key == key
    return info.value


# ----- loading -----


def test_builtin_ruleset_loads_as_ruleset_and_raw_data(loaded: tuple[Ruleset, dict[str, Any]]) -> None:
    rs, raw = loaded
    assert isinstance(rs, Ruleset)
    assert rs.name == "twtea-3e"
    assert isinstance(raw, dict)
    assert raw["ruleset"]["name"] == "twtea-3e"


def test_raw_data_of_builtin_ruleset_parses_again_to_the_same_ruleset(loaded: tuple[Ruleset, dict[str, Any]]) -> None:
    rs, raw = loaded
    again = ruleset_from_dict(copy.deepcopy(raw), "copy")
    assert again == rs
    assert again.content_hash == rs.content_hash


def test_unknown_ruleset_name_is_an_input_error_listing_the_builtins() -> None:
    with pytest.raises(InputError, match="twtea-3e"):
        load_ruleset("no-such-ruleset")


def test_ruleset_file_on_disk_replaces_builtin_numbers(tmp_path) -> None:
    text = resources.files("domain.data").joinpath("rulesets/twtea-3e.toml").read_text(encoding="utf-8")
    assert "cost = 10\nsuccess_min = 9" in text
    house = tmp_path / "house.toml"
    house.write_text(text.replace("cost = 10\nsuccess_min = 9", "cost = 15\nsuccess_min = 8"), encoding="utf-8")
    rs, raw = load_ruleset(str(house))
    assert (rs.research_cost, rs.research_success_min) == (15, 8)
    assert raw["research"]["cost"] == 15


# ----- numbers from RULES.md -----


def test_d1_every_roll_kind_is_a_d10(rs: Ruleset) -> None:
    assert rs.default_faces == 10
    for kind in ("merchant_defence", "convoy_search", "convoy_table", "interception_search", "asw_search", "research"):
        assert rs.faces_for(kind) == 10


def test_f1_unit_types_and_categories(rs: Ruleset) -> None:
    naval = {"submarine", "destroyer", "cruiser", "battleship", "aircraft_carrier", "transport"}
    air = {"fighter", "bomber", "transport_plane"}
    assert set(rs.units) == naval | air
    assert {n for n, u in rs.units.items() if u.is_naval} == naval
    assert {n for n, u in rs.units.items() if u.is_air} == air


def test_f2_escorts_are_destroyers_and_cruisers_and_capitals_are_battleships_and_carriers(rs: Ruleset) -> None:
    assert {n for n, u in rs.units.items() if u.unit_class == "escort"} == {"destroyer", "cruiser"}
    assert {n for n, u in rs.units.items() if u.unit_class == "capital"} == {"battleship", "aircraft_carrier"}
    assert rs.units["submarine"].is_submarine


F4_TABLE = {
    # unit: (attack, defense, move/range, hits, cost)
    "submarine": (4, 3, 2, 1, 6),
    "destroyer": (3, 3, 3, 1, 8),
    "cruiser": (5, 5, 3, 1, 12),
    "battleship": (7, 7, 2, 2, 20),
    "aircraft_carrier": (2, 4, 2, 2, 16),
    "transport": (0, 0, 2, 1, 7),
    "fighter": (5, 6, 4, 1, 10),
    "bomber": (6, 2, 6, 1, 12),
    "transport_plane": (0, 0, 6, 1, 8),
}


@pytest.mark.parametrize("unit", sorted(F4_TABLE))
def test_f4_unit_values_match_the_rules_table(rs: Ruleset, unit: str) -> None:
    u = rs.unit(unit)
    assert (u.attack, u.defense, u.move, u.hits, u.cost) == F4_TABLE[unit]


def test_f3_only_battleships_and_carriers_take_two_hits(rs: Ruleset) -> None:
    assert {n for n, u in rs.units.items() if u.hits == 2} == {"battleship", "aircraft_carrier"}


def test_unknown_unit_type_lookup_is_an_input_error(rs: Ruleset) -> None:
    with pytest.raises(InputError, match="unknown unit type 'zeppelin'"):
        rs.unit("zeppelin")


def test_cv3_convoy_search_values(rs: Ruleset) -> None:
    searching = {n: u.search["convoy"] for n, u in rs.units.items() if u.search["convoy"]}
    assert searching == {"battleship": 2, "destroyer": 4, "cruiser": 4, "bomber": 2, "fighter": 1}


def test_sm3_interception_search_is_two_for_destroyers_and_cruisers_only(rs: Ruleset) -> None:
    searching = {n: u.search["interception"] for n, u in rs.units.items() if u.search["interception"]}
    assert searching == {"destroyer": 2, "cruiser": 2}


def test_as2_asw_search_is_two_for_escorts_and_three_for_bombers_and_transport_planes(rs: Ruleset) -> None:
    searching = {n: u.search["asw"] for n, u in rs.units.items() if u.search["asw"]}
    assert searching == {"destroyer": 2, "cruiser": 2, "bomber": 3, "transport_plane": 3}


def test_as4_escorts_attack_submarines_at_two(rs: Ruleset) -> None:
    attacking = {n: u.asw_attack for n, u in rs.units.items() if u.asw_attack}
    assert attacking == {"destroyer": 2, "cruiser": 2}


def test_sm1_warships_make_zones_hostile_but_submarines_and_transports_do_not(rs: Ruleset) -> None:
    assert {n for n, u in rs.units.items() if u.hostile} == {"destroyer", "cruiser", "battleship", "aircraft_carrier"}


@pytest.mark.parametrize(
    ("value", "destroyed"),
    [(1, 0), (3, 0), (4, 1), (6, 1), (7, 2), (8, 2), (9, 3), (10, 3)],
)
def test_cv5_convoy_table_boundaries(rs: Ruleset, value: int, destroyed: int) -> None:
    assert rs.convoy_result(value) == destroyed


def test_cv5_convoy_table_covers_one_to_ten(rs: Ruleset) -> None:
    assert [(r.low, r.high, r.destroyed) for r in rs.convoy_table] == [(1, 3, 0), (4, 6, 1), (7, 8, 2), (9, 10, 3)]


def test_cv2_merchant_defence_rolls_two_dice_and_sinks_on_twenty(rs: Ruleset) -> None:
    assert rs.merchant_defence_dice == 2
    assert rs.merchant_defence_sinks_on_total == 20
    assert rs.faces_for("merchant_defence") == 10


def test_nc2_each_escort_cancels_one_submarine_opening_fire(rs: Ruleset) -> None:
    assert rs.opening_fire_cancelled_per_escort == 1


def test_te1_research_costs_ten_and_succeeds_on_nine_or_more_once_per_turn(rs: Ruleset) -> None:
    assert rs.research_cost == 10
    assert rs.research_success_min == 9
    assert rs.research_rolls_per_turn == 1
    assert set(rs.technologies) == {"advanced_submarine", "advanced_asw"}


def test_te2_technology_has_three_levels_and_head_start_up_to_two(rs: Ruleset) -> None:
    assert rs.research_levels == 3
    assert rs.max_head_start == 2


def test_t2_phase_order(rs: Ruleset) -> None:
    assert rs.phases == (
        "research",
        "purchase",
        "combat_movement",
        "naval_combat",
        "land_combat",
        "noncombat_movement",
        "placement",
        "collect_resources",
    )


def test_ha2_submarines_cannot_hit_aircraft_and_ha1_escorts_screen(rs: Ruleset) -> None:
    assert rs.submarine_can_hit_air is False
    assert rs.submarine_targets_surface_first is True
    assert rs.screening_classes == ("escort",)


def test_ha5_ha6_hit_priorities(rs: Ruleset) -> None:
    assert rs.hit_priority["capital"] == (("capital",), ("escort",), ("transport",))
    assert rs.hit_priority["escort"] == (("escort",), ("capital",), ("transport",))


# ----- technology modifiers (TE3-TE5) -----


def rules_of(applied) -> list[str]:
    return [m.rule for m in applied]


def test_modified_without_technology_keeps_base_value(rs: Ruleset) -> None:
    assert rs.modified("asw_search", "destroyer", 2) == (2, [])
    assert rs.modified("convoy_table", "submarine", 7) == (7, [])


@pytest.mark.parametrize("roll", ["submarine_attack", "submarine_defense", "convoy_table"])
def test_te3_advanced_submarine_adds_one_to_its_own_rolls(rs: Ruleset, roll: str) -> None:
    value, applied = rs.modified(roll, "submarine", 3, actor_techs=ADV_SUB)
    assert value == 4
    assert rules_of(applied) == ["TE3"]
    assert applied[0].as_dict() == {
        "rule": "TE3",
        "technology": "advanced_submarine",
        "holder": "actor",
        "set": None,
        "add": 1,
    }


@pytest.mark.parametrize(
    ("roll", "unit", "base"),
    [
        ("convoy_search", "destroyer", 4),  # CV3
        ("convoy_search", "battleship", 2),  # CV3
        ("convoy_search", "fighter", 1),  # CV3
        ("convoy_attack", "cruiser", 5),  # CV4
        ("interception_search", "destroyer", 2),  # SM3
        ("asw_search", "cruiser", 2),  # AS2
        ("asw_search", "bomber", 3),  # AS2
        ("asw_attack", "destroyer", 2),  # AS4
    ],
)
def test_te3_rolls_against_advanced_submarines_are_one_less(rs: Ruleset, roll: str, unit: str, base: int) -> None:
    value, applied = rs.modified(roll, unit, base, target_techs=ADV_SUB)
    assert value == base - 1
    assert rules_of(applied) == ["TE3"]
    assert applied[0].holder == "target"


def test_te3_applies_only_when_the_submarines_hold_it(rs: Ruleset) -> None:
    # The searching nation having Advanced Submarine does not weaken its own search.
    assert rs.modified("asw_search", "destroyer", 2, actor_techs=ADV_SUB) == (2, [])
    # Submarines without the technology get no bonus even if their target has it.
    assert rs.modified("submarine_attack", "submarine", 4, target_techs=ADV_SUB) == (4, [])


@pytest.mark.parametrize("unit", ["destroyer", "cruiser"])
@pytest.mark.parametrize("roll", ["interception_search", "asw_search", "asw_attack"])
def test_te4_advanced_asw_escorts_search_and_attack_at_three(rs: Ruleset, unit: str, roll: str) -> None:
    value, applied = rs.modified(roll, unit, 2, actor_techs=ADV_ASW)
    assert value == 3
    assert rules_of(applied) == ["TE4"]
    assert applied[0].set_to == 3


@pytest.mark.parametrize("unit", ["fighter", "bomber", "transport_plane"])
@pytest.mark.parametrize("roll", ["interception_search", "asw_search", "asw_attack"])
def test_te4_advanced_asw_air_units_search_and_attack_at_four(rs: Ruleset, unit: str, roll: str) -> None:
    value, applied = rs.modified(roll, unit, rs.unit(unit).search["asw"], actor_techs=ADV_ASW)
    assert value == 4
    assert rules_of(applied) == ["TE4"]


@pytest.mark.parametrize(
    ("unit", "base"), [("destroyer", 4), ("cruiser", 4), ("battleship", 2), ("fighter", 1), ("bomber", 2)]
)
def test_te4_advanced_asw_adds_one_to_convoy_search(rs: Ruleset, unit: str, base: int) -> None:
    assert rs.unit(unit).search["convoy"] == base
    value, applied = rs.modified("convoy_search", unit, base, actor_techs=ADV_ASW)
    assert value == base + 1
    assert rules_of(applied) == ["TE4"]


def test_te4_does_not_help_submarines(rs: Ruleset) -> None:
    assert rs.modified("submarine_attack", "submarine", 4, actor_techs=ADV_ASW) == (4, [])


def test_te5_advanced_asw_escort_searching_for_advanced_submarines_rolls_at_two(rs: Ruleset) -> None:
    value, applied = rs.modified("asw_search", "destroyer", 2, actor_techs=ADV_ASW, target_techs=ADV_SUB)
    assert value == 2
    assert rules_of(applied) == ["TE4", "TE3"]  # the set applies before the add


def test_te5_stacking_for_air_units_and_convoy_search(rs: Ruleset) -> None:
    assert rs.modified("asw_attack", "bomber", 0, actor_techs=ADV_ASW, target_techs=ADV_SUB)[0] == 3
    assert rs.modified("convoy_search", "destroyer", 4, actor_techs=ADV_ASW, target_techs=ADV_SUB)[0] == 4


# ----- bad ruleset files -----


def test_unknown_key_at_top_level_is_refused(raw: dict[str, Any]) -> None:
    raw["ruelset"] = {"name": "typo"}
    refused(raw, "ruelset", "unknown key")


def test_unknown_key_inside_a_unit_is_refused(raw: dict[str, Any]) -> None:
    raw["units"]["destroyer"]["atack"] = 3
    refused(raw, "units.destroyer.atack", "unknown key")


def test_unknown_key_inside_research_is_refused(raw: dict[str, Any]) -> None:
    raw["research"]["succes_min"] = 8
    refused(raw, "research.succes_min", "unknown key")


def test_string_where_an_integer_belongs_is_refused(raw: dict[str, Any]) -> None:
    raw["units"]["destroyer"]["attack"] = "3"
    refused(raw, "units.destroyer.attack", "expected an integer, got a string")


def test_boolean_where_an_integer_belongs_is_refused(raw: dict[str, Any]) -> None:
    raw["research"]["cost"] = True
    refused(raw, "research.cost", "expected an integer, got a boolean")


def test_negative_attack_is_out_of_range(raw: dict[str, Any]) -> None:
    raw["units"]["submarine"]["attack"] = -1
    refused(raw, "units.submarine.attack", r"value -1 is out of range \(minimum 0\)")


def test_zero_hits_is_out_of_range(raw: dict[str, Any]) -> None:
    raw["units"]["battleship"]["hits"] = 0
    refused(raw, "units.battleship.hits", r"value 0 is out of range \(minimum 1\)")


def test_negative_search_value_is_out_of_range(raw: dict[str, Any]) -> None:
    raw["units"]["destroyer"]["search"]["convoy"] = -2
    refused(raw, "units.destroyer.search.convoy", r"value -2 is out of range \(minimum 0\)")


def test_research_success_above_the_die_is_out_of_range(raw: dict[str, Any]) -> None:
    raw["research"]["success_min"] = 11
    refused(raw, "research.success_min", r"value 11 is out of range \(maximum 10\)")


def test_unknown_unit_category_is_refused(raw: dict[str, Any]) -> None:
    raw["units"]["destroyer"]["category"] = "space"
    refused(raw, "units.destroyer.category", "'space' is not one of naval, air")


def test_missing_required_key_is_refused(raw: dict[str, Any]) -> None:
    del raw["units"]["cruiser"]["cost"]
    refused(raw, "units.cruiser.cost", "missing required key")


def test_modifier_referring_to_unknown_unit_is_refused(raw: dict[str, Any]) -> None:
    raw["modifiers"][0]["units"] = ["submarine", "uboat"]
    refused(raw, "modifiers[0].units", "reference to unknown unit 'uboat'")


def test_modifier_naming_unknown_technology_is_refused(raw: dict[str, Any]) -> None:
    raw["modifiers"][2]["technology"] = "death_ray"
    refused(raw, "modifiers[2].technology", "unknown technology 'death_ray'")


def test_modifier_naming_unknown_roll_is_refused(raw: dict[str, Any]) -> None:
    raw["modifiers"][1]["rolls"] = ["asw_search", "torpedo_spread"]
    refused(raw, "modifiers[1].rolls", "unknown roll 'torpedo_spread'")


def test_modifier_without_effect_is_refused(raw: dict[str, Any]) -> None:
    raw["modifiers"][0]["add"] = 0
    refused(raw, "modifiers[0].add", "a modifier needs 'set' or a non-zero 'add'")


def test_convoy_table_with_a_gap_is_refused(raw: dict[str, Any]) -> None:
    raw["convoy"]["table"].pop()  # 9..10 no longer covered
    refused(raw, "convoy.table", r"rows must cover 1\.\.10 exactly once")


def test_convoy_table_with_overlapping_rows_is_refused(raw: dict[str, Any]) -> None:
    raw["convoy"]["table"][1]["from"] = 3  # 3 in two rows
    refused(raw, "convoy.table", r"rows must cover 1\.\.10 exactly once")


def test_convoy_table_row_beyond_the_die_is_refused(raw: dict[str, Any]) -> None:
    raw["convoy"]["table"][3]["to"] = 11
    refused(raw, "convoy.table[3].to", r"value 11 is out of range \(maximum 10\)")


def test_unknown_phase_is_refused(raw: dict[str, Any]) -> None:
    raw["turn"]["phases"].append("diplomacy")
    refused(raw, "turn.phases", "unknown phase 'diplomacy'")


def test_duplicate_phase_is_refused(raw: dict[str, Any]) -> None:
    raw["turn"]["phases"].append("research")
    refused(raw, "turn.phases", "a phase is listed twice")


def test_t2_a_turn_without_phases_is_refused(raw: dict[str, Any]) -> None:
    raw["turn"]["phases"] = []
    refused(raw, "turn.phases", r"a turn needs at least one phase \(T2\)")


def test_unknown_roll_kind_for_dice_faces_is_refused(raw: dict[str, Any]) -> None:
    raw["dice"]["faces"]["tiddlywinks"] = 6
    refused(raw, "dice.faces.tiddlywinks", "unknown roll kind")


def test_head_start_at_or_above_levels_is_refused(raw: dict[str, Any]) -> None:
    raw["research"]["max_head_start"] = 3
    refused(raw, "research.max_head_start", r"value 3 is out of range \(maximum 2\)")


def test_two_unit_types_sharing_an_abbreviation_are_refused(raw: dict[str, Any]) -> None:
    raw["units"]["cruiser"]["abbr"] = "DD"
    # The type whose abbr repeats another's is named, with the other: "units" alone named neither.
    refused(raw, "units.cruiser.abbr", re.escape("'DD' is destroyer's abbr too: each type needs its own"))


def test_air_unit_of_a_naval_class_is_refused(raw: dict[str, Any]) -> None:
    raw["units"]["fighter"]["class"] = "escort"
    refused(raw, "units.fighter.class", "air units must be of class 'air'")


def test_invalid_toml_file_is_a_data_file_error_naming_the_file(tmp_path) -> None:
    bad = tmp_path / "broken.toml"
    bad.write_text('[ruleset]\nname = "unterminated\n', encoding="utf-8")
    with pytest.raises(DataFileError, match=re.escape(str(bad)) + ": not valid TOML") as info:
        read_toml(bad)
    assert info.value.source == str(bad)


def test_invalid_toml_user_ruleset_is_refused_by_load_ruleset(tmp_path) -> None:
    bad = tmp_path / "broken.toml"
    bad.write_text("units = [[[\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=re.escape(str(bad))):
        load_ruleset(str(bad))


def test_user_ruleset_file_errors_name_the_file_path(tmp_path) -> None:
    text = resources.files("domain.data").joinpath("rulesets/twtea-3e.toml").read_text(encoding="utf-8")
    house = tmp_path / "house.toml"
    house.write_text(text.replace("default_faces = 10", "default_faces = 10\nfaecs = 6"), encoding="utf-8")
    line = text[: text.index("default_faces = 10")].count("\n") + 2
    with pytest.raises(DataFileError, match=re.escape(f"{house}:{line}: dice.faecs: unknown key")):
        load_ruleset(str(house))


def test_missing_toml_file_is_an_input_error(tmp_path) -> None:
    missing = tmp_path / "nowhere.toml"
    with pytest.raises(InputError, match=re.escape(f"{missing}: no such file")) as info:
        read_toml(missing)
    assert not isinstance(info.value, DataFileError)


def test_every_ruleset_integer_fits_a_database_integer_naming_the_key() -> None:
    data = copy.deepcopy(read_builtin_or_file("rulesets", "twtea-3e")[0])
    data["ruleset"]["version"] = 2**63
    with pytest.raises(DataFileError) as info:
        ruleset_from_dict(data, "house.toml")
    assert str(info.value) == f"house.toml: ruleset.version: value {2**63} is out of range (maximum {2**31 - 1})"


@pytest.mark.parametrize("key", list(AMENDED))
def test_a_ruleset_file_without_an_amended_key_plays_the_rule_as_it_stands(tmp_path: Path, key: str) -> None:
    """HA7, CV4, NC1, F7, SM1, PU2, F8, CV3, RK3, PL2, F5, NC4, D3: a house ruleset written before
    a rule was amended (without its key) plays the rule as it stands, and a new campaign records
    the key so (a campaign recorded before keeps the rule it was refereed by)."""
    table, now, _ = AMENDED[key]
    source = tmp_path / "house.toml"
    text = Path(__file__).parent.parent.joinpath("domain", "data", "rulesets", "twtea-3e.toml").read_text()
    line = re.compile(rf"^{key} = .*\n", re.MULTILINE)
    assert len(line.findall(text)) == 1, f"{key} is written once in the built-in ruleset"
    source.write_text(line.sub("", text))
    assert key not in read_toml(source)[table]
    ruleset, data = load_ruleset(str(source))
    field = "hit_placement" if key == "placement" else key  # HA7's field is named for its table
    assert getattr(ruleset, field) == now and data[table][key] == now
