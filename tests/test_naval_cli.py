"""Interceptions, ASW combat and naval battles from the command line (`tracker intercept`,
`tracker asw`, `tracker battle`): step by step with manual dice, `--auto`, errors and exit codes.

The commands are added to a copy of the main group here, so these tests do not depend on
the main group's command table (and leave the real group untouched).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import DiceSource
from tests.support import advance as advance_passing
from tracker.cli.commands import naval as cli_naval
from tracker.cli.main import cli
from tracker.service.application import Tracker

SNS, CNS, HB = "Southern North Sea", "Central North Sea", "Heligoland Bight"


NAVAL = [cli_naval.intercept, cli_naval.asw_group, cli_naval.battle_group]


def _group() -> click.Group:
    group = copy.copy(cli)
    group.commands = dict(cli.commands)
    for command in NAVAL:
        group.add_command(command)
    return group


CLI = _group()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "naval.db")


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(CLI, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def log(db: str) -> list[dict[str, Any]]:
    return json.loads(run(db, "log", "--json"))


def refused(db: str, code: int, *args: str) -> str:
    """The command fails with `code` and one error line, and records nothing."""
    before = log(db)
    out = run(db, *args, code=code)
    assert out.startswith("Error: ") and out.count("\n") == 1, out
    assert log(db) == before
    return out


def to_phase(db: str, nation: str, phase: str) -> None:
    def advance(c: Campaign, _dice: DiceSource) -> None:
        while (c.nation, c.phase) != (nation, phase):
            advance_passing(c)

    with Tracker(db) as t:
        t.execute(t.campaign_id(None), advance)


def _commands(group: click.Group, prefix: str) -> list[tuple[str, click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix} {name}"))
        else:
            found.append((f"{prefix} {name}", command))
    return found


def test_every_naval_command_has_help_with_an_example() -> None:
    names = []
    for group in NAVAL:
        assert isinstance(group, click.Group) and group.help
        for full, command in _commands(group, f"tracker {group.name}"):
            assert command.help and "Example:" in command.help, f"{full} has no example in its help"
            names.append(full)
    assert len(names) == 17


def test_cli_interception_step_by_step_with_manual_dice(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    to_phase(db, "Germany", "combat_movement")
    with Tracker(db) as t:
        t.execute(
            t.campaign_id(None), lambda c, d: c.move("Germany", ["DE-SS3", "DE-SS4", "DE-SS5"], [SNS, "Dover Strait"])
        )
    out = run(db, "pending")
    assert out.startswith(
        "battle 1 (interception, Southern North Sea): waiting for Britain to choose which units search"
    )
    refused(db, 1, "next")
    assert "SM2: GB-DD1 is not in Southern North Sea" in refused(
        db, 1, "intercept", "search", "1", "--units", "GB-DD1", "--dice", "1"
    )
    assert "D3" in refused(db, 1, "intercept", "search", "1", "--units", "GB-DD3,GB-DD4,GB-DD5", "--dice", "1,2")
    refused(db, 2, "intercept", "search", "7", "--dice", "1")

    out = run(db, "intercept", "search", "1", "--units", "GB-DD3,GB-DD4,GB-DD5", "--dice", "1,2,7")
    assert "battle 1: 2 searches succeed (GB-DD3, GB-DD4): 2 submarines found   [SM3]" in out
    assert "next: tracker intercept detect 1" in out
    out = run(db, "intercept", "detect", "1", "--subs", "DE-SS4,DE-SS5")
    assert "detected DE-SS4, DE-SS5 (chosen); undetected DE-SS3" in out
    assert "next: tracker battle targets 1 --nation Germany" in out
    assert "--nation" in refused(db, 2, "battle", "targets", "1")
    assert "UNIT=UNIT" in refused(db, 2, "battle", "targets", "1", "--nation", "Germany", "--targets", "DE-SS4")
    out = refused(db, 1, "battle", "targets", "1", "--nation", "Germany", "--targets", "DE-SS4=GB-DD5,DE-SS5=GB-DD3")
    assert out.startswith("Error: SM4: DE-SS4 cannot target GB-DD5")
    run(db, "battle", "targets", "1", "--nation", "Germany", "--targets", "DE-SS4=GB-DD3,DE-SS5=GB-DD3")
    run(db, "battle", "targets", "1", "--targets", "GB-DD3=DE-SS4,GB-DD4=DE-SS5")
    out = run(db, "battle", "screen", "1", "--screens", "DE-SS4=GB-DD4")
    assert "the shot of DE-SS4 falls on GB-DD4 (chosen)" in out
    assert "to roll 4 dice, one per firing unit in this order: DE-SS4, DE-SS5, GB-DD3, GB-DD4" in out
    out = run(db, "battle", "fire", "1", "--dice", "1,9,9,2", "--ref", "table-roll-7")
    assert "battle 1: DE-SS4 hits GB-DD4, screening GB-DD3   [HA1]" in out
    assert "GB-DD4 sunk in battle 1   [SM4]" in out and "DE-SS5 sunk in battle 1   [SM4]" in out
    # A unit the board does not hold is named as every command names it (exit 2), not as one
    # outside the choice (SM4, SM5: exit 1).
    assert "DE-SS5 was sunk in battle 1" in refused(db, 2, "intercept", "decide", "1", "--submerge", "DE-SS5")
    out = run(db, "intercept", "decide", "1", "--retreat", "DE-SS4")
    assert "battle 1: DE-SS4 retreats to Heligoland Bight   [SM4]" in out
    # Its move is over (SM4): `show` says so rather than a count of steps it may go on from.
    row = next(line for line in run(db, "show", "heligoland bight").splitlines() if "DE-SS4" in line)
    assert "move ended (SM4)" in row
    assert refused(db, 2, "intercept", "continue", "1", "--stop", "de-ss9").startswith("Error: unknown unit 'de-ss9'")
    assert refused(db, 1, "intercept", "continue", "1", "--stop", "DE-SS1").startswith("Error: SM5: DE-SS1 is not free")
    out = run(db, "intercept", "continue", "1")
    assert (
        "Germany moves DE-SS3: Southern North Sea -> Dover Strait (on through hostile Southern North Sea)   [SM1]"
        in out
    )
    assert run(db, "pending").startswith("waiting for Germany to finish combat movement (tracker next) [T3]")
    fire = next(r for r in log(db) if r["kind"] == "DiceRolled" and r["data"]["unit"] == "DE-SS4")
    assert fire["data"]["reference"] == "table-roll-7" and fire["battle"] == 1


def test_cli_asw_and_naval_battle_with_auto(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    to_phase(db, "Germany", "naval_combat")
    assert "T3" in refused(db, 1, "asw", "start", "--zone", CNS, "--nation", "Britain")
    out = run(db, "asw", "start", "--zone", HB, "--auto")
    assert "Germany starts ASW combat in Heligoland Bight against GB-SS1, GB-SS2   [AS1]" in out
    assert "ends (" in out and "Waiting" not in out
    assert "AS1: Germany has already fought ASW combat" in refused(db, 1, "asw", "start", "--zone", HB)
    out = run(db, "battle", "start", "--zone", CNS)
    assert "naval battle in Central North Sea: Germany (DE-SS1, DE-SS2) attacks Britain" in out
    assert "no opening fire by the submarines of Germany; cancelled for DE-SS1, DE-SS2" in out
    # One step with the defaults (the opening targets, HA1), and the battle waits for the next.
    out = run(db, "battle", "step", "2")
    assert "battle 2: Germany targets DE-SS1 -> GB-CA1, DE-SS2 -> GB-DD1 (default)   [HA1]" in out
    assert run(db, "pending").startswith("battle 2 (naval, Central North Sea): waiting for Britain to choose screening")
    out = run(db, "battle", "auto", "2")
    assert "battle 2 ends (" in out
    records = log(db)
    assert {r["kind"] for r in records} >= {"AswCombatStarted", "NavalBattleStarted", "OpeningFire", "BattleEnded"}
    assert run(db, "verify").startswith("OK:")


def test_cli_asw_step_by_step_and_the_naval_decisions(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    to_phase(db, "Germany", "naval_combat")
    out = run(db, "asw", "start", "--zone", HB)
    assert "next: tracker asw search 1" in out
    out = run(db, "asw", "search", "1", "--units", "DE-DD1,DE-DD2", "--dice", "1,9,9,9")
    assert "detected GB-SS1; undetected GB-SS2   [AS2]" in out
    # GB-SS1 is the only detected submarine: Germany's targets are chosen for it; Britain chooses.
    assert "battle 1: Germany targets DE-DD1 -> GB-SS1, DE-DD2 -> GB-SS1 (default)   [AS3]" in out
    assert "waiting for Britain to choose targets" in out
    assert "AS3" in refused(db, 1, "battle", "targets", "1", "--nation", "Germany")
    run(db, "battle", "targets", "1", "--nation", "Britain", "--targets", "GB-SS1=DE-DD2")
    run(db, "battle", "screen", "1", "--screens", "")
    out = run(db, "battle", "fire", "1", "--dice", "9,9,9")
    assert "next: tracker asw submerge 1" in out
    out = run(db, "asw", "submerge", "1", "--subs", "")
    assert "battle 1: round 2" in out
    run(db, "battle", "auto", "1", "--dice", "9,9,9")
    out = run(db, "battle", "start", "--zone", CNS)
    run(db, "battle", "targets", "2", "--targets", "DE-SS1=GB-CA1,DE-SS2=GB-CA1")
    run(db, "battle", "screen", "2", "--screens", "")
    out = run(db, "battle", "fire", "2", "--dice", "9,9,9,9,9")
    assert "next: tracker battle decide 2" in out
    assert "NC1" in refused(db, 1, "battle", "decide", "2", "--retreat-to", SNS)
    out = run(db, "battle", "decide", "2", "--retreat-to", HB)
    assert "Germany retreats DE-SS1, DE-SS2 to Heligoland Bight   [NC1]" in out


@pytest.mark.parametrize(
    ("start", "kind"),
    [
        (["asw", "start", "--zone", HB, "--auto"], "AswCombatStarted"),
        (["battle", "start", "--zone", CNS, "--auto"], "NavalBattleStarted"),
    ],
)
def test_rk3_start_auto_is_one_action_and_one_undo_takes_it_back(db: str, start: list[str], kind: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    to_phase(db, "Germany", "naval_combat")
    before = log(db)
    run(db, *start)
    recorded = log(db)[len(before) :]
    assert recorded[0]["kind"] == kind and recorded[-1]["kind"] == "BattleEnded"
    with Tracker(db) as t:
        events = [e for e in t.events(t.campaign_id(None)) if e.originator_version > before[-1]["seq"]]
    asked = events[0]
    assert type(asked).__name__ == "ActionAsked" and asked.name == " ".join(start[:2])
    actions = {e.action for e in events}
    assert actions == {asked.originator_version}, "every event of the command carries its first event's version"
    run(db, "undo", "--override", "--reason", "wrong zone", "--agreed-by", "Britain")
    # Nothing open, and the battle undone may be started again (NC1, AS1).
    assert [i["kind"] for i in json.loads(run(db, "pending", "--json"))] == ["turn", "naval_may", "asw_may"]
    assert all(r["undone_by"] for r in log(db)[len(before) : len(before) + len(recorded)])
    state = json.loads(run(db, "state", "--json"))
    assert state["phase"] == "naval_combat" and state["nation"] == "Germany"
    assert run(db, "verify").startswith("OK:")


def test_as2_as5_asw_auto_plays_an_asw_combat_out_as_battle_auto_does(db: str) -> None:
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    to_phase(db, "Germany", "naval_combat")
    run(db, "asw", "start", "--zone", HB)
    before = log(db)
    out = run(db, "asw", "auto", "1")
    assert log(db)[-1]["kind"] == "BattleEnded" and "battle 1 ends" in out
    with Tracker(db) as t:
        asked = [e for e in t.events(t.campaign_id(None)) if e.originator_version > before[-1]["seq"]][0]
    assert (type(asked).__name__, asked.name) == ("ActionAsked", "asw auto")
    assert [i["kind"] for i in json.loads(run(db, "pending", "--json"))][0] == "turn"
    assert run(db, "verify").startswith("OK:")
    # As `battle auto`, it plays only a battle that is there.
    assert "battle 1" in refused(db, 1, "asw", "auto", "1")


def test_a_choice_for_a_battle_that_is_not_there_or_waits_for_dice_says_so(db: str) -> None:
    run(db, "new", "t", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-BB1", "DE-BB2", "DE-CA1", "--path", "Central North Sea")
    run(db, "next")
    run(db, "battle", "start", "--zone", "Central North Sea")
    for choice in (["targets", "7"], ["screen", "7"], ["casualties", "7"], ["decide", "7"]):
        assert refused(db, 2, "battle", *choice) == "Error: no battle 7 in progress (active: 1 (naval))\n"
    run(db, "battle", "targets", "1")
    run(db, "battle", "screen", "1")
    # Both sides roll now: a choice is refused with what the battle waits for, not "say which nation".
    out = refused(db, 1, "battle", "casualties", "1")
    assert out.startswith("Error: NC3: battle 1 is waiting for Germany and Britain to roll 8 dice"), out


def test_a_battle_of_any_kind_that_is_not_there_is_named_as_a_battle(db: str) -> None:
    # It read "no interception or asw or naval or convoy battle 99 in progress".
    run(db, "new", "t", "--scenario", "north-sea-1914")
    for command in (["battle", "auto", "99"], ["battle", "fire", "99"]):
        assert refused(db, 2, *command) == "Error: no battle 99 in progress (active: none)\n"


def test_nc4_nc1_pending_names_the_options_of_battle_decide_the_nation_has(db: str) -> None:
    # The hint never named them: the options were worked out, but not passed to it.
    run(db, "new", "t", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-BB1", "DE-BB2", "DE-CA1", "--path", "Central North Sea")
    run(db, "next")
    run(db, "battle", "start", "--zone", "Central North Sea")
    run(db, "battle", "targets", "1")
    run(db, "battle", "screen", "1")
    run(db, "battle", "fire", "1", "--dice", ",".join(["10"] * 8))
    out = run(db, "pending")
    assert "next: tracker battle decide 1 [--submerge S1] [--retreat-to ZONE]" in out, out
    item = json.loads(run(db, "pending", "--json"))[0]
    assert item["decisions"]["Germany"]["retreat"] == ["Heligoland Bight", "Skagerrak"]
