"""Prose on a terminal (the demo, what an action recorded and waits for, explain, pending,
inbox, log, verify, odds) is wrapped between words at its width, each line's next lines
indented, a command to copy kept whole; in a pipe every line is whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.common import CLIENT_TERMINAL
from tracker.cli.main import cli


def invoked_at(db: str, args: list[str], columns: int | None) -> tuple[int, str]:
    """Exit status and output of a command at a terminal `columns` wide (None: a pipe)."""
    token = CLIENT_TERMINAL.set(
        {"columns": columns, "color_system": None, "no_color": True, "tty": True} if columns else None
    )
    try:
        # The database from the environment: a --db typed would be repeated in each command to
        # copy at a terminal (tests/test_suggested_commands_globals.py), not in a pipe.
        result = CliRunner().invoke(cli, args, env={"TRACKER_DB": db})
    finally:
        CLIENT_TERMINAL.reset(token)
    return result.exit_code, result.output


def run(db: str, *args: str, columns: int | None = None) -> str:
    code, out = invoked_at(db, list(args), columns)
    assert code == 0, out
    return out


@pytest.mark.parametrize("args", [["explain", "1"], ["explain", "3"], ["pending"], ["inbox"], ["log"], ["verify"]])
def test_prose_fits_the_terminal_word_for_word(tmp_path: Path, args: list[str]) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "prose", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "next")
    whole = run(db, *args)
    narrow = run(db, *args, columns=50)
    assert narrow.split() == whole.split()
    for line in narrow.splitlines():
        # A word longer than the line (a hash) is never cut either.
        fits = len(line) <= 50 or len(line.split()) == 1
        assert fits or line.lstrip().startswith(("tracker ", "next: tracker ", "Head: ")), line
    if args == ["explain", "1"]:
        assert any(len(line) > 50 for line in whole.splitlines())
        assert narrow != whole


def test_a_long_log_summary_goes_on_under_its_column(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "prose", "--scenario", "north-sea-1914", "--dice", "auto")
    lines = run(db, "log", columns=80).splitlines()
    assert lines[0].startswith("    1  Created             [T1]   campaign 'prose' created")
    assert lines[1].startswith(" " * 34) and not lines[1].startswith(" " * 35)


def test_what_an_action_recorded_and_waits_for_fits_the_terminal(tmp_path: Path) -> None:
    """The lines a move prints (events, what the game waits for) at the table's terminal."""
    db = str(tmp_path / "w.db")
    run(db, "new", "world", "--scenario", "great-war-1914", "--dice", "auto")
    run(db, "next")
    run(db, "next")
    out = run(db, "move", "DE-SS1", "--path", "Dogger Bank,Southern North Sea", columns=60)
    lines = out.splitlines()
    assert all(len(line) <= 60 for line in lines if not line.startswith("  next: ")), out
    # D4: an auto-dice campaign rolls its own dice: the command offers no typed ones.
    assert "  next: tracker intercept search 1 [--units U1,U2]" in lines
    (item,) = json.loads(run(db, "pending", "--json"))
    assert item["dice"]["typed"] is False and "--dice" not in item["command"]
    assert any(line.startswith("Waiting: battle 1 (interception, Dogger Bank)") for line in lines)
    assert any(line.startswith("    ") and "SM2" in line for line in lines)


def test_the_demo_narrates_within_the_terminal(tmp_path: Path) -> None:
    """A newcomer's first command, at 80 columns: no line the terminal would cut mid-word."""
    out = run(str(tmp_path / "demo.db"), "demo", columns=80)
    lines = out.splitlines()
    # A word longer than the line (the database's path) is never cut either.
    assert len(lines) > 100 and all(len(line) <= 80 or len(line.split()) == 1 for line in lines), max(lines, key=len)
    assert any(line.startswith("      ") for line in lines)  # a long event line went on, indented


@pytest.mark.parametrize("columns", [60, 80])
def test_an_error_fits_the_terminal_its_command_to_copy_on_a_line_of_its_own(tmp_path: Path, columns: int) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "de-ss1", "de-ss2", "--to", "southern north sea")
    run(db, "next")
    code, piped = invoked_at(db, ["next"], None)
    assert code == 1 and piped.count("\n") == 1, "in a pipe, an error is one line"
    code, shown = invoked_at(db, ["next"], columns)
    lines = shown.rstrip("\n").split("\n")
    assert code == 1 and len(lines) > 1
    assert lines[-1] == "    tracker battle start --zone 'Southern North Sea'"
    assert all(len(line) <= columns for line in lines[:-1]), lines
    assert " ".join(line.strip() for line in lines) == piped.strip(), "the same words"
    code, usage = invoked_at(db, ["buy", "submarine", "0"], columns)
    assert code == 2 and all(len(line) <= columns for line in usage.splitlines()), usage


def test_new_fits_the_terminal(tmp_path: Path) -> None:
    out = run(str(tmp_path / "c.db"), "new", "autumn", "--scenario", "north-sea-1914", columns=60)
    assert all(len(line) <= 60 for line in out.splitlines()), out
    assert " ".join(out.split()).startswith("Campaign 'autumn' created: The North Sea, autumn 1914 with ruleset")
