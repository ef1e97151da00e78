"""An event edited by hand with the sqlite3 shell (`UPDATE ... SET state = replace(state, ...)`)
is stored as text, not bytes: every command said "unexpected TypeError: string argument without
an encoding", and `verify` "the log cannot be replayed (TypeError ...)", where an edit is named
by the hash chain: the event, edited."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from tracker.cli.main import cli


def run(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    return result.exit_code, result.output


def test_an_event_edited_into_text_is_named_as_edited_not_an_unexpected_error(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    assert run(db, "new", "c", "--scenario", "north-sea-1914")[0] == 0
    assert run(db, "next")[0] == run(db, "next")[0] == 0
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tracker_events SET state = replace(state, 'purchase', 'research') WHERE id = 3")
        assert conn.execute("SELECT typeof(state) FROM tracker_events WHERE id = 3").fetchone() == ("text",)
    code, out = run(db, "verify")
    assert code == 1 and "event 3 (PhaseAdvanced) was edited: its content does not match its hash" in out, out
    for command in (["state"], ["next"], ["report", "--turn", "1"]):
        code, out = run(db, *command)
        assert code != 0 and "unexpected" not in out and "TypeError" not in out, (command, out)
        assert "event 3 (PhaseAdvanced) does not match the hash chain" in out, (command, out)
