"""Override requests (RK3) told by notification, and what a player pastes from them: a request's
message is given up unsent once the request is no longer open (approved, or void once the
campaign moved on), and its command, like the refusal that records the request, names the
server as the player reached it (never a `URL` placeholder) and the campaign. Also a failed
`tracker notify test`, given up at once, and Discord's and Slack's length limits, which keep a
long message's commands and link."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.common import next_command
from tracker.cli.main import cli
from tracker.service.notify import (
    DISCORD_LIMIT,
    OVERRIDE_VERSIONS,
    SLACK_LIMIT,
    Outbox,
    SendFailed,
    fit,
    message_text,
    webhook_body,
)

pytest.importorskip("starlette", reason="the league server needs the server extra")


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, "--campaign", "autumn", *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "league.db")
    result = CliRunner().invoke(cli, ["--db", path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto"])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def league(db: str, tmp_path: Path) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The campaign served in this process: anna plays Germany, bert Britain."""
    from tracker.server.served import ServedTracker

    t = ServedTracker(db, keys=str(tmp_path / "keys.db"))
    cid = t.registry.lookup("autumn")
    for name, nations in (("anna", ["Germany"]), ("bert", ["Britain"])):
        t.players.add(cid, name, nations, referee=False)
    try:
        yield t, {name: t.players.player(cid, name) for name in ("anna", "bert")}
    finally:
        t.close()


def remote(t: Any, player: Any, *args: str) -> dict[str, Any]:
    from tracker.server.commands import run_command

    return run_command(t, player, "autumn", list(args))


class Failing:
    """A receiver that answers 404 (bert's Slack webhook before it was mended), then one that
    takes every message, recording it."""

    def __init__(self) -> None:
        self.mended = False
        self.sent: list[tuple[int, Any]] = []

    def send(self, channel: Any, body: Any) -> str:
        if not self.mended:
            raise SendFailed("HTTP 404")
        self.sent.append((channel["channel_id"], body))
        return "HTTP 200"


def asked(t: Any, players: dict[str, Any], fmt: str = "slack") -> tuple[str, int, int]:
    """bert's channel, and anna's override undo asked of Britain: (campaign id, channel, request)."""
    cid = t.registry.lookup("autumn")
    outbox = Outbox(t.engine)
    channel = outbox.add(cid, "webhook", "http://127.0.0.1:9/bert", fmt, "bert", None)
    assert remote(t, players["anna"], "research", "advanced_submarine")["exit"] == 0
    for row in outbox.due(float("inf")):
        outbox.attempted(row["id"], True, "HTTP 200", None)
    refused = remote(t, players["anna"], "undo", "--override", "--reason", "wrong tech", "--agreed-by", "Britain")
    assert refused["exit"] == 1, refused
    return cid, channel, t.players.override_requests(cid)[-1]["id"]


def worker_pass(t: Any, sender: Failing, public_url: str | None = None) -> None:
    from tracker.server.delivery import DeliverySettings, Worker
    from tracker.service.notify import Backoff

    # Every failed message due again at once: the pass after this one tries it again.
    worker = Worker(t.engine, DeliverySettings(public_url, Backoff(0.001, 0.001, 8, lease=0.001), sender=sender))
    try:
        worker.step()
    finally:
        worker.close()


def request_row(t: Any, cid: str, number: int) -> dict[str, Any]:
    (row,) = [r for r in Outbox(t.engine).log(cid) if r["version"] == -(OVERRIDE_VERSIONS + number)]
    return dict(row)


def test_rk3_an_override_request_approved_while_its_channel_failed_is_superseded_not_sent(league: Any) -> None:
    """Attempt 4, after the receiver was mended, posted "needs the agreement of Britain ...
    approve 1" after bert had approved it, and the log said delivered."""
    from tracker.server.app import approve_override

    t, players = league
    cid, channel, number = asked(t, players)
    sender = Failing()
    worker_pass(t, sender)
    worker_pass(t, sender)
    assert request_row(t, cid, number)["attempts"] == 2
    assert t.acting_as(players["bert"], lambda: approve_override(t, players["bert"], "autumn", number))["exit"] == 0
    sender.mended = True
    worker_pass(t, sender)
    row = request_row(t, cid, number)
    assert row["status"] == "superseded", row
    assert row["last_error"] == f"superseded: override request {number} was approved by bert"
    assert not any("needs the agreement" in body["text"] for _, body in sender.sent)


