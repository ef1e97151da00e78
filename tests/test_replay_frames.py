"""`replay --json`'s frames: each event as `log --json` lists it (timestamp and data too), with
the board as `state --at` prints it; read for the frames printed only, not the whole log."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.demo import run_demo
from tracker.cli.main import cli
from tracker.service.application import Tracker
from tracker.service.replay import Replay


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("demo") / "demo.db")
    run_demo(path, lambda line: None)
    return path


def run(db: str, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def event_of(frame: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in frame.items() if k != "board"}


def test_replay_to_json_frame_is_the_event_as_log_lists_it(demo_db: str) -> None:
    listed = {r["seq"]: r for r in run(demo_db, "log", "--asked", "--json")}
    asked = next(s for s, r in listed.items() if r["kind"] == "ActionAsked")
    rolled = next(s for s, r in listed.items() if r["kind"] == "DiceRolled")
    for seq in (1, 5, asked, rolled, max(listed)):
        (frame,) = run(demo_db, "replay", "--to", str(seq), "--json")
        assert event_of(frame) == listed[seq]
        assert "timestamp" in frame and "data" in frame


def test_replay_battle_json_frames_are_the_events_as_log_lists_them(demo_db: str) -> None:
    (declared,) = run(demo_db, "log", "--kind", "ConvoyAttackDeclared", "--json")
    battle = str(declared["battle"])
    frames = run(demo_db, "replay", "--battle", battle, "--json")
    assert [event_of(f) for f in frames] == run(demo_db, "log", "--battle", battle, "--json")
    # --to within the battle: the same record as the log's.
    middle = frames[len(frames) // 2]
    (frame,) = run(demo_db, "replay", "--battle", battle, "--to", str(middle["seq"]), "--json")
    assert frame == middle


def test_replay_json_board_is_the_board_state_prints(demo_db: str) -> None:
    for seq in (3, 40):
        (frame,) = run(demo_db, "replay", "--to", str(seq), "--json")
        state = run(demo_db, "state", "--at", str(seq), "--json")
        assert frame["board"] == {k: v for k, v in state.items() if k != "campaign"}


def test_replay_cursor_reads_no_event_data_until_frames_are_printed(demo_db: str) -> None:
    """Stepping needs the index rows only: the log's events are decoded for the frames printed."""
    with Tracker(demo_db) as t:
        player = Replay(t, t.campaign_id(None))
        assert all("data" not in f for f in player.frames)
        assert player.go_to_seq(5)
        (frame,) = player.listed([player.frame])
        assert frame["seq"] == 5 and "data" in frame and "timestamp" in frame
        assert "data" not in player.frame  # the cursor's own frame stays as it was
