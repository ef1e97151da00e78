"""Found by playing a league server as a player trying to break it: a NUL character in an
input left a PostgreSQL campaign's log unreadable (and a campaign name with %00 in a URL was a
500), a line break in a dice reference forged a line of every player's `tracker log`, a
misspelt field of a request body was let through silently, and a PL2 refusal a command checks
itself was answered 409, not 403. Each refusal records nothing (RK2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

from tracker.cli.main import cli  # noqa: E402
from tracker.server.app import create_app  # noqa: E402


def tracker(db: str, *args: str) -> str:
    done = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


class League:
    """A served manual-dice campaign, the token of its German player and its referee's."""

    def __init__(self, client: TestClient, name: str, anna: str, rita: str) -> None:
        self.client = client
        self.name = name
        self.anna = {"Authorization": f"Bearer {anna}"}
        self.rita = {"Authorization": f"Bearer {rita}"}

    def act(self, body: Any, headers: dict[str, str] | None = None) -> Any:
        return self.client.post(f"/api/campaigns/{self.name}/actions", json=body, headers=headers or self.anna)

    def command(self, body: Any, headers: dict[str, str] | None = None) -> Any:
        return self.client.post("/api/command", json=body, headers=headers or self.anna)

    def version(self) -> int:
        """The campaign's last event, read as the referee."""
        state = self.client.get(f"/api/campaigns/{self.name}/state", headers=self.rita)
        assert state.status_code == 200, state.text
        return int(state.json()["seq"])


@pytest.fixture
def league(db_url: str, unique_name: str, tmp_path: Path) -> Iterator[League]:
    tracker(db_url, "new", unique_name, "--scenario", "north-sea-1914", "--dice", "manual")
    anna = tracker(db_url, "--campaign", unique_name, "players", "add", "anna", "--nations", "Germany")
    rita = tracker(db_url, "--campaign", unique_name, "players", "add", "rita", "--referee")
    app = create_app(db_url, keys=str(tmp_path / "keys.db"))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield League(client, unique_name, anna.strip().splitlines()[-1], rita.strip().splitlines()[-1])


TYPED = {"technology": "advanced submarine", "dice": [3]}
RESEARCH: dict[str, Any] = {"action": "research", "inputs": TYPED}


def test_rk2_a_nul_in_a_dice_reference_is_refused_and_the_log_stays_readable(league: League) -> None:
    """`"ref": "r\\u0000ef"` was recorded: on PostgreSQL the campaign's log and reports then
    answered "the history of this campaign cannot be read past event N" for good."""
    before = league.version()
    refused = league.act({**RESEARCH, "inputs": {**TYPED, "ref": "r\x00ef"}})
    assert refused.status_code == 400, refused.text[:300]
    assert refused.json()["error"].startswith("the request body holds a string with a NUL character")
    assert league.version() == before
    log = league.client.get(f"/api/campaigns/{league.name}/log", headers=league.anna)
    assert log.status_code == 200, log.text


@pytest.mark.parametrize(
    "body",
    [
        {"action": "undo", "inputs": {"override": True, "reason": "a\x00b", "agreed_by": ["Britain"]}},
        {"action": "adjust", "inputs": {"reason": "a\x00b", "resources": ["Germany=+1"]}},
    ],
    ids=["override-reason", "adjustment-reason"],
)
def test_rk2_a_nul_in_a_reason_is_400_and_records_nothing(league: League, body: dict[str, Any]) -> None:
    """An override request's reason with a NUL was a 500 on PostgreSQL ("unexpected DataError");
    an adjustment's was recorded, and the log unreadable after it."""
    before = league.version()
    refused = league.act(body, league.rita)
    assert refused.status_code == 400, refused.text[:300]
    assert "NUL character" in refused.json()["error"]
    assert league.version() == before
    overrides = league.client.get(f"/api/campaigns/{league.name}/overrides", headers=league.anna)
    assert overrides.status_code == 200 and overrides.json() == []


@pytest.mark.parametrize(
    "body",
    [
        {"args": ["state"], "campaign": "\x00"},
        {"args": ["notify", "add", "email", "a\x00@example.org"], "campaign": None},
    ],
    ids=["campaign", "argument"],
)
def test_a_nul_in_a_command_is_bad_usage_not_unexpected(league: League, body: dict[str, Any]) -> None:
    """On PostgreSQL both answered 409 "unexpected DataError: (psycopg.DataError) PostgreSQL
    text fields cannot contain NUL (0x00) bytes" (no command line can hold a NUL)."""
    answer = league.command({**body, "campaign": body["campaign"] or league.name})
    assert answer.status_code == 400, answer.text
    assert "NUL character" in answer.json()["error"] and "unexpected" not in answer.text


