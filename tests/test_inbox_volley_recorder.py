"""`tracker inbox` names who records a volley both sides fire (NC3): one command rolls every
side's dice, typed by the first nation waited for, so its line is `next (Germany): ...` for each
player, as the hand-off messages label it; the pending text says the same ("Germany records
them, Britain's too")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli
from tracker.service.inbox import recorder_of

CNS = "Central North Sea"


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def db(tmp_path: Path) -> str:
    """North Sea 1914, manual dice: Germany's submarines attack in the Central North Sea and the
    battle waits for both sides' fire; Anna plays Germany, Bert Britain."""
    path = str(tmp_path / "n.db")
    run(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run(path, "players", "add", "anna", "--nations", "Germany")
    run(path, "players", "add", "bert", "--nations", "Britain")
    run(path, "next", "--to", "naval_combat")
    run(path, "battle", "start", "--zone", CNS)
    run(path, "battle", "targets", "1")
    run(path, "battle", "screen", "1", "--screens", "")
    return path


def test_nc3_inbox_labels_the_volley_with_the_nation_that_records_it(db: str) -> None:
    (item,) = json.loads(run(db, "inbox", "--player", "bert", "--json"))
    assert item["waiting"] == ["Germany", "Britain"] and "Germany records them" in item["text"]
    for player in ("anna", "bert"):
        lines = run(db, "inbox", "--player", player).splitlines()
        (command,) = [line for line in lines if line.lstrip().startswith("next")]
        assert command.startswith("  next (Germany): tracker --campaign autumn battle fire 1 --dice "), command


def test_nc3_one_nation_waited_for_is_not_labelled(db: str) -> None:
    run(db, "battle", "fire", "1", "--dice", "9,9,9,9,9")
    (item,) = json.loads(run(db, "inbox", "--player", "anna", "--json"))
    assert item["waiting"] == ["Germany"] and recorder_of(item) is None
    (command,) = [line for line in run(db, "inbox", "--player", "anna").splitlines() if "next" in line]
    assert command.startswith("  next: tracker --campaign autumn battle decide 1"), command
