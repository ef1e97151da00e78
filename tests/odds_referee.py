"""Battles played through the real referee (the Campaign aggregate, in memory, auto dice with a
fresh seed per battle) from the reference positions, and the same positions as pure states for
the exact odds: the agreement tests and the benchmark share them."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from domain.campaign import Campaign
from domain.campaign.record import restore, savepoint
from domain.dice import AutoDice, commitment
from domain.procedures.base import Context
from domain.procedures.position import from_battle
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance

_, RULESET_DATA = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
CNS, SNS, DOVER = "Central North Sea", "Southern North Sea", "Dover Strait"
TOP = 3  # TE2: a technology is acquired at level 3 in the built-in ruleset


@dataclass(frozen=True)
class Position:
    """A reference position: the procedure, the forces (Germany attacks, Britain defends, except
    in ASW combat, where Britain hunts German submarines), technology and NTR."""

    name: str
    procedure: str  # "naval", "convoy", "asw" or "interception"
    german: dict[str, int]
    british: dict[str, int]
    tech: dict[str, dict[str, int]] = field(default_factory=dict)
    ntr: int = 0


POSITIONS = [
    Position("naval", "naval", {"battleship": 1, "submarine": 2}, {"cruiser": 1, "destroyer": 2}),
    Position(
        "naval-TE3-TE4",
        "naval",
        {"submarine": 3, "cruiser": 1},
        {"destroyer": 2, "fighter": 1},
        {"Germany": {"advanced_submarine": TOP}, "Britain": {"advanced_asw": TOP}},
    ),
    Position("convoy", "convoy", {"submarine": 2}, {"destroyer": 1, "cruiser": 1}, ntr=3),
    Position(
        "convoy-TE3", "convoy", {"submarine": 2}, {"destroyer": 2}, {"Germany": {"advanced_submarine": TOP}}, ntr=3
    ),
    Position("asw", "asw", {"submarine": 2}, {"destroyer": 2, "bomber": 1}),
    Position("asw-TE4", "asw", {"submarine": 2}, {"destroyer": 1, "cruiser": 1}, {"Britain": {"advanced_asw": TOP}}),
    Position("interception", "interception", {"submarine": 3}, {"destroyer": 2, "cruiser": 1}),
    Position(
        "interception-TE3", "interception", {"submarine": 2}, {"destroyer": 3}, {"Germany": {"advanced_submarine": TOP}}
    ),
]
BY_NAME = {p.name: p for p in POSITIONS}
ZONE = {"naval": CNS, "convoy": CNS, "asw": CNS, "interception": SNS}
PHASE = {
    "naval": ("Germany", "naval_combat"),
    "convoy": ("Britain", "collect_resources"),
    "asw": ("Britain", "naval_combat"),
    "interception": ("Germany", "combat_movement"),
}
ABBR = {name: t["abbr"] for name, t in RULESET_DATA["units"].items()}
CODE = {"Germany": "DE", "Britain": "GB"}


class Table:
    """A campaign at the position's phase with only the position's units on the board, restored
    before every battle."""

    def __init__(self, position: Position) -> None:
        self.position = position
        c = Campaign.create(uuid.uuid4(), "odds", SCENARIO, RULESET_DATA, "auto", commitment("00" * 32))
        nation, phase = PHASE[position.procedure]
        while (c.nation, c.phase) != (nation, phase):
            advance(c)
        zone = ZONE[position.procedure]
        start = "Heligoland Bight" if position.procedure == "interception" else zone
        # A setup the scenario does not offer: the board holds the position's units alone.
        c.units.clear()
        for owner, forces in (("Germany", position.german), ("Britain", position.british)):
            for unit_type, n in forces.items():
                for i in range(n):
                    c.units[f"{CODE[owner]}-{ABBR[unit_type]}{i + 1}"] = {
                        "type": unit_type,
                        "nation": owner,
                        "at": start if owner == "Germany" else zone,
                        "damage": 0,
                        # F7: the phasing nation's air units flew there in combat_movement.
                        "moved": int(owner == nation and RULESET_DATA["units"][unit_type]["category"] == "air"),
                    }
        for owner, levels in position.tech.items():
            c.tech[owner].update(levels)
        if position.procedure == "convoy":
            c.ntr["Britain"][zone] = position.ntr
        self.campaign = c
        self.saved = savepoint(c)

    def reset(self) -> Campaign:
        """The campaign as it was set up (the aggregate's own rollback of a refused action)."""
        restore(self.campaign, self.saved)
        self.saved = savepoint(self.campaign)
        return self.campaign

    def start(self) -> int:
        """Start the position's procedure on the board as it is; returns the battle number."""
        c, p = self.campaign, self.position
        zone = ZONE[p.procedure]
        if p.procedure == "naval":
            return c.naval_start("Germany", zone)
        if p.procedure == "asw":
            return c.asw_start("Britain", zone)
        if p.procedure == "convoy":
            return c.declare_convoy_attack("Germany", zone)
        subs = sorted(u for u, x in c.units.items() if x["nation"] == "Germany")
        c.move("Germany", subs, [zone, DOVER])
        return min(int(b) for b in c.battles)

    def pure(self) -> tuple[Any, Context, int]:
        """The position as the pure state the odds start from (the referee's own start)."""
        c = self.reset()
        battle = self.start()
        state = from_battle(c.board(), c.battles[str(battle)], frozenset(c.committed))
        self.reset()
        return state

    def play(self, seed: str) -> tuple[Any, ...]:
        """One battle to its end with the tracker's defaults: the outcome as the odds name it."""
        c = self.reset()
        battle = self.start()
        c.battle_auto(battle, AutoDice(seed))
        return outcome_key(self.position, c)


def _left(c: Campaign, nation: str, test: Callable[[dict[str, Any]], bool]) -> tuple[tuple[str, int], ...]:
    counts: Counter[str] = Counter()
    for u in c.units.values():
        if u["nation"] == nation and test(u):
            counts[f"{u['type']} (damaged)" if u["damage"] else u["type"]] += 1
    return tuple(sorted(counts.items()))


def outcome_key(position: Position, c: Campaign) -> tuple[Any, ...]:
    """(attacker's units left by type, defender's, NTR destroyed), as `Outcome` has them."""
    if position.procedure == "asw":
        attacker, defender = "Britain", "Germany"
    else:
        attacker, defender = "Germany", "Britain"
    anywhere = position.procedure == "interception"
    att = (
        _left(c, attacker, lambda u: True)
        if anywhere
        else _left(c, attacker, lambda u: u["at"] == ZONE[position.procedure])
    )
    dfd = _left(c, defender, lambda u: True)
    ntr = position.ntr - c.ntr["Britain"].get(ZONE["convoy"], 0) if position.procedure == "convoy" else 0
    return att, dfd, ntr


def play_many(position: Position, runs: int, seed: int) -> Counter[tuple[Any, ...]]:
    table = Table(position)
    rng = random.Random(seed)
    return Counter(table.play(f"{rng.getrandbits(256):064x}") for _ in range(runs))
