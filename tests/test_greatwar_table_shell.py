"""The whole war (`great-war-1914`) played at one table in `tracker shell`: what a player typing
the lines, following each `next:` and pressing Tab, tripped on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import cli_on
from tracker.cli.common import Context
from tracker.cli.main import cli
from tracker.cli.shell import Session


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "war.db")
    cli_on(path)("new", "war", "--scenario", "great-war-1914")
    return path


@pytest.fixture
def shell(db: str) -> Iterator[Session]:
    obj = Context(db, None)
    session = Session(cli, obj)
    session.start_looking()  # at a terminal (`run`)
    yield session
    obj.close()


def test_t4_a_next_to_refused_part_way_is_not_said_again_as_another_writers(shell: Session, capsys) -> None:
    # The phases `next --to` closed before the gate refused it were printed by the line, then
    # said again above the prompt: "Meanwhile: round 1, Germany: placement   [T2]", as if
    # another shell had recorded them.
    assert shell.dispatch("next --to purchase") == 0
    assert shell.dispatch("buy submarine") == 0
    capsys.readouterr()
    assert shell.dispatch("next --to collect_resources") == 1
    captured = capsys.readouterr()
    assert "round 1, Germany: placement   [T2]" in captured.out
    assert captured.err.startswith("Error: T4: placement cannot end yet")
    assert shell.news() == []


def test_another_writers_events_during_a_refused_line_are_still_said(db: str, shell: Session, capsys) -> None:
    # A refusal that recorded nothing leaves what another writer recorded to be said.
    assert shell.dispatch("buy submarine") == 1  # research: refused (T3), nothing recorded
    cli_on(db)("next")
    assert shell.news() == ["Meanwhile: round 1, Germany: purchase   [T2]"]


def _completions(obj: Context, text: str) -> list[str]:
    from prompt_toolkit.document import Document

    from tracker.cli.shell_prompt import completer

    return [c.text for c in completer(cli, obj).get_completions(Document(text), None)]


def test_f4_tab_after_move_to_offers_the_zones_one_step_away(db: str) -> None:
    # `--to` takes a zone one step away: Tab offered all 148 zones of the map, from 'Aegean Sea'
    # on, each but four refused for DE-SS1 in Heligoland Bight ("not adjacent").
    obj = Context(db, None)
    try:
        obj.load()  # the shell's open session
        assert shell_words(_completions(obj, "move de-ss1 de-ss2 --to ")) == [
            "Central North Sea",
            "Dogger Bank",
            "Skagerrak",
            "Southern North Sea",
        ]
        # An air unit flies over land too (F7): the bomber's neighbours, territories included.
        assert "Heligoland Bight" in shell_words(_completions(obj, "move de-bm1 --to "))
        # No units named yet: no zone to count the step from, every zone still offered.
        assert len(_completions(obj, "move --to ")) > 100
    finally:
        obj.close()


def shell_words(texts: list[str]) -> list[str]:
    import shlex

    return [shlex.split(t)[0] for t in texts]


def _offered(obj: Context, text: str) -> dict[str, str]:
    from prompt_toolkit.document import Document

    from tracker.cli.shell_prompt import completer

    return {c.text: c.display_meta_text for c in completer(cli, obj).get_completions(Document(text), None)}


def test_pu1_tab_after_buy_offers_the_types_the_nation_can_pay_with_their_cost(db: str) -> None:
    # Germany, 10 resources after two research rolls: a battleship (20) was offered, and refused.
    run = cli_on(db)
    run("research", "advanced_submarine")
    run("research", "advanced_asw")
    run("next")
    obj = Context(db, None)
    try:
        obj.load()
        assert _offered(obj, "buy ") == {
            "submarine": "SS, 6 each",
            "destroyer": "DD, 8 each",
            "transport": "TR, 7 each",
            "fighter": "FT, 10 each",
            "transport_plane": "TP, 8 each",
        }
        # Britain (40) may buy anything but a fleet's worth: its own balance counts.
        assert "battleship" in _offered(obj, "buy --nation Britain ")
    finally:
        obj.close()


def test_te1_tab_after_research_offers_what_may_still_be_rolled_for_this_turn(db: str) -> None:
    # A technology already rolled for this turn was offered again, and refused (TE1).
    obj = Context(db, None)
    try:
        obj.load()
        assert _offered(obj, "research ") == {"advanced_submarine": "level 1 of 3", "advanced_asw": "level 0 of 3"}
        assert Session(cli, obj).dispatch("research advanced_submarine") == 0
        assert list(_offered(obj, "research ")) == ["advanced_asw"]
    finally:
        obj.close()
