"""A `json` webhook's message carries `message_id`, the same at every attempt of one message (a
server killed after the receiver took it, before it was marked delivered, posts it again: a
bot drops the second) and another for each reminder, as an e-mail's Message-ID; Discord and
Slack bodies, whose webhooks take no such id, are as they were."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from click.testing import CliRunner

from tracker.cli.common import next_command
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.notify import Backoff, HttpSender, Outbox, deliver_due, describe, message_body
from tracker.service.notify.delivery import prepare

QUICK = Backoff(first=0.01, cap=0.05, limit=6, lease=0.2)
GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide.md"


@pytest.fixture
def posts() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A webhook receiver on 127.0.0.1: its URL and the bodies posted to it."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def test_a_json_webhook_posted_again_after_a_crash_carries_the_same_message_id(
    tmp_path: Path, posts: tuple[str, list[dict[str, Any]]]
) -> None:
    url, received = posts
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(cli, ["--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto"])
    assert result.exit_code == 0, result.output
    with Tracker(db) as t:
        cid = str(t.campaign_id("autumn"))
        outbox = Outbox(t.engine)
        channel = outbox.add(cid, "webhook", url, "json", None, None)
        outbox.enqueue_test(cid, channel, describe(t.load(UUID(cid)), "autumn"))
        (row,) = outbox.due(time.time())
        # The worker posts, and the server dies before the row is marked delivered.
        _, body = prepare(outbox, row, next_command, QUICK)
        assert body is not None
        HttpSender(allowed="any").send(row, body)
        time.sleep(QUICK.lease + 0.05)
        assert deliver_due(outbox, HttpSender(allowed="any"), next_command, QUICK) == 1
        first, again = received
        assert first == again  # the same message, posted twice
        # Hex of its own, naming neither the campaign nor its id (a name of hex letters, "c1",
        # could turn up in one by chance: this one cannot).
        message_id = first["message_id"]
        assert re.fullmatch(r"[0-9a-f]{32}", message_id) and "autumn" not in message_id
        assert message_id != cid.replace("-", "")
        # Another message to the same channel is another id.
        outbox.enqueue_test(cid, channel, describe(t.load(UUID(cid)), "autumn"))
        assert deliver_due(outbox, HttpSender(allowed="any"), next_command, QUICK) == 1
        assert received[2]["message_id"] != first["message_id"]


def row(fmt: str = "json", **more: Any) -> dict[str, Any]:
    """An outbox row of a webhook channel, as the outbox reads it."""
    return {
        "id": 7,
        "campaign_id": "0b5c1a56-3f5e-4a4e-9a52-0f4a1f2a1d2e",
        "created_at": 1796600000.0,
        "next_attempt_at": 1796600000.0,
        "kind": "webhook",
        "format": fmt,
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
    "newly_owing": ["Britain"],
    "pending": [],
}


def body_of(r: dict[str, Any], payload: dict[str, Any] = PAYLOAD) -> Any:
    return message_body(r, payload, lambda item: None, None)


def test_each_reminder_of_a_json_webhook_has_its_own_message_id() -> None:
    first = body_of(row())["message_id"]
    assert body_of(row(next_attempt_at=1796615999.0))["message_id"] == first  # a retry
    assert body_of(row(id=8))["message_id"] != first
    reminder = body_of(row(), {**PAYLOAD, "reminder": True})["message_id"]
    later = body_of(row(next_attempt_at=1796659000.0), {**PAYLOAD, "reminder": True})["message_id"]
    assert len({first, reminder, later}) == 3


def test_discord_and_slack_bodies_carry_no_message_id() -> None:
    assert set(body_of(row("discord"))) == {"content", "allowed_mentions"}
    assert set(body_of(row("slack"))) == {"text"}


def test_the_guide_lists_message_id_among_the_json_payloads_fields() -> None:
    section = GUIDE.read_text().split("## Play by webhook, e-mail or file", 1)[1].split("\n## ", 1)[0]
    assert '"message_id"' in section
