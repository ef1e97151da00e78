"""The Campaign aggregate's plain state: how a campaign starts (scenario, ruleset, numbered units),
what undo restores, and what older snapshots lack."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from domain.campaign.procedure import Kind, Procedure
from domain.rules import economy
from domain.ruleset import Ruleset
from domain.scenario import Scenario, scenario_from_dict

_scenarios: dict[tuple[str, str], Scenario] = {}


_recent_scenarios: OrderedDict[int, tuple[dict[str, Any], Ruleset, Scenario]] = OrderedDict()


def scenario_from_recorded(data: dict[str, Any], ruleset: Ruleset) -> Scenario:
    """The scenario a campaign recorded, parsed once per process (by content), and found again
    by identity while the same aggregate is in use, without hashing it on every access."""
    from domain.ruleset import content_hash

    hit = _recent_scenarios.get(id(data))
    if hit is not None and hit[0] is data and hit[1] is ruleset:
        return hit[2]
    key = (content_hash(data), ruleset.content_hash)
    if key not in _scenarios:
        _scenarios[key] = scenario_from_dict(data, "recorded scenario", ruleset)
    _recent_scenarios[id(data)] = (data, ruleset, _scenarios[key])
    if len(_recent_scenarios) > 256:
        _recent_scenarios.popitem(last=False)
    return _scenarios[key]


def initial_units(scenario: Scenario, ruleset: Ruleset) -> dict[str, dict[str, Any]]:
    """Number every starting unit: nation code, type abbreviation, count (GB-DD3)."""
    units: dict[str, dict[str, Any]] = {}
    counters: dict[tuple[str, str], int] = {}
    for group in scenario.units:
        code = scenario.nations[group.nation].code
        abbr = ruleset.units[group.type].abbr
        for _ in range(group.count):
            n = counters[(code, abbr)] = counters.get((code, abbr), 0) + 1
            units[f"{code}-{abbr}{n}"] = {
                "type": group.type,
                "nation": group.nation,
                "at": group.at,
                "damage": 0,
                "moved": 0,
            }
    return units


def new_procedure(battle: int, kind: Kind, zone: str, attacker: str, defender: str) -> Procedure:
    """The state every non-convoy procedure keeps: whose move it is, the volley in progress
    (targets and screens), hits waiting to be taken, submerged submarines."""
    return {
        "id": battle,
        "kind": kind,
        "zone": zone,
        "attacker": attacker,
        "defender": defender,
        "step": "started",
        "waiting": [],
        "rule": "",
        "round": 0,
        "hits": {},
        "chosen": {},
        "shots": {},
        "pending_hits": [],
        "groups": [],
        "submerged": [],
        "retreated": [],
    }


# What undo restores (RK3); everything else on the aggregate only moves forward.
UNDOABLE_STATE = (
    "dice_mode",
    "round",
    "nation",
    "phase",
    "units",
    "ntr",
    "ntr_lost",
    "tech",
    "balances",
    "research_rolls",
    "battles",
    "convoy_declared",
    "ntr_lost_phase",
    "fought",
    "owners",
    "unplaced",
    "unit_numbers",
    "ended",
    "convoy_passed",
    "movement_ended",
    "attack_zones",
    "committed",
    "lost",
)


def note_number(numbers: dict[str, int], uid: str) -> None:
    """PU2: remember the highest number used for the unit's nation-and-type prefix."""
    parsed = economy.unit_prefix(uid)
    if parsed is not None:
        numbers[parsed[0]] = max(numbers.get(parsed[0], 0), parsed[1])


def unit_numbers(units: dict[str, dict[str, Any]]) -> dict[str, int]:
    """PU2: the highest number used so far for every nation-and-type prefix (DE-SS -> 5)."""
    numbers: dict[str, int] = {}
    for uid in units:
        note_number(numbers, uid)
    return numbers


# State added after campaigns were first recorded: what an older snapshot lacks starts so.
LATER_STATE: dict[str, Callable[[Any], Any]] = {
    "fought": lambda agg: [],
    "owners": lambda agg: dict(agg.scenario.game_map.land),
    "unplaced": lambda agg: {},
    "unit_numbers": lambda agg: unit_numbers(agg.units),
    "ended": lambda agg: {},
    "convoy_passed": lambda agg: [],
    "movement_ended": lambda agg: {},
    "attack_zones": lambda agg: [],
    "committed": lambda agg: [],
    "lost": lambda agg: {},
}

# Lists in a battle's state that name units: a sunk unit leaves them all.
UNIT_LISTS = (
    "subs",
    "detecting",
    "searchers",
    "found_by",
    "hunters",
    "detected",
    "undetected",
    "attackers",
    "defenders",
    "opening",
)
