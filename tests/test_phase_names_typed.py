"""A phase typed as a newcomer types it: as the demo and the reports say it (`combat movement`),
with a hyphen, or after `next` without `--to`; each is taken, or refused saying what to type."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracker.cli.main import cli


def invoke(db: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", db, *args], prog_name="tracker")


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    assert invoke(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual").exit_code == 0
    return path


@pytest.mark.parametrize("typed", ["combat movement", "Combat-Movement", " combat  MOVEMENT "])
def test_a_phase_with_a_space_or_a_hyphen_is_the_phase(db: str, typed: str) -> None:
    result = invoke(db, "next", "--to", typed)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "round 1, Germany: combat movement   [T2]"
    state = invoke(db, "state", "--turn", "1", "--phase", typed)
    assert state.exit_code == 0, state.output
    assert "combat movement in progress" in state.stdout.splitlines()[0]


def test_the_first_word_of_a_phase_typed_unquoted_says_the_phase_it_begins(db: str) -> None:
    # `--to combat movement` unquoted: the option gets `combat`.
    result = invoke(db, "next", "--to", "combat", "movement")
    assert result.exit_code == 2
    assert result.stderr.endswith("; did you mean 'combat_movement'? (see tracker next --help)\n"), result.stderr
    assert ".;" not in result.stderr
    log = invoke(db, "log", "--phase", "naval")
    assert "did you mean 'naval_combat'?" in log.stderr, log.stderr


def test_a_name_that_begins_no_phase_is_refused_as_before(db: str) -> None:
    result = invoke(db, "next", "--to", "nonsense")
    assert result.exit_code == 2
    assert "did you mean" not in result.stderr


@pytest.mark.parametrize(
    ("words", "phase"),
    [(["purchase"], "purchase"), (["combat", "movement"], "combat_movement"), (["collect"], "collect_resources")],
)
def test_a_phase_typed_after_next_without_to_says_where_it_goes(db: str, words: list[str], phase: str) -> None:
    result = invoke(db, "next", *words)
    assert (result.exit_code, result.stdout) == (2, "")
    assert f"a phase goes after --to: `tracker next --to {phase}`" in result.stderr, result.stderr
    assert invoke(db, "state").stdout.splitlines()[0].endswith("research  (after event 1)")


def test_other_extra_words_after_next_get_no_phase_hint(db: str) -> None:
    result = invoke(db, "next", "nonsense")
    assert result.exit_code == 2
    assert "--to" not in result.stderr
