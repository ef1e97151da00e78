"""Choice policies of the odds (`--targets`, `--casualties`, `domain.procedures.policies`): the
enumerator under a policy against rolling every die on every face, the policies' picks within
HA1-HA7, and the command line for positions given by hand and battles in progress."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.procedures import odds, policies
from domain.procedures.base import Decision, Ended
from domain.procedures.canon import Canon
from domain.procedures.volley import Fight, VolleyStep
from tests.odds_positions import context, fleet, naval_battle
from tests.support import advance as advance_passing
from tracker.analysis import odds as view
from tracker.cli.main import cli
from tracker.service.application import Tracker


def _settle(ctx: Any, state: Any, policy: odds.Policy) -> Any:
    n = odds.need(state, ctx)
    while isinstance(n, Decision):
        state, _ = odds.decide(state, ctx, policy(state, n))
        n = odds.need(state, ctx)
    return state


def _every_face(ctx: Any, state: Any, policy: odds.Policy, canon: Canon) -> dict[Any, Fraction]:
    """The roll `state` waits for, every die on every face, each child settled under `policy`."""
    from itertools import product

    n = odds.need(state, ctx)
    assert isinstance(n, odds.Roll)
    dice = [(i, g) for i, g in enumerate(n.groups) for _ in range(g.count)]
    total = 1
    for _, g in dice:
        total *= g.faces
    out: dict[Any, Fraction] = {}
    for faces in product(*(range(1, g.faces + 1) for _, g in dice)):
        counts = [[0] * len(g.values) for g in n.groups]
        for (i, g), face in zip(dice, faces, strict=True):
            counts[i][g.category((face,))] += 1
        child, _ = odds.roll(state, ctx, tuple(tuple(c) for c in counts))
        child = canon(_settle(ctx, child, policy))
        out[child] = out.get(child, Fraction(0)) + Fraction(1, total)
    return out


POSITIONS = [
    (
        {"submarine": 1, "destroyer": 1},
        {"destroyer": 1, "cruiser": 1},
        {"attacker": "destroyer"},
        {"defender": "costliest"},
    ),
    (
        {"battleship": 1, "submarine": 1},
        {"battleship": 1, "destroyer": 1},
        {"attacker": "focus"},
        {"defender": "costliest"},
    ),
    ({"destroyer": 1}, {"fighter": 1, "bomber": 1}, {}, {"defender": "firepower"}),
]


@pytest.mark.parametrize("attackers,defenders,targets,casualties", POSITIONS, ids=["SS-type", "focus", "firepower"])
def test_every_roll_step_under_a_policy_equals_every_face_HA1_HA7(
    attackers: dict[str, int], defenders: dict[str, int], targets: dict[str, str], casualties: dict[str, str]
) -> None:
    """Under a non-default policy, each roll step the enumerator met gives, grouped and side by
    side, exactly what rolling every die on every face and deciding by the policy gives."""
    ctx = context()
    state = naval_battle(ctx, attackers, defenders)
    policy = view.policy("default", targets, casualties, ctx)  # type: ignore[arg-type]
    assert policy is not None
    engine = odds.Engine(ctx, policy)
    engine.canon = canon = Canon(state)
    root, _ = engine.settle(state)
    order = engine.order(root)
    checked = 0
    for s in order:
        if isinstance(odds.need(s, ctx), Ended):
            continue
        grouped: dict[Any, Fraction] = {}
        for (child, _), p in engine.edges[s]:
            grouped[child] = grouped.get(child, Fraction(0)) + p
        assert grouped == _every_face(ctx, s, policy, canon)
        checked += 1
    assert checked >= 2
    under = odds.exact_odds(state, ctx, policy, 1)
    default = odds.exact_odds(state, ctx, None, 1)
    assert under.truncated == 0 and sum(m[0] for m in under.outcomes.values()) == 1
    # The policy is felt: the distribution of what is left differs from the defaults'.
    assert {o: m[0] for o, m in under.outcomes.items()} != {o: m[0] for o, m in default.outcomes.items()}


def _casualty_fight(ctx: Any, hits: int) -> Fight:
    """Britain's cruiser, destroyer and fighter take `hits` hits from destroyers (HA6)."""
    defenders = fleet("Britain", {"cruiser": 1, "destroyer": 1, "fighter": 1})
    return Fight(
        "naval",
        "Germany",
        "Britain",
        fleet("Germany", {"destroyer": 2}),
        defenders,
        step=VolleyStep.CASUALTIES,
        groups=(("defender", "escort", hits),),
        waiting=("defender",),
    )


def test_casualty_policies_pick_within_the_tiers_HA4_HA6_HA7() -> None:
    ctx = context()
    f = _casualty_fight(ctx, 1)
    board = ctx.board(f.pieces)
    assert policies.casualties_choice(board, f, "defender", "cheapest") is None  # the tracker's default
    assert policies.casualties_choice(board, f, "defender", "costliest") == ["GB-CA1"]
    assert policies.casualties_choice(board, f, "defender", "firepower") == ["GB-DD1"]
    # HA4: naval units first, whatever the policy; the fighter goes last.
    two = _casualty_fight(ctx, 3)
    for how in ("costliest", "firepower"):
        picked = policies.casualties_choice(board, two, "defender", how)
        assert picked is not None and Counter(picked) == Counter(["GB-CA1", "GB-DD1", "GB-FT1"])


