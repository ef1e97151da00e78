"""`--json` on every command that prints: each command has the option (a few cannot, and say
why), recording commands print the events they recorded and what the game waits for after,
commands that write a file describe what they wrote, and docs/json.md lists every shape."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

DOCS = Path(__file__).resolve().parent.parent / "docs" / "json.md"

# The commands without --json, and why: none prints data a script could read.
NO_JSON = {
    "tracker shell": "an interactive session: each of its lines is a command, which takes --json itself",
    "tracker serve": "runs the server until stopped; the JSON is its API's",
}

# The keys every recording command's --json prints (docs/json.md, "Recording commands").
RECORDED = {"action", "events", "pending", "campaign", "version"}
EVENT = {"seq", "kind", "timestamp", "rule", "summary", "data"}


def _commands(group: click.Group, prefix: str = "tracker") -> list[tuple[str, click.Command]]:
    found = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        full = f"{prefix} {name}"
        if isinstance(command, click.Group):
            found.extend(_commands(command, full))
        else:
            found.append((full, command))
    return found


def _has_json(command: click.Command) -> bool:
    return any("--json" in getattr(p, "opts", ()) for p in command.params)


def test_every_command_that_prints_has_json() -> None:
    missing = [full for full, command in _commands(cli) if full not in NO_JSON and not _has_json(command)]
    assert missing == []
    # An exception that gained --json is no longer one.
    assert not [full for full, command in _commands(cli) if full in NO_JSON and _has_json(command)]


def test_docs_json_lists_every_command_and_each_exception() -> None:
    text = DOCS.read_text()
    listed = set(re.findall(r"^\| `(tracker [a-z ]+)`", text, re.MULTILINE))
    assert {full for full, _ in _commands(cli)} - listed == set()
    for full in NO_JSON:
        assert f"`{full}`" in text


def _run(db: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def _recorded(db: str, *args: str) -> dict[str, Any]:
    """A recording command's --json, checked against the documented shape."""
    data = _run(db, *args, "--json")
    assert set(data) >= RECORDED, args
    assert data["campaign"] == "autumn"
    assert data["events"], f"{args} recorded nothing"
    for event in data["events"]:
        assert set(event) == EVENT
    assert data["version"] == data["events"][-1]["seq"]
    for item in data["pending"]:
        assert {"kind", "rule", "text", "command"} <= set(item)
    return data


def _kinds(data: dict[str, Any]) -> list[str]:
    return [e["kind"] for e in data["events"]]


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "c.db")


