"""NC1, NC4: a naval battle goes on "until one side is gone"; a submarine that submerges leaves
the battle. When the defender's last unit in the battle, a submarine, submerges at the decide
step before the attacker has decided, the battle is over (`[naval_combat]
gone_side_ends_battle`): the tracker asked the attacker still to fight on or retreat, and took
the retreat, the attacker's ships leaving the zone, which they did not when the attacker
happened to decide first (same position, another outcome). A campaign recorded before the key
keeps the old order of deciding, so its log verifies."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from domain.errors import RuleViolation
from tests.test_table_round2_fight_on import skagerrak
from tracker.service.application import Tracker


def test_nc1_the_battle_ends_when_the_defenders_last_submarine_submerges(tmp_path: Path) -> None:
    run = skagerrak(tmp_path)
    out = run("battle", "decide", "1", "--nation", "Germany", "--submerge", "DE-SS2")
    assert "DE-SS2 submerges and stays" in out
    # Germany has no unit left in the battle: it has ended, with Britain's ships still there.
    assert "battle 1 ends" in out
    assert "battle 1" not in run("pending")
    assert "GB-BB8" in run("show", "Skagerrak")


def test_nc1_deciding_in_the_other_order_ends_the_battle_with_the_ships_there(tmp_path: Path) -> None:
    run = skagerrak(tmp_path)
    run("battle", "decide", "1", "--nation", "Britain")
    out = run("battle", "decide", "1", "--nation", "Germany", "--submerge", "DE-SS2")
    assert "battle 1 ends (Germany has no unit left in the battle)" in out
    assert "GB-BB8" in run("show", "Skagerrak")


def test_nc1_before_the_key_the_attacker_still_decided_and_might_retreat(tmp_path: Path) -> None:
    from domain.procedures import naval
    from domain.procedures.naval import NavalDecision
    from domain.procedures.position import from_battle

    run = skagerrak(tmp_path)
    with Tracker(str(tmp_path / "war.db")) as t:
        c = t.load(t.campaign_id(None))
    (battle,) = c.battles.values()
    state, ctx, _rounds = from_battle(c.board(), battle, frozenset(c.committed))
    submerge = NavalDecision(submerge=("DE-SS2",))
    ended, _ = naval.decide(state, ctx, submerge, "defender")
    assert ended.step == naval.NavalStep.ENDED and ended.waiting == ()
    before = dataclasses.replace(ctx, ruleset=dataclasses.replace(ctx.ruleset, gone_side_ends_battle=False))
    waiting, _ = naval.decide(state, before, submerge, "defender")
    assert waiting.step == naval.NavalStep.DECIDE and waiting.waiting == ("attacker",)
    retreated, _ = naval.decide(waiting, before, NavalDecision(retreat_to="Norwegian Leads"), "attacker")
    assert retreated.result == "retreated"
    with pytest.raises(RuleViolation):
        naval.decide(ended, ctx, NavalDecision(retreat_to="Norwegian Leads"), "attacker")
    assert "GB-BB8" in run("show", "Skagerrak")
