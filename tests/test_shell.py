"""`tracker shell`: in-process (lines through `Session.dispatch` and prompt_toolkit's pipe
input) and in a real terminal (tmux). Without tmux the terminal tests are skipped with the
reason, except in CI (`CI=true`), where that is an error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import cli_on
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import HELP, Session
from tracker.cli.shell_prompt import prompt_session


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    cli_on(path)("new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    return path


@pytest.fixture
def session(db: str) -> Iterator[Session]:
    obj = Context(db, None)
    yield Session(cli, obj)
    obj.close()


def cli_output(db: str, line: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--db", db, *line.split()])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "line", ["state", "pending", "log --tail 3", "map", "units", "show skagerrak --json", "verify"]
)
def test_a_shell_line_prints_what_the_command_prints(db: str, session: Session, capsys, line: str) -> None:
    code, out, err = cli_output(db, line)
    assert session.dispatch(line) == code
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (out, err)


def test_errors_are_the_same_one_line_messages_and_the_shell_goes_on(db: str, session: Session, capsys) -> None:
    code, _, err = cli_output(db, "log --nation italy")
    assert session.dispatch("log --nation italy") == code == 2
    assert (
        capsys.readouterr().err
        == err
        == ("Error: unknown nation 'italy' (known: Germany, Britain, Austria-Hungary, France)\n")
    )
    assert session.dispatch("research advanced_asw") == 1  # manual dice: D3 wants --dice
    assert "D4" in capsys.readouterr().err
    assert session.dispatch("bogus") == 2
    assert capsys.readouterr().err == "Error: no such command 'bogus' (see tracker --help)\n"
    assert session.dispatch("move 'unclosed") == 2
    assert "cannot read the line" in capsys.readouterr().err
    assert session.dispatch("state") == 0
    assert "Forces" in capsys.readouterr().out


def test_the_shell_keeps_one_database_open_and_records_through_it(session: Session, capsys) -> None:
    session.dispatch("state")
    tracker = session.obj.tracker
    assert session.dispatch("next") == 0
    assert session.dispatch("tracker next") == 0  # a leading `tracker` is allowed
    assert session.obj.tracker is tracker
    capsys.readouterr()
    session.dispatch("state --json")
    assert '"phase": "combat_movement"' in capsys.readouterr().out


def test_the_prompt_shows_round_nation_and_phase(session: Session, capsys) -> None:
    assert session.prompt_text() == "autumn · round 1 · Germany · research> "
    session.dispatch("next")
    assert session.prompt_text() == "autumn · round 1 · Germany · purchase> "


def test_a_shell_refuses_other_databases_and_nested_shells(session: Session, capsys) -> None:
    assert session.dispatch("--db other.db state") == 2
    assert session.dispatch("shell") == 2
    err = capsys.readouterr().err
    assert "stays on one campaign" in err and "already in a tracker shell" in err


def test_help_lists_the_commands(session: Session, capsys) -> None:
    assert session.dispatch("help") == 0
    out = capsys.readouterr().out
    # The commands as the rows of a list (the shell's heading names "shell" whatever it lists).
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ") and line.strip()}
    assert {"pending", "move", "state"} <= listed
    assert session.dispatch("help move") == 0
    assert "Usage: tracker move" in capsys.readouterr().out


def test_lines_typed_at_the_prompt_run_in_order_and_go_to_the_history(db: str, tmp_path: Path, capsys) -> None:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    history = tmp_path / "history"
    obj = Context(db, None)
    try:
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            prompt = prompt_session(cli, obj, history)
            pipe.send_text("next\rpending\rlog --nation gb\rexit\r")
            Session(cli, obj).run(prompt.prompt)
    finally:
        obj.close()
    out = capsys.readouterr().out
    assert "round 1, Germany: purchase" in out and "waiting for Germany to finish purchase (tracker next) [T3]" in out
    assert [line for line in history.read_text().splitlines() if line.startswith("+")] == [
        "+next",
        "+pending",
        "+log --nation gb",
        "+exit",
    ]


def _completions(obj: Context, text: str) -> list[str]:
    from prompt_toolkit.document import Document

    from tracker.cli.shell_prompt import completer

    return [c.text for c in completer(cli, obj).get_completions(Document(text), None)]


def test_tab_completes_commands_options_and_names_from_the_campaign(db: str) -> None:
    obj = Context(db, None)
    try:
        obj.load()
        assert _completions(obj, "pen") == ["pending"]
        assert _completions(obj, "move DE-SS") == [f"DE-SS{i}" for i in range(1, 6)]
        assert _completions(obj, "move de-ss1 --to sou") == ["'Southern North Sea'"]
        assert _completions(obj, "move de-ss1 --to 'Sou") == ["'Southern North Sea'"]
        assert _completions(obj, "log --nation Au") == ["Austria-Hungary"]
        assert "--tail" in _completions(obj, "log --t")
        assert _completions(obj, "research advanced_a") == ["advanced_asw"]
    finally:
        obj.close()


def test_piped_lines_run_without_a_prompt(db: str) -> None:
    result = CliRunner().invoke(cli, ["--db", db, "shell"], input="next\npending\nexit\nstate\n")
    assert result.exit_code == 0
    assert "round 1, Germany: purchase" in result.output and "waiting for Germany to finish purchase" in result.output
    assert "Forces" not in result.output  # nothing after `exit`


def test_a_shell_stays_on_its_campaign_when_a_line_makes_another(db: str) -> None:
    lines = "new winter --scenario north-sea-1914 --dice manual\nnext\npending\n"
    result = CliRunner().invoke(cli, ["--db", db, "shell"], input=lines)
    assert result.exit_code == 0, result.output
    assert "Campaign 'winter' created" in result.output
    assert "pick one with --campaign" not in result.output
    # `next` went on in autumn, where the shell started; winter is untouched.
    assert "waiting for Germany to finish purchase" in result.output
    assert "research" in CliRunner().invoke(cli, ["--db", db, "--campaign", "winter", "state"]).output


def test_without_prompt_toolkit_the_shell_says_how_to_get_it(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "prompt_toolkit", None)
    result = CliRunner().invoke(cli, ["--db", db, "shell"])
    assert result.exit_code == 2
    assert result.output == 'Error: the shell needs prompt_toolkit: pip install "prompt_toolkit>=3.0.36,<4"\n'


# ----- a real terminal -----


@pytest.fixture
def tmux() -> Iterator[list[str]]:
    """A tmux server of this test's own (own socket), killed afterwards."""
    if shutil.which("tmux") is None:
        message = "tmux is not installed (apt-get install tmux)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must run the terminal tests")
        pytest.skip(message)
    socket = f"tracker-test-{uuid.uuid4().hex[:10]}"
    base = ["tmux", "-L", socket]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True)


