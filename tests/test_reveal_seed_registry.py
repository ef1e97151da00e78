"""D3/D5: what a `dice reveal` leaves in the seed registry. A reveal commits to the next
epoch's seed, which it stores before the event that commits to it is saved (so no commitment
is ever without its seed). A reveal refused by its own check stores no seed at all; a seed
stored by an attempt that then recorded nothing (a crash before the save, a lost conflict) is
the one the next reveal of that epoch commits to and later publishes, never a second one."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest
from sqlalchemy import select, update

from domain.dice import commitment
from domain.errors import RuleViolation
from tracker.service.application import Tracker
from tracker.storage.store import seeds_table


def stored_seeds(t: Tracker, cid: UUID) -> dict[int, str]:
    with t.engine.connect() as conn:
        rows = conn.execute(
            select(seeds_table.c.epoch, seeds_table.c.seed).where(seeds_table.c.campaign_id == str(cid))
        )
        return {epoch: seed for epoch, seed in rows}


def replace_seed(t: Tracker, cid: UUID, epoch: int, seed: str) -> None:
    where = (seeds_table.c.campaign_id == str(cid)) & (seeds_table.c.epoch == epoch)
    with t.engine.begin() as conn:
        conn.execute(update(seeds_table).where(where).values(seed=seed))


def other(seed: str) -> str:
    """A seed of the same shape that is not `seed`."""
    return ("1" if seed[0] == "0" else "0") + seed[1:]


def test_d3_a_reveal_refused_for_a_replaced_seed_stores_no_next_seed(tmp_path: Path) -> None:
    with Tracker(f"sqlite:///{tmp_path / 'c.db'}") as t:
        cid = t.create("autumn", "north-sea-1914", dice="auto").id
        original = stored_seeds(t, cid)[0]
        replace_seed(t, cid, 0, other(original))
        version = t.load(cid).version

        with pytest.raises(RuleViolation, match="D3"):
            t.perform(cid, "dice reveal")

        assert t.load(cid).version == version
        assert stored_seeds(t, cid) == {0: other(original)}


def test_d3_a_next_seed_stored_without_its_reveal_is_the_one_a_later_reveal_commits_to(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    with Tracker(url) as t:
        cid = t.create("autumn", "north-sea-1914", dice="auto").id
        # What an attempt leaves when it crashes after storing the next seed, before the save.
        left = t.next_seed(cid, 1)
        assert t.load(cid).dice_epoch == 0

    # Another process (no seed kept in memory) reveals, then reveals again.
    with Tracker(url) as t:
        seed0 = t.reveal_seed(cid)
        revealed = t.load(cid)
        assert revealed.commitments[1] == commitment(left)
        assert stored_seeds(t, cid) == {0: seed0, 1: left}

        assert t.reveal_seed(cid) == left
        assert set(stored_seeds(t, cid)) == {0, 1, 2}
        assert t.load(cid).commitments[2] == commitment(stored_seeds(t, cid)[2])


def test_d5_a_refused_reveal_before_first_serve_brings_no_second_reveal_later(tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the server's tracker needs the server extra")
    from tracker.server.served import ServedTracker

    db, keys = tmp_path / "c.db", tmp_path / "keys.db"
    with Tracker(f"sqlite:///{db}") as t:
        cid = t.create("autumn", "north-sea-1914", dice="auto").id
        original = stored_seeds(t, cid)[0]
        replace_seed(t, cid, 0, other(original))
        with pytest.raises(RuleViolation, match="D3"):
            t.perform(cid, "dice reveal")
        replace_seed(t, cid, 0, original)

    reveals = []
    for _start in range(2):
        served = ServedTracker(str(db), keys=str(keys))
        try:
            reveals.append(len(served.load(cid).commitments) - 1)
        finally:
            served.close()
    # The first serve reveals the seed the campaign database held; a second start finds no
    # seed left there (a next seed the refused reveal had stored would look like one).
    assert reveals == [1, 1]


def test_d5_a_seed_stored_for_an_epoch_the_log_never_committed_brings_no_reveal(tmp_path: Path) -> None:
    """A next seed stored in the campaign database without its reveal recorded (a crash after
    the seed was made, before the event that commits to it was saved): the server's first start
    reveals the seed the log committed to, and no later start takes the stray one for a seed
    held here, to reveal the key store's seed early for it."""
    pytest.importorskip("starlette", reason="the server's tracker needs the server extra")
    from tracker.server.served import ServedTracker

    db, keys = tmp_path / "c.db", tmp_path / "keys.db"
    with Tracker(f"sqlite:///{db}") as t:
        cid = t.create("autumn", "north-sea-1914", dice="auto").id
        with t.engine.begin() as conn:
            conn.execute(seeds_table.insert().values(campaign_id=str(cid), epoch=1, seed="ab" * 32))

    reveals = []
    for _start in range(3):
        served = ServedTracker(str(db), keys=str(keys))
        try:
            reveals.append(len(served.load(cid).commitments) - 1)
        finally:
            served.close()
    assert reveals == [1, 1, 1]
