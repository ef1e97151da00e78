"""RK2: a command that does not answer the step a battle waits at is refused naming the command
that does (the one `pending` suggests), citing the rule once: a convoy battle's merchant
defence (CV2), search (CV3), round (CV4) and convoy table (CV5), an interception (SM2-SM5) and
ASW combat (AS2-AS5), every step swept with every step command.
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import ManualDice, commitment, new_seed
from domain.errors import RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance as advance_passing
from tests.support import perform_until
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.describe import install_describer

_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
CNS, HB, SNS, DOVER = "Central North Sea", "Heligoland Bight", "Southern North Sea", "Dover Strait"
# A rule ID in brackets (not a command's optional part, "[--units U1,U2]").
CITED = re.compile(r"\[[A-Z]{1,3}\d+\]")


@pytest.fixture(autouse=True)
def _english() -> None:
    install_describer()


def at(nation: str, phase: str) -> Campaign:
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    while (c.nation, c.phase) != (nation, phase):
        if (c.nation, c.phase) == ("Germany", "combat_movement") and phase == "naval_combat":
            c.move("Germany", ["DE-BM1"], ["Northern Germany", HB])  # AS1, F7: the bomber joins the ASW search
        advance_passing(c)
    return c


def item(c: Campaign, b: int) -> dict[str, Any]:
    (found,) = [i for i in c.pending() if i["battle"] == b]
    return found


def commands(b: int, nation: str) -> dict[str, Callable[[Campaign], object]]:
    """Every command that takes a battle's step, with a nation the battle waits for."""
    many = ManualDice([1] * 12)
    return {
        "convoy_merchant_defence": lambda c: c.convoy_merchant_defence(b, ManualDice([1, 1])),
        "convoy_choose_casualties": lambda c: c.convoy_choose_casualties(b, nation, None),
        "convoy_search": lambda c: c.convoy_search(b, None, many),
        "convoy_table": lambda c: c.convoy_table(b, many),
        "convoy_roll": lambda c: c.convoy_roll(b, many),
        "intercept_search": lambda c: c.intercept_search(b, None, many),
        "intercept_detect": lambda c: c.intercept_detect(b, None),
        "intercept_decide": lambda c: c.intercept_decide(b, None, None),
        "intercept_continue": lambda c: c.intercept_continue(b, None),
        "asw_search": lambda c: c.asw_search(b, None, many),
        "asw_submerge": lambda c: c.asw_submerge(b, None),
        "naval_decide": lambda c: c.naval_decide(b, nation, None, None),
        "choose_targets": lambda c: c.choose_targets(b, nation, None),
        "choose_screens": lambda c: c.choose_screens(b, nation, None),
        "fire": lambda c: c.fire(b, many),
        "choose_casualties": lambda c: c.choose_casualties(b, nation, None),
    }


def sweep(c: Campaign, b: int) -> int:
    """Every step command at the step battle `b` waits at: each refusal of a step it does not
    answer ends with the command `pending` suggests and cites no rule twice (nor words after
    a cited rule). How many such refusals were read."""
    waits = item(c, b)
    answer = c.describer.command(waits)
    assert answer is not None
    checked = 0
    for name, action in commands(b, (waits["waiting"] or [""])[0]).items():
        trial = copy.deepcopy(c)
        try:
            action(trial)
        except RuleViolation as e:
            if f"battle {b} is " not in e.reason:
                continue  # not a refusal of the step (a unit, a target, a kind of battle)
            said = f"{name} at {waits['kind']} {waits['step']}: {e}"
            assert e.reason.endswith(f"; to answer it: {answer}"), said
            assert f"[{e.rule}]" not in e.reason, said
            # A cited rule closes what the battle waits for: nothing reads after it but the answer.
            assert all(e.reason[m.end() :].startswith("; to answer it: ") for m in CITED.finditer(e.reason)), said
            checked += 1
        except Exception:  # noqa: S112 - a kind of battle the command does not take, a bad unit
            continue
    return checked


def answer(c: Campaign, b: int) -> None:
    """Take the step with the defaults; searches succeed, the round's dice miss."""
    waits = item(c, b)
    step, kind, dice = waits["step"], waits["kind"], waits.get("dice") or {}
    nation = (waits["waiting"] or [""])[0]
    hits, misses = ManualDice([1] * dice.get("count", 0)), ManualDice([dice.get("faces", 1)] * dice.get("count", 0))
    take: dict[tuple[str, str], Callable[[], object]] = {
        ("convoy", "merchant_defence"): lambda: c.convoy_merchant_defence(b, hits),
        ("convoy", "search"): lambda: c.convoy_search(b, None, hits),
        ("convoy", "convoy_table"): lambda: c.convoy_table(b, hits),
        # SM3: one destroyer finds one of three submarines, so Britain names it and two go on (SM5).
        ("interception", "search"): lambda: c.intercept_search(b, ["GB-DD3"], ManualDice([1])),
        ("interception", "detect"): lambda: c.intercept_detect(b, None),
        ("interception", "decide"): lambda: c.intercept_decide(b, None, None),
        ("interception", "continue"): lambda: c.intercept_continue(b, None),
        ("asw", "search"): lambda: c.asw_search(b, None, hits),
        ("asw", "decide"): lambda: c.asw_submerge(b, None),
    }
    volley: dict[str, Callable[[], object]] = {
        "targets": lambda: c.choose_targets(b, nation, None),
        "opening_targets": lambda: c.choose_targets(b, nation, None),
        "screening": lambda: c.choose_screens(b, nation, None),
        "opening_screening": lambda: c.choose_screens(b, nation, None),
        "fire": lambda: c.fire(b, misses),
        "opening_fire": lambda: c.fire(b, misses),
        "casualties": lambda: c.choose_casualties(b, nation, None),
    }
    (take.get((kind, step)) or volley[step])()


