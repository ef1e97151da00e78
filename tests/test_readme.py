"""The README's walkthrough is executed line by line, so it can never drift from the CLI."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from tracker.cli.main import cli

README = Path(__file__).resolve().parent.parent / "README.md"


def walkthrough() -> list[tuple[str, int, str | None]]:
    """(command line, expected exit code, expected error text) for each line of the block."""
    text = README.read_text()
    section = text[text.index("## A campaign, step by step") :]
    block = section[section.index("```sh\n") + 6 : section.index("```\n", section.index("```sh\n") + 6)]
    steps: list[tuple[str, int, str | None]] = []
    for line in block.splitlines():
        error = re.match(r"# Error: (.*?)\(\.\.\.\)\s+exit (\d)", line)
        if error:
            command, _, _ = steps.pop()
            steps.append((command, int(error.group(2)), error.group(1).strip()))
        elif line.startswith("tracker "):
            command = line.split("  #")[0].strip()
            steps.append((command, 0, None))
    return steps


def test_the_readme_walkthrough_runs_as_written(tmp_path: Path) -> None:
    db = str(tmp_path / "campaign.db")
    steps = walkthrough()
    assert len(steps) > 20
    for command, code, error in steps:
        args = shlex.split(command)[1:]
        result = CliRunner().invoke(cli, ["--db", db, *args])
        assert result.exit_code == code, f"{command}\n{result.output}"
        if error:
            assert f"Error: {error}" in result.output, command
    log = CliRunner().invoke(cli, ["--db", db, "log", "--kind", "NtrDestroyed"]).output
    assert "2 of Britain's NTR destroyed in Central North Sea" in log


def test_the_readme_explain_line_shows_the_research_roll_te1(tmp_path: Path) -> None:
    # The walkthrough's `explain` line promises the research roll: its rule, die and target (TE1, D3).
    db = str(tmp_path / "campaign.db")
    steps = [command for command, _, _ in walkthrough()]
    explain = next(c for c in steps if c.startswith("tracker explain "))
    for command in steps[: steps.index(explain)]:
        CliRunner().invoke(cli, ["--db", db, *shlex.split(command)[1:]])
    out = CliRunner().invoke(cli, ["--db", db, *shlex.split(explain)[1:]]).output
    assert "DiceRolled" in out and "Rule TE1" in out
    assert "Dice: roll 1 by Germany for TE1: D10 -> [9]" in out and "Target: 9 or more" in out
