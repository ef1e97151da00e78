"""`scenario check` reports one slip in a zone's table once, at its own line: a zone's name
misspelt in its own table header but right everywhere else, or its table written under a
misspelt header (`[map.see."X"]`), is one error naming the lines that refer to the zone, not
an unknown zone at each adjacency, NTR (F6) and starting force that names it. Seeded in copies
of the shipped scenarios."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.scenario import scenario_text
from tracker.cli.main import cli

NORTH_SEA = scenario_text("north-sea-1914")[0]
GREAT_WAR = scenario_text("great-war-1914")[0]
BOARDS = {"north-sea-1914": NORTH_SEA, "great-war-1914": GREAT_WAR}


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def edited(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def header_of(text: str, kind: str, zone: str) -> str:
    """The zone's table header as the board writes it, its comment left out."""
    return next(line for line in text.splitlines() if line.startswith(f'[map.{kind}."{zone}"]')).split("  #")[0]


def line_with(text: str, fragment: str) -> int:
    return text.count("\n", 0, text.index(fragment)) + 1


def naming(text: str, zone: str, header: int) -> list[int]:
    """The lines other than the table's own header that name the zone, comments aside."""
    return [
        n
        for n, line in enumerate(text.splitlines(), 1)
        if f'"{zone}"' in line and n != header and not line.lstrip().startswith("#")
    ]


