"""A stored event whose type no longer resolves (its topic edited by hand in the database) is
an unreadable event of that campaign alone: its commands say so in one line (exit 1), `verify`
names the event, and the other campaigns of the database, `inbox` over all of them included,
are read as before (it was "unexpected TopicError" everywhere it was met)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from click.testing import CliRunner

from tracker.cli.main import cli


def test_an_event_of_an_unknown_type_hurts_its_campaign_only(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        result = runner.invoke(cli, ["--db", db, *args])
        return result.exit_code, result.output

    for args in (("new", "a", "--scenario", "north-sea-1914"), ("new", "b", "--scenario", "north-sea-1914")):
        assert run(*args)[0] == 0
    assert run("--campaign", "a", "next")[0] == 0
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(
            "UPDATE tracker_events SET topic = 'domain.campaign:Campaign.Bogus'"
            " WHERE id = (SELECT max(id) FROM tracker_events)"
        )
        conn.commit()
    code, out = run("--campaign", "a", "log")
    assert code == 1 and "TopicError" in out and "unexpected" not in out and len(out.strip().splitlines()) == 1
    code, out = run("--campaign", "a", "verify")
    assert code == 1 and "event 3 cannot be read (TopicError)" in out
    code, out = run("inbox")
    assert code == 0 and "b · round 1 · Germany · research" in out and "unexpected" not in out
    assert run("--campaign", "b", "state")[0] == 0
