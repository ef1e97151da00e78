"""The tamper catalogue: every way of changing a recorded campaign behind the tracker's back,
on SQLite and PostgreSQL, and the check that catches it (`verify`, `verify --head`,
`verify --projections` or `import`)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner
from sqlalchemy import and_, delete, select, update

from domain.chain import event_content, event_hash
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.storage.event_app import COMPRESSED

SNAPSHOT_AT = 12


def advance(t: Tracker, cid: UUID) -> None:
    """`next` as a group that moves on plays it: open convoy attacks passed first (CV1, T4)."""
    for nation in t.load(cid).convoy_attacks_open():
        t.perform(cid, "convoy pass", {"by": nation})
    t.perform(cid, "next")


def through_the_channel(t: Tracker, cid: UUID) -> None:
    t.perform(cid, "move", {"units": ["DE-SS3", "DE-SS4"], "path": ["Southern North Sea", "Dover Strait"]})
    battle = t.load(cid).battle_count
    t.perform(cid, "intercept search", {"battle": battle, "units": ""})
    t.perform(cid, "intercept continue", {"battle": battle})


@dataclass
class Recorded:
    """A short auto-dice campaign recorded through the actions (what was asked is in the log):
    research rolls, a submarine move through a hostile zone, Germany's whole turn, a snapshot,
    views caught up, and the head posted at the end."""

    db: str
    name: str
    cid: UUID
    head: str
    tmp: Path

    def run(self, *args: str) -> tuple[int, str]:
        result = CliRunner().invoke(cli, ["--db", self.db, "--campaign", self.name, *args])
        return result.exit_code, result.output

    def tracker(self) -> Tracker:
        return Tracker(self.db)


@pytest.fixture
def recorded(db_url: str, unique_name: str, tmp_path: Path) -> Recorded:
    with Tracker(db_url) as t:
        cid = t.create(unique_name, "north-sea-1914", dice="auto").id
        t.perform(cid, "research", {"technology": "advanced_submarine"})
        advance(t, cid)
        advance(t, cid)
        through_the_channel(t, cid)
        while t.load(cid).nation == "Germany":
            advance(t, cid)
        t.perform(cid, "research", {"technology": "advanced asw", "nation": "GB"})
        t.app.take_snapshot(cid, version=SNAPSHOT_AT)
        t.catch_up(cid)
        last = t.stored_events(cid)[-1]
        head = f"{last.originator_version}:{t.decode(last).hash}"
    rec = Recorded(db_url, unique_name, cid, head, tmp_path)
    code, out = rec.run("verify", "--projections", "--head", head)
    assert code == 0, out
    return rec


# ----- ways to damage the stored rows -----


def _events(t: Tracker) -> Any:
    return t.app.recorder.events_record_cls.__table__  # type: ignore[attr-defined]


def _snapshots(t: Tracker) -> Any:
    assert t.app.snapshots is not None
    return t.app.snapshots.recorder.events_record_cls.__table__  # type: ignore[attr-defined]


def _row(table: Any, cid: UUID, version: int) -> Any:
    return and_(table.c.originator_id == cid, table.c.originator_version == version)


def _state(t: Tracker, table: Any, cid: UUID, version: int) -> dict[str, Any]:
    """A stored state as JSON (a snapshot's is stored compressed; written back plain, as older
    snapshots were stored, it still loads)."""
    with t.engine.connect() as conn:
        state = bytes(conn.execute(select(table.c.state).where(_row(table, cid, version))).scalar_one())
    if state.startswith(COMPRESSED):
        state = zlib.decompress(state[len(COMPRESSED) :])
    return json.loads(state)


def _write_state(t: Tracker, table: Any, cid: UUID, version: int, state: dict[str, Any]) -> None:
    with t.engine.begin() as conn:
        conn.execute(update(table).where(_row(table, cid, version)).values(state=json.dumps(state).encode()))


def _first(t: Tracker, cid: UUID, kind: str) -> Any:
    return next(e for e in t.events(cid) if type(e).__name__ == kind)


def edit(rec: Recorded, t: Tracker, kind: str, change: Callable[[dict[str, Any]], None], rehash: bool) -> int:
    """Change the first event of `kind`; with `rehash`, recompute its hash and every later
    one's, as a forger who knows the format would."""
    events = t.events(rec.cid)
    target = _first(t, rec.cid, kind).originator_version
    state = _state(t, _events(t), rec.cid, target)
    change(state)
    _write_state(t, _events(t), rec.cid, target, state)
    if rehash:
        rehash_from(t, rec.cid, target, events[target - 2].hash)
    return target