def _screen(base: list[str]) -> str:
    return subprocess.run([*base, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True).stdout


def _wait_for(base: list[str], text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(base)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared on the screen:\n{screen}")


def _keys(base: list[str], *keys: str) -> None:
    subprocess.run([*base, "send-keys", "-t", "t", *keys], check=True)


def test_the_shell_in_a_real_terminal(db: str, tmp_path: Path, tmux: list[str]) -> None:
    exe = shutil.which("tracker", path=str(Path(sys.executable).parent)) or "tracker"
    history = tmp_path / "history"
    command = f"{exe} --db {db} shell --history {history}; sleep 30"
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "100", "-y", "40", command], check=True)
    _wait_for(tmux, "autumn · round 1 · Germany · research>")
    _keys(tmux, "next", "Enter")
    _wait_for(tmux, "autumn · round 1 · Germany · purchase>")
    _keys(tmux, "log --nation itly", "Enter")
    _wait_for(tmux, "Error: unknown nation 'itly' (known: Germany, Britain")
    # Tab completion from the campaign: the zone is completed and quoted.
    _keys(tmux, "C-l")
    _keys(tmux, "show heli", "Tab")
    _wait_for(tmux, "show 'Heligoland Bight'")
    _keys(tmux, "Enter")
    _wait_for(tmux, "Heligoland Bight: sea zone")
    # History: the arrow brings back the last line.
    _keys(tmux, "C-l")
    _keys(tmux, "Up")
    _wait_for(tmux, "show 'Heligoland Bight'")
    _keys(tmux, "C-u", "exit", "Enter")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "+exit" not in (history.read_text() if history.exists() else ""):
        time.sleep(0.1)
    assert "+next" in history.read_text() and "+exit" in history.read_text()


