"""NC4: a nation's decision after a round of a naval battle to fight on records no event (RK1
records a submerge or a retreat). `battle decide` says it ("battle 1: Germany fights on");
`battle auto` and `battle step`, which take it by default, said nothing of it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support import cli_on
from tracker.cli.common import fighting_on


@pytest.fixture
def north_sea(tmp_path: Path) -> Callable[..., str]:
    """North Sea 1914, manual dice: DE-SS1 and DE-SS2 attack in the Central North Sea, every
    shot of round 1 misses, and Germany decides."""
    run = cli_on(tmp_path / "n.db")
    run("new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run("next", "--to", "naval_combat")
    run("battle", "start", "--zone", "Central North Sea")
    run("battle", "targets", "1")
    run("battle", "screen", "1", "--screens", "")
    assert "next: tracker battle decide 1" in run("battle", "fire", "1", "--dice", "9,9,9,9,9")
    return run


def skagerrak(tmp_path: Path) -> Callable[..., str]:
    """The whole war, manual dice: Britain's GB-BB8 and GB-CA3 attack DE-CA1 and DE-SS2 in the
    Skagerrak; round 1 sinks DE-CA1, and both sides decide (Britain may retreat, DE-SS2 submerge)."""
    run = cli_on(tmp_path / "war.db")
    run("new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    run("next", "--to", "noncombat_movement")
    run("move", "DE-CA1", "DE-SS2", "--to", "Skagerrak")
    run("next", "--to", "combat_movement", "--nation", "Britain")
    run("move", "GB-CA3", "GB-BB8", "--to", "Skagerrak")
    run("next")
    run("battle", "start", "--zone", "Skagerrak")
    run("battle", "targets", "1", "--targets", "DE-SS2=GB-BB8")
    run("battle", "screen", "1", "--screens", "")
    out = run("battle", "fire", "1", "--dice", "1,10,10,10")
    assert "waiting for Britain and Germany to decide" in out
    return run


@pytest.fixture
def war(tmp_path: Path) -> Callable[..., str]:
    return skagerrak(tmp_path)


def test_nc4_battle_auto_says_the_fight_on_it_takes(north_sea: Callable[..., str]) -> None:
    lines = north_sea("battle", "auto", "1", "--dice", "9,9,9,9,9").splitlines()
    assert lines[:2] == ["battle 1: Germany fights on   [NC4]", "battle 1: round 2   [NC3]"]
    # Round 2 ends at another decision, taken by default too: said before round 3.
    at = lines.index("battle 1: round 3   [NC3]")
    assert lines[at - 1] == "battle 1: Germany fights on   [NC4]"


def test_nc4_battle_step_says_the_fight_on_it_takes(north_sea: Callable[..., str]) -> None:
    lines = north_sea("battle", "step", "1").splitlines()
    assert lines[:2] == ["battle 1: Germany fights on   [NC4]", "battle 1: round 2   [NC3]"]


def test_nc4_battle_auto_says_each_sides_fight_on_in_turn(war: Callable[..., str]) -> None:
    lines = war("battle", "auto", "1", "--dice", "10,10").splitlines()
    assert lines[:4] == [
        "battle 1: Britain fights on   [NC4]",
        "battle 1: next decide, waiting for Germany   [NC4]",
        "battle 1: Germany fights on   [NC4]",
        "battle 1: round 2   [NC3]",
    ]


def test_nc4_battle_decide_says_it_as_before(war: Callable[..., str]) -> None:
    assert war("battle", "decide", "1", "--nation", "Britain").splitlines()[:2] == [
        "battle 1: Britain fights on   [NC4]",
        "battle 1: next decide, waiting for Germany   [NC4]",
    ]
    assert war("battle", "decide", "1").splitlines()[:2] == [
        "battle 1: Germany fights on   [NC4]",
        "battle 1: round 2   [NC3]",
    ]


def test_nc4_a_submerge_or_a_retreat_is_no_fight_on(war: Callable[..., str]) -> None:
    out = war("battle", "decide", "1", "--nation", "Britain", "--retreat-to", "Central North Sea")
    assert "Britain retreats GB-BB8, GB-CA3 to Central North Sea" in out
    # Germany, which had not decided when the retreat ended the battle, did not fight on either.
    assert "fights on" not in out


def _event(kind: str, **fields: object) -> object:
    return type(kind, (SimpleNamespace,), {})(**fields)


def test_nc4_fighting_on_reads_who_decided_from_the_steps() -> None:
    events = [
        _event("SubmarinesSubmerged", battle=1, nation="Germany", units=["DE-SS2"]),
        _event("BattleAdvanced", battle=1, step="decide", waiting=["Britain"], rule="NC4"),
        _event("RoundStarted", battle=1, round=2),
    ]
    assert fighting_on(events, {1: ["Britain", "Germany"]}) == {2: ["Britain"]}
    # An interception's decide step (SM4) has its own default, to submerge: never "fights on".
    assert fighting_on([_event("BattleAdvanced", battle=2, step="decide", waiting=["Germany"], rule="SM4")], {}) == {}
