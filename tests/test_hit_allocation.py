"""Hit allocation (HA4-HA7) as pure functions over a board: the order in which non-selective
hits fall, the hits placed in the owner's order, the cheapest legal default and refused
choices. Selective fire (HA1-HA3) is in test_targets.py; the boards in hit_boards.py.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation
from domain.rules import hits
from tests.hit_boards import TYPE, board, ids, units

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
    assert info.value.rule == "HA7"
    assert "(input: DE-DD1)" in info.value.reason
    assert "in every order at least 1 hit falls on DE-BB1 (HA5)" in info.value.reason
    assert "legal: DE-BB1; default: DE-BB1" in info.value.reason
    assert hits.allocate(b, "Germany", [("capital", 1)], own, Counter(), ["DE-BB1"]) == ["DE-BB1"]
    # Two capital hits sink the battleship (F3); the third goes on to the destroyer.
    assert hits.allocate(b, "Germany", [("capital", 3)], own, Counter(), None) == ["DE-BB1", "DE-BB1", "DE-DD1"]


def test_ha6_escort_hits_go_to_escorts_then_capital_ships_then_transports() -> None:
    b = board("DE-BB1", "DE-CA1", "DE-TR1")
    own = units(b, "DE-BB1", "DE-CA1", "DE-TR1")
    assert [ids(t) for t in hits.hit_tiers(b, "escort", own)] == [["DE-CA1"], ["DE-BB1"], ["DE-TR1"]]
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Germany", [("escort", 1)], own, Counter(), ["DE-BB1"])
    assert info.value.rule == "HA7" and "at least 1 hit falls on DE-CA1 (HA6)" in info.value.reason
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Germany", [("escort", 2)], own, Counter(), ["DE-CA1", "DE-TR1"])
    assert info.value.rule == "HA7" and "at least 1 hit falls on DE-BB1" in info.value.reason
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
    assert info.value.rule == "HA7" and "at least 1 hit falls on DE-TR1 (HA6)" in info.value.reason
    assert hits.allocate(b, "Germany", [("escort", 3)], own, Counter(), None) == ["DE-TR1", "DE-SS1", "DE-FT1"]
    b = board("DE-FT1")
    assert hits.allocate(b, "Germany", [("capital", 1)], units(b, "DE-FT1"), Counter(), None) == ["DE-FT1"]


def test_ha5_ha6_hits_of_both_classes_are_placed_in_any_order_the_owner_likes_HA7() -> None:
    b = board("DE-BB1", "DE-DD1")
    own = units(b, "DE-BB1", "DE-DD1")
    groups = [("capital", 1), ("escort", 1)]
    assert sorted(hits.allocate(b, "Germany", groups, own, Counter(), None)) == ["DE-BB1", "DE-DD1"]
    # The owner names the units hit, in any order.
    assert hits.allocate(b, "Germany", groups, own, Counter(), ["DE-DD1", "DE-BB1"]) == ["DE-DD1", "DE-BB1"]
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Germany", groups, own, Counter(), ["DE-BB1", "DE-BB1"])
    assert info.value.rule == "HA7" and "(input: DE-BB1,DE-BB1)" in info.value.reason
    assert "at most 1 hit can fall on DE-BB1" in info.value.reason


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
    with pytest.raises(RuleViolation, match=r"at least 2 hits fall on DE-DD1, DE-DD2 \(HA6\)"):
        hits.allocate(b, "Germany", [("escort", 2)], own, Counter(), ["DE-DD1"])
    with pytest.raises(RuleViolation, match="has 2 hits to place, got 3"):
        hits.allocate(b, "Germany", [("escort", 2)], own, Counter(), ["DE-DD1", "DE-DD2", "DE-DD1"])
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


# ----- HA7 as amended: the hits placed one at a time, in the order the owner chooses -----


def test_ha7_a_destroyers_hit_placed_first_leaves_a_battleships_nothing_to_hit_NC6() -> None:
    """RULES.md HA7's example: a battleship's and a destroyer's hit on one cruiser and one
    submarine. The destroyer's hit placed first takes the cruiser; the battleship's then finds
    nothing (NC6) and is lost: only the cruiser is lost, and that is the cheapest choice."""
    b = board("GB-CA1", "GB-SS1")
    own = units(b, "GB-CA1", "GB-SS1")
    groups = [("capital", 1), ("escort", 1)]
    assert hits.allocate(b, "Britain", groups, own, Counter(), None) == ["GB-CA1"]
    assert not hits.allocation_is_forced(b, groups, own, Counter())  # or both: the owner's choice
    assert hits.allocate(b, "Britain", groups, own, Counter(), ["GB-CA1"]) == ["GB-CA1"]
    assert hits.allocate(b, "Britain", groups, own, Counter(), ["GB-SS1", "GB-CA1"]) == ["GB-SS1", "GB-CA1"]
    for wrong in (["GB-SS1"], []):
        with pytest.raises(RuleViolation) as info:
            hits.allocate(b, "Britain", groups, own, Counter(), wrong)
        assert info.value.rule == "HA7"
        assert f"(input: {','.join(wrong) or 'none'})" in info.value.reason
        assert "legal: GB-CA1 (1 hit lost) | GB-CA1, GB-SS1; default: GB-CA1" in info.value.reason


def test_ha7_the_default_is_the_cheapest_over_every_order_not_the_rulesets_order_of_classes() -> None:
    # In the ruleset's order of classes the battleship's hit damages DE-BB1, the first escort
    # hit sinks it and the second takes DE-SS1 (26 lost); the escorts' hits placed first sink
    # DE-BB1 and the battleship's then finds nothing (NC6): 20 lost.
    b = board("DE-BB1", "DE-SS1")
    own = units(b, "DE-BB1", "DE-SS1")
    groups = [("capital", 1), ("escort", 2)]
    assert Counter(hits.allocate(b, "Germany", groups, own, Counter(), None)) == Counter({"DE-BB1": 2})
    chosen = ["DE-BB1", "DE-SS1", "DE-BB1"]  # the owner may still choose the dearer order
    assert hits.allocate(b, "Germany", groups, own, Counter(), chosen) == chosen


def test_ha7_a_unit_no_firer_may_hit_is_refused_naming_NC6() -> None:
    b = board("GB-CA1", "GB-SS1")
    own = units(b, "GB-CA1", "GB-SS1")
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Britain", [("capital", 2)], own, Counter(), ["GB-SS1"])
    assert info.value.rule == "HA7"
    assert "none of the 2 hits from battleships and carriers may fall on GB-SS1 (HA4-HA6, NC6)" in info.value.reason
    assert "legal: GB-CA1 (1 hit lost)" in info.value.reason
    # With only a submarine left the battleship's hit has no tier at all; the destroyer's must land.
    b = board("GB-SS1")
    with pytest.raises(RuleViolation) as info:
        hits.allocate(b, "Britain", [("capital", 1), ("escort", 1)], units(b, "GB-SS1"), Counter(), [])
    assert "at least 1 hit falls on GB-SS1 (HA6)" in info.value.reason


# ----- the placing against the rule's own words, every order tried -----

_SIDE_TYPES = ("battleship", "aircraft_carrier", "cruiser", "destroyer", "submarine", "transport", "fighter")


TYPE_CODE = {name: code for code, name in TYPE.items()} | {"aircraft_carrier": "CV"}


def _side(counts: list[int], damaged: int) -> tuple[Board, list[Unit]]:
    ids_ = [f"GB-{TYPE_CODE[t]}{i + 1}" for t, n in zip(_SIDE_TYPES, counts, strict=True) for i in range(n)]
    capitals = [u for u in ids_ if u[3:5] in ("BB", "CV")]
    b = board(*ids_, damaged=tuple(capitals[:damaged]))
    return b, [b.units[u] for u in ids_]


def _every_order(
    b: Board, groups: list[tuple[str, int]], own: list[Unit], taken: Counter[str]
) -> set[tuple[tuple[str, int], ...]]:
    """RULES.md HA7 word for word: the hits one at a time, in every order and, for each, on every
    unit of the highest tier its firer's rule (HA4-HA6, NC6) still finds afloat and not yet hit
    (a damaged capital ship counts again for its second hit); a hit with no such unit is lost.
    Every set of hits per unit some order leads to."""
    left0 = {u.id: hits.hits_to_sink(b, u) - taken[u.id] for u in own}
    tiers = {c: [[u.id for u in t] for t in hits.hit_tiers(b, c, own)] for c, _ in groups}
    seen: set[tuple[tuple[tuple[str, int], ...], tuple[int, ...]]] = set()
    out: set[tuple[tuple[str, int], ...]] = set()

    def walk(left: dict[str, int], to_place: tuple[int, ...]) -> None:
        key = (tuple(sorted(left.items())), to_place)
        if key in seen:
            return
        seen.add(key)
        if not any(to_place):
            out.add(tuple(sorted((u, left0[u] - n) for u, n in left.items() if left0[u] - n)))
            return
        for i, (c, _) in enumerate(groups):
            if not to_place[i]:
                continue
            rest = to_place[:i] + (to_place[i] - 1,) + to_place[i + 1 :]
            tier = next(([u for u in t if left[u] > 0] for t in tiers[c] if any(left[u] > 0 for u in t)), [])
            if not tier:
                walk(left, rest)  # no legal target left: the hit is lost
            for u in tier:
                walk({**left, u: left[u] - 1}, rest)

    walk(dict(left0), tuple(n for _, n in groups))
    return out


def _cost(b: Board, own: list[Unit], taken: Counter[str], placed: tuple[tuple[str, int], ...]) -> int:
    return sum(b.unit_type(b.units[u]).cost for u, n in placed if n >= hits.hits_to_sink(b, b.units[u]) - taken[u])


@settings(max_examples=150, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=0, max_value=2), min_size=len(_SIDE_TYPES), max_size=len(_SIDE_TYPES)),
    damaged=st.integers(min_value=0, max_value=2),
    landed=st.lists(st.integers(min_value=0, max_value=20), max_size=2),
    capital=st.integers(min_value=0, max_value=3),
    escort=st.integers(min_value=0, max_value=4),
)
def test_ha7_every_choice_some_order_leads_to_is_accepted_and_the_default_is_the_cheapest(
    counts: list[int], damaged: int, landed: list[int], capital: int, escort: int
) -> None:
    """Against every order of placing the hits, tried one by one from the rule's text: the owner
    may choose exactly what some order leads to (anything else is refused, HA7), the default is
    one of those and loses the fewest resources, and nobody is asked when there is one."""
    b, own = _side(counts, damaged)
    groups = [(c, n) for c, n in (("capital", capital), ("escort", escort)) if n]
    if not own or not groups:
        return
    taken = Counter(own[i % len(own)].id for i in landed)
    reachable = _every_order(b, groups, own, taken)
    default = hits.allocate(b, "Britain", groups, own, taken, None)
    as_key = tuple(sorted(Counter(default).items()))
    assert as_key in reachable
    assert _cost(b, own, taken, as_key) == min(_cost(b, own, taken, r) for r in reachable)
    assert hits.allocation_is_forced(b, groups, own, taken) == (len(reachable) == 1)
    for r in reachable:
        chosen = [u for u, n in r for _ in range(n)]
        assert hits.allocate(b, "Britain", groups, own, taken, chosen[::-1]) == chosen[::-1]
    # Every other way of naming the hits on these units is refused.
    afloat = [u.id for u in own if hits.hits_to_sink(b, u) - taken[u.id] > 0]
    for k in range(min(2, len(afloat)) + 1):
        for chosen in (afloat[:k], afloat[-k:] if k else []):
            if tuple(sorted(Counter(chosen).items())) not in reachable:
                with pytest.raises(RuleViolation) as info:
                    hits.allocate(b, "Britain", groups, own, taken, list(chosen))
                assert info.value.rule == "HA7"


# ----- placing a volley's hits in steps (what the exact odds rely on) -----


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=0, max_value=3), min_size=len(_SIDE_TYPES), max_size=len(_SIDE_TYPES)),
    damaged=st.integers(min_value=0, max_value=3),
    landed=st.lists(st.integers(min_value=0, max_value=20), max_size=4),
    placed=st.dictionaries(st.sampled_from(["capital", "escort", "submarine", "air"]), st.integers(1, 8), max_size=4),
    kind=st.sampled_from(["naval", "convoy"]),
)
def test_placing_the_selective_hits_first_leaves_what_placing_them_together_leaves_HA4_HA7(
    counts: list[int], damaged: int, landed: list[int], placed: dict[str, int], kind: str
) -> None:
    """The default casualties of a volley's non-selective hits (HA4-HA7) depend on nothing but
    the units' hits left, so the selective hits first, then all the classes' hits on what they
    left, leave what all of them together leave; and `placing_of` gives the same default for
    any numbers of hits of the same classes (the exact odds place them so)."""
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
    first = volley.left_after(fight, ctx, "defender", side, shots, ())
    assert volley.left_after(fight, ctx, "defender", first, (), order) == together
    if order:
        placing = volley.placing_of(fight, ctx, "defender", first, tuple((c, 1) for c, _ in order))
        cheapest = placing.cheapest(tuple(n for _, n in order))
        assert volley.left_of(first, cheapest, ctx) == together


def test_placing_one_class_at_a_time_is_not_placing_them_together_under_HA7() -> None:
    """Why the exact odds place every class's hits at once: the battleship's hit alone takes the
    cruiser and leaves the destroyer's the submarine; together the destroyer's is placed first."""
    from domain.procedures import volley
    from domain.procedures.base import Piece
    from domain.procedures.fight import Fight
    from tests.odds_positions import context

    ctx = context()
    side = (Piece("GB-CA1", "cruiser", "Britain"), Piece("GB-SS1", "submarine", "Britain"))
    fight = Fight("naval", "Germany", "Britain", (), side)
    together = volley.left_after(fight, ctx, "defender", side, (), (("capital", 1), ("escort", 1)))
    step = volley.left_after(fight, ctx, "defender", side, (), (("capital", 1),))
    step = volley.left_after(fight, ctx, "defender", step, (), (("escort", 1),))
    assert together == (Piece("GB-SS1", "submarine", "Britain"),)
    assert step == ()