def test_the_greeting_and_an_error_fit_a_narrow_terminal(db: str, tmp_path: Path, tmux: list[str]) -> None:
    exe = shutil.which("tracker", path=str(Path(sys.executable).parent)) or "tracker"
    # The terminal's own width (a COLUMNS left in the environment would stand for it).
    command = f"env -u COLUMNS -u LINES {exe} --db {db} shell --history {tmp_path / 'history'}; sleep 30"
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "60", "-y", "40", command], check=True)
    screen = _wait_for(tmux, "autumn · round 1 · Germany · research>")
    greeting = screen.split("autumn ·")[0]
    assert " ".join(greeting.split()) == " ".join(HELP.split()), greeting
    assert all(len(line.rstrip()) <= 60 for line in greeting.splitlines()), greeting.splitlines()
    _keys(tmux, "buy submarine 0", "Enter")
    screen = _wait_for(tmux, "tracker buy --help)")
    error = screen[screen.index("Error: buy") : screen.index("--help)") + len("--help)")]
    assert all(len(line.rstrip()) <= 60 for line in error.splitlines()), error
    assert "see tracker buy --help)" in " ".join(error.split()), "no word cut by the terminal"
    _keys(tmux, "exit", "Enter")


def test_a_table_wider_than_the_terminal_is_paged_with_its_lines_cut_not_wrapped(
    db: str, tmux: list[str], tmp_path: Path
) -> None:
    """`tracker stats` draws a column per figure: on an 80-column terminal each line would wrap
    into the next. It opens in the pager instead, lines cut at the edge (less -S), and the arrow
    keys scroll it sideways."""
    if shutil.which("less") is None:
        pytest.skip("less is not installed: click pages through its fallback, which wraps")
    exe = shutil.which("tracker", path=str(Path(sys.executable).parent)) or "tracker"
    command = f"env -u LESS -u PAGER {exe} --db {db} stats; echo STATS-DONE; sleep 30"
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "80", "-y", "30", command], check=True)
    screen = _wait_for(tmux, "Figures at the end of each national turn")
    boxed = [line for line in screen.splitlines() if any(c in line for c in "┃│━─")]
    assert len(boxed) >= 8, screen
    # Every line of the table starts at its left edge (none is the rest of a wrapped line) and
    # ends where the pager cut it.
    assert all(line[0] in "┏┃┡│├└" for line in boxed), screen
    assert all(line.rstrip().endswith(">") for line in boxed), screen
    _keys(tmux, "Right")
    _wait_for(tmux, "Fleet cost")
    _keys(tmux, "q")
    _wait_for(tmux, "STATS-DONE")


@pytest.mark.parametrize("target", ["database", "wal", "picture", "export", "missing folder"])
def test_history_is_never_appended_to_a_file_of_another_kind(db: str, tmp_path: Path, target: str) -> None:
    # The shell appends every line to --history: naming the database (or a picture, an export)
    # by mistake appended text to it, and a missing folder was made without a word.
    files = {
        "database": Path(db),
        "wal": Path(db + "-wal"),
        "picture": tmp_path / "map.png",
        "export": tmp_path / "autumn.jsonl",
        "missing folder": tmp_path / "nowhere" / "history",
    }
    path = files[target]
    if target == "picture":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    elif target == "export":
        path.write_text('{"format": "twtea-naval-tracker/events"}\n')
    before = path.read_bytes() if path.exists() else None
    result = CliRunner().invoke(cli, ["--db", db, "shell", "--history", str(path)], input="pending\n")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error: {path}") or "does not exist" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""
    assert (path.read_bytes() if path.exists() else None) == before
    assert not (tmp_path / "nowhere").exists()


