"""`verify` (and an import) run every recorded action again through the referee, in this
process, one campaign after another. The referee keeps the state each step left under the
last event's hash, and a re-run records placeholders instead of hashes: those must name one
event in the whole process, or a second campaign's re-run would pick up the state a first
campaign's left (the same battle number, the same units) and refuse a log that is right."""

from __future__ import annotations

import shutil
from pathlib import Path

from domain.chain import event_hash, unhashed
from tests.test_battle_command_fuzz import template
from tracker.service.application import Tracker
from tracker.service.verify import verify_campaign


def test_rk2_a_placeholder_names_one_event_across_reruns() -> None:
    with unhashed():
        first = event_hash("0" * 64, "TargetsChosen", 1, None, {})  # type: ignore[arg-type]
    with unhashed():
        second = event_hash("0" * 64, "TargetsChosen", 1, None, {})  # type: ignore[arg-type]
    assert first != second


def test_rk2_verifying_two_campaigns_alike_in_one_process_reads_each_ones_own_battle(tmp_path: Path) -> None:
    db, _keys = template(tmp_path, "naval", serve=False)
    # Two copies of one naval battle (HA1: Germany's submarines pick targets first), each
    # picking other targets and fighting the rest by default; the second undoes its choice
    # (RK3) and makes it again first, so its log is longer: as the referee runs it again, the
    # step it starts from falls where the first campaign's run left a later step.
    a = [("battle targets", "DE-SS1=GB-BB3,DE-SS2=GB-BB3")]
    b = [
        ("battle targets", "DE-SS1=GB-DD1,DE-SS2=GB-DD2"),
        ("undo", ""),
        ("battle targets", "DE-SS1=GB-DD1,DE-SS2=GB-DD2"),
    ]
    copies = {}
    for name, asked in {"a": a, "b": b}.items():
        copy = tmp_path / f"{name}.db"
        shutil.copyfile(db, copy)
        with Tracker(str(copy)) as t:
            cid = t.campaign_id(None)
            for action, targets in asked:
                inputs = {"battle": 1, "nation": "Germany", "targets": targets} if targets else {}
                t.perform(cid, action, inputs)
            t.perform(cid, "battle auto", {"battle": 1})
        copies[name] = copy
    for name, copy in copies.items():
        with Tracker(str(copy)) as t:
            report = verify_campaign(t, t.campaign_id(None))
            assert report.ok, (name, report.problem)
            assert report.actions_refereed >= 2
