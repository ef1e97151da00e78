"""PBEM forks mended (issue: forks that can be mended): when two players recorded on their own
copies at once, the import names each side's first differing action and who asked it;
`import --resolve theirs` makes this copy give way (its history kept, whole, as campaign
NAME-fork-SEQ) and go on from the file's, so later `--since` files apply; `--resolve mine`
keeps this copy's and writes the file the other side imports with `--resolve theirs`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli
from tracker.service.application import Tracker


def run(db: str, *args: str, code: int = 0, campaign: str = "pbem") -> str:
    result = CliRunner().invoke(cli, ["--db", db, "--campaign", campaign, *args])
    assert result.exit_code == code, result.output
    return result.output


def events(db: str, campaign: str = "pbem") -> list[tuple[int, str]]:
    with Tracker(db) as t:
        return [(e.originator_version, e.hash) for e in t.events(t.campaign_id(campaign))]


def names(db: str) -> list[str]:
    with Tracker(db) as t:
        return t.campaign_names()


@pytest.fixture
def forked(tmp_path: Path) -> dict[str, Any]:
    """Germany's and Britain's copies of one manual-dice campaign, each with an action the
    other does not have: Germany's research roll, Britain's `next` (both in Germany's
    research phase, one after the other would be legal, at once they fork)."""
    germany, britain = str(tmp_path / "germany.db"), str(tmp_path / "britain.db")
    run(germany, "new", "pbem", "--scenario", "north-sea-1914", "--dice", "manual")
    full = tmp_path / "full.jsonl"
    run(germany, "export", str(full))
    run(britain, "import", str(full))
    base = len(events(germany))
    run(germany, "research", "advanced_submarine", "--dice", "4", "--ref", "dice-server#1001")
    run(britain, "next")
    turn = tmp_path / "germany-turn.jsonl"
    run(germany, "export", "--since", str(base), str(turn))
    return {"germany": germany, "britain": britain, "base": base, "turn": turn, "tmp": tmp_path}


def test_a_fork_names_each_sides_first_differing_action_and_changes_nothing(forked: dict[str, Any]) -> None:
    before = events(forked["britain"])
    out = run(forked["britain"], "import", str(forked["turn"]), code=1)
    fork = forked["base"] + 1
    assert f"fork at event {fork}" in out
    assert "here `next`, in the file `research (technology='advanced_submarine', dice=[4]" in out
    assert f"as campaign 'pbem-fork-{fork}'" in out
    assert events(forked["britain"]) == before and names(forked["britain"]) == ["pbem"]


def test_resolve_theirs_goes_on_from_the_files_history_and_keeps_this_copys_whole(forked: dict[str, Any]) -> None:
    britain, germany = forked["britain"], forked["germany"]
    mine = events(britain)
    out = run(britain, "import", str(forked["turn"]), "--resolve", "theirs", "--json")
    fork = forked["base"] + 1
    done = json.loads(out)
    kept = len(mine) - fork + 1  # this copy's events from the fork on
    assert (done["campaign"], done["archive"], done["fork"], done["kept"]) == ("pbem", f"pbem-fork-{fork}", fork, kept)
    # The campaign is Germany's history now; Britain's, every event, is kept aside.
    assert events(britain) == events(germany)
    assert events(britain, f"pbem-fork-{fork}") == mine
    assert sorted(names(britain)) == ["pbem", f"pbem-fork-{fork}"]
    for campaign in ("pbem", f"pbem-fork-{fork}"):
        assert "OK" in run(britain, "verify", campaign=campaign)
    # Germany's next file applies: the copies agree again.
    since = len(events(germany))
    run(germany, "next")
    later = forked["tmp"] / "later.jsonl"
    run(germany, "export", "--since", str(since), str(later))
    assert "Fast-forwarded campaign 'pbem'" in run(britain, "import", str(later))
    assert events(britain) == events(germany)


def test_resolve_mine_writes_the_file_the_other_side_gives_way_with(forked: dict[str, Any]) -> None:
    britain, germany, tmp = forked["britain"], forked["germany"], forked["tmp"]
    mine = events(germany)
    # Germany's copy goes on: its import of Britain's file keeps it, and writes Britain the reply.
    britain_turn = tmp / "britain-turn.jsonl"
    run(britain, "export", "--since", str(forked["base"]), str(britain_turn))
    reply = tmp / "reply.jsonl"
    out = run(germany, "import", str(britain_turn), "--resolve", "mine", "--reply", str(reply))
    assert "nothing changed here" in out and "--resolve theirs" in out
    assert events(germany) == mine and names(germany) == ["pbem"]
    # Britain imports Germany's reply giving way: both copies hold Germany's history.
    run(britain, "import", str(reply), "--resolve", "theirs")
    assert events(britain) == events(germany)
    assert "--reply goes with --resolve mine" in run(britain, "import", str(reply), "--reply", "x.jsonl", code=2)


def test_the_guides_pbem_step_mends_a_fork_the_way_the_program_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/guide.md "PBEM by file" once said to undo on the copy that gives way and export
    again: the undo of a rolled action is refused (RK3), and an undo appends events, so the
    next import still forks. The step names `--resolve`, and the names it quotes are the ones
    the program gives for the guide's own campaign `autumn` forked after its first event."""
    guide = (Path(__file__).resolve().parent.parent / "docs" / "guide.md").read_text()
    step = guide[guide.index("## PBEM by file") : guide.index("## What `verify` proves")]
    step = step[step.index("6. ") :]
    assert "undo --to" not in step
    for words in ("--resolve theirs", "--resolve mine", "--reply FILE", "autumn-fork-2", "autumn-since-1.jsonl"):
        assert words in step, words
    monkeypatch.chdir(tmp_path)
    mine, theirs = str(tmp_path / "mine.db"), str(tmp_path / "theirs.db")
    run(mine, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual", campaign="autumn")
    run(mine, "export", "autumn.jsonl", campaign="autumn")
    run(theirs, "import", "autumn.jsonl", campaign="autumn")
    run(mine, "research", "advanced_asw", "--dice", "9", "--ref", "rolz#5521", campaign="autumn")
    run(theirs, "next", campaign="autumn")
    run(mine, "export", "--since", "1", "mine.jsonl", campaign="autumn")
    run(theirs, "export", "--since", "1", "their.jsonl", campaign="autumn")
    assert "RK3" in run(mine, "undo", "--to", "1", "--yes", code=1, campaign="autumn")
    assert "fork at event 2: the copies went different ways after event 1: here " in run(
        theirs, "import", "mine.jsonl", code=1, campaign="autumn"
    )
    assert "--resolve theirs" in run(mine, "import", "their.jsonl", "--resolve", "mine", campaign="autumn")
    assert "'autumn-fork-2'" in run(theirs, "import", "autumn-since-1.jsonl", "--resolve", "theirs", campaign="autumn")
    assert events(theirs, "autumn") == events(mine, "autumn")
