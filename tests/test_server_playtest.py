"""Found by playing a league server as its players and as an outsider would: every refusal
names its rule in the error's `rule` (the API's one error shape, {"error", "rule"}), whichever
route refused it and whichever error the referee raised."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import in_process

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

from starlette.testclient import TestClient  # noqa: E402

from tracker.server.app import create_app  # noqa: E402


def tracker(*args: str) -> str:
    """A command that sets up or reads, run in this process."""
    done = in_process(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def league(tmp_path: Path) -> Iterator[tuple[Any, dict[str, str]]]:
    """A campaign with manual dice and Germany's player, served."""
    db = str(tmp_path / "league.db")
    tracker("--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    anna = tracker("--db", db, "players", "add", "anna", "--nations", "Germany").strip().splitlines()[-1]
    with TestClient(create_app(db, keys=str(tmp_path / "keys.db"))) as client:
        yield client, {"Authorization": f"Bearer {anna}"}


def test_a_die_out_of_range_is_refused_naming_d1(league: tuple[Any, dict[str, str]]) -> None:
    """D1 was in the message only: the error's rule was null (dice errors are no RuleViolation)."""
    client, headers = league
    asked = {"action": "research", "inputs": {"technology": "advanced submarine", "dice": [-3]}}
    refused = client.post("/api/campaigns/autumn/actions", json=asked, headers=headers)
    assert refused.status_code == 409
    assert refused.json()["rule"] == "D1" and refused.json()["error"].startswith("D1: die value -3")


def test_a_command_line_refused_through_the_server_names_its_rule(league: tuple[Any, dict[str, str]]) -> None:
    """POST /api/command answered every refusal with "rule": null, though its error said T3."""
    client, headers = league
    asked = {"args": ["move", "de-ss1", "--path", "dover strait"], "campaign": "autumn"}
    refused = client.post("/api/command", json=asked, headers=headers)
    assert refused.status_code == 409 and refused.json()["exit"] == 1
    assert refused.json()["rule"] == "T3" and refused.json()["error"].startswith("T3: movement is legal in")
    # Bad usage cites no rule: there is none to name.
    usage = client.post("/api/command", json={"args": ["move"], "campaign": "autumn"}, headers=headers)
    assert usage.status_code == 400 and usage.json()["rule"] is None


def test_a_phase_is_taken_in_any_case_as_the_command_line_takes_it(league: tuple[Any, dict[str, str]]) -> None:
    """`tracker state --turn 1 --phase NAVAL_COMBAT` shows the board; the API and the viewer
    answered "unknown phase 'NAVAL_COMBAT'" (400)."""
    client, headers = league
    assert client.post("/api/campaigns/autumn/actions", json={"action": "next"}, headers=headers).status_code == 200
    state = client.get("/api/campaigns/autumn/state?turn=1&phase=RESEARCH", headers=headers)
    assert state.status_code == 200, state.json()
    assert state.json() == client.get("/api/campaigns/autumn/state?turn=1&phase=research", headers=headers).json()
    log = client.get("/api/campaigns/autumn/log?phase=Purchase", headers=headers)
    assert log.status_code == 200 and [r["phase"] for r in log.json()] == ["purchase"]
    for path in ("/campaigns/autumn/board?turn=1&phase=Research", "/campaigns/autumn/log?phase=PURCHASE"):
        assert client.get(path, headers=headers).status_code == 200, path


def test_serve_refused_for_its_smtp_options_records_nothing(tmp_path: Path) -> None:
    """`serve --smtp-host` without `--smtp-from` was refused only once the application had
    opened the database, which moved the seeds to the key store and revealed one (two events)."""
    from click.testing import CliRunner

    from tests.support import free_port
    from tracker.cli.main import cli

    db = str(tmp_path / "league.db")
    tracker("--db", db, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "auto")
    before = tracker("--db", db, "log", "--json")
    keys = tmp_path / "keys.db"
    args = ["--db", db, "serve", "--port", str(free_port()), "--keys", str(keys), "--smtp-host", "127.0.0.1"]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2 and "--smtp-host needs --smtp-from" in refused.output, refused.output
    assert tracker("--db", db, "log", "--json") == before
    assert not keys.exists()
