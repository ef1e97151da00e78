"""A mutation fuzzer over the built-in scenario and ruleset: each mutant is refused with an
error naming its file and key, or it is a campaign that can be created and played a little.
Never a traceback."""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.dice import ManualDice
from domain.errors import DataFileError, TrackerError
from domain.ruleset import read_builtin_or_file, ruleset_from_dict
from domain.scenario import scenario_from_dict

REPLACEMENTS: list[Any] = [
    -1,
    0,
    1,
    7,
    2**31,
    2**63,
    -(2**63),
    10**20,
    1.5,
    True,
    "",
    "bogus",
    "Dover Strait",
    [],
    ["bogus"],
    [[]],
    {},
    {"bogus": 1},
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path in a TOML-shaped value (list items by index)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


def mutate(data: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], str]:
    mutant = copy.deepcopy(data)
    path = rng.choice(list(_paths(mutant)))
    parent, key = _parent(mutant, path), path[-1]
    how = rng.choice(["replace", "replace", "replace", "delete", "rename", "duplicate"])
    if how == "delete":
        del parent[key]
    elif how == "rename" and isinstance(parent, dict):
        parent[f"{key}x"] = parent.pop(key)
    elif how == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[key]))
    else:
        how = "replace"
        parent[key] = copy.deepcopy(rng.choice(REPLACEMENTS))
    return mutant, f"{how} {'.'.join(map(str, path))}"


def _play_a_little(scenario: dict[str, Any], ruleset: dict[str, Any]) -> None:
    import uuid

    c = Campaign.create(uuid.uuid4(), "fuzz", scenario, ruleset, "manual", "0" * 64)
    for _ in range(3):
        try:
            c.advance()
        except TrackerError:
            break
    with contextlib.suppress(TrackerError):
        c.research(c.nation, next(iter(c.ruleset.technologies), "x"), ManualDice([9]))


@pytest.mark.parametrize("kind", ["scenario", "ruleset"])
def test_every_mutant_is_refused_naming_file_and_key_or_plays(kind: str, figures: Any, size: Any) -> None:
    scenario, _ = read_builtin_or_file("scenarios", "north-sea-1914")
    ruleset, _ = read_builtin_or_file("rulesets", "twtea-3e")
    rng = random.Random(f"fuzz-{kind}")
    count = size(500, 3000)
    refused = accepted = 0
    for _ in range(count):
        if kind == "scenario":
            mutant, what = mutate(scenario, rng)
            pair = (mutant, ruleset)
        else:
            mutant, what = mutate(ruleset, rng)
            pair = (scenario, mutant)
        try:
            rs = ruleset_from_dict(pair[1], "my-rules.toml")
            scenario_from_dict(pair[0], "my-scenario.toml", rs)
        except DataFileError as e:
            assert e.source in ("my-rules.toml", "my-scenario.toml"), (what, str(e))
            assert str(e).startswith(f"{e.source}: ") and e.key and e.problem, (what, str(e))
            assert "\n" not in str(e), (what, str(e))
            refused += 1
            continue
        except Exception as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{kind} mutant ({what}) raised {type(e).__name__}: {e}")
        try:
            _play_a_little(*pair)
        except TrackerError as e:
            pytest.fail(f"{kind} mutant ({what}) was accepted but then refused: {e}")
        except Exception as e:  # noqa: BLE001
            pytest.fail(f"{kind} mutant ({what}) was accepted but then raised {type(e).__name__}: {e}")
        accepted += 1
    figures.add("TOML mutation fuzzer", mutants=count, refused_naming_key=refused, accepted_and_played=accepted)
