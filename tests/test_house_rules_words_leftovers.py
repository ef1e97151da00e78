"""House rulesets and the tracker's words, what their audits left:

- `scenario check --ruleset FILE --json` put a ruleset file's problem against the scenario file,
  with no line and no key: the finding is the ruleset file's now, at the line and key path the
  text output names (`house.toml:80: units.cruiser.attack: ...`).
- A unit type named "... (damaged)" loaded, but `odds --attacker "NATION:TYPE (damaged)=N"`
  reads such a name as a damaged capital ship of another type: a new campaign's ruleset is
  refused saying so.
- A collection's summary said "3 lost to convoy attacks" of NTR, read as resources where a
  house ruleset makes each NTR worth 2 (`ntr_value`): it says "3 NTR" now.
- Units bought and not placed were listed by their type IDs ("1 aircraft_carrier") in `state`
  and the reports, and technologies by theirs in `state` and `explain`'s changes: in words now.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support import perform_until
from tracker.cli.main import cli
from tracker.service.application import Tracker

BUILTIN = resources.files("domain.data").joinpath("rulesets", "twtea-3e.toml").read_text(encoding="utf-8")
NORTH_SEA = resources.files("domain.data").joinpath("scenarios", "north-sea-1914.toml").read_text(encoding="utf-8")
CNS = "Central North Sea"


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def line_of(text: str, written: str) -> int:
    """The line of a text that `written` begins on (counted here, not by the tracker)."""
    return text[: text.index(written)].count("\n") + 1


def broken_ruleset(tmp_path: Path) -> tuple[Path, int]:
    house = tmp_path / "house.toml"
    text = BUILTIN.replace('abbr = "CA"\nattack = 5', 'abbr = "CA"\nattack = "five"', 1)
    house.write_text(text, encoding="utf-8")
    return house, line_of(text, 'attack = "five"')


def test_check_json_gives_a_broken_ruleset_its_own_file_line_and_key(tmp_path: Path) -> None:
    house, line = broken_ruleset(tmp_path)
    board = tmp_path / "board.toml"
    board.write_text(NORTH_SEA, encoding="utf-8")
    said = run("scenario", "check", str(board), "--ruleset", str(house), code=2)
    assert said == f"Error: {house}:{line}: units.cruiser.attack: expected an integer, got a string\n"
    out = run("scenario", "check", str(board), "--ruleset", str(house), "--json", code=2)
    report = json.loads(out[: out.index("\nError: ")])
    assert report["file"] == str(board) and report["ok"] is False and report["warnings"] == []
    assert report["errors"] == [
        {
            "level": "error",
            "file": str(house),
            "line": line,
            "key": "units.cruiser.attack",
            "message": "expected an integer, got a string",
        }
    ]
    # Broken before any key is read: the ruleset file still, at TOML's line or at none.
    house.write_text('[ruleset]\nname = "x"\n[units\n', encoding="utf-8")
    out = run("scenario", "check", str(board), "--ruleset", str(house), "--json", code=2)
    (error,) = json.loads(out[: out.index("\nError: ")])["errors"]
    assert (error["file"], error["line"], error["key"]) == (str(house), 3, "units")
    house.write_bytes(b"\xff\xfe[ruleset]\n")
    out = run("scenario", "check", str(board), "--ruleset", str(house), "--json", code=2)
    (error,) = json.loads(out[: out.index("\nError: ")])["errors"]
    assert error == {"level": "error", "file": str(house), "line": None, "key": "", "message": "not a UTF-8 text file"}
    # The scenario file, read from stdin, is still the report's own.
    result = CliRunner().invoke(cli, ["scenario", "check", "-", "--ruleset", str(house), "--json"], input=NORTH_SEA)
    assert result.exit_code == 2 and json.loads(result.output[: result.output.index("\nError: ")])["file"] == "<stdin>"


def test_a_broken_ruleset_the_scenario_names_is_found_at_the_scenarios_line(tmp_path: Path) -> None:
    """Named by the scenario, the ruleset is the scenario's line that names it: where an editor
    checking the scenario shows it, the ruleset's own line and key in its words."""
    house, line = broken_ruleset(tmp_path)
    board = tmp_path / "board.toml"
    text = NORTH_SEA.replace('ruleset = "twtea-3e"', 'ruleset = "house.toml"', 1)
    board.write_text(text, encoding="utf-8")
    at = line_of(text, 'ruleset = "house.toml"')
    said = f"{house}:{line}: units.cruiser.attack: expected an integer, got a string"
    out = run("scenario", "check", str(board), code=1)
    assert (
        f"{board}:{at}: error: scenario.ruleset: the ruleset cannot be read, so nothing else was checked: {said}" in out
    )
    (error,) = json.loads(run("scenario", "check", str(board), "--json", code=1))["errors"]
    assert (error["file"], error["line"], error["key"]) == (str(board), at, "scenario.ruleset")
    assert error["message"].endswith(said)


