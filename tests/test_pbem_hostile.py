"""PBEM files played as a group would, and edited as a forger would (found by playing by file
with hostile files): an edited file that also forks is refused for its edit, not offered to
`--resolve`; an impossible value a forger re-hashed is one line naming the file's line; the
same action recorded on two copies is said to be the same; a header's `since` is checked
wherever the file is imported. Nothing is recorded on a refusal."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.chain import chain_hash
from tracker.cli.main import cli
from tracker.service.application import Tracker


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == code, result.output
    return result.output


def heads(db: str) -> list[tuple[str, int, str]]:
    with Tracker(db) as t:
        out = []
        for name in t.campaign_names():
            events = t.events(t.campaign_id(name))
            out.append((name, events[-1].originator_version, events[-1].hash))
        return out


def forge(path: Path, seq: int, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit event `seq` of an export (its fields and its stored state alike) and recompute
    every hash from there on, the header's last hash too, as a forger who knows the format would."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    prev = None
    for row in lines[1:]:
        state = json.loads(row["state"])
        if row["seq"] == seq:
            edit(row["event"])
            edit(state)
        if prev is not None:
            row["prev_hash"] = prev
        when = datetime.fromisoformat(row["timestamp"])
        row["hash"] = chain_hash(row["prev_hash"], row["kind"], row["seq"], when, row["event"])
        state.update(prev_hash=row["prev_hash"], hash=row["hash"])
        row["state"] = json.dumps(state)
        prev = row["hash"]
    lines[0]["last_hash"] = prev
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def seq_of(path: Path, kind: str) -> int:
    rows = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return int(next(row["seq"] for row in rows if row["kind"] == kind))


def germanys_turn(tmp_path: Path, fork: bool = False, *imported_as: str) -> tuple[str, str, Path]:
    """Two copies of one manual-dice campaign (Britain's imported, `--as NAME` with
    `imported_as`): Germany's rolls for research and writes the file of its turn; with `fork`,
    Britain's closes the research phase meanwhile, so the copies fork after event 1."""
    germany, britain = str(tmp_path / "germany.db"), str(tmp_path / "britain.db")
    run(germany, "new", "pbem", "--scenario", "north-sea-1914", "--dice", "manual")
    full = tmp_path / "full.jsonl"
    run(germany, "export", str(full))
    run(britain, "import", str(full), *(("--as", *imported_as) if imported_as else ()))
    run(germany, "research", "advanced_submarine", "--dice", "4", "--ref", "rolz#1")
    if fork:
        run(britain, "next")
    turn = tmp_path / "turn.jsonl"
    run(germany, "export", "--since", "1", str(turn))
    return germany, britain, turn


@pytest.fixture
def forked(tmp_path: Path) -> dict[str, Any]:
    """Germany's copy rolled for research while Britain's closed the phase: two copies forked
    after event 1, and Germany's file of its turn."""
    germany, britain, turn = germanys_turn(tmp_path, True)
    return {"germany": germany, "britain": britain, "turn": turn, "tmp": tmp_path}


def test_an_edited_file_that_forks_is_refused_for_its_edit_not_offered_to_resolve(forked: dict[str, Any]) -> None:
    """A re-hashed die was called a fork ("here `research (...dice=[4]...)`, in the file
    `research (...dice=[4]...)`"), as if `--resolve theirs` could take it."""
    turn, britain = forked["turn"], forked["britain"]
    forge(turn, seq_of(turn, "DiceRolled"), lambda e: e.update(values=[10]))
    before = heads(britain)
    out = run(britain, "import", str(turn), code=1)
    assert "values [10] where the referee records [4]" in out, out
    assert "fork at event" not in out and len(out.strip().splitlines()) == 1
    assert "values [10]" in run(britain, "import", str(turn), "--resolve", "theirs", code=1)
    assert heads(britain) == before


