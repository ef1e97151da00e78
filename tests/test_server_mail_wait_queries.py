"""Found by running a league server as a group would: e-mails went out without a Date or a
Message-ID (RFC 5322; Gmail refuses a message without a Message-ID, and a message sent again
after a crash could not be told from a new one), `tracker wait` ended when the server restarted
for a few seconds, and a request that said one thing twice (`?at=5&at=6`, a JSON body naming
`action` twice) was answered as its last saying, without a word. Each refusal records nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

from tracker.cli import remote_wait  # noqa: E402
from tracker.cli.client import ServerError  # noqa: E402
from tracker.cli.main import cli  # noqa: E402
from tracker.server.app import create_app  # noqa: E402
from tracker.service.notify.messages import message_body  # noqa: E402


def tracker(db: str, *args: str) -> str:
    done = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


class League:
    """A served campaign and the token of its German player."""

    def __init__(self, client: TestClient, name: str, anna: str) -> None:
        self.client = client
        self.name = name
        self.anna = {"Authorization": f"Bearer {anna}"}

    def version(self) -> int:
        state = self.client.get(f"/api/campaigns/{self.name}/state", headers=self.anna)
        assert state.status_code == 200, state.text
        return int(state.json()["seq"])


@pytest.fixture
def league(db_url: str, unique_name: str, tmp_path: Path) -> Iterator[League]:
    tracker(db_url, "new", unique_name, "--scenario", "north-sea-1914", "--dice", "manual")
    anna = tracker(db_url, "--campaign", unique_name, "players", "add", "anna", "--nations", "Germany")
    app = create_app(db_url, keys=str(tmp_path / "keys.db"))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield League(client, unique_name, anna.strip().splitlines()[-1])


# ----- a request that says one thing twice -----


@pytest.mark.parametrize("query", ["at=1&at=2", "turn=1&turn=1", "tail=1&kind=Created&tail=2"])
def test_a_query_parameter_given_twice_is_400_naming_it(league: League, query: str) -> None:
    """`?at=5&at=6` answered the board at event 6, `?tail=1&tail=2` the last two events."""
    route = "log" if "tail" in query else "state"
    answer = league.client.get(f"/api/campaigns/{league.name}/{route}?{query}", headers=league.anna)
    assert answer.status_code == 400, answer.text[:200]
    (name,) = {part.split("=")[0] for part in query.split("&") if query.count(part.split("=")[0] + "=") > 1}
    assert answer.json() == {"error": f"query parameter {name!r} is given more than once", "rule": None}


def test_a_query_parameter_given_once_each_is_read(league: League) -> None:
    answer = league.client.get(f"/api/campaigns/{league.name}/state?at=1", headers=league.anna)
    assert answer.status_code == 200 and answer.json()["seq"] == 1


@pytest.mark.parametrize(
    "raw, named",
    [
        ('{"action": "research", "inputs": {}, "action": "next"}', "'action' twice"),
        ('{"action": "next", "inputs": {"confirm_losses": false, "confirm_losses": true}}', "'confirm_losses' twice"),
        ('{"action": "next", "inputs": {}, "seen": NaN}', "NaN is not a number JSON writes"),
        ('{"action": "next", "inputs": {"confirm_losses": Infinity}}', "Infinity is not a number JSON writes"),
    ],
    ids=["action-twice", "input-twice", "nan", "infinity"],
)
def test_rk2_a_body_naming_a_field_twice_or_holding_nan_is_400_and_records_nothing(
    league: League, raw: str, named: str
) -> None:
    """`{"action": "research", ..., "action": "next"}` was recorded as `next`: the last of the
    two, which an idempotency key's check then compared with a request nobody meant."""
    before = league.version()
    headers = {**league.anna, "Content-Type": "application/json"}
    answer = league.client.post(f"/api/campaigns/{league.name}/actions", content=raw.encode(), headers=headers)
    assert answer.status_code == 400, answer.text[:200]
    assert named in answer.json()["error"] and "Traceback" not in answer.text
    assert league.version() == before


def test_a_command_body_naming_args_twice_is_400(league: League) -> None:
    raw = json.dumps({"args": ["state"], "campaign": league.name})[:-1] + ', "args": ["next"]}'
    headers = {**league.anna, "Content-Type": "application/json"}
    before = league.version()
    answer = league.client.post("/api/command", content=raw.encode(), headers=headers)
    assert answer.status_code == 400 and "'args' twice" in answer.json()["error"]
    assert league.version() == before


# ----- e-mail headers -----


