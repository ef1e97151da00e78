"""`tracker shell` as a group at the table plays great-war-1914: Tab at a search step offers the
units that may search (CV3, SM2, AS2), a path's next zone is a neighbour of the zone before it
(F4), Tab after a command with nothing left to type offers its options, and the menu of a
comma list shows the item being completed. Driven through the shell's completer, as
test_shell_completion_battles does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import cli_on
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session
from tracker.cli.shell_prompt import completer


@pytest.fixture
def war(tmp_path: Path) -> Iterator[Context]:
    path = str(tmp_path / "war.db")
    cli_on(path)("new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    obj = Context(path, None)
    obj.load()
    yield obj
    obj.close()


def _menu(obj: Context, text: str) -> list[Any]:
    from prompt_toolkit.document import Document

    return list(completer(cli, obj).get_completions(Document(text), None))


def _completions(obj: Context, text: str) -> list[str]:
    return [c.text for c in _menu(obj, text)]


def _run(obj: Context, *lines: str) -> None:
    for line in lines:
        assert Session(cli, obj).dispatch(line) == 0, line


def test_sm2_as2_search_tab_offers_only_the_units_that_may_search(war: Context) -> None:
    # SM2: Britain searches Dover Strait for DE-SS4 with its destroyer; Tab offered the
    # U-boat itself and a British submarine as searchers, each only refused.
    _run(war, "next --to combat_movement", "move DE-SS4 --path 'Dover Strait,English Channel'")
    assert _completions(war, "intercept search 1 --units ") == ["GB-DD6"]
    # AS2: Germany's escorts hunt GB-SS3 in the Heligoland Bight, not its own U-boats.
    _run(war, "intercept search 1 --units GB-DD6 --dice 9", "intercept continue 1", "next")
    _run(war, "asw start --zone 'Heligoland Bight'")
    escorts = ["DE-CA1", "DE-CA2", "DE-CA3", "DE-DD1", "DE-DD2", "DE-DD3", "DE-DD4"]
    assert _completions(war, "asw search 2 --units ") == escorts
    assert _completions(war, "asw search 2 --units DE-DD3,DE-D") == [
        "DE-DD3,DE-DD1",
        "DE-DD3,DE-DD2",
        "DE-DD3,DE-DD4",
    ]
    # At another step than a search, the battle's units there, as before.
    _run(war, "asw search 2 --units DE-DD3,DE-DD4 --dice 1,9")
    assert "GB-SS3" in _completions(war, "battle casualties 2 --units ")


def test_f4_a_path_tab_offers_the_neighbours_of_the_zone_before(war: Context) -> None:
    # F4: a path goes from zone to adjacent zone; Tab offered all 79 sea zones at every step.
    _run(war, "next --to combat_movement")
    # The first step: from the Heligoland Bight, where DE-BB1 is.
    assert _completions(war, "move DE-BB1 --path ") == [
        "'Central North Sea'",
        "'Dogger Bank'",
        "Skagerrak",
        "'Southern North Sea'",
    ]
    assert _completions(war, "move DE-BB1 --path 'Central North Sea,") == [
        "'Central North Sea,Dogger Bank'",
        "'Central North Sea,Heligoland Bight'",
        "'Central North Sea,Northern North Sea'",
        "'Central North Sea,Skagerrak'",
    ]
    assert _completions(war, "move DE-BB1 --path 'central north sea,nor") == ["'central north sea,Northern North Sea'"]
    # Units in different zones: the line does not tell where the path starts.
    assert len(_completions(war, "move DE-BB1,DE-SS4 --path ")) == 79


def test_tab_after_a_command_with_nothing_left_to_type_offers_its_options(war: Context) -> None:
    # `convoy declare ` + Tab offered nothing: click offers options only once a dash is typed.
    offered = _completions(war, "convoy declare ")
    assert {"--by", "--zone", "--subs"} <= set(offered)
    assert "--by" not in _completions(war, "convoy declare --by Germany ")
    # An option waiting for its value is not given options instead (T3: no zone starts a
    # battle in Germany's research phase).
    assert _completions(war, "battle start --zone ") == []
    # Commands of a group, and an argument's values, as before.
    assert "declare" in _completions(war, "convoy ")
    assert _completions(war, "research ") == ["advanced_submarine", "advanced_asw"]


def test_the_menu_of_a_comma_list_shows_the_item_being_completed(war: Context) -> None:
    # The menu showed the whole list typed so far in each entry: on a terminal too narrow for
    # it, the entries were cut before the one part that tells them apart.
    menu = _menu(war, "move DE-BB1,DE-BB2,DE-BB3,DE-BB4,DE-BB5,DE-BB6,DE-B")
    assert [c.text for c in menu][:2] == [
        "DE-BB1,DE-BB2,DE-BB3,DE-BB4,DE-BB5,DE-BB6,DE-BB7",
        "DE-BB1,DE-BB2,DE-BB3,DE-BB4,DE-BB5,DE-BB6,DE-BB8",
    ]
    assert [c.display_text for c in menu] == ["DE-BB7", "DE-BB8", "DE-BB9", "DE-BM1"]
    # A single name is shown as it goes in the line.
    assert [c.display_text for c in _menu(war, "show 'Central North S")] == ["'Central North Sea'"]