def test_recording_commands_print_their_events_and_what_is_pending(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The auto dice from a seed of the test's own: with some seeds the battles below sink the
    # submarines that would threaten Britain's convoys, and no convoy decision is waited for.
    monkeypatch.setattr("tracker.service.application.new_seed", lambda: "5e" * 32)
    made = _recorded(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    assert _kinds(made)[0] == "Created" and made["dice"] == "auto"
    # TE1: a research roll, printed with its die (and the advance, when the auto die succeeds).
    researched = _kinds(_recorded(db, "research", "advanced_submarine"))
    assert researched[:2] == ["ResearchPaid", "DiceRolled"] and researched[2:] in ([], ["TechnologyAdvanced"])
    assert _recorded(db, "next")["events"][0]["data"]["phase"] == "purchase"
    assert _kinds(_recorded(db, "buy", "submarine")) == ["UnitsPurchased"]
    # next --to: every step's events in one object.
    stepped = _recorded(db, "next", "--to", "naval_combat")
    assert [e["data"]["phase"] for e in stepped["events"]] == ["combat_movement", "naval_combat"]
    asw = _recorded(db, "asw", "start", "--zone", "Heligoland Bight", "--auto")
    assert _kinds(asw)[0] == "AswCombatStarted" and asw["waiting_for"] == []
    started = _recorded(db, "battle", "start", "--zone", "Central North Sea")
    battle = started["events"][0]["data"]["battle"]
    assert [p["command"].split()[1:3] for p in started["pending"]] == [["battle", "targets"]]
    _recorded(db, "battle", "step", str(battle))
    assert "waiting_for" in _recorded(db, "battle", "auto", str(battle))
    _recorded(db, "next", "--to", "placement")
    assert _kinds(_recorded(db, "place", "submarine", "--at", "Heligoland Bight")) == ["UnitsPlaced"]
    # AD1 takes a Skagerrak NTR away, so CV6 lets Germany place one there again.
    adjusted = _recorded(db, "adjust", "--ntr", "Germany:Skagerrak=-1", "--reason", "a trade route closes")
    assert adjusted["events"][-1]["rule"] == "AD1"
    assert _kinds(_recorded(db, "ntr", "place", "Skagerrak", "1")) == ["NtrPlaced"]
    # CV1: at collect_resources the game waits for Britain's convoy decision, named with its command.
    waiting = _recorded(db, "next")
    assert any("convoy" in (p["command"] or "") for p in waiting["pending"])
    assert _recorded(db, "convoy", "pass", "--by", "Britain")["action"] == "convoy pass"


def test_sm2_interception_steps_print_json(db: str) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--json")
    _run(db, "next", "--to", "combat_movement", "--json")
    moved = _recorded(db, "move", "DE-SS3", "DE-SS4", "--path", "Southern North Sea,Dover Strait")
    assert [(p["rule"], p["command"].split()[:3]) for p in moved["pending"]] == [
        ("SM2", ["tracker", "intercept", "search"])
    ]
    assert _kinds(_recorded(db, "intercept", "search", "1", "--units", ""))[0] == "HuntersChosen"
    assert _kinds(_recorded(db, "intercept", "continue", "1"))[-1] == "UnitsMoved"


def test_rk3_undo_and_rk4_redo_print_what_they_took_back_and_put_back(db: str) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto", "--json")
    bought = _recorded(db, "next")
    undone = _recorded(db, "undo")
    assert _kinds(undone) == ["ActionUndone"]
    assert undone["undone"]["actions"][0]["events"] == [e["seq"] for e in bought["events"]]
    redone = _recorded(db, "redo")
    # The redo's own marker event, then the events it put back.
    put_back = [e["summary"] for e in redone["events"]][-len(bought["events"]) :]
    assert put_back == [e["summary"] for e in bought["events"]]


def test_d4_dice_switch_and_reveal_print_json(db: str) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto", "--json")
    revealed = _recorded(db, "dice", "reveal")
    assert len(revealed["seed"]) == 64
    switched = _recorded(db, "dice", "switch", "manual", "--reason", "a dice server from now on")
    assert switched["events"][-1]["rule"] == "D4"


def test_undo_to_with_json_asks_for_yes(db: str) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--json")
    _run(db, "next", "--json")
    result = CliRunner().invoke(cli, ["--db", db, "undo", "--to", "1", "--json"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "--yes" in result.stderr


def test_a_refusal_with_json_is_one_line_on_stderr_and_records_nothing(db: str) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--json")
    before = len(_run(db, "log", "--json"))
    result = CliRunner().invoke(cli, ["--db", db, "battle", "start", "--zone", "Central North Sea", "--json"])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("Error: T3") and result.stderr.count("\n") == 1
    assert len(_run(db, "log", "--json")) == before


def test_t4_next_to_refused_midway_prints_the_steps_it_recorded(db: str) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--json")
    _run(db, "next", "--json")
    _run(db, "buy", "submarine", "--json")
    result = CliRunner().invoke(cli, ["--db", db, "next", "--to", "collect_resources", "--json"])
    # PU2: the submarine bought is not placed, so placement cannot end.
    assert result.exit_code == 1 and "T4" in result.stderr
    stepped = json.loads(result.stdout)
    assert stepped["events"] and stepped["events"][-1]["data"]["phase"] == "placement"


def test_reading_commands_print_json(db: str, tmp_path: Path) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--json")
    assert _run(db, "campaigns", "--json") == ["autumn"]
    assert {"round", "nation", "phase", "units"} <= set(_run(db, "state", "--json"))
    assert _run(db, "pending", "--json")[0]["command"] == "tracker next"
    assert _run(db, "log", "--json")[0]["kind"] == "Created"
    assert _run(db, "explain", "1", "--json")["seq"] == 1
    assert _run(db, "replay", "--to", "1", "--json")[0]["board"]["phase"] == "research"
    assert _run(db, "projections", "rebuild", "--json") == {"rebuilt": True, "events": 1}
    assert _run(db, "verify", "--json")["ok"] is True
    assert {"name", "title"} <= set(_run(db, "scenarios", "--json")[0])
    assert _run(db, "campaign", "public", "--json") == {"campaign": "autumn", "public": False}
    added = _run(db, "players", "add", "anna", "--nations", "Germany", "--json")
    assert (added["player"], added["nations"], added["campaign"]) == ("anna", ["Germany"], "autumn")
    assert _run(db, "players", "revoke", "anna", "--json")["revoked"] is True


def test_commands_that_write_a_file_describe_it_with_json(db: str, tmp_path: Path) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--json")
    _run(db, "next", "--json")
    out = tmp_path / "r.html"
    wrote = _run(db, "report", "--turn", "1", "--format", "html", "-o", str(out), "--json")
    assert wrote == {"file": str(out), "format": "html", "bytes": out.stat().st_size, "what": wrote["what"]}
    # Without -o, --json is the report itself.
    assert isinstance(_run(db, "report", "--turn", "1", "--json"), dict)
    rows = tmp_path / "s.json"
    wrote = _run(db, "stats", "--json", "-o", str(rows))
    assert wrote["file"] == str(rows) and json.loads(rows.read_text())[0]["nation"]
    exported = tmp_path / "e.jsonl"
    assert _run(db, "export", str(exported), "--json")["events"] == len(exported.read_text().splitlines()) - 1
    scenario = tmp_path / "board.toml"
    assert _run(db, "scenario", "new", "board", "-o", str(scenario), "--json") == {
        "file": str(scenario),
        "scenario": "board",
    }
    drawn = _run(db, "scenario", "map", str(scenario), "-o", str(tmp_path / "m.svg"), "--json")
    assert drawn["zones"] > 0 and (tmp_path / "m.svg").exists()


def test_report_json_and_another_format_on_stdout_is_bad_usage(db: str) -> None:
    _run(db, "new", "autumn", "--scenario", "north-sea-1914", "--json")
    result = CliRunner().invoke(cli, ["--db", db, "report", "--turn", "1", "--format", "md", "--json"])
    assert result.exit_code == 2 and "--json" in result.stderr
