"""Where a league server posts webhooks (`tracker serve --webhook-hosts`): a player's channel
must not make the server post to, or report the status of, addresses inside the operator's
network (link-local ones above all, where clouds hand out their machines' credentials), and a
webhook's redirect is never followed. Checked on the addresses the connection is made to."""

from __future__ import annotations

import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRACKER, served
from tests.test_notify import Receiver
from tracker.service.notify.senders import HttpSender, SendFailed, address_refused

CHANNEL = {"kind": "webhook", "target": ""}


@pytest.mark.parametrize(
    "address, public, private, any_",
    [
        ("93.184.216.34", None, None, None),
        ("2606:2800:220:1:248:1893:25c8:1946", None, None, None),
        ("127.0.0.1", "this machine's", None, None),
        ("::1", "this machine's", None, None),
        ("192.168.1.20", "a private network's", None, None),
        ("10.0.0.5", "a private network's", None, None),
        ("100.64.0.1", "a private network's", None, None),
        ("169.254.169.254", "link-local", "link-local", None),
        ("::ffff:169.254.169.254", "link-local", "link-local", None),
        ("fe80::1%eth0", "link-local", "link-local", None),
        ("0.0.0.0", "not a single host's", "not a single host's", None),
        ("224.0.0.1", "not a single host's", "not a single host's", None),
    ],
)
def test_which_addresses_each_setting_posts_to(address: str, public: Any, private: Any, any_: Any) -> None:
    assert address_refused(address, "public") == public
    assert address_refused(address, "private") == private
    assert address_refused(address, "any") == any_


def test_a_public_only_server_posts_nothing_to_this_machine() -> None:
    with Receiver() as receiver:
        with pytest.raises(SendFailed) as refused:
            HttpSender(timeout=5, allowed="public").send({**CHANNEL, "target": receiver.url}, {"text": "x"})
        assert str(refused.value) == (
            "refused: 127.0.0.1 is at 127.0.0.1, this machine's address, where this server posts no webhook "
            "(tracker serve --webhook-hosts private would)"
        )
        # A name is checked by what it resolves to.
        named = receiver.url.replace("127.0.0.1", "localhost")
        with pytest.raises(SendFailed, match="^refused: localhost is at "):
            HttpSender(timeout=5, allowed="public").send({**CHANNEL, "target": named}, {"text": "x"})
        assert HttpSender(timeout=5, allowed="private").send({**CHANNEL, "target": receiver.url}, {"text": "y"}) == (
            "HTTP 204"
        )
    assert receiver.posts == [{"text": "y"}]


def test_a_link_local_address_is_refused_before_any_connection() -> None:
    with pytest.raises(SendFailed) as refused:
        HttpSender(timeout=30, allowed="private").send(
            {**CHANNEL, "target": "http://169.254.169.254/latest/meta-data/"}, {"text": "x"}
        )
    assert str(refused.value) == (
        "refused: 169.254.169.254 is at 169.254.169.254, link-local address, where this server posts no webhook "
        "(tracker serve --webhook-hosts any would)"
    )


def test_a_webhooks_redirect_is_not_followed() -> None:
    with Receiver() as elsewhere:

        class Moved(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.send_response(302)
                self.send_header("Location", elsewhere.url)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Moved)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            target = f"http://127.0.0.1:{server.server_address[1]}/hook"
            with pytest.raises(SendFailed, match=r"^HTTP 302 \(a redirect, not followed\)$"):
                HttpSender(timeout=5, allowed="any").send({**CHANNEL, "target": target}, {"text": "x"})
        finally:
            server.shutdown()
            server.server_close()
    assert elsewhere.posts == []


def test_tracker_serve_webhook_hosts_public_keeps_a_players_channel_off_this_machine(tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="tracker serve needs the server extra")
    db = tmp_path / "league.db"

    def cli(*args: str) -> str:
        done = subprocess.run([*TRACKER, "--db", str(db), *args], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    cli("new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    token = cli("players", "add", "anna", "--nations", "Germany").split()[-1]
    with Receiver() as receiver, served(str(db), "--webhook-hosts", "public", workdir=tmp_path) as server:

        def send(*args: str, status: int = 200) -> dict[str, Any]:
            got, body = server.post("/api/command", {"args": list(args)}, token=token)
            assert got == status, body
            answer: dict[str, Any] = body
            return answer

        assert send("notify", "add", "webhook", receiver.url)["exit"] == 0
        tested = send("notify", "test", "1", status=409)
        assert tested["exit"] == 1, tested
        assert "refused: 127.0.0.1 is at 127.0.0.1, this machine's address" in tested["stderr"]
        assert receiver.posts == []
    assert "--webhook-hosts" in cli("serve", "--help")
