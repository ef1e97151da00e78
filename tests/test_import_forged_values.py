"""`tracker import` of a file holding values of the right JSON type that mean nothing, whose
line, stored state and hash chain all agree (a player edited an export and hashed it again):
no dice where a roll was made, a dice mode the tracker does not know, a negative cost, a
nation or zone the campaign does not have. Each is refused in one line naming the line and the
field (and the rule), exit 1, never in the interpreter's words, and nothing is imported."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.chain import chain_hash
from tracker.cli.main import cli

Lines = list[dict[str, Any]]
FIXTURES = Path(__file__).parent / "fixtures"


def run(db: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == code, result.output
    return result.output


def exported(work: Path, *actions: list[str]) -> Lines:
    db = work / "c.db"
    run(db, "new", "c1", "--scenario", "north-sea-1914", "--dice", "auto")
    for action in actions:
        run(db, *action)
    run(db, "export", str(work / "c.jsonl"))
    return [json.loads(line) for line in (work / "c.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def researched(tmp_path_factory: pytest.TempPathFactory) -> Lines:
    """Its creation, then a research roll asked, paid and rolled (one D10, auto dice; a
    success adds TechnologyAdvanced after these)."""
    lines = exported(tmp_path_factory.mktemp("researched"), ["research", "advanced_submarine"])
    assert [line.get("kind") for line in lines[:5]] == [None, "Created", "ActionAsked", "ResearchPaid", "DiceRolled"]
    return lines


@pytest.fixture(scope="module")
def no_rolls(tmp_path_factory: pytest.TempPathFactory) -> Lines:
    """Its creation, then the next phase: not a die rolled."""
    lines = exported(tmp_path_factory.mktemp("no_rolls"), ["next"])
    assert [line.get("kind") for line in lines] == [None, "Created", "ActionAsked", "PhaseAdvanced"]
    return lines


def rehashed(lines: Lines, edit: Callable[[Lines], None] = lambda lines: None) -> Lines:
    """A copy of the export edited by `edit` (on each line's `event`), each line's stored state
    made to say what its event says, and every hash worked out again as the format says."""
    lines = json.loads(json.dumps(lines))
    edit(lines)
    prev = "0" * 64
    for line in lines[1:]:
        state = json.loads(line["state"])
        state.update(line["event"])
        line["prev_hash"] = state["prev_hash"] = prev
        when = datetime.fromisoformat(line["timestamp"])
        line["hash"] = state["hash"] = prev = chain_hash(prev, line["kind"], line["seq"], when, line["event"])
        line["state"] = json.dumps(state, separators=(",", ":"), ensure_ascii=False)
    lines[0].update(last_hash=prev, events=len(lines) - 1)
    return lines


def setting(index: int, **fields: Any) -> Callable[[Lines], None]:
    return lambda lines: lines[index]["event"].update(fields)


def unasked(lines: Lines) -> None:
    """Without its ActionAsked lines: the actions as a tracker recorded them before it recorded
    what was asked, which the referee applies as recorded, running nothing again."""
    lines[:] = [line for line in lines if line.get("kind") != "ActionAsked"]
    for seq, line in enumerate(lines[1:], 1):
        line["seq"] = seq


def refused(tmp_path: Path, lines: Lines) -> str:
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    db = tmp_path / "into.db"
    out = run(db, "import", str(path), code=1)
    assert len(out.strip().splitlines()) == 1, out
    assert not any(word in out for word in ("ValueError", "KeyError", "TypeError", "Traceback", "unexpected")), out
    # Nothing imported: no database left behind, or one without a campaign.
    assert not db.exists() or "No campaigns" in run(db, "campaigns")
    said = out.removeprefix(f"Error: {path}: ").strip()
    assert said.endswith("; nothing was imported"), said
    return said.removesuffix("; nothing was imported")


def imports(tmp_path: Path, lines: Lines) -> str:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "same.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return run(tmp_path / "into.db", "import", str(path))


def test_the_helpers_own_rehashed_files_import(tmp_path: Path, researched: Lines, no_rolls: Lines) -> None:
    """The files below are refused for their edit alone: unedited (and without what was asked),
    they import."""
    assert imports(tmp_path / "a", rehashed(researched)).startswith("Imported campaign 'c1'")
    assert imports(tmp_path / "b", rehashed(no_rolls)).startswith("Imported campaign 'c1'")
    assert imports(tmp_path / "c", rehashed(researched, unasked)).startswith("Imported campaign 'c1'")


# ----- a roll's dice, which the referee's replay hands the action it runs again -----


@pytest.mark.parametrize(
    ("values", "faces", "recorded"),
    [
        ([], 10, "no D10"),  # ValueError: not enough values to unpack (expected 1, got 0)
        ([4, 5], 10, "2 D10"),  # ValueError: too many values to unpack (expected 1)
        ([6], 6, "1 D6"),  # imported: a D6 where the ruleset rolls a D10
    ],
)
def test_d3_a_roll_recording_other_dice_than_the_action_rolls_is_refused(
    tmp_path: Path, researched: Lines, values: list[int], faces: int, recorded: str
) -> None:
    said = refused(tmp_path, rehashed(researched, setting(4, values=values, faces=faces)))
    assert said == (
        "line 5: the action asked at event 2 (research): event 4 (DiceRolled, roll 1) records "
        f"{recorded} where Germany research roll for Advanced Submarine rolls 1 D10 (D1, D3)"
    )


# ----- values whose meaning the tracker knows whatever the log holds (the shape check) -----


@pytest.mark.parametrize(
    ("index", "fields", "said"),
    [
        (
            1,
            {"dice_mode": "x"},
            "line 2: event 1 (Created): field 'dice_mode' must be 'auto' or 'manual' (D4), got 'x'",
        ),
        (
            1,
            {"dice_scheme": "rot13"},
            "line 2: event 1 (Created): field 'dice_scheme' must be 'hmac-sha256/v1' (D5), got 'rot13'",
        ),
        (
            1,
            {"seed_commitment": "x"},
            "line 2: event 1 (Created): field 'seed_commitment' must be 64 lowercase hexadecimal digits "
            "(a SHA-256 commitment, D5), got 'x'",
        ),
    ],
)
def test_a_created_event_with_a_dice_mode_or_scheme_the_tracker_does_not_know_is_refused(
    tmp_path: Path, no_rolls: Lines, index: int, fields: dict[str, Any], said: str
) -> None:
    """A campaign that never rolled imported with dice mode 'x', and verified."""
    assert refused(tmp_path, rehashed(no_rolls, setting(index, **fields))) == said


@pytest.mark.parametrize(
    ("index", "fields", "said"),
    [
        (3, {"cost": -10}, "line 4: event 3 (ResearchPaid): field 'cost' must be 0 or more, got -10"),
        (
            4,
            {"source": "dice"},
            "line 5: event 4 (DiceRolled): field 'source' must be 'auto' or 'manual' (D4), got 'dice'",
        ),
        (4, {"faces": 0, "values": []}, "line 5: event 4 (DiceRolled): field 'faces' must be 1 or more (D1), got 0"),
        (
            4,
            {"values": [0]},
            "line 5: event 4 (DiceRolled): field 'values' must be a list of dice of 1 or more (D1), got [0]",
        ),
        (
            4,
            {"roll": 0},
            "line 5: event 4 (DiceRolled): field 'roll' must be 1 or more (D3: rolls are numbered from 1), got 0",
        ),
        (
            4,
            {"success_when": "never"},
            "line 5: event 4 (DiceRolled): field 'success_when' must be 'at_most' or 'at_least' or 'total' (D2), "
            "got 'never'",
        ),
    ],
)
def test_an_event_value_of_its_type_that_means_nothing_is_refused_naming_line_and_field(
    tmp_path: Path, researched: Lines, index: int, fields: dict[str, Any], said: str
) -> None:
    assert refused(tmp_path, rehashed(researched, setting(index, **fields))) == said


# ----- events the referee applies as recorded: an action recorded without what was asked -----


@pytest.mark.parametrize(
    ("index", "fields", "said"),
    [
        # KeyError: 'Narnia'
        (
            2,
            {"nation": "Narnia"},
            "line 3: event 2 (ResearchPaid): field 'nation' names 'Narnia', which is no nation of the campaign",
        ),
        # Each imported.
        (
            2,
            {"technology": "warp_drive"},
            "line 3: event 2 (ResearchPaid): field 'technology' names 'warp_drive', which is no technology of the "
            "campaign",
        ),
        (
            3,
            {"roller": "Narnia"},
            "line 4: event 3 (DiceRolled): field 'roller' names 'Narnia', which is no nation of the campaign",
        ),
        (2, {"cost": -10}, "line 3: event 2 (ResearchPaid): field 'cost' must be 0 or more, got -10"),
    ],
)
def test_a_name_the_campaign_lacks_in_an_action_recorded_without_its_inputs_is_refused(
    tmp_path: Path, researched: Lines, index: int, fields: dict[str, Any], said: str
) -> None:
    def edit(lines: Lines) -> None:
        unasked(lines)
        setting(index, **fields)(lines)

    assert refused(tmp_path, rehashed(researched, edit)) == said


def test_a_zone_the_map_lacks_in_an_action_recorded_without_its_inputs_is_refused(tmp_path: Path) -> None:
    """A log of an earlier tracker (no action's inputs recorded) whose units moved through a
    zone the map does not have: applied as recorded, it imported."""
    lines = [
        json.loads(line) for line in gzip.decompress((FIXTURES / "demo-one-module.jsonl.gz").read_bytes()).splitlines()
    ]
    assert "ActionAsked" not in {line.get("kind") for line in lines}
    assert imports(tmp_path / "a", rehashed(lines)).startswith("Imported campaign 'demo'")
    index = next(i for i, line in enumerate(lines) if line.get("kind") == "UnitsMoved")
    path = lines[index]["event"]["path"]
    said = refused(tmp_path, rehashed(lines, setting(index, path=[path[0], "Atlantis"])))
    assert said == (
        f"line {index + 1}: event {index} (UnitsMoved): field 'path' names 'Atlantis', which is no zone of the campaign"
    )


def test_pl1_an_action_asked_for_a_nation_the_campaign_lacks_is_refused(tmp_path: Path, researched: Lines) -> None:
    """The referee copies the nation acted for into the action it runs again: it imported."""
    said = refused(tmp_path, rehashed(researched, setting(2, nation="Narnia")))
    assert said == "line 3: event 2 (ActionAsked): nation 'Narnia' is no nation of the campaign (PL1)"
