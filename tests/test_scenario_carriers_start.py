"""Air units may start aboard the carriers of their side (F7, `friendly_carriers`), not only
their own nation's; a neutral's carriers are nobody's ally's (F8); and a refusal counts what it
counts. Built on a copy of great-war-1914, where the Ottoman Empire enters in round 2 and Italy
in round 4."""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

import pytest

from domain.errors import DataFileError
from domain.ruleset import Ruleset, load_ruleset
from domain.scenario import read_scenario, scenario_from_dict, scenario_text
from domain.scenario_check import check_scenario


@pytest.fixture(scope="module")
def rs() -> Ruleset:
    return load_ruleset("twtea-3e")[0]


@pytest.fixture(scope="module")
def great_war() -> dict[str, Any]:
    return read_scenario("great-war-1914")[0]


@pytest.fixture
def raw(great_war: dict[str, Any]) -> dict[str, Any]:
    """A private copy of the built-in raw data, safe to change."""
    return copy.deepcopy(great_war)


def add(data: dict[str, Any], nation: str, unit_type: str, at: str, count: int = 1) -> int:
    """Add a starting group; its index in [[units]] (for the `units[i]` key path)."""
    data["units"].append({"nation": nation, "type": unit_type, "at": at, "count": count})
    return len(data["units"]) - 1


def refused(data: dict[str, Any], rs: Ruleset, key: str, problem: str) -> None:
    """The whole message the loader refuses `data` with, at key path `key`."""
    with pytest.raises(DataFileError, match=re.escape(f"gw.toml: {key}: {problem}") + "$") as info:
        scenario_from_dict(data, "gw.toml", rs, new_campaign=True)
    assert info.value.key == key


def test_f7_a_fighter_starts_aboard_an_allys_carrier(raw: dict[str, Any], rs: Ruleset) -> None:
    add(raw, "Austria-Hungary", "aircraft_carrier", "Ionian Sea")
    add(raw, "Germany", "fighter", "Ionian Sea")
    add(raw, "Austria-Hungary", "fighter", "Ionian Sea")
    scenario = scenario_from_dict(raw, "gw.toml", rs, new_campaign=True)
    assert sum(g.count for g in scenario.units if g.at == "Ionian Sea" and g.type == "fighter") == 2


def test_f7_an_ottoman_fighter_at_war_from_round_1_starts_aboard_the_austrian_carrier(
    raw: dict[str, Any], rs: Ruleset
) -> None:
    del raw["nations"]["Ottoman Empire"]["entry_round"]
    add(raw, "Austria-Hungary", "aircraft_carrier", "Ionian Sea")
    add(raw, "Ottoman Empire", "fighter", "Ionian Sea")
    scenario_from_dict(raw, "gw.toml", rs, new_campaign=True)


def test_f7_the_sides_carriers_are_counted_together_and_the_message_says_so(raw: dict[str, Any], rs: Ruleset) -> None:
    add(raw, "Austria-Hungary", "aircraft_carrier", "Ionian Sea")
    add(raw, "Austria-Hungary", "fighter", "Ionian Sea")
    i = add(raw, "Germany", "bomber", "Ionian Sea", count=2)
    refused(
        raw,
        rs,
        f"units[{i}].at",
        "3 air units of Germany's side at sea in Ionian Sea (Austria-Hungary 1, Germany 2) "
        "but carriers of its side there hold 2 (Austria-Hungary 2) (F7)",
    )


def test_f7_no_carrier_at_all_is_counted_as_the_sides(raw: dict[str, Any], rs: Ruleset) -> None:
    i = add(raw, "Germany", "fighter", "Ionian Sea")
    refused(
        raw,
        rs,
        f"units[{i}].at",
        "1 Germany air unit at sea in Ionian Sea but carriers of its side there hold 0 (F7)",
    )


