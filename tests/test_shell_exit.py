"""`exit` and `quit` in `tracker shell`, with something after them: `exit 3` leaves with status 3,
as a Unix shell's does; any other word after them is said on one line and the shell leaves with
status 2 (bad usage), as bash does; `help exit` says what they take. `exit now` was run as a
tracker command: "no such command 'exit'; did you mean one of: 'export', 'next'?", and the
shell stayed open."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.support import cli_on
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    cli_on(path)("new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    return path


def piped(db: str, lines: str) -> Result:
    """The shell with `lines` piped in (no terminal: each line run to the end, then the status)."""
    return CliRunner().invoke(cli, ["--db", db, "shell"], input=lines)


@pytest.mark.parametrize(("line", "status"), [("exit 3", 3), ("quit 0", 0), ("exit 255", 255), ("tracker exit 7", 7)])
def test_exit_with_a_status_leaves_with_it_and_runs_no_line_after(db: str, line: str, status: int) -> None:
    result = piped(db, f"log --nation italy\n{line}\nnext\n")
    assert result.exit_code == status, result.output
    assert "purchase" not in result.stdout  # `next` did not run
    assert "no such command" not in result.stderr


@pytest.mark.parametrize("line", ["exit now", "quit please", "exit 256", "exit -1", "exit 3 4", "exit 0x1"])
def test_exit_with_anything_else_says_so_on_one_line_and_leaves_with_status_2(db: str, line: str) -> None:
    result = piped(db, f"{line}\nnext\n")
    assert result.exit_code == 2, result.output
    word, _, rest = line.partition(" ")
    assert result.stderr == (
        f"Error: {word} takes a status from 0 to 255 or nothing (`exit`, `exit 3`, `quit`), "
        f"not {rest!r}: leaving with status 2\n"
    )
    assert "export" not in result.output
    assert "purchase" not in result.stdout


@pytest.mark.parametrize("line", ["help exit", "exit --help", "quit -h"])
def test_help_exit_says_what_it_takes_and_stays(db: str, line: str) -> None:
    result = piped(db, f"{line}\nnext\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("exit [STATUS] (or quit [STATUS]): leave the shell, with exit status STATUS")
    assert "purchase" in result.stdout  # the shell went on to `next`
    assert result.stderr == ""


@pytest.fixture
def session(db: str) -> Iterator[Session]:
    obj = Context(db, None)
    yield Session(cli, obj)
    obj.close()


def typed(*texts: str) -> Callable[[object], str]:
    """A prompt that returns `texts` one after another, as the player typed (or pasted) them."""
    left = list(texts)

    def read_line(message: object) -> str:
        if not left:
            raise EOFError
        return left.pop(0)

    return read_line


def test_at_the_prompt_exit_n_is_the_status_the_shell_leaves_with(session: Session, capsys) -> None:
    assert session.run(typed("exit 4", "next")) == 4
    # Pasted with other lines: those before it run, those after it do not.
    assert session.run(typed("pending\nquit 5\nnext")) == 5
    assert "purchase" not in capsys.readouterr().out
    # Plain `exit`, `quit` and Ctrl-D (end of input): the shell's own status, 0 at the prompt.
    assert session.run(typed("exit")) is None
    assert session.run(typed("quit")) is None
    assert session.run(typed()) is None


def test_at_the_prompt_exit_now_leaves_saying_why_with_status_2(session: Session, capsys) -> None:
    assert session.run(typed("exit now", "next")) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: exit takes a status from 0 to 255 or nothing") and err.count("\n") == 1