def row(**more: Any) -> dict[str, Any]:
    """An outbox row of an e-mail channel, as the delivery worker reads it."""
    return {
        "id": 7,
        "campaign_id": "5f0c3a52-0000-4000-8000-000000000001",
        "created_at": 1796615671.25,
        "next_attempt_at": 1796615671.25,
        "kind": "email",
        "format": "email",
        "mention": None,
        **more,
    }


PAYLOAD: dict[str, Any] = {
    "title": "The North Sea, autumn 1914",
    "campaign": "autumn",
    "round": 1,
    "nation": "Britain",
    "phase": "research",
    "reasons": ["turn"],
    "pending": [],
}


def body_of(r: dict[str, Any], payload: dict[str, Any] = PAYLOAD) -> Any:
    return message_body(r, payload, lambda item: None, None)


def test_an_e_mail_is_named_the_same_at_every_attempt_and_anew_for_each_reminder() -> None:
    """A server killed after the SMTP server took a message, before it was marked delivered,
    sends it again: with the same Message-ID, a mailbox shows it once."""
    first = body_of(row())
    assert body_of(row(next_attempt_at=1796615999.0))["key"] == first["key"]  # a retry
    assert body_of(row(id=8))["key"] != first["key"]
    reminder = body_of(row(), {**PAYLOAD, "reminder": True})
    later = body_of(row(next_attempt_at=1796659000.0), {**PAYLOAD, "reminder": True})
    assert len({first["key"], reminder["key"], later["key"]}) == 3
    assert all(c in "0123456789abcdef" for c in first["key"]) and "autumn" not in first["key"]


def test_an_e_mail_carries_a_date_and_its_message_id() -> None:
    """smtplib adds neither: the messages went out without Date (required by RFC 5322) and
    without Message-ID (which Gmail requires)."""
    smtpd = pytest.importorskip("aiosmtpd.controller", reason="the test extra's aiosmtpd")
    from tests.support import free_port
    from tracker.service.notify.senders import SmtpSender, SmtpSettings

    received: list[Any] = []

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
            received.append(message_from_bytes(envelope.content, policy=policy.default))
            return "250 OK"

    port = free_port()
    controller = smtpd.Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        sender = SmtpSender(SmtpSettings("127.0.0.1", port, "Referee <referee@league.example>", timeout=5))
        body = body_of(row())
        for _attempt in range(2):
            assert sender.send({"target": "bert@example.org"}, body) == "SMTP 250"
        sender.send({"target": "bert@example.org"}, {"subject": "s", "text": "t", "html": "<p>t</p>"})
    finally:
        controller.stop()
    ids = [m["Message-ID"] for m in received]
    assert ids[0] == ids[1] == f"<{body['key']}@league.example>"
    assert ids[2] not in ids[:2] and ids[2].endswith("@league.example>")
    assert all(m["Date"] is not None and m["Date"].datetime is not None for m in received)


# ----- tracker wait through a server restart -----


def waiting(monkeypatch: pytest.MonkeyPatch, answers: list[Any]) -> tuple[int, list[str]]:
    """`tracker --server URL wait --timeout 30` with the server's answers to `inbox` given in
    turn (an exception is raised as the client would): its exit status and what it asked."""
    asked: list[str] = []

    def owed(base: str, campaign: str | None) -> Any:
        asked.append("inbox")
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(remote_wait, "_owed", owed)
    monkeypatch.setattr(remote_wait, "_next_recorded", lambda base, campaign, seen, seconds: (seen or 0) + 1)
    monkeypatch.setattr(remote_wait, "UNREACHABLE_SECONDS", 0.01, raising=False)
    with click.Context(click.Command("tracker")):
        code = remote_wait.wait_remote("http://127.0.0.1:9", "autumn", ["--timeout", "30"])
    return code, asked


def test_wait_rides_out_a_server_restart(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`tracker wait` ended with "cannot reach the server" when the server restarted (SIGTERM,
    a few seconds down): every player's wait, for a move that came a minute later."""
    gone = ServerError("cannot reach the server at http://127.0.0.1:9: [Errno 111] Connection refused")
    item = {"campaign": "autumn", "round": 1, "nation": "Germany", "phase": "research", "command": None}
    item["text"] = "waiting for Germany to finish research (tracker next) [T3]"
    code, asked = waiting(monkeypatch, [[], gone, gone, [item]])
    assert code == 0 and len(asked) == 4
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "tracker wait: the server at http://127.0.0.1:9 does not answer; still waiting",
        "tracker wait: the server at http://127.0.0.1:9 answers again",
    ]


def test_wait_on_a_server_that_never_answered_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong URL or port is said at once, not waited out."""
    gone = ServerError("cannot reach the server at http://127.0.0.1:9: [Errno 111] Connection refused")
    with pytest.raises(ServerError, match="cannot reach the server"):
        waiting(monkeypatch, [gone, []])
