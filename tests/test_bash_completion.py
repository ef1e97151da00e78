"""Tab completion in bash puts a name of several words on the line as one word: escaped
(`Heligoland\\ Bight`), or as it is after an opening quote, which bash then closes. Run through
the script `_TRACKER_COMPLETE=bash_source tracker` prints, in a real bash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.completion_bash import opened_quote
from tracker.cli.main import cli

BASH = shutil.which("bash")


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    result = CliRunner().invoke(cli, ["--db", path, "new", "autumn", "--scenario", "north-sea-1914"])
    assert result.exit_code == 0, result.output
    return path


def bash_completes(tmp_path: Path, db: str, *words: str) -> list[str]:
    """COMPREPLY after Tab on the last of `words` (as bash holds them, quotes included), with the
    completion script the README's `eval` line installs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    program = bin_dir / "tracker"
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from tracker.cli.main import main; main()" "$@"\n')
    program.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("_TRACKER_COMPLETE", None)
    line = ["tracker", "--db", db, *words]
    script = (
        'eval "$(_TRACKER_COMPLETE=bash_source tracker)"\n'
        'COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))\n'
        "_tracker_completion tracker\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    assert BASH is not None
    done = subprocess.run([BASH, "--norc", "-c", script, "bash", *line], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [reply for reply in done.stdout.splitlines() if reply]


needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


@needs_bash
def test_a_zone_of_two_words_completes_escaped_as_one_word(tmp_path: Path, db: str) -> None:
    assert bash_completes(tmp_path, db, "show", "h") == ["Heligoland\\ Bight"]
    # The last name of a comma list too, the names before it kept.
    assert bash_completes(tmp_path, db, "move", "DE-SS3", "--path", "Southern\\ North\\ Sea,Do") == [
        "Southern\\ North\\ Sea,Dover\\ Strait"
    ]


@needs_bash
def test_after_an_opening_quote_the_name_stays_as_it_is(tmp_path: Path, db: str) -> None:
    assert bash_completes(tmp_path, db, "show", '"h') == ["Heligoland Bight"]
    assert bash_completes(tmp_path, db, "show", "'h") == ["Heligoland Bight"]


@needs_bash
def test_a_one_word_name_is_unchanged(tmp_path: Path, db: str) -> None:
    assert bash_completes(tmp_path, db, "show", "ska") == ["Skagerrak"]
    assert bash_completes(tmp_path, db, "log", "--nation", "au") == ["Austria-Hungary"]


@needs_bash
def test_the_escaped_name_is_one_word_to_bash_and_to_the_command(tmp_path: Path, db: str) -> None:
    (reply,) = bash_completes(tmp_path, db, "show", "h")
    assert BASH is not None
    words = subprocess.run([BASH, "--norc", "-c", f'set -- {reply}; echo "$#:$1"'], capture_output=True, text=True)
    assert words.stdout == "1:Heligoland Bight\n"
    shown = CliRunner().invoke(cli, ["--db", db, "show", "Heligoland Bight"])
    assert shown.exit_code == 0, shown.output


@pytest.mark.parametrize(
    ("line", "inside"),
    [
        ("tracker\nshow\nh", False),
        ('tracker\nshow\n"h', True),
        ("tracker\nshow\n'Heli", True),
        ("tracker\nshow\n'Heligoland Bight'", False),
        ("tracker\nshow\nit\\'s", False),
        ("tracker\nshow\n\"it's", True),
    ],
)
def test_open_quote_says_whether_the_word_is_inside_a_quote(line: str, inside: bool) -> None:
    assert bool(opened_quote(line)) is inside
