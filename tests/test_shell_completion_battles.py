"""`tracker shell`: Tab completion of the battle commands from what the referee allows now: the
zones where `battle start` (NC1) and `asw start` (AS1) may start, the legal targets of a
selective shot (HA1, SM4) and the escorts that may screen one (HA1, HA3). Driven through the
shell's completer, as test_shell does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support import cli_on
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session
from tracker.cli.shell_prompt import completer


def _new(path: str, scenario: str) -> str:
    cli_on(path)("new", "g", "--scenario", scenario, "--dice", "manual")
    return path


@pytest.fixture
def world(tmp_path: Path) -> Iterator[Context]:
    obj = Context(_new(str(tmp_path / "war.db"), "great-war-1914"), None)
    obj.load()
    yield obj
    obj.close()


def _completions(obj: Context, text: str) -> list[str]:
    from prompt_toolkit.document import Document

    return [c.text for c in completer(cli, obj).get_completions(Document(text), None)]


def _run(obj: Context, *lines: str) -> None:
    for line in lines:
        assert Session(cli, obj).dispatch(line) == 0, line


def _quoted(zones: list[str]) -> list[str]:
    return [f"'{z}'" if " " in z else z for z in zones]


# Germany's naval_combat phase in round 1 of great-war-1914, as `pending` lists it.
NAVAL_MAY = ["East African Coast", "Southern North Sea", "Yellow Sea"]
ASW_MAY = ["Heligoland Bight"]


def test_nc1_battle_start_tab_offers_only_the_zones_where_a_naval_battle_may_start(world: Context) -> None:
    # NC1: every sea zone of the world (79) was offered; a naval battle starts only where the
    # nation's units meet enemy naval units. Heligoland Bight holds only an enemy submarine
    # among them: ASW combat, not a naval battle (AS1).
    _run(world, "next --to naval_combat")
    c = world.load()
    pending = sorted(i["zone"] for i in c.pending(turn=True) if i["kind"] in ("naval_due", "naval_may"))
    assert pending == NAVAL_MAY
    assert _completions(world, "battle start --zone ") == _quoted(NAVAL_MAY)
    assert _completions(world, "battle start --nation de --zone 'Ye") == ["'Yellow Sea'"]
    assert _completions(world, "battle start --zone Heli") == []
    # A nation the campaign does not know: the referee cannot tell, so every sea zone, as before.
    sea = _completions(world, "ntr place ")
    assert len(sea) == 79
    assert _completions(world, "battle start --nation Atlantis --zone ") == sea


def test_as1_asw_start_tab_offers_only_the_zones_with_searchers_and_enemy_submarines(world: Context) -> None:
    _run(world, "next --to naval_combat")
    pending = sorted(i["zone"] for i in world.load().pending(turn=True) if i["kind"] == "asw_may")
    assert pending == ASW_MAY
    assert _completions(world, "asw start --zone ") == _quoted(ASW_MAY)
    # AS1: Germany has no searching unit in the East African Coast (its cruiser is there).
    assert _completions(world, "asw start --zone East") == []


def test_t3_nc1_as1_start_tab_offers_nothing_where_the_referee_refuses_any_zone(world: Context) -> None:
    # T3: outside the nation's naval_combat phase, or for another nation, no zone starts one.
    assert _completions(world, "battle start --zone ") == []
    assert _completions(world, "asw start --zone ") == []
    _run(world, "next --to naval_combat")
    assert _completions(world, "battle start --nation Britain --zone ") == []
    assert _completions(world, "asw start --nation gb --zone ") == []
    # One procedure at a time: while a battle is open no other starts.
    _run(world, "battle start --zone 'Yellow Sea'")
    assert _completions(world, "battle start --zone ") == []
    assert _completions(world, "asw start --zone ") == []


def test_ha1_ha3_battle_targets_and_screen_tab_offer_the_legal_choices_of_the_shot(world: Context) -> None:
    # HA1: `--targets` completed nothing. Germany's submarine in the Southern North Sea picks
    # its target among the British ships; the escorts may then take a shot at the carrier (HA3).
    _run(world, "next --to naval_combat", "battle start --zone 'Southern North Sea'", "battle fire 1 --dice 9,9")
    assert _completions(world, "battle targets 1 --targets ") == [
        "DE-SS4=GB-CA4",
        "DE-SS4=GB-CA5",
        "DE-SS4=GB-CV1",
        "DE-SS4=GB-DD4",
        "DE-SS4=GB-DD5",
    ]
    assert _completions(world, "battle targets 1 --targets de-ss4=gb-c") == [
        "DE-SS4=GB-CA4",
        "DE-SS4=GB-CA5",
        "DE-SS4=GB-CV1",
    ]
    # A firer is named once: nothing more for DE-SS4.
    assert _completions(world, "battle targets 1 --targets DE-SS4=GB-CV1,") == []
    # Another nation than the one choosing: nothing it could give.
    assert _completions(world, "battle targets 1 --nation Britain --targets ") == []
    assert _completions(world, "battle screen 1 --screens ") == []
    _run(world, "battle targets 1 --targets DE-SS4=GB-CV1")
    assert _completions(world, "battle screen 1 --nation ") == ["Britain"]
    assert _completions(world, "battle targets 1 --targets ") == []
    assert _completions(world, "battle screen 1 --nation gb --screens DE-SS4=GB-D") == [
        "DE-SS4=GB-DD4",
        "DE-SS4=GB-DD5",
    ]
    _run(world, "battle screen 1 --screens DE-SS4=GB-DD5")


def test_sm4_battle_targets_tab_offers_each_waiting_nations_shots(tmp_path: Path) -> None:
    # SM4: after an interception's search both sides choose targets: Germany's detected
    # submarines at the searchers, Britain's searchers at the submarines.
    obj = Context(_new(str(tmp_path / "c.db"), "north-sea-1914"), None)
    try:
        _run(
            obj,
            "next --to combat_movement",
            "move DE-SS3,DE-SS4,DE-SS5 --path 'Southern North Sea,Dover Strait'",
            "intercept search 1 --units GB-DD3,GB-DD4,GB-DD5 --dice 1,2,7",
            "intercept detect 1 --subs DE-SS4,DE-SS5",
        )
        britain = ["GB-DD3=DE-SS4", "GB-DD3=DE-SS5", "GB-DD4=DE-SS4", "GB-DD4=DE-SS5"]
        germany = ["DE-SS4=GB-DD3", "DE-SS4=GB-DD4", "DE-SS5=GB-DD3", "DE-SS5=GB-DD4"]
        assert _completions(obj, "battle targets 1 --targets ") == germany + britain
        # `--nation`: the nations the step waits for, not all nine.
        assert _completions(obj, "battle targets 1 --nation ") == ["Germany", "Britain"]
        assert _completions(obj, "battle targets 1 --nation Britain --targets ") == britain
        assert _completions(obj, "battle targets 1 --nation de --targets DE-SS4=GB-DD3,") == [
            "DE-SS4=GB-DD3,DE-SS5=GB-DD3",
            "DE-SS4=GB-DD3,DE-SS5=GB-DD4",
        ]
        # A battle not open: nothing.
        assert _completions(obj, "battle targets 2 --targets ") == []
    finally:
        obj.close()


def test_nc1_as1_a_shell_on_a_server_offers_the_zones_its_pending_lists(
    world: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A league server's campaign has no board at the player's end: the zones come from the
    # server's `pending` (read here from the same database, as the server answers it).
    import json

    from tracker.cli import shell

    _run(world, "next --to naval_combat")
    db = world.tracker.url

    def remote_json(base: str, campaign: str | None, args: list[str]) -> Any:
        result = CliRunner().invoke(cli, ["--db", db, *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    monkeypatch.setattr(shell, "remote_json", remote_json)
    remote = shell.RemoteContext("http://league.example", "g")
    assert _completions(remote, "battle start --zone ") == _quoted(NAVAL_MAY)
    assert _completions(remote, "asw start --zone ") == _quoted(ASW_MAY)


def test_ha7_battle_casualties_tab_offers_the_units_the_owner_places_its_hits_among(world: Context) -> None:
    # HA7: `--units` offered every unit in the battle's zone, the attacker's too. Japan places
    # the hit Germany's destroyer scored on its own units: those it may fall on are offered
    # (HA6: cruisers and destroyers first), as `pending` lists them.
    _run(world, "next --to naval_combat", "battle start --zone 'Yellow Sea'", "battle fire 1 --dice 1,1,1,1,1,1")
    c = world.load()
    (item,) = [i for i in c.pending() if i.get("battle") == 1]
    assert "casualties" in str(item)
    assert "Japan places 1 hit among JP-CA2, JP-DD2" in item["text"]
    assert _completions(world, "battle casualties 1 --units ") == ["JP-CA2", "JP-DD2"]
    assert _completions(world, "battle casualties 1 --units JP-DD2,JP-C") == ["JP-DD2,JP-CA2"]
    # Germany places no hit here: nothing it could give.
    assert _completions(world, "battle casualties 1 --nation Germany --units ") == []
