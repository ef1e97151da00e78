"""What tracker/storage takes from inside eventsourcing and eventsourcing-sqlalchemy, beyond their
documented API (docs/storage.md lists each name, why the tracker uses it, and what breaks if it
changes): every such name is still there, with the signature and the layout relied on. An
upgrade of either library that moves one fails here, naming it, before anything subtler fails
elsewhere. CI runs this module and the storage tests against the newest releases too (.ci/run).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from eventsourcing.application import Application, ProcessingEvent, Repository
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import (
    DatetimeAsISO,
    EventStore,
    InfrastructureFactory,
    JSONTranscoder,
    Mapper,
    Notification,
    StoredEvent,
)
from eventsourcing.utils import Environment, strtobool
from eventsourcing_sqlalchemy.datastore import SQLAlchemyDatastore
from sqlalchemy.dialects import postgresql, sqlite

from tracker.storage import datastore
from tracker.storage.event_app import TrackerApplication
from tracker.storage.mapper import TrackerMapper
from tracker.storage.recorder import TrackerFactory, TrackerRecorder
from tracker.storage.rows import STAMPED, made

# (owner, name, the parameters the tracker calls or overrides it with), as docs/storage.md lists them.
SIGNATURES: list[tuple[Any, str, list[str]]] = [
    (Repository, "_reconstruct_aggregate", ["self", "aggregate_id", "version", "projector_func"]),
    (Application, "_record", ["self", "processing_event"]),
    (Application, "_take_snapshots", ["self", "processing_event"]),
    (Application, "_notify", ["self", "recordings"]),
    (Application, "take_snapshot", ["self", "aggregate_id", "version", "projector_func"]),
    (EventStore, "put", ["self", "domain_events", "kwargs"]),
    (Mapper, "__init__", ["self", "transcoder", "compressor", "cipher"]),
    (InfrastructureFactory, "mapper", ["self", "transcoder", "mapper_class"]),
    (InfrastructureFactory, "__init__", ["self", "env"]),
    (Snapshot, "take", ["aggregate"]),
    (SQLAlchemyDatastore, "define_record_class", ["cls_name", "table_name", "schema_name", "base_cls"]),
]  # fmt: skip


@pytest.mark.parametrize(("owner", "name", "parameters"), SIGNATURES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_each_name_the_storage_relies_on_is_there_with_its_signature(
    owner: Any, name: str, parameters: list[str]
) -> None:
    found = getattr(owner, name, None)
    assert found is not None, f"{owner.__module__}.{owner.__name__}.{name} is gone (docs/storage.md)"
    assert list(inspect.signature(found).parameters) == parameters, f"{owner.__name__}.{name} changed"


def calls_in(function: Any) -> list[str]:
    """The methods of `self` a function's source calls, in order."""
    return re.findall(r"self\.(\w+)\(", inspect.getsource(function))


def test_the_librarys_save_and_get_go_through_the_methods_the_tracker_overrides() -> None:
    # TrackerApplication.save repeats these steps for campaigns: a new step here would be skipped.
    assert calls_in(Application.save) == ["_record", "_take_snapshots", "_notify", "notify"]
    # `follows` (the write check) reaches the recorder through the saved keyword arguments.
    assert "**processing_event.saved_kwargs" in inspect.getsource(Application._record)
    assert "**kwargs" in inspect.getsource(EventStore.put).split("insert_events(", 1)[1].split(")", 1)[0]
    # CampaignRepository's loading (the lean snapshots) is reached by every get.
    assert calls_in(Repository.get).count("_reconstruct_aggregate") == 2
    made = ProcessingEvent[Any]()
    assert (made.events, made.aggregates, made.saved_kwargs, made.tracking) == ([], {}, {}, None)


def test_stored_events_and_notifications_are_plain_frozen_dataclasses_of_these_fields() -> None:
    assert [f.name for f in dataclasses.fields(StoredEvent)] == [
        "originator_id",
        "originator_version",
        "topic",
        "state",
    ]
    assert [f.name for f in dataclasses.fields(Notification)] == [
        "originator_id", "originator_version", "topic", "state", "id",
    ]  # fmt: skip
    # `made` sets an instance's __dict__ instead of calling __init__: no slots may stand in the way.
    for cls in (StoredEvent, Notification):
        assert all("__slots__" not in vars(c) for c in cls.__mro__ if c is not object), cls
    oid = uuid4()
    record = made(Notification, id=7, originator_id=oid, originator_version=1, topic="t", state=b"{}")
    assert record == Notification(id=7, originator_id=oid, originator_version=1, topic="t", state=b"{}")


