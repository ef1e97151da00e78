"""`tracker verify`: the head it prints and checks, what it says about snapshots, views and
the dice seed on an honest campaign (the tampering it catches: tests/reliability/test_tamper.py)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner
from sqlalchemy import delete, select, update

from domain.chain import event_content, event_hash
from tests.support import advance as advance_passing
from tests.support import perform_advance
from tracker.cli.main import cli
from tracker.service.application import SNAPSHOT_INTERVAL, Tracker
from tracker.service.verify import verify_campaign


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.output


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "v.db"
    assert run(path, "new", "autumn", "--scenario", "north-sea-1914")[0] == 0
    assert run(path, "research", "advanced_submarine")[0] == 0
    assert run(path, "next")[0] == 0
    return path


def test_verify_prints_the_head_and_checks_it_later(db: Path) -> None:
    code, out = run(db, "verify")
    assert code == 0, out
    head = out.strip().splitlines()[-1].removeprefix("Head: ")
    seq, digest = head.split(":")
    report = json.loads(run(db, "verify", "--json")[1])
    assert report["head"] == {"seq": int(seq), "hash": digest} and report["ok"]
    assert run(db, "next")[0] == 0
    # The log grew: the head posted earlier is still in it, full or abbreviated.
    for posted in (head, f"{seq}:{digest[:16]}"):
        code, out = run(db, "verify", "--head", posted)
        assert code == 0 and f"Matches the posted head: event {seq}" in out, out


@pytest.mark.parametrize(("ahead", "missing"), [(1, "event {} was deleted"), (3, "events {}-{} were deleted")])
def test_a_posted_head_past_the_log_names_the_missing_events_in_good_grammar(
    db: Path, ahead: int, missing: str
) -> None:
    """One missing event read "event 8 were deleted"."""
    last = json.loads(run(db, "verify", "--json")[1])["head"]["seq"]
    code, out = run(db, "verify", "--head", f"{last + ahead}:{'a' * 16}")
    assert code == 1, out
    expected = missing.format(last + 1, last + ahead) if ahead > 1 else missing.format(last + 1)
    assert f"the posted head is event {last + ahead}: {expected}" in out, out


@pytest.mark.parametrize("bad", ["42", "x:abc", "3:xyz0123456789abcdef", "3:abc", f"{2**63}:{'a' * 64}"])
def test_a_malformed_head_is_bad_usage(db: Path, bad: str) -> None:
    code, out = run(db, "verify", "--head", bad)
    assert code == 2 and out.startswith("Error: --head") and out.count("\n") == 1, out


def test_export_and_reports_print_the_head(db: Path, tmp_path: Path) -> None:
    head = run(db, "verify")[1].strip().splitlines()[-1].removeprefix("Head: ")
    code, out = run(db, "export", str(tmp_path / "e.jsonl"))
    assert code == 0 and f"head {head}" in out, out
    code, out = run(db, "report", "--turn", "1")
    assert code == 0 and f"`{head}`" in out and "tracker verify --head" in out, out


def test_snapshots_and_views_of_an_honest_campaign_match(tmp_path: Path, unique_name: str) -> None:
    path = tmp_path / "long.db"
    with Tracker(str(path)) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="manual").id
        for _ in range(SNAPSHOT_INTERVAL * 2 + 10):
            t.execute(cid, lambda c, d: advance_passing(c))
        t.catch_up(cid)
    code, out = run(path, "verify", "--projections")
    assert code == 0, out
    assert "2 snapshots match the log" in out and "view rows match a rebuild of the log" in out


def test_an_imported_auto_campaign_verifies_without_its_seed(db: Path, tmp_path: Path) -> None:
    export = tmp_path / "e.jsonl"
    assert run(db, "export", str(export))[0] == 0
    other = tmp_path / "other.db"
    assert run(other, "import", str(export))[0] == 0
    code, out = run(other, "verify")
    assert code == 0 and "Imported campaign: its dice seed stayed with the exported copy" in out, out


# ----- times, and the registry's rows checked against the log -----


def _events_table(t: Tracker) -> Any:
    return t.app.recorder.events_record_cls.__table__  # type: ignore[attr-defined]


def _restamp(t: Tracker, cid: UUID, versions: list[int], delta: timedelta) -> None:
    """Move the times of events `versions` by `delta` and re-hash the chain from the first of
    them, as someone who knows the format would."""
    table = _events_table(t)

    def at(v: int) -> Any:
        return (table.c.originator_id == cid) & (table.c.originator_version == v)

    with t.engine.begin() as conn:
        for v in versions:
            state = json.loads(bytes(conn.execute(select(table.c.state).where(at(v))).scalar_one()))
            stamp = datetime.fromisoformat(state["timestamp"]["_data_"]) + delta
            state["timestamp"]["_data_"] = stamp.isoformat()
            conn.execute(update(table).where(at(v)).values(state=json.dumps(state).encode()))
    prev = t.events(cid)[versions[0] - 2].hash
    for event in t.events(cid)[versions[0] - 1 :]:
        v = event.originator_version
        digest = event_hash(prev, type(event).__name__, v, event.timestamp, event_content(dict(vars(event))))
        with t.engine.begin() as conn:
            state = json.loads(bytes(conn.execute(select(table.c.state).where(at(v))).scalar_one()))
            state.update(prev_hash=prev, hash=digest)
            conn.execute(update(table).where(at(v)).values(state=json.dumps(state).encode()))
        prev = digest


@pytest.fixture
def played(tmp_path: Path, unique_name: str) -> tuple[str, UUID]:
    """A manual-dice campaign of a few actions, recorded without its views being read."""
    path = str(tmp_path / "played.db")
    with Tracker(path) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="manual").id
        for _ in range(3):
            perform_advance(t, cid)
    return path, cid


def _last_action(t: Tracker, cid: UUID) -> list[int]:
    events = t.events(cid)
    return [e.originator_version for e in events if e.action == events[-1].action]


def test_an_action_stamped_before_the_one_before_it_is_noted_not_failed(played: tuple[str, UUID]) -> None:
    """Across actions the stamps come from whichever machine recorded them (PBEM copies,
    server processes): a clock behind another's is noted, not taken for an edit."""
    path, cid = played
    with Tracker(path) as t:
        action = _last_action(t, cid)
        _restamp(t, cid, action, timedelta(hours=-1))
        report = verify_campaign(t, cid)
    assert report.ok, report.problem
    assert report.stamped_back == [action[0]]
    assert any(f"the first event {action[0]}: recorded on machines whose clocks disagree" in n for n in report.notes)


