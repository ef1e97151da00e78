"""`tracker inbox` after a PBEM fork is mended: the history a copy kept aside when it gave way
(`import --resolve theirs`, campaign NAME-fork-SEQ) is nobody's game, so it is not listed as
waiting for anyone (it did, for ever, at the step where it stopped); named, it still is."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.test_pbem_hostile import germanys_turn
from tracker.cli.main import cli
from tracker.service.inbox import kept_at_fork


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def test_inbox_leaves_out_the_history_kept_at_a_fork(tmp_path: Path) -> None:
    # Germany rolls for research while Britain closes Germany's research phase: a fork.
    _, britain, turn = germanys_turn(tmp_path, True)
    run(britain, "import", str(turn), "--resolve", "theirs")
    assert json.loads(run(britain, "campaigns", "--json"))  # two campaigns now
    items = json.loads(run(britain, "inbox", "--json"))
    assert {item["campaign"] for item in items} == {"pbem"}, items
    assert "pbem-fork-2" not in run(britain, "inbox")
    # Named, the kept history still says where it stopped.
    kept = json.loads(run(britain, "--campaign", "pbem-fork-2", "inbox", "--json"))
    assert [item["phase"] for item in kept] == ["purchase"]


def test_only_a_fork_kept_beside_its_campaign_is_left_out() -> None:
    names = ["autumn", "autumn-fork-24", "autumn-fork-24-2", "winter-fork-3", "spring-fork-x"]
    assert kept_at_fork("autumn-fork-24", "autumn", names)
    assert kept_at_fork("autumn-fork-24-2", "autumn", names)
    # No campaign `winter` goes on here: an imported copy named so is somebody's game.
    assert not kept_at_fork("winter-fork-3", "winter", names)
    # A campaign created under that very name, or a name only like it.
    assert not kept_at_fork("autumn-fork-24", "autumn-fork-24", names)
    assert not kept_at_fork("spring-fork-x", "spring", [*names, "spring"])
    assert not kept_at_fork("autumnal-fork-2", "autumn", [*names, "autumnal-fork-2"])
