"""`tracker report --format discord`: the Markdown report as Discord shows it. Discord draws no
pipe table, so each table is a fixed-width code block; and a Discord message holds at most
2,000 characters, so the report comes cut into messages unless --split says otherwise."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.test_report_split import SEPARATOR, great_war, invoke, md_problems, north_sea
from tracker.reports.markdown import DISCORD
from tracker.reports.post import Marked, Row, plain

__all__ = ["great_war", "north_sea"]  # the module-scoped demo campaigns, as fixtures


def parts_of(printed: str) -> list[str]:
    """The messages of a printed report, each after its separator line."""
    pieces = SEPARATOR.split(printed)
    # split gives: text before the first separator, then (number, total, count, text) groups.
    return [pieces[k + 3].removesuffix("\n\n") + "\n" for k in range(1, len(pieces), 4)]


def test_each_table_is_a_code_block_with_its_columns_aligned(north_sea: str) -> None:
    printed = invoke(north_sea, "report", "--turn", "2", "--format", "discord").stdout
    assert "|---" not in printed and "\n| " not in printed
    block = printed[printed.index("```\nNation   Technology") :]
    block = block[: block.index("\n```", 4)]
    lines = block.splitlines()[1:]
    assert lines[1].startswith("-------  ------------")
    assert lines[0].index("Technology") == lines[2].index("Advanced ASW")


def test_the_report_comes_in_messages_discord_takes_each_rendering_alone(great_war: str) -> None:
    for scope in (["--turn", "1"], ["--all"]):
        printed = invoke(great_war, "report", *scope, "--format", "discord").stdout
        parts = parts_of(printed)
        assert len(parts) > 1
        for part in parts:
            assert len(part) <= 2000
            assert md_problems(part) == [], part


def test_split_takes_another_length_and_json_lists_the_messages(great_war: str) -> None:
    parts = json.loads(
        invoke(great_war, "report", "--turn", "1", "--format", "discord", "--split", "5000", "--json").stdout
    )
    assert len(parts) > 1 and all(p["characters"] <= 5000 for p in parts)
    assert all("```" in p["text"] or "|" not in p["text"] for p in parts)


def test_backticks_typed_by_a_player_cannot_close_a_tables_code_block() -> None:
    text = DISCORD.layout([Marked("Nation"), Marked("Reason")], [Row(["Britain", "```oops``` and `x`"], None)])
    lines = text.splitlines()
    assert lines[0] == "```" and lines[-1] == "```"
    assert not any(re.search("`", line) for line in lines[1:-1])


def test_a_mention_typed_by_a_player_pings_nobody_when_the_report_is_pasted(tmp_path: Path) -> None:
    # Discord reads @everyone, @here and <@id> (a user), <@&id> (a role) in a pasted message as
    # pings; players' text in a report (a reason, a name) is only to be read.
    escaped = str(DISCORD.escape("@everyone @here <@123> <@!45> <@&678> anna@example.org"))
    assert not re.search(r"@(everyone|here)|<@[!&]?\d", escaped), escaped
    assert plain(DISCORD.escape("@everyone")) == "@everyone"

    db = str(tmp_path / "ping.db")
    invoke(db, "new", "ping", "--scenario", "north-sea-1914")
    invoke(db, "adjust", "--resources", "Germany=-1", "--reason", "@everyone look, <@123> and @here")
    printed = invoke(db, "report", "--turn", "1", "--format", "discord").stdout
    assert "look" in printed
    assert not re.search(r"@(everyone|here)|<@[!&]?\d", printed), printed
