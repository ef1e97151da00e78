"""Dice (D1-D3): verifiable auto dice, checked manual dice, target clamping, and recorded rolls."""

from __future__ import annotations

import copy
import uuid
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.campaign import Campaign
from domain.dice import (
    AutoDice,
    ManualDice,
    NoDice,
    clamp_target,
    commitment,
    derive_roll,
    new_seed,
    parse_dice,
)
from domain.errors import DiceError, RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing

SEED_A = "5eed" * 16
SEED_B = "b0a7" * 16

_, RULESET_DATA = load_ruleset("twtea-3e")
SCENARIO_DATA, _ = read_scenario("north-sea-1914")

seeds = st.binary(min_size=32, max_size=32).map(bytes.hex)


def new_campaign(seed: str, dice_mode: str = "auto") -> Campaign:
    return Campaign.create(
        uuid.uuid4(), "t", copy.deepcopy(SCENARIO_DATA), copy.deepcopy(RULESET_DATA), dice_mode, commitment(seed)
    )


def dice_events(c: Campaign) -> list[Campaign.DiceRolled]:
    return [e for e in c.pending_events if isinstance(e, Campaign.DiceRolled)]


# ----- auto dice -----


def test_derive_roll_is_deterministic() -> None:
    assert derive_roll(SEED_A, 7, 20, 10) == derive_roll(SEED_A, 7, 20, 10)


def test_derive_roll_differs_with_the_seed() -> None:
    assert derive_roll(SEED_A, 7, 20, 10) != derive_roll(SEED_B, 7, 20, 10)


def test_derive_roll_differs_with_the_roll_number() -> None:
    assert derive_roll(SEED_A, 7, 20, 10) != derive_roll(SEED_A, 8, 20, 10)


def test_derive_roll_dice_depend_on_position_not_on_count() -> None:
    # Die i of roll n is the same whether 3 or 5 dice are rolled: a re-derivation cannot drift.
    assert derive_roll(SEED_A, 3, 5, 10)[:3] == derive_roll(SEED_A, 3, 3, 10)
    assert len(set(derive_roll(SEED_A, 3, 50, 10))) > 1


@settings(max_examples=60, deadline=None)
@given(
    seed=seeds,
    roll_number=st.integers(min_value=1, max_value=10**9),
    count=st.integers(min_value=1, max_value=12),
    faces=st.integers(min_value=2, max_value=20),
)
def test_d1_derived_dice_are_within_one_to_faces(seed: str, roll_number: int, count: int, faces: int) -> None:
    values = derive_roll(seed, roll_number, count, faces)
    assert len(values) == count
    assert all(1 <= v <= faces for v in values)


def test_d1_derived_d10_dice_are_uniform_by_chi_square() -> None:
    n, faces = 100_000, 10
    counts = Counter(derive_roll(SEED_A, 1, n, faces))
    assert set(counts) == set(range(1, faces + 1))
    expected = n / faces
    chi_square = sum((counts[face] - expected) ** 2 / expected for face in range(1, faces + 1))
    # 9 degrees of freedom: the 0.001 critical value is 27.88.
    assert chi_square < 27.88, (chi_square, sorted(counts.items()))


def test_d1_derived_d2_dice_show_both_faces() -> None:
    assert set(derive_roll(SEED_B, 1, 200, 2)) == {1, 2}


def test_auto_dice_roll_is_the_derived_roll() -> None:
    dice = AutoDice(SEED_A).roll(5, 3, 10, "test")
    assert dice.values == tuple(derive_roll(SEED_A, 5, 3, 10))
    assert dice.source == "auto"
    assert dice.reference is None


def test_commitment_is_deterministic_and_changes_with_the_seed() -> None:
    assert commitment(SEED_A) == commitment(SEED_A)
    assert commitment(SEED_A) != commitment(SEED_B)
    assert len(commitment(SEED_A)) == 64
    assert SEED_A not in commitment(SEED_A)


def test_new_seeds_are_fresh_32_byte_hex() -> None:
    a, b = new_seed(), new_seed()
    assert a != b
    assert len(bytes.fromhex(a)) == 32


# ----- manual dice -----


def test_manual_dice_hand_out_values_in_order() -> None:
    dice = ManualDice([3, 7, 10], reference="discord #42")
    first = dice.roll(1, 2, 10, "test")
    second = dice.roll(2, 1, 10, "test")
    assert (first.values, second.values) == ((3, 7), (10,))
    assert first.source == "manual"
    assert first.reference == "discord #42"
    dice.check_all_used()


def test_d3_manual_dice_too_few_values_is_refused() -> None:
    dice = ManualDice([4])
    with pytest.raises(DiceError, match=r"^D3: merchant defence needs 2 dice \(D10\) but 1 was entered"):
        dice.roll(1, 2, 10, "merchant defence")
    assert dice.used == 0


def test_d3_dice_too_few_for_a_later_roll_say_how_many_were_entered() -> None:
    """The first searcher took the one die typed: the second's refusal said "0 were entered"."""
    dice = ManualDice([4])
    dice.roll(1, 1, 10, "DE-DD1's search")
    with pytest.raises(DiceError) as refused:
        dice.roll(2, 1, 10, "DE-DD2's search")
    assert str(refused.value) == (
        "D3: DE-DD2's search needs 1 die (D10) but 1 die was entered and the rolls before it took 1"
    )


@pytest.mark.parametrize("value", [0, 11, -3])
def test_d1_manual_die_value_out_of_range_is_refused(value: int) -> None:
    dice = ManualDice([5, value])
    with pytest.raises(DiceError, match=rf"^D1: die value {value} for search is out of range 1\.\.10"):
        dice.roll(1, 2, 10, "search")
    assert dice.used == 0


