"""Selective fire (HA1-HA3) as pure functions over a board: the legal targets of a selective
shot, the default targets, screening by escorts and its default, and refused choices."""

from __future__ import annotations

import pytest

from domain.errors import InputError, RuleViolation
from domain.rules import targets
from tests.hit_boards import board, ids, units

# ----- HA1, HA2, HA3: selective targets -----


def test_ha1_a_submarine_must_target_a_non_submarine_naval_unit_while_there_is_one() -> None:
    b = board("DE-SS1", "GB-BB1", "GB-DD1", "GB-SS1", "GB-FT1")
    enemies = units(b, "GB-BB1", "GB-DD1", "GB-SS1", "GB-FT1")
    assert ids(targets.selective_targets(b, b.units["DE-SS1"], enemies)) == ["GB-BB1", "GB-DD1"]
    err = targets.why_not_target(b, b.units["DE-SS1"], b.units["GB-SS1"], enemies, "NC3")
    assert err.rule == "HA1" and "GB-BB1, GB-DD1" in err.reason


def test_ha1_with_only_submarines_left_a_submarine_targets_them() -> None:
    b = board("DE-SS1", "GB-SS1", "GB-FT1")
    assert ids(targets.selective_targets(b, b.units["DE-SS1"], units(b, "GB-SS1", "GB-FT1"))) == ["GB-SS1"]


def test_ha2_submarine_hits_never_fall_on_aircraft() -> None:
    b = board("DE-SS1", "GB-FT1", "GB-BM1")
    enemies = units(b, "GB-FT1", "GB-BM1")
    assert targets.selective_targets(b, b.units["DE-SS1"], enemies) == []
    err = targets.why_not_target(b, b.units["DE-SS1"], b.units["GB-FT1"], enemies, "NC3")
    assert err.rule == "HA2" and "aircraft" in err.reason


def test_ha3_an_air_unit_may_target_any_enemy_unit() -> None:
    b = board("DE-BM1", "GB-BB1", "GB-SS1", "GB-FT1")
    enemies = units(b, "GB-BB1", "GB-SS1", "GB-FT1")
    assert ids(targets.selective_targets(b, b.units["DE-BM1"], enemies)) == ["GB-BB1", "GB-FT1", "GB-SS1"]


def test_default_targets_spread_over_the_legal_targets_most_valuable_first() -> None:
    b = board("DE-SS1", "DE-SS2", "DE-SS3", "GB-BB1", "GB-DD1")
    legal = {s: ["GB-BB1", "GB-DD1"] for s in ("DE-SS1", "DE-SS2", "DE-SS3")}
    assert targets.default_targets(b, legal) == {"DE-SS1": "GB-BB1", "DE-SS2": "GB-DD1", "DE-SS3": "GB-BB1"}


def test_check_targets_needs_every_firer_once_with_a_legal_target() -> None:
    b = board("DE-SS1", "DE-SS2", "GB-BB1", "GB-DD1", "GB-SS1")
    legal = {"DE-SS1": ["GB-BB1", "GB-DD1"], "DE-SS2": ["GB-BB1", "GB-DD1"]}
    chosen = {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}
    assert targets.check_targets(b, "HA1", "Germany", legal, chosen) == chosen
    with pytest.raises(RuleViolation, match="missing DE-SS2") as info:
        targets.check_targets(b, "HA1", "Germany", legal, {"DE-SS1": "GB-BB1"})
    assert info.value.rule == "HA1"
    with pytest.raises(RuleViolation, match=r"DE-SS1 cannot target GB-SS1 \(legal: GB-BB1, GB-DD1\)"):
        targets.check_targets(b, "HA1", "Germany", legal, {"DE-SS1": "GB-SS1", "DE-SS2": "GB-BB1"})
    with pytest.raises(RuleViolation, match="GB-BB1 does not choose a target here"):
        targets.check_targets(b, "HA1", "Germany", legal, {**chosen, "GB-BB1": "DE-SS1"})
    with pytest.raises(InputError):
        targets.check_targets(b, "HA1", "Germany", legal, {"DE-SS1": "GB-XX9", "DE-SS2": "GB-BB1"})


# ----- HA1, HA3: screening -----


def test_ha1_escorts_of_the_targets_side_may_screen_it_nothing_else_may() -> None:
    b = board("GB-BB1", "GB-DD1", "GB-CA1", "GB-TR1", "GB-SS1", "GB-BM1")
    side = units(b, "GB-BB1", "GB-DD1", "GB-CA1", "GB-TR1", "GB-SS1", "GB-BM1")
    assert ids(targets.screen_options(b, b.units["GB-BB1"], side)) == ["GB-CA1", "GB-DD1"]
    assert ids(targets.screen_options(b, b.units["GB-DD1"], side)) == ["GB-CA1"]  # not itself
    shots = {"DE-SS1": "GB-BB1"}
    assert targets.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS1": "GB-DD1"}) == {"DE-SS1": "GB-DD1"}
    assert targets.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS1": "GB-BB1"}) == {}  # no screen
    for bad in ("GB-TR1", "GB-SS1", "GB-BM1"):
        with pytest.raises(RuleViolation, match=rf"{bad} cannot screen GB-BB1 against DE-SS1") as info:
            targets.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS1": bad})
        assert info.value.rule == "HA1" and "GB-CA1, GB-DD1" in info.value.reason
    with pytest.raises(RuleViolation, match="DE-SS2 fires no selective shot"):
        targets.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS2": "GB-DD1"})


def test_ha1_default_screen_exposes_the_cheapest_loss() -> None:
    b = board("GB-BB1", "GB-BB2", "GB-CA1", "GB-DD1", damaged=("GB-BB2",))
    side = units(b, "GB-BB1", "GB-BB2", "GB-CA1", "GB-DD1")
    # A cruiser (12) targeted: the destroyer (8) takes it. A sound battleship only takes damage
    # (free); a damaged one would be lost (20): the destroyer takes that one too.
    assert targets.default_screens(b, {"DE-SS1": "GB-CA1"}, side) == {"DE-SS1": "GB-DD1"}
    assert targets.default_screens(b, {"DE-SS1": "GB-BB1"}, side) == {}
    assert targets.default_screens(b, {"DE-SS1": "GB-BB2"}, side) == {"DE-SS1": "GB-DD1"}
    # Cheapest already: a destroyer targeted keeps its hit.
    assert targets.default_screens(b, {"DE-SS1": "GB-DD1"}, side) == {}


def test_ha1_an_escort_screens_at_most_one_shot_per_volley() -> None:
    b = board("GB-BB1", "GB-DD1")
    side = units(b, "GB-BB1", "GB-DD1")
    shots = {"DE-SS1": "GB-BB1", "DE-SS2": "GB-BB1"}
    with pytest.raises(RuleViolation) as info:
        targets.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"})
    assert info.value.rule == "HA1" and "at most one shot per volley" in info.value.reason
    assert list(targets.default_screens(b, shots, side).values()).count("GB-DD1") <= 1
