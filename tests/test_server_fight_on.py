"""A naval battle's decision to fight on, through the league server (NC4, PL2): it records no
event of its own, so the action's events are what follows it (the other side's decision still
owed, the next round and its forced choices). The server took the action for the nation those
named, or for the phasing nation when they named none: a British player could not fight on
while Germany was the phasing nation, and a German one could not when Britain's first target
in the next round was forced. The decision is the nation's the battle waited for."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from tracker.service.application import Tracker
from tracker.service.players import LEAGUE, Player

pytest.importorskip("starlette", reason="the league server's tracker needs the server extra")

from tracker.server.served import ServedTracker  # noqa: E402 - after the extra's check

RITA = Player(LEAGUE, "rita", (), True)


class Battle:
    """A served north-sea-1914 campaign (manual dice) whose battle 1, started by Germany in
    `zone` among the units `add`ed, is at its decide step after a round where every die missed."""

    def __init__(self, folder: Path, add: list[str], zone: str) -> None:
        Tracker(str(folder / "league.db")).close()
        self.served = ServedTracker(str(folder / "league.db"), keys=str(folder / "keys.db"))
        self.cid: UUID = self.as_referee(lambda: self.served.create("fight", "north-sea-1914", dice="manual")).id
        self.referee("adjust", {"reason": "the fleets meet", "add": add})
        while self.served.load(self.cid).phase != "naval_combat":
            self.referee("next", {})
        self.referee("battle start", {"zone": zone})
        while (step := self.served.load(self.cid).battles["1"]["step"]) != "decide":
            if step in ("fire", "opening_fire"):
                dice = self.served.load(self.cid).pending()[0]["dice"]["count"]
                self.referee("battle fire", {"battle": 1, "dice": ",".join(["9"] * dice)})
            else:
                self.referee("battle step", {"battle": 1})

    def as_referee(self, fn: Any) -> Any:
        return self.served.acting_as(RITA, fn)

    def referee(self, name: str, inputs: dict[str, Any]) -> Any:
        return self.as_referee(lambda: self.served.perform(self.cid, name, inputs))

    def ask(self, who: str, nation: str, name: str, inputs: dict[str, Any]) -> list[Any]:
        player = Player(str(self.cid), who, (nation,), False)
        return self.served.acting_as(player, lambda: self.served.perform(self.cid, name, inputs)).events

    def waiting(self) -> tuple[str, list[str]]:
        b = self.served.load(self.cid).battles["1"]
        return b["step"], list(b["waiting"])

    def last_asked(self) -> Any:
        return [e for e in self.served.events(self.cid) if type(e).__name__ == "ActionAsked"][-1]


@pytest.fixture
def both_decide(tmp_path: Path) -> Any:
    """German U-boats attack British escorts with a British U-boat among them: after round 1
    Germany (phasing) and Britain both decide (NC4)."""
    battle = Battle(tmp_path, ["Britain:submarine:Central North Sea"], "Central North Sea")
    assert battle.waiting() == ("decide", ["Germany", "Britain"])
    yield battle
    battle.served.close()


@pytest.mark.parametrize("inputs", [{}, {"nation": "Britain"}, {"nation": "gb"}])
def test_nc4_pl2_britains_player_fights_on_after_germany_decided(both_decide: Battle, inputs: dict[str, Any]) -> None:
    both_decide.ask("anna", "Germany", "battle decide", {"battle": 1, "nation": "Germany"})
    assert both_decide.waiting() == ("decide", ["Britain"])
    events = both_decide.ask("bert", "Britain", "battle decide", {"battle": 1, **inputs})
    assert [type(e).__name__ for e in events][:1] == ["RoundStarted"]
    asked = both_decide.last_asked()
    assert (asked.player, asked.nation) == ("bert", "Britain")


def test_nc4_pl2_britains_player_fights_on_first_while_germany_still_decides(both_decide: Battle) -> None:
    both_decide.ask("bert", "Britain", "battle decide", {"battle": 1, "nation": "Britain"})
    assert both_decide.waiting() == ("decide", ["Germany"])
    assert both_decide.last_asked().nation == "Britain"


def test_nc4_pl2_britains_battle_step_at_its_decision_fights_on(both_decide: Battle) -> None:
    both_decide.ask("anna", "Germany", "battle decide", {"battle": 1, "nation": "Germany"})
    both_decide.ask("bert", "Britain", "battle step", {"battle": 1})
    assert both_decide.waiting()[0] == "targets"


def test_nc4_pl2_germany_fights_on_when_britains_next_targets_are_forced(tmp_path: Path) -> None:
    """Germany alone decides; the next round opens with Britain's forced choice of targets, the
    first event naming a nation: the decision is still Germany's."""
    battle = Battle(
        tmp_path,
        ["Germany:submarine:Northern North Sea", "Germany:destroyer:Northern North Sea"],
        "Northern North Sea",
    )
    try:
        assert battle.waiting() == ("decide", ["Germany"])
        events = battle.ask("anna", "Germany", "battle decide", {"battle": 1})
        assert ("TargetsChosen", "Britain") in [(type(e).__name__, getattr(e, "nation", None)) for e in events]
        assert (battle.last_asked().player, battle.last_asked().nation) == ("anna", "Germany")
    finally:
        battle.served.close()


def test_pl2_fighting_on_is_still_not_another_players_to_ask(both_decide: Battle) -> None:
    from tracker.service.players import Forbidden

    both_decide.ask("anna", "Germany", "battle decide", {"battle": 1, "nation": "Germany"})
    with pytest.raises(Forbidden, match="PL2"):
        both_decide.ask("anna", "Germany", "battle decide", {"battle": 1})
    assert both_decide.waiting() == ("decide", ["Britain"])
