"""Slips in a scenario file that `scenario check` must report and `tracker new` refuse, found by
a user typing in a board of their own: names the commands cannot type back (zones alike but for
case, commas, codes with spaces, control characters), a unit in a neutral's land at the start
(F8), problems pointed at the wrong line, a file that is no table where one is due, a map too
large for the spring layout, and a refused `tracker new` leaving a database behind."""

from __future__ import annotations

import copy
import json
import re
import shlex
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from domain.errors import DataFileError, InputError
from domain.ruleset import load_ruleset
from domain.scenario import GameMap, scenario_from_dict, scenario_text
from domain.scenario_layout import MAX_LAYOUT_ZONES, computed_positions
from domain.scenario_slips import fold_name
from tests.test_scenario_tools import edited, line_with
from tracker.cli.main import cli
from tracker.service.names import fold

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide.md"
SVG = "{http://www.w3.org/2000/svg}"

# A clean board of three nations, Sweden entering the war in round 2 (F8).
BOARD = """\
[scenario]
name = "ourbaltic"
title = "Our Baltic board"
ruleset = "twtea-3e"
dice = "auto"
turn_order = ["Sweden", "Germany", "Russia"]

[sides]
"Central Powers" = ["Germany"]
"Entente" = ["Russia", "Sweden"]

[nations.Germany]
code = "DE"
resources = 30
income = 8
ntr = { "Kiel Bay" = 2, "Southern Baltic" = 1 }

[nations.Russia]
code = "RU"
resources = 25
income = 6
ntr = { "Gulf of Finland" = 2, "Gulf of Riga" = 1 }

[nations.Sweden]
code = "SE"
resources = 10
income = 4
ntr = { "Gulf of Bothnia" = 2 }
entry_round = 2

[map.sea."Kiel Bay"]
adjacent = ["Southern Baltic", "Kattegat", "Schleswig"]

[map.sea."Kattegat"]
adjacent = ["Southern Baltic", "Scania"]

[map.sea."Southern Baltic"]
adjacent = ["Central Baltic", "Prussia", "Scania"]

[map.sea."Central Baltic"]
adjacent = ["Gulf of Riga", "Gulf of Finland", "Northern Baltic", "Gotland"]

[map.sea."Gulf of Riga"]
adjacent = ["Courland"]

[map.sea."Gulf of Finland"]
adjacent = ["Northern Baltic", "Finland"]

[map.sea."Northern Baltic"]
adjacent = ["Gulf of Bothnia", "Svealand"]

[map.sea."Gulf of Bothnia"]
adjacent = ["Finland", "Svealand"]

[map.land."Schleswig"]
owner = "Germany"

[map.land."Prussia"]
owner = "Germany"
adjacent = ["Courland"]

[map.land."Courland"]
owner = "Russia"

[map.land."Finland"]
owner = "Russia"

[map.land."Scania"]
owner = "Sweden"
adjacent = ["Svealand"]

[map.land."Svealand"]
owner = "Sweden"

[map.land."Gotland"]
owner = "Sweden"

[[units]]
nation = "Germany"
type = "submarine"
at = "Kiel Bay"
count = 2

[[units]]
nation = "Germany"
type = "fighter"
at = "Prussia"

[[units]]
nation = "Russia"
type = "destroyer"
at = "Gulf of Finland"
count = 2

[[units]]
nation = "Sweden"
type = "cruiser"
at = "Northern Baltic"

[[units]]
nation = "Sweden"
type = "fighter"
at = "Svealand"
"""
SUMMARY = "(8 sea zones, 7 land territories, 3 nations, 5 unit groups)"
RULES = load_ruleset("twtea-3e")[0]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def written(tmp_path: Path, text: str, name: str = "board.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def checked(path: Path, code: int) -> list[str]:
    """`scenario check`'s lines, with its exit status checked."""
    result = invoke("scenario", "check", str(path))
    assert result.exit_code == code, result.output
    return result.output.strip().splitlines()


def refused_by_new(tmp_path: Path, path: Path) -> str:
    """`tracker new` refuses the file (exit 2) with one line, and leaves no database behind."""
    db = tmp_path / "campaign.db"
    result = invoke("--db", str(db), "new", "c1", "--scenario", str(path))
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    assert not db.exists()
    # The first problem, and the check that lists every one (said apart from the problem).
    hint = f" (`tracker scenario check {shlex.quote(str(path))}` lists every problem)"
    assert result.output.strip().endswith(hint), result.output
    said = result.output.strip().removesuffix(hint)
    # With the line `scenario check` gives the problem's key on, where it finds one there:
    # returned without it, as the problem reads in the file.
    at = re.match(rf"Error: {re.escape(str(path))}:(\d+): ([^:]+): ", said)
    if at is None:
        return said
    line, key = at.groups()
    found = invoke("scenario", "check", str(path)).output.splitlines()
    assert any(f.startswith(f"{path}:{line}: error: {key}: ") for f in found), (said, found)
    return said[: at.start(1) - 1] + said[at.end(1) :]


def test_the_board_is_clean_and_starts_a_campaign(tmp_path: Path) -> None:
    path = written(tmp_path, BOARD)
    assert checked(path, 0) == [f"{path}: 0 errors, 0 warnings {SUMMARY}"]
    result = invoke("--db", str(tmp_path / "c.db"), "new", "c1", "--scenario", str(path))
    assert result.exit_code == 0, result.output


# ----- 1. zone names the commands could not tell apart, or type at all -----


def with_zone(table: str) -> Callable[[str], str]:
    """The board with one more zone table, written before Schleswig's."""
    return lambda t: edited(t, '[map.land."Schleswig"]', f'{table}\n\n[map.land."Schleswig"]')


APART = "differ only in case, spaces, '-' or '_': commands that name a zone could not tell them apart"


@pytest.mark.parametrize(
    ("broken", "where", "key", "message", "also"),
    [
        pytest.param(
            with_zone('[map.sea."kattegat"]\nadjacent = ["Kiel Bay"]'),
            '[map.sea."kattegat"]',
            "map.sea.kattegat",
            f"zones 'Kattegat' and 'kattegat' {APART}",
            '[map.sea."Kattegat"]',
            id="sea zones alike but for case",
        ),
        pytest.param(
            with_zone('[map.land."GOTLAND"]\nowner = "Sweden"\nadjacent = ["Central Baltic"]'),
            '[map.land."Gotland"]',
            "map.land.Gotland",
            f"zones 'GOTLAND' and 'Gotland' {APART}",
            '[map.land."GOTLAND"]',
            id="land territories alike but for case",
        ),
        pytest.param(
            with_zone('[map.sea."Kattegat "]\nadjacent = ["Kiel Bay"]'),
            '[map.sea."Kattegat "]',
            "map.sea.Kattegat ",
            "'Kattegat ': a zone name may not begin or end with spaces (commands trim what is typed)",
            None,
            id="spaces around a name",
        ),
        pytest.param(
            lambda t: t.replace('"Gotland"', '"Got\\u0007land"'),
            '[map.land."Got',
            "map.land.Got\\x07land",
            "'Got\\x07land': a zone name may not contain control characters such as '\\x07'",
            None,
            id="a control character",
        ),
        pytest.param(
            with_zone('[map.sea.""]\nadjacent = ["Kiel Bay"]'),
            '[map.sea.""]',
            "map.sea.",
            "a zone needs a name: '' is empty",
            None,
            id="an empty name",
        ),
    ],
)
def test_a_zone_name_commands_cannot_type_back_is_an_error_at_its_table(
    tmp_path: Path, broken: Callable[[str], str], where: str, key: str, message: str, also: str | None
) -> None:
    text = broken(BOARD)
    path = written(tmp_path, text)
    if also is not None:
        message += f" (also at line {line_with(text, also)})"
    lines = checked(path, 1)
    assert lines == [
        f"{path}:{line_with(text, where)}: error: {key}: {message}",
        f"{path}: 1 error, 0 warnings ({8 + where.startswith('[map.sea')} sea zones, "
        f"{7 + ('GOTLAND' in text)} land territories, 3 nations, 5 unit groups)",
    ]
    assert refused_by_new(tmp_path, path).startswith(f"Error: {path}: {key}: ")


def test_new_names_the_zones_alike_in_one_line_and_records_nothing(tmp_path: Path) -> None:
    text = edited(BOARD, '[map.land."Schleswig"]', '[map.sea."kattegat"]\n\n[map.land."Schleswig"]')
    first = line_with(text, '[map.sea."Kattegat"]')
    assert refused_by_new(tmp_path, written(tmp_path, text)) == (
        f"Error: {tmp_path / 'board.toml'}: map.sea.kattegat: zones 'Kattegat' and 'kattegat' differ only "
        f"in case, spaces, '-' or '_': commands that name a zone could not tell them apart (also at line {first})"
    )


def test_names_are_alike_as_the_commands_compare_them() -> None:
    # The scenario check folds names exactly as the commands resolve them.
    for name in ("Kattegat", " kattegat ", "North  Sea", "north-sea", "NORTH_SEA", "Gulf of\tRiga", "Öresund"):
        assert fold_name(name) == fold(name), name


# ----- 2. a [scenario] that is no table -----


@pytest.mark.parametrize(("value", "got"), [('"ourbaltic"', "a string"), ('["ourbaltic"]', "a list")])
def test_new_refuses_a_scenario_key_that_is_no_table_with_the_checks_message(
    tmp_path: Path, value: str, got: str
) -> None:
    meta = BOARD[: BOARD.index("[sides]")]
    path = written(tmp_path, edited(BOARD, meta, f"scenario = {value}\n\n"))
    assert refused_by_new(tmp_path, path) == f"Error: {path}: scenario: expected a table, got {got}"
    assert checked(path, 1)[0] == f"{path}:1: error: scenario: expected a table, got {got}"


# ----- 3. a map of 500 zones and more without coordinates -----


def chain_of_seas(count: int) -> str:
    """The board with `count` more sea zones in a chain off the Kattegat, none with x and y."""
    extra = [
        f'[map.sea."Zone {i}"]\nadjacent = ["{"Kattegat" if i == 1 else f"Zone {i - 1}"}"]\n'
        for i in range(1, count + 1)
    ]
    return edited(BOARD, '[map.land."Schleswig"]', "\n".join(extra) + '\n[map.land."Schleswig"]')


def test_map_of_more_than_499_zones_is_laid_out_without_scipy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # networkx's spring layout imports scipy from 500 zones on; scipy is no dependency.
    monkeypatch.setitem(sys.modules, "scipy", None)
    path = written(tmp_path, chain_of_seas(500))
    result = invoke("scenario", "map", str(path), "-o", str(tmp_path / "map.svg"))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Wrote {tmp_path / 'map.svg'}: 515 zones, laid out from the adjacency")
    boxes = [g for g in ET.parse(tmp_path / "map.svg").iter(f"{SVG}g") if "data-zone" in g.attrib]
    assert len(boxes) == 515


def test_map_too_large_to_lay_out_is_refused_asking_for_coordinates(tmp_path: Path) -> None:
    path = written(tmp_path, chain_of_seas(MAX_LAYOUT_ZONES))
    result = invoke("scenario", "map", str(path), "-o", str(tmp_path / "map.svg"))
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"Error: {path}: {MAX_LAYOUT_ZONES + 15} zones without coordinates, and a layout is computed for at "
        f"most {MAX_LAYOUT_ZONES}: give every zone x and y\n"
    )
    assert not (tmp_path / "map.svg").exists()