def test_f8_a_neutral_fighter_does_not_start_aboard_an_allys_carrier(raw: dict[str, Any], rs: Ruleset) -> None:
    # great-war-1914: the Ottoman Empire is neutral until round 2, nobody's ally before.
    add(raw, "Austria-Hungary", "aircraft_carrier", "Ionian Sea")
    i = add(raw, "Ottoman Empire", "fighter", "Ionian Sea")
    refused(
        raw,
        rs,
        f"units[{i}].at",
        "1 Ottoman Empire air unit at sea in Ionian Sea but its own carriers there hold 0 (F7); "
        "Austria-Hungary's carry none of them: Ottoman Empire is neutral until round 2 (F8)",
    )


def test_f8_a_neutrals_carrier_carries_no_belligerents_aircraft(raw: dict[str, Any], rs: Ruleset) -> None:
    # Italy (Entente) is neutral until round 4: its carrier is no British fighter's.
    add(raw, "Italy", "aircraft_carrier", "Ionian Sea")
    i = add(raw, "Britain", "fighter", "Ionian Sea")
    refused(
        raw,
        rs,
        f"units[{i}].at",
        "1 Britain air unit at sea in Ionian Sea but carriers of its side there hold 0 (F7); "
        "Italy's carry none of them: Italy is neutral until round 4 (F8)",
    )


def test_f8_a_neutral_starts_aboard_its_own_carrier(raw: dict[str, Any], rs: Ruleset) -> None:
    add(raw, "Italy", "aircraft_carrier", "Ionian Sea")
    add(raw, "Italy", "fighter", "Ionian Sea", count=2)
    scenario_from_dict(raw, "gw.toml", rs, new_campaign=True)


def test_f7_without_friendly_carriers_only_the_nations_own_carry_it(raw: dict[str, Any], rs: Ruleset) -> None:
    # A ruleset (or a campaign recorded before the rule) that counts a nation's own carriers only.
    own_only = dataclasses.replace(rs, friendly_carriers=False)
    add(raw, "Austria-Hungary", "aircraft_carrier", "Ionian Sea")
    i = add(raw, "Germany", "fighter", "Ionian Sea")
    refused(
        raw,
        own_only,
        f"units[{i}].at",
        "1 Germany air unit at sea in Ionian Sea but its own carriers there hold 0 (F7); "
        "Austria-Hungary's carry none of them: the ruleset says friendly_carriers = false",
    )
    add(raw, "Germany", "aircraft_carrier", "Ionian Sea")
    scenario_from_dict(raw, "gw.toml", own_only, new_campaign=True)


def test_f7_scenario_check_reports_it_at_the_overflowing_group_line(rs: Ruleset) -> None:
    text = scenario_text("great-war-1914")[0]
    text += '\n[[units]]\nnation = "Austria-Hungary"\ntype = "aircraft_carrier"\nat = "Ionian Sea"\n'
    text += '\n[[units]]\nnation = "Germany"\ntype = "fighter"\nat = "Ionian Sea"\n'
    assert not check_scenario(text, "gw.toml").errors
    text += '\n[[units]]\nnation = "Ottoman Empire"\ntype = "fighter"\nat = "Ionian Sea"\n'
    errors = check_scenario(text, "gw.toml").errors
    assert [e.line for e in errors] == [len(text.split("\n")) - 1]
    assert "Ottoman Empire is neutral until round 2 (F8)" in errors[0].message


@pytest.mark.parametrize("name", ["great-war-1914", "north-sea-1914"])
def test_recorded_scenarios_still_read(name: str, rs: Ruleset) -> None:
    # A campaign stores its scenario: the one it recorded must read as it did, with either
    # reading of the rule (the side's carriers hold at least the nation's own).
    data = read_scenario(name)[0]
    for ruleset in (rs, dataclasses.replace(rs, friendly_carriers=False)):
        scenario = scenario_from_dict(copy.deepcopy(data), "recorded scenario", ruleset)
        assert len(scenario.units) == len(data["units"])
