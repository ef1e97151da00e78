"""`tracker demo` tells its story in a player's words: its closing lines named technologies by
their IDs ("Britain advanced_asw 1") and its narrated phases by theirs ("now round 1, Germany:
combat_movement"); they are named as the log and the reports name them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli


def demo(tmp_path: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "demo.db"), "demo", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize(
    ("args", "levels"),
    [
        ((), "Technology: Germany Advanced Submarine level 2, Britain Advanced ASW level 1"),
        (
            ("--scenario", "great-war-1914"),
            "Technology: Britain Advanced ASW level 1, Germany Advanced Submarine level 1",
        ),
    ],
)
def test_te2_the_demo_names_technologies_and_phases_in_words(
    tmp_path: Path, args: tuple[str, ...], levels: str
) -> None:
    out = demo(tmp_path, *args)
    assert levels in out.splitlines()
    told = [line for line in out.splitlines() if re.search(r"\bnow round \d+, |^Now: round ", line)]
    assert told and not [line for line in told if "_" in line], told