def errors_of(tmp_path: Path, text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """The errors and warnings of `scenario check --json`, and the text output."""
    path = tmp_path / "board.toml"
    path.write_text(text)
    data = json.loads(run("scenario", "check", str(path), "--json", code=1))
    return list(data["errors"]), list(data["warnings"]), run("scenario", "check", str(path), code=1)


# ----- a zone's name misspelt in its own table -----

NAME_SLIPS = [
    pytest.param("north-sea-1914", "sea", "Heligoland Bight", "Heligoland Bihgt", id="north-sea sea zone"),
    pytest.param("north-sea-1914", "land", "England", "Englnd", id="north-sea land territory"),
    pytest.param("great-war-1914", "sea", "Western Approaches", "Westren Approaches", id="great-war sea zone"),
    pytest.param("great-war-1914", "sea", "Heligoland Bight", "heligoland bight", id="great-war zone in lower case"),
]


@pytest.mark.parametrize(("board", "kind", "zone", "slip"), NAME_SLIPS)
def test_a_zone_misspelt_in_its_own_table_is_one_error_at_its_header(
    tmp_path: Path, board: str, kind: str, zone: str, slip: str
) -> None:
    original = header_of(BOARDS[board], kind, zone)
    text = edited(BOARDS[board], original, original.replace(f'"{zone}"', f'"{slip}"'))
    errors, warnings, out = errors_of(tmp_path, text)
    header = line_with(text, f'[map.{kind}."{slip}"]')
    lines = naming(text, zone, header)
    assert len(lines) >= 2
    assert [(e["key"], e["line"]) for e in errors] == [(f"map.{kind}.{slip}", header)], out
    assert errors[0]["message"] == (
        f"zone {slip!r} is named by no other line (did you mean {zone!r}? referred to by "
        f"{len(lines)} other lines: {', '.join(map(str, lines))})"
    )
    # Read under the name the other lines use: its borders, units and NTR all there.
    assert warnings == []
    assert out.splitlines()[-1].split(": ", 1)[1].startswith("1 error, 0 warnings")


def test_new_stops_at_the_misspelt_zone_table_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "board.toml"
    text = edited(NORTH_SEA, '[map.sea."Heligoland Bight"]', '[map.sea."Heligoland Bihgt"]')
    path.write_text(text)
    out = run("--db", str(tmp_path / "c.db"), "new", "x", "--scenario", str(path), code=2)
    line = line_with(text, "Heligoland Bihgt")
    assert f"{path}:{line}: map.sea.Heligoland Bihgt: zone 'Heligoland Bihgt' is named by no other line" in out
    assert "did you mean 'Heligoland Bight'? referred to by 8 other lines" in out
    assert out.count("\n") == 1


def test_one_line_misspelling_a_zone_is_the_error_at_that_line(tmp_path: Path) -> None:
    """One line alone may as well be the slip: it is reported where it is, the table left alone."""
    text = edited(NORTH_SEA, 'at = "Bay of Biscay"', 'at = "Bay of Biscya"')
    errors, _, out = errors_of(tmp_path, text)
    assert [(e["key"], e["line"]) for e in errors] == [("units[22].at", line_with(text, "Biscya"))], out
    assert errors[0]["message"] == "unknown zone 'Bay of Biscya' (did you mean 'Bay of Biscay'?)"


def test_two_zone_tables_misspelt_are_two_errors_each_at_its_header(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, '[map.sea."Skagerrak"]', '[map.sea."Skagerak"]')
    text = edited(text, '[map.land."Flanders"]', '[map.land."Flandres"]')
    errors, warnings, out = errors_of(tmp_path, text)
    assert [(e["key"], e["line"]) for e in errors] == [
        ("map.sea.Skagerak", line_with(text, "Skagerak")),
        ("map.land.Flandres", line_with(text, "Flandres")),
    ], out
    assert warnings == []


# ----- a zone's table under a misspelt header -----

HEADER_SLIPS = [
    pytest.param("north-sea-1914", '[map.see."Heligoland Bight"]', "map.see", id="map.see for map.sea"),
    pytest.param("north-sea-1914", '[mpa.sea."Heligoland Bight"]', "mpa", id="mpa for map"),
    pytest.param("north-sea-1914", '[map."Heligoland Bight"]', "map.Heligoland Bight", id="map without sea"),
    pytest.param("great-war-1914", '[map.sae."Heligoland Bight"]', "map.sae", id="great-war map.sae"),
]


@pytest.mark.parametrize(("board", "written", "key"), HEADER_SLIPS)
def test_a_zone_table_under_a_misspelt_header_is_one_error_at_that_header(
    tmp_path: Path, board: str, written: str, key: str
) -> None:
    text = edited(BOARDS[board], '[map.sea."Heligoland Bight"]', written)
    errors, warnings, out = errors_of(tmp_path, text)
    header = line_with(text, written)
    lines = naming(text, "Heligoland Bight", header)
    assert [(e["key"], e["line"]) for e in errors] == [(key, header)], out
    assert errors[0]["message"] == (
        f'unknown key (did you mean [map.sea."Heligoland Bight"]? referred to by {len(lines)} other lines: '
        f"{', '.join(map(str, lines))})"
    )
    assert warnings == []


def test_a_zone_no_line_names_under_a_misspelt_header_is_the_slip_alone(tmp_path: Path) -> None:
    # The Norwegian Sea lists its neighbours itself: no other line names it.
    text = edited(NORTH_SEA, '[map.sea."Norwegian Sea"]', '[map.see."Norwegian Sea"]')
    errors, warnings, out = errors_of(tmp_path, text)
    assert [(e["key"], e["line"], e["message"]) for e in errors] == [
        ("map.see", line_with(text, "[map.see."), 'unknown key (did you mean [map.sea."Norwegian Sea"]?)')
    ], out
    assert warnings == []


def test_a_territory_under_a_misspelt_header_is_read_as_land(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, '[map.land."England"]', '[map.lnad."England"]')
    errors, warnings, out = errors_of(tmp_path, text)
    assert [(e["key"], e["message"].split("?")[0]) for e in errors] == [
        ("map.lnad", "unknown key (did you mean [map.land.England]")
    ], out
    assert errors[0]["line"] == line_with(text, "[map.lnad.")
    assert warnings == []


def test_a_misspelt_header_is_the_first_error_when_coordinates_are_written(tmp_path: Path) -> None:
    """`--write-coordinates` reads the file without x and y: the misplaced table's own are left
    out too, and do not make the map look half placed."""
    path = tmp_path / "board.toml"
    path.write_text(edited(NORTH_SEA, '[map.sea."Heligoland Bight"]', '[map.see."Heligoland Bight"]'))
    out = run("scenario", "map", str(path), "--write-coordinates", "--force", code=2)
    assert f"{path}:67: map.see: unknown key (did you mean [map.sea." in out
    assert "no x and y" not in out and "more)" not in out
