"""`tracker import` of a file whose fields are of the wrong JSON type, missing or one too many,
in the header, on an event's line and inside an event whose line, stored state and hash chain
all agree (a file written by a script, or edited and hashed again): each refused in one line
naming the line and the field, never with the interpreter's own words, and nothing imported."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli


def run(db: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A campaign of four or five events (its creation, a research roll asked, paid, rolled
    and perhaps won)."""
    work = tmp_path_factory.mktemp("shapes")
    db = work / "c.db"
    run(db, "new", "c1", "--scenario", "north-sea-1914", "--dice", "auto")
    run(db, "research", "advanced_submarine")
    run(db, "export", str(work / "c.jsonl"))
    lines = [json.loads(line) for line in (work / "c.jsonl").read_text().splitlines()]
    # A roll that succeeds adds TechnologyAdvanced after these: the auto dice decide.
    assert [line.get("kind") for line in lines[:5]] == [None, "Created", "ActionAsked", "ResearchPaid", "DiceRolled"]
    return lines


def refused(tmp_path: Path, lines: list[dict[str, Any]], code: int = 1) -> str:
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    db = tmp_path / "into.db"
    out = run(db, "import", str(path), code=code)
    assert len(out.strip().splitlines()) == 1, out
    assert not any(word in out for word in ("TypeError", "KeyError", "NoneType", "object has", "unexpected"))
    # Nothing imported: no database left behind, or one without a campaign.
    assert not db.exists() or "No campaigns" in run(db, "campaigns")
    said = out.removeprefix(f"Error: {path}: ").strip()
    if code == 1:
        # A refusal says so, whatever it refused (bad input, exit 2, did nothing at all).
        assert said.endswith("; nothing was imported"), said
    return said.removesuffix("; nothing was imported")


def rehashed(lines: list[dict[str, Any]], index: int, field: str, value: Any) -> list[dict[str, Any]]:
    """The export with event line `index`'s `field` set to `value` (or removed, for ...) in both
    its event and its stored state, every hash after it worked out again as the format says."""
    lines = json.loads(json.dumps(lines))
    for where in (lines[index]["event"], state := json.loads(lines[index]["state"])):
        if value is ...:
            where.pop(field, None)
        else:
            where[field] = value
    lines[index]["state"] = json.dumps(state, separators=(",", ":"), ensure_ascii=False)
    prev = "0" * 64
    for line in lines[1:]:
        content = {"prev": prev, "kind": line["kind"], "version": line["seq"], "timestamp": line["timestamp"]}
        content["content"] = line["event"]
        digest = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        state = json.loads(line["state"])
        line["prev_hash"] = state["prev_hash"] = prev
        line["hash"] = state["hash"] = prev = hashlib.sha256(digest).hexdigest()
        line["state"] = json.dumps(state, separators=(",", ":"), ensure_ascii=False)
    lines[0]["last_hash"] = prev
    return lines


def test_the_rehashed_export_itself_imports(tmp_path: Path, export: list[dict[str, Any]]) -> None:
    path = tmp_path / "same.jsonl"
    lines = rehashed(export, 2, "seen", 1)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run(tmp_path / "into.db", "import", str(path)).startswith(f"Imported campaign 'c1': {len(lines) - 1} events")


# ----- the header and the event lines: the format's own fields -----


@pytest.mark.parametrize(
    ("index", "field", "value", "said"),
    [
        (0, "note", "hello", "line 1: field 'note' is not a field of a header in this format"),
        (0, "exported_at", 20250301, "line 1: field 'exported_at' must be a JSON string"),
        (0, "exported_by", None, "line 1: field 'exported_by' must be a JSON string"),
        (2, "note", {"a": 1}, "line 3: field 'note' is not a field of an event's line in this format"),
        (4, "comment", None, "line 5: field 'comment' is not a field of an event's line in this format"),
    ],
)
def test_a_field_the_format_does_not_have_or_of_another_type_is_refused(
    tmp_path: Path, export: list[dict[str, Any]], index: int, field: str, value: Any, said: str
) -> None:
    lines = json.loads(json.dumps(export))
    lines[index][field] = value
    assert refused(tmp_path, lines, code=2) == said


# ----- inside an event whose line, state and hash agree -----


@pytest.mark.parametrize(
    ("index", "field", "value", "said"),
    [
        # Each was refused with the interpreter's words, or imported.
        (1, "name", ..., "line 2: event 1 (Created): field 'name' is missing"),  # AttributeError
        (1, "scenario", None, "line 2: event 1 (Created): field 'scenario' must be an object, got null"),
        (1, "created_by", 7, "line 2: event 1 (Created): field 'created_by' must be a string or null, got an integer"),
        (2, "extra", None, "line 3: event 2 (ActionAsked): field 'extra' is not a field of the ActionAsked event"),
        (2, "player", ["anna"], "line 3: event 2 (ActionAsked): field 'player' must be a string or null, got a list"),
        (2, "inputs", ..., "line 3: event 2 (ActionAsked): field 'inputs' is missing"),
        (3, "cost", "10", "line 4: event 3 (ResearchPaid): field 'cost' must be an integer, got a string"),
        (4, "epoch", None, "line 5: event 4 (DiceRolled): field 'epoch' must be an integer, got null"),  # TypeError
        (4, "faces", True, "line 5: event 4 (DiceRolled): field 'faces' must be an integer, got true"),
        (4, "rule", 1, "line 5: event 4 (DiceRolled): field 'rule' must be a string, got an integer"),
        (4, "values", None, "line 5: event 4 (DiceRolled): field 'values' must be a list of integers, got null"),
        (4, "values", ["3"], "line 5: event 4 (DiceRolled): field 'values' must be a list of integers, got a list"),
        (
            4,
            "modifiers",
            {},
            "line 5: event 4 (DiceRolled): field 'modifiers' must be a list of objects, got an object",
        ),
    ],
)
def test_an_event_field_of_the_wrong_type_missing_or_more_is_refused_naming_line_and_field(
    tmp_path: Path, export: list[dict[str, Any]], index: int, field: str, value: Any, said: str
) -> None:
    assert refused(tmp_path, rehashed(export, index, field, value)) == said
