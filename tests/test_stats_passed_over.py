"""F8: `tracker stats` lists the turns nations played. A turn passed over (its nation neutral)
has no row in any of its outputs, and neither has turn 1 passed over as the campaign was
created: its events are the creation's, not a turn its neutral nation played."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from tests.test_first_nation_neutral_views import campaign


def test_f8_stats_lists_no_turn_passed_over_turn_1_included(tmp_path: Path) -> None:
    # Germany (turn 1) and Austria-Hungary (turn 3) are neutral in round 1: both turns passed over.
    _db, run = campaign(tmp_path, "Germany", "Austria-Hungary")
    for _ in range(40):
        if run("pending").startswith("waiting for France"):
            break
        run("next")
    assert run("pending").startswith("waiting for France"), "turn 4, France's, is reached"
    rows = list(csv.DictReader(io.StringIO(run("stats", "--csv"))))
    assert sorted({(r["turn"], r["turn_nation"]) for r in rows}) == [("2", "Britain"), ("4", "France")]
    assert len(rows) == 2 * 4, "one row per nation per played turn"
    as_json = json.loads(run("stats", "--json"))
    assert sorted({(r["turn"], r["turn_nation"]) for r in as_json}) == [(2, "Britain"), (4, "France")]
    table = run("stats")
    assert re.findall(r"^│\s+(\d+\*?) │", table, re.MULTILINE) == ["2", "4*"], table


def test_f8_stats_of_a_campaign_just_created_with_turn_1_passed_over_lists_only_the_current_turn(
    tmp_path: Path,
) -> None:
    _db, run = campaign(tmp_path, "Germany")
    rows = list(csv.DictReader(io.StringIO(run("stats", "--csv"))))
    assert {(r["turn"], r["turn_nation"], r["complete"]) for r in rows} == {("2", "Britain", "no")}
