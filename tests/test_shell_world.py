"""`tracker shell` at a table on the great-war-1914 map (148 zones): completion of names with
spaces as a bash user types them, the odds' subjects and the override's nations, and a prompt
that follows a second shell on the same database. In-process where no terminal is needed;
the terminal test is skipped with the reason without tmux (an error in CI), as in
test_shell."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import cli_on
from tests.test_shell import _keys, _wait_for, tmux  # noqa: F401 - tmux is a fixture
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session
from tracker.cli.shell_prompt import completer


@pytest.fixture
def world(tmp_path: Path) -> str:
    path = str(tmp_path / "war.db")
    cli_on(path)("new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    return path


@pytest.fixture
def obj(world: str) -> Iterator[Context]:
    context = Context(world, None)
    context.load()
    yield context
    context.close()


def _completions(obj: Context, text: str) -> list[str]:
    from prompt_toolkit.document import Document

    return [c.text for c in completer(cli, obj).get_completions(Document(text), None)]


def test_tab_completes_a_zone_whose_spaces_are_typed_with_backslashes(obj: Context) -> None:
    # `Gulf\ of\ R`, as bash users type a space, completed nothing: the word was cut at the
    # escaped space, though the line `show Gulf\ of\ Riga` runs.
    assert _completions(obj, r"show gulf\ of\ r") == ["'Gulf of Riga'"]
    assert _completions(obj, r"move DE-CA4 --to Central\ B") == ["'Central Baltic'"]
    assert _completions(obj, r"move DE-CA4 --path Western\ Baltic,Central\ B") == ["'Western Baltic,Central Baltic'"]
    assert Session(cli, obj).dispatch(r"show Gulf\ of\ Riga --json") == 0


def test_every_zone_tab_offers_is_completed_from_its_first_words_and_taken(obj: Context, capsys) -> None:
    offered = _completions(obj, "show ")
    assert len(offered) == 148
    session = Session(cli, obj)
    for text in offered:
        name = text.strip("'")
        typed = name[:-1].replace(" ", "\\ ")
        assert text in _completions(obj, f"show {typed}"), name
        assert session.dispatch(f"show {text} --json") == 0, name
    assert "Error" not in capsys.readouterr().err


def test_tab_completes_what_odds_is_asked_about(obj: Context) -> None:
    # `odds ` completed nothing: neither its words nor an open battle's number.
    assert _completions(obj, "odds ") == ["convoy", "intercept", "asw", "naval", "need", "escorts", "buy"]
    assert _completions(obj, "odds ne") == ["need"]
    assert _completions(obj, "odds need --zone Dog") == ["'Dogger Bank'"]
    assert _completions(obj, "odds escorts --zone Heli") == ["'Heligoland Bight'"]
    assert _completions(obj, "odds need --zone 'Dogger Bank' --type bat") == ["battleship"]
    session = Session(cli, obj)
    for line in ("next", "next", "move DE-BB1 --to 'Southern North Sea'", "next"):
        assert session.dispatch(line) == 0, line
    assert session.dispatch("battle start --zone 'Southern North Sea'") == 0
    assert _completions(obj, "odds ")[0] == "1"


def test_rk3_tab_completes_the_nations_that_agree_to_an_override(obj: Context) -> None:
    assert _completions(obj, "undo --override --reason typo --agreed-by Ge") == ["Germany"]
    assert _completions(obj, "research advanced_asw --override --reason x --agreed-by Britain,Fr") == ["Britain,France"]


def test_t3_the_prompt_follows_a_second_shell_on_the_same_database(world: str, obj: Context) -> None:
    # The prompt kept the phase of this shell's last line: after another shell's `next` it said
    # research while the campaign was in purchase.
    first = Session(cli, obj)
    message = first.live_prompt()
    assert message() == "war · round 1 · Germany · research> "
    other = Context(world, None)
    try:
        assert Session(cli, other).dispatch("next") == 0
    finally:
        other.close()
    first.REFRESH = 0.0
    assert message() == "war · round 1 · Germany · purchase> "


def test_t3_the_prompt_in_a_terminal_changes_when_another_player_acts(
    world: str,
    tmp_path: Path,
    tmux: list[str],  # noqa: F811 - the fixture imported from test_shell
) -> None:
    exe = shutil.which("tracker", path=str(Path(sys.executable).parent)) or "tracker"
    command = f"{exe} --db {world} shell --history {tmp_path / 'history'}; sleep 30"
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "60", "-y", "20", command], check=True)
    _wait_for(tmux, "war · round 1 · Germany · research>")
    _keys(tmux, "pending")
    result = CliRunner().invoke(cli, ["--db", world, "next"])
    assert result.exit_code == 0, result.output
    # No key pressed: the prompt is redrawn with the new phase, the half-typed line kept.
    _wait_for(tmux, "war · round 1 · Germany · purchase> pending")
    _keys(tmux, "C-u", "exit", "Enter")


def test_rk3_undo_output_wraps_between_words_on_a_narrow_terminal(world: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A shell at 60 columns: what an undo took back was left to the terminal, which cut it
    # mid-word ("Heligoland Bi|ght"); it is wrapped between words, as `pending` is.
    from tracker.cli import common

    runner = CliRunner()
    for args in (["next", "--to", "combat_movement"], ["move", "DE-SS1", "DE-SS2", "DE-SS3", "--path", "Dogger Bank"]):
        assert runner.invoke(cli, ["--db", world, *args]).exit_code == 0
    monkeypatch.setattr(common, "prose_width", lambda: 60)
    lines = runner.invoke(cli, ["--db", world, "undo"]).output.splitlines()
    assert all(len(line) <= 60 for line in lines), lines
    words = " ".join(line.strip() for line in lines)
    assert "Germany moves DE-SS1, DE-SS2, DE-SS3: Heligoland Bight -> Dogger Bank [F4]" in words.replace("   [", " [")
