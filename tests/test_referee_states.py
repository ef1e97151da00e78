"""The referee runs each step of a battle on the pure procedure from the state the last step left
(it does not read the recorded battle back between two steps): that state must wait for exactly
what the recorded state, read back, waits for (the same decision with the same options and
default, or the same dice in the same groups). Battles from every reference position, played to
their end with the defaults, check it at every step."""

from __future__ import annotations

import random

import pytest

from domain.campaign import referee
from domain.dice import AutoDice
from domain.procedures.position import from_battle
from tests.odds_referee import BY_NAME, POSITIONS, Table


@pytest.mark.parametrize("name", [p.name for p in POSITIONS])
def test_the_state_a_step_leaves_waits_for_what_the_record_reads_back(name: str) -> None:
    table = Table(BY_NAME[name])
    rng = random.Random(name)
    steps = 0
    for _ in range(15):
        c = table.reset()
        table.start()
        dice = AutoDice(f"{rng.getrandbits(256):064x}")
        while c.battles:
            number = min(int(k) for k in c.battles)
            b = c.battles[str(number)]
            kept = referee._kept.get(c._kept_key(b))
            assert kept is not None, f"battle {number} at {b['step']} has no state kept from its last step"
            state, ctx = kept
            read, _, _ = from_battle(c.board(), b, frozenset(c.committed), ctx)
            procedure = referee.pure(b["kind"])
            assert procedure.need(state, ctx) == procedure.need(read, ctx), (b["kind"], b["step"])
            c._one_step(number, dice, None)
            steps += 1
    assert steps > 30
