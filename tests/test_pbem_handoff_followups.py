"""PBEM by e-mail, as a group of five plays the whole war: a volley both sides fire is told to
one nation to record (NC3; told to both, each recorded it on their own copy and the copies
forked), a manual roll names the dice server's roll id (D3), every refusal of a file says that
nothing was imported, and a message delivered after the game moved on is given up, or marked,
rather than asking for a roll in a battle that has ended."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from tests.support import cli_on
from tracker.cli.common import next_command
from tracker.server.delivery import DeliverySettings, Worker
from tracker.service.application import Tracker
from tracker.service.notify import Backoff, Outbox, email_body, message_text, stale

QUICK = Backoff(first=0.01, cap=0.05, limit=3, lease=0.2)
FIRE = "tracker --campaign war battle fire 1"


def _war(tmp_path: Path, dice: str) -> tuple[Path, Callable[..., str]]:
    """The whole war at Germany's naval_combat, anna playing the Central Powers' Germany and
    Austria-Hungary and bert Britain, bert told by e-mail: (database, CLI on it)."""
    db = tmp_path / "war.db"
    run = cli_on(db)
    run("new", "war", "--scenario", "great-war-1914", "--dice", dice)
    run("--campaign", "war", "players", "add", "anna", "--nations", "Germany,Austria-Hungary")
    run("--campaign", "war", "players", "add", "bert", "--nations", "Britain")
    run("--campaign", "war", "notify", "add", "email", "bert@example.org", "--player", "bert")
    run("--campaign", "war", "next", "--to", "naval_combat")
    return db, run


def _told(db: Path) -> list[tuple[dict[str, Any], str]]:
    """Each undelivered message: its row and its words."""
    with Tracker(str(db)) as t:
        rows = Outbox(t.engine).due(float("inf"), limit=100)
    return [(dict(r), message_text(json.loads(r["payload"]), next_command, None)) for r in rows]


class Sender:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, row: Any, body: Any) -> str:
        self.sent.append(body)
        return "250 OK"


def _deliver(db: Path) -> tuple[list[Any], list[tuple[str, str | None]]]:
    """One pass of the server's worker: what it sent, and each message's status and reason."""
    sender = Sender()
    with Tracker(str(db)) as t:
        worker = Worker(t.engine, DeliverySettings(sender=sender, backoff=QUICK))
        try:
            worker.step()
        finally:
            worker.close()
        log = Outbox(t.engine).log(str(t.campaign_id("war")))
    return sender.sent, [(r["status"], r["last_error"]) for r in log]


# ----- NC3: one nation records a volley both sides fire -----


def test_nc3_a_volley_both_sides_fire_is_told_to_one_nation_to_record(tmp_path: Path) -> None:
    """Auto dice: the fire step waits for Germany and Britain. Bert is told that battle 1 waits
    for Britain too, and that Germany records it: the command is Germany's, not his to type."""
    db, run = _war(tmp_path, "auto")
    run("--campaign", "war", "battle", "start", "--zone", "East African Coast")
    pending = run("--campaign", "war", "pending")
    assert "in this order: DE-CA9, GB-CA13; Germany records them, Britain's too [NC3]" in pending, pending
    ((row, text),) = _told(db)
    assert row["player"] == "bert"
    lines = text.splitlines()
    assert "Waiting for Germany, Britain: battle 1 (naval, East African Coast): waiting for Germany and " in text
    assert f"  next (Germany): {FIRE}" in lines, text
    assert not [line for line in lines if line.startswith("  next: ")], text
    html = email_body(text, json.loads(row["payload"]))["html"]
    assert f"<p>next (Germany): <code>{FIRE}</code></p>" in html


def test_nc3_a_step_one_nation_answers_names_nobody(tmp_path: Path) -> None:
    """Opening fire of Britain's submarines alone: Britain's to roll, told as before."""
    db, run = _war(tmp_path, "auto")
    run("--campaign", "war", "battle", "start", "--zone", "Southern North Sea")
    ((_, text),) = _told(db)
    assert f"  next: {FIRE}" in text.splitlines() and "records them" not in text, text


# ----- D3: a manual roll names the dice server's roll id -----