def test_layout_refuses_before_any_work_on_a_map_too_large() -> None:
    zones = {f"Z{i}": frozenset() for i in range(MAX_LAYOUT_ZONES + 1)}
    with pytest.raises(InputError, match=f"^big.toml: {MAX_LAYOUT_ZONES + 1} zones without coordinates"):
        computed_positions(GameMap(sea=frozenset(zones), land={}, adjacency=zones), "big.toml")


# ----- 4. a refused `tracker new` leaves no file behind -----


@pytest.mark.parametrize(
    "scenario",
    ["baltic-1916", "bad.toml", "rules.toml"],
    ids=["unknown scenario", "a file with errors", "a ruleset the file names that is unknown"],
)
def test_a_refused_new_leaves_no_database_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: str
) -> None:
    monkeypatch.chdir(tmp_path)
    written(tmp_path, edited(BOARD, 'code = "SE"', 'code = "S E"'), "bad.toml")
    written(tmp_path, edited(BOARD, 'ruleset = "twtea-3e"', 'ruleset = "twtea-9e"'), "rules.toml")
    result = invoke("new", "c1", "--scenario", scenario)
    assert result.exit_code == 2, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml", "rules.toml"]


def test_a_refused_new_keeps_the_database_that_was_there(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    assert invoke("--db", str(db), "new", "first", "--scenario", "north-sea-1914").exit_code == 0
    bad = written(tmp_path, edited(BOARD, 'type = "cruiser"', 'type = "zeppelin"'))
    assert invoke("--db", str(db), "new", "second", "--scenario", str(bad)).exit_code == 2
    assert invoke("--db", str(db), "new", "first", "--scenario", "north-sea-1914").exit_code == 2
    result = invoke("--db", str(db), "campaigns")
    assert result.output == "first\n"


# ----- 5. nation codes unit IDs cannot carry -----


@pytest.mark.parametrize("code", ["S E-1", "S,E", "SE1", "", "SVERIGE1X"])
def test_a_nation_code_unit_ids_cannot_carry_is_an_error_giving_the_form(tmp_path: Path, code: str) -> None:
    written_code = f'code = "{code}"'
    text = edited(BOARD, 'code = "SE"', written_code)
    path = written(tmp_path, text)
    line = line_with(text, written_code)
    assert checked(path, 1)[0] == (
        f"{path}:{line}: error: nations.Sweden.code: {code!r}: a nation code is 1 "
        "to 8 letters (A-Z), as DE or GB: it begins the IDs of the nation's units (DE-SS1), which commands "
        "split at spaces and commas"
    )
    assert refused_by_new(tmp_path, path).startswith(f"Error: {path}: nations.Sweden.code: {code!r}: ")


def test_codes_alike_but_for_case_are_an_error_at_the_later_nation(tmp_path: Path) -> None:
    text = edited(BOARD, 'code = "SE"', 'code = "de"')
    path = written(tmp_path, text)
    later, first = line_with(text, 'code = "de"'), line_with(text, 'code = "DE"')
    assert checked(path, 1)[0] == (
        f"{path}:{later}: error: nations.Sweden.code: codes 'DE' and 'de' differ only in case, spaces, '-' or "
        f"'_': unit IDs typed in commands could not tell their units apart (also at line {first})"
    )


def test_a_code_two_nations_share_is_reported_at_the_later_one(tmp_path: Path) -> None:
    text = edited(BOARD, 'code = "SE"', 'code = "DE"')
    path = written(tmp_path, text)
    later, first = line_with(text, 'code = "DE"', "[nations.Sweden]"), line_with(text, 'code = "DE"')
    assert checked(path, 1)[0] == (
        f"{path}:{later}: error: nations.Sweden.code: two nations share a code ('DE': Germany, Sweden) "
        f"(also at line {first})"
    )


# ----- 6. a zone name with a comma -----


def test_a_zone_name_with_a_comma_is_an_error(tmp_path: Path) -> None:
    text = BOARD.replace('"Kattegat"', '"Kattegat, North"')
    path = written(tmp_path, text)
    line = line_with(text, '[map.sea."Kattegat, North"]')
    assert checked(path, 1)[0] == (
        f"{path}:{line}: error: map.sea.Kattegat, North: "
        "'Kattegat, North': a zone name may not contain a comma (`move --path` separates zones with commas)"
    )


def test_a_nation_name_with_a_comma_or_spaces_around_is_an_error(tmp_path: Path) -> None:
    text = BOARD.replace("Sweden", "Sweden, Norway").replace("[nations.Sweden, Norway]", '[nations."Sweden, Norway"]')
    path = written(tmp_path, text)
    line = line_with(text, '[nations."Sweden, Norway"]')
    assert checked(path, 1)[0] == (
        f"{path}:{line}: error: nations.Sweden, Norway: 'Sweden, "
        "Norway': a nation name may not contain a comma (lists of nations in commands are split at commas)"
    )


# ----- 7. F8: a belligerent's unit in a neutral's territory at the start -----


def test_f8_a_unit_of_a_nation_at_war_cannot_start_in_a_neutrals_territory(tmp_path: Path) -> None:
    text = BOARD + '\n[[units]]\nnation = "Russia"\ntype = "fighter"\nat = "Scania"\n'
    path = written(tmp_path, text)
    line = line_with(text, 'at = "Scania"')
    assert checked(path, 1)[0] == (
        f"{path}:{line}: error: units[5].at: Russia (at war from the start) cannot "
        "start in Scania, Sweden's territory: Sweden is neutral until round 2 and no unit of a belligerent "
        "may be there (F8)"
    )
    assert refused_by_new(tmp_path, path) == (
        f"Error: {path}: units[5].at: Russia (at war from the start) cannot start in Scania, Sweden's territory: "
        "Sweden is neutral until round 2 and no unit of a belligerent may be there (F8)"
    )


def test_f8_a_neutral_starts_in_its_own_land_not_in_one_neutral_longer(
    tmp_path: Path,
) -> None:
    # Sweden's fighter in Svealand (its own) is on the board already; Russia entering in round
    # 3 is neutral before it, and starts nowhere but on its own land (`test_scenario_check_agrees`);
    # Sweden may not start in Russia's land, neutral a round longer than Sweden.
    text = edited(BOARD, 'code = "RU"\n', 'code = "RU"\nentry_round = 3\n')
    # (The Entente has nobody at war in round 1 now: a warning, no error.)
    assert checked(written(tmp_path, text), 0)[-1].endswith(
        ": 0 errors, 1 warning (8 sea zones, 7 land territories, 3 nations, 5 unit groups)"
    )
    text += '\n[[units]]\nnation = "Sweden"\ntype = "fighter"\nat = "Finland"\n'
    path = written(tmp_path, text)
    line = line_with(text, 'at = "Finland"')
    assert checked(path, 1)[0] == (
        f"{path}:{line}: error: units[5].at: Sweden (at war from round 2) cannot "
        "start in Finland, Russia's territory: Russia is neutral until round 3 and no unit of a belligerent "
        "may be there (F8)"
    )


def test_a_recorded_scenario_is_read_without_the_new_campaign_checks() -> None:
    # A campaign recorded before these checks must stay readable: they hold only for new ones.
    data = tomllib.loads(BOARD.replace("Kattegat", "Kattegat, North").replace('code = "SE"', 'code = "S E"'))
    assert scenario_from_dict(copy.deepcopy(data), "recorded scenario", RULES).nations["Sweden"].code == "S E"
    with pytest.raises(DataFileError) as refused:
        scenario_from_dict(data, "my.toml", RULES, new_campaign=True)
    assert refused.value.key == "map.sea.Kattegat, North"


# ----- 8. problems at their own lines -----


def test_f7_air_units_at_sea_without_carriers_are_reported_at_their_own_group(tmp_path: Path) -> None:
    text = BOARD + '\n[[units]]\nnation = "Russia"\ntype = "bomber"\nat = "Gulf of Riga"\n'
    path = written(tmp_path, text)
    line = line_with(text, 'at = "Gulf of Riga"')
    assert checked(path, 1)[0] == (
        f"{path}:{line}: error: units[5].at: 1 Russia air unit at sea in Gulf of Riga "
        "but carriers of its side there hold 0 (F7)"
    )


def test_a_name_both_sea_and_land_is_reported_at_the_later_table_naming_the_other(tmp_path: Path) -> None:
    text = edited(BOARD, '[map.land."Schleswig"]', '[map.sea."Gotland"]\n\n[map.land."Schleswig"]')
    path = written(tmp_path, text)
    later, first = line_with(text, '[map.land."Gotland"]'), line_with(text, '[map.sea."Gotland"]')
    assert checked(path, 1)[0] == (
        f"{path}:{later}: error: map.land.Gotland: 'Gotland' is both a sea zone and a land territory "
        f"(also at line {first})"
    )


# ----- 9. control characters in the title and names -----


@pytest.mark.parametrize("title", ["Our \\u001b[31mRED\\u001b[0m board", "Our board\\nsecond line"])
def test_a_title_with_control_characters_is_an_error_and_never_drawn(tmp_path: Path, title: str) -> None:
    text = edited(BOARD, 'title = "Our Baltic board"', f'title = "{title}"')
    path = written(tmp_path, text)
    bad = "'\\x1b'" if "u001b" in title else "'\\n'"
    assert checked(path, 1)[0] == (
        f"{path}:3: error: scenario.title: the title may not contain control characters such as {bad} "
        "(it is shown on one line)"
    )
    result = invoke("scenario", "map", str(path), "-o", str(tmp_path / "map.svg"))
    assert result.exit_code == 2 and result.output.startswith(f"Error: {path}:3: scenario.title: ")
    assert not (tmp_path / "map.svg").exists()


@pytest.mark.parametrize("key, line", [("name", 'name = "ourbaltic"'), ("title", 'title = "Our Baltic board"')])
def test_an_empty_scenario_name_or_title_is_an_error(tmp_path: Path, key: str, line: str) -> None:
    text = edited(BOARD, line, f'{key} = "  "')
    path = written(tmp_path, text)
    at = line_with(text, f'{key} = "  "')
    assert checked(path, 1) == [
        f"{path}:{at}: error: scenario.{key}: the {key} is empty (it names the board in logs and reports)",
        f"{path}: 1 error, 0 warnings (8 sea zones, 7 land territories, 3 nations, 5 unit groups)",
    ]


def test_a_side_name_with_a_control_character_is_an_error(tmp_path: Path) -> None:
    text = edited(BOARD, '"Entente" = ', '"Ent\\tente" = ')
    path = written(tmp_path, text)
    assert checked(path, 1)[0] == (
        f"{path}:10: error: sides.Ent\\tente: 'Ent\\tente': a side name may not contain control characters "
        "such as '\\t'"
    )


# ----- 10. the summary counts what the file writes -----


def test_the_summary_counts_unit_groups_with_errors_too(tmp_path: Path) -> None:
    text = edited(BOARD, 'type = "cruiser"', 'type = "zeppelin"')
    lines = checked(written(tmp_path, text), 1)
    assert lines[-1].endswith(f": 1 error, 0 warnings {SUMMARY}")


def test_the_guides_example_output_is_what_check_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    section = GUIDE.read_text().split("## Enter your own board", 1)[1]
    example = section.split("with two slips:\n\n```\n", 1)[1].split("```", 1)[0]
    text = scenario_text("north-sea-1914")[0]
    text = edited(text, 'adjacent = ["Heligoland Bight"]\n', 'adjacent = ["Heligoland Bite"]\n')
    text = edited(text, 'type = "cruiser"\nat = "Heligoland Bight"', 'type = "zeppelin"\nat = "Heligoland Bight"')
    written(tmp_path, text, "my-north-sea.toml")
    result = invoke("scenario", "check", "my-north-sea.toml")
    assert result.exit_code == 1
    assert result.output == example


# ----- 11. the name's form, empty sides, a byte-order mark, a file that is no text -----


def test_a_scenario_name_not_of_the_templates_form_is_a_warning(tmp_path: Path) -> None:
    text = edited(BOARD, 'name = "ourbaltic"', 'name = "our baltic!"')
    path = written(tmp_path, text)
    assert checked(path, 0)[0] == (
        f"{path}:2: warning: scenario.name: 'our baltic!' is not of letters, digits, - and _ (at most 64, a "
        "letter or digit first), the form `tracker scenario new` gives"
    )


def test_f5_a_side_with_no_nation_is_a_warning(tmp_path: Path) -> None:
    text = edited(BOARD, '"Entente" = ["Russia", "Sweden"]\n', '"Entente" = ["Russia", "Sweden"]\n"Nobody" = []\n')
    path = written(tmp_path, text)
    assert checked(path, 0)[0] == f"{path}:11: warning: sides.Nobody: no nation is on this side (F5)"


def test_a_byte_order_mark_before_the_toml_is_let_pass(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + BOARD.encode())
    assert checked(path, 0) == [f"{path}: 0 errors, 0 warnings {SUMMARY}"]
    result = invoke("--db", str(tmp_path / "c.db"), "new", "c1", "--scenario", str(path))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        # The line of the first byte that is not UTF-8 (a Latin-1 "å" on line 30 is found there).
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe",
            "not a UTF-8 text file (line 1: byte 0x89 is not UTF-8): save it as UTF-8",
            1,
        ),
        (b"[scenario]\n# Sk\xe5ne\n", "not a UTF-8 text file (line 2: byte 0xe5 is not UTF-8): save it as UTF-8", 2),
        ("\ufeff[scenario]\n".encode("utf-16-le"), "not a UTF-8 text file (it is UTF-16: save it as UTF-8)", None),
    ],
    ids=["binary", "Latin-1", "UTF-16"],
)
def test_check_json_of_a_file_that_is_no_text_is_a_json_error_exit_2(
    tmp_path: Path, content: bytes, message: str, line: int | None
) -> None:
    path = tmp_path / "board.toml"
    path.write_bytes(content)
    result = invoke("scenario", "check", str(path), "--json")
    assert result.exit_code == 2
    # The line the message names, as a finding of a file that reads gives it.
    error = {"level": "error", "file": str(path), "line": line, "key": "", "message": message}
    assert json.loads(result.stdout) == {"file": str(path), "ok": False, "errors": [error], "warnings": []}
    assert result.stderr == f"Error: {path}: {message}\n"
    plain = invoke("scenario", "check", str(path))
    assert (plain.exit_code, plain.output) == (2, f"Error: {path}: {message}\n")


def test_check_json_of_a_missing_file_is_a_json_error_exit_2(tmp_path: Path) -> None:
    result = invoke("scenario", "check", str(tmp_path / "none.toml"), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["errors"][0]["message"].startswith("unknown scenario ")


def test_check_help_states_each_exit_status() -> None:
    text = " ".join(invoke("scenario", "check", "--help").output.split())
    assert (
        "Exit status 0 when there is no error (warnings alone pass), 1 when the file has errors, 2 when it "
        "cannot be read (no such file, not UTF-8 text) or --ruleset names none; with --json, a JSON document "
        "in each case." in text
    )
