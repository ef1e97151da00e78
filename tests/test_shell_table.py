"""`tracker shell` at one table: a second shell (or player) recording on the same database,
lines pasted several at once, a terminal too narrow for the prompt, and Tab on `--opt=value`
and comma lists. In-process where no terminal is needed; the terminal tests are skipped with
the reason without tmux (an error in CI), as in test_shell."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import cli_on
from tests.test_shell import _keys, _wait_for, tmux  # noqa: F401 - tmux is a fixture
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session
from tracker.cli.shell_prompt import completer, fit_prompt, prompt_session


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    cli_on(path)("new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    return path


@pytest.fixture
def two(db: str) -> Iterator[tuple[Session, Session]]:
    """Two shells on one database, as two terminals at one table."""
    first, second = Context(db, None), Context(db, None)
    yield Session(cli, first), Session(cli, second)
    first.close()
    second.close()


def _completions(obj: Context, text: str) -> list[str]:
    from prompt_toolkit.document import Document

    return [c.text for c in completer(cli, obj).get_completions(Document(text), None)]


def test_t2_an_action_runs_on_the_campaign_as_another_shell_left_it(two: tuple[Session, Session], capsys) -> None:
    # The shell ran each action first on the copy its last line left: `next` after the other
    # shell's `next` was refused ("Germany recorded 2 events meanwhile; look and run again").
    first, second = two
    assert first.dispatch("next") == 0
    assert second.dispatch("next") == 0
    assert first.dispatch("next") == 0, capsys.readouterr().err
    assert first.dispatch("undo") == 0
    assert second.dispatch("next") == 0, capsys.readouterr().err
    capsys.readouterr()
    first.dispatch("state --json")
    assert '"phase": "naval_combat"' in capsys.readouterr().out


def test_another_writers_events_are_said_and_a_next_typed_before_them_is_refused_once(
    two: tuple[Session, Session], capsys
) -> None:
    first, second = two
    first.start_looking()  # at a terminal (`run`)
    assert second.dispatch("next") == 0
    assert second.dispatch("buy submarine") == 0
    capsys.readouterr()
    # What the other shell recorded is said first; `next`, typed before the player saw it,
    # would end another phase than the one looked at (T2): refused, nothing recorded.
    assert first.dispatch("next") == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:2] == [
        "Meanwhile: round 1, Germany: purchase   [T2]",
        "Meanwhile: Germany buys 1 submarine for 6   [PU1]",
    ]
    assert captured.err == "Error: Germany recorded 4 events meanwhile; look and run again\n"
    # Seen now: run again, it runs, and nothing more is said.
    assert first.dispatch("next") == 0
    assert capsys.readouterr().out.startswith("round 1, Germany: combat movement")
    assert first.news() == []


def test_the_news_is_said_above_the_prompt_as_it_comes(two: tuple[Session, Session]) -> None:
    first, second = two
    first.start_looking()
    assert second.dispatch("next") == 0
    assert first.news() == ["Meanwhile: round 1, Germany: purchase   [T2]"]
    assert first.news() == []  # said once


def test_lines_pasted_at_once_run_one_after_another(db: str, tmp_path: Path, capsys) -> None:
    # A paste of three lines was read as one: `pending log --tail 1 next`, refused.
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    obj = Context(db, None)
    try:
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            prompt = prompt_session(cli, obj, tmp_path / "history")
            pipe.send_text("\x1b[200~pending\nlog --tail 1\nnext\x1b[201~\rexit\r")
            Session(cli, obj).run(prompt.prompt)
    finally:
        obj.close()
    captured = capsys.readouterr()
    assert "Error" not in captured.err, captured.err
    assert "waiting for Germany to finish research" in captured.out
    assert "round 1, Germany: purchase   [T2]" in captured.out


def test_the_prompt_fits_a_narrow_terminal(db: str) -> None:
    obj = Context(db, None)
    try:
        c = obj.load()
    finally:
        obj.close()
    assert fit_prompt("autumn", c, None) == "autumn · round 1 · Germany · research> "
    assert fit_prompt("autumn", c, 80) == "autumn · round 1 · Germany · research> "
    assert fit_prompt("autumn", c, 40) == "round 1 · Germany · research> "
    assert fit_prompt("autumn", c, 35) == "round 1 · DE · research> "
    assert fit_prompt("autumn", c, 20) == "DE · research> "
    # Wide characters count twice.
    assert fit_prompt("秋" * 10, c, 58) == "round 1 · Germany · research> "


def test_tab_completes_the_value_of_an_option_given_with_equals(db: str) -> None:
    obj = Context(db, None)
    try:
        obj.load()
        assert _completions(obj, "log --nation=Ge") == ["--nation=Germany"]
        assert _completions(obj, "move de-ss1 --to=sou") == ["--to='Southern North Sea'"]
        assert _completions(obj, "move de-ss1 --to='Heli") == ["--to='Heligoland Bight'"]
    finally:
        obj.close()


def test_tab_offers_no_name_a_comma_list_gives_already(db: str) -> None:
    obj = Context(db, None)
    try:
        obj.load()
        assert _completions(obj, "move --nation gb gb-dd3,GB-DD") == [
            "gb-dd3,GB-DD1",
            "gb-dd3,GB-DD2",
            "gb-dd3,GB-DD4",
            "gb-dd3,GB-DD5",
        ]
        assert _completions(obj, "undo --override --reason x --agreed-by Britain,") == [
            "Britain,Germany",
            "Britain,Austria-Hungary",
            "Britain,France",
        ]
        # A path's next zone is another than the one just named; an earlier one may come back.
        path = _completions(obj, "move de-ss1 --path 'Heligoland Bight,Southern North Sea,")
        assert "'Heligoland Bight,Southern North Sea,Heligoland Bight'" in path
        assert "'Heligoland Bight,Southern North Sea,Southern North Sea'" not in path
    finally:
        obj.close()


# ----- a real terminal -----


def _shell(base: list[str], db: str, history: Path, name: str, width: int) -> None:
    exe = shutil.which("tracker", path=str(Path(sys.executable).parent)) or "tracker"
    command = f"env -u COLUMNS -u LINES {exe} --db {db} shell --history {history}; sleep 30"
    subprocess.run([*base, "new-session", "-d", "-s", name, "-x", str(width), "-y", "30", command], check=True)


def test_two_terminals_on_one_database(db: str, tmp_path: Path, tmux: list[str]) -> None:  # noqa: F811
    # The other terminal's actions are said in this one as they come, the line being typed
    # kept, and this one's `next` then ends the phase its prompt shows, not refused as stale.
    _shell(tmux, db, tmp_path / "history", "t", 100)
    _wait_for(tmux, "autumn · round 1 · Germany · research>")
    _keys(tmux, "next", "Enter")
    _wait_for(tmux, "autumn · round 1 · Germany · purchase>")
    other = Context(db, None)
    try:
        assert Session(cli, other).dispatch("buy submarine") == 0
        assert Session(cli, other).dispatch("next") == 0
    finally:
        other.close()
    _keys(tmux, "nex")
    screen = _wait_for(tmux, "Meanwhile: round 1, Germany: combat movement   [T2]")
    assert "Meanwhile: Germany buys 1 submarine for 6   [PU1]" in screen
    _wait_for(tmux, "autumn · round 1 · Germany · combat movement> nex")
    _keys(tmux, "t", "Enter")
    screen = _wait_for(tmux, "autumn · round 1 · Germany · naval combat>")
    assert "Error" not in screen, screen
    _keys(tmux, "exit", "Enter")


def test_a_40_column_terminal_shows_the_whole_prompt_on_one_line(db: str, tmp_path: Path, tmux: list[str]) -> None:  # noqa: F811
    # `autumn · round 1 · Germany · research> ` is 39 columns: at 40 the line was typed on the
    # prompt's second row ("researc" / "h> pending").
    _shell(tmux, db, tmp_path / "history", "t", 40)
    _wait_for(tmux, "round 1 · Germany · research>")
    _keys(tmux, "pending", "Enter")
    screen = _wait_for(tmux, "(tracker next) [T3]")
    assert "round 1 · Germany · research> pending" in screen, screen
    _keys(tmux, "exit", "Enter")


def test_pu2_battle_auto_does_not_repeat_the_units_bought(tmp_path: Path, capsys) -> None:
    # After `battle auto`, the destroyers bought were listed with every zone where they may go
    # ("legal now: Dover Strait, Heligoland Bight, ..."), as after no other command; then in one
    # line, after every action. Only a purchase names them now: the battle changed nothing there.
    path = str(tmp_path / "war.db")
    cli_on(path)("new", "war", "--scenario", "great-war-1914", "--dice", "auto")
    obj = Context(path, None)
    try:
        session = Session(cli, obj)
        for line in (
            "next",
            "buy destroyer 2",
            "next",
            "move de-bb1 de-bb2 --to 'Dogger Bank'",
            "next",
            "battle start --zone 'Dogger Bank'",
        ):
            assert session.dispatch(line) == 0, line
        capsys.readouterr()
        assert session.dispatch("battle auto 1") == 0
    finally:
        obj.close()
    out = capsys.readouterr().out
    assert "legal now" not in out and "bought this turn" not in out, out
    assert "battle 1" in out, out
