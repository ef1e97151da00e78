"""A viewer page's errors are HTML pages (the message and a link back to the campaigns), the
API's are its JSON {error, rule}: a failure inside a page (500), a page sent a POST (405) or a
body over the limit (413) was answered with the API's JSON or a bare line of text, which a
browser shows as such."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRACKER

pytest.importorskip("starlette", reason="the server needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

from tracker.server import queries, viewer  # noqa: E402
from tracker.server.app import create_app  # noqa: E402
from tracker.server.limits import MAX_BODY  # noqa: E402


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    db = str(tmp_path / "league.db")
    for args in (("new", "autumn", "--scenario", "north-sea-1914"), ("campaign", "public", "on")):
        done = subprocess.run([*TRACKER, "--db", db, *args], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db")), raise_server_exceptions=False) as c:
        yield c


def is_error_page(answer: Any, status: int, says: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html"), answer.text
    assert 'id="error"' in answer.text and says in answer.text, answer.text
    assert '<a href="/">All campaigns</a>' in answer.text, answer.text


def is_api_error(answer: Any, status: int, says: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json"), answer.text
    assert says in answer.json()["error"]


def boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("a bug")


def test_a_failure_inside_a_page_is_an_html_page_and_inside_the_api_json(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(viewer, "board_data", boom)
    monkeypatch.setattr(viewer, "campaigns_data", boom)
    monkeypatch.setattr(queries, "state_data", boom)
    is_error_page(client.get("/campaigns/autumn/board"), 500, "unexpected RuntimeError (see the server&#39;s log)")
    is_error_page(client.get("/"), 500, "unexpected RuntimeError")
    is_api_error(client.get("/api/campaigns/autumn/state"), 500, "unexpected RuntimeError (see the server's log)")


def test_a_page_sent_a_post_or_too_large_a_body_is_an_html_page(client: TestClient) -> None:
    # The methods a route takes are named in the order Starlette gives them (GET, HEAD either way).
    is_error_page(client.post("/campaigns/autumn/board"), 405, "/campaigns/autumn/board takes ")
    assert "not POST" in client.post("/campaigns/autumn/board").text
    too_large = "request body over 1048576 bytes"
    is_error_page(client.post("/campaigns/autumn/board", content=b"x" * (MAX_BODY + 1)), 413, too_large)
    # The API keeps its JSON for the same mistakes.
    is_api_error(client.post("/api/campaigns/autumn/state"), 405, ", not POST")
    is_api_error(client.post("/api/campaigns/autumn/actions", content=b"x" * (MAX_BODY + 1)), 413, too_large)


def test_an_unknown_campaign_or_bad_query_value_is_an_html_page_on_the_viewer_and_json_on_the_api(
    client: TestClient,
) -> None:
    is_error_page(client.get("/campaigns/nope/board"), 404, "no such campaign")
    is_error_page(client.get("/campaigns/autumn/board?turn=x"), 400, "turn must be a whole number")
    is_api_error(client.get("/api/campaigns/nope/state"), 404, "no such campaign")
    is_api_error(client.get("/api/campaigns/autumn/state?turn=x"), 400, "turn")
