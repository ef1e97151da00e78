"""PL2 before a rule's refusal, through the server: an action that a player asks for a nation
that may take no action now (not the phasing one, T3, nor one a battle waits for) is 403 with
PL2, not the rule that refused it (409 naming a phase, with the command that would answer it);
the phasing nation's player, a nation a battle waits for (in a battle's step) and the referee
still read the rule. The referee's own actions (AD1, D4, D5) are refused to a player before
they run: a refused `dice reveal` stores no next seed in the key store."""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import in_process

pytest.importorskip("starlette", reason="the server needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

from tracker.server.app import create_app  # noqa: E402

ACTIONS = "/api/campaigns/autumn/actions"
COMMAND = "/api/command"


def tracker(*args: str) -> subprocess.CompletedProcess[str]:
    """A command on the league's database, run in this process."""
    return in_process(*args)


class League:
    """A campaign of four nations served by a test client, with a token per player."""

    def __init__(self, db: str, keys: str, client: TestClient, tokens: dict[str, str]) -> None:
        self.db, self.keys, self.client, self.tokens = db, keys, client, tokens

    def act(self, who: str, action: str, **inputs: Any) -> tuple[int, dict[str, Any]]:
        answer = self.client.post(
            ACTIONS, json={"action": action, "inputs": inputs}, headers={"Authorization": f"Bearer {self.tokens[who]}"}
        )
        return answer.status_code, answer.json()

    def command(self, who: str, *args: str) -> tuple[int, dict[str, Any]]:
        answer = self.client.post(
            COMMAND,
            json={"args": list(args), "campaign": "autumn"},
            headers={"Authorization": f"Bearer {self.tokens[who]}"},
        )
        return answer.status_code, answer.json()

    def last_event(self) -> int:
        with sqlite3.connect(self.db) as conn:
            return int(conn.execute("SELECT max(originator_version) FROM tracker_events").fetchone()[0])

    def seeds(self) -> list[tuple[str, int, str]]:
        with sqlite3.connect(self.keys) as conn:
            return sorted(conn.execute("SELECT campaign_id, epoch, seed FROM tracker_dice_seeds").fetchall())


@pytest.fixture
def league(tmp_path: Path) -> Iterator[League]:
    db, keys = str(tmp_path / "league.db"), str(tmp_path / "keys.db")
    assert tracker("--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    tokens = {}
    for name, role in (("anna", "Germany"), ("bob", "Britain"), ("fay", "France"), ("rex", None)):
        made = tracker("--db", db, "players", "add", name, *(("--nations", role) if role else ("--referee",)))
        assert made.returncode == 0, made.stderr
        tokens[name] = made.stdout.strip().splitlines()[-1]
    with TestClient(create_app(db, keys=keys)) as client:
        yield League(db, keys, client, tokens)


def refused_with_pl2(answer: tuple[int, dict[str, Any]], says: str) -> None:
    status, body = answer
    assert (status, body["rule"]) == (403, "PL2"), body
    assert says in body["error"], body


def test_pl2_an_action_out_of_turn_is_403_before_the_rule_that_refuses_it(league: League) -> None:
    """Germany's research phase: France's player starting a battle, buying or moving was told
    the phase rule (409, T3) as though the action were theirs to take later in the turn."""
    before = league.last_event()
    says = "fay plays France, not Germany; it is Germany's turn"
    refused_with_pl2(league.act("fay", "battle start", zone="Central North Sea"), says)
    refused_with_pl2(league.act("fay", "buy", unit_type="BB"), says)
    refused_with_pl2(league.act("fay", "move", units=["FR-CA1"], path=["English Channel"]), says)
    refused_with_pl2(league.command("fay", "buy", "BB"), says)
    # Germany's player and the referee are told the rule, which is theirs to follow.
    for who in ("anna", "rex"):
        status, body = league.act(who, "buy", unit_type="BB")
        assert (status, body["rule"]) == (409, "T3"), body
    assert league.last_event() == before


def test_pl2_a_nation_a_battle_waits_for_is_told_the_rule_of_the_battles_step(league: League) -> None:
    """A battle waiting for Britain: Britain's player asking for a step of it out of order is
    told the battle's rule; France's player, whom nothing waits for, is refused with PL2, and
    Britain's player asking for what only Germany does in its turn (T3) is refused too."""
    for action, inputs in (
        ("next", {}),
        ("next", {}),
        ("move", {"units": ["DE-SS4"], "path": ["Central North Sea"]}),
        ("next", {}),
        ("battle start", {"zone": "Central North Sea"}),
        ("battle step", {"battle": 1}),
    ):
        status, body = league.act("anna", action, **inputs)
        assert status == 200, body
    assert [p["waiting"] for p in body["pending"] if p["battle"] == 1] == [["Britain"]]
    before = league.last_event()
    status, body = league.act("bob", "battle fire", battle=1)
    assert (status, body["rule"]) == (409, "HA1"), body
    refused_with_pl2(
        league.act("fay", "battle fire", battle=1),
        "fay plays France, not Germany or Britain; it is Germany's turn and the game waits for Britain",
    )
    refused_with_pl2(league.act("bob", "buy", unit_type="BB"), "bob plays Britain, not Germany")
    refused_with_pl2(league.act("bob", "next"), "bob plays Britain, not Germany")
    status, body = league.act("rex", "next")
    assert (status, body["rule"]) == (409, "T4"), body
    assert league.last_event() == before


@pytest.mark.parametrize("route", ["actions", "command"])
def test_pl2_a_refused_seed_reveal_leaves_the_key_store_as_it_was(league: League, route: str) -> None:
    """D5: a player's `dice reveal` stored the next epoch's seed in the key store before PL2
    refused it (its events named the referee's action); a refused action changes nothing. The
    referee's reveal then records, and the log verifies."""
    seeds, before = league.seeds(), league.last_event()
    for who in ("anna", "fay"):
        answer = league.act(who, "dice reveal") if route == "actions" else league.command(who, "dice", "reveal")
        refused_with_pl2(answer, f"only the referee records dice seed reveals (D5): {who} plays")
    refused_with_pl2(league.act("fay", "dice switch", mode="manual", reason="x"), "only the referee records")
    assert league.seeds() == seeds
    assert league.last_event() == before
    status, body = league.act("rex", "dice reveal")
    assert status == 200, body
    assert len(league.seeds()) == len(seeds) + 1
    # Dice rolled under the new seed re-derive from it once revealed too.
    assert league.act("anna", "next")[0] == 200
    assert league.act("rex", "dice reveal")[0] == 200
    verified = tracker("--db", league.db, "verify")
    assert verified.returncode == 0 and verified.stdout.startswith("OK"), verified.stdout + verified.stderr


def test_pl2_an_enemy_of_the_phasing_nation_is_told_the_convoy_rule(league: League) -> None:
    """CV1: a convoy attack is declared (or passed) by an enemy of the phasing nation, in its
    turn: Britain's and France's players (both at war with Germany) passing when nothing waits
    for them (at research, or after passing once) were told that it is Germany's turn (PL2);
    they are told the convoy rule."""
    before = league.last_event()
    for who in ("bob", "fay"):
        status, body = league.act(who, "convoy pass", by="Britain" if who == "bob" else "France")
        assert status == 409 and body["rule"] != "PL2", body
    assert league.last_event() == before
