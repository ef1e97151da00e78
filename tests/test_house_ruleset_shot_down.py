"""An aircraft lost in battle is shot down, not "sunk" (F3, NC5), in a campaign on a house
ruleset too: one whose air units have other abbreviations than the built-in ruleset's (AC for
its fighters). The log's summaries read the unit's type from the built-in rulesets' letters,
and called GB-AC1 sunk in `log`, in the output of `battle fire` and in `explain`'s line; they
now read the campaign's own ruleset, in the event index as a rebuild writes it too."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from domain.ruleset import load_ruleset
from projections.summary import summary
from tracker.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
NNS = "Northern North Sea"


def house_text() -> str:
    """The built-in ruleset with its air units' abbreviations changed (AC, AB, AT)."""
    raw = (ROOT / "domain/data/rulesets/twtea-3e.toml").read_text()
    for old, new in (("FT", "AC"), ("BM", "AB"), ("TP", "AT")):
        assert raw.count(f'abbr = "{old}"') == 1
        raw = raw.replace(f'abbr = "{old}"', f'abbr = "{new}"')
    return raw


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def downed(tmp_path: Path) -> tuple[str, str]:
    """Germany's fighter DE-AC1 shoots down Britain's GB-AC1 in a naval battle in the Northern
    North Sea (manual dice); the database and what `battle fire` printed."""
    house = tmp_path / "house.toml"
    house.write_text(house_text())
    db = str(tmp_path / "house.db")
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--ruleset", str(house), "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-BB1", "DE-BB2", "--path", f"Skagerrak,{NNS}")
    run(db, "move", "DE-AC1", "--path", f"Heligoland Bight,Central North Sea,{NNS}")
    run(db, "next", "--to", "naval_combat")
    run(db, "battle", "start", "--zone", NNS)
    # The views follow the log from here on, event by event, as a later command resumes them.
    run(db, "log")
    run(db, "battle", "targets", "1", "--nation", "Germany", "--targets", "DE-AC1=GB-AC1")
    run(db, "battle", "targets", "1")
    # DE-AC1 hits; every other die misses.
    fired = run(db, "battle", "fire", "1", "--dice", "1,9,9,9,9,9,9")
    return db, fired


def test_f3_a_house_rulesets_aircraft_is_shot_down_in_the_log(downed: tuple[str, str]) -> None:
    db, fired = downed
    assert "GB-AC1 shot down in battle 1   [NC3]" in fired
    (hit,) = [r for r in json.loads(run(db, "log", "--json")) if r["kind"] == "UnitHit"]
    assert hit["summary"] == "GB-AC1 shot down in battle 1"
    assert "GB-AC1 shot down in battle 1" in run(db, "log", "--battle", "1")
    assert json.loads(run(db, "explain", str(hit["seq"]), "--json"))["summary"] == "GB-AC1 shot down in battle 1"


def test_f3_the_event_index_a_rebuild_writes_says_so_as_the_live_one_did(downed: tuple[str, str]) -> None:
    db, _ = downed
    run(db, "log")
    assert "view rows match a rebuild of the log" in run(db, "verify", "--projections")
    run(db, "projections", "rebuild")
    (hit,) = [r for r in json.loads(run(db, "log", "--json")) if r["kind"] == "UnitHit"]
    assert hit["summary"] == "GB-AC1 shot down in battle 1"


class UnitHit(SimpleNamespace):
    """An event of the kind `summary` reads by its class's name."""


def test_f3_a_summary_reads_the_ruleset_it_is_given_and_the_built_in_ones_without(tmp_path: Path) -> None:
    (tmp_path / "house.toml").write_text(house_text())
    house = load_ruleset(str(tmp_path / "house.toml"))[0]
    hit = UnitHit(unit="GB-AC1", sunk=True, battle=2, rule="NC3")
    assert summary(hit, None, house) == "GB-AC1 shot down in battle 2"
    # No campaign at hand: the built-in rulesets' letters, where AC is no aircraft's.
    assert summary(hit) == "GB-AC1 sunk in battle 2"
    hit.unit = "GB-FT1"
    assert summary(hit) == "GB-FT1 shot down in battle 2"
    # A house ruleset's FT may be a ship's letters: its own ruleset says it is sunk.
    assert summary(hit, None, house) == "GB-FT1 sunk in battle 2"
