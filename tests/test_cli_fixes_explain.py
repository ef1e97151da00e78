"""`tracker explain` takes an event (SEQ) or --roll N, one of them (D3): its usage says so,
where it showed SEQ as required although `explain --roll 16` needs none; with neither it is
bad usage in one line naming both forms."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.support import cli_on
from tracker.cli.main import cli


def test_d3_explain_usage_names_an_event_or_a_roll(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    cli_on(db)("new", "x", "--scenario", "north-sea-1914")
    usage = CliRunner().invoke(cli, ["--db", db, "explain", "--help"]).output.splitlines()[0]
    # The program's name is the runner's own here ("cli"); what follows it is the command's.
    assert usage.split(" ", 2)[2] == "explain [OPTIONS] (SEQ | --roll N)"
    result = CliRunner().invoke(cli, ["--db", db, "explain"])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert "SEQ" in line and "--roll N" in line
