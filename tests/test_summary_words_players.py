"""The words of event summaries and of a few refusals as a player reads them: hits lost named
as the hits of the nation placing them (HA7), no opening fire said as such (NC2), NTR destroyed
with their owner's possessive (CV5), aircraft shot down rather than sunk, unit IDs in the order
a player counts them (GB-BB8 before GB-BB10) where the order is no rule's; and refusals that
read as English (CV1, NC1), a nation with spaces typed unquoted without a campaign, and a convoy
position with no NTR to attack (CV1).

Only the lines shown change: what an event records is left as it was recorded."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from domain.campaign import Campaign
from domain.dice import commitment, new_seed
from domain.errors import RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from projections.summary import summary_of_kind
from tests.support import advance as advance_passing
from tracker.cli.main import cli

CNS = "Central North Sea"


def said(kind: str, **fields: Any) -> str:
    return summary_of_kind(kind)(SimpleNamespace(**fields))


# ----- summaries -----


def test_ha7_hits_lost_are_the_hits_of_the_nation_placing_them_that_no_unit_may_take() -> None:
    lost = {"battle": 4, "side": "defender", "nation": "Britain", "rule": "HA7"}
    assert (
        said("HitsLost", hits=3, **lost)
        == "battle 4: 3 hits for Britain to place are lost: no unit there may take them"
    )
    assert said("HitsLost", hits=1, **lost) == "battle 4: 1 hit for Britain to place is lost: no unit there may take it"


def test_nc2_when_no_submarine_fires_first_the_line_says_there_is_no_opening_fire() -> None:
    fire = {"battle": 2, "side": "attacker", "nation": "Germany", "rule": "NC2"}
    text = said("OpeningFire", firing=[], cancelled=["DE-SS2", "DE-SS1"], escorts=["GB-DD1", "GB-DD2"], **fire)
    assert text == (
        "battle 2: no opening fire by the submarines of Germany; cancelled for DE-SS1, DE-SS2 by GB-DD1, GB-DD2 "
        "(NC2: one escort for each submarine)"
    )
    assert said("OpeningFire", firing=[], cancelled=[], escorts=[], **fire) == (
        "battle 2: no opening fire by the submarines of Germany"
    )
    assert said("OpeningFire", firing=["DE-SS1"], cancelled=[], escorts=[], **fire) == (
        "battle 2: opening fire for DE-SS1 of Germany"
    )


@pytest.mark.parametrize(
    ("nation", "count", "rolled", "expected"),
    [
        ("Britain", 1, 1, "battle 3: 1 of Britain's NTR destroyed in Central North Sea"),
        ("United States", 2, 4, "battle 3: 2 of United States' NTR destroyed in Central North Sea (rolled 4, capped"),
    ],
)
def test_cv5_ntr_destroyed_are_named_as_their_owners(nation: str, count: int, rolled: int, expected: str) -> None:
    text = said("NtrDestroyed", battle=3, nation=nation, zone=CNS, count=count, rolled=rolled)
    assert text.startswith(expected)


def test_an_aircraft_hit_is_shot_down_and_a_ship_sunk() -> None:
    assert said("UnitHit", battle=3, unit="GB-FT1", sunk=True, rule="CV4") == "GB-FT1 shot down in battle 3"
    assert said("UnitHit", battle=3, unit="DE-BM12", sunk=True, rule="NC3") == "DE-BM12 shot down in battle 3"
    assert said("UnitHit", battle=3, unit="GB-BB1", sunk=True, rule="NC3") == "GB-BB1 sunk in battle 3"
    assert said("UnitHit", battle=3, unit="GB-BB1", sunk=False, rule="NC3") == "GB-BB1 damaged in battle 3"


def test_unit_ids_are_shown_in_number_order_and_recorded_as_they_were() -> None:
    units = ["GB-BB10", "GB-BB8", "GB-BB9"]  # as `sorted` records them (and the dice roll)
    moved = SimpleNamespace(nation="Britain", units=units, path=[CNS, "Skagerrak"], hostile_passed=[], carried=[])
    assert (
        summary_of_kind("UnitsMoved")(moved) == "Britain moves GB-BB8, GB-BB9, GB-BB10: Central North Sea -> Skagerrak"
    )
    assert units == ["GB-BB10", "GB-BB8", "GB-BB9"]
    started = said(
        "NavalBattleStarted",
        battle=1,
        zone=CNS,
        nation="Germany",
        defender="Britain",
        attackers=["DE-SS1"],
        defenders=units,
    )
    assert started.endswith("attacks Britain (GB-BB8, GB-BB9, GB-BB10)")
    ended = said("BattleEnded", battle=1, rule="NC1", survivors=["DE-DD10", "DE-DD2"], reason="")
    assert ended.endswith("still there: DE-DD2, DE-DD10")
    targets = said(
        "TargetsChosen", battle=1, nation="Germany", targets={"DE-SS10": "GB-BB8", "DE-SS9": "GB-BB10"}, default=True
    )
    assert targets == "battle 1: Germany targets DE-SS9 -> GB-BB10, DE-SS10 -> GB-BB8 (default)"


def test_ha7_cv4_an_order_a_rule_gives_is_shown_as_recorded() -> None:
    # HA7: hits are placed one at a time in the owner's order (it decides what is lost);
    # CV4: searchers named before the amendment roll in the order named.
    chosen = said("CasualtiesChosen", battle=1, nation="Britain", units=["GB-SS3", "GB-CA1"], default=False)
    assert chosen == "battle 1: Britain takes hits on GB-SS3, GB-CA1 (chosen)"
    assert said("SearchersChosen", battle=1, units=["GB-DD2", "GB-CA1"]) == "battle 1: searchers GB-DD2, GB-CA1"


# ----- refusals -----


def convoy_campaign() -> Campaign:
    """North Sea 1914 at round 1, Britain's collect_resources phase."""
    _, ruleset = load_ruleset("twtea-3e")
    scenario, _ = read_scenario("north-sea-1914")
    c = Campaign.create(uuid.uuid4(), "t", scenario, ruleset, "manual", commitment(new_seed()))
    while not (c.nation == "Britain" and c.phase == "collect_resources"):
        advance_passing(c)
    return c


