"""T1 on the league server, from a real `tracker serve`: `GET /api/campaigns/NAME/state?turn=N`
carries `in_progress` exactly as `state --turn N --json` does, and the viewer's board page of a
turn says whether it shows the end of that turn or the turn still being played ("end of turn
1", "turn 2 in progress"); with a phase, the same of the phase."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from tests.support import perform_until, served
from tests.test_server import Reader, spectator, tracker
from tracker.server.openapi import openapi_document
from tracker.service.application import Tracker


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Reader, Path]]:
    """A campaign in Britain's combat_movement, turn 2 (turn 1, Germany's, is over), served with
    its key store in the test's own folder."""
    work = tmp_path_factory.mktemp("in_progress")
    db = work / "league.db"
    assert tracker(db, "new", "autumn", "--scenario", "north-sea-1914").returncode == 0
    with Tracker(str(db)) as t:
        perform_until(t, t.campaign_id(None), "Britain", "combat_movement")
    token = spectator(db)
    with served(str(db), workdir=work) as server:
        yield Reader(server, token), db


def cli_state(db: Path, *args: str) -> dict[str, Any]:
    done = tracker(db, "state", *args, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def api_state(server: Reader, query: str) -> dict[str, Any]:
    status, data = server.get(f"/api/campaigns/autumn/state{query}")
    assert status == 200, data
    assert isinstance(data, dict)
    return data


def heading(server: Reader, query: str) -> str:
    """The board page's position line, as text on one line."""
    status, html = server.page(f"/campaigns/autumn/board{query}")
    assert status == 200, html
    match = re.search(r'<p class="meta" id="position">(.*?)</p>', html, re.DOTALL)
    assert match, "the board page has its position line"
    return " ".join(unescape(re.sub(r"<[^>]+>", "", match.group(1))).split())


@pytest.mark.parametrize(
    ("query", "args", "expected"),
    [
        ("?turn=1", ["--turn", "1"], False),
        ("?turn=2", ["--turn", "2"], True),
        ("?turn=1&phase=purchase", ["--turn", "1", "--phase", "purchase"], False),
        ("?turn=2&phase=purchase", ["--turn", "2", "--phase", "purchase"], False),
        ("?turn=2&phase=combat_movement", ["--turn", "2", "--phase", "combat_movement"], True),
    ],
)
def test_t1_api_state_of_a_turn_says_in_progress_as_the_cli_json_does(
    league: tuple[Reader, Path], query: str, args: list[str], expected: bool
) -> None:
    server, db = league
    served_state = api_state(server, query)
    assert served_state["in_progress"] is expected
    assert served_state == cli_state(db, *args)


@pytest.mark.parametrize(("query", "args"), [("", []), ("?at=3", ["--at", "3"])])
def test_t1_api_state_now_or_at_an_event_has_no_in_progress(
    league: tuple[Reader, Path], query: str, args: list[str]
) -> None:
    server, db = league
    served_state = api_state(server, query)
    assert "in_progress" not in served_state
    assert served_state == cli_state(db, *args)


def test_t1_the_board_page_of_a_finished_turn_says_it_shows_its_end(league: tuple[Reader, Path]) -> None:
    server, _ = league
    line = heading(server, "?turn=1")
    assert line.startswith("Board at the end of turn 1:"), line
    assert "in progress" not in line


def test_t1_the_board_page_of_the_turn_being_played_says_it_is_in_progress(league: tuple[Reader, Path]) -> None:
    server, db = league
    line = heading(server, "?turn=2")
    assert line.startswith("Board now, turn 2 in progress:"), line
    assert "end of" not in line
    # The board shown is the board now, as the API says.
    assert f"after event {cli_state(db)['seq']}" in line
    # The board now, unpinned, is headed as it was.
    assert heading(server, "").startswith("Now: round 1 · turn 2 · Britain")


def test_t1_the_board_page_of_a_phase_says_whether_it_is_over_or_being_played(league: tuple[Reader, Path]) -> None:
    server, _ = league
    over = heading(server, "?turn=1&phase=purchase")
    assert over.startswith("Board at the end of purchase of turn 1:"), over
    assert "in progress" not in over
    # A phase over in the turn still played: the end of the phase, of a turn in progress.
    done = heading(server, "?turn=2&phase=purchase")
    assert done.startswith("Board at the end of purchase of turn 2 (turn 2 in progress):"), done
    now = heading(server, "?turn=2&phase=combat_movement")
    assert now.startswith("Board now, combat movement of turn 2 in progress:"), now
    assert "end of" not in now


def test_t1_the_openapi_document_lists_in_progress_in_the_state_answer() -> None:
    answer = openapi_document()["paths"]["/campaigns/{name}/state"]["get"]["responses"]["200"]
    schema = answer["content"]["application/json"]["schema"]
    assert schema["properties"]["in_progress"]["type"] == "boolean"
    assert "in_progress" not in schema["required"]
