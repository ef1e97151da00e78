"""The event index behind `log --zone` (and the viewer's zone filter) after an override undo
(RK3) that takes back part of a battle which had ended, the battle then fought on again.

Each command line process projects from where the views stopped, resuming from the stored
state. The projector indexed a battle's events under the zone of every battle it had seen
start, and one resuming after a battle's end knew none of it: when the undo put the battle back,
the events of the battle fought again (projected by a later command) had no zone, so `log
--zone` missed them, though a rebuild found them and `verify --projections` failed.

The generic check: views resumed at any event of such a log (and of one with a reroll, a redo
and an adjustment, whose index rows also take what they name from the state or earlier rows)
equal a rebuild."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

from projections.board import BoardProjector
from projections.views import dump
from tests.support import perform_until
from tracker.cli.main import cli
from tracker.service.application import Tracker

CNS = "Central North Sea"
SEED = f"{7:064x}"
# Rows indexed under a battle they do not record (`projections.rows.link_battle`): a number, no zone.
LINKED = {"DiceRerolled", "ActionUndone", "ActionRedone", "TypedDiceAccepted"}


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def log(db: str, *args: str) -> list[dict[str, Any]]:
    return json.loads(run(db, "log", "--json", *args))


def version(db: str) -> int:
    with Tracker(db) as t:
        return t.load(t.campaign_id(None)).version


def battle_open(db: str) -> bool:
    with Tracker(db) as t:
        return "1" in t.load(t.campaign_id(None)).battles


def fight(db: str) -> list[int]:
    """Battle 1 fought to its end one `battle step` a command (a fresh tracker each, as the
    command line runs them, none of which reads the views): the event before each step."""
    before = []
    while battle_open(db):
        before.append(version(db))
        run(db, "battle", "step", "1")
        assert len(before) < 100, "battle 1 never ends"
    return before


def projected_to(db: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT notification_id FROM tracker_projection_tracking").fetchone()[0])


@pytest.fixture(scope="module")
def fought_again_once(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Germany's naval battle in the Central North Sea fought to its end, the views read after
    it; an override undo takes back its later steps (RK3) and it is fought again, the views read
    only at the end (a log, in a later process). Played once for the module: `fought_again`."""
    db = str(tmp_path_factory.mktemp("fought") / "z.db")
    with Tracker(db) as t:
        cid = t.create("z", "north-sea-1914", dice="auto", seed=SEED).id
        perform_until(t, cid, "Germany", "naval_combat")
    run(db, "battle", "start", "--zone", CNS)
    steps = fight(db)
    assert len(steps) >= 4
    ended = log(db)[-1]
    assert ended["kind"] == "BattleEnded" and projected_to(db) == ended["seq"]
    run(
        db,
        *("undo", "--to", str(steps[len(steps) // 2]), "--override", "--reason", "misread", "--yes"),
        *("--agreed-by", "Britain", "--agreed-by", "Germany"),
    )
    assert battle_open(db)
    fight(db)
    assert projected_to(db) == ended["seq"], "the views are read only now, from where they stopped"
    return db


@pytest.fixture
def fought_again(fought_again_once: str, tmp_path: Path) -> str:
    """`fought_again_once`, a copy of the test's own (tests read its views, rebuild them or
    change a row): SQLite's backup of the file as it stands, its write-ahead log included."""
    db = str(tmp_path / "z.db")
    source, copy = sqlite3.connect(fought_again_once), sqlite3.connect(db)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()
    return db


def test_rk3_log_zone_finds_a_battle_fought_again_after_an_override_undo(fought_again: str) -> None:
    db = fought_again
    undo = next(r for r in log(db) if r["kind"] == "ActionUndone")
    again = [r for r in log(db, "--battle", "1") if r["seq"] > undo["seq"]]
    assert again and again[-1]["kind"] == "BattleEnded"
    recorded = {r["seq"] for r in again if r["kind"] not in LINKED}
    assert all(r["zones"] == [CNS] for r in again if r["seq"] in recorded), again
    in_zone = log(db, "--zone", CNS)
    assert recorded <= {r["seq"] for r in in_zone}
    run(db, "projections", "rebuild")
    assert in_zone == log(db, "--zone", CNS)


def test_rk3_verify_projections_is_ok_after_a_battle_fought_again(fought_again: str) -> None:
    log(fought_again)
    out = run(fought_again, "verify", "--projections")
    assert out.startswith("OK:") and "view rows match a rebuild of the log" in out


def test_rk3_verify_projections_names_an_index_row_that_lost_its_battles_zone(fought_again: str) -> None:
    """What the projector got wrong, as `verify --projections` reports it: the first row that
    differs from a rebuild."""
    db = fought_again
    undo = next(r for r in log(db) if r["kind"] == "ActionUndone")
    seq = next(r["seq"] for r in log(db, "--battle", "1") if r["seq"] > undo["seq"] and r["kind"] == "UnitHit")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tracker_event_index SET zones = '' WHERE seq >= ? AND kind = 'UnitHit'", (seq,))
    out = run(db, "verify", "--projections", code=1)
    assert f"projection tracker_event_index differs from a rebuild of the log at event {seq}:" in out


# ----- views resumed at any event equal a rebuild -----


def _views(t: Tracker, cid: UUID, resume_at: int | None) -> dict[str, list[tuple[Any, ...]]]:
    """The campaign's views projected afresh into a scratch database: up to event `resume_at`
    by one projector, the rest by another that resumes from the stored state, as the next
    command line process does (none: in one go, a rebuild)."""
    recorder = t.recorder

    def notifications(upto: int | None) -> Callable[[int, int], list[Any]]:
        def select(start: int, limit: int) -> list[Any]:
            found = recorder.select_notifications(start, limit)
            return found if upto is None else [n for n in found if n.originator_version <= upto]

        return select

    scratch = create_engine("sqlite://", poolclass=StaticPool)
    try:
        for upto in (resume_at, None):
            BoardProjector(
                scratch, notifications(upto), t.app.event_from_stored, lambda c, v: t.load(c, version=v)
            ).catch_up()
        with scratch.connect() as conn:
            return {name: [r for r in rows if str(cid) in map(str, r)] for name, rows in dump(conn).items()}
    finally:
        scratch.dispose()


def _resumed_anywhere_equal_a_rebuild(db: str, first: int) -> None:
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        last = t.load(cid).version
        rebuilt = _views(t, cid, None)
        assert max(r[1] for r in rebuilt["tracker_event_index"]) == last
        differ = [k for k in range(first, last) if _views(t, cid, k) != rebuilt]
    assert not differ, f"views resumed after these events differ from a rebuild: {differ}"


def test_rk3_views_resumed_at_any_event_of_a_battle_fought_again_equal_a_rebuild(fought_again: str) -> None:
    battle = [r["seq"] for r in log(fought_again, "--battle", "1")]
    _resumed_anywhere_equal_a_rebuild(fought_again, battle[0] - 1)


def test_rk3_rk4_ad1_views_resumed_at_any_event_equal_a_rebuild(tmp_path: Path) -> None:
    """An adjustment handing over a territory (AD1: the index names its old owner), a battle's
    search rolled, taken back by an override undo and rolled again (a reroll, RK3), the undo of
    the next step redone (RK4), and a battle taken back after its end and fought on again."""
    db = str(tmp_path / "r.db")
    with Tracker(db) as t:
        cid = t.create("r", "north-sea-1914", dice="auto", seed=SEED).id
        perform_until(t, cid, "Germany", "naval_combat")
    run(db, "adjust", "--owner", "Flanders=Germany", "--reason", "the army takes Antwerp")
    run(db, "battle", "start", "--zone", CNS)
    run(db, "battle", "step", "1")
    run(db, "undo", "--override", "--reason", "misread", "--agreed-by", "Britain", "--agreed-by", "Germany")
    run(db, "battle", "step", "1")
    run(db, "battle", "step", "1")
    run(db, "undo", "--override", "--reason", "wrong", "--agreed-by", "Britain", "--agreed-by", "Germany")
    run(db, "redo")
    steps = fight(db)
    run(db, "undo", "--to", str(steps[-2]), "--override", "--reason", "x", "--agreed-by", "Britain,Germany", "--yes")
    fight(db)
    kinds = {r["kind"] for r in log(db)}
    assert {"Adjusted", "DiceRerolled", "ActionRedone", "BattleEnded"} <= kinds, kinds
    _resumed_anywhere_equal_a_rebuild(db, 2)
