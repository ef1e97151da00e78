"""F8: the record tells a neutral nation's entry into the war (great-war-1914: the Ottoman Empire
enters in round 2, Italy in round 4, the United States in round 11). Each of its turns passed
over names the round it enters, and the start of that round records its entry (WarEntered),
before any turn of the round: from then on it is at war, in the turns of the nations before it
too. An entry an adjustment brought forward (AD1) is told by the adjustment alone.

A campaign recorded before the ruleset said so (`[record] entries_recorded`) keeps the record
it was refereed by ("neutral until its entry into the war", no entry event), so its log
verifies as recorded."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from domain.amended import AS_RECORDED_BEFORE
from domain.campaign import Campaign
from domain.dice import commitment, new_seed
from domain.rules.economy import Adjustment
from domain.ruleset import load_ruleset, read_toml
from projections.summary import summary
from tests.test_entry_f8 import RULESET_DATA, WORLD, advance_to, new_world, play_until, recorded, run
from tests.test_pu2_f8_amended import imported
from tracker.cli.main import cli
from tracker.service.application import Tracker

TOLD = ("TurnPassedOver", "WarEntered")


def told(events: list[Any]) -> list[tuple[str, int, str, int | None]]:
    """The turns passed over and the entries, in order: (kind, round, nation, entry round)."""
    return [
        (type(e).__name__, e.round, e.nation, getattr(e, "enters", None)) for e in events if type(e).__name__ in TOLD
    ]


def to_germany(db: str, round_: int) -> None:
    """`next --to` Germany's research of the round; it stops at a gate left open (T4), and the
    turns from there are played step by step."""
    if CliRunner().invoke(cli, ["--db", db, "next", "--to", "research", "--nation", "Germany"]).exit_code:
        play_until(db, round_, "Germany")
    assert json.loads(run(db, "state", "--json"))["round"] == round_


def before_the_key() -> dict[str, Any]:
    data = copy.deepcopy(RULESET_DATA)
    del data["record"]["entries_recorded"]
    return data


def test_f8_a_turn_passed_over_names_the_round_its_nation_enters_the_war() -> None:
    c = new_world()
    assert c.ruleset.entries_recorded and c.ruleset_data["record"]["entries_recorded"] is True
    advance_to(c, "Germany", "research", 2)
    events = list(c.collect_events())
    passed = [e for e in events if type(e).__name__ == "TurnPassedOver"]
    assert [(e.nation, e.enters) for e in passed] == [("Ottoman Empire", 2), ("Italy", 4), ("United States", 11)]
    assert summary(passed[1]) == "round 1, Italy: turn passed over, neutral until it enters the war in round 4"


def test_f8_the_entry_is_recorded_at_the_start_of_its_round() -> None:
    c = new_world()
    advance_to(c, "Germany", "research", 2)
    events = list(c.collect_events())
    (entered,) = recorded_as(events, "WarEntered")
    assert (entered.round, entered.nation, entered.rule) == (2, "Ottoman Empire", "F8")
    assert summary(entered) == "round 2, Ottoman Empire: enters the war at its entry round"
    # After the last turn of round 1 (the United States' passed over), before round 2's first turn.
    at = events.index(entered)
    assert told(events[at - 1 : at]) == [("TurnPassedOver", 1, "United States", 11)]
    opened = events[at + 1]
    assert (type(opened).__name__, opened.round, opened.nation) == ("PhaseAdvanced", 2, "Germany")
    assert c.at_war("Ottoman Empire") and c.board().enemies("Germany", "Britain")
    # Its first turn opens with no second entry; Italy's turns go on being passed over until round 4.
    advance_to(c, "Germany", "research", 4)
    assert told(list(c.collect_events())) == [
        ("TurnPassedOver", 2, "Italy", 4),
        ("TurnPassedOver", 2, "United States", 11),
        ("TurnPassedOver", 3, "Italy", 4),
        ("TurnPassedOver", 3, "United States", 11),
        ("WarEntered", 4, "Italy", None),
    ]


def recorded_as(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if type(e).__name__ == kind]


def test_f8_an_entry_brought_forward_by_ad1_is_told_by_the_adjustment_alone() -> None:
    c = new_world()
    advance_to(c, "Germany", "research", 2)
    c.adjust(Adjustment(enter=("Italy",)), "the Treaty of London is signed early")
    (adjusted,) = recorded(c, "Adjusted")
    assert "Italy enters the war now (F8)" in summary(adjusted)
    # One line says Italy is at war from then: its turns are no longer passed over, and its
    # entry round records no second entry.
    advance_to(c, "Germany", "research", 3)
    advance_to(c, "Germany", "research", 4)
    assert [t for t in told(list(c.collect_events())) if t[2] == "Italy"] == []


def test_f8_a_first_nation_entering_later_is_recorded_entering_before_its_first_turn() -> None:
    scenario = copy.deepcopy(WORLD)
    scenario["nations"]["Germany"]["entry_round"] = 2
    c = Campaign.create(uuid.uuid4(), "late", scenario, copy.deepcopy(RULESET_DATA), "auto", commitment(new_seed()))
    events = list(c.collect_events())
    assert [type(e).__name__ for e in events] == ["Created", "TurnPassedOver", "PhaseAdvanced"]
    assert events[1].enters == 2
    advance_to(c, "Germany", "research", 2)
    events = list(c.collect_events())
    # Both nations whose entry round it is, in turn order, before the round's first turn.
    assert told(events)[-3:] == [
        ("TurnPassedOver", 1, "United States", 11),
        ("WarEntered", 2, "Germany", None),
        ("WarEntered", 2, "Ottoman Empire", None),
    ]
    assert (type(events[-1]).__name__, events[-1].nation) == ("PhaseAdvanced", "Germany")


def test_f8_a_campaign_recorded_before_the_key_keeps_its_record() -> None:
    assert AS_RECORDED_BEFORE["entries_recorded"] is False
    c = Campaign.create(uuid.uuid4(), "old", copy.deepcopy(WORLD), before_the_key(), "auto", commitment(new_seed()))
    assert not c.ruleset.entries_recorded
    advance_to(c, "Germany", "research", 2)
    events = list(c.collect_events())
    assert told(events) == [
        ("TurnPassedOver", 1, "Ottoman Empire", None),
        ("TurnPassedOver", 1, "Italy", None),
        ("TurnPassedOver", 1, "United States", None),
    ]
    passed = recorded_as(events, "TurnPassedOver")[0]
    assert summary(passed) == "round 1, Ottoman Empire: turn passed over, neutral until its entry into the war"


def test_f8_a_log_recorded_before_the_key_imports_verifies_and_plays_on(tmp_path: Path) -> None:
    """The fixture is the export of a great-war-1914 campaign played by the tracker before the
    key, to round 2's Ottoman purchase: its turns passed over named no entry round (events of
    the first version of TurnPassedOver, with no `enters`), and no entry was recorded."""
    db = imported(tmp_path, "turns-passed-over-untold.jsonl.gz")
    assert "Re-refereed" in run(db, "verify")
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert not c.ruleset.entries_recorded and "entries_recorded" not in c.ruleset_data["record"]
    records = json.loads(run(db, "log", "--json"))
    assert [r["kind"] for r in records].count("WarEntered") == 0
    lines = [r["summary"] for r in records if r["kind"] == "TurnPassedOver"]
    # The reading's own marker of a field an old event lacked is no recorded field.
    first = next(r["data"] for r in records if r["kind"] == "TurnPassedOver")
    assert sorted(first) == ["action", "enters", "hash", "nation", "prev_hash", "round", "rule"]
    assert lines == [
        f"round 1, {n}: turn passed over, neutral until its entry into the war"
        for n in ("Ottoman Empire", "Italy", "United States")
    ]
    # Played on by this release: the record as it was refereed, and it verifies.
    to_germany(db, 3)
    records = json.loads(run(db, "log", "--json"))
    later = [r["summary"] for r in records if r["kind"] in TOLD and r["data"]["round"] == 2]
    assert later == [
        "round 2, Italy: turn passed over, neutral until its entry into the war",
        "round 2, United States: turn passed over, neutral until its entry into the war",
    ]
    assert run(db, "verify").startswith("OK:")


def test_f8_a_new_campaign_verifies_after_its_entries_with_auto_dice(tmp_path: Path) -> None:
    """T1, F8 through the CLI: `next` to round 4, past the Ottoman Empire's entry (round 2) and
    Italy's (round 4); `tracker log` tells both, `verify` re-referees every action to the events
    logged, and an exported copy imports and verifies."""
    db = str(tmp_path / "world.db")
    run(db, "new", "world", "--scenario", "great-war-1914", "--dice", "auto")
    for round_ in (2, 3, 4):
        run(db, "next")
        to_germany(db, round_)
    log = run(db, "log")
    assert "[F8]   round 1, Italy: turn passed over, neutral until it enters the war in round 4" in log
    assert "[F8]   round 2, Ottoman Empire: enters the war at its entry round" in log
    assert "[F8]   round 4, Italy: enters the war at its entry round" in log
    assert json.loads(run(db, "log", "--kind", "WarEntered", "--nation", "Italy", "--json"))[0]["rule"] == "F8"
    verified = run(db, "verify")
    assert verified.startswith("OK:") and "Re-refereed" in verified
    exported = str(tmp_path / "world.jsonl")
    run(db, "export", exported)
    other = str(tmp_path / "other.db")
    run(other, "import", exported)
    assert run(other, "verify").startswith("OK:")


def test_f8_a_ruleset_file_without_the_key_records_entries(tmp_path: Path) -> None:
    """A house ruleset written before the key plays it as it stands, and a new campaign records
    the key so."""
    source = tmp_path / "house.toml"
    text = Path(__file__).parent.parent.joinpath("domain", "data", "rulesets", "twtea-3e.toml").read_text()
    source.write_text(text.replace("entries_recorded = true\n", ""))
    assert "entries_recorded" not in read_toml(source)["record"]
    ruleset, data = load_ruleset(str(source))
    assert ruleset.entries_recorded and data["record"]["entries_recorded"] is True
