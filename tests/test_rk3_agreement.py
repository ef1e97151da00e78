"""RK3 as written: an override undo needs "the agreement of a nation of the other side (or the
referee, PL2) ... every override needs it", whether or not the actions it takes back were
locked. An ally or the acting nation itself agreeing is no agreement of the other side.

A campaign recorded before the ruleset said so (`[record] every_override_agreed`) keeps the
rule it was refereed by, which asked it only for locked actions, so its log verifies as
recorded."""

from __future__ import annotations

import gzip
from pathlib import Path

from click.testing import CliRunner

from domain.ruleset import load_ruleset, read_toml
from tracker.cli.main import cli
from tracker.service.application import Tracker

FIXTURE = Path(__file__).parent / "fixtures" / "override-agreed-by-own-side.jsonl.gz"


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def events(db: str) -> int:
    with Tracker(db) as t:
        return t.load(t.campaign_id(None)).version


def test_rk3_override_undo_of_an_unlocked_action_needs_the_other_sides_agreement(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "w", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "next")  # Germany's purchase ends: nothing rolled, nobody answered, not locked
    before = events(db)
    for own_side in ("austria-hungary", "germany"):
        out = run(db, "undo", "--override", "--reason", "we agree", "--agreed-by", own_side, code=1)
        assert out.startswith("Error: RK3: an override undo concerns Germany: it needs the agreement of a nation"), out
        assert "(Britain, France)" in out
        assert events(db) == before, "a refused override undo appended something"
    out = run(db, "undo", "--override", "--reason", "misclick", "--agreed-by", "gb")
    assert "agreed by Britain" in out
    assert "agreed by Britain: misclick" in run(db, "verify")


def test_rk3_a_plain_undo_of_an_unlocked_action_needs_no_agreement(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run(db, "new", "w", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "next")
    assert "OVERRIDE" not in run(db, "undo")


def test_rk3_a_ruleset_file_without_the_key_plays_the_rule_as_written(tmp_path: Path) -> None:
    source = tmp_path / "house.toml"
    text = Path(__file__).parent.parent.joinpath("domain", "data", "rulesets", "twtea-3e.toml").read_text()
    # The whole [record] table (its keys up to the blank line that ends it) left out.
    start = text.index("[record]\n")
    source.write_text(text[:start] + text[text.index("\n\n", start) + 2 :])
    assert "record" not in read_toml(source)
    ruleset, data = load_ruleset(str(source))
    assert ruleset.every_override_agreed and data["record"]["every_override_agreed"] is True
    assert ruleset.undos_answer_nothing and data["record"]["undos_answer_nothing"] is True


def test_rk3_a_log_recorded_before_the_key_imports_and_verifies(tmp_path: Path) -> None:
    """The fixture is the export of a campaign played by the tracker before the key: Germany's
    purchase phase undone twice with an override, agreed by Austria-Hungary, then by Germany
    itself, as it then could."""
    export = tmp_path / "old.jsonl"
    export.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    db = str(tmp_path / "old.db")
    run(db, "import", str(export))
    verified = run(db, "verify")
    assert "Re-refereed" in verified and "agreed by Germany: self agrees" in verified
    with Tracker(db) as t:
        c = t.load(t.campaign_id(None))
        assert not c.ruleset.every_override_agreed
        assert "record" not in c.ruleset_data
    # The campaign goes on under the rule it was recorded with.
    run(db, "undo", "--override", "--reason", "still ours", "--agreed-by", "austria-hungary")