def rehash_from(t: Tracker, cid: UUID, target: int, prev: str) -> None:
    """Recompute the hash of event `target` and of every later one, as a forger who knows the
    format would, and drop the snapshots (their last hash would give the rewrite away)."""
    for event in t.events(cid)[target - 1 :]:
        v = event.originator_version
        attrs = dict(vars(event)) | {"prev_hash": prev}
        digest = event_hash(prev, type(event).__name__, v, event.timestamp, event_content(attrs))
        row = _state(t, _events(t), cid, v)
        row.update(prev_hash=prev, hash=digest)
        _write_state(t, _events(t), cid, v, row)
        prev = digest
    with t.engine.begin() as conn:
        conn.execute(delete(_snapshots(t)).where(_snapshots(t).c.originator_id == cid))


def delete_events(t: Tracker, cid: UUID, versions: range) -> None:
    table = _events(t)
    with t.engine.begin() as conn:
        conn.execute(delete(table).where(table.c.originator_id == cid, table.c.originator_version.in_(list(versions))))


def last_version(t: Tracker, cid: UUID) -> int:
    return t.stored_events(cid)[-1].originator_version


# Each tamper changes the campaign and returns (the command that must catch it, what its
# error says). Exit status 1 and one line are checked for all.


def t_edit(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    v = edit(rec, t, "UnitsMoved", lambda s: s.update(path=["Central North Sea", "Dover Strait"]), rehash=False)
    return ["verify"], f"event {v} (UnitsMoved) was edited"


def t_delete(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    delete_events(t, rec.cid, range(5, 6))
    return ["verify"], "event 5 missing"


def t_swap(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    table = _events(t)
    with t.engine.begin() as conn:
        r4 = conn.execute(select(table.c.state, table.c.topic).where(_row(table, rec.cid, 4))).one()
        r5 = conn.execute(select(table.c.state, table.c.topic).where(_row(table, rec.cid, 5))).one()
        conn.execute(update(table).where(_row(table, rec.cid, 4)).values(state=r5.state, topic=r5.topic))
        conn.execute(update(table).where(_row(table, rec.cid, 5)).values(state=r4.state, topic=r4.topic))
    return ["verify"], "event 4"


def _clear_views(conn: Any, cid: Any) -> None:
    """Delete every view row of one campaign (a forger covering a cut)."""
    from projections.schema import VIEWS, campaigns
    from projections.views import campaign_key

    key = campaign_key(conn, cid)
    for table in VIEWS:
        where = table.c.campaign_id == str(cid) if table is campaigns else table.c.c == key
        conn.execute(delete(table).where(where))


def t_truncate_against_a_posted_head(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    end = last_version(t, rec.cid)
    delete_events(t, rec.cid, range(end - 2, end + 1))
    # Views and snapshots were cleared too, as a careful forger would: only the head tells.
    with t.engine.begin() as conn:
        _clear_views(conn, rec.cid)
        conn.execute(delete(_snapshots(t)).where(_snapshots(t).c.originator_id == rec.cid))
    return ["verify", "--head", rec.head], f"the log ends at event {end - 3}, but the posted head is event {end}"


def t_truncate_below_a_snapshot(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    with t.engine.begin() as conn:
        _clear_views(conn, rec.cid)
    delete_events(t, rec.cid, range(SNAPSHOT_AT - 1, last_version(t, rec.cid) + 1))
    return ["verify"], f"a snapshot is at event {SNAPSHOT_AT}, beyond the last event {SNAPSHOT_AT - 2}"


def t_truncate_under_the_views(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    end = last_version(t, rec.cid)
    delete_events(t, rec.cid, range(end - 1, end + 1))
    return ["verify"], f"names event {end}, beyond the last event {end - 2}"


def _teleport(state: dict[str, Any]) -> None:
    state["path"] = ["Central North Sea", "Western Approaches"]


def t_rehash_after_edit_with_a_head(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    edit(rec, t, "UnitsMoved", _teleport, rehash=True)
    seq = rec.head.split(":")[0]
    return ["verify", "--head", rec.head], f"event {seq} has hash"


def t_rehash_teleported_unit(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    v = edit(rec, t, "UnitsMoved", _teleport, rehash=True)
    return ["verify"], f"event {v}"


def t_rehash_bogus_phase(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    v = edit(rec, t, "PhaseAdvanced", lambda s: s.update(phase="bogus"), rehash=True)
    return ["verify"], f"event {v}"


def t_rehash_unknown_zone(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    v = edit(rec, t, "UnitsMoved", lambda s: s.update(path=["Southern North Sea", "Atlantis"]), rehash=True)
    return ["verify"], f"event {v} (UnitsMoved, F4) is not what the referee records"


def t_rehash_unknown_zone_asked(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    """The forger edits what was asked too: the referee refuses the move."""
    asked = next(e for e in t.events(rec.cid) if type(e).__name__ == "ActionAsked" and e.name == "move")

    def to_atlantis(state: dict[str, Any]) -> None:
        state["inputs"]["path"] = ["Atlantis"]

    table, v = _events(t), asked.originator_version
    state = _state(t, table, rec.cid, v)
    to_atlantis(state)
    _write_state(t, table, rec.cid, v, state)
    rehash_from(t, rec.cid, v, t.events(rec.cid)[v - 2].hash)
    return ["verify"], f"the action asked at event {v} (move) is refused when the referee runs it again: unknown zone"


def t_rehash_research_cost(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    v = edit(rec, t, "ResearchPaid", lambda s: s.update(cost=10**20), rehash=True)
    return ["verify"], f"event {v} (ResearchPaid, TE1) is not what the referee records for the action asked at"


def t_inserted_event(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    """A second research payment inserted after the first, later events renumbered, all re-hashed."""
    from sqlalchemy import insert

    paid = _first(t, rec.cid, "ResearchPaid").originator_version
    table = _events(t)
    with t.engine.begin() as conn:
        row = conn.execute(select(table.c.topic, table.c.state).where(_row(table, rec.cid, paid))).one()
        for v in range(last_version(t, rec.cid), paid, -1):
            conn.execute(update(table).where(_row(table, rec.cid, v)).values(originator_version=v + 1))
        conn.execute(
            insert(table).values(originator_id=rec.cid, originator_version=paid + 1, topic=row.topic, state=row.state)
        )
    rehash_from(t, rec.cid, paid + 1, t.events(rec.cid)[paid - 1].hash)
    return ["verify"], f"event {paid + 1} (ResearchPaid, TE1) is not what the referee records"


def t_forged_die_rehashed(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    die = _first(t, rec.cid, "DiceRolled")
    forged = 10 if die.values[0] != 10 else 9
    v = edit(rec, t, "DiceRolled", lambda s: s.update(values=[forged]), rehash=True)
    return ["verify"], f"event {v} (DiceRolled, roll 1): values [{forged}] are not what the seed gives"


def t_edited_snapshot(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    state = _state(t, _snapshots(t), rec.cid, SNAPSHOT_AT)
    state["state"]["units"]["DE-SS1"]["at"] = "Dover Strait"
    _write_state(t, _snapshots(t), rec.cid, SNAPSHOT_AT, state)
    return ["verify"], f"the snapshot at event {SNAPSHOT_AT} differs from the replay of the log up to it (units)"


def t_edited_projection(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    from projections.schema import unit_history
    from projections.views import campaign_key

    with t.engine.begin() as conn:
        conn.execute(
            update(unit_history)
            .where(unit_history.c.c == campaign_key(conn, rec.cid), unit_history.c.unit_id == "DE-SS3")
            .values(zone="Western Approaches")
        )
    return ["verify", "--projections"], "projection tracker_unit_history differs from a rebuild of the log at event"


def t_replaced_seed(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    from tracker.storage.store import seeds_table

    with t.engine.begin() as conn:
        conn.execute(update(seeds_table).where(seeds_table.c.campaign_id == str(rec.cid)).values(seed="0" * 64))
    # Rolls are re-derived only from a seed that matches its commitment: this one is named.
    return ["verify"], "D5: the dice seed of epoch 0 held here does not match the commitment in the log"


def t_deleted_seed(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    from tracker.storage.store import seeds_table

    with t.engine.begin() as conn:
        conn.execute(delete(seeds_table).where(seeds_table.c.campaign_id == str(rec.cid)))
    return ["verify"], "D5: the dice seed of epoch 0 of this auto campaign is missing"


def _asked(t: Tracker, cid: UUID, name: str) -> Any:
    return next(e for e in t.events(cid) if type(e).__name__ == "ActionAsked" and e.name == name)


def _rehash_asked(rec: Recorded, t: Tracker, name: str, change: Callable[[dict[str, Any]], None]) -> int:
    """Edit what an ActionAsked event records beyond the referee's reach and re-hash the chain
    from it, as a forger who knows the format would (the snapshots go too, see rehash_from)."""
    v = _asked(t, rec.cid, name).originator_version
    table = _events(t)
    state = _state(t, table, rec.cid, v)
    change(state)
    _write_state(t, table, rec.cid, v, state)
    rehash_from(t, rec.cid, v, t.events(rec.cid)[v - 2].hash)
    return v


def _shift_time(days: int) -> Callable[[dict[str, Any]], None]:
    def shift(state: dict[str, Any]) -> None:
        stamp = datetime.fromisoformat(state["timestamp"]["_data_"])
        state["timestamp"]["_data_"] = (stamp + timedelta(days=days)).isoformat()

    return shift


def t_rehash_asked_player(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    """Someone else is named as the one who asked: the referee re-runs the action alike, but
    the event index read it as it was."""
    v = _rehash_asked(rec, t, "move", lambda s: s.update(player="Mallory"))
    return ["verify"], f"event {v} (ActionAsked) is not what the event index (tracker_event_index) read there"


def t_rehash_asked_later(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    """An action claimed to be asked a day later than it was: after its own events."""
    v = _rehash_asked(rec, t, "move", _shift_time(1))
    return ["verify"], f"event {v} (ActionAsked) is stamped"


def t_rehash_asked_earlier(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    """An action claimed to be asked a day earlier (before a deadline, say): the index shows no
    times, but the hash the views last read is not the log's any more."""
    v = _rehash_asked(rec, t, "move", _shift_time(-1))
    return ["verify"], f"was rewritten after the views read it, or the views were edited (event {v} is stamped before"


def t_served_without_seed(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    """The seed deleted and the campaign marked served, so that its absence looks excused."""
    from tracker.storage.store import seeds_table, served_table

    with t.engine.begin() as conn:
        conn.execute(delete(seeds_table).where(seeds_table.c.campaign_id == str(rec.cid)))
        conn.execute(served_table.insert().values(campaign_id=str(rec.cid)))
    return ["verify"], "tracker_served marks it served, but no event of its log was recorded through a league server"


def t_renamed(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    from tracker.storage.store import campaigns_table

    with t.engine.begin() as conn:
        conn.execute(
            update(campaigns_table).where(campaigns_table.c.campaign_id == str(rec.cid)).values(name=f"{rec.name}-x")
        )
    return (
        ["--db", rec.db, "--campaign", f"{rec.name}-x", "verify"],
        f"tracker_campaigns registers this campaign as '{rec.name}-x', but its Created event (event 1) names it",
    )


def t_imported_without_seed(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    """The seed deleted and the campaign marked imported (as tracker import once marked it),
    so that its absence looks like a seed that stayed with an exported copy."""
    from tracker.storage.store import imported_table, seeds_table

    with t.engine.begin() as conn:
        conn.execute(delete(seeds_table).where(seeds_table.c.campaign_id == str(rec.cid)))
        conn.execute(imported_table.insert().values(campaign_id=str(rec.cid)))
    return ["verify"], "tracker_imported marks this campaign as imported but names no head of its log"


def t_imported_at_a_foreign_head(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    """The same with a mark as an import writes it, naming a head this log does not hold."""
    from tracker.storage.store import imported_table, seeds_table

    end = last_version(t, rec.cid)
    with t.engine.begin() as conn:
        conn.execute(delete(seeds_table).where(seeds_table.c.campaign_id == str(rec.cid)))
        conn.execute(
            imported_table.insert().values(campaign_id=str(rec.cid), name=rec.name, head_seq=end, head_hash="ab" * 32)
        )
    return ["verify"], f"tracker_imported marks this campaign as imported with head {end}:abababab"


def _export(rec: Recorded) -> Path:
    path = rec.tmp / "campaign.jsonl"
    code, out = rec.run("export", str(path))
    assert code == 0, out
    return path


def t_edited_export_line(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    path = _export(rec)
    lines = path.read_text().splitlines()
    row = json.loads(lines[4])
    row["event"]["action"] = 1
    lines[4] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    return ["--db", str(rec.tmp / "other.db"), "import", str(path)], "line 5: event 4"


def t_dropped_export_tail(rec: Recorded, t: Tracker) -> tuple[list[str], str]:
    path = _export(rec)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-3]) + "\n")
    events = len(lines) - 1
    return ["--db", str(rec.tmp / "other.db"), "import", str(path)], f"the file ends after event {events - 3}"


TAMPERS = [
    pytest.param(t_edit, id="edit"),
    pytest.param(t_delete, id="delete"),
    pytest.param(t_swap, id="swap"),
    pytest.param(t_truncate_against_a_posted_head, id="truncate-head"),
    pytest.param(t_truncate_below_a_snapshot, id="truncate-snapshot"),
    pytest.param(t_truncate_under_the_views, id="truncate-views"),
    pytest.param(t_rehash_after_edit_with_a_head, id="rehash-after-edit-head"),
    pytest.param(t_rehash_teleported_unit, id="rehash-teleport"),
    pytest.param(t_rehash_bogus_phase, id="rehash-bogus-phase"),
    pytest.param(t_rehash_unknown_zone, id="rehash-unknown-zone"),
    pytest.param(t_rehash_unknown_zone_asked, id="rehash-unknown-zone-asked"),
    pytest.param(t_rehash_research_cost, id="rehash-research-cost"),
    pytest.param(t_inserted_event, id="inserted-event"),
    pytest.param(t_forged_die_rehashed, id="forged-die-rehashed"),
    pytest.param(t_edited_snapshot, id="edited-snapshot"),
    pytest.param(t_edited_projection, id="edited-projection"),
    pytest.param(t_replaced_seed, id="replaced-seed"),
    pytest.param(t_deleted_seed, id="deleted-seed"),
    pytest.param(t_rehash_asked_player, id="rehash-asked-player"),
    pytest.param(t_rehash_asked_later, id="rehash-asked-later"),
    pytest.param(t_rehash_asked_earlier, id="rehash-asked-earlier"),
    pytest.param(t_served_without_seed, id="served-without-seed"),
    pytest.param(t_renamed, id="renamed"),
    pytest.param(t_imported_without_seed, id="imported-without-seed"),
    pytest.param(t_imported_at_a_foreign_head, id="imported-at-a-foreign-head"),
    pytest.param(t_edited_export_line, id="edited-export-line"),
    pytest.param(t_dropped_export_tail, id="dropped-export-tail"),
]


@pytest.mark.parametrize("tamper", TAMPERS)
def test_tampering_is_caught(
    recorded: Recorded, tamper: Callable[..., tuple[list[str], str]], figures: Any, db_url: str
) -> None:
    store = "postgresql" if "://" in db_url else "sqlite"
    figures.add(f"tamper catalogue ({store})", tried=1)
    with recorded.tracker() as t:
        args, expected = tamper(recorded, t)
    if args[0] == "--db":
        result = CliRunner().invoke(cli, args)
        code, out = result.exit_code, result.output
    else:
        code, out = recorded.run(*args)
    assert code == 1, out
    assert expected in out, out
    assert len(out.strip().splitlines()) == 1 and "Traceback" not in out and "unexpected" not in out, out
    figures.add(f"tamper catalogue ({store})", caught=1)


def test_an_edited_snapshot_beyond_the_log_is_never_loaded(recorded: Recorded) -> None:
    """Loading trusts a snapshot only where the log vouches for it: after the events it
    stands on were cut, commands refuse instead of writing after a gap."""
    with recorded.tracker() as t:
        delete_events(t, recorded.cid, range(SNAPSHOT_AT, last_version(t, recorded.cid) + 1))
        before = len(t.stored_events(recorded.cid))
    code, out = recorded.run("next")
    assert code == 1 and f"the snapshot at event {SNAPSHOT_AT} does not match the log" in out, out
    with recorded.tracker() as t:
        assert len(t.stored_events(recorded.cid)) == before