def test_d3_a_manual_roll_asked_for_names_its_reference_in_pending_and_the_message(tmp_path: Path) -> None:
    db, run = _war(tmp_path, "manual")
    run("--campaign", "war", "battle", "start", "--zone", "East African Coast")
    command = "battle fire 1 --dice V,... [--ref ROLL_ID]"
    assert f"  next: tracker {command}\n" in run("--campaign", "war", "pending")
    ((_, text),) = _told(db)
    assert f"  next (Germany): tracker --campaign war {command}" in text.splitlines(), text
    # As it names it: the reference goes with the dice.
    out = run("--campaign", "war", "battle", "fire", "1", "--dice", "10,10", "--ref", "rolz#7")
    assert "roll 1: DE-CA9" in out


# ----- import: each refusal of a file says that nothing was imported -----


@pytest.fixture
def copies(tmp_path: Path) -> dict[str, Any]:
    """Two copies of a manual-dice campaign, and a file of the first's research roll."""
    mine, theirs = tmp_path / "mine.db", tmp_path / "theirs.db"
    cli_on(mine)("new", "war", "--scenario", "north-sea-1914", "--dice", "manual")
    full = tmp_path / "full.jsonl"
    cli_on(mine)("export", str(full))
    cli_on(theirs)("import", str(full))
    cli_on(mine)("--campaign", "war", "research", "advanced_submarine", "--dice", "4")
    turn = tmp_path / "turn.jsonl"
    cli_on(mine)("--campaign", "war", "export", "--since", "1", str(turn))
    return {"theirs": theirs, "turn": turn, "tmp": tmp_path}


def _edited(lines: list[str], how: str) -> list[str]:
    rows = [json.loads(line) for line in lines]
    roll = next(i for i, r in enumerate(rows) if r.get("kind") == "DiceRolled")
    if how == "values":
        rows[roll]["event"]["values"] = [9]
    elif how == "hash":
        rows[roll]["hash"] = "f" * 64
    else:
        rows[-1]["hash"] = "f" * 64
    return [json.dumps(r) for r in rows]


@pytest.mark.parametrize("how", ["values", "hash", "last-hash"])
def test_a_file_edited_is_refused_with_exit_1_saying_nothing_was_imported(copies: dict[str, Any], how: str) -> None:
    """A rule's refusal (the chain, the line against its state, the header): exit 1, one line."""
    edited = copies["tmp"] / "edited.jsonl"
    edited.write_text("\n".join(_edited(copies["turn"].read_text().splitlines(), how)) + "\n")
    out = cli_on(copies["theirs"])("import", str(edited), code=1)
    assert len(out.strip().splitlines()) == 1 and out.rstrip().endswith("; nothing was imported"), out


@pytest.mark.parametrize("content", ["", "hello\n", '{"a": 1}\n'], ids=["empty", "text", "json"])
def test_a_file_that_is_no_export_is_bad_input_exit_2(copies: dict[str, Any], content: str) -> None:
    """Not an export at all: bad input, as the guide's exit status says (exit 2)."""
    bad = copies["tmp"] / "bad.jsonl"
    bad.write_text(content)
    out = cli_on(copies["theirs"])("import", str(bad), code=2)
    assert "not a campaign export" in out and len(out.strip().splitlines()) == 1, out


# ----- a message delivered after the game moved on -----


def test_a_message_delivered_after_what_it_asked_was_done_is_given_up(tmp_path: Path) -> None:
    """By file, anna's copy sends its outbox late: battle 1 ended meanwhile (she recorded the
    volley, as told), and Britain owes nothing. "Roll battle 1" is not sent; `notify log` says why."""
    db, run = _war(tmp_path, "auto")
    run("--campaign", "war", "battle", "start", "--zone", "East African Coast")
    run("--campaign", "war", "battle", "auto", "1")
    sent, log = _deliver(db)
    assert sent == []
    assert log == [("superseded", "superseded: nothing it told of is owed any more")]
    assert "superseded: nothing it told of is owed any more" in run("--campaign", "war", "notify", "log")