def test_rk3_an_override_request_void_since_the_campaign_moved_on_is_superseded(league: Any) -> None:
    t, players = league
    cid, channel, number = asked(t, players)
    sender = Failing()
    worker_pass(t, sender)
    # Anything recorded after a request makes it void: `approve` refuses it ("ask again").
    assert remote(t, players["anna"], "next")["exit"] == 0
    sender.mended = True
    worker_pass(t, sender)
    row = request_row(t, cid, number)
    assert row["status"] == "superseded"
    assert (
        row["last_error"] == f"superseded: override request {number} is void: the campaign moved on since it was asked"
    )


def test_rk3_an_open_override_request_is_sent_its_command_without_a_placeholder_server(league: Any) -> None:
    """Without --public-url the command read `tracker --server URL --campaign ... approve 1`,
    which fails as pasted; the other messages' commands leave the server to TRACKER_SERVER."""
    t, players = league
    cid, channel, number = asked(t, players)
    (payload,) = [json.loads(r["payload"]) for r in Outbox(t.engine).due(float("inf"))]
    sender = Failing()
    sender.mended = True
    worker_pass(t, sender)
    assert request_row(t, cid, number)["status"] == "delivered"
    (text,) = [body["text"] for _, body in sender.sent if "needs the agreement" in body["text"]]
    assert f"  next: tracker --campaign autumn approve {number}" in text.splitlines(), text
    assert "URL" not in text
    # With --public-url, the server as its players know it.
    text = message_text(payload, next_command, "https://league.example/")
    assert f"  next: tracker --server https://league.example --campaign autumn approve {number}" in text


def tokens(db: str) -> dict[str, str]:
    made = {}
    for name, nations in (("anna", "Germany"), ("bert", "Britain")):
        out = run(db, "players", "add", name, "--nations", nations)
        made[name] = out.strip().splitlines()[-1]
    return made


def test_rk3_the_refusal_names_the_server_as_the_client_reached_it_and_the_campaign(db: str, tmp_path: Path) -> None:
    """It read "approves it with `tracker --server URL approve 1`": a placeholder, no campaign."""
    from starlette.testclient import TestClient

    from tracker.server.app import create_app

    made = tokens(db)
    anna = {"Authorization": f"Bearer {made['anna']}"}
    app = create_app(db, keys=str(tmp_path / "keys.db"))
    with TestClient(app, base_url="http://league.test:18555") as client:
        body = {"campaign": "autumn", "args": ["research", "advanced_submarine"]}
        assert client.post("/api/command", json=body, headers=anna).status_code == 200
        undo = ["undo", "--override", "--reason", "wrong tech", "--agreed-by", "Britain"]
        answer = client.post("/api/command", json={"campaign": "autumn", "args": undo}, headers=anna)
    assert answer.status_code == 409, answer.text
    error = answer.json()["error"]
    assert error.endswith("approves it with `tracker --server http://league.test:18555 --campaign autumn approve 1`")
    assert answer.json()["stderr"].strip().endswith("--campaign autumn approve 1`")


