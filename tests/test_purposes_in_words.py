"""D3, TE1, NC1: the words the referee records were the IDs a command takes: a carrier's die was
for "GB-CV1 (aircraft_carrier) fires at ...", a research roll "for advanced_asw", and a naval
battle in which both sides lost their last units at once ended as "Germany has no unit left in
the battle", naming the attacking side alone.

As the ruleset stands (`[record] purposes_in_words`), they read as a person reads them: "GB-CV1
(aircraft carrier)", "research roll for Advanced ASW", "neither side has a unit left in the
battle". `verify` compares the recorded words exactly, so a campaign recorded before the key
keeps the IDs and the one side, and its log verifies as recorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from projections.summary import summary
from tests.support import recorded_before
from tracker.service.application import Tracker
from tracker.service.verify import verify_campaign

TWTEA = Path(__file__).parent.parent / "domain" / "data" / "rulesets" / "twtea-3e.toml"
KEY = "purposes_in_words"
NNS, WA = "Northern North Sea", "Western Approaches"


@pytest.fixture
def before_the_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """New campaigns record a ruleset without the key, as a release before it did."""
    recorded_before(monkeypatch, KEY)
    yield


def purposes(t: Tracker, cid: UUID) -> list[str]:
    return [e.purpose for e in t.events(cid) if type(e).__name__ == "DiceRolled"]


def research(t: Tracker, cid: UUID) -> None:
    """TE1: Germany's research roll for Advanced ASW (the campaign opens at its research)."""
    assert (t.load(cid).nation, t.load(cid).phase) == ("Germany", "research")
    t.perform(cid, "research", {"technology": "advanced_asw"}, ask=lambda _purpose, n, _sides: [2] * n)


def battle(t: Tracker, cid: UUID, zone: str, add: list[str]) -> Any:
    """Germany fights a naval battle in `zone` (units added there first, AD1), every die a hit,
    to its end; the battle's BattleEnded event."""
    t.perform(cid, "adjust", {"reason": "the fleets meet", "add": add})
    while t.load(cid).phase != "naval_combat":
        t.perform(cid, "next")
    t.perform(cid, "battle start", {"zone": zone})
    for _ in range(20):
        b = t.load(cid).battles.get("1")
        if b is None:
            break
        if b["step"].endswith("fire"):
            t.perform(cid, "battle fire", {"battle": 1}, ask=lambda _purpose, n, _sides: [1] * n)
        else:
            t.perform(cid, "battle step", {"battle": 1})
    return next(e for e in reversed(t.events(cid)) if type(e).__name__ == "BattleEnded")


def test_d3_a_carriers_die_names_its_type_in_words_and_verifies(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("words", "north-sea-1914", dice="manual").id
        assert t.load(cid).ruleset.purposes_in_words
        assert t.load(cid).ruleset_data["record"][KEY] is True
        battle(t, cid, NNS, [f"Germany:cruiser:{NNS}"])
        said = purposes(t, cid)
        assert "GB-CV1 (aircraft carrier) fires at Germany's units" in said, said
        assert not [p for p in said if "_" in p], said
        assert verify_campaign(t, cid).ok


def test_te1_a_research_roll_names_the_technology_and_verifies(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("words", "north-sea-1914", dice="manual").id
        research(t, cid)
        assert purposes(t, cid) == ["Germany research roll for Advanced ASW"]
        assert verify_campaign(t, cid).ok


def test_nc1_both_sides_gone_at_once_says_neither_side_has_a_unit_left(tmp_path: Path) -> None:
    """Germany's cruiser and Britain's sink each other in the same volley (NC3)."""
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("words", "north-sea-1914", dice="manual").id
        ended = battle(t, cid, WA, [f"Germany:cruiser:{WA}", f"Britain:cruiser:{WA}"])
        assert ended.reason == "neither side has a unit left in the battle"
        text = summary(ended, t.load(cid).scenario, t.load(cid).ruleset)
        assert text == "battle 1 ends (neither side has a unit left in the battle); still there: none"
        assert verify_campaign(t, cid).ok


def test_nc1_one_side_gone_is_still_named(tmp_path: Path) -> None:
    """Only Germany's cruiser sunk (Britain's carrier takes one hit of two): the side is named."""
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = t.create("words", "north-sea-1914", dice="manual").id
        ended = battle(t, cid, NNS, [f"Germany:cruiser:{NNS}"])
        assert ended.reason == "Germany has no unit left in the battle"


@pytest.mark.usefixtures("before_the_key")
def test_d3_te1_nc1_a_campaign_recorded_before_the_key_keeps_its_words_and_verifies(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "old.db")) as t:
        cid = t.create("words", "north-sea-1914", dice="manual").id
        assert not t.load(cid).ruleset.purposes_in_words and KEY not in t.load(cid).ruleset_data["record"]
        research(t, cid)
        ended = battle(t, cid, WA, [f"Germany:cruiser:{WA}", f"Britain:cruiser:{WA}"])
        assert ended.reason == "Germany has no unit left in the battle"
        said = purposes(t, cid)
        assert said[0] == "Germany research roll for advanced_asw"
        assert "GB-CA3 (cruiser) fires at Germany's units" in said, said
        assert verify_campaign(t, cid).ok
        other = t.create("carrier", "north-sea-1914", dice="manual").id
        battle(t, other, NNS, [f"Germany:cruiser:{NNS}"])
        assert "GB-CV1 (aircraft_carrier) fires at Germany's units" in purposes(t, other)
        assert verify_campaign(t, other).ok
