"""The league server's operator, round two: the delivery worker says an outage once (and again
when its reason changes) and says when it is over; a failed attempt says which one it was and
whether it was the last; settings read from the environment are named as such in refusals;
the start line names the key store; a read-only database answers actions 503 without
Retry-After; and `tracker db status` points at `db current`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

# The settings `tracker serve` also reads from the environment (cleared around each test: a
# developer's shell or CI may set some).
SETTINGS = (
    "TRACKER_DB", "TRACKER_KEYS", "TRACKER_REVEAL", "TRACKER_PUBLIC_URL", "TRACKER_SMTP_HOST",
    "TRACKER_SMTP_PORT", "TRACKER_SMTP_FROM", "TRACKER_SMTP_STARTTLS", "TRACKER_SMTP_USER",
    "TRACKER_WEBHOOK_HOSTS", "TRACKER_LOG_LEVEL", "TRACKER_LOG_FORMAT", "TRACKER_SERVER", "TRACKER_TOKEN",
)  # fmt: skip


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)


def league(tmp_path: Path) -> str:
    """A league file with one auto-dice campaign and its referee; the referee's token."""
    db = str(tmp_path / "league.db")
    runner = CliRunner()
    done = runner.invoke(cli, ["--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto"])
    assert done.exit_code == 0, done.output
    done = runner.invoke(cli, ["--db", db, "--campaign", "autumn", "players", "add", "rita", "--referee"])
    assert done.exit_code == 0, done.output
    return done.output.strip().splitlines()[-1]


# ----- the delivery worker during an outage -----


class Outage:
    """A worker's passes: failing with `reasons` in turn, then one that works, then the end."""

    def __init__(self, *reasons: str) -> None:
        self.reasons = list(reasons)
        self.worked = 0

    def __call__(self) -> int:
        import sqlalchemy.exc

        if self.reasons:
            raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception(self.reasons.pop(0)))
        self.worked += 1
        if self.worked > 1:
            raise asyncio.CancelledError  # ends the worker
        return 0


def run_worker(tmp_path: Path, outage: Outage, caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    from sqlalchemy import create_engine

    from tracker.server.delivery import DeliverySettings, Worker

    worker = Worker(create_engine(f"sqlite:///{tmp_path / 'w.db'}"), DeliverySettings(poll=0.001))
    worker.step = outage  # type: ignore[method-assign]
    worker.outbox_waiting = lambda: 3  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO, logger="tracker.delivery"), pytest.raises(asyncio.CancelledError):
        asyncio.run(worker.run())
    return [r for r in caplog.records if r.name == "tracker.delivery"]


def test_an_outage_is_logged_once_per_reason_and_its_end_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A database down for an hour was "notification delivery failed" every 2 s, about 1,800
    lines, and nothing said when delivery worked again."""
    down = "connection refused"
    outage = Outage(*[down] * 30, "database is starting up", "database is starting up")
    records = run_worker(tmp_path, outage, caplog)
    said = [r.getMessage() for r in records]
    assert len(said) == 3, said
    first, changed, back = said
    assert first.startswith("notification delivery failed: OperationalError: ") and down in first, first
    assert "said again if the reason changes and when delivery resumes" in first
    assert "database is starting up" in changed and [r.levelno for r in records[:2]] == [logging.WARNING] * 2
    assert back.startswith("notification delivery resumed after ") and "(32 failed passes)" in back
    assert back.endswith(": 3 messages waiting") and records[2].levelno == logging.INFO


def test_a_failed_attempt_says_which_it_was_and_the_last_that_it_gave_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each failed attempt read the same ("unreachable: ConnectionRefusedError"), and nothing
    said that the last of them gave the message up for good."""
    from sqlalchemy import create_engine

    from tracker.server import delivery
    from tracker.service.notify import Backoff

    outcomes = iter(["unreachable: ConnectionRefusedError"] * 3 + [None])
    monkeypatch.setattr(delivery, "send_prepared", lambda *args: next(outcomes))
    engine = create_engine(f"sqlite:///{tmp_path / 'w.db'}")
    worker = delivery.Worker(engine, delivery.DeliverySettings(backoff=Backoff(30, 3600, 3)))
    worker._tracker = type("T", (), {"registry": type("R", (), {"name_of": staticmethod(lambda cid: "autumn")})})()
    row: dict[str, Any] = {"id": 1, "channel_id": 2, "kind": "webhook", "version": 3, "campaign_id": "c"}
    with caplog.at_level(logging.INFO, logger="tracker.delivery"):
        for attempts in (0, 1, 2, 0):
            worker._send_in_order([({**row, "attempts": attempts}, {}, 0.0)])
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        "notification 1 to channel 2: unreachable: ConnectionRefusedError (attempt 1 of 3, next in 30 s)",
        "notification 1 to channel 2: unreachable: ConnectionRefusedError (attempt 2 of 3, next in 60 s)",
        "notification 1 to channel 2: unreachable: ConnectionRefusedError (attempt 3 of 3: given up, see tracker "
        "notify log)",
        "notification 1 to channel 2: delivered",
    ]
    assert [r.levelno for r in caplog.records] == [logging.INFO, logging.INFO, logging.WARNING, logging.INFO]
    assert [getattr(r, "fields", {}).get("attempt") for r in caplog.records] == [1, 2, 3, None]


