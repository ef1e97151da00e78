"""An error names what the user gave, as given, on one line: a file name holding a newline or a
terminal escape is shown escaped (`\\n`), so it neither breaks the line nor drives the terminal."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tracker.cli.main import cli


def test_a_file_name_with_a_newline_is_named_on_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    assert CliRunner().invoke(cli, ["--db", db, "new", "w", "--scenario", "north-sea-1914"]).exit_code == 0
    result = CliRunner().invoke(cli, ["--db", db, "import", "turn\n2\x1b[31m.jsonl"])
    assert result.exit_code == 2
    assert result.output == "Error: cannot read turn\\n2\\x1b[31m.jsonl: No such file or directory\n"
