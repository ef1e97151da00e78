"""The tracker's event recorder (SQLAlchemy Core instead of ORM sessions) keeps the contract of
eventsourcing's application recorders: their own test cases, on SQLite and PostgreSQL."""

from __future__ import annotations

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
