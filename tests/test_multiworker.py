"""Many workers, one PostgreSQL database: `uvicorn --factory tracker.server:create_app
--workers 4` under 40 client threads over 10 campaigns, each action sent with an
Idempotency-Key (and some sent twice with the same key, as a client retrying a lost answer
does). Afterwards: every action answered is in the log once (0 lost), no action is in the log
that no answer names and no two answers name one action (0 duplicated), a retried request is
answered its first answer, and `verify` passes on every campaign. Latency p50/p95 is printed
(not asserted: figures belong to bench/bench_server.py).

PostgreSQL only: SQLite takes one writer at a time, which is no test of several processes.
Default size: 40 clients x 10 actions; `TRACKER_RELIABILITY=heavy`: 40 x 50.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import size
from tests.support import Server
from tests.test_server_ops import factory
from tracker.service.application import Tracker
from tracker.service.players import Players

pytest.importorskip("uvicorn", reason="the ASGI factory needs the server extra")

WORKERS = 4
CLIENTS = 40
CAMPAIGNS = 10
# Every Nth action of a client is sent a second time with its key, as a retry after a lost answer.
RETRY_EVERY = 5


@pytest.fixture
def own_database(pg_url: str) -> Iterator[str]:
    """A PostgreSQL database of this test's own (beside the session's), dropped afterwards."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(pg_url)
    name = f"{url.database}_workers"
    admin = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def league(db_url: str) -> dict[str, str]:
    """CAMPAIGNS auto-dice campaigns and a referee's token for each, by campaign name."""
    tokens = {}
    with Tracker(db_url) as t:
        players = Players(t.engine)
        for i in range(CAMPAIGNS):
            name = f"league-{i}"
            t.create(name, "north-sea-1914", dice="auto")
            tokens[name] = players.add(str(t.campaign_id(name)), "referee", [], True)
    return tokens


class Client:
    """One client thread's actions on one campaign: it passes the convoy attacks the game waits
    for, or ends the phase; what was answered, by key, and how long each request took."""

    def __init__(self, server: Server, campaign: str, token: str) -> None:
        self.server = server
        self.campaign = campaign
        self.token = token
        self.answered: dict[str, int] = {}  # key -> action number, for answers 200
        self.refused = 0
        self.latencies: list[float] = []
        self.retried = 0
        self.retries_matched = 0

    def send(self, key: str, asked: dict[str, Any]) -> tuple[int, Any]:
        """(status, answer) of one action POSTed with its idempotency key."""
        request = urllib.request.Request(
            f"{self.server.url}/api/campaigns/{self.campaign}/actions",
            data=json.dumps(asked).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Authorization": f"Bearer {self.token}",
                "Idempotency-Key": key,
            },
        )
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=120) as resp:
                status, text = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        self.latencies.append(time.perf_counter() - started)
        return status, json.loads(text)

    def run(self, actions: int) -> None:
        pending: list[dict[str, Any]] | None = None
        for n in range(actions):
            if pending is None:
                pending = self.server.get(f"/api/campaigns/{self.campaign}/pending", self.token)[1]
            opened = [item for item in pending or [] if item["kind"] == "convoy_open"]
            asked = {"action": "convoy pass", "inputs": {"by": opened[0]["nation"]}} if opened else {"action": "next"}
            key = uuid.uuid4().hex
            status, body = self.send(key, asked)
            if status == 200:
                self.answered[key] = action_number(body)
                pending = body["pending"]
                if n % RETRY_EVERY == 0:
                    self.retried += 1
                    again = self.send(key, asked)
                    self.retries_matched += again == (200, body)
            else:
                # Refused (another client of this campaign moved first): read what it waits for.
                assert status == 409, body
                self.refused += 1
                pending = None


def action_number(answer: dict[str, Any]) -> int:
    """The number the log gives the action an answer reports (all its events carry it)."""
    (number,) = {e["data"]["action"] for e in answer["events"]}
    return int(number)


def actions_logged(log: list[dict[str, Any]]) -> set[int]:
    """The numbers of the actions in a campaign's log."""
    return {r["data"]["action"] for r in log if r["data"].get("action") is not None}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


@pytest.mark.postgres
def test_four_workers_on_one_postgresql_lose_and_duplicate_no_action(own_database: str, tmp_path: Path) -> None:
    actions = size(10, 50)
    tokens = league(own_database)
    env = {"TRACKER_DB": own_database, "TRACKER_KEYS": str(tmp_path / "keys.db")}
    with factory(tmp_path, env, workers=WORKERS) as server:
        before = {
            name: actions_logged(server.get(f"/api/campaigns/{name}/log", token)[1]) for name, token in tokens.items()
        }
        clients = [Client(server, f"league-{i % CAMPAIGNS}", tokens[f"league-{i % CAMPAIGNS}"]) for i in range(CLIENTS)]
        with ThreadPoolExecutor(CLIENTS) as pool:
            for done in [pool.submit(c.run, actions) for c in clients]:
                done.result()
        logs = {
            name: actions_logged(server.get(f"/api/campaigns/{name}/log", token)[1]) for name, token in tokens.items()
        }
        verified = {name: server.get(f"/api/campaigns/{name}/verify", token) for name, token in tokens.items()}

    for name in tokens:
        answers = Counter(n for c in clients if c.campaign == name for n in c.answered.values())
        logged = logs[name] - before[name]
        assert set(answers) <= logged, f"{name}: answered but not recorded (lost)"
        assert logged <= set(answers), f"{name}: recorded but answered to nobody"
        assert [n for n, times in answers.items() if times > 1] == [], f"{name}: one action answered twice"
        status, report = verified[name]
        assert status == 200 and report["ok"], (name, report)
    retried = sum(c.retried for c in clients)
    assert retried > 0 and sum(c.retries_matched for c in clients) == retried
    answered = sum(len(c.answered) for c in clients)
    assert answered > CAMPAIGNS
    latencies = [t for c in clients for t in c.latencies]
    print(
        f"\n{WORKERS} workers, {CLIENTS} clients x {actions} actions over {CAMPAIGNS} campaigns: "
        f"{answered} recorded, {sum(c.refused for c in clients)} refused (another client moved first), "
        f"{sum(c.retries_matched for c in clients)}/{retried} retries answered their first answer; "
        f"0 lost, 0 duplicated; latency p50 {percentile(latencies, 50) * 1000:.0f} ms, "
        f"p95 {percentile(latencies, 95) * 1000:.0f} ms"
    )
