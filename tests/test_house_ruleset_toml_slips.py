"""A house ruleset file's TOML slips are told as a scenario file's are (`domain.scenario_toml`):
at the file's line and key, with what to write instead. Before, a ruleset file got TOML's bare
words ("Invalid value"), with nothing of what was wrong."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support import TRACKER

TWTEA = Path(__file__).parent.parent / "domain" / "data" / "rulesets" / "twtea-3e.toml"


@pytest.mark.parametrize(
    "old, new, says",
    [
        ("hostile = true", "hostile = True", "true and false are written in lower case, as hostile = true"),
        ("cost = 6\n", "cost: 6\n", "a key and its value are joined by '=', as cost = 6"),
    ],
)
def test_a_house_rulesets_toml_slip_says_what_to_write(tmp_path: Path, old: str, new: str, says: str) -> None:
    text = TWTEA.read_text()
    assert old in text
    house = tmp_path / "house.toml"
    house.write_text(text.replace(old, new, 1))
    line = text[: text.index(old)].count("\n") + 1
    done = subprocess.run(
        [*TRACKER, "--db", str(tmp_path / "c.db"), "new", "c", "--scenario", "north-sea-1914", "--ruleset", str(house)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0 and done.stdout == "", done.stdout
    assert done.stderr.startswith(f"Error: {house}:{line}: units.") and says in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1