def test_d1_manual_die_range_follows_the_faces_of_the_roll() -> None:
    assert ManualDice([6]).roll(1, 1, 6, "d6").values == (6,)
    with pytest.raises(DiceError, match=r"^D1: .*out of range 1\.\.6"):
        ManualDice([7]).roll(1, 1, 6, "d6")


def test_d3_manual_dice_left_over_are_refused_by_check_all_used() -> None:
    dice = ManualDice([3, 7, 9])
    dice.roll(1, 2, 10, "test")
    with pytest.raises(DiceError, match=r"^D3: 3 dice entered but the action rolled 2"):
        dice.check_all_used()


def test_d4_no_dice_in_a_manual_campaign_is_refused() -> None:
    with pytest.raises(DiceError, match=r"^D4: this campaign uses manual dice; research needs 1 D10: .*--dice"):
        NoDice().roll(1, 1, 10, "research")


@pytest.mark.parametrize(("text", "values"), [("3,7", [3, 7]), ("3 7", [3, 7]), (" 3, 7 ,10 ", [3, 7, 10]), ("9", [9])])
def test_parse_dice_reads_commas_and_spaces(text: str, values: list[int]) -> None:
    assert parse_dice(text) == values


@pytest.mark.parametrize("text", ["3 x", "3,7.5", "six", "\u0665", "1_0", "+-5"])
def test_d3_parse_dice_refuses_non_numbers(text: str) -> None:
    with pytest.raises(DiceError, match="^D3: dice must be whole numbers"):
        parse_dice(text)


# ----- D2: target clamping -----


@pytest.mark.parametrize(("target", "clamped"), [(-2, 0), (0, 0), (1, 1), (5, 5), (10, 10), (11, 10), (14, 10)])
def test_d2_target_is_clamped_to_zero_to_faces(target: int, clamped: int) -> None:
    assert clamp_target(target, 10) == clamped


@given(target=st.integers(min_value=-50, max_value=50), faces=st.integers(min_value=2, max_value=20))
def test_d2_clamped_target_is_always_within_range_and_unchanged_when_already_in_it(target: int, faces: int) -> None:
    clamped = clamp_target(target, faces)
    assert 0 <= clamped <= faces
    if 0 <= target <= faces:
        assert clamped == target


# ----- D3: every roll is recorded -----


def test_d3_research_roll_records_who_why_target_and_result() -> None:
    c = new_campaign(SEED_A, "manual")
    c.research("Germany", "advanced_submarine", ManualDice([8], reference="table photo 1"))
    event = c.pending_events[-1]
    assert isinstance(event, Campaign.DiceRolled)
    assert event.roll == 1
    assert event.roller == "Germany"
    assert event.rule == "TE1"
    assert event.kind == "research"
    assert event.faces == 10
    assert event.target == 9
    assert event.success_when == "at_least"
    assert event.values == [8]
    assert event.source == "manual"
    assert event.reference == "table photo 1"
    assert event.outcome == "failure"
    assert event.purpose == "Germany research roll for Advanced Submarine"  # TE1, D3: its name (purposes_in_words)
    assert c.roll_count == 1


def test_d3_successful_research_roll_is_recorded_before_the_advance() -> None:
    c = new_campaign(SEED_A, "manual")
    c.research("Germany", "advanced_asw", ManualDice([9]))
    assert [type(e).__name__ for e in c.pending_events[-3:]] == ["ResearchPaid", "DiceRolled", "TechnologyAdvanced"]
    assert c.pending_events[-2].outcome == "success"


def test_d3_auto_research_roll_records_the_derived_value() -> None:
    c = new_campaign(SEED_B)
    value, _ = c.research("Germany", "advanced_asw", AutoDice(SEED_B))
    (event,) = dice_events(c)
    assert event.source == "auto"
    assert event.values == [value] == derive_roll(SEED_B, 1, 1, 10)
    assert event.epoch == 0


def test_d3_roll_numbers_increase_by_one_across_rolls() -> None:
    c = new_campaign(SEED_A)
    c.research("Germany", "advanced_submarine", AutoDice(SEED_A))
    c.research("Germany", "advanced_asw", AutoDice(SEED_A))
    while (c.nation, c.phase) != ("Britain", "research"):
        advance_passing(c)
    c.research("Britain", "advanced_asw", AutoDice(SEED_A))
    events = dice_events(c)
    assert [e.roll for e in events] == [1, 2, 3]
    assert [e.roller for e in events] == ["Germany", "Germany", "Britain"]
    assert c.roll_count == 3
    # An auto roll uses its position in the campaign's sequence, so it can be re-derived.
    assert events[2].values == derive_roll(SEED_A, 3, 1, 10)


def test_d3_refused_research_records_no_roll() -> None:
    c = new_campaign(SEED_A, "manual")
    c.research("Germany", "advanced_asw", ManualDice([1]))
    with pytest.raises(RuleViolation, match="^TE1: .*already made"):
        c.research("Germany", "advanced_asw", ManualDice([9]))
    assert [e.roll for e in dice_events(c)] == [1]
    assert c.roll_count == 1


@pytest.mark.parametrize("values", [[], [11]])
def test_d3_research_with_bad_manual_dice_records_nothing(values: list[int]) -> None:
    c = new_campaign(SEED_A, "manual")
    version, balance = c.version, c.balances["Germany"]
    with pytest.raises(DiceError):
        c.research("Germany", "advanced_submarine", ManualDice(values))
    assert c.version == version
    assert c.balances["Germany"] == balance
    assert c.research_rolls == {}
