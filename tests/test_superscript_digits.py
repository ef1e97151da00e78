"""A number typed with a digit that is no ASCII digit ("²", which `str.isdigit()` takes and
`int()` refuses) is refused in one line naming the input, on the command line and through the
league server: `tracker odds ²` said "unexpected ValueError", and the server's odds and `approve`
each raised inside it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.text import unit_order
from tests.support import TRACKER, Server, served
from tracker.cli.main import cli

SUPERSCRIPT_TWO = "\u00b2"


def test_odds_with_a_superscript_battle_number_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["odds", SUPERSCRIPT_TWO])
    assert result.exit_code == 2, result.output
    assert f"give a battle number or one of convoy, intercept, asw, naval, got '{SUPERSCRIPT_TWO}'" in result.output
    assert "unexpected" not in result.output


def test_verify_head_with_a_superscript_event_number_is_a_usage_error(tmp_path: Path) -> None:
    db = str(tmp_path / "v.db")
    CliRunner().invoke(cli, ["--db", db, "new", "v", "--scenario", "north-sea-1914"])
    result = CliRunner().invoke(cli, ["--db", db, "verify", "--head", f"{SUPERSCRIPT_TWO}:0123456789abcdef0123"])
    assert result.exit_code == 2, result.output
    assert "expected SEQ:HASH" in result.output and "unexpected" not in result.output


def test_unit_order_keeps_a_part_that_is_no_decimal_number_as_text() -> None:
    assert unit_order(SUPERSCRIPT_TWO) == (SUPERSCRIPT_TWO,)
    assert sorted(["GB-BB10", "GB-BB8"], key=unit_order) == ["GB-BB8", "GB-BB10"]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    pytest.importorskip("starlette", reason="tracker serve needs the server extra")
    work = tmp_path_factory.mktemp("superscript")
    db = work / "s.db"
    subprocess.run([*TRACKER, "--db", str(db), "new", "league1", "--scenario", "north-sea-1914"], check=True)
    added = subprocess.run(
        [*TRACKER, "--db", str(db), "players", "add", "rita", "--referee"], check=True, capture_output=True, text=True
    )
    with served(str(db), "--keys", str(work / "keys.db"), workdir=work) as server:
        yield server, added.stdout.strip().splitlines()[-1]


def test_the_servers_odds_and_approve_refuse_a_superscript_number(league: tuple[Server, str]) -> None:
    server, token = league
    status, answer = server.post("/api/command", {"args": ["odds", SUPERSCRIPT_TWO], "campaign": "league1"}, token)
    assert status in (400, 409) and "give a battle number" in answer["stderr"], (status, answer)
    status, answer = server.post("/api/command", {"args": ["approve", SUPERSCRIPT_TWO], "campaign": "league1"}, token)
    assert status in (400, 409) and "usage: approve REQUEST" in answer["stderr"], (status, answer)
