"""What every procedure shares: the units in a fight, the board facts the rules read, what a
procedure waits for (a decision, a roll, or nothing: its outcome) and the facts it returns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from itertools import product
from operator import itemgetter
from typing import Any, Literal, NamedTuple, TypeVar

from domain.board import Board, Unit
from domain.dice import clamp_target
from domain.errors import InputError
from domain.rules.convoy import Roll as Spec
from domain.ruleset import Ruleset
from domain.scenario import GameMap, Nation, Scenario

_T = TypeVar("_T")
Side = Literal["attacker", "defender"]
SIDES: tuple[Side, Side] = ("attacker", "defender")


def other(side: Side) -> Side:
    return "defender" if side == "attacker" else "attacker"


class Piece(NamedTuple):
    """One unit taking part: its ID, type, nation and the hits it has taken (F3)."""

    id: str
    type: str
    nation: str
    damage: int = 0


@dataclass(frozen=True, eq=False)
class Context:
    """The board facts a procedure reads and never changes: the ruleset, the scenario (sides),
    and every nation's technology levels (TE2)."""

    ruleset: Ruleset
    scenario: Scenario
    tech: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # Results of pure functions of the pieces, shared by every state of an enumeration.
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    def board(self, pieces: tuple[Piece, ...]) -> Board:
        """A board holding just these units, for the leaf rule functions in `domain.rules`."""
        key = ("board", pieces)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._board(pieces)
        return found

    def _board(self, pieces: tuple[Piece, ...]) -> Board:
        memo = self.memo
        units: dict[str, Unit] = {}
        for p in pieces:
            # Boards differ by a unit or two from one position to the next: each unit is made
            # once, and so are the levels of technology.
            key = ("unit", p)
            unit = memo.get(key)
            if unit is None:
                unit = memo[key] = Unit(p.id, p.type, p.nation, "", p.damage)
            units[p.id] = unit
        tech = memo.get(("tech",))
        if tech is None:
            tech = memo[("tech",)] = {n: dict(levels) for n, levels in self.tech.items()}
        return Board(
            scenario=self.scenario,
            ruleset=self.ruleset,
            units=units,
            ntr={},
            tech=tech,
            balances={},
            round=0,
            nation="",
            phase="",
            owners={},
        )

    def acquired(self, nation: str) -> frozenset[str]:
        levels = self.ruleset.research_levels
        return frozenset(t for t, lvl in self.tech.get(nation, {}).items() if lvl >= levels)

    def hits_left(self, piece: Piece) -> int:
        """F3, NC5: hits a unit can still take before it sinks."""
        return self.ruleset.units[piece.type].hits - piece.damage


def hypothetical_scenario(sides: Mapping[str, str]) -> Scenario:
    """A scenario with only the nations and sides of a position given by hand (no map)."""
    nations = {
        n: Nation(name=n, code=n[:2].upper(), side=s, resources=0, income=0, tech={}, ntr={}, ntr_max={})
        for n, s in sides.items()
    }
    return Scenario(
        name="position",
        title="a position given by hand",
        ruleset="",
        dice="auto",
        turn_order=tuple(sides),
        nations=nations,
        game_map=GameMap(sea=frozenset(), land={}, adjacency={}),
        units=(),
    )


def keeps_hash(cls: type[_T]) -> type[_T]:
    """A frozen dataclass whose hash is computed once: the enumerator's memo hashes the same
    state many times."""
    fields = itemgetter(*cls.__dataclass_fields__)  # type: ignore[attr-defined]

    def __hash__(self: Any) -> int:
        d = self.__dict__
        h: int | None = d.get("_hash")
        if h is None:
            h = d["_hash"] = hash(fields(d))
        return h

    cls.__hash__ = __hash__  # type: ignore[method-assign]
    return cls