@pytest.mark.parametrize("name", ["cruiser (damaged)", "Sea Plane (Damaged)", "sea_plane  (damaged)"])
def test_a_unit_type_named_as_a_damaged_one_is_refused_for_a_new_campaign(tmp_path: Path, name: str) -> None:
    house = tmp_path / "house.toml"
    text = BUILTIN + (
        f'\n[units.{json.dumps(name)}]\ncategory = "air"\nclass = "air"\nabbr = "SP"\n'
        "attack = 2\ndefense = 2\nmove = 4\nhits = 1\ncost = 6\n"
    )
    house.write_text(text, encoding="utf-8")
    db = tmp_path / "c.db"
    out = run("--db", str(db), "new", "c", "--scenario", "north-sea-1914", "--ruleset", str(house), code=2)
    assert out == (
        f"Error: {house}:{line_of(text, '[units.' + json.dumps(name))}: units.{name}: {name!r}: a unit type name "
        "may not end in '(damaged)' (`odds --attacker NATION:TYPE (damaged)=N` names a damaged capital ship of "
        "TYPE so, F3, NC5)\n"
    )
    assert not db.exists()


def test_a_collection_says_the_ntr_it_lost_as_ntr(tmp_path: Path) -> None:
    """CV6: NTR worth 2 each (a house `ntr_value`): 3 NTR destroyed are 6 resources less, so
    the count is said as NTR, as the reports' column "NTR lost to convoys" says it."""
    house = tmp_path / "house.toml"
    house.write_text(BUILTIN.replace("ntr_value = 1", "ntr_value = 2", 1), encoding="utf-8")
    db = str(tmp_path / "c.db")
    run("--db", db, "new", "c", "--scenario", "north-sea-1914", "--dice", "manual", "--ruleset", str(house))
    with Tracker(db) as t:
        perform_until(t, t.campaign_id(None), "Britain", "collect_resources")
    run("--db", db, "convoy", "declare", "--by", "Germany", "--zone", CNS, "--subs", "DE-SS1,DE-SS2")
    run("--db", db, "convoy", "roll", "1", "--dice", "1,1")  # merchant defence sinks nothing
    run("--db", db, "convoy", "search", "1", "--units", "")
    assert "3 of Britain's NTR destroyed" in run("--db", db, "convoy", "roll", "1", "--dice", "7,4")
    # 8 NTR left of 11, each worth 2.
    said = "Britain collects 26 (16 from NTR, 10 other income, 3 NTR lost to convoy attacks); balance 56"
    assert said in run("--db", db, "next")
    assert said in run("--db", db, "log")


def test_units_bought_and_technologies_are_shown_in_words(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run("--db", db, "new", "c", "--scenario", "north-sea-1914")
    run("--db", db, "next", "--to", "purchase")
    run("--db", db, "buy", "transport_plane", "2")
    run("--db", db, "buy", "submarine", "2")
    state = run("--db", db, "state")
    assert "Bought by Germany, not yet placed (PU2): 2 submarines, 2 transport planes" in state
    # The scenario's head starts (TE2), as the log's summaries name them.
    assert "Advanced ASW 1" in state and "advanced_asw" not in state
    for form in ("md", "bbcode", "discord"):
        out = run("--db", db, "report", "--turn", "1", "--format", form)
        assert "not yet placed: 2 submarines, 2 transport planes (PU2)" in out, form
    html = tmp_path / "r.html"
    run("--db", db, "report", "--turn", "1", "--format", "html", "-o", str(html))
    assert "not yet placed: 2 submarines, 2 transport planes <" in html.read_text(encoding="utf-8")


def test_explain_says_a_technology_changed_in_words(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run("--db", db, "new", "c", "--scenario", "north-sea-1914", "--dice", "manual")
    run("--db", db, "research", "advanced_submarine", "--dice", "10")
    (advanced,) = [r for r in json.loads(run("--db", db, "log", "--json")) if r["kind"] == "TechnologyAdvanced"]
    out = run("--db", db, "explain", str(advanced["seq"]))
    assert "Germany Advanced Submarine: level 1 -> 2" in out and "advanced_submarine" not in out