# ----- settings named as the operator gave them -----


def factory(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **env: str) -> str:
    """What the ASGI factory (`uvicorn --factory tracker.server:create_app`) says, refusing."""
    from tracker.server import create_app

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        create_app()
    assert stopped.value.code == 2
    return capsys.readouterr().err


def test_the_factory_names_the_environment_variables_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under the factory there are no options, yet its refusals named them: "--smtp-host needs
    --smtp-from", "--public-url must be", "--keys ...", "name another with --db"."""
    smtp = factory(monkeypatch, capsys, TRACKER_SMTP_HOST="mail.example")
    assert smtp == "Error: TRACKER_SMTP_HOST needs TRACKER_SMTP_FROM=ADDRESS (the notifications' sender)\n"
    sender = factory(monkeypatch, capsys, TRACKER_SMTP_FROM="nobody")
    assert sender.startswith("Error: TRACKER_SMTP_FROM must be one e-mail address"), sender
    monkeypatch.delenv("TRACKER_SMTP_HOST")
    url = factory(monkeypatch, capsys, TRACKER_PUBLIC_URL="javascript:alert(1)")
    assert url.startswith("Error: TRACKER_PUBLIC_URL must be an http:// or https:// address"), url
    monkeypatch.delenv("TRACKER_PUBLIC_URL")
    missing = tmp_path / "nope.db"
    db = factory(monkeypatch, capsys, TRACKER_DB=str(missing))
    assert db.startswith(f"Error: no database at '{missing}'") and db.endswith("name another with TRACKER_DB\n"), db
    league(tmp_path)
    keys = tmp_path / "nodir" / "k.db"
    store = factory(monkeypatch, capsys, TRACKER_DB=str(tmp_path / "league.db"), TRACKER_KEYS=str(keys))
    assert store.startswith(f"Error: TRACKER_KEYS {keys}: folder "), store


def test_serve_names_an_option_typed_as_typed_and_one_from_the_environment_as_that(tmp_path: Path) -> None:
    from tests.support import free_port

    args = ["--db", str(tmp_path / "c.db"), "serve", "--port", str(free_port())]
    typed = CliRunner().invoke(cli, [*args, "--smtp-host", "mail.example"])
    assert typed.exit_code == 2 and "serve: --smtp-host needs --smtp-from ADDRESS" in typed.output, typed.output
    from_env = CliRunner().invoke(cli, args, env={"TRACKER_SMTP_HOST": "mail.example"})
    assert from_env.exit_code == 2, from_env.output
    assert "serve: TRACKER_SMTP_HOST needs TRACKER_SMTP_FROM=ADDRESS" in from_env.output, from_env.output
    url = CliRunner().invoke(cli, args, env={"TRACKER_PUBLIC_URL": "ftp://x"})
    assert "Error: TRACKER_PUBLIC_URL must be an http://" in url.output and url.exit_code == 2, url.output
    missing = str(tmp_path / "missing.db")
    db = CliRunner().invoke(cli, ["serve", "--port", str(free_port())], env={"TRACKER_DB": missing})
    assert db.exit_code == 2 and "name another with TRACKER_DB" in db.output, db.output
    db = CliRunner().invoke(cli, ["--db", missing, "serve", "--port", str(free_port())])
    assert db.exit_code == 2 and "name another with --db" in db.output, db.output


# ----- the start line -----


