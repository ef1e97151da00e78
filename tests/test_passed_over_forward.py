"""F8, AD1: a national turn is passed over only if its nation was neutral when `next` went past
it. A nation whose entry an adjustment brought forward plays its turns after the adjustment:
`Tracker.passed_over` does not call them passed over, and a turn passed over after one of them
points to it as the turn played last before it (whose log holds its TurnPassedOver)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import cli_on
from tests.test_scenario_tools import NORTH_SEA, edited
from tracker.service.application import Tracker


def _step(c: Any, _dice: Any) -> None:
    opened = c.convoy_attacks_open()
    if opened:
        c.convoy_pass(next(iter(opened)))
    else:
        c.advance()


def test_f8_ad1_a_turn_passed_over_after_an_early_entrants_turn_points_to_it(tmp_path: Path) -> None:
    # North Sea with Austria-Hungary and France (3rd and 4th of four) neutral until round 3;
    # Austria-Hungary enters by an adjustment in Germany's turn 1, France stays neutral.
    text = edited(NORTH_SEA, "[nations.Austria-Hungary]\n", "[nations.Austria-Hungary]\nentry_round = 3\n")
    scenario = tmp_path / "late.toml"
    scenario.write_text(edited(text, "[nations.France]\n", "[nations.France]\nentry_round = 3\n"))
    db = str(tmp_path / "late.db")
    run = cli_on(db)
    run("new", "late", "--scenario", str(scenario))
    run("adjust", "--enter", "Austria-Hungary", "--reason", "an early entry")
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        while (c := t.load(cid)).round < 2:
            t.execute(cid, _step)
        assert (c.round, c.nation) == (2, "Germany")
        # Austria-Hungary played turn 3; France's turn 4 was passed over in the log of turn 3.
        assert t.passed_over(cid, 3) is None
        said = t.passed_over(cid, 4)
        assert said is not None and (said.nation, said.played) == ("France", 3)
    kinds = [r["kind"] for r in json.loads(run("log", "--turn", "3", "--json"))]
    assert "TurnPassedOver" in kinds and "PhaseAdvanced" in kinds
    refused = run("state", "--turn", "4", code=2)
    assert "the board then is turn 3's: tracker state --turn 3" in refused, refused
    assert run("state", "--turn", "3").startswith("late · Round 1 · end of turn 3 · Austria-Hungary")


def test_f8_ad1_great_war_italys_turn_after_its_adjusted_entry_is_not_passed_over(tmp_path: Path) -> None:
    # The demo brings Italy's entry (round 4) forward in round 2, before Italy's turn 16.
    db = str(tmp_path / "demo.db")
    run = cli_on(db)
    run("demo", "--scenario", "great-war-1914")
    assert "turn 16 · Italy" in run("state").splitlines()[0]
    while "turn 16 · Italy" in run("state").splitlines()[0]:
        run("next")
    with Tracker(db) as t:
        cid = t.campaign_id(None)
        assert t.passed_over(cid, 16) is None
        # Italy's turn of round 1, before the adjustment, was passed over all the same.
        said = t.passed_over(cid, 7)
        assert said is not None and (said.nation, said.played) == ("Italy", 6)
    assert run("state", "--turn", "16").startswith("demo · Round 2 · end of turn 16 · Italy")
    assert "Italy collects" in run("log", "--turn", "16")
    assert run("report", "--turn", "16").startswith("# demo: Turn 16: Italy, round 2")
