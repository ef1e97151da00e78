"""A name with spaces typed unquoted (`tracker battle start --zone Central North Sea`) is bad
usage said in one line with how to quote it, whatever command or option took it: a zone, a
nation, a unit type or a technology, on the command line, in `tracker shell` and through a
server. Before, only `move` and the shell's `show` said so; `battle start` answered "more
arguments than the command takes: (North Sea)" and `ntr place` "[COUNT]: ... (got 'North')"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import cli_on
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.params import unquoted_name
from tracker.cli.shell import Session

HINT = "a name with spaces is one word when quoted: "


@pytest.fixture(scope="module")
def war(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("quoting") / "war.db")
    cli_on(path)("new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    cli_on(path)("next", "--to", "combat_movement")
    return path


def events(db: str) -> int:
    return len(cli_on(db)("log").strip().splitlines())


@pytest.mark.parametrize(
    ("line", "quoted"),
    [
        ("battle start --zone Central North Sea", "'Central North Sea'"),
        ("asw start --zone Central North Sea", "'Central North Sea'"),
        ("convoy declare --by Germany --zone Central North Sea", "'Central North Sea'"),
        ("convoy declare --by Ottoman Empire --zone Skagerrak", "'Ottoman Empire'"),
        ("show Central North Sea", "'Central North Sea'"),
        ("ntr place Central North Sea 1", "'Central North Sea'"),
        ("place submarine --at Heligoland Bight", "'Heligoland Bight'"),
        ("buy aircraft carrier 2", "'aircraft carrier'"),
        ("buy submarine --nation United States", "'United States'"),
        ("research advanced asw", "'advanced asw'"),
        ("odds need --zone Central North Sea", "'Central North Sea'"),
        ("odds escorts --zone Western Approaches", "'Western Approaches'"),
        ("odds need --zone Skagerrak --type aircraft carrier", "'aircraft carrier'"),
        ("luck --nation United States", "'United States'"),
        ("log --zone Central North Sea", "'Central North Sea'"),
        ("log --zone=Central North Sea", "'Central North Sea'"),
        ("adjust --ntr Britain:Central North Sea=1 --reason x", "'Britain:Central North Sea=1'"),
        ("move GB-DD1 --to Central North Sea", "'Central North Sea'"),
        ("move GB-DD1 --path Dover Strait,English Channel", "'Dover Strait,English Channel'"),
    ],
)
def test_a_name_typed_unquoted_is_said_how_to_quote_by_every_command(war: str, line: str, quoted: str) -> None:
    before = events(war)
    result = CliRunner().invoke(cli, ["--db", war, *line.split()])
    assert result.exit_code == 2, result.output
    (said,) = result.output.strip().splitlines()
    assert said.count(HINT) == 1 and f"{HINT}{quoted}" in said, said
    # Not click's words for the name's last words, which said nothing of the quotes.
    assert "more arguments than the command takes" not in said
    assert "Traceback" not in result.output
    assert events(war) == before


@pytest.mark.parametrize(
    "line",
    ["move GB-DD1 --to Centrl North Sea", "state two words", "show Nowhere Sea", "log --zone Skagerrak extra"],
)
def test_words_that_name_nothing_get_no_quoting_hint(war: str, line: str) -> None:
    result = CliRunner().invoke(cli, ["--db", war, *line.split()])
    assert result.exit_code == 2, result.output
    assert "quoted" not in result.output and len(result.output.strip().splitlines()) == 1


def test_in_the_shell_the_hint_is_said_once(war: str, capsys: pytest.CaptureFixture[str]) -> None:
    obj = Context(war, None)
    try:
        lines = ("show Central North Sea", "ntr place Central North Sea 1", "battle start --zone Central North Sea")
        for line in lines:
            assert Session(cli, obj).dispatch(line) == 2
            err = capsys.readouterr().err
            assert err.count(HINT) == 1 and len(err.strip().splitlines()) == 1, err
    finally:
        obj.close()


def test_through_a_server_the_hint_is_said_too(war: str, tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="tracker serve needs the server extra")
    from tracker.server.commands import run_command
    from tracker.server.served import ServedTracker
    from tracker.service.players import Player

    served = ServedTracker(war, keys=str(tmp_path / "keys.db"))
    try:
        cid = served.registry.lookup("war")
        germany = Player(str(cid), "gerd", ("Germany",), False)
        done = run_command(served, germany, "war", ["battle", "start", "--zone", "Central", "North", "Sea"])
        assert done["exit"] == 2
        assert f"{HINT}'Central North Sea'" in done["stderr"]
    finally:
        served.close()


def test_a_unit_type_with_spaces_is_said_without_a_database(tmp_path: Path) -> None:
    # `odds naval` reads no campaign: the default ruleset's names stand in.
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        words = ["odds", "naval", "--attacker", "Germany:aircraft", "carrier=1", "--defender", "Britain:cruiser=1"]
        result = CliRunner().invoke(cli, words, env={"TRACKER_DB": None, "TRACKER_SERVER": None})
    finally:
        os.chdir(cwd)
    assert result.exit_code == 2, result.output
    assert f"{HINT}'Germany:aircraft carrier=1'" in result.output
    assert list(tmp_path.iterdir()) == [], "no database left behind"


def test_the_longest_run_of_words_naming_something_is_quoted() -> None:
    known = {"north sea", "central north sea", "dover strait", "english channel"}.__contains__

    def found(text: str) -> str | None:
        return text if known(text.lower()) else None

    assert unquoted_name(["show", "Central", "North", "Sea"], found) == "Central North Sea"
    assert unquoted_name(["move", "X", "--path", "Dover", "Strait,English", "Channel"], found) == (
        "Dover Strait,English Channel"
    )
    # An option's name ends a run: its words are never part of the value before it.
    assert unquoted_name(["show", "Central", "--json", "North", "Sea"], found) == "North Sea"
    assert unquoted_name(["show", "Skagerrak"], found) is None
