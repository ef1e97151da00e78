"""`tracker --server URL`, when the connection is lost (a server killed while it records): the
client tries once more with the same idempotency key; when that fails too, its one line says
whether the command had been sent, since the server may then have recorded it (the user's next
question). Something that answers, but not in HTTP (a mail server's port), is no tracker server:
said so, not its greeting quoted."""

from __future__ import annotations

import socket
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from click.testing import CliRunner

from tracker.cli import client
from tracker.cli.client import ServerError, send
from tracker.cli.main import cli


@contextmanager
def answering(reply: bytes | None) -> Iterator[str]:
    """A listener that takes one request, then stops listening and answers `reply` (None:
    nothing, the connection closed as a killed server's is): a retry finds nobody there."""
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            if reply is None:
                conn.recv(65536)
            listener.close()  # before the answer: the retry is refused
            if reply is not None:
                conn.sendall(reply)
                # Then end the answer and read the request out until the client closes: a socket
                # closed with unread data resets the connection, which the client would see
                # as a connection lost (and try again) before it read the answer.
                conn.shutdown(socket.SHUT_WR)
                conn.settimeout(10)
                try:
                    while conn.recv(65536):
                        pass
                except OSError:
                    pass

    worker = threading.Thread(target=serve, daemon=True)
    worker.start()
    try:
        yield url
    finally:
        worker.join(timeout=10)
        listener.close()


def request(url: str) -> urllib.request.Request:
    return urllib.request.Request(
        url + "/api/command", data=b'{"args": ["next"]}', method="POST", headers={"Content-Type": "application/json"}
    )


@pytest.fixture(autouse=True)
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "RETRY_SECONDS", 0.0)


def test_a_command_lost_after_it_was_sent_may_have_been_recorded() -> None:
    with answering(None) as url, pytest.raises(ServerError) as lost:
        send(request(url), url)
    message = str(lost.value)
    assert message.startswith(f"cannot reach the server at {url}: ")
    assert "the command was sent before the connection was lost, so it may have been recorded" in message
    assert "tracker log --tail 5" in message and "\n" not in message


def test_a_server_never_reached_recorded_nothing_and_says_no_more() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    with pytest.raises(ServerError) as refused:
        send(request(url), url)
    assert str(refused.value).startswith(f"cannot reach the server at {url}: ")
    assert "may have been recorded" not in str(refused.value)


def test_a_read_lost_after_it_was_sent_says_no_more() -> None:
    with answering(None) as url, pytest.raises(ServerError) as lost:
        send(request(url), url, reading=True)
    assert "may have been recorded" not in str(lost.value)


def test_the_cli_says_it_in_one_line_exit_1() -> None:
    with answering(None) as url:
        result = CliRunner().invoke(
            cli, ["--server", url, "--campaign", "autumn", "next"], env={"TRACKER_TOKEN": "trk_x_y"}
        )
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "may have been recorded" in lines[0], result.output


def test_a_port_that_answers_but_not_in_http_is_no_tracker_server() -> None:
    with answering(b"220 mail.example ESMTP ready\r\n") as url, pytest.raises(ServerError) as wrong:
        send(request(url), url)
    assert str(wrong.value) == f"the server at {url} did not answer as a tracker server"
