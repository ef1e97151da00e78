"""What an operator of a league server reads and meets: request lines that name the action or
command asked (never a command's arguments), the rule that refused it and its exit status; a
database that does not answer, answered 503 in one log line a request until it is back; a
failed delivery pass that says why; and a `--keys` that names a missing folder."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRACKER, in_process

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

SECRET = "s3cr3t-hook-path"
WEBHOOK = f"https://hooks.example.com/{SECRET}?key=k3y-{SECRET}"


def tracker(*args: str) -> subprocess.CompletedProcess[str]:
    """A command that sets up or reads, run in this process."""
    return in_process(*args)


def process(*args: str) -> subprocess.CompletedProcess[str]:
    """A command run as a real process: `serve`, which would not return here if it wrongly started."""
    env = {k: v for k, v in os.environ.items() if k not in ("TRACKER_TOKEN", "TRACKER_SERVER", "TRACKER_DB")}
    return subprocess.run([*TRACKER, *args], capture_output=True, text=True, timeout=300, env=env)


def token_of(db: str, *args: str) -> str:
    done = tracker("--db", db, "--campaign", "autumn", "players", "add", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture
def league(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, dict[str, str]]]]:
    """A served campaign `autumn` (research, Germany's turn), and the headers of anna
    (Germany) and rita (the referee)."""
    from tracker.server.app import create_app

    db = str(tmp_path / "league.db")
    assert tracker("--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto").returncode == 0
    anna = token_of(db, "anna", "--nations", "Germany")
    rita = token_of(db, "rita", "--referee")
    headers = {name: {"Authorization": f"Bearer {token}"} for name, token in (("anna", anna), ("rita", rita))}
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client:
        yield client, headers


def request_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    from tracker.server.logs import TextFormatter

    return [TextFormatter().format(r) for r in caplog.records if r.name == "tracker.requests"]


# ----- what a request line names -----


def test_a_request_line_names_an_accepted_action_and_the_rule_t3_that_refused_another(
    league: tuple[TestClient, dict[str, dict[str, str]]], caplog: pytest.LogCaptureFixture
) -> None:
    """Both were `POST /api/campaigns/autumn/actions 200|409`: which action, refused by what?"""
    client, headers = league
    url = "/api/campaigns/autumn/actions"
    with caplog.at_level(logging.INFO, logger="tracker.requests"):
        refused = client.post(
            url, json={"action": "buy", "inputs": {"unit_type": "submarine"}}, headers=headers["anna"]
        )
        done = client.post(url, json={"action": "next"}, headers=headers["anna"])
    assert refused.status_code == 409 and refused.json()["rule"] == "T3", refused.json()
    assert done.status_code == 200, done.json()
    refused_line, done_line = request_lines(caplog)
    assert " 409 " in refused_line and "player=anna action=buy rule=T3 client=" in refused_line
    assert " 200 " in done_line and "player=anna action=next client=" in done_line


def test_a_command_line_is_logged_by_its_name_and_exit_never_its_arguments(
    league: tuple[TestClient, dict[str, dict[str, str]]], caplog: pytest.LogCaptureFixture
) -> None:
    """`notify add webhook URL` names the channel's secret URL: the line says `notify add`."""
    client, headers = league
    with caplog.at_level(logging.DEBUG):
        added = client.post(
            "/api/command", json={"args": ["notify", "add", "webhook", WEBHOOK], "campaign": "autumn"},
            headers=headers["rita"],
        )  # fmt: skip
        refused = client.post(
            "/api/command", json={"args": ["buy", "submarine"], "campaign": "autumn"}, headers=headers["anna"]
        )
    assert added.status_code == 200 and added.json()["exit"] == 0, added.json()
    assert refused.status_code == 409 and refused.json()["rule"] == "T3", refused.json()
    added_line, refused_line = request_lines(caplog)
    assert 'player=rita action="notify add" exit=0 client=' in added_line
    assert "player=anna action=buy rule=T3 exit=1 client=" in refused_line
    assert SECRET not in caplog.text and all(SECRET not in line for line in request_lines(caplog))


def test_a_usage_error_of_a_command_line_is_logged_by_its_name_and_exit_2(
    league: tuple[TestClient, dict[str, dict[str, str]]], caplog: pytest.LogCaptureFixture
) -> None:
    client, headers = league
    with caplog.at_level(logging.INFO, logger="tracker.requests"):
        answer = client.post(
            "/api/command", json={"args": ["notify", "add", "pigeon", WEBHOOK], "campaign": "autumn"},
            headers=headers["rita"],
        )  # fmt: skip
    assert answer.status_code == 400
    [line] = request_lines(caplog)
    assert 'action="notify add" exit=2 client=' in line and SECRET not in line


def test_the_name_of_a_command_is_its_subcommands_alone() -> None:
    from tracker.server.noted import command_name

    assert command_name(["notify", "add", "webhook", WEBHOOK]) == "notify add"
    assert command_name(["notify", WEBHOOK, "add"]) == "notify"
    assert command_name(["buy", "submarine", "2"]) == "buy"
    assert command_name(["players", "add", "add"]) == "players add"


# ----- a database that does not answer -----


def gone(statement: str = "SELECT 1") -> Exception:
    """What SQLAlchemy raises when the SQLite file cannot be opened (PostgreSQL's "connection
    refused" is raised the same way, as a psycopg.OperationalError inside)."""
    import sqlalchemy.exc

    return sqlalchemy.exc.OperationalError(statement, {}, sqlite3.OperationalError("unable to open database file"))


def test_an_unreachable_database_is_a_503_with_retry_after_in_one_line_a_request_and_passes(
    league: tuple[TestClient, dict[str, dict[str, str]]], caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Every request was 500 "unexpected OperationalError" with a 20-line traceback in the log."""
    from eventsourcing.persistence import OperationalError

    from tracker.server.slots import Slot

    client, headers = league
    service = client.app.state.service  # type: ignore[attr-defined]

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise gone()

    def unreachable_store(*args: Any, **kwargs: Any) -> Any:
        # As the recorder raises it: eventsourcing's error around SQLAlchemy's.
        raise OperationalError(gone())

    with monkeypatch.context() as down, caplog.at_level(logging.INFO):
        down.setattr(service.tracker.players, "authenticate", unreachable)
        read = client.get("/api/campaigns/autumn/pending", headers=headers["anna"])
        down.undo()
        down.setattr(Slot, "run", unreachable_store)
        public = client.get("/api/campaigns")
        page = client.get("/campaigns/autumn/board", headers={"Accept": "text/html"}, follow_redirects=False)
    for answer in (read, public):
        assert answer.status_code == 503, answer.text
        assert answer.headers["Retry-After"] == "5"
        assert answer.json() == {"error": "the database does not answer; try again shortly", "rule": None}
    assert page.status_code == 503 and "the database does not answer" in page.text
    lines = request_lines(caplog)
    assert len(lines) == 3 and all(len(line.splitlines()) == 1 for line in lines), lines
    assert 'reason="unable to open database file"' in lines[0] and "Traceback" not in caplog.text
    # Back by itself: the next request asks the database again.
    assert client.get("/api/campaigns/autumn/pending", headers=headers["anna"]).status_code == 200


def test_a_database_error_that_is_no_outage_stays_a_500_with_its_traceback(
    league: tuple[TestClient, dict[str, dict[str, str]]], caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A table missing is the schema's (or the code's) fault: not "try again shortly"."""
    import sqlalchemy.exc

    client, headers = league
    service = client.app.state.service  # type: ignore[attr-defined]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise sqlalchemy.exc.OperationalError("SELECT", {}, sqlite3.OperationalError("no such table: tracker_x"))

    monkeypatch.setattr(service.tracker.players, "authenticate", broken)
    with caplog.at_level(logging.INFO, logger="tracker.requests"):
        client_500 = TestClient(client.app, raise_server_exceptions=False)
        answer = client_500.get("/api/campaigns/autumn/pending", headers=headers["anna"])
    assert answer.status_code == 500 and "unexpected OperationalError" in answer.json()["error"]
    [record] = [r for r in caplog.records if r.name == "tracker.requests"]
    assert record.exc_info is not None


def test_outage_reads_the_drivers_reason_through_each_layer() -> None:
    from eventsourcing.persistence import OperationalError

    from tracker.server.responses import outage
    from tracker.storage.datastore import persistence_error

    assert outage(gone()) == "unable to open database file"
    assert outage(OperationalError(gone())) == "unable to open database file"
    assert outage(persistence_error(gone())) == "unable to open database file"  # type: ignore[arg-type]
    assert outage(sqlite3.OperationalError("database is locked")) == "database is locked"
    assert outage(RuntimeError("unable to open database file")) is None


# ----- the delivery worker -----


def test_a_failed_delivery_pass_says_why_with_no_webhook_url(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """It said "notification delivery failed: ProgrammingError", and no more."""
    import sqlalchemy.exc
    from sqlalchemy import create_engine

    from tracker.server.delivery import DeliverySettings, Worker

    worker = Worker(create_engine(f"sqlite:///{tmp_path / 'w.db'}"), DeliverySettings(poll=0.01))
    passes = 0

    def step() -> int:
        nonlocal passes
        passes += 1
        if passes > 1:
            raise asyncio.CancelledError  # ends the worker after its first pass
        driver = Exception(f'invalid input syntax for type integer: "{WEBHOOK}"\nLINE 1: ...')
        raise sqlalchemy.exc.ProgrammingError("SELECT target FROM channels", {"target": WEBHOOK}, driver)

    worker.step = step  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="tracker.delivery"), pytest.raises(asyncio.CancelledError):
        asyncio.run(worker.run())
    [record] = [r for r in caplog.records if r.name == "tracker.delivery"]
    said = record.getMessage()
    assert said.startswith("notification delivery failed: ProgrammingError: ")
    assert "invalid input syntax for type integer" in said and "https://hooks.example.com/***" in said
    assert SECRET not in said and "\n" not in said and "SELECT" not in said


# ----- --keys -----


def test_d5_serve_keys_in_a_missing_folder_is_refused_naming_keys(tmp_path: Path) -> None:
    db = str(tmp_path / "league.db")
    assert tracker("--db", db, "new", "autumn", "--scenario", "north-sea-1914").returncode == 0
    missing = tmp_path / "nodir" / "k.db"
    done = process("--db", db, "serve", "--keys", str(missing), "--port", "1")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"Error: --keys {missing}: folder {missing.parent} does not exist (the key store of the dice seeds, D5)\n"
    )
    folder = process("--db", db, "serve", "--keys", str(tmp_path), "--port", "1")
    assert folder.returncode == 2 and folder.stderr.startswith(f"Error: --keys {tmp_path}: a folder"), folder.stderr