def test_target_policies_HA1_HA3() -> None:
    ctx = context()
    pieces = fleet("Germany", {"submarine": 3}) + fleet("Britain", {"battleship": 1, "destroyer": 2})
    board = ctx.board(pieces)
    legal = {s: ("GB-BB1", "GB-DD1", "GB-DD2") for s in ("DE-SS1", "DE-SS2", "DE-SS3")}
    assert policies.targets_choice(board, legal, "spread") is None
    assert set(policies.targets_choice(board, legal, "focus").values()) == {"GB-BB1"}  # type: ignore[union-attr]
    aimed = policies.targets_choice(board, legal, "destroyer")
    assert aimed is not None and Counter(aimed.values()) == Counter({"GB-DD1": 2, "GB-DD2": 1})
    # A shot that cannot pick the type named keeps its own legal targets.
    mixed = {"DE-SS1": ("GB-BB1",), "DE-SS2": ("GB-BB1", "GB-DD1")}
    assert policies.targets_choice(board, mixed, "destroyer") == {"DE-SS1": "GB-BB1", "DE-SS2": "GB-DD1"}


# ----- the command line -----


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


HAND = [
    "naval",
    "--attacker",
    "Germany:battleship=1,submarine=2,destroyer=1",
    "--defender",
    "Britain:battleship=1,cruiser=1,destroyer=2",
]


def test_policies_for_a_position_given_by_hand_text_and_json(tmp_path: Path) -> None:
    db = str(tmp_path / "none.db")
    default = json.loads(run(db, "odds", *HAND, "--json"))
    assert default["choices"] == {
        "targets": {"attacker": "spread", "defender": "spread"},
        "casualties": {"attacker": "cheapest", "defender": "cheapest"},
        "after_round": "default",
    }
    data = json.loads(run(db, "odds", *HAND, "--targets", "attacker=battleship", "--casualties", "costliest", "--json"))
    assert data["choices"]["targets"] == {"attacker": "battleship", "defender": "spread"}
    assert data["choices"]["casualties"] == {"attacker": "costliest", "defender": "costliest"}
    assert sum(o["probability"] for o in data["outcomes"]) == pytest.approx(1, abs=1e-12)
    assert data["p"] != default["p"]
    text = run(db, "odds", *HAND, "--targets", "focus", "--casualties", "defender=firepower")
    assert "Choices: targets: focus; casualties: attacker cheapest, defender firepower" in text
    assert "Choices:" not in run(db, "odds", *HAND)
    assert not Path(db).exists()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--targets", "zeppelin"], "--targets: unknown policy 'zeppelin'"),
        (["--casualties", "battleship"], "--casualties: unknown policy 'battleship'"),
        (["--casualties", "middle=cheapest"], "--casualties middle=cheapest: the side is attacker or defender"),
        (["--targets", "defender="], "--targets: unknown policy ''"),
    ],
)
def test_a_bad_policy_is_one_line_naming_the_option_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    out = run(str(tmp_path / "none.db"), "odds", *HAND, *args, code=2)
    assert message in out and out.count("\n") == 1, out


def test_policies_for_a_battle_in_progress_NC1(tmp_path: Path) -> None:
    db = str(tmp_path / "odds.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914")
    with Tracker(db) as t:

        def to_battle(c: Any, _dice: Any) -> None:
            while c.phase != "naval_combat":
                advance_passing(c)
            c.naval_start("Germany", "Central North Sea")

        t.execute(t.campaign_id(None), to_battle)
    default = json.loads(run(db, "odds", "1", "--json", "--exact"))
    data = json.loads(run(db, "odds", "1", "--json", "--exact", "--casualties", "costliest", "--targets", "focus"))
    assert sum(Fraction(o["exact"]) for o in data["outcomes"]) == 1
    assert data["choices"]["casualties"]["attacker"] == "costliest"
    assert data["expected"] != default["expected"]  # the policies change the battle
    text = run(db, "odds", "1", "--casualties", "attacker=costliest")
    assert "Choices: casualties: attacker costliest, defender cheapest" in text


def test_the_readme_policy_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    guide = (Path(__file__).resolve().parent.parent / "docs" / "guide.md").read_text()
    section = guide[guide.index("## Exact odds and luck") : guide.index("`tracker luck` sets")]
    lines = section.splitlines()
    at = next(
        i for i, line in enumerate(lines) if line.startswith("tracker odds naval") and "--targets" in lines[i + 1]
    )
    command = (lines[at].rstrip("\\") + lines[at + 1]).split()
    out = run(str(tmp_path / "none.db"), *command[1:])
    assert lines[at + 2].removeprefix("# ") in out
    shown = lines[at + 3].removeprefix("# ").split(" (")[0]
    assert shown in out, shown
    default = lines[at + 3].split("(")[1].split()[0]
    assert f"{default}  attacker wins" in run(str(tmp_path / "none.db"), *command[1:-2])
