"""The one-line summaries `log`, `explain` and the reports print, as the event index stores
them: agreement of verb and count, and NC2's one escort for each submarine; views stored
with an earlier wording are rebuilt when the database is opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from projections import schema as projection_schema
from projections.summary import summary_of_kind
from tracker.service.application import Tracker


def said(kind: str, **fields: object) -> str:
    return summary_of_kind(kind)(SimpleNamespace(**fields))


@pytest.mark.parametrize(
    ("found_by", "expected"),
    [
        ([], "battle 3: 0 searches succeed (nobody): 0 submarines found"),
        (["GB-DD1"], "battle 3: 1 search succeeds (GB-DD1): 1 submarine found"),
        (["GB-DD1", "GB-DD2"], "battle 3: 2 searches succeed (GB-DD1, GB-DD2): 2 submarines found"),
    ],
)
def test_sm3_searches_resolved_agree_with_their_count(found_by: list[str], expected: str) -> None:
    assert said("SearchesResolved", battle=3, found_by=found_by, failed=[], found=len(found_by)) == expected


@pytest.mark.parametrize(
    ("units", "expected"),
    [
        (["GB-BB1"], "battle 2: GB-BB1 has no target and rolls no die"),
        (["GB-BB1", "GB-BB2"], "battle 2: GB-BB1, GB-BB2 have no target and roll no die"),
    ],
)
def test_nc6_fire_withheld_agrees_with_its_units(units: list[str], expected: str) -> None:
    assert said("FireWithheld", battle=2, units=units) == expected


def test_nc2_opening_fire_says_how_many_of_the_escorts_present_cancel() -> None:
    text = said(
        "OpeningFire",
        battle=1,
        nation="Germany",
        firing=["DE-SS2"],
        cancelled=["DE-SS1"],
        escorts=["GB-DD1", "GB-DD2", "GB-CA1"],
    )
    assert text == (
        "battle 1: opening fire for DE-SS2 of Germany; cancelled for DE-SS1 by 1 of the 3 escorts present "
        "(GB-CA1, GB-DD1, GB-DD2) (NC2: one escort for each submarine)"
    )
    one_each = said("OpeningFire", battle=1, nation="Germany", firing=[], cancelled=["DE-SS1"], escorts=["GB-DD1"])
    assert one_each.endswith("cancelled for DE-SS1 by GB-DD1 (NC2: one escort for each submarine)")


def test_views_of_an_earlier_schema_are_rebuilt_with_this_wording(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Tracker(str(db)) as t:
        cid = t.create("old", "north-sea-1914").id
        t.perform(cid, "adjust", {"reason": "a raid", "owner": ["Flanders=France"]})
        t.catch_up()
    with sqlite3.connect(db) as conn:
        # As a release before this wording left them: an older schema, an older text.
        conn.execute("UPDATE tracker_projection_tracking SET schema = ?", (projection_schema.SCHEMA - 1,))
        changed = conn.execute("UPDATE tracker_event_index SET summary = 'old words'").rowcount
        assert changed > 0
    with Tracker(str(db)) as t:
        t.catch_up()
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT schema FROM tracker_projection_tracking").fetchone() == (
                projection_schema.SCHEMA,
            )
            summaries = [r[0] for r in conn.execute("SELECT summary FROM tracker_event_index")]
        assert summaries and "old words" not in summaries
        with t.views(cid) as v:
            assert t.owners_at(v, t.load(cid).version)["Flanders"] == "France"