def test_an_action_stamped_after_its_own_events_fails(played: tuple[str, UUID]) -> None:
    path, cid = played
    with Tracker(path) as t:
        asked = _last_action(t, cid)[0]
        _restamp(t, cid, [asked], timedelta(hours=1))
        report = verify_campaign(t, cid)
    assert report.bad_version == asked
    assert f"event {asked} (ActionAsked) is stamped" in str(report.problem)
    assert f"after event {asked + 1}" in str(report.problem) and "of the same action" in str(report.problem)


def _drop_seeds(t: Tracker, cid: UUID) -> None:
    from tracker.storage.store import seeds_table

    with t.engine.begin() as conn:
        conn.execute(delete(seeds_table).where(seeds_table.c.campaign_id == str(cid)))


def test_a_campaign_created_through_a_server_verifies_without_its_seed(tmp_path: Path, unique_name: str) -> None:
    """Its Created event names its creator (PL1): the log itself says its seeds are kept in a
    server's key store (D5), whatever tracker_served holds."""
    with Tracker(str(tmp_path / "league.db")) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="auto", created_by="referee").id
        _drop_seeds(t, cid)
        report = verify_campaign(t, cid)
    assert report.ok, report.problem
    assert any(n.startswith("Served campaign (event 1 was recorded through a league server)") for n in report.notes)


