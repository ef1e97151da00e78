"""A group playing by e-mail with files, as real groups get it wrong: a fork mended with
`import --resolve theirs` keeps the copy's players and notification channels on the campaign
that goes on; a file edited by hand is refused even where this copy holds its events; the
e-mail told after an undo carries every event its player lacks, and says to import it first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import cli_on
from tracker.server.delivery import last_acted
from tracker.service.application import Tracker
from tracker.service.notify import message_body


@pytest.fixture
def copies(tmp_path: Path) -> dict[str, Any]:
    """anna's copy (Germany, who created the campaign) and bert's (Britain, from her export),
    of one manual-dice campaign, each with the group's players and bert's e-mail channel."""
    anna, bert = tmp_path / "anna.db", tmp_path / "bert.db"
    cli_on(anna)("new", "war", "--scenario", "north-sea-1914", "--dice", "manual")
    full = tmp_path / "war.jsonl"
    cli_on(anna)("export", str(full))
    cli_on(bert)("import", str(full))
    for db in (anna, bert):
        run = cli_on(db)
        run("players", "add", "anna", "--nations", "Germany,Austria-Hungary")
        run("players", "add", "bert", "--nations", "Britain,France")
        run("notify", "add", "email", "bert@example.org", "--player", "bert", "--attach-export")
    return {"anna": anna, "bert": bert, "tmp": tmp_path}


def head(db: Path) -> int:
    with Tracker(str(db)) as t:
        return len(t.events(t.campaign_id("war")))


def turn_of(run: Any, *options: str) -> str:
    """The nation whose turn it is, from `tracker state`'s first line."""
    return str(run(*options, "state").splitlines()[0].split(" · ")[3])


def step(db: Path, *options: str) -> None:
    """`tracker next`, each enemy that may attack convoys passing first (CV1)."""
    run = cli_on(db)
    pending = json.loads(run(*options, "pending", "--json"))
    items = pending["pending"] if isinstance(pending, dict) else pending
    for nation in sorted({n for item in items if item.get("kind") == "convoy_open" for n in item["waiting"]}):
        run(*options, "convoy", "pass", "--by", nation)
    run(*options, "next")


def test_resolve_theirs_keeps_the_players_and_channels_on_the_campaign_that_goes_on(copies: dict[str, Any]) -> None:
    anna, bert = copies["anna"], copies["bert"]
    # Both answer Germany's research from the same file: a fork.
    cli_on(anna)("research", "advanced_submarine", "--dice", "4", "--ref", "rolz#1")
    cli_on(bert)("next")
    turn = copies["tmp"] / "anna-turn.jsonl"
    cli_on(anna)("export", "--since", "1", str(turn))
    cli_on(bert)("import", str(turn), "--resolve", "theirs")
    run = cli_on(bert)
    channels = json.loads(run("--campaign", "war", "notify", "list", "--json"))
    assert [(c["player"], c["target"]) for c in channels] == [("bert", "b***@example.org")]
    players = json.loads(run("--campaign", "war", "players", "list", "--json"))
    assert sorted(p["name"] for p in players) == ["anna", "bert"]
    # The hand-offs of the game going on are written for bert's channel again.
    while turn_of(run, "--campaign", "war") != "Britain":
        step(bert, "--campaign", "war")
    log = json.loads(run("--campaign", "war", "notify", "log", "--json"))
    assert log and {r["status"] for r in log} == {"pending"}


def _edit(line: str, change: Any) -> str:
    """An export line with `change` made to its recorded fields and, alike, to its stored
    state: both say the same, and the hash is left as it was."""
    row = json.loads(line)
    change(row["event"])
    state = json.loads(row["state"])
    change(state)
    row["state"] = json.dumps(state)
    return json.dumps(row)


@pytest.mark.parametrize("both", [False, True], ids=["fields", "fields-and-state"])
def test_a_file_edited_by_hand_is_refused_where_this_copy_holds_its_events(copies: dict[str, Any], both: bool) -> None:
    anna, bert = copies["anna"], copies["bert"]
    cli_on(anna)("research", "advanced_submarine", "--dice", "4", "--ref", "rolz#1")
    turn = copies["tmp"] / "anna-turn.jsonl"
    cli_on(anna)("export", "--since", "1", str(turn))
    cli_on(bert)("import", str(turn))
    lines = turn.read_text().splitlines()
    # The roll's event says 9 where anna rolled 4.
    roll = next(i for i, line in enumerate(lines) if json.loads(line).get("kind") == "DiceRolled")

    def nine(fields: dict[str, Any]) -> None:
        fields["values"] = [9]

    if both:
        lines[roll] = _edit(lines[roll], nine)
    else:
        row = json.loads(lines[roll])
        nine(row["event"])
        lines[roll] = json.dumps(row)
    edited = copies["tmp"] / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    out = cli_on(bert)("import", str(edited), code=1)
    assert f"line {roll + 1}: event " in out and "edited" in out
    # The file as sent still imports as nothing new.
    assert "Nothing to import" in cli_on(bert)("import", str(turn))


def test_the_e_mail_after_an_undo_carries_the_events_the_player_it_told_lacks(copies: dict[str, Any]) -> None:
    anna, bert = copies["anna"], copies["bert"]
    run = cli_on(bert)
    while turn_of(run) != "Britain":
        step(bert)  # Germany's turn, recorded on bert's copy for brevity
    germany_done = head(bert)
    while turn_of(run) != "Austria-Hungary":
        step(bert)  # Britain's turn: the game passes to anna's Austria-Hungary ...
    run("undo")  # ... and bert takes his last step back after the hand-off went out
    step(bert)  # the turn passes to Austria-Hungary again
    with Tracker(str(bert)) as t:
        cid = t.campaign_id("war")
        since = last_acted(t, cid, ["Germany", "Austria-Hungary"], head(bert))
    # anna's copy holds Germany's turn: the export must start after it, undo included.
    assert since == germany_done
    assert anna.exists()


def test_an_e_mail_with_the_export_attached_says_to_import_it_first() -> None:
    payload = {
        "campaign": "war", "title": "The North Sea", "round": 1, "phase": "research", "nation": "Britain",
        "reasons": ["turn"], "newly_owing": ["Britain"], "pending": [],
    }  # fmt: skip
    row = {"kind": "email", "format": "email", "mention": None}

    def extras(row: Any, payload: Any) -> dict[str, Any]:
        return {"since": ["Germany ends research"], "attachment": ("war-since-24.jsonl", b"{}\n")}

    body = message_body(row, payload, lambda item: None, None, extras)
    lines = body["text"].splitlines()
    assert lines[1] == "Import the attached file first: tracker import war-since-24.jsonl"
    assert body["attachment"][0] == "war-since-24.jsonl"
    assert "Import the attached file first" not in message_body(row, payload, lambda item: None, None)["text"]
