"""The campaign's events are built by `LeanEventType`, not one `dataclass(frozen=True)` each: they
must behave as the dataclasses did (fields in the same order, refused when a field is missing or
unknown, frozen, equal by fields) and round-trip through the store unchanged."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from domain.campaign import Campaign
from domain.campaign.events import Event
from tracker.service.application import Tracker
from tracker.storage.rows import plain_state


def event_classes() -> list[type[Event]]:
    return [
        v
        for n in dir(Campaign)
        if isinstance(v := getattr(Campaign, n), type) and issubclass(v, Event) and v is not Event
    ]


def dataclass_order(cls: type) -> tuple[str, ...]:
    """The field order `dataclasses` gives a class: its bases' fields from the most basic, then
    its own annotations (what the metaclass of eventsourcing made of each event before)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        if "__dataclass_fields__" in klass.__dict__:
            own = [f.name for f in dataclasses.fields(klass)]
        else:
            own = [n for n, kind in klass.__dict__.get("__annotations__", {}).items() if "ClassVar" not in str(kind)]
        names.extend(n for n in own if n not in names)
    return tuple(names)


def fields_of(cls: type[Event], **given: Any) -> dict[str, Any]:
    base = {
        "originator_id": uuid.uuid4(),
        "originator_version": 2,
        "timestamp": datetime(1914, 8, 4, tzinfo=UTC),
        "prev_hash": "p",
        "hash": "h",
        "action": 1,
    }
    return {n: given.get(n, base.get(n, n)) for n in cls.__event_fields__}


def test_every_event_has_the_fields_in_dataclass_order() -> None:
    classes = event_classes()
    assert len(classes) >= 45
    for cls in classes:
        assert cls.__event_fields__ == dataclass_order(cls), cls.__name__
    assert Campaign.Created.__event_fields__[:7] == (
        "originator_id",
        "originator_version",
        "timestamp",
        "originator_topic",
        "prev_hash",
        "hash",
        "action",
    )


def test_an_event_is_built_by_keyword_or_position_and_refuses_missing_or_unknown_fields() -> None:
    cls = Campaign.PhaseAdvanced
    kwargs = fields_of(cls)
    e = cls(**kwargs)
    assert list(vars(e)) == list(cls.__event_fields__)
    assert cls(*kwargs.values()) == e
    with pytest.raises(TypeError, match="missing"):
        cls(**{k: v for k, v in kwargs.items() if k != "phase"})
    with pytest.raises(TypeError, match="unexpected"):
        cls(**kwargs, colour="red")
    with pytest.raises(TypeError, match="two values"):
        cls(kwargs["originator_id"], **kwargs)
    with pytest.raises(TypeError, match="non-UUID"):
        cls(**{**kwargs, "originator_id": "not a uuid"})


def test_an_event_is_frozen_and_equal_by_its_fields() -> None:
    cls = Campaign.PhaseAdvanced
    kwargs = fields_of(cls)
    e = cls(**kwargs)
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.phase = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del e.phase
    assert e == cls(**kwargs) and hash(e) == hash(cls(**kwargs))
    assert e != cls(**{**kwargs, "phase": "other"})
    assert e != Campaign.TurnPassedOver(**fields_of(Campaign.TurnPassedOver))
    assert repr(e).startswith("Campaign.PhaseAdvanced(originator_id=UUID(")


def test_recorded_events_round_trip_through_the_store(tmp_path: Any) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("lean", "north-sea-1914", dice="auto", seed="00" * 32).id
        t.perform(cid, "next", {})
        stored = t.stored_events(cid)
        decoded = [t.decode(s) for s in stored]
        assert {"Created", "ActionAsked", "PhaseAdvanced"} <= {type(e).__name__ for e in decoded}
        for s, e in zip(stored, decoded, strict=True):
            again = t.app.mapper.to_stored_event(e)
            # The database keeps a state over COMPRESS_OVER bytes (the first event's) compressed.
            assert again.topic == s.topic and again.state == plain_state(s.state)
            assert t.decode(again) == e
