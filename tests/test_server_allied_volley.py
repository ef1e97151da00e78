"""A volley where an ally fires beside the nation a battle waits for, through the league server
(CV3, CV4, NC3, PL2): a French bomber searching over British trade fires in the convoy battle's
round, and `pending` says "France rolls FR-BM1; Britain rolls GB-CA1; Germany rolls DE-SS1,
DE-SS2; Britain records them, Germany's too". The server took the volley as France's (its
first die), which neither Britain's player nor Germany's plays: only the referee could roll it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from tracker.service.application import Tracker
from tracker.service.players import LEAGUE, Forbidden, Player

pytest.importorskip("starlette", reason="the league server's tracker needs the server extra")

from tracker.server.served import ServedTracker  # noqa: E402 - after the extra's check

RITA = Player(LEAGUE, "rita", (), True)


class Convoy:
    """A served north-sea-1914 campaign: Germany's U-boats attack British trade in the Central
    North Sea (CV1), FR-BM1 and GB-CA1 find them (CV3, typed dice), and the round's volley is
    owed, rolled by the server (auto dice from here, D4)."""

    def __init__(self, folder: Path, searched: bool = True) -> None:
        Tracker(str(folder / "league.db")).close()
        self.served = ServedTracker(str(folder / "league.db"), keys=str(folder / "keys.db"))
        self.cid: UUID = self.served.acting_as(
            RITA, lambda: self.served.create("trade", "north-sea-1914", dice="manual")
        ).id
        campaign = self.served.load(self.cid)
        while (campaign.nation, campaign.phase) != ("Britain", "collect_resources"):
            for enemy in campaign.convoy_attacks_open():
                self.referee("convoy pass", {"by": enemy})
            campaign = self.referee("next", {}).campaign
        self.referee("convoy declare", {"by": "Germany", "zone": "Central North Sea"})
        self.referee("convoy roll", {"battle": 1, "dice": "1,1"})
        if not searched:
            return
        self.referee("convoy search", {"battle": 1, "units": "FR-BM1,GB-CA1", "dice": "1,1"})
        while self.battle()["step"] != "fire":
            self.referee("battle step", {"battle": 1})
        self.referee("dice switch", {"mode": "auto", "reason": "the server rolls from here"})

    def referee(self, name: str, inputs: dict[str, Any]) -> Any:
        return self.served.acting_as(RITA, lambda: self.served.perform(self.cid, name, inputs))

    def battle(self) -> dict[str, Any]:
        return self.served.load(self.cid).battles["1"]

    def fire(self, who: str, *nations: str) -> list[Any]:
        return self.act(who, nations, "battle fire", {"battle": 1})

    def act(self, who: str, nations: tuple[str, ...], name: str, inputs: dict[str, Any]) -> list[Any]:
        player = Player(str(self.cid), who, nations, False)
        return self.served.acting_as(player, lambda: self.served.perform(self.cid, name, inputs)).events


@pytest.fixture
def convoy(tmp_path: Path) -> Iterator[Convoy]:
    game = Convoy(tmp_path)
    assert (game.battle()["step"], game.battle()["waiting"]) == ("fire", ["Britain", "Germany"])
    assert "France rolls FR-BM1" in game.served.load(game.cid).pending()[0]["text"]
    yield game
    game.served.close()


def rollers(events: list[Any]) -> list[str]:
    return [e.roller for e in events if type(e).__name__ == "DiceRolled"]


@pytest.mark.parametrize(("who", "nation"), [("bert", "Britain"), ("anna", "Germany")])
def test_cv4_pl2_a_volley_with_an_allys_die_is_rolled_by_either_sides_player(
    convoy: Convoy, who: str, nation: str
) -> None:
    events = convoy.fire(who, nation)
    assert rollers(events) == ["France", "Britain", "Germany", "Germany"]
    asked = [e for e in convoy.served.events(convoy.cid) if type(e).__name__ == "ActionAsked"][-1]
    assert (asked.player, asked.nation) == (who, nation)


def test_pl2_a_player_of_neither_side_waited_for_may_not_roll_it(convoy: Convoy) -> None:
    # Austria-Hungary is of Germany's side, but the battle waits for Germany, not for it.
    version = convoy.served.load(convoy.cid).version
    with pytest.raises(Forbidden, match="PL2"):
        convoy.fire("carl", "Austria-Hungary")
    assert convoy.served.load(convoy.cid).version == version


def test_cv3_pl2_d3_britains_player_types_the_search_die_of_a_french_bomber_searching_for_britain(
    tmp_path: Path,
) -> None:
    """Manual dice: the escort search waits for Britain alone (CV3), and FR-BM1 searches under it;
    Britain's player types its die as they type GB-CA1's, with no dice server's roll id (D3 asks
    one for an enemy's dice, which its player would check)."""
    game = Convoy(tmp_path, searched=False)
    try:
        assert game.battle()["waiting"] == ["Britain"]
        events = game.act("bert", ("Britain",), "convoy search", {"battle": 1, "units": "FR-BM1,GB-CA1", "dice": "1,1"})
        assert rollers(events) == ["France", "Britain"]
        assert [e.source for e in events if type(e).__name__ == "DiceRolled"] == ["manual", "manual"]
    finally:
        game.served.close()


def test_d3_pl2_typing_the_whole_volley_still_needs_a_roll_id_for_the_enemys_dice(tmp_path: Path) -> None:
    """Manual dice, the round's volley: Britain's player may type France's die beside Britain's,
    not Germany's without the dice server's roll id; the refusal names Germany's dice and records
    nothing."""
    game = Convoy(tmp_path, searched=False)
    try:
        game.referee("convoy search", {"battle": 1, "units": "FR-BM1,GB-CA1", "dice": "1,1"})
        while game.battle()["step"] != "fire":
            game.referee("battle step", {"battle": 1})
        version = game.served.load(game.cid).version
        with pytest.raises(Forbidden, match=r"^PL2: bert plays Britain, not Germany: Germany's dice need"):
            game.act("bert", ("Britain",), "battle fire", {"battle": 1, "dice": "10,10,10,10"})
        assert game.served.load(game.cid).version == version
        events = game.act("bert", ("Britain",), "battle fire", {"battle": 1, "dice": "10,10,10,10", "ref": "roll-77"})
        assert rollers(events) == ["France", "Britain", "Germany", "Germany"]
    finally:
        game.served.close()
