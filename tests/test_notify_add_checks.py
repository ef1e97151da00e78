"""`tracker notify add`'s checks of what a channel is given: a webhook URL's scheme in any case
(RFC 3986 3.1), stored and shown in lower case, and the webhook-only options refused for an
e-mail channel rather than ignored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_notify import run
from tracker.server.delivery import DeliverySettings
from tracker.service.notify import email_body, mask, normal_url, url_problem


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    run(path, "new", "c1", "--scenario", "north-sea-1914", "--dice", "auto")
    run(path, "players", "add", "bert", "--nations", "Germany")
    return path


@pytest.mark.parametrize("url", ["HTTP://example.org/hook", "Https://example.org/hook", "hTTpS://example.org/hook"])
def test_a_webhook_urls_scheme_is_taken_in_any_case(url: str) -> None:
    assert url_problem(url) is None
    assert normal_url(url) == url.split(":", 1)[0].lower() + "://example.org/hook"


def test_other_schemes_are_refused_whatever_their_case() -> None:
    for url in ("FTP://example.org/x", "HTTPX://example.org/x", "HTTP:/example.org", "javascript:alert(1)"):
        assert url_problem(url) == "has another scheme"
    assert url_problem("HTTP://") == "names no host"
    assert normal_url("mailto:a@b") == "mailto:a@b"


def test_notify_add_takes_a_capital_scheme_stores_it_in_lower_case_and_masks_its_query(db: str) -> None:
    out = run(db, "notify", "add", "webhook", "HTTPS://hooks.example.org/h?token=s3cret", "--format", "slack")
    assert out.startswith("Channel 1: slack webhook https://hooks.example.org/*** for the group.")
    (listed,) = json.loads(run(db, "notify", "list", "--json"))
    assert listed["target"] == "https://hooks.example.org/***"
    assert "s3cret" not in run(db, "notify", "list") and "HTTPS" not in run(db, "notify", "list")
    assert "http:// or https://" in run(db, "notify", "add", "webhook", "FTP://example.org/x", code=2)


def test_a_public_url_in_capitals_links_the_messages_in_lower_case() -> None:
    settings = DeliverySettings(public_url="HTTPS://tracker.example.org")
    assert settings.public_url == "https://tracker.example.org"
    # An e-mail links a line that is a URL whatever its scheme's case.
    html = email_body("round 1\nHTTPS://tracker.example.org/campaigns/c1/board", {"title": "T", "round": 1,
                      "nation": "Germany", "phase": "research"})["html"]  # fmt: skip
    assert '<a href="HTTPS://tracker.example.org/campaigns/c1/board">' in html
    assert mask("https://tracker.example.org/x") == "https://tracker.example.org/***"


@pytest.mark.parametrize(
    ("given", "option"),
    [
        (["--format", "discord"], "--format"),
        (["--format", "json"], "--format"),
        (["--mention", "<@123>"], "--mention"),
        (["--mention", ""], "--mention"),
    ],
)
def test_an_e_mail_channel_refuses_the_webhook_only_options(db: str, given: list[str], option: str) -> None:
    out = run(db, "notify", "add", "email", "bert@example.org", "--player", "bert", *given, code=2)
    assert out.startswith(f"Error: {option} is for webhooks only (") and len(out.strip().splitlines()) == 1
    # Refused: no channel added.
    assert run(db, "notify", "list") == "No channels: tracker notify add webhook URL\n"


def test_an_e_mail_channel_without_them_is_added_and_a_webhook_takes_them(db: str) -> None:
    assert "e-mail to b***@example.org for player bert" in run(
        db, "notify", "add", "email", "bert@example.org", "--player", "bert"
    )
    out = run(db, "notify", "add", "webhook", "https://x.example/h", "--format", "discord", "--mention", "<@1>")
    assert out.startswith("Channel 2: discord webhook")
