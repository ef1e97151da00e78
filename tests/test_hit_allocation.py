"""Hit allocation (HA1-HA7) as pure functions over a board: selective targets, screening, the
order in which non-selective hits fall, the cheapest legal default and refused choices.

Boards are built from the north-sea-1914 scenario with the units each test needs, placed in
one zone ("Central North Sea") with made-up IDs where the scenario has no such unit.
"""

from __future__ import annotations

import uuid
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.board import Board, Unit
from domain.campaign import Campaign
from domain.dice import commitment, new_seed
from domain.errors import InputError, RuleViolation
from domain.rules import hits
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario

CNS = "Central North Sea"
_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
NATION = {"DE": "Germany", "GB": "Britain"}
TYPE = {
    "SS": "submarine",
    "DD": "destroyer",
    "CA": "cruiser",
    "BB": "battleship",
    "CV": "aircraft_carrier",
    "TR": "transport",
    "FT": "fighter",
    "BM": "bomber",
}


def board(*ids: str, damaged: tuple[str, ...] = ()) -> Board:
    """A board holding exactly these units in the Central North Sea (DE-BB1: German battleship)."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    c.units = {
        uid: {
            "type": TYPE[uid[3:5]],
            "nation": NATION[uid[:2]],
            "at": CNS,
            "damage": 1 if uid in damaged else 0,
            "moved": 0,
        }
        for uid in ids
    }
    return c.board()


def units(b: Board, *ids: str) -> list[Unit]:
    return [b.units[u] for u in ids]


def ids(found: list[Unit]) -> list[str]:
    return [u.id for u in found]


# ----- HA1, HA2, HA3: selective targets -----


def test_ha1_a_submarine_must_target_a_non_submarine_naval_unit_while_there_is_one() -> None:
    b = board("DE-SS1", "GB-BB1", "GB-DD1", "GB-SS1", "GB-FT1")
    enemies = units(b, "GB-BB1", "GB-DD1", "GB-SS1", "GB-FT1")
    assert ids(hits.selective_targets(b, b.units["DE-SS1"], enemies)) == ["GB-BB1", "GB-DD1"]
    err = hits.why_not_target(b, b.units["DE-SS1"], b.units["GB-SS1"], enemies, "NC3")
    assert err.rule == "HA1" and "GB-BB1, GB-DD1" in err.reason


def test_ha1_with_only_submarines_left_a_submarine_targets_them() -> None:
    b = board("DE-SS1", "GB-SS1", "GB-FT1")
    assert ids(hits.selective_targets(b, b.units["DE-SS1"], units(b, "GB-SS1", "GB-FT1"))) == ["GB-SS1"]


def test_ha2_submarine_hits_never_fall_on_aircraft() -> None:
    b = board("DE-SS1", "GB-FT1", "GB-BM1")
    enemies = units(b, "GB-FT1", "GB-BM1")
    assert hits.selective_targets(b, b.units["DE-SS1"], enemies) == []
    err = hits.why_not_target(b, b.units["DE-SS1"], b.units["GB-FT1"], enemies, "NC3")
    assert err.rule == "HA2" and "aircraft" in err.reason


def test_ha3_an_air_unit_may_target_any_enemy_unit() -> None:
    b = board("DE-BM1", "GB-BB1", "GB-SS1", "GB-FT1")
    enemies = units(b, "GB-BB1", "GB-SS1", "GB-FT1")
    assert ids(hits.selective_targets(b, b.units["DE-BM1"], enemies)) == ["GB-BB1", "GB-FT1", "GB-SS1"]


def test_default_targets_spread_over_the_legal_targets_most_valuable_first() -> None:
    b = board("DE-SS1", "DE-SS2", "DE-SS3", "GB-BB1", "GB-DD1")
    legal = {s: ["GB-BB1", "GB-DD1"] for s in ("DE-SS1", "DE-SS2", "DE-SS3")}
    assert hits.default_targets(b, legal) == {"DE-SS1": "GB-BB1", "DE-SS2": "GB-DD1", "DE-SS3": "GB-BB1"}


def test_check_targets_needs_every_firer_once_with_a_legal_target() -> None:
    b = board("DE-SS1", "DE-SS2", "GB-BB1", "GB-DD1", "GB-SS1")
    legal = {"DE-SS1": ["GB-BB1", "GB-DD1"], "DE-SS2": ["GB-BB1", "GB-DD1"]}
    chosen = {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"}
    assert hits.check_targets(b, "HA1", "Germany", legal, chosen) == chosen
    with pytest.raises(RuleViolation, match="missing DE-SS2") as info:
        hits.check_targets(b, "HA1", "Germany", legal, {"DE-SS1": "GB-BB1"})
    assert info.value.rule == "HA1"
    with pytest.raises(RuleViolation, match=r"DE-SS1 cannot target GB-SS1 \(legal: GB-BB1, GB-DD1\)"):
        hits.check_targets(b, "HA1", "Germany", legal, {"DE-SS1": "GB-SS1", "DE-SS2": "GB-BB1"})
    with pytest.raises(RuleViolation, match="GB-BB1 does not choose a target here"):
        hits.check_targets(b, "HA1", "Germany", legal, {**chosen, "GB-BB1": "DE-SS1"})
    with pytest.raises(InputError):
        hits.check_targets(b, "HA1", "Germany", legal, {"DE-SS1": "GB-XX9", "DE-SS2": "GB-BB1"})


# ----- HA1, HA3: screening -----


def test_ha1_escorts_of_the_targets_side_may_screen_it_nothing_else_may() -> None:
    b = board("GB-BB1", "GB-DD1", "GB-CA1", "GB-TR1", "GB-SS1", "GB-BM1")
    side = units(b, "GB-BB1", "GB-DD1", "GB-CA1", "GB-TR1", "GB-SS1", "GB-BM1")
    assert ids(hits.screen_options(b, b.units["GB-BB1"], side)) == ["GB-CA1", "GB-DD1"]
    assert ids(hits.screen_options(b, b.units["GB-DD1"], side)) == ["GB-CA1"]  # not itself
    shots = {"DE-SS1": "GB-BB1"}
    assert hits.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS1": "GB-DD1"}) == {"DE-SS1": "GB-DD1"}
    assert hits.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS1": "GB-BB1"}) == {}  # no screen
    for bad in ("GB-TR1", "GB-SS1", "GB-BM1"):
        with pytest.raises(RuleViolation, match=rf"{bad} cannot screen GB-BB1 against DE-SS1") as info:
            hits.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS1": bad})
        assert info.value.rule == "HA1" and "GB-CA1, GB-DD1" in info.value.reason
    with pytest.raises(RuleViolation, match="DE-SS2 fires no selective shot"):
        hits.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS2": "GB-DD1"})


def test_ha1_default_screen_exposes_the_cheapest_loss() -> None:
    b = board("GB-BB1", "GB-BB2", "GB-CA1", "GB-DD1", damaged=("GB-BB2",))
    side = units(b, "GB-BB1", "GB-BB2", "GB-CA1", "GB-DD1")
    # A cruiser (12) targeted: the destroyer (8) takes it. A sound battleship only takes damage
    # (free); a damaged one would be lost (20): the destroyer takes that one too.
    assert hits.default_screens(b, {"DE-SS1": "GB-CA1"}, side) == {"DE-SS1": "GB-DD1"}
    assert hits.default_screens(b, {"DE-SS1": "GB-BB1"}, side) == {}
    assert hits.default_screens(b, {"DE-SS1": "GB-BB2"}, side) == {"DE-SS1": "GB-DD1"}
    # Cheapest already: a destroyer targeted keeps its hit.
    assert hits.default_screens(b, {"DE-SS1": "GB-DD1"}, side) == {}


# ----- HA4-HA6: the order of non-selective hits -----


def test_ha5_capital_ship_hits_go_to_capital_ships_then_escorts_then_transports() -> None:
    b = board("DE-BB1", "DE-CV1", "DE-DD1", "DE-TR1")
    tiers = hits.hit_tiers(b, "capital", units(b, "DE-BB1", "DE-CV1", "DE-DD1", "DE-TR1"))
    assert [ids(t) for t in tiers] == [["DE-BB1", "DE-CV1"], ["DE-DD1"], ["DE-TR1"]]
    b = board("DE-DD1", "DE-TR1")
    assert hits.allocate(b, "Germany", [("capital", 1)], units(b, "DE-DD1", "DE-TR1"), Counter(), None) == ["DE-DD1"]


def test_ha5_an_escort_cannot_take_a_battleship_hit_while_a_capital_ship_is_afloat() -> None:
    b = board("DE-BB1", "DE-DD1", "DE-TR1")
    own = units(b, "DE-BB1", "DE-DD1", "DE-TR1")
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Germany", [("capital", 1)], own, Counter(), ["DE-DD1"])
    assert info.value.rule == "HA5"
    assert "must fall on DE-BB1 first" in info.value.reason and "(legal: DE-BB1)" in info.value.reason
    assert hits.allocate(b, "Germany", [("capital", 1)], own, Counter(), ["DE-BB1"]) == ["DE-BB1"]
    # Two capital hits sink the battleship (F3); the third goes on to the destroyer.
    assert hits.allocate(b, "Germany", [("capital", 3)], own, Counter(), None) == ["DE-BB1", "DE-BB1", "DE-DD1"]


def test_ha6_escort_hits_go_to_escorts_then_capital_ships_then_transports() -> None:
    b = board("DE-BB1", "DE-CA1", "DE-TR1")
    own = units(b, "DE-BB1", "DE-CA1", "DE-TR1")
    assert [ids(t) for t in hits.hit_tiers(b, "escort", own)] == [["DE-CA1"], ["DE-BB1"], ["DE-TR1"]]
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Germany", [("escort", 1)], own, Counter(), ["DE-BB1"])
    assert info.value.rule == "HA6" and "(legal: DE-CA1)" in info.value.reason
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Germany", [("escort", 2)], own, Counter(), ["DE-CA1", "DE-TR1"])
    assert info.value.rule == "HA6" and "(legal: DE-BB1)" in info.value.reason
    assert hits.allocate(b, "Germany", [("escort", 2)], own, Counter(), ["DE-BB1", "DE-CA1"]) == ["DE-BB1", "DE-CA1"]


def test_ha4_naval_hits_fall_on_naval_units_before_aircraft() -> None:
    b = board("DE-TR1", "DE-SS1", "DE-FT1")
    own = units(b, "DE-TR1", "DE-SS1", "DE-FT1")
    # Submarines, which the priority table does not list, come after the listed classes; in a
    # naval battle only escorts' hits may fall on them (NC6).
    assert [ids(t) for t in hits.hit_tiers(b, "escort", own)] == [["DE-TR1"], ["DE-SS1"], ["DE-FT1"]]
    assert [ids(t) for t in hits.hit_tiers(b, "capital", own)] == [["DE-TR1"], ["DE-FT1"]]
    assert [ids(t) for t in hits.hit_tiers(b, "capital", own, nc6=False)] == [["DE-TR1"], ["DE-SS1"], ["DE-FT1"]]
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Germany", [("escort", 1)], own, Counter(), ["DE-FT1"])
    assert info.value.rule == "HA6"
    assert hits.allocate(b, "Germany", [("escort", 3)], own, Counter(), None) == ["DE-TR1", "DE-SS1", "DE-FT1"]
    b = board("DE-FT1")
    assert hits.allocate(b, "Germany", [("capital", 1)], units(b, "DE-FT1"), Counter(), None) == ["DE-FT1"]


def test_ha5_ha6_hits_of_both_classes_are_placed_group_by_group() -> None:
    b = board("DE-BB1", "DE-DD1")
    own = units(b, "DE-BB1", "DE-DD1")
    groups = [("capital", 1), ("escort", 1)]
    assert sorted(hits.allocate(b, "Germany", groups, own, Counter(), None)) == ["DE-BB1", "DE-DD1"]
    assert hits.allocate(b, "Germany", groups, own, Counter(), ["DE-DD1", "DE-BB1"]) == ["DE-DD1", "DE-BB1"]
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Germany", groups, own, Counter(), ["DE-BB1", "DE-BB1"])
    assert info.value.rule == "HA6" and "(legal: DE-DD1)" in info.value.reason


def test_hits_already_landing_this_volley_use_up_a_units_capacity() -> None:
    b = board("DE-BB1", "DE-DD1")
    own = units(b, "DE-BB1", "DE-DD1")
    # A submarine's selective hit has already sunk the destroyer: the escort hit goes on to
    # the battleship.
    assert hits.allocate(b, "Germany", [("escort", 1)], own, Counter({"DE-DD1": 1}), None) == ["DE-BB1"]


# ----- HA7: the owner's choice, the cheapest default -----


def test_ha7_default_is_the_cheapest_legal_choice() -> None:
    b = board("DE-CA1", "DE-DD1", "DE-BB1", "DE-BB2", damaged=("DE-BB2",))
    assert hits.allocate(b, "Germany", [("escort", 1)], units(b, "DE-CA1", "DE-DD1"), Counter(), None) == ["DE-DD1"]
    # A hit that only damages a sound battleship costs nothing; the damaged one would sink.
    assert hits.allocate(b, "Germany", [("capital", 1)], units(b, "DE-BB1", "DE-BB2"), Counter(), None) == ["DE-BB1"]


def test_ha7_the_owner_names_exactly_the_hits_that_can_be_taken() -> None:
    b = board("DE-DD1", "DE-DD2", "GB-DD1")
    own = units(b, "DE-DD1", "DE-DD2")
    with pytest.raises(RuleViolation, match="must assign 2 hit"):
        hits.allocate(b, "Germany", [("escort", 2)], own, Counter(), ["DE-DD1"])
    with pytest.raises(RuleViolation, match="DE-DD1 can take 1 more hit"):
        hits.allocate(b, "Germany", [("escort", 2)], own, Counter(), ["DE-DD1", "DE-DD1"])
    with pytest.raises(RuleViolation, match="belongs to Britain") as info:
        hits.allocate(b, "Germany", [("escort", 1)], own, Counter(), ["GB-DD1"])
    assert info.value.rule == "HA7"
    with pytest.raises(InputError):
        hits.allocate(b, "Germany", [("escort", 1)], own, Counter(), ["DE-XX1"])
    # More hits than the units can take: all of them, the rest is lost.
    assert sorted(hits.allocate(b, "Germany", [("escort", 5)], own, Counter(), None)) == ["DE-DD1", "DE-DD2"]


def test_ha7_nobody_is_asked_when_the_rules_leave_no_choice() -> None:
    b = board("DE-DD1", "DE-DD2", "DE-BB1", "DE-BB2")
    dds = units(b, "DE-DD1", "DE-DD2")
    assert hits.allocation_is_forced(b, [("escort", 2)], dds, Counter())  # both sink either way
    assert not hits.allocation_is_forced(b, [("escort", 1)], dds, Counter())  # which one?
    assert hits.allocation_is_forced(b, [("escort", 1)], units(b, "DE-BB1", "DE-DD1"), Counter())
    assert not hits.allocation_is_forced(b, [("capital", 1)], units(b, "DE-BB1", "DE-BB2"), Counter())


def test_nc6_hits_of_battleships_never_fall_on_submarines_and_are_lost() -> None:
    b = board("DE-SS1", "DE-SS2")
    own = units(b, "DE-SS1", "DE-SS2")
    assert hits.allocate(b, "Germany", [("capital", 2)], own, Counter(), None) == []
    assert hits.allocate(b, "Germany", [("escort", 2)], own, Counter(), None) == ["DE-SS1", "DE-SS2"]


def test_ha1_an_escort_screens_at_most_one_shot_per_volley() -> None:
    b = board("GB-BB1", "GB-DD1")
    side = units(b, "GB-BB1", "GB-DD1")
    shots = {"DE-SS1": "GB-BB1", "DE-SS2": "GB-BB1"}
    with pytest.raises(RuleViolation) as info:
        hits.check_screens(b, "HA1", "Britain", shots, side, {"DE-SS1": "GB-DD1", "DE-SS2": "GB-DD1"})
    assert info.value.rule == "HA1" and "at most one shot per volley" in info.value.reason
    assert list(hits.default_screens(b, shots, side).values()).count("GB-DD1") <= 1


# ----- placing a volley's hits a class at a time (what the exact odds rely on) -----

_SIDE_TYPES = ("battleship", "aircraft_carrier", "cruiser", "destroyer", "submarine", "transport", "fighter")


@settings(max_examples=300, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=0, max_value=3), min_size=len(_SIDE_TYPES), max_size=len(_SIDE_TYPES)),
    damaged=st.integers(min_value=0, max_value=3),
    landed=st.lists(st.integers(min_value=0, max_value=20), max_size=4),
    placed=st.dictionaries(st.sampled_from(["capital", "escort", "submarine", "air"]), st.integers(1, 8), max_size=4),
    kind=st.sampled_from(["naval", "convoy"]),
)
def test_placing_hits_a_class_at_a_time_leaves_what_placing_them_together_leaves_HA4_HA7(
    counts: list[int], damaged: int, landed: list[int], placed: dict[str, int], kind: str
) -> None:
    """The default casualties of a volley's non-selective hits (HA4-HA7) depend on nothing but
    the units' hits left, so the selective hits, then each firing class's in the order they
    are placed, each on what the step before left, leave what all of them together leave."""
    from domain.procedures import volley
    from domain.procedures.base import Piece
    from domain.procedures.fight import Fight
    from tests.odds_positions import context

    ctx = context()
    rs = ctx.ruleset
    own = []
    for unit_type, n in zip(_SIDE_TYPES, counts, strict=True):
        for i in range(n):
            capital = rs.units[unit_type].hits > 1
            own.append(Piece(f"GB-{unit_type[:2].upper()}{i + 1}", unit_type, "Britain", int(capital and i < damaged)))
    side = tuple(sorted(own))
    if not side:
        return
    shots = tuple(sorted(side[i % len(side)].id for i in landed))
    order = tuple(sorted(placed.items(), key=lambda kv: volley.placing_order(ctx, kv[0])))
    fight = Fight(kind, "Germany", "Britain", (), side)  # type: ignore[arg-type]
    together = volley.left_after(fight, ctx, "defender", side, shots, order)
    step = volley.left_after(fight, ctx, "defender", side, shots, ())
    for hit in order:
        step = volley.left_after(fight, ctx, "defender", step, (), (hit,))
    assert step == together