def test_a_forked_file_whose_inputs_are_not_an_object_is_one_line(forked: dict[str, Any]) -> None:
    """It was "unexpected AttributeError: 'list' object has no attribute 'items'"."""
    turn, britain = forked["turn"], forked["britain"]
    forge(turn, seq_of(turn, "ActionAsked"), lambda e: e.update(inputs=[]))
    before = heads(britain)
    out = run(britain, "import", str(turn), code=1)
    # Named by the event's shape, before the referee reads it.
    assert f"{turn}: line 2: event 2 (ActionAsked): field 'inputs' must be an object, got a list" in out
    assert "unexpected" not in out
    assert heads(britain) == before


def test_a_continuation_with_a_die_that_is_not_a_number_names_its_line(tmp_path: Path) -> None:
    """A continuation (no fork) whose re-hashed die is a string: it was "unexpected TypeError",
    then "cannot be checked (TypeError: ...)" in the interpreter's words."""
    _, britain, turn = germanys_turn(tmp_path)
    rolled = seq_of(turn, "DiceRolled")
    forge(turn, rolled, lambda e: e.update(values="x"))
    before = heads(britain)
    out = run(britain, "import", str(turn), code=1)
    said = (
        f"{turn}: line {rolled}: event {rolled} (DiceRolled): field 'values' must be a list of integers, got a string"
    )
    assert said in out, out
    assert "TypeError" not in out
    assert "unexpected" not in out and len(out.strip().splitlines()) == 1
    assert heads(britain) == before
    assert "OK" in run(britain, "verify")


def test_the_same_action_on_both_copies_is_said_to_be_the_same(tmp_path: Path) -> None:
    """Both players closed the phase at once: "here `next`, in the file `next`" read as no
    difference at all."""
    germany, britain = str(tmp_path / "germany.db"), str(tmp_path / "britain.db")
    run(germany, "new", "pbem", "--scenario", "north-sea-1914", "--dice", "manual")
    full = tmp_path / "full.jsonl"
    run(germany, "export", str(full))
    run(britain, "import", str(full))
    run(germany, "next", "--seen", "1")
    run(britain, "next", "--seen", "1")
    turn = tmp_path / "turn.jsonl"
    run(germany, "export", "--since", "1", str(turn))
    before = heads(britain)
    out = run(britain, "import", str(turn), code=1)
    assert "here `next`, in the file `next`: the same action, recorded on each copy at its own time (here 20" in out
    assert heads(britain) == before
    # Another `seen` (the words typed are the same) is named as the difference.
    forge(turn, 2, lambda e: e.update(seen=0))
    out = run(britain, "import", str(turn), code=1)
    assert "here `next`, in the file `next` (the same words; the two differ in seen);" in out, out