def test_rk3_the_refusal_names_the_public_url_when_the_server_has_one(db: str, tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from tracker.server.app import create_app
    from tracker.server.delivery import DeliverySettings

    made = tokens(db)
    anna = {"Authorization": f"Bearer {made['anna']}"}
    app = create_app(db, keys=str(tmp_path / "keys.db"))
    # Set as `tracker serve --public-url` sets it; no worker runs in a client without `with`.
    app.state.delivery = DeliverySettings(public_url="https://league.example/")
    client = TestClient(app, base_url="http://127.0.0.1:18556")
    research = {"action": "research", "inputs": {"technology": "advanced_submarine"}}
    assert client.post("/api/campaigns/autumn/actions", json=research, headers=anna).status_code == 200
    undo = {"action": "undo", "inputs": {"override": True, "reason": "wrong tech", "agreed_by": ["Britain"]}}
    answer = client.post("/api/campaigns/autumn/actions", json=undo, headers=anna)
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"].endswith("`tracker --server https://league.example --campaign autumn approve 1`")


# ----- a failed `tracker notify test` -----


def test_a_failed_notify_test_is_given_up_not_retried_by_the_worker(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user was told it failed (exit 1), yet the worker retried it (attempts 4) and a mended
    receiver got a stale test."""
    from tracker.service.notify import HttpSender

    def refused(self: Any, channel: Any, body: Any) -> str:
        raise SendFailed("HTTP 404")

    monkeypatch.setattr(HttpSender, "send", refused)
    run(db, "notify", "add", "webhook", "https://hooks.example/x")
    out = run(db, "notify", "test", "1", code=1)
    assert "did not take the test message: HTTP 404" in out
    (row,) = json.loads(run(db, "notify", "log", "--json"))
    assert (row["status"], row["attempts"]) == ("failed", 1)
    from tracker.service.application import Tracker

    with Tracker(db) as t:
        assert Outbox(t.engine).due(float("inf")) == []


# ----- Discord's and Slack's limits -----


def long_handoff(items: int, words: int) -> str:
    """A message as `message_text` writes it: its head, then each item and its command, then
    the viewer's link."""
    lines = ["The North Sea, autumn 1914 (autumn): round 3 · Germany · naval combat"]
    for n in range(1, items + 1):
        lines.append(f"Waiting for Britain: battle {n} in Heligoland Bight, " + "a volley to roll " * words)
        lines.append(f"  next: tracker --campaign autumn battle roll {n}")
    lines.append("https://league.example/campaigns/autumn/board")
    return "\n".join(lines)


def test_a_long_discord_message_keeps_every_command_and_the_link_and_shortens_the_words() -> None:
    """`text[:2000]` cut the end off: the last commands and the viewer's link went, silently."""
    text = long_handoff(8, 20)
    assert len(text) > DISCORD_LIMIT
    content = webhook_body("discord", text, {}, "<@42>")["content"]
    assert len(content) <= DISCORD_LIMIT
    lines = content.splitlines()
    assert lines[0] == "<@42> The North Sea, autumn 1914 (autumn): round 3 · Germany · naval combat"
    assert lines[-1] == "https://league.example/campaigns/autumn/board"
    commands = [line for line in lines if line.startswith("  next: ")]
    assert commands == [f"  next: tracker --campaign autumn battle roll {n}" for n in range(1, 9)]
    # Every item's words are still there, each cut and marked so.
    described = [line for line in lines if line.startswith("Waiting for Britain: battle")]
    assert len(described) == 8 and all(line.endswith("…") for line in described)
    # One that fits is sent as written.
    short = long_handoff(2, 1)
    assert fit(short, DISCORD_LIMIT) == short == webhook_body("discord", short, {}, None)["content"]


def test_a_message_too_long_for_even_short_words_leaves_lines_out_and_says_so() -> None:
    text = long_handoff(40, 3)
    content = webhook_body("discord", text, {}, None)["content"]
    lines = content.splitlines()
    assert len(content) <= DISCORD_LIMIT
    assert lines[0].startswith("The North Sea") and lines[1].startswith("… (") and "left out" in lines[1]
    assert lines[-2:] == [
        "  next: tracker --campaign autumn battle roll 40",
        "https://league.example/campaigns/autumn/board",
    ]


def test_a_slack_message_is_cut_to_its_limit_keeping_its_link_and_whole_escapes() -> None:
    """Slack cuts a text over 40,000 characters at its end; its escapes (`&amp;`) are never cut
    in two."""
    text = long_handoff(100, 30).replace("Heligoland Bight", "Heligoland & Bight")
    body = webhook_body("slack", text, {}, None)["text"]
    assert len(text) > SLACK_LIMIT and len(body) <= SLACK_LIMIT
    assert body.endswith(
        "\n  next: tracker --campaign autumn battle roll 100\nhttps://league.example/campaigns/autumn/board"
    )
    assert "&amp;" in body and not any(line.endswith(("&…", "&a…", "&am…", "&amp…")) for line in body.splitlines())
