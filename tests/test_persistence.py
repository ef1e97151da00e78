"""The event store on SQLite and PostgreSQL: a scenario played on each, tamper evidence, conflicts."""

from __future__ import annotations

import json
import multiprocessing
from functools import partial
from typing import Any

import pytest
from eventsourcing.persistence import RecordConflictError
from sqlalchemy.orm import Session

from domain.campaign import Campaign
from domain.dice import DiceSource, commitment
from domain.errors import DiceError, InputError, RuleViolation
from tests.support import advance as advance_passing
from tracker.service.application import Tracker
from tracker.service.verify import verify_events


def advance(c: Campaign, _d: DiceSource) -> None:
    advance_passing(c)


def research(nation: str, tech: str, c: Campaign, d: DiceSource) -> Any:
    return c.research(nation, tech, d)


def verify(t: Tracker, cid) -> Any:
    stored = t.stored_events(cid)
    return verify_events(((s.originator_version, partial(t.decode, s)) for s in stored), lambda e: t.seed_for(cid, e))


def play_opening(t: Tracker, cid) -> None:
    """Germany researches, moves U-boats through a hostile zone and ends its turn."""
    t.execute(cid, partial(research, "Germany", "advanced_submarine"))
    t.execute(cid, advance)
    t.execute(cid, advance)
    t.execute(cid, lambda c, d: c.move("Germany", ["DE-SS3", "DE-SS4"], ["Southern North Sea", "Dover Strait"]))
    # SM2, SM5: Britain lets them pass its destroyers unsearched; they go on to Dover.
    t.execute(cid, lambda c, d: c.intercept_search(c.battle_count, [], d))
    t.execute(cid, lambda c, d: c.intercept_continue(c.battle_count, None))
    while t.load(cid).nation == "Germany":
        t.execute(cid, advance)


def rows(t: Tracker, cid):
    cls = t.app.recorder.events_record_cls  # type: ignore[attr-defined]
    session = Session(t.app.factory.datastore.engine)  # type: ignore[attr-defined]
    return cls, session


def edit_row(t: Tracker, cid, version: int, change) -> None:
    cls, session = rows(t, cid)
    with session:
        row = session.query(cls).filter(cls.originator_id == cid, cls.originator_version == version).one()
        state = json.loads(bytes(row.state))
        change(state)
        row.state = json.dumps(state).encode()
        session.commit()


def test_scenario_plays_the_same_and_verifies(tracker: Tracker, unique_name: str) -> None:
    campaign = tracker.create(unique_name, "north-sea-1914", dice="auto")
    cid = campaign.id
    play_opening(tracker, cid)
    c = tracker.load(cid)
    assert (c.round, c.nation, c.phase) == (1, "Britain", "research")
    assert c.units["DE-SS3"]["at"] == "Dover Strait"
    assert c.balances["Germany"] == 30 - 10 + 3 + 12  # TE1 cost, then F6: NTR 3 + income 12
    kinds = [type(e).__name__ for e in tracker.events(cid)]
    assert kinds[:3] == ["Created", "ResearchPaid", "DiceRolled"]
    assert "ResourcesCollected" in kinds
    report = verify(tracker, cid)
    assert report.ok, report.problem
    assert report.rolls_checked == 1


