"""BATTLE left out of a battle command: the one battle in progress (of the kind the command
acts on), named on a line of its own before the events it recorded; none or several in
progress, a one-line usage error naming those in progress (exit 2), nothing recorded.

Typed dice (--dice) always name their battle (D3: a die is recorded with why it was rolled):
dice rolled at the table were rolled for one battle, and a default could record them in another
that opened meanwhile (a league server's other player declaring a convoy attack, say). Auto
dice are rolled when recorded (D5), for the battle the command takes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.support import perform_until
from tracker.cli.main import cli
from tracker.service.application import Tracker

CNS = "Central North Sea"
WA = "Western Approaches"


def invoke(db: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", db, *args], prog_name="tracker")


def run(db: str, *args: str) -> str:
    result = invoke(db, *args)
    assert result.exit_code == 0, result.output
    return result.stdout


def log(db: str) -> list[dict[str, Any]]:
    return list(json.loads(run(db, "log", "--json", "--asked")))


def refused(db: str, code: int, *args: str) -> str:
    """One line on stderr, nothing on stdout, nothing recorded."""
    before = log(db)
    result = invoke(db, *args)
    assert (result.exit_code, result.stdout) == (code, ""), result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    assert log(db) == before
    return result.stderr


def naval_battle(db: str, dice: str = "auto") -> None:
    """Germany's fleet meets the Grand Fleet in the Central North Sea: battle 1 (NC1)."""
    run(db, "new", "t", "--scenario", "north-sea-1914", "--dice", dice)
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-BB1", "DE-BB2", "DE-CA1", "--path", CNS)
    run(db, "next")
    run(db, "battle", "start", "--zone", CNS)


def convoy_battles(db: str, dice: str, zones: tuple[str, ...]) -> None:
    """In Britain's collect_resources Germany declares a convoy attack in each of `zones`
    (a U-boat added in the Western Approaches first): battles 1, 2, ... (CV1)."""
    run(db, "new", "t", "--scenario", "north-sea-1914", "--dice", dice)
    run(db, "adjust", "--add", f"Germany:submarine:{WA}", "--reason", "a test: a U-boat out west")
    with Tracker(db) as t:
        perform_until(t, t.campaign_id(None), "Britain", "collect_resources")
    for zone in zones:
        run(db, "convoy", "declare", "--by", "Germany", "--zone", zone)


def battles_in_progress(db: str) -> list[int]:
    with Tracker(db) as t:
        return sorted(b["id"] for b in t.load(t.campaign_id(None)).battles.values())


def test_battle_auto_without_battle_takes_the_one_in_progress_and_says_which(tmp_path: Path) -> None:
    db = str(tmp_path / "n.db")
    naval_battle(db)
    out = run(db, "battle", "auto")
    first, *rest = out.splitlines()
    assert first == f"battle 1 (naval, {CNS}): the only battle in progress"
    assert any(line.startswith("battle 1 ends") for line in rest)
    assert battles_in_progress(db) == []
    (asked,) = [e for e in log(db) if e["kind"] == "ActionAsked" and e["data"]["name"] == "battle auto"]
    assert asked["data"]["inputs"]["battle"] == 1  # recorded as if typed


def test_battle_auto_with_no_battle_in_progress_is_a_usage_error(tmp_path: Path) -> None:
    db = str(tmp_path / "n.db")
    naval_battle(db)
    run(db, "battle", "auto", "1")
    assert refused(db, 2, "battle", "auto") == (
        "Error: battle auto: missing argument BATTLE; no battle in progress (see tracker battle auto --help)\n"
    )


def test_a_command_of_one_kind_takes_only_a_battle_of_its_kind(tmp_path: Path) -> None:
    db = str(tmp_path / "n.db")
    naval_battle(db)
    for group, words in (("convoy", "convoy battle"), ("asw", "ASW combat"), ("intercept", "interception")):
        assert refused(db, 2, group, "auto") == (
            f"Error: {group} auto: missing argument BATTLE; no {words} in progress "
            f"(in progress: 1 (naval, {CNS})) (see tracker {group} auto --help)\n"
        )


def test_several_battles_in_progress_are_named_and_nothing_is_recorded(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    convoy_battles(db, "auto", (CNS, WA))
    both = f"1 (convoy, {CNS}), 2 (convoy, {WA})"
    for command in (["convoy", "auto"], ["convoy", "roll"], ["battle", "auto"], ["battle", "step"], ["odds"]):
        line = refused(db, 2, *command)
        assert f"missing argument {'BATTLE|convoy|intercept|asw|naval' if command == ['odds'] else 'BATTLE'}; " in line
        assert f"2 {'convoy ' if command[0] == 'convoy' else ''}battles in progress, name one ({both})" in line
    run(db, "convoy", "auto", "2")
    out = run(db, "convoy", "roll")  # one left: it is taken
    assert out.splitlines()[0] == f"battle 1 (convoy, {CNS}): the only convoy battle in progress"
    assert f"merchant defence in {CNS}" in out.splitlines()[1]  # CV2, battle 1's


def test_d3_typed_dice_name_their_battle_even_with_one_in_progress(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    convoy_battles(db, "manual", (CNS,))
    for command in (["convoy", "roll"], ["convoy", "auto"], ["battle", "step"], ["battle", "auto"]):
        line = refused(db, 2, *command, "--dice", "1,1")
        assert (
            f"missing argument BATTLE; typed dice (--dice) name the battle they were rolled for (1 (convoy, {CNS}))"
            in (line)
        )
    out = run(db, "convoy", "roll", "1", "--dice", "1,1")
    assert "the only" not in out  # BATTLE given: no line of its own


def test_a_refused_step_of_the_battle_taken_stays_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "n.db")
    naval_battle(db)
    # Battle 1 waits for the targets of selective fire, not for casualties (HA7).
    line = refused(db, 1, "battle", "casualties")
    assert line.startswith("Error: ") and "battle 1" in line and "the only" not in line


def test_json_output_stays_json_without_the_line(tmp_path: Path) -> None:
    db = str(tmp_path / "n.db")
    naval_battle(db)
    data = json.loads(run(db, "battle", "step", "--json"))
    assert data["action"] == "battle step" and data["events"]


@pytest.mark.parametrize("as_json", [False, True])
def test_odds_without_battle_are_the_odds_of_the_one_in_progress(tmp_path: Path, as_json: bool) -> None:
    db = str(tmp_path / "n.db")
    naval_battle(db)
    if as_json:
        assert json.loads(run(db, "odds", "--json")) == json.loads(run(db, "odds", "1", "--json"))
    else:
        out = run(db, "odds")
        assert out == run(db, "odds", "1")
        assert out.startswith(f"Odds of battle 1 (naval in {CNS})")
