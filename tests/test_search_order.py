"""CV4 as amended ("everywhere: the order in which `pending` lists the dice is the order in which
they are consumed") for the searches: the units named for a convoy search (CV3), an ASW search
(AS2) or an interception search (SM2) roll in the order `pending` lists them, by ID, whatever
order they are named in. A campaign recorded before the amendment keeps the order its units
were named in (its recorded ruleset has no `[dice] search_order`), so its log re-referees as
it was recorded.
"""

from __future__ import annotations

import copy
import gzip
from functools import partial
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import ManualDice
from domain.ruleset import load_ruleset, read_toml
from tests import test_asw, test_convoy, test_interception
from tracker.cli.main import cli
from tracker.service.application import Tracker

_, RULESET = load_ruleset("twtea-3e")
FIXTURE = Path(__file__).parent / "fixtures" / "search-order-named.jsonl.gz"


def run_in(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


run = run_in


def before_the_amendment() -> dict[str, Any]:
    """The ruleset as a campaign recorded it before `[dice] search_order` existed."""
    data = copy.deepcopy(RULESET)
    del data["dice"]["search_order"]
    return data


def searched(c: Campaign) -> list[tuple[str, list[int], str]]:
    return [(r.unit, r.values, r.outcome) for r in test_convoy.rolls(c, "CV3")]


def test_cv4_a_new_campaign_records_that_searches_roll_in_pendings_order() -> None:
    assert RULESET["dice"]["search_order"] == "pending"


def test_cv4_convoy_search_dice_go_in_pendings_order_not_the_order_named() -> None:
    c = test_convoy.campaign()
    b = test_convoy.at_search(c)
    order = c.pending()[0]["dice"]["order"]
    assert order.index("GB-CA1") < order.index("GB-DD2")
    # Named destroyer first; the first die is still the cruiser's, as `pending` lists them.
    assert c.convoy_search(b, ["GB-DD2", "GB-CA1"], ManualDice([4, 9])) == ["GB-CA1"]
    assert searched(c) == [("GB-CA1", [4], "success"), ("GB-DD2", [9], "failure")]


def test_cv4_convoy_search_before_the_amendment_rolls_in_the_order_named() -> None:
    c = test_convoy.campaign(before_the_amendment())
    b = test_convoy.at_search(c)
    assert c.convoy_search(b, ["GB-DD2", "GB-CA1"], ManualDice([4, 9])) == ["GB-DD2"]
    assert searched(c) == [("GB-DD2", [4], "success"), ("GB-CA1", [9], "failure")]


def test_cv4_as2_asw_search_dice_go_in_pendings_order_not_the_order_named() -> None:
    c = test_asw.campaign()
    b = c.asw_start("Germany", test_asw.HB)
    order = c.pending()[0]["dice"]["order"]
    assert order.index("DE-DD1 vs GB-SS1") < order.index("DE-DD2 vs GB-SS1")
    # Each searcher rolls once against each of GB-SS1 and GB-SS2: DE-DD1's dice first.
    c.asw_search(b, ["DE-DD2", "DE-DD1"], test_asw.dice(1, 9, 9, 9))
    assert [(r.unit, r.values[0]) for r in test_asw.rolls(c)] == [
        ("DE-DD1", 1),
        ("DE-DD1", 9),
        ("DE-DD2", 9),
        ("DE-DD2", 9),
    ]


def test_cv4_as2_asw_search_before_the_amendment_rolls_in_the_order_named() -> None:
    c = test_asw.campaign(ruleset=before_the_amendment())
    b = c.asw_start("Germany", test_asw.HB)
    c.asw_search(b, ["DE-DD2", "DE-DD1"], test_asw.dice(1, 9, 9, 9))
    assert [r.unit for r in test_asw.rolls(c)] == ["DE-DD2", "DE-DD2", "DE-DD1", "DE-DD1"]


def test_cv4_sm2_interception_search_dice_go_in_pendings_order_not_the_order_named() -> None:
    c = test_interception.campaign()
    b = test_interception.intercepted(c)
    c.intercept_search(b, ["GB-DD5", "GB-DD3", "GB-DD4"], test_interception.dice(1, 2, 7))
    assert [(r.unit, r.values[0]) for r in test_interception.rolls(c)] == [
        ("GB-DD3", 1),
        ("GB-DD4", 2),
        ("GB-DD5", 7),
    ]


def test_cv4_sm2_interception_search_before_the_amendment_rolls_in_the_order_named() -> None:
    c = test_interception.campaign(before_the_amendment())
    b = test_interception.intercepted(c)
    c.intercept_search(b, ["GB-DD5", "GB-DD3", "GB-DD4"], test_interception.dice(1, 2, 7))
    assert [r.unit for r in test_interception.rolls(c)] == ["GB-DD5", "GB-DD3", "GB-DD4"]


def test_cv4_a_ruleset_file_without_the_key_plays_the_rule_as_amended(tmp_path: Path) -> None:
    source = tmp_path / "house.toml"
    text = Path(__file__).parent.parent.joinpath("domain", "data", "rulesets", "twtea-3e.toml").read_text()
    source.write_text(text.replace('search_order = "pending"\n', ""))
    assert "search_order" not in read_toml(source)["dice"]
    ruleset, data = load_ruleset(str(source))
    assert ruleset.search_order == "pending" and data["dice"]["search_order"] == "pending"


def test_cv4_a_log_recorded_before_the_amendment_imports_and_verifies(tmp_path: Path) -> None:
    """The fixture is the export of a campaign played with manual dice by the tracker before the
    amendment: a convoy search named GB-DD2, GB-CA1 (dice 4, 9: the destroyer detected) and an
    ASW search named DE-DD2, DE-DD1 (dice 1, 9, 9, 9: DE-DD2 found GB-SS1). Import re-referees
    every action; the dice went to the units in the order named, as recorded."""
    export = tmp_path / "old.jsonl"
    export.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    db = str(tmp_path / "old.db")
    run(db, "import", str(export))
    assert "Re-refereed" in run(db, "verify")
    log = run(db, "log")
    assert "battle 1: detected by GB-DD2; failed: GB-CA1" in log
    assert "roll 9: DE-DD2 (destroyer) searches for GB-SS1 in Heligoland Bight: D10 x1 = 1" in log
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert c.ruleset.search_order == "named" and "search_order" not in c.ruleset_data["dice"]


def test_cv4_cli_the_dice_typed_go_to_the_units_in_the_order_pending_printed(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run = partial(run_in, db)
    run("new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    run("next", "--to", "collect_resources")
    run("convoy", "pass", "--by", "gb")
    run("next", "--to", "collect_resources", "--nation", "gb")
    run("convoy", "declare", "--by", "de", "--zone", "central north sea", "--subs", "de-ss1,de-ss2")
    run("convoy", "roll", "1", "--dice", "3,4")
    assert "GB-CA1 at 4, GB-DD1 at 4, GB-DD2 at 4" in run("pending")
    out = run("convoy", "search", "1", "--units", "gb-dd2,gb-ca1", "--dice", "4,9")
    assert "GB-CA1 (cruiser) convoy search in Central North Sea: D10 x1 = 4 vs <=4: success" in out
    assert "GB-DD2 (destroyer) convoy search in Central North Sea: D10 x1 = 9 vs <=4: failure" in out
    assert "Re-refereed" in run("verify")
