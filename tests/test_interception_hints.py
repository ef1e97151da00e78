"""SM4: the hint of an interception's decide step offers `--retreat` only where the submarines
have a zone to go back to. After a retreat, the interception in the zone retreated to offered it
too, and the retreat it hinted at was refused (SM4: where their move began).

SM5: an interception whose detected submarines outlived their hunters ends naming them free to
go on (`[record] detected_survivors_named`); a campaign recorded before the key keeps the words
it recorded ("the submarines not detected went on"), so its log verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import recorded_before
from tracker.cli.main import cli


def run(db: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == code, result.output
    return result.output


def test_sm4_the_decide_hint_offers_a_retreat_only_where_there_is_a_zone_to_go_back_to(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    run(db, "new", "i", "--scenario", "great-war-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "de-ss4", "--path", "dover strait, english channel")
    run(db, "intercept", "search", "1", "--dice", "2")
    run(db, "battle", "fire", "1", "--dice", "5,3")
    (first,) = json.loads(run(db, "pending", "--json"))
    assert first["back"] == "Southern North Sea" and "[--retreat S2]" in first["command"]
    run(db, "intercept", "decide", "1", "--retreat", "de-ss4")
    run(db, "intercept", "search", "2", "--units", "gb-dd4,gb-ca4", "--dice", "1,1")
    run(db, "battle", "targets", "2", "--targets", "de-ss4=gb-dd4")
    run(db, "battle", "screen", "2")
    run(db, "battle", "fire", "2", "--dice", "4,5,6")
    (second,) = json.loads(run(db, "pending", "--json"))
    assert second["step"] == "decide" and second["back"] is None
    assert second["command"] == "tracker intercept decide 2 [--submerge S1]"
    assert "retreat" not in second["text"]
    assert "SM4" in run(db, "intercept", "decide", "2", "--retreat", "de-ss4", code=1)


def _through_the_hunters(db: Path) -> str:
    """DE-SS4 detected passing through the Dover Strait sinks the one destroyer hunting it and
    goes on (SM4, SM5); what the battle's end recorded."""
    run(db, "new", "i", "--scenario", "great-war-1914", "--dice", "manual")
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "de-ss4", "--path", "dover strait, english channel")
    run(db, "intercept", "search", "1", "--dice", "2")
    run(db, "battle", "fire", "1", "--dice", "1,10")
    run(db, "intercept", "continue", "1")
    assert run(db, "verify").startswith("OK")
    (ended,) = [e for e in json.loads(run(db, "log", "--json")) if e["kind"] == "BattleEnded"]
    return str(ended["data"]["reason"])


def test_sm5_an_interception_whose_detected_submarine_outlived_its_hunters_ends_naming_it_free(
    tmp_path: Path,
) -> None:
    """It ended as "the submarines not detected went on or stayed", though DE-SS4 was detected."""
    assert _through_the_hunters(tmp_path / "i.db") == "the free submarines went on or stayed; the interception is over"


def test_sm5_a_campaign_recorded_before_the_key_keeps_its_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded_before(monkeypatch, "detected_survivors_named")
    reason = _through_the_hunters(tmp_path / "i.db")
    assert reason == "the submarines not detected went on or stayed; the interception is over"