def test_the_mapper_and_transcoder_hold_what_the_tracker_mapper_reads() -> None:
    transcoder = JSONTranscoder()
    transcoder.register(DatetimeAsISO())
    mapper = Mapper[Any](transcoder=transcoder)
    assert (mapper.transcoder, mapper.compressor, mapper.cipher) == (transcoder, None, None)
    assert transcoder.types[datetime].name == "datetime_iso"
    assert callable(transcoder.encoder.encode)
    # The stored form of an event state whose first field is its timestamp, which the tracker's
    # mapper writes and reads without a Python call per typed value.
    stamp = datetime(1914, 8, 4, 23, 0, tzinfo=UTC)
    encoded = transcoder.encode({"timestamp": stamp, "hash": "x"})
    assert encoded.startswith(STAMPED), encoded
    assert encoded == STAMPED + stamp.isoformat().encode() + b'"},"hash":"x"}'
    assert transcoder.decode(encoded) == {"timestamp": stamp, "hash": "x"}
    assert issubclass(TrackerMapper, Mapper)


def compiled(table: Any, dialect: Any) -> dict[str, Any]:
    """What a table is made of, as a database sees it."""
    return {
        "columns": [
            (c.name, c.type.compile(dialect=dialect), c.primary_key, c.nullable, bool(c.autoincrement is True))
            for c in table.columns
        ],
        "indexes": sorted((i.name, i.unique, tuple(c.name for c in i.columns)) for i in table.indexes),
    }


@pytest.mark.parametrize("for_snapshots", [False, True], ids=["events", "snapshots"])
def test_the_tables_the_tracker_reads_are_the_librarys_column_for_column(for_snapshots: bool) -> None:
    name = f"layout_check_{'snapshots' if for_snapshots else 'events'}"
    base = (
        SQLAlchemyDatastore.base_snapshot_record_cls
        if for_snapshots
        else SQLAlchemyDatastore.base_stored_event_record_cls
    )
    theirs = SQLAlchemyDatastore.define_record_class(
        cls_name=name.title().replace("_", ""), table_name=name, schema_name=None, base_cls=base
    ).__table__
    ours = datastore.event_table(name, None, for_snapshots)
    for dialect in (sqlite.dialect(), postgresql.dialect()):
        assert compiled(ours, dialect) == compiled(theirs, dialect), dialect.name


def test_the_tracker_names_its_tables_as_the_librarys_factory_does() -> None:
    from eventsourcing_sqlalchemy.factory import Factory

    env = {"SQLALCHEMY_URL": "sqlite:///:memory:", "CREATE_TABLE": "no"}
    theirs = Factory(Environment("Tracker", env))
    ours = TrackerFactory(Environment("Tracker", env))
    try:
        for purpose in ("events", "snapshots"):
            assert ours.aggregate_recorder(purpose).events_table_name == (
                theirs.aggregate_recorder(purpose).events_table_name  # type: ignore[attr-defined]
            )
        assert ours.application_recorder().events_table_name == (  # type: ignore[attr-defined]
            theirs.application_recorder().events_table_name  # type: ignore[attr-defined]
        )
    finally:
        ours.close()
        theirs.close()
    assert strtobool("yes") and not strtobool("no")


def test_sqlalchemy_errors_become_eventsourcings_in_the_librarys_order() -> None:
    import eventsourcing_sqlalchemy.datastore as theirs

    caught = re.findall(r"except sqlalchemy\.exc\.(\w+) as e:", inspect.getsource(theirs))
    ours = [sa.__name__ for sa, _ in datastore._ERRORS]
    assert caught[: len(ours)] == ours and caught[len(ours)] == "SQLAlchemyError", caught


def test_the_postgresql_channel_is_named_as_the_librarys_listeners_expect() -> None:
    # Read, not imported: eventsourcing's PostgreSQL module needs psycopg_pool, which the
    # tracker does not install.
    spec = importlib.util.find_spec("eventsourcing.postgres")
    assert spec is not None and spec.origin is not None, "eventsourcing.postgres is gone"
    source = Path(spec.origin).read_text()
    assert 'self.channel_name = self.events_table_name.replace(".", "_")' in source
    assert re.search(r'SQL\("LISTEN \{0\}"\)\.format\(Identifier\(self\._recorder\.channel_name\)\)', source)
    ours = TrackerRecorder(datastore.Datastore("sqlite:///:memory:"), events_table_name="s.tracker_events")
    assert ours.channel_name == "s_tracker_events"
    ours.datastore.close()


def test_the_tracker_implements_every_abstract_method_with_the_librarys_parameters() -> None:
    for ours, theirs in ((TrackerRecorder, TrackerRecorder.__mro__[1:]), (TrackerFactory, TrackerFactory.__mro__[1:])):
        assert not inspect.isabstract(ours), (ours, getattr(ours, "__abstractmethods__", None))
        for base in theirs:
            for name in getattr(base, "__abstractmethods__", ()):
                mine = [p for p in inspect.signature(getattr(ours, name)).parameters if p != "kwargs"]
                library = [p for p in inspect.signature(getattr(base, name)).parameters if p != "kwargs"]
                assert mine[: len(library)] == library, (ours.__name__, name, mine, library)
    assert TrackerApplication.construct_repository is not Application.construct_repository
