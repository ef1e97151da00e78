"""A nation's possessive in the words shown to players: "Britain's", and "United States'" for a
name ending in "s" (the great-war-1914 board), in refusals, the log's summaries and reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.text import possessive
from tracker.cli.main import cli

US = "United States"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Britain", "Britain's"),
        ("Austria-Hungary", "Austria-Hungary's"),
        ("Ottoman Empire", "Ottoman Empire's"),
        ("United States", "United States'"),
        ("Netherlands", "Netherlands'"),
        ("USS", "USS'"),
    ],
)
def test_possessive_takes_the_apostrophe_alone_after_a_final_s(name: str, expected: str) -> None:
    assert possessive(name) == expected


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def world(tmp_path: Path) -> str:
    db = str(tmp_path / "world.db")
    run(db, "new", "world", "--scenario", "great-war-1914")
    return db


def events(db: str) -> int:
    return len(json.loads(run(db, "log", "--json")))


def refusal(db: str, *args: str, code: int = 1) -> str:
    """The one-line refusal (exit 1; 2: a usage error) of a command that records nothing."""
    before = events(db)
    out = run(db, *args, code=code)
    assert events(db) == before
    assert len(out.splitlines()) == 1, out
    return out.strip()


def test_f8_refusal_names_the_neutral_united_states_territory(tmp_path: Path) -> None:
    db = world(tmp_path)
    out = refusal(db, "adjust", "--add", "Britain:fighter:Eastern United States", "--reason", "x")
    assert out == (
        "Error: F8: Eastern United States is United States' territory and United States is neutral in "
        "round 1: Britain's fighter cannot be added there"
    )


def test_ad1_and_t3_refusals_name_the_united_states_units_and_turn(tmp_path: Path) -> None:
    db = world(tmp_path)
    assert "United States enters the war now (F8)" in run(db, "adjust", "--enter", US, "--reason", "x")
    out = refusal(db, "adjust", "--add", f"{US}:fighter:Northwest Germany", "--reason", "x")
    assert out == "Error: AD1: United States' air units cannot be added in Northwest Germany, held by Germany"
    out = refusal(db, "buy", "fighter", "--nation", US)
    assert out == "Error: T3: buying units is for the nation whose turn it is: it is Germany's turn, not United States'"


def test_t4_next_to_names_the_united_states_phase_and_the_turns_before_it(tmp_path: Path) -> None:
    db = world(tmp_path)
    run(db, "adjust", "--enter", US, "--reason", "x")
    run(db, "next", "--to", "purchase", "--nation", US)
    out = refusal(db, "next", "--to", "purchase", "--nation", US, code=2)
    assert out == "Error: already there: it is United States' purchase phase (round 1); plain `tracker next` ends it"
    out = refusal(db, "next", "--to", "research", "--nation", US)
    assert out.startswith(
        "Error: T4: United States' research is in round 2: its research comes after Germany's, Britain's, "
    )
    out = refusal(db, "buy", "fighter", "--nation", "Japan")
    assert out.endswith("it is United States' turn, not Japan's")


def test_cv1_convoy_attack_on_united_states_ntr_reads_right_in_the_log_and_report(tmp_path: Path) -> None:
    db = world(tmp_path)
    run(db, "adjust", "--enter", US, "--add", "Germany:submarine:Caribbean Sea", "--reason", "x")
    run(db, "next", "--to", "collect_resources", "--nation", US)
    run(db, "convoy", "declare", "--by", "Germany", "--zone", "Caribbean Sea")
    (declared,) = [r for r in json.loads(run(db, "log", "--json")) if r["kind"] == "ConvoyAttackDeclared"]
    assert declared["data"]["defender"] == US
    assert f"against United States' {declared['data']['ntr']} NTR" in run(db, "log")
    assert "Germany attacks United States' " in run(db, "report", "--all")
    # The words are shown, not recorded: every action run again records the same events.
    assert run(db, "verify").startswith("OK:")
