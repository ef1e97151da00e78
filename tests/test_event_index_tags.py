"""The event index behind `log --battle`, `replay --battle` and `log --nation`:

- a reroll (RK3) belongs to the battle of the roll it makes again, an undo (RK3) or a redo (RK4)
  to the battle of the events it takes back or records again, and typed dice accepted (D4) to
  the battle of the roll they are typed for; they were listed with no battle;
- a choice a nation makes for its side names its allies' units too (CV3, AS2: a pooled search;
  NC1, F5, HA7): `log --nation` finds it by their nations. A search with French bombers was
  found only by the nation whose turn it was.

The battle is the same however the log was paged when it was projected (a row of an earlier
page is read from the database, one of the same page from memory)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, select
from sqlalchemy.pool import StaticPool

from domain.campaign import Campaign
from projections.board import BoardProjector
from projections.rows import UNIT_FIELDS
from projections.schema import event_index
from tests.support import perform_until
from tracker.cli.main import cli
from tracker.service.application import Tracker

CNS = "Central North Sea"


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def log(db: str, *args: str) -> list[dict[str, Any]]:
    return json.loads(run(db, "log", "--json", *args))


def kinds(db: str, *args: str) -> list[tuple[int, str]]:
    return [(r["seq"], r["kind"]) for r in log(db, *args)]


def convoy_battle(db: str, dice: str) -> None:
    """Germany's convoy attack on Britain's NTR in the Central North Sea (battle 1), at
    Britain's merchant defence roll."""
    run(db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", dice)
    with Tracker(db) as t:
        perform_until(t, t.campaign_id(None), "Britain", "collect_resources")
    if dice == "manual":
        # A French destroyer with the convoy, besides the French bomber in range (CV3).
        run(db, "adjust", f"--add=France:destroyer:{CNS}", "--reason", "French escort")
    run(db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1,DE-SS2")


def played(db: str, *args: str) -> None:
    """Record a command and read the log: the views follow the log command by command, as in
    play (the rows an undo or a reroll takes its battle from are then in an earlier page)."""
    run(db, *args)
    log(db)


@pytest.fixture
def rerolled(tmp_path: Path) -> str:
    """Battle 1's merchant defence rolled, taken back by an override undo and rolled again (a
    reroll, RK3); then the search, undone and redone (RK4); auto dice, so the reroll may sink a
    submarine (CV2)."""
    db = str(tmp_path / "r.db")
    convoy_battle(db, "auto")
    played(db, "convoy", "roll", "1")
    played(db, "undo", "--override", "--reason", "misread", "--agreed-by", "Germany")
    played(db, "convoy", "roll", "1")
    with Tracker(db) as t:
        step = t.load(t.campaign_id(None)).battles["1"]["step"]
    if step == "merchant_casualty":
        # A total of 20 (CV2, one roll in a hundred) sinks a submarine; Germany picks it first.
        played(db, "convoy", "casualties", "1")
    played(db, "convoy", "search", "1")
    played(db, "undo", "--override", "--reason", "wrong units", "--agreed-by", "Germany")
    played(db, "redo")
    return db


def test_rk3_rk4_log_battle_lists_the_reroll_the_undos_and_the_redo(rerolled: str) -> None:
    listed = kinds(rerolled, "--battle", "1")
    records = {r["kind"]: r for r in log(rerolled)}
    for kind in ("DiceRerolled", "ActionUndone", "ActionRedone"):
        assert (records[kind]["seq"], kind) in listed, kind
    assert [k for _, k in listed].count("ActionUndone") == 2
    # The undo lists after the events it took back, the reroll right after its roll.
    reroll = next(seq for seq, k in listed if k == "DiceRerolled")
    assert (reroll - 1, "DiceRolled") in listed


def test_rk3_replay_battle_shows_the_reroll_and_the_undo(rerolled: str) -> None:
    frames = json.loads(run(rerolled, "replay", "--battle", "1", "--json"))
    shown = [f["event"]["kind"] if "event" in f else f["kind"] for f in frames]
    assert {"DiceRerolled", "ActionUndone", "ActionRedone"} <= set(shown)


def test_rk3_an_undo_of_no_battle_event_has_no_battle(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    run(db, "new", "a", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "research", "advanced_asw")
    run(db, "undo", "--override", "--reason", "wrong tech", "--agreed-by", "Britain")
    run(db, "research", "advanced_asw")
    found = {r["kind"]: r for r in log(db)}
    assert found["DiceRerolled"]["battle"] is None and found["ActionUndone"]["battle"] is None
    assert not found["DiceRerolled"]["zones"] and not found["ActionUndone"]["zones"]


def test_rk3_verify_projections_stays_ok_with_rerolls(rerolled: str) -> None:
    out = run(rerolled, "verify", "--projections")
    assert out.startswith("OK:") and "view rows match a rebuild of the log" in out


def test_d4_typed_dice_accepted_in_a_battle_belong_to_it(tmp_path: Path) -> None:
    db = str(tmp_path / "d.db")
    convoy_battle(db, "auto")
    run(db, "convoy", "roll", "1", "--dice", "5,5", "--override", "--reason", "table dice", "--agreed-by", "Germany")
    assert "TypedDiceAccepted" in [k for _, k in kinds(db, "--battle", "1")]


def _index(t: Tracker, batch_size: int) -> list[tuple[Any, ...]]:
    """The event index of the campaign, projected afresh in pages of `batch_size` events."""
    recorder = t.recorder
    scratch = create_engine("sqlite://", poolclass=StaticPool)
    try:
        projector = BoardProjector(
            scratch,
            lambda start, limit: recorder.select_notifications(start, limit),
            t.app.event_from_stored,
            lambda cid, version: t.load(cid, version=version),
        )
        projector.catch_up(batch_size=batch_size)
        columns = [c for c in event_index.c if c.name != "c"]
        with scratch.connect() as conn:
            return [tuple(r) for r in conn.execute(select(*columns).order_by(event_index.c.seq))]
    finally:
        scratch.dispose()


def test_rk3_d4_the_battle_is_the_same_however_the_log_is_paged(rerolled: str) -> None:
    # The redo taken back: an undo of the search's events again.
    run(rerolled, "undo", "--override", "--reason", "again", "--agreed-by", "Germany")
    run(rerolled, "convoy", "search", "1", "--dice", "2,2,2,2,2,2", "--override", "--reason", "r",
        "--agreed-by", "Germany")  # fmt: skip
    with Tracker(rerolled) as t:
        whole, one_by_one = _index(t, 10_000), _index(t, 1)
    assert whole == one_by_one
    battle = event_index.c.keys().index("battle") - 1
    kind = event_index.c.keys().index("kind") - 1
    linked = {"DiceRerolled", "ActionUndone", "ActionRedone", "TypedDiceAccepted"}
    assert {r[kind] for r in whole if r[battle] == 1} >= linked
    assert all(r[battle] == 1 for r in whole if r[kind] in linked)
    # And the battle's zone, read from memory or from the database alike.
    zones = event_index.c.keys().index("zones") - 1
    assert {r[zones] for r in whole if r[kind] in linked} == {f"|{CNS}|"}


def test_rk3_rk4_d4_log_zone_finds_a_battles_reroll_undo_redo_and_typed_dice(rerolled: str) -> None:
    # They named no zone: `log --zone` and the viewer's zone filter missed them.
    run(rerolled, "undo", "--override", "--reason", "again", "--agreed-by", "Germany")
    run(rerolled, "convoy", "search", "1", "--dice", "2,2,2,2,2,2", "--override", "--reason", "r",
        "--agreed-by", "Germany")  # fmt: skip
    found = {k for _, k in kinds(rerolled, "--zone", CNS)}
    assert {"DiceRerolled", "ActionUndone", "ActionRedone", "TypedDiceAccepted"} <= found


@pytest.fixture
def allied(tmp_path: Path) -> str:
    """A convoy battle in which French units search with a British destroyer and fire, Britain
    choosing for them; Germany's submarines target the French destroyer (manual dice)."""
    db = str(tmp_path / "n.db")
    convoy_battle(db, "manual")
    run(db, "convoy", "roll", "1", "--dice", "1,1")
    run(db, "convoy", "search", "1", "--units", "FR-BM1,FR-DD3,GB-DD1", "--dice", "1,1,1")
    run(db, "battle", "targets", "1", "--nation", "Britain", "--targets", "FR-BM1=DE-SS1")
    run(db, "battle", "targets", "1", "--nation", "Germany", "--targets", "DE-SS1=FR-DD3,DE-SS2=FR-DD3")
    run(db, "battle", "screen", "1", "--screens", "DE-SS1=GB-DD1")
    run(db, "battle", "fire", "1", "--dice", "10,10,10,1,1")
    return db


def test_cv3_log_nation_finds_a_search_by_an_allys_units(allied: str) -> None:
    french = [k for _, k in kinds(allied, "--nation", "France")]
    assert {"SearchersChosen", "DetectionsRecorded"} <= set(french)


def test_cv4_log_nation_finds_targets_chosen_for_an_ally_not_by_the_units_shot_at(allied: str) -> None:
    chosen = [r for r in log(allied, "--nation", "France") if r["kind"] == "TargetsChosen"]
    # Britain's choice for the French bomber; not Germany's, though it aims at a French ship.
    assert [r["summary"] for r in chosen] == ["battle 1: Britain targets for France: FR-BM1 -> DE-SS1 (chosen)"]


def test_ha1_log_nation_finds_a_hit_by_the_firers_nation(allied: str) -> None:
    hits = [r["summary"] for r in log(allied, "--nation", "Germany") if r["kind"] == "TargetHit"]
    assert hits == ["battle 1: DE-SS1 hits GB-DD1, screening FR-DD3", "battle 1: DE-SS2 hits FR-DD3"]


def test_unit_fields_are_fields_of_their_events() -> None:
    for kind, fields in UNIT_FIELDS.items():
        cls = getattr(Campaign, kind)
        declared = {k for c in cls.__mro__ for k in vars(c).get("__annotations__", {})}
        assert {name for name, _ in fields} <= declared, kind


def test_nc1_ha1_log_nation_finds_an_allys_ships_in_a_naval_battle(tmp_path: Path) -> None:
    """A French cruiser with the British fleet: the battle's start names it among the defence,
    its escort cancels a U-boat's opening fire (NC2), Britain has it screen (HA1)."""
    db = str(tmp_path / "nb.db")
    run(db, "new", "n", "--scenario", "north-sea-1914", "--dice", "manual")
    with Tracker(db) as t:
        perform_until(t, t.campaign_id(None), "Germany", "naval_combat")
    run(db, "adjust", f"--add=France:cruiser:{CNS}", "--reason", "ally")
    run(db, "battle", "start", "--zone", CNS)
    run(db, "battle", "targets", "1", "--targets", "DE-SS1=GB-DD1,DE-SS2=GB-DD2")
    run(db, "battle", "screen", "1", "--screens", "DE-SS1=FR-CA2")
    french = [k for _, k in kinds(db, "--nation", "France", "--battle", "1")]
    assert french == ["NavalBattleStarted", "OpeningFire", "ScreeningChosen"]