def a_continuation(tmp_path: Path) -> tuple[str, Path]:
    """A campaign's copy and the file of its events after event 1 (`export --since 1`)."""
    db = str(tmp_path / "germany.db")
    run(db, "new", "pbem", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next")
    turn = tmp_path / "turn.jsonl"
    run(db, "export", "--since", "1", str(turn))
    return db, turn


@pytest.mark.parametrize(
    ("since", "said"),
    [
        ('"5"', "field 'since' must be an event number"),
        ("-3", "field 'since' must be an event number"),
        ("1e400", "field 'since' must be an event number"),
        ("100000000000000000000000000000", "field 'since' must be an event number"),
    ],
)
def test_a_header_since_is_checked_wherever_the_file_goes(tmp_path: Path, since: str, said: str) -> None:
    """On a database without the campaign, a `since` of "5" or -3 was quoted back ("continues
    campaign 'pbem' after event -3 ... import the campaign's full export first", exit 1)."""
    db, turn = a_continuation(tmp_path)
    lines = turn.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    lines[0] = json.dumps(header).replace('"since": 1,', f'"since": {since},') + "\n"
    assert f'"since": {since}' in lines[0]
    turn.write_text("".join(lines))
    for target in (str(tmp_path / "fresh.db"), db):
        out = run(target, "import", str(turn), code=2)
        assert f"{turn}: line 1: {said}" in out, out
    assert not (tmp_path / "fresh.db").exists()


def test_a_since_hash_that_is_not_a_string_is_refused(tmp_path: Path) -> None:
    db, turn = a_continuation(tmp_path)
    lines = turn.read_text().splitlines(keepends=True)
    header = json.loads(lines[0]) | {"since_hash": 5}
    turn.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    assert "line 1: field 'since_hash' must be a JSON string" in run(db, "import", str(turn), code=2)


class Endless(io.RawIOBase):
    """A file that never ends: its first line, then another line for ever (counted)."""

    def __init__(self, first: bytes, again: bytes) -> None:
        self.pending = first
        self.again = again
        self.lines = 1

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.pending:
            self.pending = self.again
            self.lines += 1
            if self.lines > 1000:
                raise AssertionError("the import read on far past the first wrong line")
        n = min(len(buffer), len(self.pending))
        buffer[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n


def test_an_endless_continuation_is_refused_where_it_goes_wrong(tmp_path: Path) -> None:
    """A continuation repeating its first event for ever, under a header declaring 100,000,000
    events, was read to its end (never) before its order was checked; a full export's import
    refuses it at its first wrong line, and so does a continuation now."""
    from tracker.interchange.format import ImportRefused
    from tracker.interchange.transfer import import_campaign

    db = str(tmp_path / "germany.db")
    run(db, "new", "pbem", "--scenario", "north-sea-1914", "--dice", "manual")
    run(db, "next")
    run(db, "next")
    turn = tmp_path / "turn.jsonl"
    run(db, "export", "--since", "1", str(turn))
    lines = turn.read_bytes().splitlines(keepends=True)
    header = json.loads(lines[0]) | {"since": 1, "events": 100_000_000}
    other = str(tmp_path / "britain.db")
    full = tmp_path / "full.jsonl"
    run(db, "export", str(full))
    first_only = full.read_bytes().splitlines(keepends=True)
    created = json.loads(first_only[0]) | {"events": 1, "last_hash": json.loads(first_only[1])["hash"]}
    full.write_bytes(json.dumps(created).encode() + b"\n" + first_only[1])
    run(other, "import", str(full))
    stream = Endless(json.dumps(header).encode() + b"\n", lines[1])
    with Tracker(other) as t, pytest.raises(ImportRefused, match="line 3: event 2 is out of order: expected event 3"):
        import_campaign(t, io.BufferedReader(stream), "turn.jsonl")
    assert stream.lines < 10
    assert heads(other)[0][1] == 1


@pytest.mark.parametrize("seen", [10**20, 2, -1, "5"])
def test_rk4_a_forged_seen_past_the_action_is_refused(tmp_path: Path, seen: Any) -> None:
    """What the player saw is an event before the action; a re-hashed `seen` of 10**20 (or of
    the action's own event) imported and verified, since the referee copies it into the
    action it runs again."""
    _, britain, turn = germanys_turn(tmp_path)
    asked = seq_of(turn, "ActionAsked")
    assert asked == 2
    forge(turn, asked, lambda e: e.update(seen=seen))
    before = heads(britain)
    out = run(britain, "import", str(turn), code=1)
    if isinstance(seen, str):
        # Not a number at all: refused for its type, naming the field.
        assert f"event {asked} (ActionAsked): field 'seen' must be an integer, got a string" in out, out
    else:
        assert f"event {asked} (ActionAsked): seen {seen!r} is not an event before it" in out, out
    assert len(out.strip().splitlines()) == 1
    assert heads(britain) == before


def test_campaign_option_names_the_campaign_an_import_goes_to(tmp_path: Path) -> None:
    """`tracker --campaign mine import turn.jsonl` was taken as the file's own name without a
    word: a player whose copy was imported `--as mine` was told there is no campaign 'pbem'."""
    _, britain, turn = germanys_turn(tmp_path, False, "mine")
    out = run(britain, "--campaign", "mine", "import", str(turn), "--as", "other", code=2)
    assert "--campaign 'mine' and --as 'other' name two campaigns" in out
    out = run(britain, "--campaign", "mine", "import", str(turn))
    assert out.startswith("Fast-forwarded campaign 'mine': events 2-4 appended after event 1")
    assert heads(britain)[0][:2] == ("mine", 4)
