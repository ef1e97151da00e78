"""The tracker's event recorder (SQLAlchemy Core instead of ORM sessions) keeps the contract of
eventsourcing's application recorders: their own test cases, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.tests.persistence import ApplicationRecorderTestCase
from eventsourcing_sqlalchemy.datastore import SQLAlchemyDatastore

from tracker.storage.recorder import TrackerRecorder


class _Base(ApplicationRecorderTestCase[TrackerRecorder]):
    __test__ = False
    url = ""

    def create_recorder(self) -> TrackerRecorder:
        datastore = SQLAlchemyDatastore(url=self.url)
        table = f"events_{uuid.uuid4().hex[:8]}"
        recorder = TrackerRecorder(datastore, events_table_name=table)
        recorder.create_table()
        self.datastores.append(datastore)
        return recorder

    def setUp(self) -> None:
        self.datastores: list[Any] = []

    def tearDown(self) -> None:
        for datastore in self.datastores:
            if datastore.engine is not None:
                datastore.engine.dispose()

    # Timings only print; the suite never asserts on time.
    def test_performance(self) -> None:
        pytest.skip("timings are for benchmarks, not tests")

    def test_concurrent_throughput(self) -> None:
        pytest.skip("timings are for benchmarks, not tests")


class TestTrackerRecorderOnSQLite(_Base):
    __test__ = True

    @pytest.fixture(autouse=True)
    def _sqlite(self, tmp_path: Path) -> None:
        self.url = f"sqlite:///{tmp_path / 'events.db'}"


@pytest.mark.postgres
class TestTrackerRecorderOnPostgreSQL(_Base):
    __test__ = True

    @pytest.fixture(autouse=True)
    def _postgres(self, pg_url: str) -> None:
        self.url = pg_url


# ----- what one action sends to SQLite -----


def _advance(c: Any, _d: Any) -> None:
    """`next` as the command line records it: what was asked, then the phase ended."""
    from tests.support import advance

    c.ask("next", {}, c.version)
    advance(c)


def test_an_action_is_written_with_one_insert_and_one_check_in_one_transaction(tmp_path: Path) -> None:
    """An action of several events: one multi-row INSERT of its events and one query for both
    write checks (the event it follows, the projections' position), between BEGIN and COMMIT;
    nothing it just wrote is read back."""
    from sqlalchemy import event

    from tracker.service.application import Tracker

    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("statements", "north-sea-1914").id
        t.execute(cid, _advance)
        sent: list[str] = []
        event.listen(t.engine, "connect", lambda conn, _record: conn.set_trace_callback(sent.append))
        t.engine.dispose()  # new connections, traced
        before = t.load(cid).version
        t.execute(cid, _advance)
        added = t.load(cid).version - before
    assert added >= 2, "the action records several events"
    start = sent.index("BEGIN ")
    write = sent[start : sent.index("COMMIT", start) + 1]
    assert [s.split()[0] for s in write] == ["BEGIN", "INSERT", "SELECT", "COMMIT"], write
    assert write[1].count("(x'") == added  # every event in the one statement
    assert "SELECT id" not in write[2] and "(SELECT state FROM tracker_events" in write[2]


def test_a_long_write_takes_consecutive_ids_across_statements(tmp_path: Path) -> None:
    """More events than one statement holds (an import, a long save): the ids returned are the
    ids stored, in order, and the check of the event followed still applies."""
    from eventsourcing.persistence import StoredEvent

    from tracker.storage.recorder import LogDamaged, StaleCopy

    datastore = SQLAlchemyDatastore(url=f"sqlite:///{tmp_path / 'events.db'}")
    try:
        recorder = TrackerRecorder(datastore, events_table_name="events_long")
        recorder.create_table()
        cid = uuid.uuid4()

        def events(first: int, count: int) -> list[StoredEvent]:
            states = [json.dumps({"hash": f"h{v}"}).encode() for v in range(first, first + count)]
            return [StoredEvent(cid, first + i, "topic", state) for i, state in enumerate(states)]

        ids = recorder.insert_events(events(1, 3))
        assert ids == [1, 2, 3]
        ids = recorder.insert_events(events(4, 123), follows=(3, "h3"))
        assert ids == list(range(4, 127))
        stored = recorder.select_notifications(1, 1000)
        assert [(n.id, n.originator_version) for n in stored] == [(i, i) for i in range(1, 127)]
        with pytest.raises(StaleCopy):
            recorder.insert_events(events(127, 60), follows=(126, "not-its-hash"))
        with pytest.raises(LogDamaged, match="ends at event 126"):
            recorder.insert_events(events(200, 60), follows=(199, "h199"))
        assert recorder.max_notification_id() == 126, "nothing of a refused write is left"
    finally:
        assert datastore.engine is not None
        datastore.engine.dispose()


def test_the_mapper_writes_the_bytes_eventsourcing_writes(tmp_path: Path) -> None:
    """The tracker's mapper encodes each event (and a snapshot) to exactly what eventsourcing's
    own mapper gives, class versions included."""
    from eventsourcing.persistence import Mapper

    from tracker.service.application import Tracker
    from tracker.storage.event_app import COMPRESSED, uncompressed
    from tracker.storage.recorder import CampaignSnapshot

    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("bytes", "north-sea-1914").id
        for _ in range(6):
            t.execute(cid, _advance)
        mapper = t.app.mapper
        objects = [*t.events(cid), CampaignSnapshot.take(t.load(cid))]
        assert any(getattr(type(o), "class_version", 1) > 1 for o in objects)
        for o in objects:
            ours, theirs = mapper.to_stored_event(o), Mapper.to_stored_event(mapper, o)
            if isinstance(o, CampaignSnapshot):
                assert ours.state.startswith(COMPRESSED)
                ours = uncompressed(ours)  # a snapshot is stored compressed: the same bytes within
            assert (ours.originator_id, ours.originator_version, ours.topic, ours.state) == (
                theirs.originator_id,
                theirs.originator_version,
                theirs.topic,
                theirs.state,
            )
            if not isinstance(o, CampaignSnapshot):
                assert t.decode(ours).__dict__ == o.__dict__


# ----- the write check's reading of the hash an event recorded -----


def test_the_write_check_reads_each_stored_event_hash_as_its_json_says(tmp_path: Path) -> None:
    """`recorded_hash` reads the hash where the tracker writes it, without decoding the state:
    for every event of a played campaign (the first one compressed) it is what the decoded JSON
    says."""
    import sqlite3

    from tests.support import advance
    from tracker.service.application import Tracker
    from tracker.storage.rows import COMPRESSED, plain_state, recorded_hash

    db = tmp_path / "c.db"
    with Tracker(str(db)) as t:
        cid = t.create("hashes", "north-sea-1914").id
        for _ in range(12):
            t.execute(cid, lambda c, _d: advance(c))
    with sqlite3.connect(db) as conn:
        states = [bytes(s) for (s,) in conn.execute("SELECT state FROM tracker_events ORDER BY id")]
    assert states[0].startswith(COMPRESSED)
    assert len(states) > 12
    for state in states:
        assert recorded_hash(state) == json.loads(plain_state(state))["hash"]


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        # Not the tracker's layout: decoded (the last of two "hash" keys, as JSON reads it).
        (b'{"hash":"' + b"a" * 64 + b'","x":1,"hash":"' + b"b" * 64 + b'"}', "b" * 64),
        # The layout, with the hash edited to hold a quote or an escape: decoded.
        (
            b'{"timestamp":{"_type_":"datetime_iso","_data_":"2026-01-01T00:00:00+00:00"},"prev_hash":"'
            + b"0" * 64
            + b'","hash":"'
            + b"\\u0061" * 10
            + b"a" * 4
            + b'"}',
            "a" * 14,
        ),
        # A hash cut short: its closing quote is not where a hash's is, so it is decoded.
        (
            b'{"timestamp":{"_type_":"datetime_iso","_data_":"t"},"prev_hash":"' + b"0" * 64 + b'","hash":"abc"}',
            "abc",
        ),
        (b"[1, 2]", None),
        (b"not json", None),
        (b'{"hash": 5}', None),
    ],
)
def test_the_write_check_decodes_a_state_written_otherwise(state: bytes, expected: str | None) -> None:
    from tracker.storage.rows import recorded_hash

    assert recorded_hash(state) == expected