@pytest.fixture
def quiet_configure(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.server import logs

    # The log stays pytest's to capture (configure sends it to stderr).
    monkeypatch.setattr(logs, "configure", lambda level, fmt: None)


@pytest.mark.usefixtures("quiet_configure")
def test_the_start_line_names_the_key_store_in_use(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """ "Serving ... on http://..." named the database alone: a server started from another folder
    (another default key store) looked the same as the league's."""
    from tracker.server.command import build_app

    league(tmp_path)
    keys = tmp_path / "keys.db"
    with caplog.at_level(logging.INFO, logger="tracker.server"):
        app = build_app(
            str(tmp_path / "league.db"), " on http://127.0.0.1:1/", keys=str(keys), reveal="on-request",
            public_url=None, log_level="info", log_format="text", smtp_host=None, smtp_port=587,
            smtp_from=None, smtp_starttls=False, smtp_user=None,
        )  # fmt: skip
    try:
        [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Serving ")]
        assert line.endswith(f"on http://127.0.0.1:1/ (API under /api), dice seeds in {keys}"), line
    finally:
        app.state.service.close()


@pytest.mark.usefixtures("quiet_configure")
def test_another_key_store_from_the_environment_is_warned_of_by_its_variable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The warning that the key store is not the league's said "--keys ..." under the factory."""
    from tracker.server.app import create_app
    from tracker.server.command import build_app

    league(tmp_path)
    db = str(tmp_path / "league.db")
    create_app(db, keys=str(tmp_path / "keys.db")).state.service.close()  # the league's store
    (tmp_path / "elsewhere").mkdir()
    with caplog.at_level(logging.WARNING, logger="tracker.server"):
        app = build_app(
            db, "", keys=str(tmp_path / "elsewhere" / "k.db"), reveal="on-request", public_url=None,
            log_level="info", log_format="text", smtp_host=None, smtp_port=587, smtp_from=None,
            smtp_starttls=False, smtp_user=None, names={"--keys": "TRACKER_KEYS"},
        )  # fmt: skip
    app.state.service.close()
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(f"TRACKER_KEYS {tmp_path / 'elsewhere' / 'k.db'}: "), warning
    assert "started with another TRACKER_KEYS" in warning and "--keys" not in warning, warning


def test_a_key_store_url_is_named_without_its_password() -> None:
    from sqlalchemy.engine import make_url

    from tracker.server.command import key_store

    url = make_url("postgresql+psycopg://league:s3cret@db.example/keys")
    tracker = type("T", (), {"registry": type("R", (), {"keys": type("E", (), {"url": url})()})()})()
    assert key_store(tracker) == "postgresql+psycopg://league:***@db.example/keys"


# ----- a read-only database -----


@pytest.fixture
def read_only_league(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    token = league(tmp_path)
    db = tmp_path / "league.db"
    db.chmod(0o444)
    try:
        yield db, {"Authorization": f"Bearer {token}"}
    finally:
        db.chmod(0o644)


def test_an_action_on_a_read_only_database_is_503_without_retry_after(
    read_only_league: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """It was 400, the client's fault; it is the server's state, which no retry mends soon."""
    from tracker.server.app import create_app
    from tracker.server.served import READ_ONLY

    db, headers = read_only_league
    app = create_app(str(db), keys=str(tmp_path / "keys.db"))
    try:
        with TestClient(app) as client:
            answer = client.post("/api/campaigns/autumn/actions", json={"action": "next"}, headers=headers)
            spec = client.get("/api/openapi.json").json()
    finally:
        app.state.service.close()
    assert answer.status_code == 503, answer.text
    assert "retry-after" not in answer.headers
    assert answer.json() == {"error": READ_ONLY, "rule": None}
    # And through the command route a `tracker --server URL next` takes (it was 400: exit 2).
    app = create_app(str(db), keys=str(tmp_path / "keys.db"))
    try:
        with TestClient(app) as client:
            typed = client.post("/api/command", json={"args": ["next"], "campaign": "autumn"}, headers=headers)
    finally:
        app.state.service.close()
    assert typed.status_code == 503, typed.text
    assert typed.json()["error"] == READ_ONLY and typed.json()["rule"] is None
    documented = spec["paths"]["/campaigns/{name}/actions"]["post"]["responses"]["503"]["description"]
    assert "read-only" in documented and "no Retry-After" in documented


# ----- tracker db -----


@pytest.mark.parametrize(("guess", "meant"), [("status", "current"), ("version", "current"), ("migrate", "upgrade")])
def test_db_names_the_command_a_guess_stands_for(guess: str, meant: str) -> None:
    """`tracker db status` said "no such command 'status'" and no more."""
    done = CliRunner().invoke(cli, ["db", guess], prog_name="tracker")
    assert done.exit_code == 2
    assert done.output == f"Error: db: no such command '{guess}'; did you mean '{meant}'? (see tracker db --help)\n"
