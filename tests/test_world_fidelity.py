"""Defects found by playing the world map (great-war-1914) with the fidelity state machine
(tests/test_fidelity_stateful.py, `WorldFidelity`) and by hand: each test names its rule.

Campaigns are played through the application service on a fresh SQLite file, manual dice.
"""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest

from domain.campaign import Campaign
from domain.errors import RuleViolation
from tracker.service.application import Tracker
from tracker.service.describe import quoted
from tracker.service.verify import verify_campaign

WORLD = "great-war-1914"


def walk(t: Tracker, cid: UUID, stop: tuple[int, str, str]) -> Campaign:
    """`next` recorded (convoy attacks passed, CV1) up to `stop`: round, nation, phase."""
    c = t.load(cid)
    while (c.round, c.nation, c.phase) != stop:
        for nation in c.convoy_attacks_open():
            t.perform(cid, "convoy pass", {"by": nation})
        c = t.perform(cid, "next", {}).campaign
    return c


def test_rk3_an_undo_is_no_answer_of_the_side_whose_turn_it_opened(tmp_path: Path) -> None:
    """RK3: Japan ends its turn (`next` passes over the neutral United States, F8, and opens
    Germany's round 2), takes that back, then takes back its own `next` before it. Nothing of
    the other side answered: the undo recorded in Germany's turn is no answer, so no override
    is asked (it was: "answered by Germany at event N", N the undo itself)."""
    with Tracker(str(tmp_path / "world.db")) as t:
        cid = t.create("world", WORLD, dice="manual").id
        walk(t, cid, (1, "Japan", "placement"))
        t.perform(cid, "next", {})  # Japan: placement -> collect_resources
        c = t.perform(cid, "next", {}).campaign  # Japan collects; round 2 opens with Germany
        assert (c.round, c.nation, c.phase) == (2, "Germany", "research")
        c = t.perform(cid, "undo", {}).campaign
        assert (c.round, c.nation, c.phase) == (1, "Japan", "collect_resources")
        c = t.perform(cid, "undo", {}).campaign
        assert (c.round, c.nation, c.phase) == (1, "Japan", "placement")
        report = verify_campaign(t, cid)
        assert report.ok, report.problem


def test_rk3_an_answer_of_the_other_side_still_locks_after_an_undo(tmp_path: Path) -> None:
    """RK3, the other way round: what the other side answered stays locked, an undo after it or
    not. Britain's trade lies among a German U-boat; Britain opens collect_resources, Germany
    passes (CV1), Britain ends the phase and takes that back: going back before the pass
    still needs an override, named for Germany's answer."""
    with Tracker(str(tmp_path / "world.db")) as t:
        cid = t.create("world", WORLD, dice="manual").id
        walk(t, cid, (1, "Britain", "placement"))
        t.perform(cid, "adjust", {"reason": "a U-boat off Ireland", "add": ["Germany:submarine:Western Approaches"]})
        before = t.load(cid).version
        t.perform(cid, "next", {})  # Britain: placement -> collect_resources
        passed = t.perform(cid, "convoy pass", {"by": "Germany"}).events[0].originator_version
        t.perform(cid, "next", {})
        t.perform(cid, "undo", {})
        with pytest.raises(RuleViolation) as refused:
            t.perform(cid, "undo", {"to": before})
        assert refused.value.rule == "RK3"
        assert f"answered by Germany at event {passed - 1}" in str(refused.value)


def test_t4_pu2_the_command_a_refused_next_names_in_placement_is_accepted(tmp_path: Path) -> None:
    """T4, PU2: Japan bought a destroyer and a fighter, then lost every port (AD1): the fighter
    still has a place (a friendly carrier), the destroyer none. A refused `next` names the
    command that closes the phase; that command is accepted. It named `next --confirm-losses`
    (the destroyer's, listed first), refused again with the same words while the fighter
    waited."""
    with Tracker(str(tmp_path / "world.db")) as t:
        cid = t.create("world", WORLD, dice="manual").id
        walk(t, cid, (1, "Japan", "purchase"))
        t.perform(cid, "adjust", {"reason": "a war loan", "resources": ["Japan=20"]})
        t.perform(cid, "buy", {"unit_type": "destroyer"})
        t.perform(cid, "buy", {"unit_type": "fighter"})
        walk(t, cid, (1, "Japan", "placement"))
        ports = ["Japan=Germany", "Korea=Germany", "Kwantung=Germany"]
        c = t.perform(cid, "adjust", {"reason": "every port lost", "owner": ports}).campaign
        first = c.pending()[0]
        assert (first["kind"], first["unit_type"]) == ("unplaced", "fighter")
        with pytest.raises(RuleViolation) as refused:
            t.perform(cid, "next", {"confirm_losses": True})
        assert refused.value.rule == "T4"
        named = str(refused.value).split("to close it: ")[1]
        assert named.startswith(f"tracker place fighter --at {quoted(first['legal'][0])}"), named
        t.perform(cid, "place", {"unit_type": "fighter", "zone": first["legal"][0]})
        c = t.perform(cid, "next", {"confirm_losses": True}).campaign  # the destroyer given up
        assert (c.nation, c.phase) == ("Japan", "collect_resources")
        report = verify_campaign(t, cid)
        assert report.ok, report.problem


def test_rk3_a_log_recorded_before_the_key_imports_and_verifies(tmp_path: Path) -> None:
    """RK3 (`[record] undos_answer_nothing`): a campaign recorded before the key keeps the
    reading it was refereed by. The fixture is the export of a campaign played by the tracker
    before the key: Austria-Hungary ended its turn, took that back, and took its own `next`
    back with an override agreed by Britain, as the referee then asked (its undo, recorded in
    France's turn, counted as France's answer); the override's recorded locks re-referee."""
    import gzip

    from click.testing import CliRunner

    from tracker.cli.main import cli

    export = tmp_path / "old.jsonl"
    fixture = Path(__file__).parent / "fixtures" / "undo-counted-as-answer.jsonl.gz"
    export.write_bytes(gzip.decompress(fixture.read_bytes()))
    db = str(tmp_path / "old.db")
    assert CliRunner().invoke(cli, ["--db", db, "import", str(export)]).exit_code == 0
    result = CliRunner().invoke(cli, ["--db", db, "verify"])
    assert result.exit_code == 0 and "Re-refereed" in result.output, result.output
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert not c.ruleset.undos_answer_nothing
        assert "undos_answer_nothing" not in c.ruleset_data["record"]
