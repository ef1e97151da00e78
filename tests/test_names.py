"""Names as players type them: any case, nation codes, closest matches for unknown names, one
separator for unit lists, and shell completion from the campaign."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.errors import InputError
from tracker.cli.main import cli
from tracker.cli.params import CLIENT_TERMINAL, fit_error
from tracker.service.application import Tracker
from tracker.service.names import Names, event_kind, fold, split_units


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    run(path, "new", "autumn", "--scenario", "north-sea-1914", "--dice", "manual")
    return path


def run(db: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def names(db: str) -> Names:
    with Tracker(db) as t:
        return Names(t.load(t.campaign_id(None)))


def test_nations_match_in_any_case_and_by_code(names: Names) -> None:
    for typed in ("Britain", "britain", "BRITAIN", "gb", "GB"):
        assert names.nation(typed) == "Britain"
    assert names.nation("austria hungary") == "Austria-Hungary"
    assert names.nation("ah") == "Austria-Hungary"


def test_zones_unit_types_and_technologies_match_in_any_case(names: Names) -> None:
    assert names.zone("dover strait") == "Dover Strait"
    assert names.zone("  Dover   STRAIT ") == "Dover Strait"
    assert names.sea_zone("heligoland bight") == "Heligoland Bight"
    assert names.unit_type("aircraft carrier") == "aircraft_carrier"
    assert names.unit_type("DD") == "destroyer"
    assert names.technology("Advanced ASW") == "advanced_asw"
    assert names.technology("advanced-submarine") == "advanced_submarine"
    assert event_kind("dicerolled") == "DiceRolled"


def test_an_unknown_name_gets_the_closest_matches_and_the_list(names: Names) -> None:
    with pytest.raises(InputError) as e:
        names.zone("Dover Straits")
    assert "did you mean 'Dover Strait'?" in str(e.value)
    assert "known: Bay of Biscay," in str(e.value)
    with pytest.raises(InputError) as e:
        names.nation("Italy")
    assert str(e.value) == "unknown nation 'Italy' (known: Germany, Britain, Austria-Hungary, France)"
    with pytest.raises(InputError) as e:
        names.technology("advanced sub")
    assert "did you mean 'advanced_submarine'?" in str(e.value)


def test_a_land_territory_is_no_sea_zone(names: Names) -> None:
    with pytest.raises(InputError, match="^England is a land territory, not a sea zone$"):
        names.sea("england")
    with pytest.raises(InputError, match="unknown sea zone 'Atlantis'"):
        names.sea("Atlantis")


def test_unit_ids_match_in_any_case_and_unknown_ones_go_on_as_typed(names: Names) -> None:
    assert names.units("de-ss1, DE-SS2 gb-dd1") == ["DE-SS1", "DE-SS2", "GB-DD1"]
    assert names.units(["de-ss1,de-ss2", "DE-SS3"]) == ["DE-SS1", "DE-SS2", "DE-SS3"]
    assert names.units("") == []
    assert names.units(None) is None
    assert names.unit("xx-ss9") == "xx-ss9"


def test_unit_lists_split_on_commas_and_spaces_alike() -> None:
    assert split_units("A,B") == split_units("A B") == split_units(" A , B ") == split_units(("A", "B")) == ["A", "B"]
    assert fold("Aircraft_Carrier") == fold("aircraft-carrier") == "aircraft carrier"


def test_log_nation_filter_is_exact_whatever_the_spelling(db: str) -> None:
    run(db, "next")
    run(db, "next")
    run(db, "move", "DE-SS3", "DE-SS4", "--path", "Southern North Sea,Dover Strait")
    run(db, "intercept", "search", "1", "--units", "GB-DD3", "--dice", "9")
    every = json.loads(run(db, "log", "--json"))
    britain = json.loads(run(db, "log", "--nation", "Britain", "--json"))
    assert 0 < len(britain) < len(every)
    for spelling in ("britain", "GB", "gb"):
        assert json.loads(run(db, "log", "--nation", spelling, "--json")) == britain
    assert json.loads(run(db, "log", "--zone", "southern north sea", "--json")) == json.loads(
        run(db, "log", "--zone", "Southern North Sea", "--json")
    )
    assert json.loads(run(db, "log", "--kind", "dicerolled", "--json"))[0]["kind"] == "DiceRolled"


def test_log_with_an_unknown_nation_exits_2_naming_the_known_ones(db: str) -> None:
    out = run(db, "log", "--nation", "Italy", code=2)
    assert out == "Error: unknown nation 'Italy' (known: Germany, Britain, Austria-Hungary, France)\n"
    out = run(db, "log", "--zone", "North Sea", code=2)
    assert "unknown zone 'North Sea' (did you mean" in out


def test_an_unknown_zone_of_a_whole_war_map_names_the_likely_ones_and_the_command_listing_all(tmp_path: Path) -> None:
    db = str(tmp_path / "war.db")
    run(db, "new", "war", "--scenario", "great-war-1914")
    run(db, "next", "--to", "combat_movement")
    # A part of two names suggests both; the 148 names are not listed in one line.
    out = run(db, "move", "DE-CA8", "--to", "red sea", code=2)
    assert out == (
        "Error: unknown zone 'red sea' (did you mean 'Northern Red Sea' or 'Southern Red Sea'? "
        "148 known: `tracker map` lists them)\n"
    )
    # F4: a known zone further than the units can go: the refusal ends with the move along
    # the first steps of a shortest way there, which the referee takes.
    out = run(db, "move", "DE-SS1", "--to", "western approaches", code=1)
    assert out == (
        "Error: F4: Western Approaches is not adjacent to Heligoland Bight; a shortest route there is 4 steps, "
        "more than the 2 these units have left this turn; "
        "its first 2: tracker move DE-SS1 --path 'Southern North Sea,Dover Strait'\n"
    )
    # At a terminal the command is whole on a line of its own, to copy.
    token = CLIENT_TERMINAL.set({"columns": 80, "tty": True})
    try:
        shown = fit_error(out.removeprefix("Error: ").rstrip("\n")).splitlines()
    finally:
        CLIENT_TERMINAL.reset(token)
    assert shown[-1] == "    tracker move DE-SS1 --path 'Southern North Sea,Dover Strait'"
    assert all(len(line) <= 80 for line in shown)
    # With no move left, no command is offered.
    run(db, "move", "DE-SS3", "--path", "Skagerrak,Norwegian Leads")
    out = run(db, "move", "DE-SS3", "--to", "dogger bank", code=1)
    assert out == (
        "Error: F4: Dogger Bank is not adjacent to Norwegian Leads; "
        "a shortest route there is 3 steps, and these units have no move left this turn\n"
    )
    # The command offered is a move the referee takes.
    assert "Germany moves DE-SS1: Heligoland Bight -> Southern North Sea" in run(
        db, "move", "DE-SS1", "--path", "Southern North Sea,Dover Strait"
    )


@pytest.mark.parametrize(
    "units",
    [["DE-SS3,DE-SS4"], ["DE-SS3", "DE-SS4"], ["de-ss3 de-ss4"], ["de-ss3,", "de-ss4"]],
    ids=["commas", "arguments", "one quoted argument", "mixed"],
)
def test_move_takes_units_with_commas_or_spaces_and_zones_in_any_case(db: str, units: list[str]) -> None:
    run(db, "next")
    run(db, "next")
    out = run(db, "move", *units, "--path", "southern north sea,DOVER STRAIT")
    assert "Germany moves DE-SS3, DE-SS4: Heligoland Bight -> Southern North Sea" in out


def test_options_take_unit_lists_with_spaces_and_nations_by_code(db: str) -> None:
    run(db, "next")
    run(db, "next")
    run(db, "move", "DE-SS3", "DE-SS4", "--path", "Southern North Sea,Dover Strait")
    out = run(db, "intercept", "search", "1", "--units", "gb-dd3 GB-DD4", "--dice", "7,8")
    assert "GB-DD3" in out and "GB-DD4" in out
    run(db, "intercept", "continue", "1")
    run(db, "next", "--to", "COLLECT_RESOURCES", "--nation", "de")
    run(db, "convoy", "pass", "--by", "gb")  # CV1: Britain's U-boats could attack German trade
    out = run(db, "next", "--to", "COLLECT_RESOURCES", "--nation", "gb")
    assert "Britain: collect resources" in out


def test_research_takes_a_technology_in_plain_words(db: str) -> None:
    out = run(db, "research", "Advanced Submarine", "--dice", "3")
    assert "advanced_submarine" in out or "Advanced Submarine" in out
    assert "unknown technology 'sonar'" in run(db, "research", "sonar", "--dice", "3", code=2)


def _complete(db: str, line: str) -> list[str]:
    """What bash completion offers for the last word of `line` (click's protocol)."""
    words = shlex.split(line) + ([""] if line.endswith(" ") else [])
    env = {
        "_TRACKER_COMPLETE": "bash_complete",
        "COMP_WORDS": shlex.join(["tracker", "--db", db, *words]),
        "COMP_CWORD": str(len(words) + 2),
    }
    result = CliRunner().invoke(cli, [], prog_name="tracker", env=env, catch_exceptions=False)
    return [line.split(",", 1)[1] for line in result.output.splitlines() if "," in line]


def test_shell_completion_offers_units_zones_nations_technologies_and_battles(db: str) -> None:
    assert _complete(db, "move DE-SS") == [f"DE-SS{i}" for i in range(1, 6)]
    # A name of several words goes on bash's line escaped, as one word (tests/test_bash_completion.py).
    assert _complete(db, "move de-ss1 --to sou") == ["Southern\\ North\\ Sea"]  # F4: one step away
    assert _complete(db, "move de-ss1 --path 'Southern North Sea,Dov'") == ["Southern\\ North\\ Sea,Dover\\ Strait"]
    assert _complete(db, "log --nation Au") == ["Austria-Hungary"]
    assert _complete(db, "research adv") == ["advanced_submarine", "advanced_asw"]
    assert _complete(db, "ntr place Eng") == ["English\\ Channel"]  # sea zones only
    assert "GB-DD1" in _complete(db, "convoy search 1 --units GB-DD")
    assert _complete(db, "battle fire ") == []  # no battle open
    run(db, "next")
    run(db, "next")
    run(db, "move", "DE-SS3", "DE-SS4", "--path", "Southern North Sea,Dover Strait")
    assert _complete(db, "intercept search ") == ["1"]


def test_completion_never_creates_a_database(tmp_path: Path) -> None:
    missing = str(tmp_path / "none.db")
    assert _complete(missing, "move DE-SS") == []
    assert not Path(missing).exists()


def test_a_mistyped_unit_id_is_refused_with_the_closest_matches(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    out = run(db, "move", "DE-D1", "--to", "Central North Sea", code=2)
    assert out == "Error: unknown unit 'DE-D1' (did you mean 'DE-DD1' or 'DE-TR1' or 'DE-SS1'? see `tracker state`)\n"
    # Nothing alike: no guess, just where to look.
    out = run(db, "move", "XX", "--to", "Central North Sea", code=2)
    assert out == "Error: unknown unit 'XX' (see `tracker state`)\n"