def test_an_action_asked_through_a_server_shows_the_seed_is_kept_there(tmp_path: Path, unique_name: str) -> None:
    with Tracker(str(tmp_path / "served.db")) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="auto").id
        perform_advance(t, cid)
        asked = t.stored_events(cid)[-1].originator_version + 1
        t.perform(cid, "next", {}, player="Anna")
        _drop_seeds(t, cid)
        report = verify_campaign(t, cid)
    assert report.ok, report.problem
    assert any(f"Served campaign (event {asked} was recorded" in n for n in report.notes)


def _old_import_marks(t: Tracker) -> None:
    """The import marks table as trackers before the name and head made it."""
    with t.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE tracker_imported RENAME TO newer")
        conn.exec_driver_sql(
            "CREATE TABLE tracker_imported (campaign_id VARCHAR(36) PRIMARY KEY, imported_at DATETIME)"
        )
        conn.exec_driver_sql("INSERT INTO tracker_imported SELECT campaign_id, imported_at FROM newer")
        conn.exec_driver_sql("DROP TABLE newer")


def test_import_marks_name_their_head_and_those_of_an_earlier_tracker_still_verify(db: Path, tmp_path: Path) -> None:
    export = tmp_path / "e.jsonl"
    assert run(db, "export", str(export))[0] == 0
    other = tmp_path / "other.db"
    assert run(other, "import", str(export), "--as", "copy")[0] == 0
    head = run(db, "verify", "--json")[1]
    with Tracker(str(other)) as t:
        cid = t.campaign_id("copy")
        mark = t.registry.import_mark(str(cid))
        assert mark is not None and (mark.name, mark.head_seq, mark.head_hash) == (
            "copy",
            json.loads(head)["head"]["seq"],
            json.loads(head)["head"]["hash"],
        )
        _old_import_marks(t)
    # Read as they are (verify writes nothing), then upgraded by the next import.
    code, out = run(other, "--campaign", "copy", "verify")
    assert code == 0 and "Imported campaign" in out and "the name given to its import" in out, out
    assert run(other, "import", str(export), "--as", "second")[0] == 0
    with Tracker(str(other)) as t:
        old = t.registry.import_mark(str(t.campaign_id("copy")))
        assert old is not None and old.legacy and old.name == "copy"
    for name in ("copy", "second"):
        code, out = run(other, "--campaign", name, "verify")
        assert code == 0 and "Imported campaign" in out, out


def test_views_written_with_an_earlier_releases_words_still_verify(tmp_path: Path) -> None:
    """An upgrade that words an event's summary otherwise does not make `verify` call the views
    edited: only who asked an action is compared (a forged player is still caught)."""

    from projections.schema import event_index

    db = str(tmp_path / "c.db")
    runner = CliRunner()
    assert (
        runner.invoke(cli, ["--db", db, "new", "c", "--scenario", "north-sea-1914", "--dice", "manual"]).exit_code == 0
    )
    assert runner.invoke(cli, ["--db", db, "next"]).exit_code == 0
    assert runner.invoke(cli, ["--db", db, "log"]).exit_code == 0  # the views read the log
    with Tracker(db) as t, t.engine.begin() as conn:
        conn.execute(update(event_index).where(event_index.c.kind == "PhaseAdvanced").values(summary="older words"))
    done = runner.invoke(cli, ["--db", db, "verify"])
    assert done.exit_code == 0, done.output
    with Tracker(db) as t, t.engine.begin() as conn:
        conn.execute(
            update(event_index).where(event_index.c.kind == "ActionAsked").values(summary="asked by mallory: next")
        )
    done = runner.invoke(cli, ["--db", db, "verify"])
    assert done.exit_code == 1 and "the event index (tracker_event_index)" in done.output
