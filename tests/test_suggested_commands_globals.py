"""The commands the tracker suggests to copy say, at a terminal, the --db and --campaign the
player typed (through a server, the --server): copied, they run on the same campaign instead
of ./campaign.db. In a pipe, in --json and in `tracker shell` they stay as they were."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tracker.cli.common import CLIENT_TERMINAL
from tracker.cli.main import cli
from tracker.cli.suggest import from_server, remember, with_globals

TERMINAL = {"columns": 200, "color_system": None, "no_color": True, "tty": True}


@pytest.fixture
def at_terminal() -> Iterator[None]:
    """Standard output and error on a terminal 200 columns wide (as the server renders for a
    client's), so the commands printed are those a player copies."""
    token = CLIENT_TERMINAL.set(TERMINAL)
    try:
        yield
    finally:
        CLIENT_TERMINAL.reset(token)


def tracker(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def battle_due(db: str, *where: str) -> None:
    """A campaign at naval_combat with battle 1 due in Central North Sea (NC1)."""
    for args in (
        ["new", "war", "--scenario", "north-sea-1914", "--dice", "manual"],
        ["next"],
        ["next"],
        ["move", "DE-BB1,DE-BB2,DE-CA1", "--to", "Central North Sea"],
        ["next"],
    ):
        code, out, err = tracker(*where, *args)
        assert code == 0, out + err


def copied(line: str) -> list[str]:
    """The arguments of the command a line ends with (`next: tracker ...`, `...: tracker ...`)."""
    words = shlex.split(line[line.index("tracker ") :])
    assert words[0] == "tracker"
    return words[1:]


def test_pending_next_and_refusals_name_the_db_typed_and_the_copy_runs(
    tmp_path: Path, at_terminal: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "my games" / "w.db")
    (tmp_path / "my games").mkdir()
    battle_due(db, "--db", db)
    quoted = shlex.quote(db)
    code, out, _ = tracker("--db", db, "pending")
    assert code == 0
    assert f"  next: tracker --db {quoted} battle start --zone 'Central North Sea'" in out.splitlines(), out
    code, _, err = tracker("--db", db, "next")
    # At the terminal's width, the command to copy on a line of its own (fit_error).
    assert code == 1 and err.splitlines()[-1] == f"    tracker --db {quoted} battle start --zone 'Central North Sea'", (
        err
    )
    # Copied elsewhere (no ./campaign.db here), the command runs on the same campaign.
    monkeypatch.chdir(tmp_path)
    line = next(line for line in out.splitlines() if "next: tracker" in line)
    code, started, _ = tracker(*copied(line))
    assert code == 0 and "battle 1: naval battle in Central North Sea" in started, started
    # What the battle's first step printed names the database too.
    assert f"  next: tracker --db {quoted} battle targets 1 [--targets FIRER=TARGET,...]" in started.splitlines()


def test_the_campaign_typed_is_named_too_where_the_database_holds_several(tmp_path: Path, at_terminal: None) -> None:
    db = str(tmp_path / "w.db")
    battle_due(db, "--db", db, "--campaign", "war")
    assert tracker("--db", db, "new", "peace", "--scenario", "north-sea-1914")[0] == 0
    code, out, _ = tracker("--db", db, "--campaign", "war", "pending")
    line = next(line for line in out.splitlines() if "next: tracker" in line)
    assert line == f"  next: tracker --db {db} --campaign war battle start --zone 'Central North Sea'"
    code, started, err = tracker(*copied(line))
    assert code == 0, err
    # `inbox` names each item's campaign once, after the database typed.
    code, out, _ = tracker("--db", db, "--campaign", "war", "inbox")
    assert f"  next: tracker --db {db} --campaign war battle targets 1 [--targets FIRER=TARGET,...]" in out, out


def test_a_pipe_json_and_the_environment_keep_the_commands_as_they_were(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    battle_due(db, "--db", db)
    # Not a terminal: a script reads the lines it always read.
    code, out, _ = tracker("--db", db, "pending")
    assert "  next: tracker battle start --zone 'Central North Sea'" in out.splitlines(), out
    token = CLIENT_TERMINAL.set(TERMINAL)
    try:
        # --json: each item's "command" as the server's API gives it, for scripts to complete.
        code, out, _ = tracker("--db", db, "pending", "--json")
        assert '"command": "tracker battle start --zone \'Central North Sea\'"' in out, out
        # TRACKER_DB selects the database for the copy as well: nothing to add.
        code, out, _ = tracker("pending", env={"TRACKER_DB": db})
        assert "  next: tracker battle start --zone 'Central North Sea'" in out.splitlines(), out
    finally:
        CLIENT_TERMINAL.reset(token)


def test_a_shell_says_its_commands_without_db_and_runs_those_inbox_names(tmp_path: Path, at_terminal: None) -> None:
    pytest.importorskip("prompt_toolkit")
    db = str(tmp_path / "w.db")
    battle_due(db, "--db", db)
    lines = "pending\ninbox\n--campaign war battle start --zone 'Central North Sea'\n"
    result = CliRunner().invoke(cli, ["--db", db, "shell"], input=lines)
    assert "--db" not in result.stdout, result.stdout
    assert "  next: tracker battle start --zone 'Central North Sea'" in result.stdout
    # `inbox` names the campaign; the shell runs a line naming its own.
    assert "  next: tracker --campaign war battle start --zone 'Central North Sea'" in result.stdout
    assert "battle 1: naval battle in Central North Sea" in result.stdout, result.stdout + result.stderr


def test_import_names_the_db_for_the_player_and_not_for_the_others(tmp_path: Path, at_terminal: None) -> None:
    mine, theirs = str(tmp_path / "mine.db"), str(tmp_path / "theirs.db")
    battle_due(mine, "--db", mine)
    full, since = str(tmp_path / "full.jsonl"), str(tmp_path / "since.jsonl")
    code, out, _ = tracker("--db", mine, "export", full)
    head = int(out.split("(head ")[1].split(":")[0])
    code, out, err = tracker("--db", theirs, "import", full)
    assert code == 0, err
    assert f"`tracker --db {theirs} --campaign war export --since {head} FILE`" in out, out
    assert f"  next: tracker --db {theirs} --campaign war battle start --zone 'Central North Sea'" in out, out
    assert tracker("--db", mine, "battle", "start", "--zone", "Central North Sea")[0] == 0
    code, out, _ = tracker("--db", mine, "export", "--since", str(head), since)
    # Checking the head is this player's; importing the file is the others', on their databases.
    assert f"`tracker --db {mine} verify --head`" in out and f"each runs `tracker import {since}`" in out, out
    code, out, err = tracker("--db", theirs, "import", since)
    assert code == 0, err
    assert "Waiting now:" in out
    assert f"  next: tracker --db {theirs} --campaign war battle targets 1 [--targets FIRER=TARGET,...]" in out, out


def test_only_commands_to_copy_get_the_options() -> None:
    typed = [("--db", "w.db")]
    assert with_globals("the tracker rolls; recorded by tracker serve", typed) == (
        "the tracker rolls; recorded by tracker serve"
    )
    assert with_globals("run `tracker verify`, then tracker next", typed) == (
        "run `tracker --db w.db verify`, then tracker next"  # "then tracker" begins no command here
    )
    assert with_globals("  next: tracker x, or tracker next", typed) == "  next: tracker x, or tracker --db w.db next"
    # Spelled for another place (another database, a template): as it is; said twice, once.
    said = "write its export with `tracker --db other.db export FILE`"
    assert with_globals(said, typed) == said
    once = with_globals("(tracker next)", [*typed, ("--campaign", "war")])
    assert once == "(tracker --db w.db --campaign war next)" and with_globals(once, typed) == once
    # A command that names its campaign (another player's export) gets nothing, unless it is
    # this campaign's (`campaign`) or comes from a server.
    asked = "ask the sender: `tracker --campaign war export --since 4 FILE`"
    assert with_globals(asked, typed) == asked
    assert with_globals(asked, [("--server", "http://h:8000")], through_server=True) == (
        "ask the sender: `tracker --server http://h:8000 --campaign war export --since 4 FILE`"
    )
    # Commands that read no campaign get no --campaign; none of a scenario file's gets --db.
    assert with_globals("`tracker new NAME`", [*typed, ("--campaign", "war")]) == "`tracker --db w.db new NAME`"
    assert with_globals("`tracker scenario check f.toml`", typed) == "`tracker scenario check f.toml`"
    # The odds of a position given by hand run anywhere; a battle's are the campaign's.
    by_hand = "  tracker odds naval --attacker Germany:battleship=1 --defender Britain:cruiser=2"
    assert with_globals(by_hand, typed) == by_hand
    assert with_globals("`tracker odds 1`", typed) == "`tracker --db w.db odds 1`"


def test_a_path_is_quoted_and_a_password_never_shown() -> None:
    assert with_globals("tracker next", [("--db", "my games/w.db")]) == "tracker --db 'my games/w.db' next"
    url = "postgresql://anna:s3cret@db/league"
    assert with_globals("tracker next", [("--db", url)]) == "tracker --db 'postgresql://anna:***@db/league' next"
    served = with_globals("tracker next", [("--server", "https://anna:s3cret@league.example")], through_server=True)
    assert "s3cret" not in served and served.startswith("tracker --server 'https://anna:***@league.example' next")


def test_a_servers_text_gets_the_server_typed_and_its_json_nothing(at_terminal: None) -> None:
    @click.command()
    @click.option("--server")
    @click.option("--campaign")
    def main(server: str, campaign: str) -> None:
        remember(click.get_current_context(), server=True)
        click.echo(from_server("next: tracker battle fire 1\n"), nl=False)
        click.echo(from_server('[{"command": "tracker next", "text": "finish (tracker next)"}]'))

    out = CliRunner().invoke(main, ["--server", "http://h:8000", "--campaign", "war"]).output
    assert out.splitlines() == [
        "next: tracker --server http://h:8000 --campaign war battle fire 1",
        '[{"command": "tracker next", "text": "finish (tracker next)"}]',
    ]