def test_a_history_file_of_the_shell_is_taken(db: str, tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.write_text("\n# 2026-12-06 04:31:41.799674\n+pending\n")
    result = CliRunner().invoke(cli, ["--db", db, "shell", "--history", str(history)], input="pending\n")
    assert result.exit_code == 0, result.output
    assert "waiting for Germany" in result.stdout


def test_tab_completes_unit_types_and_nations_of_buy_place_convoy_pass_and_luck(db: str) -> None:
    # These options and arguments completed nothing: their completers were never attached.
    obj = Context(db, None)
    try:
        obj.load()
        assert _completions(obj, "buy sub") == ["submarine"]
        assert _completions(obj, "buy submarine --nation Ge") == ["Germany"]
        # PU2: only the types bought and not placed (none yet); CV1: only an enemy that may
        # declare a convoy attack now (none outside collect_resources). test_shell_completion_round2.
        assert _completions(obj, "place b") == []
        assert _completions(obj, "place submarine --at 'Heli") == ["'Heligoland Bight'"]
        assert _completions(obj, "place submarine --nation Fr") == ["France"]
        assert _completions(obj, "convoy pass --by Au") == []
        assert _completions(obj, "luck --nation Br") == ["Britain"]
    finally:
        obj.close()


def test_tab_completes_only_the_units_a_line_may_name(db: str) -> None:
    # T3: every unit of every nation was offered (GB-BB1 for Germany's move), in the IDs' own
    # order (GB-BB10 before GB-BB2): a move offers the acting nation's units, a battle's
    # command the units of the battle.
    obj = Context(db, None)
    try:
        obj.load()
        assert _completions(obj, "move GB-") == []
        assert _completions(obj, "move --nation gb GB-DD") == ["GB-DD1", "GB-DD2", "GB-DD3", "GB-DD4", "GB-DD5"]
        assert _completions(obj, "convoy declare --by de --zone 'Central North Sea' --subs ") == ["DE-SS1", "DE-SS2"]
        for line in ("next", "buy submarine", "next"):
            assert Session(cli, obj).dispatch(line) == 0
        assert Session(cli, obj).dispatch("move de-ss3 --path 'southern north sea, dover strait'") == 0
        # SM2: the interception in Southern North Sea: its searchers (not the submarine passing).
        assert _completions(obj, "intercept search 1 --units ") == ["GB-CA2", "GB-DD3", "GB-DD4", "GB-DD5"]
        assert _completions(obj, "intercept search 1 --units GB-CA2,GB-D") == [
            "GB-CA2,GB-DD3",
            "GB-CA2,GB-DD4",
            "GB-CA2,GB-DD5",
        ]
    finally:
        obj.close()


# PU2: the sea zones beside Germany's ports.
PORTS = ["'Dover Strait'", "'Heligoland Bight'", "'Southern North Sea'"]


def test_pu2_tab_completes_place_at_with_the_zones_where_the_type_may_go(db: str) -> None:
    obj = Context(db, None)
    try:
        obj.load()
        assert _completions(obj, "place submarine --at ") == PORTS
        assert _completions(obj, "place fighter --nation gb --at ") == ["England", "Scotland", "'Northern North Sea'"]
        # A type the ruleset does not know: every zone, as before.
        assert len(_completions(obj, "place sub --at ")) == len(_completions(obj, "show "))
    finally:
        obj.close()


def test_f8_tab_completes_move_with_no_neutral_territory_and_only_sea_for_ships(tmp_path: Path) -> None:
    # F8: no unit of a belligerent enters a neutral's territory (Italy's in 1914); a ship goes
    # to sea zones only.
    path = str(tmp_path / "war.db")
    result = CliRunner().invoke(cli, ["--db", path, "new", "war", "--scenario", "great-war-1914", "--dice", "manual"])
    assert result.exit_code == 0, result.output
    obj = Context(path, None)
    try:
        obj.load()
        assert _completions(obj, "move DE-BM1 --to Ven") == []
        assert _completions(obj, "move DE-BM1 --to Flan") == ["Flanders"]
        assert _completions(obj, "move DE-BB1 --to Flan") == []
        assert _completions(obj, "move DE-BB1 --path 'Dogger Bank,Flan") == []
        assert _completions(obj, "move DE-BB1 --to Dog") == ["'Dogger Bank'"]
    finally:
        obj.close()


def test_enter_on_a_completion_chosen_in_the_menu_takes_it_and_runs_nothing(
    db: str, tmp_path: Path, tmux: list[str]
) -> None:
    # Choosing the first zone of a path from the menu with Enter ran the line: a move recorded
    # with half its path.
    exe = shutil.which("tracker", path=str(Path(sys.executable).parent)) or "tracker"
    command = f"{exe} --db {db} shell --history {tmp_path / 'history'}; sleep 30"
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "100", "-y", "40", command], check=True)
    _wait_for(tmux, "autumn · round 1 · Germany · research>")
    _keys(tmux, "next", "Enter")
    _keys(tmux, "next", "Enter")
    _wait_for(tmux, "autumn · round 1 · Germany · combat movement>")
    _keys(tmux, "C-l")
    _keys(tmux, "move DE-SS3 --path s", "Tab")
    _wait_for(tmux, "Skagerrak")
    _keys(tmux, "Down", "Down")
    _wait_for(tmux, "--path 'Southern North Sea'")
    _keys(tmux, "Enter")
    time.sleep(1)
    _keys(tmux, ",'Dover Strait'", "Enter")
    screen = _wait_for(tmux, "battle 1")
    # One line ran, with the whole path.
    assert screen.count("combat movement> move") == 1, screen
    assert "combat movement> move DE-SS3 --path 'Southern North Sea','Dover Strait'" in screen, screen
    _keys(tmux, "exit", "Enter")
