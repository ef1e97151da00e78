"""D5 in reports: a dice seed reveal that an undo took back stays in effect (the seed is public
for good), so a report no longer strikes it through as gone; it says so, as `log` does."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tracker.cli.main import cli


def test_d5_an_undone_seed_reveal_is_not_struck_through_in_reports(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["--db", str(tmp_path / "c.db")]
    for args in (["new", "r", "--scenario", "north-sea-1914", "--dice", "auto"], ["dice", "reveal"], ["undo"]):
        assert runner.invoke(cli, [*base, *args]).exit_code == 0
    md = runner.invoke(cli, [*base, "report", "--turn", "1"]).output
    reveal = [line for line in md.splitlines() if "revealed" in line]
    assert len(reveal) == 2 and not any("~~dice seed" in line for line in reveal), reveal
    assert "*(the reveal stays in effect, D5)*" in reveal[0]
    assert "(undone by event 5, but the reveal stays in effect, D5)" in reveal[1]
    assert "~~asked: dice reveal~~" in md  # what was asked is taken back like any action
    bbcode = runner.invoke(cli, [*base, "report", "--turn", "1", "--format", "bbcode"]).output
    assert "[s]dice seed" not in bbcode and "[i](the reveal stays in effect, D5)[/i]" in bbcode
    html = runner.invoke(cli, [*base, "report", "--turn", "1", "--format", "html"]).output
    assert '<li class="undone">dice seed' not in html and "the reveal stays in effect, D5</span>" in html
    data = json.loads(runner.invoke(cli, [*base, "report", "--turn", "1", "--json"]).output)
    (undo,) = data["turns"][0]["undos"]
    assert [e["stays"] for e in undo["undone_events"]] == [None, "the reveal stays in effect, D5"]