def test_cv1_a_submarine_not_the_attackers_is_refused_in_words() -> None:
    c = convoy_campaign()
    before = len(c.pending_events)
    with pytest.raises(RuleViolation) as refused:
        c.declare_convoy_attack("Germany", CNS, ["GB-DD1"])
    assert refused.value.rule == "CV1"
    assert refused.value.reason.startswith(f"GB-DD1 is not one of Germany's submarines in {CNS} (there: ")
    assert len(c.pending_events) == before


def run_without_campaign(tmp_path: Path, words: list[str]) -> Any:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return CliRunner().invoke(cli, words, env={"TRACKER_DB": None, "TRACKER_SERVER": None})
    finally:
        os.chdir(cwd)


def test_a_built_in_nation_with_spaces_typed_unquoted_is_said_how_to_quote(tmp_path: Path) -> None:
    words = ["odds", "naval", "--attacker", "United", "States:destroyer=1", "--defender", "Germany:destroyer=1"]
    result = run_without_campaign(tmp_path, words)
    assert result.exit_code == 2, result.output
    assert "a name with spaces is one word when quoted: 'United States:destroyer=1'" in result.output
    assert list(tmp_path.iterdir()) == [], "no database left behind"


def test_cv1_a_convoy_position_without_ntr_is_refused(tmp_path: Path) -> None:
    words = ["odds", "convoy", "--attacker", "Germany:submarine=1", "--defender", "Britain", "--ntr", "0"]
    result = run_without_campaign(tmp_path, words)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert lines == [
        "Error: --ntr 0 leaves nothing to attack: a convoy attack is made where the defender has NTR (CV1)"
    ]
    good = run_without_campaign(tmp_path, [*words[:-1], "1"])
    assert good.exit_code == 0, good.output
