"""What the game waits for: the domain states facts, the tracker puts them into words.

`Campaign.waiting_facts` is plain data (names, numbers, lists); `tracker.describe` turns it into
the sentences of `pending`, of the gates of `next` and of refusals. The domain never imports the
tracker, and without the tracker's words it still names the facts.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from domain.campaign import Campaign
from domain.campaign.waiting import PlainDescriber
from domain.dice import commitment, new_seed
from domain.errors import RuleViolation
from domain.ruleset import load_ruleset
from domain.scenario import read_scenario
from tests.support import advance
from tracker.service.describe import EnglishDescriber

_, RULESET = load_ruleset("twtea-3e")
SCENARIO, _ = read_scenario("north-sea-1914")
HB = "Heligoland Bight"
DOMAIN = Path(__file__).resolve().parent.parent / "domain"


def asw_search_waiting() -> tuple[Campaign, int]:
    """Germany's naval_combat phase, an ASW combat in the Heligoland Bight at its search (AS2)."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    while c.phase != "naval_combat":
        advance(c)
    return c, c.asw_start("Germany", HB)


def test_no_domain_module_imports_the_tracker() -> None:
    for path in DOMAIN.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not [n for n in names if n == "tracker" or n.startswith("tracker.")], path


def test_the_domain_loads_without_the_tracker() -> None:
    code = "import sys, domain.campaign; print([m for m in sys.modules if m.split('.')[0] == 'tracker'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_as2_waiting_facts_are_plain_data_with_each_searchers_target_number() -> None:
    c, b = asw_search_waiting()
    facts = c.waiting_facts(c.battles[str(b)])
    assert json.loads(json.dumps(facts)) == facts
    assert facts == {
        "battle": b,
        "kind": "asw",
        "zone": HB,
        "step": "search",
        "waiting": ["Germany"],
        "rule": "AS2",
        "attacker": "Germany",
        "defender": "Britain",
        "submarines": ["GB-SS1", "GB-SS2"],
        "searchers": [
            {"unit": "DE-CA1", "target": 2},
            {"unit": "DE-DD1", "target": 2},
            {"unit": "DE-DD2", "target": 2},
        ],
        "dice": {"count": 6},
    }


def test_as2_pending_reads_the_trackers_sentence_for_those_facts() -> None:
    c, b = asw_search_waiting()
    (item,) = c.pending()
    assert item["text"] == EnglishDescriber().item(c.waiting_facts(c.battles[str(b)]))
    assert item["text"] == (
        f"battle {b} (asw, {HB}): waiting for Germany to choose the units searching for GB-SS1, GB-SS2, each "
        "rolling once per submarine (eligible: DE-CA1 at 2, DE-DD1 at 2, DE-DD2 at 2; default: all, 6 dice in "
        "the order listed, a unit's die against each submarine before the next unit's: DE-CA1 v GB-SS1, "
        "DE-CA1 v GB-SS2, DE-DD1 v GB-SS1, ...) [AS2]"
    )


def test_t4_without_the_trackers_words_the_domain_names_the_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Campaign, "describer", PlainDescriber())
    c, b = asw_search_waiting()
    assert c.pending()[0]["text"] == f"battle {b} (asw, {HB}): waiting for Germany: search [AS2]"
    with pytest.raises(RuleViolation) as refused:
        c.advance()
    assert refused.value.rule == "T4"
    assert f"battle {b} (asw, {HB}): waiting for Germany: search [AS2]" in str(refused.value)


def test_f7_a_stranded_air_unit_is_told_to_land_in_range_not_that_it_cannot() -> None:
    """DE-BM1 flew two of its six zones into the Heligoland Bight: it has no place to land where
    it is, but one within its range; the gate must not say it cannot land (a player would
    confirm a loss that a move avoids)."""
    c = Campaign.create(uuid.uuid4(), "t", SCENARIO, RULESET, "manual", commitment(new_seed()))
    while c.phase != "combat_movement":
        advance(c)
    c.move("Germany", ["DE-BM1"], ["Northern Germany", HB])
    while c.phase != "noncombat_movement":
        advance(c)
    (item,) = [i for i in c.pending() if i["kind"] == "air_landing"]
    assert item["text"] == (
        "DE-BM1 must land by the end of noncombat movement, on a territory of its side or a carrier with "
        "room, and is not on one: move it there within the range left, or confirm the loss [F7]"
    )
    assert "cannot land" not in item["text"]


def test_f7_the_landing_command_names_the_one_stranded_air_unit() -> None:
    # It was "tracker move UNIT --to ZONE" with the unit's ID known and one alone to move.
    from tracker.service.describe import command

    item = {"battle": None, "kind": "air_landing", "step": "", "zone": None, "units": ["DE-BM1"]}
    assert command(item) == "tracker move DE-BM1 --to ZONE, or tracker next --confirm-losses"
    several = {**item, "units": ["DE-BM1", "DE-FT1"]}
    assert command(several) == "tracker move UNIT --to ZONE, or tracker next --confirm-losses"


def test_sm2_the_interception_search_says_the_enemy_may_choose_no_searcher() -> None:
    # It said "default: all; none may search", which reads as a prohibition.
    facts = {
        "kind": "interception",
        "step": "search",
        "waiting": ["Britain"],
        "rule": "SM2",
        "attacker": "Germany",
        "submarines": ["DE-SS4"],
        "searchers": [{"unit": "GB-DD6", "target": 2}],
    }
    assert EnglishDescriber().waiting(facts) == (
        "waiting for Britain to choose which units search for Germany's DE-SS4 passing through "
        "(eligible: GB-DD6 at 2; default: all, or none at all) [SM2]"
    )


@pytest.mark.parametrize(
    ("decision", "hint"),
    [
        (
            {"submerge": ["DE-SS1"], "retreat": ["Skagerrak"]},
            "tracker battle decide 4 [--submerge S1] [--retreat-to ZONE]",
        ),
        ({"submerge": ["GB-SS1"], "retreat": []}, "tracker battle decide 4 [--submerge S1]"),
        ({"submerge": [], "retreat": ["Skagerrak"]}, "tracker battle decide 4 [--retreat-to ZONE]"),
    ],
)
def test_nc4_nc1_battle_decide_offers_only_the_options_the_nation_has(
    decision: dict[str, list[str]], hint: str
) -> None:
    # NC1: only the attacker may retreat; NC4: only a side with submarines there may submerge.
    from tracker.service.describe import command

    item = {"battle": 4, "step": "decide", "kind": "naval", "waiting": ["Britain"], "decisions": {"Britain": decision}}
    assert command(item) == hint


@pytest.mark.parametrize(
    ("free", "said"),
    [
        (["DE-SS1"], "whether DE-SS1 goes on to Dover Strait or stops in Southern North Sea"),
        (["DE-SS1", "DE-SS2"], "whether DE-SS1, DE-SS2 go on to Dover Strait or stop in Southern North Sea"),
    ],
)
def test_sm5_the_continue_step_agrees_with_how_many_submarines_go_on(free: list[str], said: str) -> None:
    """One submarine read "whether DE-SS1 go on to ...": the verb follows the count."""
    from tracker.service.describe import _procedure_step

    facts = {"step": "continue", "kind": "interception", "free": free, "destination": "Dover Strait"}
    assert said in _procedure_step({**facts, "zone": "Southern North Sea"})
