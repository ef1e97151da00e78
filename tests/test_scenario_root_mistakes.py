"""`scenario check` reports one slip once, at its own line: a table the file lacks at line 1
with its key, and a nation written wrong ([[nations.X]], a name spelt two ways, a misspelt key,
keys below a sub-table's header) without the errors that only follow from it at every unit,
owner and turn that names the nation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.errors import DataFileError
from domain.ruleset import load_ruleset
from domain.scenario import scenario_from_dict, scenario_text
from tracker.cli.main import cli

NORTH_SEA = scenario_text("north-sea-1914")[0]


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def edited(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def line_with(text: str, fragment: str) -> int:
    return text.count("\n", 0, text.index(fragment)) + 1


def check(tmp_path: Path, text: str) -> tuple[list[dict[str, Any]], str]:
    """The errors of `scenario check --json`, and the text output."""
    path = tmp_path / "board.toml"
    path.write_text(text)
    data = json.loads(run("scenario", "check", str(path), "--json", code=1))
    return list(data["errors"]), run("scenario", "check", str(path), code=1)


def without(text: str, start: str, end: str) -> str:
    """The text without what lies from `start` up to (not including) `end`."""
    return text[: text.index(start)] + text[text.index(end) :]


# ----- 1. a table the file lacks -----

TABLES = {
    "scenario": ("[scenario]", "[sides]"),
    "sides": ("[sides]", "[nations.Germany]"),
    "nations": ("[nations.Germany]", "# Sea zones"),
    "map": ("# Sea zones", "# Starting forces"),
    "units": ("[[units]]", "\n\n\n\n"),
}


@pytest.mark.parametrize("table", list(TABLES))
def test_a_missing_top_level_table_is_one_error_at_line_1_with_its_key(tmp_path: Path, table: str) -> None:
    start, end = TABLES[table]
    text = without(NORTH_SEA + "\n\n\n\n", start, end)
    errors, out = check(tmp_path, text)
    header = "[[units]]" if table == "units" else f"[{table}]"
    message = f"missing required key: the file has no {header} table"
    assert errors[0] == {
        "level": "error",
        "file": str(tmp_path / "board.toml"),
        "line": 1,
        "key": table,
        "message": message,
    }
    assert out.startswith(f"{tmp_path / 'board.toml'}:1: error: {table}: {message}\n")
    if table != "scenario":
        # Without [scenario] the turn order is not read, nothing else is amiss; with it, the
        # others are the one error (no unit, owner or side reported for each nation).
        assert len(errors) == 1, errors


def test_an_empty_file_is_at_line_1(tmp_path: Path) -> None:
    path = tmp_path / "board.toml"
    path.write_text("# to do\n")
    (error,) = json.loads(run("scenario", "check", str(path), "--json", code=1))["errors"]
    assert error["line"] == 1


# ----- 2. one mistake in a nation's table, reported once -----

ROOT_MISTAKES = [
    pytest.param(
        lambda t: edited(t, "[nations.Germany]", "[[nations.Germany]]"),
        "nations.Germany",
        "expected a table, got a list of tables: write the header [nations.Germany], with single brackets",
        "[[nations.Germany]]",
        id="[[nations.X]] for [nations.X]",
    ),
    pytest.param(
        lambda t: edited(t, '[map.sea."Skagerrak"]', '[[map.sea."Skagerrak"]]'),
        "map.sea.Skagerrak",
        "expected a table, got a list of tables: write the header [map.sea.Skagerrak], with single brackets",
        '[[map.sea."Skagerrak"]]',
        id="[[map.sea.X]] for [map.sea.X]",
    ),
    pytest.param(
        lambda t: edited(t, "[nations.Germany]", "[nations.Germny]"),
        "sides.Central Powers",
        "nation 'Germany' has no [nations.Germany] table (did you mean 'Germny'?)",
        '"Central Powers"',
        id="F5 the nation's table spelt unlike [sides]",
    ),
    pytest.param(
        lambda t: edited(t, '"Central Powers" = ["Germany", ', '"Central Powers" = ["Germny", '),
        "sides.Central Powers",
        "nation 'Germny' has no [nations.Germny] table (did you mean 'Germany'?)",
        '"Central Powers"',
        id="F5 [sides] spelling a nation unlike its table",
    ),
    pytest.param(
        lambda t: edited(t, "[nations.Germany]", "[nation.Germany]"),
        "nation",
        "unknown key (did you mean 'nations'?)",
        "[nation.Germany]",
        id="a misspelt [nations] header",
    ),
    pytest.param(
        lambda t: edited(t, 'code = "DE"', 'cod = "DE"'),
        "nations.Germany.cod",
        "unknown key (did you mean 'code'?)",
        'cod = "DE"',
        id="a misspelt required key",
    ),
    pytest.param(
        lambda t: edited(
            edited(t, "tech = { advanced_submarine = 1 }\n", ""),
            '[nations.Germany]\ncode = "DE"\n',
            '[nations.Germany]\n[nations.Germany.tech]\nadvanced_submarine = 1\ncode = "DE"\n',
        ),
        "nations.Germany.tech.code",
        "code, resources, income, ntr: the nation's own keys, written below the header [nations.Germany.tech]",
        'code = "DE"',
        id="TE2 the nation's keys below its [tech] header",
    ),
]


@pytest.mark.parametrize(("broken", "key", "message", "where"), ROOT_MISTAKES)
def test_one_mistake_in_a_nation_or_zone_is_one_error_at_its_line(
    tmp_path: Path, broken: Any, key: str, message: str, where: str
) -> None:
    text = broken(NORTH_SEA)
    errors, out = check(tmp_path, text)
    assert [(e["key"], e["line"]) for e in errors] == [(key, line_with(text, where))], out
    assert errors[0]["message"].startswith(message)
    # No warning either: a nation or zone read all the same has its units, ports and borders.
    assert ": 1 error, 0 warnings (11 sea zones, 6 land territories, " in out.splitlines()[-1]


def test_a_nation_spelt_two_ways_is_still_refused_by_the_loader() -> None:
    """The references the check lets pass are not a way round the refusal: the root stops a
    new campaign, first."""
    text = edited(NORTH_SEA, "[nations.Germany]", "[nations.Germny]")
    import tomllib

    with pytest.raises(DataFileError) as e:
        scenario_from_dict(tomllib.loads(text), "board.toml", load_ruleset("twtea-3e")[0], new_campaign=True)
    assert (e.value.key, e.value.problem) == (
        "sides.Central Powers",
        "nation 'Germany' has no [nations.Germany] table (did you mean 'Germny'?)",
    )


def test_a_nation_whose_entry_is_no_table_is_not_reported_at_each_unit(tmp_path: Path) -> None:
    text = edited(
        NORTH_SEA, '[nations.Germany]\ncode = "DE"', '[nations]\nGermany = "DE"\n\n[nations.Prussia]\ncode = "PR"'
    )
    errors, _ = check(tmp_path, text)
    assert [(e["key"], e["message"]) for e in errors] == [
        ("scenario.turn_order", "must list every nation exactly once (missing: Prussia)"),
        ("nations.Germany", "expected a table, got a string"),
        ("nations.Prussia", "nation is on no side (see [sides])"),
    ]


def test_new_names_a_misspelt_key_as_the_check_does_not_the_key_it_stands_for(tmp_path: Path) -> None:
    """The check reports `cod` for the missing `code`; `tracker new` refuses with the same error
    (it said `code` missing, which the check never lists)."""
    path = tmp_path / "board.toml"
    text = edited(NORTH_SEA, 'code = "DE"', 'cod = "DE"')
    path.write_text(text)
    out = run("--db", str(tmp_path / "c.db"), "new", "x", "--scenario", str(path), code=2)
    assert f"{path}:{line_with(text, 'cod = ')}: nations.Germany.cod: unknown key (did you mean 'code'?)" in out


# ----- slips found transcribing a board -----


def test_a_misspelt_adjacent_key_warns_of_no_zone_it_cut_off(tmp_path: Path) -> None:
    """The border left unread made the zone unreachable and its port inland (PU2): warnings
    that only followed from the error."""
    text = edited(
        NORTH_SEA,
        'adjacent = ["Southern North Sea", "Northern Germany"]',
        'adjacents = ["Southern North Sea", "Northern Germany"]',
    )
    path = tmp_path / "board.toml"
    path.write_text(text)
    data = json.loads(run("scenario", "check", str(path), "--json", code=1))
    assert [e["key"] for e in data["errors"]] == ["map.sea.Heligoland Bight.adjacents"]
    assert data["warnings"] == []


def test_a_header_name_with_spaces_unquoted_is_shown_quoted(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, '[map.sea."Central North Sea"]', "[map.sea.Central North Sea]  # the middle")
    (error,), _ = check(tmp_path, text)
    assert error["line"] == line_with(text, "[map.sea.Central North Sea]")
    assert error["message"].endswith('a name with spaces is written in quotes, as [map.sea."Central North Sea"])')


def test_units_written_as_one_table_twice_are_said_to_need_double_brackets(tmp_path: Path) -> None:
    text = NORTH_SEA.replace("[[units]]", "[units]")
    (error,), _ = check(tmp_path, text)
    second = text.index("[units]", text.index("[units]") + 1)
    assert error["key"] == "units" and error["line"] == text.count("\n", 0, second) + 1
    assert error["message"].endswith("each group of starting forces is a [[units]] table, with double brackets)")


def test_a_zone_named_like_a_nations_key_stays_in_its_ntr_table() -> None:
    """Only a key the sub-table cannot hold is lifted back out: a board may call a sea zone
    "income" (F6 NTR there), and a campaign recorded from it must stay readable."""
    import tomllib

    text = NORTH_SEA.replace('"Skagerrak"', '"income"').replace("Skagerrak", "income")
    text = edited(text, "income = 12\n", "")  # Germany's own income left to its default
    text = edited(
        text,
        'ntr = { "Heligoland Bight" = 2, "income" = 1 }',
        '[nations.Germany.ntr]\n"Heligoland Bight" = 2\nincome = 1',
    )
    scenario = scenario_from_dict(tomllib.loads(text), "board.toml", load_ruleset("twtea-3e")[0])
    assert scenario.nations["Germany"].ntr == {"Heligoland Bight": 2, "income": 1}