def test_a_campaign_name_with_nul_in_a_url_is_no_such_campaign(league: League) -> None:
    """`/api/campaigns/%00/state` (and the viewer's `/campaigns/%00/board`) were a 500 on
    PostgreSQL: the name went into the query as it came."""
    for path in ("/api/campaigns/%00/state", f"/api/campaigns/{league.name}%00/log"):
        answer = league.client.get(path, headers=league.rita)
        assert answer.status_code == 404 and answer.json()["error"] == "no such campaign", path
    assert league.client.get("/campaigns/%00/board", headers=league.rita).status_code == 404
    refused = league.client.post("/api/campaigns/%00/actions", json={"action": "next"}, headers=league.rita)
    assert refused.status_code == 404


@pytest.mark.parametrize(
    "inputs",
    [
        {"ref": "x\n    9  Adjusted            [AD1]  ADJUSTMENT: Germany resources +100"},
        {"ref": "\x1b[2J"},
        {"override": True, "reason": "tab\there", "agreed_by": ["Britain"]},
    ],
    ids=["line-break", "escape", "tab"],
)
def test_pl1_a_control_character_in_an_input_is_refused(league: League, inputs: dict[str, Any]) -> None:
    """The command line refuses a --ref or --reason holding one (`Line`); the API recorded it,
    and a dice reference with a line break printed a forged event line in `tracker log`."""
    before = league.version()
    refused = league.act({**RESEARCH, "inputs": {**TYPED, **inputs}})
    assert refused.status_code == 400, refused.text[:300]
    key = "ref" if "ref" in inputs else "reason"
    assert refused.json()["error"].startswith(f"research: input {key!r} may not contain control characters")
    assert league.version() == before


def test_rk2_an_unknown_field_of_an_action_is_refused_and_records_nothing(league: League) -> None:
    """`{"action": "next", "sen": 3}` recorded `next`: the misspelt `seen` was ignored, and
    the check it asked for (refuse if the campaign moved on) with it."""
    before = league.version()
    refused = league.act({"action": "next", "sen": before - 1})
    assert refused.status_code == 400, refused.text[:300]
    assert refused.json()["error"] == "unknown field 'sen' in the request body (fields: action, inputs, seen)"
    assert league.version() == before
    # The fields the API describes are the fields it takes.
    spec = league.client.get("/api/openapi.json").json()
    assert spec["components"]["schemas"]["Action_next"]["additionalProperties"] is False


def test_rk2_an_unknown_field_of_a_command_is_refused_and_records_nothing(league: League) -> None:
    before = league.version()
    refused = league.command({"args": ["next"], "campaing": league.name})
    assert refused.status_code == 400, refused.text[:300]
    assert refused.json()["error"].startswith("unknown field 'campaing' in the request body (fields: args, campaign,")
    assert league.version() == before
    # What `tracker --server` sends is taken as it was.
    from tracker.cli.client import terminal

    done = league.command({"args": ["state", "--json"], "campaign": league.name, **terminal()})
    assert done.status_code == 200, done.text


def test_pl2_a_channel_for_another_player_is_403(league: League) -> None:
    """`notify add ... --player bert` by anna was refused with PL2, as 409 (every other PL2
    refusal is 403)."""
    asked = {"args": ["notify", "add", "webhook", "http://127.0.0.1:9/x", "--player", "bert"], "campaign": league.name}
    refused = league.command(asked)
    assert refused.status_code == 403, refused.text
    assert refused.json()["rule"] == "PL2" and refused.json()["exit"] == 1
    listed = league.command({"args": ["notify", "list"], "campaign": league.name}, league.rita)
    assert listed.json()["stdout"].startswith("No channels")


def test_a_method_a_route_does_not_take_is_named_with_the_route(league: League) -> None:
    """The error was "Method Not Allowed": neither the method nor the route was named."""
    refused = league.client.delete(f"/api/campaigns/{league.name}/actions", headers=league.anna)
    assert refused.status_code == 405 and refused.headers["Allow"] == "POST"
    assert refused.json() == {"error": f"/api/campaigns/{league.name}/actions takes POST, not DELETE", "rule": None}
