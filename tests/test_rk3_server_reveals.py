"""RK3, D5: a seed reveal the league server records by itself (at a round's end with `--reveal
each-round`, or when it first serves a campaign) is nobody's action. It was the phasing
nation's: the round's last `next` then counted as answered by that nation, so the player who
made it could not undo it ("action N by Britain was answered by Germany"), while the phasing
nation's player could "undo" the reveal alone, which stays in effect and changed nothing."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest

from domain.rules.turn import next_position
from tracker.server.served import Forbidden, ServedTracker
from tracker.service.application import Tracker
from tracker.service.players import Player
from tracker.service.verify import verify_campaign


def to_the_rounds_last_next(db: str) -> UUID:
    """An auto-dice campaign played (every convoy attack passed) until the next `next` ends
    round 1."""
    with Tracker(db) as t:
        cid = t.create("autumn", "north-sea-1914", dice="auto").id
        while True:
            for nation in t.load(cid).convoy_attacks_open():
                t.perform(cid, "convoy pass", {"by": nation})
            c = t.load(cid)
            if next_position(c.scenario.turn_order, c.ruleset.phases, c.round, c.nation, c.phase)[0] > c.round:
                return cid
            t.perform(cid, "next")


@pytest.fixture
def round_ended(tmp_path: Path) -> tuple[ServedTracker, UUID, Player, Player, int]:
    db = str(tmp_path / "league.db")
    cid = to_the_rounds_last_next(db)
    served = ServedTracker(db, keys=str(tmp_path / "keys.db"), reveal="each-round")
    last = served.load(cid)
    bert = Player(str(cid), "bert", (last.nation,), False)
    anna = Player(str(cid), "anna", tuple(n for n in last.scenario.turn_order if n != last.nation), False)
    before = served.load(cid).version
    served.acting_as(bert, lambda: served.perform(cid, "next"))
    after = served.load(cid)
    assert after.round == 2 and type(served.events(cid)[-1]).__name__ == "SeedRevealed"
    return served, cid, bert, anna, before


def test_rk3_the_player_of_the_rounds_last_next_undoes_it_past_the_servers_reveal(
    round_ended: tuple[ServedTracker, UUID, Player, Player, int],
) -> None:
    served, cid, bert, _, before = round_ended
    epoch = served.load(cid).dice_epoch
    try:
        undo = served.acting_as(bert, lambda: served.undo(cid))
        c = served.load(cid)
        # The `next` and the reveal after it taken back; the board is where bert left it, and
        # the reveal stays in effect (D5): the dice go on from the next epoch.
        assert undo.undone_from == before + 1
        assert (c.round, c.dice_epoch) == (1, epoch)
        assert verify_campaign(served, cid).ok
    finally:
        served.close()


def test_rk3_another_nations_player_cannot_undo_the_servers_reveal_alone(
    round_ended: tuple[ServedTracker, UUID, Player, Player, int],
) -> None:
    served, cid, _, anna, _ = round_ended
    try:
        # The last player's action is bert's `next`: not anna's to take back (PL2).
        with pytest.raises(Forbidden, match="the undo takes back actions of"):
            served.acting_as(anna, lambda: served.undo(cid))
    finally:
        served.close()


def test_rk3_a_campaign_recorded_before_keeps_the_reveal_as_the_phasing_nations(tmp_path: Path) -> None:
    """`[record] reveals_answer_nothing`: a campaign whose recorded ruleset lacks the key keeps
    the reading it was refereed by, so its log verifies."""
    from domain.amended import AS_RECORDED_BEFORE

    assert AS_RECORDED_BEFORE["reveals_answer_nothing"] is False
    with Tracker(str(tmp_path / "c.db")) as t:
        c = t.load(t.create("autumn", "north-sea-1914").id)
        assert c.ruleset.reveals_answer_nothing
        assert c.ruleset_data["record"]["reveals_answer_nothing"] is True
