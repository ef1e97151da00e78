"""Projections: one campaign that cannot be projected stops alone; turn and phase ends after
undos do not depend on when the projections caught up (a property test against a rebuild);
a log cut after it was projected is detected and refused; snapshots leave out the scenario."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from domain.campaign import Campaign
from domain.dice import DiceSource
from domain.errors import TrackerError
from projections import board as projection_board
from projections import rows as projection_rows
from projections.views import Views, dump
from tests.support import advance as advance_passing
from tracker.cli.main import cli
from tracker.service.application import SNAPSHOT_INTERVAL, DamagedLogError, Tracker
from tracker.storage.event_app import COMPRESSED
from tracker.storage.recorder import LogDamaged


def advance(c: Campaign, _d: DiceSource) -> None:
    advance_passing(c)


def research(c: Campaign, d: DiceSource) -> None:
    c.research(c.nation, "advanced_submarine", d)


def invoke(db: str, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--db", db, *args])


# ----- one bad campaign (10.2) -----


def _unknown_nation(c: Campaign) -> None:
    c._record(Campaign.PhaseAdvanced, round=1, nation="Atlantis", phase="purchase")


def _huge_balance(c: Campaign) -> None:
    c._record(Campaign.ResourcesCollected, nation="Germany", ntr_value=0, income=0, lost=0, collected=0, balance=2**63)


@pytest.mark.parametrize("damage", [_unknown_nation, _huge_balance], ids=["unknown-nation", "balance-2^63"])
def test_a_campaign_that_cannot_be_projected_stops_alone(db_url: str, unique_name: str, damage: Any) -> None:
    good, bad = f"{unique_name}-good", f"{unique_name}-bad"
    with Tracker(db_url) as t:
        good_id = t.create(good, "north-sea-1914").id
        bad_id = t.create(bad, "north-sea-1914").id
        t.execute(good_id, advance)
        t.execute(bad_id, advance)
        c = t.load(bad_id)
        damage(c)
        t.app.save(c)
        broken = c.version
        # The good campaign's events come after the bad one's, in the same page of the log.
        for _ in range(8):
            t.execute(good_id, advance)
        t.execute(bad_id, advance)
    for args in (["log"], ["state", "--turn", "1"], ["report", "--turn", "1"], ["stats"], ["explain", "2"]):
        result = invoke(db_url, "--campaign", good, *args)
        assert result.exit_code == 0, (args, result.output)
    result = invoke(db_url, "--campaign", bad, "state", "--turn", "1")
    assert result.exit_code == 1  # damaged data, as a failed verify
    assert result.output.startswith(f"Error: the history of this campaign cannot be read past event {broken} (")
    assert result.output.count("\n") == 1
    with Tracker(db_url) as t:
        with t.views(good_id) as v:
            last_turn = max(v.turn_ends(1000))
            assert v.seq_at_end_of(last_turn) == t.load(good_id).version  # every good event projected
        with pytest.raises(TrackerError, match=f"past event {broken}"):
            t.catch_up(bad_id)


# ----- turn and phase ends after undos, whenever the projections caught up (10.3) -----

STEPS = st.lists(
    st.tuples(
        st.sampled_from(["advance", "advance", "advance", "research", "move", "undo", "undo_to"]),
        st.booleans(),  # catch up after this step
        st.integers(min_value=0, max_value=1000),  # where an undo --to goes back to
    ),
    min_size=4,
    max_size=28,
)


def _step(t: Tracker, cid: Any, what: str, pick: int) -> None:
    try:
        if what == "advance":
            t.execute(cid, advance)
        elif what == "research":
            t.execute(cid, research)
        elif what == "move":

            def move(c: Campaign, _d: DiceSource) -> None:
                game_map = c.scenario.game_map
                subs = [k for k, u in sorted(c.units.items()) if u["nation"] == c.nation and u["type"] == "submarine"]
                unit = subs[0]
                zone = c.units[unit]["at"]
                c.move(c.nation, [unit], [sorted(z for z in game_map.adjacency[zone] if game_map.is_sea(z))[0]])

            t.execute(cid, move)
        elif what == "undo":
            t.undo(cid, override=True, reason="property test")
        else:
            version = t.load(cid).version
            t.undo(cid, to=1 + pick % max(1, version - 1), override=True, reason="property test")
    except (TrackerError, StopIteration, IndexError):
        pass  # refused: nothing recorded


def _answers(t: Tracker, cid: Any) -> dict[str, Any]:
    with t.views(cid) as v:
        turns = max(v.turn_ends(10_000) or {0: 0})
        phases = t.load(cid).ruleset.phases
        ends = {(k, p): v.seq_at_end_of(k, p) for k in range(1, turns + 1) for p in (None, *phases)}
        boards = {key: v.board_at(seq) for key, seq in ends.items() if seq is not None}
    with t.engine.connect() as conn:
        views = {k: [r for r in rows if str(cid) in map(str, r)] for k, rows in dump(conn).items()}
    return {"ends": ends, "boards": boards, "views": views}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS, page=st.integers(min_value=1, max_value=6), checkpoint=st.integers(min_value=2, max_value=9))
def test_views_after_undos_and_any_catch_up_points_equal_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, bool, int]], page: int, checkpoint: int
) -> None:
    monkeypatch.setattr(projection_board, "CHECKPOINT", checkpoint)
    db = tmp_path / f"p{abs(hash((tuple(steps), page, checkpoint)))}.db"
    with Tracker(str(db)) as t:
        cid = t.create("p", "north-sea-1914", dice="auto", seed=f"{7:064x}").id
        for what, catch_up, pick in steps:
            _step(t, cid, what, pick)
            if catch_up:
                t.projector.catch_up(batch_size=page)
        t.projector.catch_up(batch_size=page)
        incremental = _answers(t, cid)
        t.projector.rebuild()
        rebuilt = _answers(t, cid)
        assert incremental == rebuilt
        # And the boards are the log's: each turn and phase end against a replay.
        for (_turn, _phase), seq in incremental["ends"].items():
            if seq is None:
                continue
            replayed = t.load(cid, version=seq)
            board = incremental["boards"][(_turn, _phase)]
            assert {u["id"]: (u["at"], u["damage"]) for u in board["units"]} == {
                uid: (u["at"], u["damage"]) for uid, u in replayed.units.items()
            }
            assert board["balances"] == replayed.balances
            assert (board["nation"], board["phase"]) == (replayed.nation, replayed.phase)
    db.unlink()


def test_a_phase_end_after_an_undo_in_the_middle_of_a_page_boundary(tmp_path: Path) -> None:
    """10.3: the phase began in an earlier page, the undo came in a later one."""
    db = str(tmp_path / "u.db")
    with Tracker(db) as t:
        cid = t.create("u", "north-sea-1914").id
        t.execute(cid, advance)  # research -> purchase
        t.execute(cid, advance)  # -> combat_movement
        t.projector.catch_up()  # the combat_movement phase began in this page

        def move(c: Campaign, _d: DiceSource) -> None:
            c.move("Germany", ["DE-SS3"], ["Southern North Sea"])

        t.execute(cid, move)
        t.execute(cid, advance)  # -> naval_combat
        t.undo(cid)  # back into combat_movement, in the next page
        t.projector.catch_up()
        last = t.load(cid).version
        with t.views(cid) as v:
            assert v.seq_at_end_of(1, "combat_movement") == last
            assert v.seq_at_end_of(1, "naval_combat") is None


# ----- a cut log (10.4) -----


def _delete_from(db: str, first_version: int) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM tracker_events WHERE originator_version >= ?", (first_version,))


def test_a_cut_tail_is_refused_not_written_over_and_its_views_are_stopped(tmp_path: Path) -> None:
    db = str(tmp_path / "cut.db")
    with Tracker(db) as t:
        cid = t.create("cut", "north-sea-1914").id
        for _ in range(6):
            t.execute(cid, advance)
        t.catch_up()
        last = t.load(cid).version
    _delete_from(db, last - 2)
    with Tracker(db) as t:
        with pytest.raises(LogDamaged, match="the event log was cut"):
            t.execute(cid, advance)
        assert len(t.stored_events(cid)) == last - 3  # nothing recorded
    result = invoke(db, "next")
    assert result.exit_code == 1 and result.output.startswith("Error: the event log was cut")
    assert result.output.count("\n") == 1
    result = invoke(db, "state", "--turn", "1")
    assert result.exit_code == 1
    assert f"events {last - 2}-{last} were deleted from the log after they were projected" in result.output
    # Once the log is as it should be, a rebuild makes the campaign usable again.
    assert invoke(db, "projections", "rebuild").exit_code == 0
    assert invoke(db, "next").exit_code == 0
    assert invoke(db, "state", "--turn", "1").exit_code == 0


def test_a_cut_below_a_snapshot_is_refused_instead_of_leaving_a_gap(tmp_path: Path) -> None:
    db = str(tmp_path / "snap.db")
    with Tracker(db) as t:
        cid = t.create("snap", "north-sea-1914").id
        c = t.load(cid)
        while c.version < SNAPSHOT_INTERVAL + 5:
            advance_passing(c)
        t.app.save(c)
    _delete_from(db, SNAPSHOT_INTERVAL - 10)
    with Tracker(db) as t:
        # Refused when the copy is loaded (the snapshot does not match the log) or, at the
        # latest, when its events are written (they would not follow the last one stored).
        expected = rf"(?=.*snapshot)(?=.*event {SNAPSHOT_INTERVAL - 11}\b)(?=.*event {SNAPSHOT_INTERVAL}\b)"
        with pytest.raises((LogDamaged, DamagedLogError), match=expected):
            t.execute(cid, advance)
        assert max(s.originator_version for s in t.stored_events(cid)) == SNAPSHOT_INTERVAL - 11


def test_events_recorded_again_after_a_cut_stop_the_projections_of_that_campaign(tmp_path: Path) -> None:
    """A writer that does not check (an older tracker, a hand-made row) wrote over a cut tail:
    the projections see that the next event does not follow what they projected."""
    db = str(tmp_path / "rewritten.db")
    with Tracker(db) as t:
        cid = t.create("r", "north-sea-1914").id
        for _ in range(4):
            t.execute(cid, advance)
        t.catch_up()
        last = t.load(cid).version
    _delete_from(db, last - 1)
    with Tracker(db) as t:
        t.recorder.check_projection_position = False  # as a writer without the check would
        c = t.load(cid)
        for _ in range(4):
            advance_passing(c)
        t.app.save(c)
        with pytest.raises(TrackerError, match="cut and rewritten"):
            t.catch_up(cid)


# ----- snapshots -----


def test_snapshots_leave_out_the_scenario_and_ruleset_and_load_the_same_state(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with Tracker(db) as t:
        cid = t.create("s", "north-sea-1914").id
        c = t.load(cid)
        while c.version < SNAPSHOT_INTERVAL + 3:
            advance_passing(c)
        t.app.save(c)
        with t.engine.connect() as conn:
            table = t.app.snapshots.recorder.events_record_cls.__table__  # type: ignore[union-attr]
            (state,) = conn.execute(select(table.c.state)).scalars()
        assert state.startswith(COMPRESSED)
        recorded = json.loads(zlib.decompress(state[len(COMPRESSED) :]))["state"]
        assert "units" in recorded  # the aggregate's attributes are here
        assert "scenario_data" not in recorded and "ruleset_data" not in recorded
        fresh = Tracker(db)
        try:
            loaded = fresh.load(cid)
        finally:
            fresh.close()
        full = t.load(cid)
        assert vars(loaded).keys() == vars(full).keys()
        for key in vars(full):
            assert getattr(loaded, key) == getattr(full, key), key


def test_views_of_an_older_schema_are_dropped_and_rebuilt(tmp_path: Path) -> None:
    db = str(tmp_path / "old.db")
    with Tracker(db) as t:
        cid = t.create("old", "north-sea-1914").id
        t.execute(cid, advance)
        t.catch_up()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tracker_projection_tracking SET schema = 1")
        conn.execute("CREATE TABLE tracker_phase_index (x INTEGER)")
    with Tracker(db) as t, t.views(cid) as v:
        assert isinstance(v, Views) and v.seq_at_end_of(1) == 2
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "tracker_phase_index" not in tables


def _rows_around_each_event(tmp_path: Path) -> Iterator[tuple[Any, Any, dict[str, Any], dict[str, Any]]]:
    """Each event of a stored demo log after the first, with the state it leaves and the board's
    rows (`projections.rows.rows_of`) before and after it."""
    import gzip

    db = tmp_path / "old.db"
    db.write_bytes(gzip.decompress((Path(__file__).parent / "fixtures" / "demo-one-module.db.gz").read_bytes()))
    with Tracker(str(db)) as t:
        agg: Any = None
        for event in t.events(t.campaign_id(None)):
            before = None if agg is None else projection_rows.rows_of(agg)
            agg = event.mutate(agg)
            if before is not None:
                yield event, agg, before, projection_rows.rows_of(agg)


def test_events_said_to_leave_parts_of_the_board_alone_do(tmp_path: Path) -> None:
    """The projector keeps the rows of board parts an event kind is declared not to change
    (`_BOARD_UNCHANGED`, `_BOARD_PARTS`): replaying a stored log that holds each such kind
    shows that their events change nothing else."""
    seen: set[str] = set()
    for event, _, before, after in _rows_around_each_event(tmp_path):
        kind = type(event).__name__
        kept = (
            set(after)
            if kind in projection_rows.BOARD_UNCHANGED
            else set(after) - projection_rows.BOARD_PARTS.get(kind, set(after))
        )
        for part in kept:
            assert after[part] == before[part], f"event {event.originator_version} ({kind}) changed {part}"
        seen.add(kind)
    assert set(projection_rows.BOARD_PARTS) | {"ConvoyPassed", "PhaseAdvanced", "DiceRolled"} <= seen


def test_events_said_to_change_only_the_units_they_name_do(tmp_path: Path) -> None:
    """The projector builds again only the rows of the units an event kind names
    (`_UNITS_NAMED`): replaying a stored log shows that such events change no other unit's
    row and no other part of the board."""
    seen = 0
    for event, _, before, after in _rows_around_each_event(tmp_path):
        fields = projection_rows.UNITS_NAMED.get(type(event).__name__)
        if fields is None:
            continue
        named = {uid for name in fields for uid in getattr(event, name)}
        assert {k: v for k, v in after["unit"].items() if k not in named} == {
            k: v for k, v in before["unit"].items() if k not in named
        }, f"event {event.originator_version} changed a unit it does not name"
        assert (after["ntr"], after["nation"]) == (before["ntr"], before["nation"])
        seen += 1
    assert seen


def test_events_said_to_change_only_the_nation_they_name_do(tmp_path: Path) -> None:
    """The projector builds again only the row of the nation an event kind names
    (`NATION_NAMED`): replaying a stored log shows that such events change no other nation's
    row and no other part of the board, and that the named row is the one `rows_of` makes."""
    seen: set[str] = set()
    for event, agg, before, after in _rows_around_each_event(tmp_path):
        kind = type(event).__name__
        field = projection_rows.NATION_NAMED.get(kind)
        if field is None:
            continue
        named = getattr(event, field)
        assert {k: v for k, v in after["nation"].items() if k != named} == {
            k: v for k, v in before["nation"].items() if k != named
        }, f"event {event.originator_version} ({kind}) changed a nation it does not name"
        assert (after["unit"], after["ntr"], after["tally"]) == (before["unit"], before["ntr"], before["tally"])
        changes = projection_rows.named_nation_changes(before["nation"], agg, event.__dict__, field)
        assert {**before["nation"], **{k: row for k, _, row in changes}} == after["nation"]
        assert [k for k, _, _ in changes] in ([], [named])
        seen.add(kind)
    assert {"ResourcesCollected", "ResearchPaid"} <= seen


def test_the_projector_writes_a_plain_events_index_row_as_index_row_makes_it(tmp_path: Path) -> None:
    """The projector makes the index row of most events (asked actions, phases: `plain` kinds)
    itself, without calling `index_row`: every such row it stored is the row `index_row` makes."""
    from projections.schema import event_index

    checked: set[str] = set()
    db = str(tmp_path / "c.db")
    assert invoke(db, "new", "c", "--scenario", "north-sea-1914").exit_code == 0
    # Phases ended until the game waits for a decision (a convoy attack, T4).
    steps = [invoke(db, "next").exit_code for _ in range(6)]
    assert steps[:3] == [0, 0, 0]
    with Tracker(db) as t:
        cid = t.campaign_id("c")
        t.projector.rebuild()
        with t.engine.connect() as conn:
            stored = {r.seq: list(r)[:-1] for r in conn.execute(select(event_index).order_by(event_index.c.seq))}
        key = next(iter(stored.values()))[0]
        f = projection_rows.Followed(key=key, agg=None, rows={}, since={}, turn_order=[], last_hash="")
        agg: Any = None
        for event in t.events(cid):
            agg = event.mutate(agg)
            kind = projection_rows.kind_of(type(event))
            if kind.plain:
                seq = event.originator_version
                made = projection_rows.index_row(f, agg, event, event.__dict__, kind, seq)
                assert stored[seq] == made[:-1], seq
                checked.add(kind.name)
    assert {"ActionAsked", "PhaseAdvanced"} <= checked


def test_empty_view_columns_hold_null(tmp_path: Path) -> None:
    """Columns without a value (no rule, no battle, not undone, still valid) are NULL in the
    views, however the rows were written: the filters and `IS NULL` reads depend on it."""
    db = str(tmp_path / "nulls.db")
    with Tracker(db) as t:
        cid = t.create("nulls", "north-sea-1914").id
        for _ in range(12):
            t.execute(cid, advance)
        t.undo(cid)
        t.catch_up()
    with sqlite3.connect(db) as conn:
        for table, column, some_null in [
            ("tracker_event_index", "rule", False),
            ("tracker_event_index", "battle", True),
            ("tracker_event_index", "undone_by", True),
            ("tracker_unit_history", "to_seq", True),
            ("tracker_nation_history", "to_seq", True),
        ]:
            empty = conn.execute(f"SELECT count(*) FROM {table} WHERE {column} = ''").fetchone()[0]
            null = conn.execute(f"SELECT count(*) FROM {table} WHERE {column} IS NULL").fetchone()[0]
            assert empty == 0 and (null > 0 or not some_null), (table, column)
        undone = conn.execute("SELECT count(*) FROM tracker_event_index WHERE undone_by IS NOT NULL").fetchone()[0]
        assert undone > 0


def test_each_nations_tally_at_any_event_is_the_sum_of_its_units_and_ntr(tmp_path: Path) -> None:
    """The per-nation totals a chart reads (units, their cost, NTR at sea) are kept as rows of
    their own: after every event of a played campaign (purchases, casualties, NTR lost) they
    are what the board's own unit and NTR rows add up to."""
    from tracker.cli.demo import run_demo

    db = str(tmp_path / "demo.db")
    run_demo(db, lambda line: None)
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        costs = {name: u.cost for name, u in t.load(cid).ruleset.units.items()}
        with t.views(cid) as v:
            last = t.load(cid).version
            seqs = list(range(1, last + 1))
            sums = v.sums_at(seqs)
            changed = 0
            for seq in seqs:
                board = v.board_at(seq)
                for nation in board["balances"]:
                    units = [u for u in board["units"] if u["nation"] == nation]
                    expected = (len(units), sum(costs[u["type"]] for u in units))
                    assert sums[seq]["units"].get(nation, (0, 0)) == expected, (seq, nation)
                    assert sums[seq]["ntr"].get(nation, 0) == sum(board["ntr"].get(nation, {}).values()), (seq, nation)
                    assert sums[seq]["balance"][nation] == board["balances"][nation]
                changed += seq > 1 and sums[seq]["units"] != sums[seq - 1]["units"]
    assert changed > 5


