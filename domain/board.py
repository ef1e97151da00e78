"""A frozen view of the board that rule functions read: units, NTR, tech, turn position."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from domain.errors import InputError, RuleViolation, require_each_once
from domain.ruleset import Ruleset, UnitType
from domain.scenario import Scenario
from domain.text import plural


@dataclass(frozen=True)
class Unit:
    id: str
    type: str
    nation: str
    at: str
    damage: int = 0
    moved: int = 0


_UNIT_FIELDS = frozenset(("type", "nation", "at", "damage", "moved"))

# The `Unit` last made for each unit id, with a copy of the fields it was made from: a unit is
# its id and its fields, so one made from equal fields is the same value, whichever campaign
# it came from. Most units stand still from one board to the next (a whole-war board holds
# over 150), and comparing five fields costs a fifth of making the unit again.
_MADE: dict[str, tuple[dict[str, Any], Unit]] = {}
# Unit ids are the referee's own (nation, type, number), so the cache stays small; the bound
# only keeps a process serving very many campaigns from holding every id it ever saw.
_MADE_MOST = 50_000


def units_of(state: dict[str, dict[str, Any]]) -> dict[str, Unit]:
    """The units of a campaign's state (unit id -> its fields) as `Unit`s. Every board the
    referee reads makes them all: a unit whose fields equal those it was last made from is
    that `Unit` again (`_MADE`); one holding exactly the fields is made without the frozen
    dataclass's `__init__` (its fields written straight into its `__dict__`, which freezing
    leaves writable); the same `Unit`."""
    if len(_MADE) > _MADE_MOST:
        _MADE.clear()
    made = _MADE.get
    new = object.__new__
    units: dict[str, Unit] = {}
    for uid, fields in state.items():
        found = made(uid)
        if found is not None and found[0] == fields:
            units[uid] = found[1]
            continue
        if fields.keys() == _UNIT_FIELDS:
            unit = new(Unit)
            held = unit.__dict__
            held["id"] = uid
            held.update(fields)
        else:
            unit = Unit(id=uid, **fields)
        # A copy: the campaign changes its own fields in place (a move, a hit).
        _MADE[uid] = (dict(fields), unit)
        units[uid] = unit
    return units


@dataclass(frozen=True)
class Board:
    scenario: Scenario
    ruleset: Ruleset
    units: dict[str, Unit]
    ntr: dict[str, dict[str, int]]
    tech: dict[str, dict[str, int]]
    balances: dict[str, int]
    round: int
    nation: str
    phase: str
    owners: dict[str, str]  # AD1: territory -> owner now (the scenario's, as adjusted)
    lost: dict[str, str] = field(default_factory=dict)  # unit -> how it left the board
    neutral: frozenset[str] = frozenset()  # F8: nations not yet at war, this round

    def enemies(self, nation: str, other: str) -> bool:
        """F5, F8: nations of different sides, both at war (a neutral is nobody's enemy)."""
        if self.neutral and (nation in self.neutral or other in self.neutral):
            return False
        return self.scenario.are_enemies(nation, other)

    def still_neutral(self, nations: list[str]) -> tuple[str, str]:
        """F8: `nations` (neutral now) said in a refusal, with the round each enters the war,
        and the pronoun for their units: ("Italy is neutral in round 1 (at war from round
        3)", "its")."""
        if len(nations) == 1:
            entry = self.scenario.nations[nations[0]].entry_round
            return f"{nations[0]} is neutral in round {self.round} (at war from round {entry})", "its"
        entries = [f"{n} (at war from round {self.scenario.nations[n].entry_round})" for n in nations]
        return f"{' and '.join(entries)} are neutral in round {self.round}", "their"

    def allies(self, nation: str, other: str) -> bool:
        """F5, F8: the same nation, or nations of one side both at war (a neutral is nobody's ally)."""
        if nation == other:
            return True
        if self.neutral and (nation in self.neutral or other in self.neutral):
            return False
        return not self.scenario.are_enemies(nation, other)

    def unknown_unit(self, uid: str) -> InputError:
        """A unit the board does not hold: say how it left ("sunk in battle 3"), or that no such
        unit ever was."""
        how = self.lost.get(uid)
        if how is not None:
            return InputError(f"{uid} was {how}")
        import difflib  # only on this error path: not paid by every command that loads a board

        close = difflib.get_close_matches(uid.upper(), sorted(self.units), n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        return InputError(f"unknown unit {uid!r} ({hint}see `tracker state`)")

    def unit_type(self, unit: Unit) -> UnitType:
        return self.ruleset.units[unit.type]

    def units_at(self, zone: str) -> list[Unit]:
        return [u for u in self.units.values() if u.at == zone]

    def is_hostile_for(self, nation: str, zone: str) -> bool:
        """SM1: a sea zone holding an enemy warship (a unit type marked `hostile`)."""
        return any(self.enemies(nation, u.nation) and self.unit_type(u).hostile for u in self.units_at(zone))

    def acquired(self, nation: str) -> frozenset[str]:
        """TE2: technologies at the ruleset's top level."""
        levels = self.ruleset.research_levels
        return frozenset(t for t, lvl in self.tech.get(nation, {}).items() if lvl >= levels)

    def choose(self, eligible: list[Unit], chosen: list[str], why_not: Callable[[Unit], RuleViolation]) -> list[Unit]:
        """The units a player named, each of which must be among the eligible ones; `why_not`
        explains, with its rule, why a named unit is not."""
        require_each_once(chosen, "unit")
        by_id = {u.id: u for u in eligible}
        units = []
        for uid in chosen:
            if uid not in by_id:
                unit = self.units.get(uid)
                if unit is None:
                    raise self.unknown_unit(uid)
                raise why_not(unit)
            units.append(by_id[uid])
        return units

    def air_distance(self, unit: Unit, zone: str) -> int | None:
        """F7, F8: the map steps an air unit flies to the zone, over no neutral's territory (None:
        it cannot get there)."""
        avoid = (
            frozenset(t for t, owner in self.owners.items() if owner in self.neutral and owner != unit.nation)
            if self.neutral
            else frozenset()
        )
        return self.scenario.game_map.distance(unit.at, zone, avoid)

    def range_left(self, unit: Unit) -> int:
        """F7: the map steps an air unit may still fly this turn. A unit's moves start afresh
        only when its own nation's turn begins, and it flies only in that turn, so another
        nation's air unit has its whole range; a campaign recorded before the ruleset said so
        took off what it flew in its own nation's last turn (`others_fly_afresh`)."""
        move = self.unit_type(unit).move
        if unit.nation != self.nation and self.ruleset.others_fly_afresh:
            return move
        return move - unit.moved

    def out_of_range(self, unit: Unit, zone: str) -> RuleViolation:
        """F7: an air unit too far from the zone for the range it has left this turn."""
        dist = self.air_distance(unit, zone)
        move = self.unit_type(unit).move
        where = f"{dist} steps from {zone}" if dist is not None else f"cut off from {zone}"
        over = " without flying over a neutral's territory (F8)" if self.neutral else ""
        left = self.range_left(unit)
        return RuleViolation(
            "F7", f"{unit.id} in {unit.at} is {where}{over}, beyond the range it has left ({left} of {move})"
        )

    def describe_zone(self, zone: str) -> str:
        """What a zone holds, in a message: each nation once, in the scenario's turn order (as
        `state` lists them), its units after it in the ruleset's order of unit types: "Germany:
        1 submarine; Britain: 2 destroyers, 1 cruiser"; "empty"."""
        counts: dict[tuple[str, str], int] = {}
        for u in self.units_at(zone):
            counts[(u.nation, u.type)] = counts.get((u.nation, u.type), 0) + 1
        if not counts:
            return "empty"
        nations = {n: i for i, n in enumerate(self.scenario.turn_order)}
        types = {t: i for i, t in enumerate(self.ruleset.units)}
        by_nation: dict[str, list[str]] = {}
        ordered = sorted(
            counts.items(), key=lambda c: (nations.get(c[0][0], len(nations)), c[0][0], types.get(c[0][1], len(types)))
        )
        for (nat, t), n in ordered:
            by_nation.setdefault(nat, []).append(plural(n, t))
        return "; ".join(f"{nat}: {', '.join(units)}" for nat, units in by_nation.items())
