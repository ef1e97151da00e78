"""Prose on a terminal (the demo, what an action recorded and waits for, explain, pending,
inbox, log, verify, odds) is wrapped between words at its width, each line's next lines
indented, a command to copy kept whole; in a pipe every line is whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.common import CLIENT_TERMINAL
from tracker.cli.main import cli


def run(db: str, *args: str, columns: int | None = None) -> str:
    token = CLIENT_TERMINAL.set(
        {"columns": columns, "color_system": None, "no_color": True, "tty": True} if columns else None
    )
    try:
        result = CliRunner().invoke(cli, ["--db", db, *args])
    finally:
        CLIENT_TERMINAL.reset(token)
    assert result.exit_code == 0, result.output
    return result.output


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
    assert "  next: tracker intercept search 1 [--units U1,U2] [--dice V,...]" in lines
    assert any(line.startswith("Waiting: battle 1 (interception, Dogger Bank)") for line in lines)
    assert any(line.startswith("    ") and "SM2" in line for line in lines)


def test_the_demo_narrates_within_the_terminal(tmp_path: Path) -> None:
    """A newcomer's first command, at 80 columns: no line the terminal would cut mid-word."""
    out = run(str(tmp_path / "demo.db"), "demo", columns=80)
    lines = out.splitlines()
    # A word longer than the line (the database's path) is never cut either.
    assert len(lines) > 100 and all(len(line) <= 80 or len(line.split()) == 1 for line in lines), max(lines, key=len)
    assert any(line.startswith("      ") for line in lines)  # a long event line went on, indented