def test_opening_a_database_while_a_rebuild_remakes_the_tracking_row_is_no_conflict(
    pg_url: str, unique_name: str
) -> None:
    """`projections rebuild` deletes the tracking row and makes it again; a command opening the
    database meanwhile (PostgreSQL: it sees no row yet) used to insert one too and fail with a
    duplicate key, reported as a database it could not open."""
    import threading

    from sqlalchemy import delete, insert

    from projections.schema import NAME, SCHEMA, ensure_schema, tracking

    with Tracker(pg_url) as t:
        t.create(unique_name, "north-sea-1914", dice="manual")
        with t.engine.begin() as conn:
            conn.execute(delete(tracking).where(tracking.c.name == NAME))
        failures: list[BaseException] = []

        def opening() -> None:
            try:
                ensure_schema(t.engine)
            except BaseException as e:  # noqa: BLE001 - reported by the assertion below
                failures.append(e)

        with t.engine.connect() as rebuilding:
            with rebuilding.begin():
                rebuilding.execute(insert(tracking).values(name=NAME, notification_id=0, schema=SCHEMA))
                other = threading.Thread(target=opening)
                other.start()
                other.join(timeout=1.0)  # it waits on the rebuild's uncommitted row
            other.join(timeout=60)
        assert not other.is_alive() and failures == []
        with t.engine.connect() as conn:
            assert conn.execute(select(tracking.c.schema).where(tracking.c.name == NAME)).scalar_one() == SCHEMA


