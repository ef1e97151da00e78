"""Stored event topics never change: a log recorded when the Campaign aggregate was one module
(`domain/campaign.py`, every event nested in its class) imports, verifies and loads from its
snapshots, and events recorded now carry the same topics (`domain.campaign:Campaign.<Name>`).

The fixtures were made by tracker 0.1.0 with that layout: the demo campaign (162 events), its
export, and its database with snapshots at events 150 (a naval battle in progress) and 162.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from eventsourcing.persistence import Mapper, MapperDeserialisationError, StoredEvent
from eventsourcing.utils import get_topic, resolve_topic

from domain.campaign import Campaign
from domain.dice import DiceSource
from tests.support import advance
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.storage.mapper import TrackerMapper
from tracker.storage.recorder import CampaignSnapshot

FIXTURES = Path(__file__).parent / "fixtures"
EXPORT = FIXTURES / "demo-one-module.jsonl.gz"
DATABASE = FIXTURES / "demo-one-module.db.gz"
HEAD = "162:7bee8be3b520ece1676e239fd57a11fd176690c598527ef6724f053125915b8d"


def unpack(source: Path, target: Path) -> Path:
    target.write_bytes(gzip.decompress(source.read_bytes()))
    return target


def invoke(db: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def event_classes() -> dict[str, type[Campaign.Event]]:
    return {
        name: value
        for name, value in vars(Campaign).items()
        if isinstance(value, type) and issubclass(value, Campaign.Event)
    }


def test_every_event_class_keeps_its_topic_and_the_topic_finds_it() -> None:
    classes = event_classes()
    assert len(classes) >= 47
    for name, cls in classes.items():
        topic = get_topic(cls)
        assert topic == f"domain.campaign:Campaign.{name}"
        assert resolve_topic(topic) is cls


def test_every_topic_in_the_old_export_resolves_to_the_class_of_its_kind(tmp_path: Path) -> None:
    lines = unpack(EXPORT, tmp_path / "old.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines[1:]]
    assert len(events) == 162
    for e in events:
        assert e["topic"] == f"domain.campaign:Campaign.{e['kind']}"
        assert resolve_topic(e["topic"]) is getattr(Campaign, e["kind"])


def test_the_old_export_imports_verifies_and_exports_again_unchanged(tmp_path: Path) -> None:
    old = unpack(EXPORT, tmp_path / "old.jsonl")
    db = tmp_path / "imported.db"
    imported = invoke(db, "import", str(old), "--json")
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.output)["last_hash"] == HEAD.split(":")[1]
    verified = invoke(db, "verify", "--head", HEAD)
    assert verified.exit_code == 0 and verified.output.startswith("OK:"), verified.output
    again = tmp_path / "again.jsonl"
    assert invoke(db, "export", str(again)).exit_code == 0
    # Every event line (topic, fields, hashes) is written exactly as it was read.
    assert again.read_text(encoding="utf-8").splitlines()[1:] == old.read_text(encoding="utf-8").splitlines()[1:]


def test_events_recorded_now_carry_the_old_topics(tmp_path: Path) -> None:
    old = unpack(EXPORT, tmp_path / "old.jsonl")
    old_topics = {json.loads(line)["topic"] for line in old.read_text(encoding="utf-8").splitlines()[1:]}
    db = tmp_path / "imported.db"
    assert invoke(db, "import", str(old)).exit_code == 0
    with Tracker(str(db)) as t:
        cid = t.campaign_id(None)

        def play_on(c: Campaign, _dice: DiceSource) -> None:
            advance(c)  # naval_combat ends, and land_combat
            advance(c)

        t.execute(cid, play_on)
        new = [s for s in t.stored_events(cid) if s.originator_version > 162]
        assert new
        for stored in new:
            kind = type(t.decode(stored)).__name__
            assert stored.topic == f"domain.campaign:Campaign.{kind}"
        assert {s.topic for s in new} == {"domain.campaign:Campaign.PhaseAdvanced"} <= old_topics
    assert invoke(db, "verify").exit_code == 0


def test_a_campaign_snapshot_keeps_the_topic_databases_hold() -> None:
    # Every stored snapshot names its class by this topic: moving the class to another module
    # would leave the snapshots of every existing database unreadable.
    assert get_topic(CampaignSnapshot) == "tracker.storage.recorder:CampaignSnapshot"
    assert resolve_topic("tracker.storage.recorder:CampaignSnapshot") is CampaignSnapshot


def test_snapshots_stored_before_load_the_same_state_as_the_log(tmp_path: Path) -> None:
    db = unpack(DATABASE, tmp_path / "old.db")
    with Tracker(str(db)) as t:
        cid = t.campaign_id(None)
        assert t.app.snapshots is not None
        assert [s.originator_version for s in t.app.snapshots.get(cid)] == [150, 162]
        replayed: Any = None
        states: dict[int, dict[str, Any]] = {}
        for event in t.events(cid):
            replayed = event.mutate(replayed)
            states[replayed.version] = copy.deepcopy(vars(replayed)) | {"_pending_events": []}
        for version in (155, 162):
            loaded = t.load(cid, version)
            assert dict(vars(loaded)) | {"_pending_events": []} == states[version]
        assert t.load(cid, 155).battles, "a battle is in progress after the snapshot at 150"
    verified = invoke(db, "verify")
    assert verified.exit_code == 0 and "2 snapshots match the log" in verified.output, verified.output


def test_the_tracker_mapper_decodes_every_stored_event_and_snapshot_as_eventsourcing_does(tmp_path: Path) -> None:
    db = unpack(DATABASE, tmp_path / "old.db")
    with Tracker(str(db)) as t:
        cid = t.campaign_id(None)
        mapper = t.app.mapper
        assert isinstance(mapper, TrackerMapper)
        theirs = Mapper(transcoder=mapper.transcoder)
        stored = t.recorder.select_events(cid)
        assert t.app.snapshots is not None
        stored += t.app.snapshots.recorder.select_events(cid)
        for s in stored:
            mine, reference = mapper.to_domain_event(s), theirs.to_domain_event(s)
            assert type(mine) is type(reference) and vars(mine) == vars(reference), s.originator_version
        # States the fast path leaves to eventsourcing's: a second typed value, an escape that
        # could spell one, a class version; and one that is not JSON at all.
        phase = next(s for s in stored if s.topic.endswith(".PhaseAdvanced"))
        data = json.loads(phase.state)
        for changed in (
            {**data, "phase": {"_type_": "uuid_hex", "_data_": cid.hex}},
            {**data, "phase": "\x01"},
            {**data, "class_version": 1},
        ):
            state = json.dumps(changed, separators=(",", ":")).encode()
            again = StoredEvent(
                originator_id=cid, originator_version=phase.originator_version, topic=phase.topic, state=state
            )
            assert vars(mapper.to_domain_event(again)) == vars(theirs.to_domain_event(again))
        broken = StoredEvent(originator_id=cid, originator_version=1, topic=phase.topic, state=phase.state[:-1])
        with pytest.raises(MapperDeserialisationError):
            mapper.to_domain_event(broken)
