"""D4, D5: `tracker dice adopt --from DB` brings a moved campaign's secret dice seed over from
the database it was exported from (a group's SQLite file moved to its league's PostgreSQL
database): an imported auto campaign could never roll its auto dice again, `dice switch auto`
refused for good. The seed is checked against the log's commitment; nothing is written there."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli
from tracker.storage.store import seeds_table


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def moved(tmp_path: Path, target: str) -> str:
    """A campaign begun in a SQLite file (one roll made), exported and imported into `target`."""
    source = str(tmp_path / "group.db")
    run(source, "new", "autumn", "--scenario", "north-sea-1914")
    run(source, "research", "advanced_asw")
    export = tmp_path / "autumn.jsonl"
    run(source, "export", str(export))
    out = run(target, "import", str(export))
    assert "tracker --campaign autumn dice adopt --from DB" in " ".join(out.split())
    return source


def test_d5_an_adopted_seed_rolls_the_moved_campaigns_auto_dice_again(tmp_path: Path) -> None:
    target = str(tmp_path / "league.db")
    source = moved(tmp_path, target)
    run(target, "next", "--to", "collect_resources")
    run(target, "convoy", "pass", "--by", "Britain")
    run(target, "next")
    # Without the seed the next auto roll is refused (research is Britain's now).
    assert "does not hold the campaign's dice seed" in run(target, "research", "advanced_asw", code=1)
    before = Path(source).read_bytes()
    out = run(target, "dice", "adopt", "--from", source)
    assert f"Adopted the dice seed of epoch 0 from sqlite:///{Path(source).resolve()}" in out
    assert "rolls its auto dice here again (D5)" in out
    assert Path(source).read_bytes() == before  # nothing written there
    assert "roll 2: Britain research roll for Advanced ASW" in run(target, "research", "advanced_asw")
    verified = run(target, "verify")
    assert verified.startswith("OK:") and "2 auto rolls re-derived from the seed" in verified
    again = json.loads(run(target, "dice", "adopt", "--from", source, "--json"))
    assert again["already_here"] is True and again["epoch"] == 0 and again["dice"] == "auto"


def test_d4_after_a_switch_to_manual_the_adopted_seed_lets_the_group_switch_back(tmp_path: Path) -> None:
    target = str(tmp_path / "league.db")
    source = moved(tmp_path, target)
    run(target, "dice", "switch", "manual", "--reason", "seed stayed behind")
    run(target, "dice", "switch", "auto", "--reason", "back", code=1)
    out = run(target, "dice", "adopt", "--from", source)
    assert "tracker dice switch auto --reason TEXT" in out
    run(target, "dice", "switch", "auto", "--reason", "seed adopted")


def test_d5_a_database_without_the_campaign_or_without_its_seed_is_refused(tmp_path: Path) -> None:
    target = str(tmp_path / "league.db")
    source = moved(tmp_path, target)
    other = str(tmp_path / "other.db")
    run(other, "new", "autumn", "--scenario", "north-sea-1914")
    assert "holds no copy of this campaign" in run(target, "dice", "adopt", "--from", other, code=2)
    assert "is this database" in run(target, "dice", "adopt", "--from", target, code=2)
    missing = run(target, "dice", "adopt", "--from", str(tmp_path / "nowhere.db"), code=2)
    assert "no such database file" in missing
    # The source revealed its seed after the export and committed to another: not this log's.
    run(source, "dice", "reveal")
    with sqlite3.connect(source) as conn:
        conn.execute(f"DELETE FROM {seeds_table.name} WHERE epoch = 0")
    refused = run(target, "dice", "adopt", "--from", source, code=2)
    assert "holds no dice seed of epoch 0 matching this log's commitment (D5)" in refused
    assert "--keys KEYS" in refused


def test_d5_a_served_campaigns_seed_is_adopted_from_the_servers_key_store(tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the key store is the league server's")
    from sqlalchemy import insert

    from tracker.server.keys import open_key_store

    target = str(tmp_path / "league.db")
    source = moved(tmp_path, target)
    # As a server keeps it: the seed in its key store, none left in the database.
    with sqlite3.connect(source) as conn:
        (cid, seed) = conn.execute(f"SELECT campaign_id, seed FROM {seeds_table.name} WHERE epoch = 0").fetchone()
        conn.execute(f"DELETE FROM {seeds_table.name}")
    keys = tmp_path / "keys.db"
    store = open_key_store(f"sqlite:///{keys}")
    with store.begin() as conn:
        conn.execute(insert(seeds_table).values(campaign_id=cid, epoch=0, seed=seed))
    store.dispose()
    assert "--keys KEYS" in run(target, "dice", "adopt", "--from", source, code=2)
    out = run(target, "dice", "adopt", "--from", source, "--keys", str(keys))
    assert "Adopted the dice seed of epoch 0 from the key store" in out


def test_d5_adopt_into_postgresql(tmp_path: Path, own_pg: str) -> None:
    source = moved(tmp_path, own_pg)
    assert "Adopted the dice seed of epoch 0" in run(own_pg, "dice", "adopt", "--from", source)
    assert run(own_pg, "verify").startswith("OK:")
