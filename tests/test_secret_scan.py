"""The scan of the servers' logs for secrets (tests/secretscan.py) finds what it is meant to
find: a secret planted in a log fails the session, naming the file and the kind of secret and
never the secret; a clean log, or a webhook URL in its masked form, does not."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tests import secretscan
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.notify import Outbox
from tracker.service.players import Players

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "trk_0123456789abcdef_" + "A" * 40 + "b-_"
SEED = "5eed" * 16
WEBHOOK = "https://discord.com/api/webhooks/123/very-secret-path"
PASSWORD = "correct-horse-battery-staple"
SECRETS = {SEED: "seed", WEBHOOK: "webhook URL", PASSWORD: "password"}


def log_with(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(f"INFO started\n{text}\nINFO stopped\n")
    return str(path)


def test_each_kind_of_secret_in_a_log_is_found_by_file_and_kind(tmp_path: Path) -> None:
    logs = [
        log_with(tmp_path, "seed.log", f"rolled with {SEED}"),
        # In capitals, inside a longer run of hex digits.
        log_with(tmp_path, "hex.log", f"state 00{SEED.upper()}ff"),
        log_with(tmp_path, "hook.log", f"POST {WEBHOOK} 500"),
        log_with(tmp_path, "password.log", f"AUTH PLAIN {PASSWORD}"),
        # A token nobody collected is found by its shape.
        log_with(tmp_path, "token.log", f"Authorization: Bearer {TOKEN}"),
        log_with(tmp_path, "clean.log", "GET /api/campaigns/{name}/state 200 3 ms"),
    ]
    findings, unread = secretscan.scan(logs, SECRETS)
    assert unread == []
    assert {(Path(f.log).name, f.kind) for f in findings} == {
        ("seed.log", "seed"),
        ("hex.log", "seed"),
        ("hook.log", "webhook URL"),
        ("password.log", "password"),
        ("token.log", "token"),
    }
    # What a finding says names the file and the kind, never the secret.
    for finding in findings:
        assert all(value not in str(finding) for value in [*SECRETS, TOKEN]), finding


def test_what_the_log_may_print_is_not_a_finding(tmp_path: Path) -> None:
    from tracker.server.access import hide_tokens
    from tracker.service.notify import mask

    log = log_with(tmp_path, "masked.log", f"delivered to {mask(WEBHOOK)}; {hide_tokens('token ' + TOKEN)}")
    assert secretscan.scan([log], SECRETS) == ([], [])
    # A webhook URL with nothing after its host holds no secret: it is not collected, since its
    # masked form (which a log may print) begins with it.
    secretscan.secret("webhook URL", "http://127.0.0.1:8765/")
    assert "http://127.0.0.1:8765/" not in secretscan.kept()[1]
    # A log gone before the scan is said to be unread, not clean.
    assert secretscan.scan([str(tmp_path / "gone.log")], SECRETS) == ([], [str(tmp_path / "gone.log")])


def test_a_secret_in_a_log_a_worker_kept_fails_the_session(tmp_path: Path) -> None:
    planted = log_with(tmp_path, "planted.log", f"smtp login {PASSWORD}")
    # The controller of a session that had passed, given by a worker the log it kept and the
    # secret it collected (this process's own logs and secrets are scanned with them).
    config = SimpleNamespace(stash=pytest.Stash())
    handed = {"logs": [planted], "secrets": {PASSWORD: "password"}}
    secretscan.take_over(SimpleNamespace(config=config, workeroutput={secretscan.WORKER_KEY: json.dumps(handed)}))
    session = SimpleNamespace(config=config, exitstatus=pytest.ExitCode.OK)
    secretscan.finish(session)  # type: ignore[arg-type]
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED
    _, _, findings, _ = config.stash[secretscan.RESULT]
    assert secretscan.Finding(planted, "password") in findings


def test_a_seed_one_worker_saw_revealed_is_public_though_another_kept_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """D3: a worker that made the demo's seed and never saw its log keeps it as a secret; the
    worker whose server revealed it hands it over as public; the controller counts it public."""
    # A controller of its own: this process's logs and secrets are not its business here.
    for kept_here in ("_logs", "_secrets", "_public"):
        monkeypatch.setattr(secretscan, kept_here, type(getattr(secretscan, kept_here))())
    fed_back = log_with(tmp_path, "fuzzed.log", f"GET /api/campaigns/{SEED} 404")
    config = SimpleNamespace(stash=pytest.Stash())
    made = {"logs": [], "secrets": {SEED: "seed"}}
    revealed = {"logs": [fed_back], "secrets": {}, "public": [SEED]}
    for handed in (made, revealed):
        secretscan.take_over(SimpleNamespace(config=config, workeroutput={secretscan.WORKER_KEY: json.dumps(handed)}))
    session = SimpleNamespace(config=config, exitstatus=pytest.ExitCode.OK)
    secretscan.finish(session)  # type: ignore[arg-type]
    assert session.exitstatus == pytest.ExitCode.OK
    _, _, findings, _ = config.stash[secretscan.RESULT]
    assert findings == []


def test_the_tokens_seeds_and_webhook_urls_made_in_this_process_are_collected(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = str(t.create("c", "north-sea-1914", dice="auto"))
        token = Players(t.engine).add(cid, "anna", ["Germany"], False)
        Outbox(t.engine).add(cid, "webhook", "http://127.0.0.1:9/anna-hook", "json", "anna", None)
        Outbox(t.engine).add(cid, kind="email", target="anna@example.org", fmt="email", player="anna", mention=None)
    (seed,) = (row[0] for row in sqlite3.connect(tmp_path / "c.db").execute("SELECT seed FROM tracker_dice_seeds"))
    secrets = secretscan.kept()[1]
    assert secrets[token] == "token" and secrets[seed] == "seed"
    assert secrets["http://127.0.0.1:9/anna-hook"] == "webhook URL"
    assert "anna@example.org" not in secrets


def test_a_stopped_servers_databases_and_password_are_harvested(tmp_path: Path) -> None:
    with Tracker(str(tmp_path / "c.db")) as t:
        cid = str(t.create("c", "north-sea-1914", dice="auto"))
        Outbox(t.engine).add(cid, "webhook", "http://127.0.0.1:9/made-here", "json", None, None)
    # Rows another process wrote (a server, a command run as a process) are read from the files.
    other_seed, other_hook = "0ddba11" * 9 + "f", "http://127.0.0.1:9/made-by-a-server"
    with sqlite3.connect(tmp_path / "c.db") as conn:
        conn.execute("UPDATE tracker_notify_channels SET target = ?", (other_hook,))
    with sqlite3.connect(tmp_path / "keys.db") as conn:
        conn.execute("CREATE TABLE tracker_dice_seeds (campaign_id TEXT, epoch INTEGER, seed TEXT)")
        conn.execute("INSERT INTO tracker_dice_seeds VALUES ('c', 1, ?)", (other_seed,))
    secretscan.harvest("c.db", "keys.db", {"TRACKER_SMTP_PASSWORD": "a-password-for-smtp"}, tmp_path)
    secrets = secretscan.kept()[1]
    assert secrets[other_seed] == "seed" and secrets[other_hook] == "webhook URL"
    assert secrets["a-password-for-smtp"] == "password"


def test_a_seed_the_campaign_has_revealed_is_public_and_the_next_one_is_still_secret(tmp_path: Path) -> None:
    """D3: `dice reveal` publishes a seed in the log, where anyone may read it; a log that
    holds it (a fuzzer sending back what the API showed it) leaks nothing. The seed committed
    to next is still a secret."""
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(cli, ["--db", db, "new", "c", "--scenario", "north-sea-1914", "--dice", "auto"])
    assert result.exit_code == 0, result.output
    (revealed,) = (row[0] for row in sqlite3.connect(db).execute("SELECT seed FROM tracker_dice_seeds"))
    result = CliRunner().invoke(cli, ["--db", db, "dice", "reveal"])
    assert result.exit_code == 0 and revealed in result.output, result.output
    (following,) = (r[0] for r in sqlite3.connect(db).execute("SELECT seed FROM tracker_dice_seeds WHERE epoch = 1"))
    secretscan.harvest("c.db", None, None, tmp_path)
    secrets = secretscan.kept()[1]
    assert revealed not in secrets and secrets[following] == "seed"
    findings, _ = secretscan.scan([log_with(tmp_path, "public.log", f"GET /api/campaigns/{revealed} 404")], secrets)
    assert findings == []


def test_a_damaged_log_keeps_its_seeds_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A campaign whose log a test damaged cannot say which seeds it revealed: its seeds are
    all still secrets, and the database is still harvested."""
    monkeypatch.setattr(secretscan, "_unharvested", set())
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(cli, ["--db", db, "new", "c", "--scenario", "north-sea-1914", "--dice", "auto"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(db) as conn:
        (seed,) = (row[0] for row in conn.execute("SELECT seed FROM tracker_dice_seeds"))
        conn.execute("UPDATE tracker_events SET state = ? WHERE originator_version = 1", (b"{not json",))
    secretscan.harvest("c.db", None, None, tmp_path)
    assert secretscan.kept()[1][seed] == "seed" and secretscan.unharvested() == []


def test_a_database_that_cannot_be_read_is_said_and_does_not_fail_the_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(secretscan, "_unharvested", set())
    secretscan.harvest("postgresql+psycopg://nobody@127.0.0.1:1/none", "missing-keys.db", None, tmp_path)
    assert secretscan.unharvested() == ["postgresql+psycopg://nobody@127.0.0.1:1/none (OperationalError)"]


PLANTED = """
from pathlib import Path

from click.testing import CliRunner

from tests import secretscan
from tracker.cli.main import cli


def test_a_server_that_logs_a_password(tmp_path: Path) -> None:
    log = secretscan.keep_log(tmp_path / "server-1.log")
    secretscan.secret("password", {password!r})
    log.write_text("INFO login " + {logged!r} + "\\n")
"""
# The suite's own hooks, in a session of a folder of its own.
CONFTEST = "from tests.conftest import *  # noqa: F403\n"


@pytest.mark.parametrize(
    ("workers", "logged"),
    [(["-n", "2"], PASSWORD), ([], "nothing secret")],
    ids=["two workers, a secret logged", "one process, nothing logged"],
)
def test_a_whole_session_fails_when_a_server_logged_a_secret(tmp_path: Path, workers: list[str], logged: str) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    for i in range(3):  # several tests, so that each worker has one
        (tmp_path / f"test_planted_{i}.py").write_text(PLANTED.format(password=PASSWORD, logged=logged))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert "3 passed" in out, out
    assert "server logs scanned for secrets" in out, out
    if logged == PASSWORD:
        assert done.returncode == 1, out
        assert out.count("SECRET IN LOG") == 3 and "server-1.log: holds a password" in out, out
        assert PASSWORD not in out
    else:
        assert done.returncode == 0, out
        assert "none found" in out and "SECRET IN LOG" not in out, out
