"""Knowing what comes next: `pending` gives the command, the dice and the eligible units, as the
pure procedure asks them; a player at a terminal is asked for manual dice; `auto --dice` plays
as far as the dice go."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.procedures import asw, convoy, interception, naval
from domain.procedures.base import Context, Decision, Roll, Side
from domain.procedures.position import from_battle
from domain.procedures.volley import casualty_choices
from tracker.cli.main import cli
from tracker.service.application import Tracker

CNS, SNS, HB = "Central North Sea", "Southern North Sea", "Heligoland Bight"
PROCEDURES = {"asw": asw, "convoy": convoy, "interception": interception, "naval": naval}


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    run(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    return path


def run(db: str, *args: str, code: int = 0, stdin: str | None = None) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], input=stdin)
    assert result.exit_code == code, result.output
    return result.output


def to_britain_collect(db: str) -> None:
    run(db, "next", "--to", "collect_resources")
    run(db, "convoy", "pass", "--by", "Britain")
    run(db, "next", "--to", "collect_resources", "--nation", "Britain")


def asked(db: str) -> tuple[dict[str, Any], Any, Context]:
    """The one item `pending --json` shows, and its battle as the pure procedure's state, read
    from the record."""
    (item,) = json.loads(run(db, "pending", "--json"))
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        state, ctx, _ = from_battle(c.board(), c.battles[str(item["battle"])], frozenset(c.committed))
    return item, state, ctx


def shows_what_the_procedure_asks(db: str) -> str:
    """`pending --json` shows what the procedure's `need` says at the battle's step: the
    eligible searchers, each one's target number and the dice in rolling order if all of them
    search (the `need` after the default); the dice of a volley in rolling order; the options
    of each decision, one per nation waited for, in order. Returns the step checked."""
    item, state, ctx = asked(db)
    procedure = PROCEDURES[item["kind"]]
    step, text = item["step"], item["text"]
    need = procedure.need(state, ctx)
    if step == "search":
        assert isinstance(need, Decision) and need.kind == "searchers"
        ((_, units),) = need.options
        roll = procedure.need(procedure.decide(state, ctx, None)[0], ctx)
        assert isinstance(roll, Roll)
        order = [f"{d.unit} vs {d.against}" if roll.kind == "asw_search" else d.unit for d in roll.dice]
        assert item["eligible"] == list(units)
        assert item["dice"] == {"count": len(roll.dice), "faces": roll.groups[0].faces, "order": order, "typed": True}
        targets: dict[str, int] = {}
        for d in roll.dice:
            targets.setdefault(d.unit, d.spec.target)
        assert f"(eligible: {', '.join(f'{u} at {targets[u]}' for u in units)};" in text
        return step
    if step in ("fire", "opening_fire"):
        assert isinstance(need, Roll)
        order = [d.unit for d in need.dice]
        assert item["dice"] == {"count": len(order), "faces": need.groups[0].faces, "order": order, "typed": True}
        # NC3: a volley several nations fire is recorded by the first waited for.
        others = [f"{n}'s" for n in item["waiting"][1:]]
        records = f"; {item['waiting'][0]} records them, {' and '.join(others)} too" if others else ""
        assert f"one per firing unit in this order: {', '.join(order)}{records} [" in text
        return step
    assert item["eligible"] is None and item["dice"] is None
    aimed = {s.firer: s.target for s in state.fight.shots}
    decisions = [need]
    while len(decisions) < len(item["waiting"]):
        state = procedure.decide(state, ctx, None)[0]
        decisions.append(procedure.need(state, ctx))
    assert all(isinstance(d, Decision) for d in decisions)
    assert [d.chooser for d in decisions] == item["waiting"]
    for d in decisions:
        if d.kind == "targets":
            assert f"{d.chooser}: " + ", ".join(f"{f} at {'/'.join(t)}" for f, t in d.options) in text
        elif d.kind == "screens":
            for firer, escorts in d.options:
                assert f"{firer}'s shot at {aimed[firer]} may be taken by {'/'.join(escorts)}" in text
        elif d.kind == "casualties":
            # HA4-HA7, NC6: the units the referee lets the hits fall on, not every unit there.
            side: Side = "attacker" if d.chooser == state.fight.nation("attacker") else "defender"
            words, legal, hit = casualty_choices(state.fight, ctx, side)
            assert f"{d.chooser} places " in text
            assert f" among {', '.join(hit)}" in text or f"{words}, legal: {' | '.join(legal)}" in text
        else:
            options = dict(d.options)
            parts = [f"submerge {'/'.join(options['submerge'])}"] if options["submerge"] else []
            parts += [f"retreat to {'/'.join(options['retreat'])}"] if options["retreat"] else []
            assert f"{d.chooser}: {' or '.join(parts)}" in text
    return step


def test_pending_searchers_match_the_procedure_CV3_SM3_AS2(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    # TE3, TE4: target numbers that differ from the bare values.
    run(db, "adjust", "--tech", "Germany:advanced_submarine=3", "--tech", "Britain:advanced_asw=3", "--reason", "x")
    run(db, "move", "DE-SS3", "DE-SS4", "--path", f"{SNS},Dover Strait")
    assert shows_what_the_procedure_asks(db) == "search"  # SM2, SM3
    run(db, "intercept", "search", "1", "--dice", "10,10,10,10")
    run(db, "intercept", "continue", "1")
    run(db, "next")
    run(db, "asw", "start", "--zone", HB)
    assert shows_what_the_procedure_asks(db) == "search"  # AS2: each unit against each submarine
    run(db, "asw", "search", "2", "--dice", ",".join(["10"] * 6))
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    run(db, "convoy", "roll", "3", "--dice", "3,4")
    assert shows_what_the_procedure_asks(db) == "search"  # CV3: ships and aircraft in reach


def test_pending_volley_choices_and_dice_match_the_procedure_HA1_HA7_NC3_NC4(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-CA1", "DE-BB1", "DE-BB2", "--to", CNS)
    run(db, "next")
    run(db, "battle", "start", "--zone", CNS)  # NC2: both submarines' opening fire is cancelled
    steps = [shows_what_the_procedure_asks(db)]
    run(db, "battle", "targets", "1", "--targets", "DE-SS1=GB-CA1,DE-SS2=GB-DD1")
    steps.append(shows_what_the_procedure_asks(db))
    run(db, "battle", "screen", "1", "--screens", "DE-SS1=GB-DD2")
    steps.append(shows_what_the_procedure_asks(db))
    run(db, "battle", "fire", "1", "--dice", "1,10,10,10,10,1,1,10")  # hits on both sides to place
    steps.append(shows_what_the_procedure_asks(db))
    run(db, "battle", "casualties", "1", "--nation", "Germany")
    steps.append(shows_what_the_procedure_asks(db))
    run(db, "battle", "casualties", "1", "--nation", "Britain")
    steps.append(shows_what_the_procedure_asks(db))
    assert steps == ["targets", "screening", "fire", "casualties", "casualties", "decide"]


def test_pending_json_carries_the_command_the_dice_and_the_eligible_units(db: str) -> None:
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    (item,) = json.loads(run(db, "pending", "--json"))
    assert item["command"] == "tracker convoy roll 1 --dice V,V [--ref ROLL_ID]"
    order = ["merchant defence die 1", "merchant defence die 2"]
    assert item["dice"] == {"count": 2, "faces": 10, "order": order, "typed": True}
    run(db, "convoy", "roll", "1", "--dice", "3,4")
    (item,) = json.loads(run(db, "pending", "--json"))
    assert item["step"] == "search" and "GB-DD1" in item["eligible"]
    assert item["dice"]["order"] == item["eligible"]  # one die per searcher, in that order
    assert "next: tracker convoy search 1" in run(db, "pending")


def test_a_player_at_a_terminal_is_asked_for_manual_dice(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tracker.cli.common.interactive", lambda: True)
    out = run(db, "research", "advanced_submarine", stdin="12\n9\n")
    assert "Dice for Germany research roll for Advanced Submarine (1 die, D10, in order)" in out
    assert "12 is no face of a D10: give 1 die, each 1 to 10" in out  # asked again
    assert "D10 x1 = 9" in out and "[manual]" in out


def test_too_many_dice_typed_at_the_prompt_are_said_to_be_too_many(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """ "9,9" for a roll of one die was answered "give 1 die, each 1 to 10", as if a value were
    out of range."""
    monkeypatch.setattr("tracker.cli.common.interactive", lambda: True)
    out = run(db, "research", "advanced_submarine", stdin="9,9\n9\n")
    assert "2 dice were typed: give 1 die, each 1 to 10" in out
    assert "D10 x1 = 9" in out


def test_scripts_without_dice_are_refused_not_asked(db: str) -> None:
    out = run(db, "research", "advanced_submarine", code=1)
    assert "pass them with --dice" in out and "Dice for" not in out


def test_convoy_auto_with_fewer_dice_stops_where_they_run_out_and_says_what_comes_next(db: str) -> None:
    to_britain_collect(db)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1")
    out = run(db, "convoy", "auto", "1", "--dice", "3,4")  # merchant defence only
    assert "total 7: no effect" in out
    assert "Waiting: battle 1 (convoy, Central North Sea): waiting for Britain to choose which ships" in out
    assert "next: tracker convoy search 1" in out
    # Dice left over that cannot finish a step are refused, and nothing is recorded.
    before = run(db, "log", "--json")
    assert "D3" in run(db, "convoy", "auto", "1", "--dice", "1", code=1)
    assert run(db, "log", "--json") == before


def test_battle_auto_with_manual_dice_plays_the_defaults_up_to_the_first_roll_it_has_no_dice_for(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-CA1", "DE-BB1", "DE-BB2", "--to", CNS)
    run(db, "next")
    out = run(db, "battle", "start", "--zone", CNS, "--auto", "--dice", "")
    assert "battle 1: naval battle in Central North Sea" in out and "(default)" in out  # targets taken
    (item,) = json.loads(run(db, "pending", "--json"))
    assert item["step"] in ("fire", "opening_fire") and item["dice"]["count"] == len(item["dice"]["order"]) > 0
    rolled = len(json.loads(run(db, "log", "--json", "--kind", "DiceRolled")))
    dice = ",".join(["10"] * item["dice"]["count"])
    run(db, "battle", "auto", "1", "--dice", dice)  # exactly that volley; then it waits again
    assert len(json.loads(run(db, "log", "--json", "--kind", "DiceRolled"))) == rolled + item["dice"]["count"]
    assert json.loads(run(db, "pending", "--json"))[0]["battle"] == 1


def test_nc1_a_battles_end_says_the_actual_reason(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-CA1", "DE-BB1", "DE-BB2", "--to", CNS)
    run(db, "next")
    run(db, "battle", "start", "--zone", CNS)
    out = run(db, "battle", "auto", "1", "--dice", ",".join(["1"] * 8))  # every die hits: one volley
    ended = json.loads(run(db, "log", "--json", "--kind", "BattleEnded"))[-1]
    assert ended["data"]["reason"] == "Britain has no unit left in the battle"
    assert "battle 1 ends (Britain has no unit left in the battle)" in out


def test_te1_research_names_its_rules_as_every_action_does(db: str) -> None:
    """`research` (and `ntr place`) printed their events without the rule ID every other action
    prints after them."""
    out = run(db, "research", "advanced_submarine", "--dice", "9")
    assert "Germany pays 10 for a research roll on Advanced Submarine   [TE1]" in out
    assert "advances Advanced Submarine to level 2   [TE2]" in out