@keeps_hash
@dataclass(frozen=True)
class DieGroup:
    """Dice of one roll step that are alike: the same chance of each result and the same effect.

    `kind` "at_most": each die succeeds on `target` or less (D2), results (miss, hit).
    "total_at_least": each draw is `dice` dice whose total must reach `target` (CV2).
    "table": each die's face gives `table[face - 1]` (CV5); results are the distinct values of
    `table`, in increasing order. `effect` says what the group decides (a unit hit, the hits of
    a firing class, a submarine detected, ...), so groups with equal effects may be pooled."""

    effect: tuple[str, ...]
    count: int
    faces: int
    kind: Literal["at_most", "total_at_least", "table"] = "at_most"
    target: int = 0
    dice: int = 1
    table: tuple[int, ...] = ()
    cap: int | None = None  # successes beyond this change nothing

    @cached_property
    def values(self) -> tuple[int, ...]:
        """The result of each category: (0, 1) for miss and hit, or the table's values."""
        return tuple(sorted(set(self.table))) if self.kind == "table" else (0, 1)

    def category(self, faces: tuple[int, ...]) -> int:
        """The category one draw of `dice` dice falls in (for checking by brute force)."""
        if self.kind == "at_most":
            return 1 if faces[0] <= clamp_target(self.target, self.faces) else 0
        if self.kind == "total_at_least":
            return 1 if sum(faces) >= self.target else 0
        return self.values.index(self.table[faces[0] - 1])

    @cached_property
    def chances(self) -> tuple[Fraction, ...]:
        """The exact chance of each category for one draw."""
        counts = [0] * len(self.values)
        draws = list(product(range(1, self.faces + 1), repeat=self.dice)) if self.kind != "at_most" else []
        if self.kind == "at_most":
            hit = clamp_target(self.target, self.faces)
            return (Fraction(self.faces - hit, self.faces), Fraction(hit, self.faces))
        for draw in draws:
            counts[self.category(draw)] += 1
        return tuple(Fraction(c, len(draws)) for c in counts)


@dataclass(frozen=True)
class Roll:
    """A procedure waits for dice: who rolls, under which rule, the dice in groups, and for the
    referee the kind of roll (the ruleset's dice for it) and each die in rolling order."""

    roller: str
    rule: str
    groups: tuple[DieGroup, ...]
    kind: str = ""
    dice: tuple[Die, ...] = ()


@dataclass(frozen=True)
class Decision:
    """A procedure waits for a choice: who makes it, under which rule, what kind of choice,
    the legal options and the choice the tracker takes by default."""

    chooser: str
    rule: str
    kind: str
    options: tuple[tuple[str, tuple[str, ...]], ...]
    default: object


@dataclass(frozen=True)
class Fact:
    """Something that happened, for the referee to record: `kind` (e.g. "hit", "sunk",
    "detected", "submerged", "ntr_destroyed", "round", "ended"), the rule, the units, a number,
    the pairs of a choice (firer -> target, firer -> escort) and whether the tracker took that
    choice by default (no choice given, or the only one the rules leave)."""

    kind: str
    rule: str
    units: tuple[str, ...] = ()
    count: int = 0
    pairs: tuple[tuple[str, str], ...] = ()
    default: bool = False
    side: Side | None = None  # the side a choice is made for
    total: int = 0  # CV5: what the convoy table's dice came to, before the NTR there caps it
    lists: tuple[tuple[str, tuple[str, ...]], ...] = ()  # other units named, by what they are


Facts = tuple[Fact, ...]


@dataclass(frozen=True)
class Die:
    """One die of a roll step as the referee rolls and records it: the unit rolling, what it
    rolls at (base, modified target, modifiers), the group of the step it counts in, and what a
    success does: `against` is the submarine searched for or the shot's target, `screen` the
    escort taking that shot, `hit_rule` the rule a selective hit is recorded under."""

    unit: str
    spec: Spec
    group: int
    against: str = ""
    screen: str | None = None
    hit_rule: str = ""


def grouped(
    keyed: list[tuple[tuple[tuple[str, ...], int], Die]], faces: int, caps: Mapping[tuple[str, ...], int]
) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    """The groups of a roll step (dice alike: the same effect and target number, in a fixed
    order) and each die, in rolling order, with the index of its group."""
    groups, index = die_groups(Counter(k for k, _ in keyed), faces, caps)
    dice = tuple(evolve(d, group=index[k]) for k, d in keyed)
    return groups, dice


def die_groups(
    counts: Mapping[tuple[tuple[str, ...], int], int],
    faces: int,
    caps: Mapping[tuple[str, ...], int],
    memo: dict[Any, Any] | None = None,
) -> tuple[tuple[DieGroup, ...], dict[tuple[tuple[str, ...], int], int]]:
    """The groups of a roll step from how many of its dice have each (effect, target number),
    in a fixed order, and the index of each key's group; with `memo`, each group alike is one
    object (its hash worked out once)."""
    ordered = sorted(counts)
    groups: list[DieGroup] = []
    for e, t in ordered:
        fields = (e, counts[(e, t)], faces, t, caps.get(e))
        group = memo.get(fields) if memo is not None else None
        if group is None:
            group = DieGroup(effect=e, count=fields[1], faces=faces, target=t, cap=fields[4])
            if memo is not None:
                memo[fields] = group
        groups.append(group)
    return tuple(groups), {k: i for i, k in enumerate(ordered)}


