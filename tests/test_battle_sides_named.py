"""A naval battle's side is named by the nations of its units (NC1, F5): one nation decides for
the side and is recorded, but "attacks Britain (FR-CA2, ...)" credited France's ships to
Britain. The printed line, `log --json` and the event index (rebuilt from an earlier schema's
wording) say "Britain and France" and "FR-SS2 of France"."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from projections import schema as projection_schema
from tracker.cli.main import cli

EC = "English Channel"
ATTACKS = (
    "battle 2: naval battle in English Channel: Germany (DE-SS4) attacks Britain and France "
    "(FR-CA2, FR-DD2, FR-SS2, GB-BB11, GB-BB12, GB-BB13, GB-CA6, GB-TR1)"
)
OPENING = "battle 2: opening fire for FR-SS2 of France"


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def db(tmp_path: Path) -> str:
    """Great War, round 1: DE-SS4 slips through Dover Strait into the English Channel, where
    Britain's and France's ships lie together."""
    path = str(tmp_path / "w.db")
    run(path, "new", "war", "--scenario", "great-war-1914")
    run(path, "next", "--to", "combat_movement")
    run(path, "move", "DE-SS4", "--path", f"Dover Strait,{EC}")
    run(path, "intercept", "search", "1", "--units", "")
    run(path, "intercept", "continue", "1")
    run(path, "next")
    return path


def test_nc1_the_battle_line_names_every_nation_of_the_defence_and_the_submarines_owner(db: str) -> None:
    out = run(db, "battle", "start", "--zone", EC)
    assert f"{ATTACKS}   [NC1]" in out
    assert f"{OPENING}   [NC2]" in out
    # The attacker's own line keeps its nation: DE-SS4's fire is cancelled.
    assert "battle 2: no opening fire by the submarines of Germany; cancelled for DE-SS4" in out
    records = json.loads(run(db, "log", "--json", "--battle", "2"))
    summaries = [e["summary"] for e in records]
    assert ATTACKS in summaries and OPENING in summaries
    started = next(e["seq"] for e in records if e["kind"] == "NavalBattleStarted")
    assert ATTACKS in run(db, "explain", str(started))


def test_nc1_the_json_of_the_action_names_the_side_as_the_line_does(db: str) -> None:
    recorded = json.loads(run(db, "battle", "start", "--zone", EC, "--json"))
    summaries = [e["summary"] for e in recorded["events"]]
    assert ATTACKS in summaries and OPENING in summaries


def test_nc1_views_of_an_earlier_schema_are_rebuilt_with_the_nations_named(db: str) -> None:
    run(db, "battle", "start", "--zone", EC)
    with sqlite3.connect(db) as conn:
        # As the release before left them: the deciding nation for the whole side.
        conn.execute("UPDATE tracker_projection_tracking SET schema = ?", (projection_schema.SCHEMA - 1,))
        old = ATTACKS.replace("Britain and France", "Britain")
        conn.execute("UPDATE tracker_event_index SET summary = ? WHERE kind = 'NavalBattleStarted'", (old,))
        conn.execute(
            "UPDATE tracker_event_index SET summary = ? WHERE summary = ?", (OPENING[:-6] + "Britain", OPENING)
        )
    log = run(db, "log", "--battle", "2")
    assert ATTACKS in log and OPENING in log
    assert "attacks Britain (" not in log and "of Britain" not in log