def test_a_message_still_true_is_delivered_as_written(tmp_path: Path) -> None:
    db, run = _war(tmp_path, "auto")
    run("--campaign", "war", "battle", "start", "--zone", "East African Coast")
    sent, log = _deliver(db)
    assert log == [("delivered", None)]
    assert f"  next (Germany): {FIRE}" in sent[0]["text"].splitlines() and "moved on" not in sent[0]["text"]


def test_a_late_message_of_a_nation_still_waited_for_is_marked_or_given_up_for_a_newer_one(tmp_path: Path) -> None:
    """Britain was told of its opening fire; then of its screens (a newer message); it now owes
    the volley, of which it is told nothing new (it owed before). The first is given up for the
    newer; the newer, the only word of what Britain owes, is sent marked as late."""
    db, run = _war(tmp_path, "manual")
    run("--campaign", "war", "battle", "start", "--zone", "Southern North Sea")
    run("--campaign", "war", "battle", "fire", "1", "--dice", "10,10")
    run("--campaign", "war", "battle", "targets", "1")
    run("--campaign", "war", "battle", "screen", "1")
    assert "Germany records them, Britain's too" in run("--campaign", "war", "pending")
    sent, log = _deliver(db)
    assert log == [("superseded", "superseded by a newer message to this channel"), ("delivered", None)]
    (body,) = sent
    lines = body["text"].splitlines()
    assert lines[1] == (
        "The game has moved on since this was written: `tracker --campaign war pending` says what it waits for now."
    )
    assert "to choose screening escorts" in body["text"]


class _Overtaken:
    def __init__(self, newer: bool) -> None:
        self.newer = newer

    def overtaken(self, row: Any) -> bool:
        return self.newer


@pytest.mark.parametrize(
    ("reasons", "told", "newer", "why"),
    [
        (["owed"], "owed", True, None),
        (["owed"], "past", False, "superseded: nothing it told of is owed any more"),
        (["turn", "owed"], "waiting", True, "superseded by a newer message to this channel"),
        (["owed"], "waiting", False, None),
        # More than where the game stands: never given up as outdated.
        (["seed"], "past", True, None),
        (["owed", "undone"], "past", True, None),
    ],
)
def test_stale_gives_up_only_what_no_longer_holds(reasons: list[str], told: str, newer: bool, why: str | None) -> None:
    row = {"version": 12, "attempts": 0, "payload": json.dumps({"reasons": reasons})}
    assert stale(cast(Any, _Overtaken(newer)), row, None, lambda r: told) == why


def test_t3_a_phase_end_told_of_is_not_owed_once_the_phase_has_passed(tmp_path: Path) -> None:
    """A phase end's key names no phase: a message telling Germany to finish its research read
    as still owed three phases on (its key matched the phase end owed now), so it went out as
    if current instead of marked as moved on."""
    from tracker.service.notify import describe, told_now

    db, run = _war(tmp_path, "auto")
    with Tracker(str(db)) as t:
        campaign = t.load(t.campaign_id("war"))
        payload = describe(campaign, "war", reasons=["owed"])
        assert any(item["kind"] == "turn" for item in payload["pending"])
        assert told_now(payload, campaign, None) == "owed"
    for _ in range(3):
        run("next")
    with Tracker(str(db)) as t:
        later = t.load(t.campaign_id("war"))
        assert (later.round, later.nation) == (payload["round"], payload["nation"]) and later.phase != payload["phase"]
        assert told_now(payload, later, None) == "waiting"


def test_a_campaign_that_cannot_be_loaded_does_not_stop_the_delivery_pass(tmp_path: Path) -> None:
    """Asking whether a late message still holds loads its campaign: a log damaged outside the
    tracker raised out of the worker's pass, and every campaign's messages waited behind it."""
    import sqlite3

    db, run = _war(tmp_path, "auto")
    run("--campaign", "war", "battle", "start", "--zone", "East African Coast")
    assert _told(db)
    with sqlite3.connect(db) as conn:
        # An event edited outside the tracker: the hash chain no longer holds (`verify` says so).
        conn.execute("UPDATE tracker_events SET state = replace(state, 'naval_combat', 'land_combat') WHERE id = 3")
    _, statuses = _deliver(db)
    assert statuses and all(status != "pending" for status, _ in statuses), statuses
