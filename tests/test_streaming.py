"""Whole-log commands read the log a page at a time: the page iterator of the event store, and
`verify`, `export` and `report --all` giving what they gave when they read the log whole,
whatever the page size, with each stored event hashed once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner
from sqlalchemy import update

import domain.chain
import tracker.service.verify as verify_module
from tests.support import perform_advance
from tracker.cli.main import cli
from tracker.interchange import transfer
from tracker.reports import report as report_module
from tracker.service.application import Tracker
from tracker.service.verify import verify_campaign
from tracker.storage import recorder as recorder_module


@pytest.fixture
def played(db_url: str, unique_name: str) -> Iterator[tuple[Tracker, UUID]]:
    """A campaign of a few dozen events with an undo and a redo in it, on SQLite and PostgreSQL."""
    with Tracker(db_url) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="auto").id
        t.perform(cid, "research", {"technology": "advanced_submarine"})
        t.undo(cid, override=True, reason="misclick", agreed_by=["Britain"])
        t.redo(cid)
        while t.load(cid).nation == "Germany":
            perform_advance(t, cid)
        t.perform(cid, "research", {"technology": "advanced asw", "nation": "GB"})
        t.catch_up(cid)
        yield t, cid


def small_pages(monkeypatch: pytest.MonkeyPatch, size: int = 7) -> None:
    monkeypatch.setattr(recorder_module, "PAGE_SIZE", size)


def test_the_page_iterator_yields_every_event_once_in_order(played: tuple[Tracker, UUID]) -> None:
    t, cid = played
    whole = t.recorder.select_events(cid)
    assert len(whole) > 20
    pages = list(t.recorder.event_pages(cid, page=7))
    assert all(len(p) == 7 for p in pages[:-1]) and 1 <= len(pages[-1]) <= 7
    streamed = [s for p in pages for s in p]
    assert [(s.originator_id, s.originator_version, s.topic, s.state) for s in streamed] == [
        (s.originator_id, s.originator_version, s.topic, s.state) for s in whole
    ]
    # Bounds, as select_events takes them.
    part = [s.originator_version for p in t.recorder.event_pages(cid, gt=3, lte=17, page=4) for s in p]
    assert part == list(range(4, 18))


def test_the_page_iterator_on_an_in_memory_database_reads_page_by_page(unique_name: str) -> None:
    with Tracker("sqlite:///:memory:") as t:
        cid = t.create(unique_name, "north-sea-1914", dice="auto").id
        for _ in range(6):
            perform_advance(t, cid)
        whole = [s.originator_version for s in t.recorder.select_events(cid)]
        pages = t.recorder.event_pages(cid, page=2)
        first = next(pages)
        # The database stays usable between pages (one connection shared under a lock).
        perform_advance(t, cid)
        rest = [s.originator_version for p in pages for s in p]
        assert [s.originator_version for s in first] + rest[: len(whole) - 2] == whole


def test_verify_streamed_in_small_pages_says_what_it_says_in_one(
    played: tuple[Tracker, UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    t, cid = played
    whole = verify_campaign(t, cid, projections=True).as_json()
    assert whole["ok"] and whole["actions_refereed"] > 0
    small_pages(monkeypatch)
    assert verify_campaign(t, cid, projections=True).as_json() == whole


def test_verify_hashes_each_stored_event_once(played: tuple[Tracker, UUID], monkeypatch: pytest.MonkeyPatch) -> None:
    t, cid = played
    calls = [0]
    real = domain.chain.chain_hash

    def counted(*args: Any) -> str:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(domain.chain, "chain_hash", counted)
    monkeypatch.setattr(verify_module, "chain_hash", counted)
    report = verify_campaign(t, cid)
    assert report.ok and report.actions_refereed > 0
    assert calls[0] == report.events


def test_an_edited_event_in_a_later_page_is_caught(
    played: tuple[Tracker, UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    t, cid = played
    small_pages(monkeypatch)
    victim = t.recorder.select_events(cid, gt=9, lte=10)[0]  # the second page's third event
    state = json.loads(victim.state)
    state["action"] = state.get("action", 0) + 1000
    table = t.recorder.table
    with t.engine.begin() as conn:
        conn.execute(
            update(table)
            .where(table.c.originator_id == cid, table.c.originator_version == 10)
            .values(state=json.dumps(state).encode())
        )
    report = verify_campaign(t, cid)
    assert not report.ok and report.bad_version == 10 and "event 10" in str(report.problem)


def test_export_streamed_in_small_pages_and_through_a_file_is_the_same(
    played: tuple[Tracker, UUID], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    t, cid = played
    whole = transfer.export_campaign(t, cid)
    small_pages(monkeypatch)
    monkeypatch.setattr(transfer, "_SPOOL_BYTES", 1000)  # the lines go to a temporary file
    streamed = transfer.export_campaign(t, cid)
    assert streamed.body._rolled  # noqa: SLF001 - the spooled file did go to disk

    def without_time(text: str) -> list[Any]:
        lines = [json.loads(line) for line in text.splitlines()]
        lines[0].pop("exported_at")
        return lines

    assert without_time(b"".join(streamed.chunks(size=100)).decode()) == without_time(whole.text)
    assert streamed.text.splitlines()[1:] == whole.text.splitlines()[1:]
    assert (streamed.events, streamed.head_seq, streamed.last_hash) == (whole.events, whole.head_seq, whole.last_hash)
    # What it wrote imports.
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"".join(streamed.chunks()))
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "other.db"), "import", str(path), "--as", "copy"])
    assert result.exit_code == 0, result.output


def test_report_all_read_turn_by_turn_is_the_report_of_all_records_read_at_once(
    played: tuple[Tracker, UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    t, cid = played
    streamed = report_module.build_report(t, cid, None, "md")
    real = report_module._turn_records  # noqa: SLF001 - compared with one read of every record
    everything: dict[str, list[dict[str, Any]]] = {}

    def all_at_once(t_: Tracker, cid_: UUID, v: Any, ctx: Any, turn: int | None) -> list[dict[str, Any]]:
        if "all" not in everything:
            everything["all"] = real(t_, cid_, v, ctx, None)
        return [r for r in everything["all"] if r["turn"] == turn]

    monkeypatch.setattr(report_module, "_turn_records", all_at_once)
    at_once = report_module.build_report(t, cid, None, "md")
    assert len(streamed["turns"]) > 1
    assert report_module.render(streamed, "md") == report_module.render(at_once, "md")
    assert report_module.render_json(streamed) == report_module.render_json(at_once)
