"""One action through the server reads the key store once and records once: counted on the
key store's engine (every statement) and on the campaign database (every transaction
committed) while one POSTed action is served by a server just started."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from domain.rules.turn import next_position
from tracker.service.application import Tracker
from tracker.service.players import Players

pytest.importorskip("starlette", reason="tracker serve needs the server extra")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def league_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A campaign database of the test's own: a server moves every seed it finds there into its
    key store, which must not take the seeds of other tests' campaigns."""
    if request.param == "sqlite":
        yield str(tmp_path / "league.db")
        return
    import psycopg
    from sqlalchemy.engine import make_url

    session_url = make_url(request.getfixturevalue("pg_url"))
    admin = session_url.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"tracker_path_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield session_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Counted:
    """The statements the server's trackers send to their key stores, and the transactions
    they commit on the campaign database."""

    def __init__(self, trackers: list[Any]) -> None:
        from sqlalchemy import event

        self.key_statements: list[str] = []
        self.commits = 0
        for t in trackers:
            event.listen(t.registry.keys, "before_cursor_execute", self._key_statement)
            if t.engine.dialect.name == "sqlite":
                # The recorder writes a SQLite file through the driver, where SQLAlchemy's
                # commit event never fires: the driver's own trace sees every COMMIT.
                event.listen(t.engine, "checkout", self._trace_driver)
            else:
                event.listen(t.engine, "commit", self._commit)

    def _key_statement(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.key_statements.append(statement.split()[0].upper())

    def _trace_driver(self, dbapi_connection: Any, *args: Any) -> None:
        dbapi_connection.set_trace_callback(self._driver_statement)

    def _driver_statement(self, statement: str) -> None:
        if statement.strip().upper().startswith("COMMIT"):
            self.commits += 1

    def _commit(self, conn: Any) -> None:
        self.commits += 1


def new_campaign(db: str, play_to_round_end: bool) -> str:
    """An auto-dice campaign and its referee's token; with `play_to_round_end`, played (every
    convoy attack passed) until the next `next` ends the round."""
    with Tracker(db) as t:
        t.create("autumn", "north-sea-1914", dice="auto")
        cid = t.campaign_id("autumn")
        token = Players(t.engine).add(str(cid), "rita", [], True)
        while play_to_round_end:
            for nation in t.load(cid).convoy_attacks_open():
                t.perform(cid, "convoy pass", {"by": nation})
            c = t.load(cid)
            if next_position(c.scenario.turn_order, c.ruleset.phases, c.round, c.nation, c.phase)[0] > c.round:
                break
            t.perform(cid, "next")
    return token


def served_action(db: str, keys: Path, token: str, body: dict[str, Any], reveal: str) -> tuple[Counted, Any]:
    """`body` POSTed as the first action of a server just restarted, counted. The campaign was
    served once before: its first serve revealed the seed the campaign database held and
    committed to one in the key store (issue 24), which this server has never read."""
    import httpx

    from tracker.server.app import create_app
    from tracker.server.served import ServedTracker

    ServedTracker(db, keys=str(keys), reveal=reveal).close()
    app = create_app(db, keys=str(keys), reveal=reveal)
    service = app.state.service
    transport = httpx.ASGITransport(app=app)

    async def post(json: dict[str, Any], token: str | None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(transport=transport, base_url="http://league") as client:
            return await client.post("/api/campaigns/autumn/actions", json=json, headers=headers)

    try:
        # Refused for want of a token, before anything is read for the action: the tracker that
        # will record it now exists, so what is counted is the action, not the tracker's making.
        assert asyncio.run(post({"action": "next"}, None)).status_code == 401
        counted = Counted([s.tracker for s in [*service.writers, *service.readers] if s.tracker is not None])
        answer = asyncio.run(post(body, token))
        assert answer.status_code == 200, answer.text
        return counted, answer.json()
    finally:
        service.close()


def test_an_action_that_rolls_auto_dice_reads_its_seed_once_and_records_in_one_transaction(
    league_db: str, tmp_path: Path
) -> None:
    token = new_campaign(league_db, play_to_round_end=False)
    body = {"action": "research", "inputs": {"technology": "advanced_submarine"}}
    counted, answer = served_action(league_db, tmp_path / "keys.db", token, body, "on-request")
    assert any(e["kind"] == "DiceRolled" for e in answer["events"]), answer
    assert (counted.key_statements, counted.commits) == (["SELECT"], 1)


def test_a_reveal_asked_for_reads_the_key_store_once_and_records_once(league_db: str, tmp_path: Path) -> None:
    token = new_campaign(league_db, play_to_round_end=False)
    counted, answer = served_action(league_db, tmp_path / "keys.db", token, {"action": "dice reveal"}, "on-request")
    assert [e["kind"] for e in answer["events"]] == ["SeedRevealed"], answer
    # The seed revealed is read; the next one is written, before the log commits to it.
    assert (counted.key_statements, counted.commits) == (["SELECT", "INSERT"], 1)


def test_the_next_that_ends_a_round_and_reveals_its_seed_reads_the_key_store_once_and_records_once(
    league_db: str, tmp_path: Path
) -> None:
    token = new_campaign(league_db, play_to_round_end=True)
    keys = tmp_path / "keys.db"
    counted, answer = served_action(league_db, keys, token, {"action": "next"}, "each-round")
    assert any(e["kind"] == "PhaseAdvanced" and e["data"]["round"] == 2 for e in answer["events"]), answer
    # The reveal saved with it is in the answer too (it stopped at the `next`'s own events).
    assert answer["events"][-1]["kind"] == "SeedRevealed", answer
    # One read (the round's seed, which the reveal publishes) and one write (the next round's
    # seed, stored before the log commits to it); the `next` and the reveal in one transaction.
    assert (counted.key_statements, counted.commits) == (["SELECT", "INSERT"], 1)
    with Tracker(league_db) as t:
        cid = t.campaign_id("autumn")
        kinds = [type(e).__name__ for e in t.events(cid)]
        assert kinds[-1] == "SeedRevealed"
        assert answer["events"][-1]["seq"] == t.events(cid)[-1].originator_version
        # Epoch 0 revealed on first serve, epoch 1 at the end of the round.
        assert t.load(cid).dice_epoch == 2
