"""Bad and odd input found by play-testing the command line: each gets one line, the right
exit status, and records nothing."""

from __future__ import annotations

import types
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tracker.cli.main import cli


def run(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    return result.exit_code, result.output


def refused_as_usage(db: str, args: list[str], line: str) -> None:
    """The command is bad usage (exit 2) told in this one line, and records nothing."""
    before = run(db, "log", "--json")[1]
    result = CliRunner().invoke(cli, ["--db", db, *args], prog_name="tracker")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {line}\n")
    assert run(db, "log", "--json")[1] == before


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "p.db")
    assert run(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")[0] == 0
    return path


def test_ctrl_c_leaves_replay_as_q_does(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # It printed "Aborted!" and exited 1: click reads Ctrl-C as an interrupt, not as the key
    # the replay's own keys list as a way out.
    from tracker.cli.commands import history

    class Terminal:
        def isatty(self) -> bool:
            return True

    def interrupted() -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(history, "sys", types.SimpleNamespace(stdin=Terminal()))
    monkeypatch.setattr(click, "getchar", interrupted)
    monkeypatch.setattr(click, "clear", lambda: None)
    result = CliRunner().invoke(cli, ["--db", db, "replay"])
    assert result.exit_code == 0, result.output
    assert "Aborted" not in result.output and "Event 1" in result.output


@pytest.mark.parametrize(
    ("args", "bad"),
    [
        (["adjust", "--reason", "the offensive\nat Lille", "--resources", "Germany=1"], "'\\n'"),
        (["adjust", "--reason", "clear\x1b[2Jscreen", "--resources", "Germany=1"], "'\\x1b'"),
        (["dice", "switch", "auto", "--reason", "seed\tlost"], "'\\t'"),
        (["research", "advanced_asw", "--dice", "9", "--ref", "roll\r42"], "'\\r'"),
    ],
)
def test_a_reason_with_a_control_character_is_refused(db: str, args: list[str], bad: str) -> None:
    # A reason is printed on the log's one line per event and in reports as typed: a line break
    # split the event over two lines, an escape sequence reached the terminal (`report`).
    before = run(db, "log", "--json")[1]
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 2, result.output
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""
    assert "may not contain control characters such as " + bad in result.stderr
    assert result.stderr.startswith(f"Error: {' '.join(args[: 2 if args[0] == 'dice' else 1])}: --")
    assert run(db, "log", "--json")[1] == before


def test_a_reason_in_any_script_is_recorded(db: str) -> None:
    code, out = run(db, "adjust", "--reason", "über die Nordsee 🚢", "--resources", "Germany=1")
    assert code == 0, out
    assert "(reason: über die Nordsee 🚢)" in run(db, "log")[1]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["export", ""], "export: FILE: give a file name (got an empty one) (see tracker export --help)"),
        (["import", ""], "import: FILE: give a file name (got an empty one) (see tracker import --help)"),
        (
            ["report", "--turn", "1", "-o", ""],
            "report: -o / --output: give a file name (got an empty one) (see tracker report --help)",
        ),
        (
            ["new", "winter", "--scenario", ""],
            "new: --scenario: give a scenario's name or file (got an empty one) (see tracker new --help)",
        ),
        (
            ["new", "winter", "--scenario", "north-sea-1914", "--ruleset", " "],
            "new: --ruleset: give a ruleset's name or file (got an empty one) (see tracker new --help)",
        ),
    ],
)
def test_an_empty_file_name_is_named_as_such(db: str, args: list[str], line: str) -> None:
    # It read as the current folder: "Error: : is a directory; give a file name".
    refused_as_usage(db, args, line)


@pytest.mark.parametrize("command", [["map"], ["log"]])
def test_output_piped_into_head_ends_quietly_with_0(tmp_path: Path, command: list[str]) -> None:
    # `tracker map | head -1` exited 1, the status of a refused action: rich (`map`) and click
    # (`log`, line by line) each end output whose reader went away with 1.
    import fcntl
    import os
    import subprocess
    import sys

    db = str(tmp_path / "world.db")
    assert run(db, "new", "world", "--scenario", "great-war-1914")[0] == 0  # a map of some 50 kB
    for _ in range(40):  # and a log of some 10 kB
        assert run(db, "adjust", "--reason", "a long reason " * 4, "--resources", "Germany=1")[0] == 0
    read, write = os.pipe()
    try:
        fcntl.fcntl(write, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)  # Linux: a small pipe fills at once
    except OSError:
        pytest.skip("the pipe's size cannot be set here")
    process = subprocess.Popen(
        [sys.executable, "-m", "tracker", "--db", db, *command], stdout=write, stderr=subprocess.PIPE
    )
    os.close(write)
    with os.fdopen(read, "rb") as reader:
        assert reader.read(10)
    _, err = process.communicate(timeout=120)
    assert (process.returncode, err) == (0, b"")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # It was "ntr place: input 'count' must be between 1 and 2147483647, got 0", without the help.
        (
            ["ntr", "place", "Skagerrak", "0"],
            "ntr place: invalid value for [COUNT]: 0 is not in the range 1<=x<=2147483647 "
            "(see tracker ntr place --help)",
        ),
        # click raises these without the command's context ("option --to requires an argument"):
        # found from the words typed.
        (["move", "DE-SS1", "--to"], "move: option --to requires an argument (see tracker move --help)"),
        (
            ["battle", "fire", "1", "--dice"],
            "battle fire: option --dice requires an argument (see tracker battle fire --help)",
        ),
    ],
)
def test_a_usage_error_names_the_command_and_where_its_help_is(db: str, args: list[str], line: str) -> None:
    refused_as_usage(db, args, line)


@pytest.mark.parametrize("option", ["--db", "--campaign", "--server"])
def test_a_global_option_without_its_value_says_where_the_help_is(option: str) -> None:
    result = CliRunner().invoke(cli, [option], prog_name="tracker")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"Error: option {option} requires an argument (see tracker --help)\n"
