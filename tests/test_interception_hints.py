"""SM4: the hint of an interception's decide step offers `--retreat` only where the submarines
have a zone to go back to. After a retreat, the interception in the zone retreated to offered it
too, and the retreat it hinted at was refused (SM4: where their move began)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

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
