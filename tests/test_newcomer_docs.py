"""A newcomer following the README and the guide: a mistyped command names the commands it is
close to (at the prompt, in `tracker shell`, through a league server, where the server is not
asked), a mistyped option's suggestions read as one sentence, `tracker wait --help` through a
server is the command's own help, and the guide's `odds need --hold` and `luck` examples print
what the guide shows."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.test_readme import walkthrough
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import RemoteContext, RemoteSession, Session

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide.md"

# Nothing listens on port 9 (discard): a command that asked the server would fail to reach it.
NO_SERVER = "http://127.0.0.1:9"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="tracker")


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    result = invoke("--db", path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    assert result.exit_code == 0, result.output
    return path


@pytest.mark.parametrize(
    ("typed", "line"),
    [
        ("pendng", "no such command 'pendng'; did you mean 'pending'? (see tracker --help)"),
        ("stat", "no such command 'stat'; did you mean one of: 'state', 'stats'? (see tracker --help)"),
        ("covnoy", "no such command 'covnoy'; did you mean 'convoy'? (see tracker --help)"),
        ("help", "no such command 'help'; did you mean --help? (see tracker --help)"),
        ("bogus", "no such command 'bogus' (see tracker --help)"),
    ],
)
def test_a_mistyped_command_names_the_commands_it_is_close_to(db: str, typed: str, line: str) -> None:
    result = invoke("--db", db, typed)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {line}\n")


def test_a_mistyped_command_in_the_shell_names_the_command_it_is_close_to(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    obj = Context(db, None)
    try:
        assert Session(cli, obj).dispatch("pendng") == 2
    finally:
        obj.close()
    assert capsys.readouterr().err == "Error: no such command 'pendng'; did you mean 'pending'? (see tracker --help)\n"


def test_a_mistyped_command_through_a_server_is_said_here_without_asking_the_server() -> None:
    # The server would answer "'stat' cannot be run through a server (commands: ...)": as if
    # `stat` were a command kept from players; it is no command at all.
    result = invoke("--server", NO_SERVER, "--campaign", "autumn", "stat")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "Error: no such command 'stat'; did you mean one of: 'state', 'stats'? (see tracker --help)\n"
    )


def test_a_mistyped_command_in_the_shell_on_a_server_is_said_without_asking_the_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    session = RemoteSession(cli, RemoteContext(NO_SERVER, "autumn"))
    assert session.dispatch("pendng") == 2
    assert capsys.readouterr().err == "Error: no such command 'pendng'; did you mean 'pending'? (see tracker --help)\n"


def test_several_suggestions_for_a_mistyped_option_read_as_one_sentence(db: str) -> None:
    # click says "No such option: --too. (Did you mean one of: --nation, --to?)"
    result = invoke("--db", db, "move", "DE-SS1", "--too", "Skagerrak")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: move: no such option --too; did you mean one of: --nation, --to? (see tracker move --help)\n"
    )


def test_wait_help_through_a_server_is_the_commands_own_help() -> None:
    local = invoke("wait", "--help")
    remote = invoke("--server", NO_SERVER, "wait", "--help")
    assert local.exit_code == remote.exit_code == 0
    assert "Give up after this many seconds" in remote.stdout
    assert remote.stdout == local.stdout


def guide_example(command: str) -> tuple[list[str], list[str]]:
    """The guide's line that begins with `command` (its arguments) and the output lines shown
    under it (`#` comments, `...` left out)."""
    lines = GUIDE.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(command))
    shown = []
    for line in lines[at + 1 :]:
        if not line.startswith("#"):
            break
        text = line.removeprefix("#").strip()
        if text != "...":
            shown.append(text.split(" ...")[0].removesuffix(";"))
    return shlex.split(lines[at].split("  #")[0])[1:], shown


def test_the_guides_hold_example_is_what_odds_need_prints_at_britains_first_combat_movement(db: str) -> None:
    for step in (
        ["next", "--to", "collect_resources"],
        ["convoy", "pass", "--by", "gb"],
        ["next", "--to", "combat_movement", "--nation", "gb"],
    ):
        assert invoke("--db", db, *step).exit_code == 0
    args, shown = guide_example('tracker odds need --zone "English Channel" --hold')
    out = invoke("--db", db, *args).stdout
    assert shown and all(line in out for line in shown), (shown, out)


def test_the_guides_luck_example_is_what_luck_prints_after_the_readmes_campaign(tmp_path: Path) -> None:
    db = str(tmp_path / "campaign.db")
    for command, code, _ in walkthrough():
        assert invoke("--db", db, *shlex.split(command)[1:]).exit_code == code, command
    args, shown = guide_example("tracker luck --nation Germany")
    # The table's columns are as wide as a terminal makes them: compared word by word.
    out = [" ".join(line.split()) for line in invoke("--db", db, *args).stdout.splitlines()]
    text = " ".join(" ".join(out).split())
    assert shown and all(" ".join(line.split()) in text for line in shown), (shown, out)
