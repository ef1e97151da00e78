"""NC1, F5: the words a naval battle records name a side by the nations of its units. One nation
decides for a side whose allies' units fight on it too, but a die "fires at Britain's units"
while French ships were there, and "Britain has no unit left in the battle" when France's were
sunk too; "United States's units" read wrongly. A new campaign records "fires at Britain's and
France's units" (the side's units still fighting), "United States' units", and "Britain and
France have no unit left in the battle" (every nation whose units fought on the side): the
deciding nation first, then the others in the scenario's turn order.

A campaign recorded before the ruleset said so (`[record] sides_named_whole`) keeps the words
it recorded: `verify` re-runs its actions and compares the events exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import recorded_before
from tracker.cli.main import cli

TWTEA = Path(__file__).parent.parent / "domain" / "data" / "rulesets" / "twtea-3e.toml"
KEY = "sides_named_whole"
EC = "English Channel"
# The scenario's units in the English Channel, taken away so that a raid meets only the units a
# test places there.
CHANNEL = "FR-CA2,FR-DD2,FR-SS2,GB-BB11,GB-BB12,GB-BB13,GB-CA6,GB-TR1"


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


def raid(db: str, *defenders: str) -> None:
    """Great War, round 1, manual dice, the United States brought into the war: two German
    cruisers attack the English Channel, where only `defenders` (NATION:TYPE) lie."""
    run(db, "new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    run(db, "adjust", "--enter", "United States", "--reason", "x")
    added = [arg for d in defenders for arg in ("--add", f"{d}:{EC}")]
    run(db, "adjust", "--remove", CHANNEL, "--add", f"Germany:cruiser:{EC}:2", *added, "--reason", "a raid")
    run(db, "next", "--to", "combat_movement")
    run(db, "next")
    run(db, "battle", "start", "--zone", EC)


def volley(db: str, defenders: int, casualties: str | None = None) -> None:
    """A round in which both German cruisers hit and every defender misses; the casualties
    named (None: the default, or none asked where the hits have one legal placing)."""
    out = run(db, "battle", "fire", "1", "--dice", ",".join(["1", "1"] + ["10"] * defenders))
    if "to choose casualties" in out:
        run(db, "battle", "casualties", "1", *(["--units", casualties] if casualties else []))


def recorded(db: str) -> tuple[list[str], str]:
    """The purposes of battle 1's dice, as recorded, and the reason it ended."""
    events = json.loads(run(db, "log", "--json", "--battle", "1"))
    purposes = [e["data"]["purpose"] for e in events if e["kind"] == "DiceRolled"]
    (reason,) = [e["data"]["reason"] for e in events if e["kind"] == "BattleEnded"]
    return purposes, reason


def verified(db: str) -> bool:
    return run(db, "verify").startswith("OK:")


@pytest.fixture
def before_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """New campaigns record their ruleset without the key, as a release before it did."""
    recorded_before(monkeypatch, KEY)


def test_nc1_f5_a_side_of_britain_and_france_is_named_whole(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    raid(db, "Britain:destroyer", "France:destroyer")
    volley(db, 2)
    purposes, reason = recorded(db)
    assert purposes == [
        "DE-CA12 (cruiser) fires at Britain's and France's units",
        "DE-CA13 (cruiser) fires at Britain's and France's units",
        "FR-DD3 (destroyer) fires at Germany's units",
        "GB-DD8 (destroyer) fires at Germany's units",
    ]
    assert reason == "Britain and France have no unit left in the battle"
    log = run(db, "log", "--battle", "1")
    assert "battle 1 ends (Britain and France have no unit left in the battle)" in log
    assert "DE-CA12 (cruiser) fires at Britain's and France's units: D10" in log
    assert verified(db)


def test_nc1_f5_a_side_is_named_in_turn_order_its_units_still_fighting_and_all_that_fought(tmp_path: Path) -> None:
    """Britain decides (one unit each, first in turn order); the others follow in turn order
    (Russia before Japan). The second round's dice fire at the units left; the ending names
    every nation whose units fought, those sunk in the first round too."""
    db = str(tmp_path / "w.db")
    raid(db, "Japan:destroyer", "Russia:destroyer", "United States:destroyer", "Britain:destroyer")
    volley(db, 4, "JP-DD3,RU-DD5")
    run(db, "battle", "decide", "1")
    volley(db, 2)
    purposes, reason = recorded(db)
    whole = "Britain's, Russia's, Japan's and United States' units"
    assert purposes[:2] == [f"DE-CA12 (cruiser) fires at {whole}", f"DE-CA13 (cruiser) fires at {whole}"]
    left = "Britain's and United States' units"
    assert purposes[6:8] == [f"DE-CA12 (cruiser) fires at {left}", f"DE-CA13 (cruiser) fires at {left}"]
    assert reason == "Britain, Russia, Japan and United States have no unit left in the battle"
    # The log's line of the battle's start names the side as the recorded words do.
    assert "attacks Britain, Russia, Japan and United States (GB-DD8" in run(db, "log", "--battle", "1")
    assert verified(db)


def test_nc1_a_battle_against_the_united_states_reads_its_possessive(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    raid(db, "United States:destroyer")
    volley(db, 1)
    purposes, reason = recorded(db)
    assert purposes[0] == "DE-CA12 (cruiser) fires at United States' units"
    assert purposes[2] == "US-DD3 (destroyer) fires at Germany's units"
    assert reason == "United States has no unit left in the battle"
    assert verified(db)


@pytest.mark.usefixtures("before_the_key")
def test_nc1_f5_a_campaign_recorded_before_the_key_keeps_its_words_and_verifies(tmp_path: Path) -> None:
    db = str(tmp_path / "old.db")
    raid(db, "Britain:destroyer", "France:destroyer")
    volley(db, 2)
    purposes, reason = recorded(db)
    assert purposes[:2] == [
        "DE-CA12 (cruiser) fires at Britain's units",
        "DE-CA13 (cruiser) fires at Britain's units",
    ]
    assert reason == "Britain has no unit left in the battle"
    assert verified(db)


@pytest.mark.usefixtures("before_the_key")
def test_nc1_a_campaign_recorded_before_the_key_keeps_united_states_s(tmp_path: Path) -> None:
    db = str(tmp_path / "old.db")
    raid(db, "United States:destroyer")
    volley(db, 1)
    purposes, _ = recorded(db)
    assert purposes[0] == "DE-CA12 (cruiser) fires at United States's units"
    assert verified(db)