def sweep_battle(c: Campaign, b: int) -> list[str]:
    """Sweep every step of battle `b` to its end; the steps swept."""
    steps = []
    while str(b) in c.battles:
        steps.append(item(c, b)["step"])
        assert sweep(c, b) > 0, steps[-1]
        answer(c, b)
    return steps


def test_cv2_cv3_cv4_cv5_every_step_refusal_names_the_command_of_the_step() -> None:
    c = at("Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", CNS, None)
    steps = sweep_battle(c, b)
    assert steps[:2] == ["merchant_defence", "search"] and steps[-1] == "convoy_table"
    assert "fire" in steps


def test_sm2_sm5_every_step_refusal_names_the_command_of_the_step() -> None:
    c = at("Germany", "combat_movement")
    c.move("Germany", ["DE-SS3", "DE-SS4", "DE-SS5"], [SNS, DOVER])
    steps = sweep_battle(c, c.battle_count)
    assert {"search", "detect", "fire", "continue"} <= set(steps)


def test_as2_as5_every_step_refusal_names_the_command_of_the_step() -> None:
    c = at("Germany", "naval_combat")
    steps = sweep_battle(c, c.asw_start("Germany", HB))
    assert {"search", "fire", "decide"} <= set(steps)


def test_rk2_a_step_refusal_under_another_rule_cites_the_steps_rule_once() -> None:
    c = at("Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", CNS, None)
    with pytest.raises(RuleViolation) as refused:
        c.convoy_search(b, None, ManualDice([1]))
    assert str(refused.value) == (
        f"CV3: battle {b} is waiting for Britain to roll merchant defence (2D10; a total of 20 sinks one "
        f"submarine) [CV2]; to answer it: tracker convoy roll {b} --dice V,V [--ref ROLL_ID]"
    )


def test_as2_a_battle_not_finished_is_cited_once_with_the_command_that_goes_on() -> None:
    """One procedure at a time: starting another names the open one's step and its command."""
    c = at("Germany", "naval_combat")
    b = c.asw_start("Germany", HB)
    answer = c.describer.command(item(c, b))
    with pytest.raises(RuleViolation) as refused:
        c.naval_start("Germany", CNS)
    assert refused.value.rule == "AS2" and "[AS2]" not in str(refused.value)
    assert refused.value.reason.startswith(f"battle {b} in {HB} is not finished: waiting for Germany to choose")
    assert refused.value.reason.endswith(f"; to answer it: {answer}")


def test_cv4_a_step_of_another_nation_is_cited_once() -> None:
    c = at("Britain", "collect_resources")
    b = c.declare_convoy_attack("Germany", CNS, None)
    c.convoy_merchant_defence(b, ManualDice([1, 1]))
    c.convoy_search(b, ["GB-CA1", "GB-DD1"], ManualDice([1, 1]))
    assert item(c, b)["step"] == "targets" and item(c, b)["waiting"] == ["Germany"]
    with pytest.raises(RuleViolation) as refused:
        c.choose_targets(b, "Britain", None)
    assert refused.value.rule == "CV4" and refused.value.reason.endswith(", not for Britain")
    assert "[CV4]" not in refused.value.reason


# ----- from the command line -----


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def refused(db: str, *args: str) -> str:
    """Refused (exit 1) in one line, recording nothing."""
    before = run(db, "log", "--json")
    out = run(db, *args, code=1)
    assert out.startswith("Error: ") and out.count("\n") == 1, out
    assert json.loads(run(db, "log", "--json")) == json.loads(before)
    return out


def test_cv2_cv3_cv5_battle_fire_and_convoy_roll_out_of_step_name_the_command_pending_suggests(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    with Tracker(db) as t:
        perform_until(t, t.campaign_id(None), "Britain", "collect_resources")
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1,DE-SS2")
    assert "next: tracker convoy roll 1 --dice V,V" in run(db, "pending")
    assert refused(db, "battle", "fire", "1") == (
        "Error: CV2: battle 1 is waiting for Britain to roll merchant defence (2D10; a total of 20 sinks one "
        "submarine); to answer it: tracker convoy roll 1 --dice V,V [--ref ROLL_ID]\n"
    )
    run(db, "convoy", "roll", "1", "--dice", "1,1")
    assert "next: tracker convoy search 1 [--units U1,U2] --dice V,..." in run(db, "pending")
    out = refused(db, "convoy", "roll", "1", "--dice", "1")
    assert out.startswith("Error: CV3: battle 1 is waiting for Britain to choose which ships and aircraft search")
    assert out.endswith(
        "), not a roll; to answer it: tracker convoy search 1 [--units U1,U2] --dice V,... [--ref ROLL_ID]\n"
    )
    assert out.count("CV3") == 1
    run(db, "convoy", "search", "1", "--units", "")
    assert "next: tracker convoy roll 1 --dice V,... [--ref ROLL_ID]\n" in run(db, "pending")
    out = refused(db, "battle", "fire", "1", "--dice", "1,1")
    assert out.startswith("Error: CV5: battle 1 is waiting for Germany to roll the convoy table")
    assert (
        out.endswith("; to answer it: tracker convoy roll 1 --dice V,... [--ref ROLL_ID]\n") and out.count("CV5") == 1
    )