def _old_views(tmp_path: Path, schema: int) -> str:
    """A database whose views say they are of `schema`, its event index read already."""
    from projections import schema as projection_schema

    db = str(tmp_path / "views.db")
    with Tracker(db) as t:
        t.create("c", "north-sea-1914")
        t.catch_up()
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE {projection_schema.tracking.name} SET schema = ?", (schema,))
    return db


def test_views_of_a_newer_release_are_refused_not_dropped(tmp_path: Path) -> None:
    """Two releases on one database would drop and rebuild each other's views in turn."""
    from projections import schema as projection_schema

    db = _old_views(tmp_path, projection_schema.SCHEMA + 1)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT count(*) FROM tracker_event_index").fetchone()[0]
    result = CliRunner().invoke(cli, ["--db", db, "log"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        f"Error: this database's read models were made by a newer release of the tracker (projections schema "
        f"{projection_schema.SCHEMA + 1}; this release reads {projection_schema.SCHEMA}): upgrade the tracker to use it"
    )
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM tracker_event_index").fetchone()[0] == rows


def test_upgrading_the_views_is_one_change_on_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropping the views of an earlier schema and making them again is one transaction: a
    failure half-way leaves the old views (and a reader never finds a table missing)."""
    from projections import schema as projection_schema

    db = _old_views(tmp_path, projection_schema.SCHEMA - 1)

    def fails(conn: Any) -> None:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(projection_schema, "_plan_hints", fails)
    from sqlalchemy import create_engine

    engine = create_engine(f"sqlite:///{db}")
    with pytest.raises(RuntimeError):
        projection_schema.ensure_schema(engine)
    engine.dispose()
    with sqlite3.connect(db) as conn:
        found = conn.execute(f"SELECT schema FROM {projection_schema.tracking.name}").fetchone()
        assert found == (projection_schema.SCHEMA - 1,)
        assert conn.execute("SELECT count(*) FROM tracker_event_index").fetchone()[0] > 0