def rolling_order(ctx: Context, eligible: tuple[Piece, ...], named: list[str]) -> list[str]:
    """CV4 (everywhere): the order the searchers named roll in. As amended, the order `pending`
    lists them (the eligible units' order, by ID), whatever order they were named in; a campaign
    recorded before the amendment keeps the order they were named in (`Ruleset.search_order`)."""
    if ctx.ruleset.search_order == "named":
        return list(named)
    wanted = set(named)
    return [p.id for p in eligible if p.id in wanted]


def searcher_dice(
    ctx: Context,
    kind: str,
    attacker: str,
    searchers: tuple[Piece, ...],
    present: tuple[Piece, ...],
    search_roll: Callable[[Board, Unit, str], Spec],
    effect: str,
) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    """CV3, SM3: one die per searcher, in their rolling order (`rolling_order`), each its own group (the
    units whose search succeeds are the ones that fight); worked out once per position."""
    key = (kind, attacker, searchers, present)
    found = ctx.memo.get(key)
    if found is None:
        board = ctx.board(searchers + present)
        faces = ctx.ruleset.faces_for(kind)
        groups: list[DieGroup] = []
        dice: list[Die] = []
        for i, p in enumerate(searchers):
            spec = search_roll(board, board.units[p.id], attacker)
            groups.append(DieGroup((effect, p.id), 1, faces, target=spec.target, cap=1))
            dice.append(Die(p.id, spec, i))
        found = ctx.memo[key] = (tuple(groups), tuple(dice))
    return found


@dataclass(frozen=True)
class Outcome:
    """How a procedure ended: the result (who won, or why it stopped), each side's units left
    by type, NTR destroyed, units lost, and who holds the zone."""

    procedure: str
    result: str
    attacker_left: tuple[tuple[str, int], ...]
    defender_left: tuple[tuple[str, int], ...]
    attacker_units_lost: int
    defender_units_lost: int
    ntr_destroyed: int = 0
    holder: str = "both"
    extra: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Ended:
    """A procedure that has ended waits for nothing: its outcome."""

    outcome: Outcome


Need = Roll | Decision | Ended


def left_by_type(ctx: Context, pieces: tuple[Piece, ...]) -> tuple[tuple[str, int], ...]:
    """Units by type, damaged capital ships apart ("battleship (damaged)")."""
    counts: dict[str, int] = {}
    for p in pieces:
        key = f"{p.type} (damaged)" if p.damage else p.type
        counts[key] = counts.get(key, 0) + 1
    return tuple(sorted(counts.items()))


def check_counts(groups: tuple[DieGroup, ...], counts: tuple[tuple[int, ...], ...]) -> None:
    """The dice of a roll step, one count per result of each group, add up to its dice."""
    if len(counts) != len(groups) or any(sum(c) != g.count for c, g in zip(counts, groups, strict=True)):
        raise ValueError("the dice do not match the groups of this roll")


def successes(group: DieGroup, counts: tuple[int, ...]) -> int:
    """The number of hits of a binary group from its counts per category."""
    return counts[1] if len(counts) > 1 else 0


def evolve(state: _T, **changes: Any) -> _T:
    """`dataclasses.replace` for the frozen states without its per-call field checks (the
    enumerator makes millions of states; the fields named are known to exist)."""
    new = object.__new__(type(state))
    fields = state.__dict__.copy()
    fields.update(changes)
    fields.pop("_hash", None)
    object.__setattr__(new, "__dict__", fields)
    return new


def as_ids(choice: object) -> list[str]:
    """A decision given as unit IDs (a list or tuple)."""
    if not isinstance(choice, list | tuple):
        raise InputError(f"expected a list of units, got {choice!r}")
    return [str(x) for x in choice]


def as_pairs(choice: object) -> dict[str, str]:
    """A decision given as pairs, firer -> target (a dict or a sequence of pairs)."""
    if isinstance(choice, dict):
        return {str(k): str(v) for k, v in choice.items()}
    if isinstance(choice, list | tuple):
        return {str(k): str(v) for k, v in choice}
    raise InputError(f"expected pairs of units, got {choice!r}")