def test_rk2_refused_action_appends_nothing(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    before = len(tracker.stored_events(cid))
    with pytest.raises(RuleViolation, match="T3"):
        tracker.execute(cid, lambda c, d: c.move("Germany", ["DE-SS1"], ["Northern North Sea"]))
    assert len(tracker.stored_events(cid)) == before


def test_rk2_an_action_failing_part_way_leaves_nothing_in_the_trackers_copy(tracker: Tracker, unique_name: str) -> None:
    """The research roll is paid for (ResearchPaid) before its die is asked for: with no die
    given in a manual-dice campaign the action fails part way. Nothing is recorded, and the
    same tracker's next action starts from the stored state, not from the half-done copy."""
    c = tracker.create(unique_name, "north-sea-1914", dice="manual")
    before = c.balances["Germany"]
    with pytest.raises(DiceError, match="D4"):
        tracker.perform(c.id, "research", {"technology": "advanced_submarine"})
    assert len(tracker.stored_events(c.id)) == 1
    assert tracker.load(c.id).balances["Germany"] == before
    done = tracker.perform(c.id, "research", {"technology": "advanced_submarine", "dice": [3]})
    cost = tracker.load(c.id).ruleset.research_cost
    assert done.campaign.balances["Germany"] == tracker.load(c.id).balances["Germany"] == before - cost
    assert [type(e).__name__ for e in tracker.events(c.id)][1:] == ["ActionAsked", "ResearchPaid", "DiceRolled"]


def test_campaigns_are_selected_by_name(tracker: Tracker, unique_name: str) -> None:
    a = tracker.create(unique_name + "-a", "north-sea-1914").id
    b = tracker.create(unique_name + "-b", "north-sea-1914").id
    assert tracker.campaign_id(unique_name + "-a") == a
    assert tracker.campaign_id(unique_name + "-b") == b
    with pytest.raises(InputError, match="already exists"):
        tracker.create(unique_name + "-a", "north-sea-1914")
    with pytest.raises(InputError, match="no campaign named"):
        tracker.campaign_id(unique_name + "-zzz")


def test_snapshots_load_the_same_state_as_the_full_log(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    for _ in range(450):
        tracker.execute(cid, advance)
    loaded = tracker.load(cid)
    assert tracker.app.snapshots is not None
    assert list(tracker.app.snapshots.get(cid)), "snapshots were taken"
    replayed = None
    for event in tracker.events(cid):
        replayed = event.mutate(replayed)
    assert replayed is not None
    assert vars(replayed) | {"_pending_events": []} == vars(loaded) | {"_pending_events": []}


# ----- tamper evidence -----


def test_verify_names_an_edited_event(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    play_opening(tracker, cid)
    dice_event = next(e for e in tracker.events(cid) if type(e).__name__ == "DiceRolled")
    dice_version = dice_event.originator_version
    forged = 10 if dice_event.values[0] != 10 else 9
    edit_row(tracker, cid, dice_version, lambda s: s.update(values=[forged]))
    report = verify(tracker, cid)
    assert not report.ok
    assert report.bad_version == dice_version
    assert f"event {dice_version}" in report.problem and "edited" in report.problem


def test_verify_catches_re_hashed_dice_by_rederiving_them(tracker: Tracker, unique_name: str) -> None:
    """A forger who also recomputes the hash chain is still caught by the dice seed."""
    from domain.chain import event_content, event_hash

    cid = tracker.create(unique_name, "north-sea-1914").id
    tracker.execute(cid, partial(research, "Germany", "advanced_submarine"))
    tracker.execute(cid, advance)
    events = tracker.events(cid)
    dice_event = events[2]
    forged_value = 10 if dice_event.values[0] != 10 else 9
    # Rewrite the roll and re-hash it and every event after it, as a careful forger would.
    prev = dice_event.prev_hash
    for event in events[2:]:
        attrs = dict(vars(event)) | {"prev_hash": prev}
        if event is dice_event:
            attrs["values"] = [forged_value]
        kind, version = type(event).__name__, event.originator_version
        digest = event_hash(prev, kind, version, event.timestamp, event_content(attrs))
        changes = {"prev_hash": prev, "hash": digest} | ({"values": [forged_value]} if event is dice_event else {})
        edit_row(tracker, cid, version, lambda s, changes=changes: s.update(changes))
        prev = digest
    report = verify(tracker, cid)
    assert not report.ok and report.bad_version == 3
    assert "not what the seed gives" in report.problem


def test_verify_names_a_deleted_event(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    play_opening(tracker, cid)
    cls, session = rows(tracker, cid)
    with session:
        session.query(cls).filter(cls.originator_id == cid, cls.originator_version == 5).delete()
        session.commit()
    report = verify(tracker, cid)
    assert not report.ok and report.bad_version == 5
    assert "event 5 missing" in report.problem


def test_verify_names_the_first_reordered_event(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    play_opening(tracker, cid)
    cls, session = rows(tracker, cid)
    with session:
        r4 = session.query(cls).filter(cls.originator_id == cid, cls.originator_version == 4).one()
        r5 = session.query(cls).filter(cls.originator_id == cid, cls.originator_version == 5).one()
        r4.state, r5.state = bytes(r5.state), bytes(r4.state)
        r4.topic, r5.topic = r5.topic, r4.topic
        session.commit()
    report = verify(tracker, cid)
    assert not report.ok and report.bad_version == 4


def test_verify_reports_an_unreadable_row(tracker: Tracker, unique_name: str) -> None:
    cid = tracker.create(unique_name, "north-sea-1914").id
    play_opening(tracker, cid)
    cls, session = rows(tracker, cid)
    with session:
        row = session.query(cls).filter(cls.originator_id == cid, cls.originator_version == 2).one()
        row.state = b"{not json"
        session.commit()
    report = verify(tracker, cid)
    assert not report.ok and report.bad_version == 2 and "cannot be read" in report.problem


def test_d3_revealed_seed_matches_commitment_and_rolls_rederive(tracker: Tracker, unique_name: str) -> None:
    campaign = tracker.create(unique_name, "north-sea-1914")
    cid = campaign.id
    tracker.execute(cid, partial(research, "Germany", "advanced_submarine"))
    seed = tracker.reveal_seed(cid)
    assert commitment(seed) == campaign.commitments[0]
    c = tracker.load(cid)
    assert c.dice_epoch == 1 and len(c.commitments) == 2
    # Rolls after the reveal use the next seed, so the revealed one cannot predict them.
    for _ in range(2):
        tracker.execute(cid, advance)
    # A report from a database without the secret seeds can still check epoch 0 from the log.
    stored = tracker.stored_events(cid)
    report = verify_events((s.originator_version, partial(tracker.decode, s)) for s in stored)
    assert report.ok and report.rolls_checked == 1


# ----- concurrency -----


def test_two_writers_cannot_record_on_the_same_version(db_url: str, unique_name: str) -> None:
    with Tracker(db_url) as one, Tracker(db_url) as two:
        cid = one.create(unique_name, "north-sea-1914").id
        c1, c2 = one.load(cid), two.load(cid)
        advance_passing(c1)
        advance_passing(c2)
        one.app.save(c1)
        with pytest.raises(RecordConflictError):
            two.app.save(c2)
        assert len(one.stored_events(cid)) == 2


def test_losing_writer_reloads_rechecks_and_records_once(db_url: str, unique_name: str) -> None:
    with Tracker(db_url) as one, Tracker(db_url) as two:
        cid = one.create(unique_name, "north-sea-1914").id
        calls = []

        def slow_advance(c: Campaign, d: DiceSource) -> None:
            calls.append(c.version)
            if len(calls) == 1:
                two.execute(cid, advance)  # another player records first
            advance_passing(c)

        one.execute(cid, slow_advance)
        assert calls == [1, 2]  # re-run on the fresh state
        phases = [e.phase for e in one.events(cid) if type(e).__name__ == "PhaseAdvanced"]
        assert phases == ["purchase", "combat_movement"]


def test_losing_writer_is_refused_when_the_action_became_illegal(db_url: str, unique_name: str) -> None:
    with Tracker(db_url) as one, Tracker(db_url) as two:
        cid = one.create(unique_name, "north-sea-1914").id
        calls = []

        def research_once(c: Campaign, d: DiceSource) -> None:
            calls.append(c.version)
            if len(calls) == 1:
                two.execute(cid, partial(research, "Germany", "advanced_asw"))
            c.research("Germany", "advanced_asw", d)

        with pytest.raises(RuleViolation, match="TE1"):
            one.execute(cid, research_once)
        assert sum(1 for e in one.events(cid) if type(e).__name__ == "ResearchPaid") == 1


def _writer(db_url: str, name: str, count: int, queue: Any) -> None:
    done = 0
    with Tracker(db_url) as t:
        cid = t.campaign_id(name)
        for _ in range(count):
            t.execute(cid, advance)
            done += 1
    queue.put(done)


def test_two_processes_recording_at_once_lose_nothing(db_url: str, unique_name: str) -> None:
    with Tracker(db_url) as t:
        cid = t.create(unique_name, "north-sea-1914").id
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(db_url, unique_name, 40, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert all(p.exitcode == 0 for p in procs)
    assert queue.get() + queue.get() == 80
    with Tracker(db_url) as t:
        advanced = [e for e in t.events(cid) if type(e).__name__ == "PhaseAdvanced"]
        assert len(advanced) == 80
        assert verify(t, cid).ok
