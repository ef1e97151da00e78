"""The hits of one class of fire (HA4-HA6) and the hits no unit may take (HA7, NC6) name the
nation that places them for its side: "for Germany to place", which reads as it is whether
Germany fights alone or with allies (NC1, F5). "on Germany's side" read as if Germany had
allies in a battle it fought alone; "on Britain" as if France's ships there were not hit."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from click.testing import CliRunner

from projections.summary import summary_of_kind
from tests.support import cli_on
from tracker.cli.main import cli


def hits(nation: str, hits: int = 2, firing_class: str = "capital") -> SimpleNamespace:
    return SimpleNamespace(battle=4, side="defender", nation=nation, firing_class=firing_class, hits=hits, rule="HA5")


def test_ha5_ha6_the_hits_of_a_class_name_the_nation_that_places_them() -> None:
    line = summary_of_kind("NavalHitsScored")(hits("Germany", 1, "escort"))
    assert line == "battle 4: 1 hit from escort ships for Germany to place"
    line = summary_of_kind("NavalHitsScored")(hits("Britain"))
    assert line == "battle 4: 2 hits from capital ships for Britain to place"


def test_ha7_hits_lost_name_the_nation_that_could_not_place_them() -> None:
    lost = summary_of_kind("HitsLost")
    assert lost(hits("Britain")) == "battle 4: 2 hits for Britain to place are lost: no unit there may take them"
    assert lost(hits("Germany", 1)) == "battle 4: 1 hit for Germany to place is lost: no unit there may take it"


def test_the_demo_battle_reads_without_a_side_of_one_nation(tmp_path: Path) -> None:
    db = str(tmp_path / "demo.db")
    result = CliRunner().invoke(cli, ["demo", "--db", db])
    assert result.exit_code == 0, result.output
    log = cli_on(db)("log")
    for text in (result.output, log):
        assert "'s side" not in text
        assert "battle 4: 1 hit from escort ships for Germany to place" in text
