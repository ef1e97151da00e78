"""Authoring a scenario: `scenario check` finds every seeded mistake with its line and key path,
`scenario map` draws a board before any campaign exists and writes a computed layout back into
the file, `scenario new` starts a board that passes; and F8 entry rounds in the loader."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from domain.errors import DataFileError
from domain.ruleset import load_ruleset
from domain.scenario import scenario_from_dict, scenario_text, scenario_with_problems
from domain.toml_lines import key_lines, key_parts
from tracker.cli.main import cli
from tracker.service.application import Tracker

# The guide's "Enter your own board" (the README's short version runs the same commands).
GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide.md"
NORTH_SEA = scenario_text("north-sea-1914")[0]
SVG = "{http://www.w3.org/2000/svg}"


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def edited(text: str, old: str, new: str) -> str:
    """The text with `old` (which must be there, once) replaced."""
    assert text.count(old) == 1, old
    return text.replace(old, new)


def line_with(text: str, fragment: str, after: str = "") -> int:
    """The number of the first line holding `fragment` (after the line holding `after`)."""
    start = text.index(after) if after else 0
    return text.count("\n", 0, text.index(fragment, start)) + 1


def without_coordinates(text: str) -> str:
    return re.sub(r"^[xy] = -?\d+\n", "", text, flags=re.MULTILINE)


# ----- check: the built-in board and the template pass -----


def test_check_passes_on_the_builtin_north_sea() -> None:
    out = run("scenario", "check", "north-sea-1914")
    assert out.strip() == (
        "north-sea-1914: 0 errors, 0 warnings (11 sea zones, 6 land territories, 4 nations, 24 unit groups)"
    )


def test_check_of_a_file_with_json_lists_no_problem(tmp_path: Path) -> None:
    path = tmp_path / "ns.toml"
    path.write_text(NORTH_SEA)
    data = json.loads(run("scenario", "check", str(path), "--json"))
    assert data == {"file": str(path), "ok": True, "errors": [], "warnings": []}


def test_new_writes_a_template_that_check_passes_and_a_campaign_starts_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = run("scenario", "new", "my-board")
    assert out.startswith("Wrote my-board.toml: 2 sides, 2 nations")
    text = (tmp_path / "my-board.toml").read_text()
    assert 'name = "my-board"' in text
    # Every key of the format is explained in a comment of the template.
    for key in (
        "name",
        "title",
        "ruleset",
        "dice",
        "turn_order",
        "code",
        "resources",
        "income",
        "tech",
        "ntr",
        "ntr_max",
        "entry_round",
        "caps",
        "adjacent",
        "x, y",
        "owner",
        "port",
        "nation",
        "type",
        "at",
        "count",
    ):
        assert re.search(rf"^#.*\b{re.escape(key)}\b", text, re.MULTILINE), key
    out = run("scenario", "check", "my-board.toml")
    assert "0 errors, 0 warnings (4 sea zones, 3 land territories, 2 nations, 7 unit groups)" in out
    out = run("--db", str(tmp_path / "c.db"), "new", "trial", "--scenario", "my-board.toml")
    assert "Campaign 'trial' created: my-board: a new board" in out


def test_new_refuses_to_replace_a_file_and_a_bad_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.toml").write_text("# my own notes\n")
    out = run("scenario", "new", "mine", code=2)
    assert out.strip() == "Error: mine.toml: exists; --force replaces it, or give another file with -o"
    assert (tmp_path / "mine.toml").read_text() == "# my own notes\n"
    run("scenario", "new", "mine", "-o", "other.toml")
    run("scenario", "new", "mine", "--force")
    assert 'name = "mine"' in (tmp_path / "mine.toml").read_text()
    assert "Error: scenario name 'my board'" in run("scenario", "new", "my board", code=2)


# ----- check: one broken copy of north-sea-1914 per mistake -----


def biscay_joined_over_land_only(t: str) -> str:
    """Bay of Biscay touches Brittany only: no sea zone borders it."""
    t = edited(t, '"Bay of Biscay", "England"', '"England"')
    return edited(t, 'adjacent = ["Irish Sea", "Bay of Biscay"]', 'adjacent = ["Irish Sea"]')


def biscay_cut_off(t: str) -> str:
    return edited(biscay_joined_over_land_only(t), 'y = 880\nadjacent = ["Brittany"]\n', "y = 880\nadjacent = []\n")


def inland_port(t: str) -> str:
    paris = '[map.land."Paris"]\nx = 900\ny = 1000\nowner = "France"\nport = true\nadjacent = ["Northern France"]\n\n'
    return edited(t, "# Starting forces.", paris + "# Starting forces.")


def central_powers_enter_late(t: str) -> str:
    t = edited(t, 'code = "DE"\n', 'code = "DE"\nentry_round = 2\n')
    return edited(t, 'code = "AH"\n', 'code = "AH"\nentry_round = 3\n')


def mistake(name: str, broken: Callable[[str], str], level: str, key: str, message: str, *where: str) -> Any:
    """One broken copy: the edit, what check reports, and the text that marks its line (the first
    line holding `where[0]`, after the line holding `where[1]` if given)."""
    return pytest.param(broken, level, key, message, where, id=name)


MISTAKES = [
    mistake(
        "unknown unit type",
        lambda t: edited(t, 'type = "cruiser"\nat = "Heligoland Bight"', 'type = "zeppelin"\nat = "Heligoland Bight"'),
        "error",
        "units[3].type",
        "reference to unknown unit 'zeppelin'",
        'type = "zeppelin"',
    ),
    mistake(
        "NTR in a land zone",
        lambda t: edited(t, 'ntr = { "Skagerrak" = 1 }', 'ntr = { "Skagerrak" = 1, "Flanders" = 1 }'),
        "error",
        "nations.Austria-Hungary.ntr.Flanders",
        "NTR can only be in sea zones (F6)",
        '"Flanders" = 1',
    ),
    mistake(
        "unknown neighbour",
        lambda t: edited(t, 'adjacent = ["Heligoland Bight"]\n', 'adjacent = ["Heligoland Bite"]\n'),
        "error",
        "map.sea.Skagerrak.adjacent",
        "unknown zone 'Heligoland Bite' in adjacency list",
        "Heligoland Bite",
    ),
    mistake(
        "unknown neighbour in a list over several lines",
        lambda t: edited(
            t,
            'adjacent = ["Skagerrak", "Heligoland Bight", "Southern North Sea", "Scotland", "England"]',
            'adjacent = [\n    "Skagerrak",\n    "Heligoland Bight",\n    "Southern Nort Sea",\n    "Scotland",\n]',
        ),
        "error",
        "map.sea.Central North Sea.adjacent",
        "unknown zone 'Southern Nort Sea' in adjacency list",
        '"Southern Nort Sea"',
    ),
    mistake(
        "entry round before round 1",
        lambda t: edited(t, 'code = "FR"\n', 'code = "FR"\nentry_round = 0\n'),
        "error",
        "nations.France.entry_round",
        "entry round 0 is before round 1 (F8",
        "entry_round = 0",
    ),
    mistake(
        "air unit on an enemy's land",
        lambda t: edited(t, 'type = "bomber"\nat = "Flanders"', 'type = "bomber"\nat = "England"'),
        "error",
        "units[6].at",
        "air unit cannot start in England, a territory of the other side",
        'at = "England"',
        'type = "bomber"',
    ),
    mistake(
        "naval unit on land",
        lambda t: edited(t, 'type = "cruiser"\nat = "Bay of Biscay"', 'type = "cruiser"\nat = "Brittany"'),
        "error",
        "units[22].at",
        "naval unit cruiser cannot start on land (Brittany)",
        'at = "Brittany"',
    ),
    mistake(
        "territory of an unknown nation",
        lambda t: edited(t, 'owner = "France"\nadjacent = ["Brittany"]', 'owner = "Spain"\nadjacent = ["Brittany"]'),
        "error",
        "map.land.Northern France.owner",
        "unknown nation 'Spain'",
        'owner = "Spain"',
    ),
    mistake(
        "territory without an owner",
        lambda t: edited(t, 'y = 860\nowner = "France"\n', "y = 860\n"),
        "error",
        "map.land.Brittany.owner",
        "missing required key",
        '[map.land."Brittany"]',
    ),
    mistake(
        "mistyped key",
        lambda t: edited(t, "income = 6\n", "incme = 6\n"),
        "error",
        "nations.Austria-Hungary.incme",
        "unknown key",
        "incme = 6",
    ),
    mistake(
        "nation left out of the turn order",
        lambda t: edited(t, '"Austria-Hungary", "France"]', '"Austria-Hungary"]'),
        "error",
        "scenario.turn_order",
        "must list every nation exactly once (missing: France)",
        "turn_order = ",
    ),
    mistake(
        "x without y",
        lambda t: edited(t, "x = 470\ny = 860\n", "x = 470\n"),
        "error",
        "map.land.Brittany.y",
        "missing: a map position needs both x and y",
        '[map.land."Brittany"]',
    ),
    mistake(
        "sea zone cut off from the map",
        biscay_cut_off,
        "warning",
        "map.sea.Bay of Biscay",
        "nobody can reach it from the rest of the map (it touches no zone)",
        '[map.sea."Bay of Biscay"]',
    ),
    mistake(
        "sea zone reached over land only",
        biscay_joined_over_land_only,
        "warning",
        "map.sea.Bay of Biscay",
        "no ship can sail here from the rest of the sea: its sea (Bay of Biscay) is joined to the map over land only",
        '[map.sea."Bay of Biscay"]',
    ),
    mistake(
        "port with no sea zone beside it",
        inland_port,
        "warning",
        "map.land.Paris.port",
        "a port with no sea zone beside it (PU2)",
        "port = true",
    ),
    mistake(
        "coordinates for some zones only",
        lambda t: edited(t, "x = 200\ny = 880\n", ""),
        "error",
        "map.sea.Bay of Biscay",
        "no x and y: once one zone has a map position, every zone needs one (16 of 17 have one)",
        '[map.sea."Bay of Biscay"]',
    ),
    mistake(
        "a side with nobody at war in round 1",
        central_powers_enter_late,
        "warning",
        "sides.Central Powers",
        "no nation of this side is at war before round 2 (F8 entry_round)",
        '"Central Powers" = ',
    ),
]


@pytest.mark.parametrize(("broken", "level", "key", "message", "where"), MISTAKES)
def test_check_reports_each_seeded_mistake_with_its_key_path_and_line(
    tmp_path: Path, broken: Callable[[str], str], level: str, key: str, message: str, where: tuple[str, ...]
) -> None:
    text = broken(NORTH_SEA)
    path = tmp_path / "broken.toml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["scenario", "check", str(path)])
    assert result.exit_code == (1 if level == "error" else 0), result.output
    findings = result.output.strip().splitlines()
    # The one mistake, and nothing it drags along; then the summary.
    assert len(findings) == 2, result.output
    expected = f"{path}:{line_with(text, *where)}: {level}: {key}: {message}"
    assert findings[0].startswith(expected), (findings[0], expected)
    counts = "1 error, 0 warnings" if level == "error" else "0 errors, 1 warning"
    assert f"{path}: {counts} (" in findings[1]


def test_check_collects_every_mistake_where_the_loader_stops_at_the_first(tmp_path: Path) -> None:
    # These edit the same lines of Brittany's table, or report on the whole map's coordinates.
    overlapping = {"x without y", "territory without an owner", "coordinates for some zones only"}
    text = NORTH_SEA
    for case in MISTAKES:
        broken, level = case.values[0], case.values[1]
        if level == "error" and case.id not in overlapping:
            text = broken(text)
    path = tmp_path / "many.toml"
    path.write_text(text)
    data = json.loads(CliRunner().invoke(cli, ["scenario", "check", str(path), "--json"]).output)
    assert data["ok"] is False
    assert len(data["errors"]) == 10
    assert [e["line"] for e in data["errors"]] == sorted(e["line"] for e in data["errors"])
    rs = load_ruleset("twtea-3e")[0]
    with pytest.raises(DataFileError):
        scenario_from_dict(tomllib.loads(text), "many.toml", rs)


def test_check_names_the_line_of_a_toml_syntax_error(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, 'code = "GB"', 'code = "GB')
    path = tmp_path / "syntax.toml"
    path.write_text(text)
    out = run("scenario", "check", str(path), code=1)
    line = line_with(text, 'code = "GB')
    assert out.startswith(f"{path}:{line}: error: nations.Britain.code: not valid TOML (")


def test_check_names_the_key_path_of_a_key_or_table_given_twice(tmp_path: Path) -> None:
    """TOML refuses the whole file for a key or table written twice; the check still names the
    key path of the line it points at, as for every other problem (`units[1]`: the second)."""
    path = tmp_path / "twice.toml"
    text = edited(NORTH_SEA, 'code = "GB"\n', 'code = "GB"\ncode = "UK"\n')
    path.write_text(text)
    out = run("scenario", "check", str(path), code=1)
    line = line_with(text, 'code = "UK"')
    assert out.startswith(f"{path}:{line}: error: nations.Britain.code: not valid TOML (")
    second = 'at = "Heligoland Bight"\ncount = 3'
    text = edited(NORTH_SEA, second, f'{second}\nat = "Skagerrak"')
    path.write_text(text)
    data = json.loads(run("scenario", "check", str(path), "--json", code=1))
    (error,) = data["errors"]
    assert error["line"] == line_with(text, 'at = "Skagerrak"') and error["key"] == "units[1].at"
    assert error["message"].startswith("not valid TOML (")


def test_check_of_a_missing_file_or_ruleset_is_one_line_of_usage(tmp_path: Path) -> None:
    out = run("scenario", "check", str(tmp_path / "none.toml"), code=2)
    assert out.startswith("Error: unknown scenario") and out.count("\n") == 1
    out = run("scenario", "check", "north-sea-1914", "--ruleset", "house-rules", code=2)
    assert out.startswith("Error: unknown ruleset 'house-rules'") and out.count("\n") == 1


def test_a_ruleset_the_file_names_that_cannot_be_read_is_an_error_at_its_key(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, 'ruleset = "twtea-3e"', 'ruleset = "twtea-4e"')
    path = tmp_path / "r.toml"
    path.write_text(text)
    out = run("scenario", "check", str(path), code=1)
    assert out.startswith(f"{path}:{line_with(text, 'twtea-4e')}: error: scenario.ruleset: the ruleset cannot be read")


# ----- key paths and lines -----


def test_key_lines_follow_headers_dotted_keys_arrays_of_tables_and_long_values() -> None:
    text = (
        "# a comment\n"
        '[map.sea."St. George\'s Channel"]\n'
        "adjacent = [\n"
        '  "Irish Sea",  # [not a header]\n'
        "]\n"
        "x = 1\n"
        "[[units]]\n"
        'nation = "Britain"\n'
        "[[units]]\n"
        "stats.count = 2\n"
        'note = """\n'
        "[units]\n"
        '"""\n'
    )
    lines = key_lines(text)
    name = "St. George's Channel"
    assert lines[("map", "sea", name)].line == 2 and lines[("map", "sea", name)].header
    assert (lines[("map", "sea", name, "adjacent")].line, lines[("map", "sea", name, "adjacent")].end) == (3, 5)
    assert lines[("map", "sea", name, "x")].line == 6
    assert lines[("units", 0, "nation")].line == 8
    assert lines[("units", 1, "stats", "count")].line == 10
    assert ("units",) in lines and ("units", 2) not in lines
    data = tomllib.loads(text)
    assert key_parts(data, f"map.sea.{name}.adjacent") == ("map", "sea", name, "adjacent")
    assert key_parts(data, "units[1].stats.count") == ("units", 1, "stats", "count")
    assert key_parts(data, "units[0].type") == ("units", 0, "type")


def test_the_lenient_loader_gives_what_the_strict_one_raises_first() -> None:
    rs = load_ruleset("twtea-3e")[0]
    data = tomllib.loads(edited(NORTH_SEA, 'code = "FR"\n', 'code = "FR"\nentry_round = -2\n'))
    _, problems = scenario_with_problems(data, "sc.toml", rs)
    with pytest.raises(DataFileError) as info:
        scenario_from_dict(data, "sc.toml", rs)
    assert [(p.key, p.problem) for p in problems] == [(info.value.key, info.value.problem)]


# ----- F8 entry rounds in the loader -----


def test_f8_entry_round_is_read_and_defaults_to_round_1(tmp_path: Path) -> None:
    rs = load_ruleset("twtea-3e")[0]
    plain = scenario_from_dict(tomllib.loads(NORTH_SEA), "sc.toml", rs)
    assert {n.name: n.entry_round for n in plain.nations.values()} == {
        "Germany": 1,
        "Britain": 1,
        "Austria-Hungary": 1,
        "France": 1,
    }
    later = scenario_from_dict(
        tomllib.loads(edited(NORTH_SEA, 'code = "FR"\n', 'code = "FR"\nentry_round = 3\n')), "sc.toml", rs
    )
    assert later.nations["France"].entry_round == 3


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("0", "entry round 0 is before round 1"),
        ('"1915"', "expected an integer, got a string"),
        ("10001", "value 10001 is out of range"),
    ],
)
def test_f8_an_entry_round_that_is_no_round_is_refused_with_its_key(value: str, problem: str) -> None:
    rs = load_ruleset("twtea-3e")[0]
    data = tomllib.loads(edited(NORTH_SEA, 'code = "FR"\n', f'code = "FR"\nentry_round = {value}\n'))
    with pytest.raises(DataFileError, match=re.escape(f"sc.toml: nations.France.entry_round: {problem}")):
        scenario_from_dict(data, "sc.toml", rs)


def test_f8_a_campaign_keeps_its_entry_rounds_and_one_without_them_loads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "later.toml"
    path.write_text(edited(NORTH_SEA, 'code = "FR"\n', 'code = "FR"\nentry_round = 3\n'))
    with Tracker(str(tmp_path / "c.db")) as t:
        later = t.create("later", str(path))
        plain = t.create("plain", "north-sea-1914")
        assert t.load(later.id).scenario.nations["France"].entry_round == 3
        assert "entry_round" not in plain.scenario_data["nations"]["France"]
        assert t.load(plain.id).scenario.nations["France"].entry_round == 1


# ----- map -----


def zones_drawn(svg: str) -> dict[str, tuple[float, float]]:
    """Each zone box of the drawing (a <g data-zone>), with its rectangle's corner."""
    root = ET.fromstring(svg)
    boxes = {}
    for g in root.iter(f"{SVG}g"):
        if "data-zone" in g.attrib:
            rect = g.find(f"{SVG}rect")
            assert rect is not None
            boxes[g.attrib["data-zone"]] = (float(rect.attrib["x"]), float(rect.attrib["y"]))
    return boxes


def test_map_draws_one_box_per_zone_with_the_starting_forces(tmp_path: Path) -> None:
    out = run("scenario", "map", "north-sea-1914", "-o", str(tmp_path / "map.svg"))
    assert out.strip() == f"Wrote {tmp_path / 'map.svg'}: 17 zones, coordinates from the file."
    svg = (tmp_path / "map.svg").read_text()
    boxes = zones_drawn(svg)
    assert len(boxes) == 17 and "Heligoland Bight" in boxes
    root = ET.fromstring(svg)
    bight = next(g for g in root.iter(f"{SVG}g") if g.attrib.get("data-zone") == "Heligoland Bight")
    text = "".join(bight.itertext())
    assert "3 SS, 2 DD, 1 CA, 2 BB" in text and "NTR" in text


def test_map_lays_out_a_file_without_coordinates_the_same_way_every_time(tmp_path: Path) -> None:
    path = tmp_path / "bare.toml"
    path.write_text(without_coordinates(NORTH_SEA))
    out = run("scenario", "map", str(path), "-o", str(tmp_path / "a.svg"))
    assert "laid out from the adjacency" in out
    run("scenario", "map", str(path), "-o", str(tmp_path / "b.svg"))
    a, b = (tmp_path / "a.svg").read_text(), (tmp_path / "b.svg").read_text()
    assert a == b
    boxes = zones_drawn(a)
    assert len(boxes) == 17 and len(set(boxes.values())) == 17
    assert run("scenario", "map", str(path), "-o", "-").startswith("<svg")


def test_write_coordinates_round_trips_keeping_comments_and_order(tmp_path: Path) -> None:
    bare = without_coordinates(NORTH_SEA)
    path = tmp_path / "bare.toml"
    path.write_text(bare)
    out = run("scenario", "map", str(path), "--write-coordinates", "-o", str(tmp_path / "map.svg"))
    assert out.splitlines()[0] == f"Wrote x and y for 17 zones into {path}."
    written = path.read_text()
    # Only x/y lines were added: taking them out again gives the file back, comments included.
    assert without_coordinates(written) == bare
    data = tomllib.loads(written)
    for kind in ("sea", "land"):
        for zone, table in data["map"][kind].items():
            assert isinstance(table["x"], int) and isinstance(table["y"], int), zone
            header = f'[map.{kind}."{zone}"]\nx = {table["x"]}\ny = {table["y"]}\n'
            assert header in written
    assert "0 errors, 0 warnings" in run("scenario", "check", str(path))
    # The drawing made with them is the one the file now gives.
    again = run("scenario", "map", str(path), "-o", str(tmp_path / "again.svg"))
    assert "coordinates from the file" in again
    assert zones_drawn((tmp_path / "map.svg").read_text()) == zones_drawn((tmp_path / "again.svg").read_text())


def test_write_coordinates_keeps_the_files_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "crlf.toml"
    path.write_bytes(without_coordinates(NORTH_SEA).replace("\n", "\r\n").encode())
    run("scenario", "map", str(path), "--write-coordinates")
    written = path.read_bytes()
    assert written.count(b"\n") == written.count(b"\r\n") == len(NORTH_SEA.splitlines())
    assert "0 errors, 0 warnings" in run("scenario", "check", str(path))


def test_write_coordinates_refuses_a_zone_written_inline(tmp_path: Path) -> None:
    text = edited(
        without_coordinates(NORTH_SEA),
        '[map.sea."Bay of Biscay"]\nadjacent = ["Brittany"]\n',
        '[map.sea]\n"Bay of Biscay" = { adjacent = ["Brittany"] }\n',
    )
    path = tmp_path / "inline.toml"
    path.write_text(text)
    out = run("scenario", "map", str(path), "--write-coordinates", code=2)
    assert out.strip() == (
        f'Error: {path}: map.sea.Bay of Biscay: not a [map.sea."Bay of Biscay"] table of its own; '
        "give its x and y by hand, or write it as one"
    )
    assert path.read_text() == text


def test_write_coordinates_refuses_a_file_that_has_them_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "ns.toml"
    path.write_text(NORTH_SEA)
    out = run("scenario", "map", str(path), "--write-coordinates", code=2)
    assert out.strip() == (
        f"Error: {path}: already has coordinates (17 zones); --force replaces them with a computed layout"
    )
    assert path.read_text() == NORTH_SEA
    run("scenario", "map", str(path), "--write-coordinates", "--force")
    forced = path.read_text()
    assert forced != NORTH_SEA and len(forced.splitlines()) == len(NORTH_SEA.splitlines())
    assert without_coordinates(forced) == without_coordinates(NORTH_SEA)
    out = run("scenario", "map", "north-sea-1914", "--write-coordinates", code=2)
    assert out.strip() == "Error: north-sea-1914 is a built-in scenario: copy it to a file of your own to change it"


def test_map_of_a_broken_file_names_its_first_error_with_its_line(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, 'adjacent = ["Heligoland Bight"]\n', 'adjacent = ["Heligoland Bite"]\n')
    path = tmp_path / "broken.toml"
    path.write_text(text)
    out = run("scenario", "map", str(path), "-o", str(tmp_path / "m.svg"), code=2)
    assert out.strip() == (
        f"Error: {path}:{line_with(text, 'Heligoland Bite')}: map.sea.Skagerrak.adjacent: unknown zone "
        f"'Heligoland Bite' in adjacency list (did you mean 'Heligoland Bight'?); `tracker scenario check {path}` "
        "lists every problem"
    )
    assert not (tmp_path / "m.svg").exists()


def test_map_refuses_png_without_cairosvg_and_unknown_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # as if it were not installed
    out = run("scenario", "map", "north-sea-1914", "-o", str(tmp_path / "map.png"), code=2)
    assert out.strip() == (
        f"Error: {tmp_path / 'map.png'}: writing PNG needs the optional package cairosvg (pip install cairosvg); "
        "or write .svg"
    )
    assert "unknown map format .pdf" in run("scenario", "map", "north-sea-1914", "-o", "map.pdf", code=2)
    assert "give -o FILE" in run("scenario", "map", "north-sea-1914", code=2)


# ----- the guide -----


def test_the_readme_loop_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    section = GUIDE.read_text().split("## Enter your own board", 1)[1].split("\n## ", 1)[0]
    block = section[section.index("```sh\n") + 6 : section.index("```\n", section.index("```sh\n") + 6)]
    commands = [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("tracker ")]
    assert len(commands) == 5
    for command in commands:
        run("--db", str(tmp_path / "c.db"), *shlex.split(command)[1:])
    assert (tmp_path / "map.svg").exists()


# ----- check: a group's slips, each reported once, at its line and key -----


def austria_with_no_unit(t: str) -> str:
    """Austria-Hungary holds no territory on this board; without its two groups it has nothing."""
    for group in ('type = "submarine"\nat = "Skagerrak"\ncount = 2', 'type = "destroyer"\nat = "Skagerrak"\ncount = 1'):
        t = edited(t, f'[[units]]\nnation = "Austria-Hungary"\n{group}\n\n', "")
    return t


SLIPS = [
    mistake(
        "nation code that is no string",
        lambda t: edited(t, 'code = "GB"', "code = 44"),
        "error",
        "nations.Britain.code",
        "expected a string, got an integer",
        "code = 44",
    ),
    mistake(
        "nation without a code",
        lambda t: edited(t, 'code = "GB"\n', ""),
        "error",
        "nations.Britain.code",
        "missing required key",
        "[nations.Britain]",
    ),
    mistake(
        "F5 a side written as one name, not a list",
        lambda t: edited(t, '"Entente" = ["Britain", "France"]', '"Entente" = "Britain"'),
        "error",
        "sides.Entente",
        "expected a list of strings, got a string",
        '"Entente" = ',
    ),
    mistake(
        "adjacency written as one name, not a list",
        lambda t: edited(t, 'adjacent = ["Heligoland Bight"]\n', 'adjacent = "Heligoland Bight"\n'),
        "error",
        "map.sea.Skagerrak.adjacent",
        "expected a list of strings, got a string",
        'adjacent = "Heligoland Bight"',
    ),
    mistake(
        "a count with a fraction",
        lambda t: edited(t, 'at = "Skagerrak"\ncount = 2', 'at = "Skagerrak"\ncount = 2.5'),
        "error",
        "units[8].count",
        "expected an integer, got a decimal number",
        "count = 2.5",
    ),
    mistake(
        "PU2 a nation with no unit and no port",
        austria_with_no_unit,
        "warning",
        "nations.Austria-Hungary",
        "starts with no unit and holds no port, so it can never place one (PU2)",
        "[nations.Austria-Hungary]",
    ),
]


@pytest.mark.parametrize(("broken", "level", "key", "message", "where"), SLIPS)
def test_check_reports_each_slip_once_with_its_key_path_and_line(
    tmp_path: Path, broken: Callable[[str], str], level: str, key: str, message: str, where: tuple[str, ...]
) -> None:
    """A code of the wrong type or missing was also reported as the code '' ; a side that is no
    list made every nation on it "on no side" too; a fraction or a lone name did not say what
    it was; a nation that can never have a unit passed unremarked."""
    test_check_reports_each_seeded_mistake_with_its_key_path_and_line(tmp_path, broken, level, key, message, where)


def check_text(tmp_path: Path, text: str | bytes, code: int = 1) -> list[dict[str, Any]]:
    path = tmp_path / "board.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    data = json.loads(run("scenario", "check", str(path), "--json", code=code))
    return list(data["errors"])


def test_check_of_an_unclosed_array_names_its_key_and_the_line_it_begins(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, 'adjacent = ["Heligoland Bight"]\n', 'adjacent = ["Heligoland Bight"\n')
    (error,) = check_text(tmp_path, text)
    begins = line_with(text, 'adjacent = ["Heligoland Bight"\n')
    assert error["key"] == "map.sea.Skagerrak.adjacent" and error["line"] > begins
    assert error["message"] == (f"not valid TOML (Unclosed array; the value begun at line {begins} is still open here)")
    # Left open at the end of the file: TOML names no line, the check names the array's.
    text = NORTH_SEA.rstrip("\n") + '\n\n[[units]]\nnation = "France"\ntype = "cruiser"\nat = ["Bay of Biscay",\n'
    (error,) = check_text(tmp_path, text)
    assert error["line"] == line_with(text, 'at = ["Bay of Biscay"') and error["key"] == "units[24].at"
    assert "is still open at the end of the file" in error["message"]


def test_check_of_a_table_given_twice_names_the_line_of_the_first(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, '[map.land."Brittany"]', '[map.land."Flanders"]')
    (error,) = check_text(tmp_path, text)
    first = line_with(text, '[map.land."Flanders"]')
    second = text.count("\n", 0, text.rindex('[map.land."Flanders"]')) + 1
    assert (error["line"], error["key"]) == (second, "map.land.Flanders") and second > first
    assert error["message"].endswith(f"twice: also at line {first})")


def test_check_says_what_toml_stumbled_on_where_its_own_words_do_not(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, 'title = "The North Sea, autumn 1914"', "title = The North Sea")
    (error,) = check_text(tmp_path, text)
    assert error["key"] == "scenario.title"
    assert error["message"] == 'not valid TOML (Invalid value: text needs quotes, as name = "North Sea")'
    text = edited(NORTH_SEA, 'title = "The North Sea, autumn 1914"', 'title = "The North Sea')
    (error,) = check_text(tmp_path, text)
    assert "a string is still open at the end of the line: a closing quote is missing" in error["message"]
    text = edited(NORTH_SEA, '"Entente" = ["Britain", "France"]', '"Entente" = ["Britain", "France"\x00]')
    (error,) = check_text(tmp_path, text)
    assert error["key"] == "sides.Entente" and error["line"] == line_with(text, '"Entente"')
    assert "the line holds the control character '\\x00', column 33" in error["message"]


@pytest.mark.parametrize("text", ["", "\n\n", "# my board, to do\n"], ids=["empty", "blank", "comments"])
def test_check_of_an_empty_file_is_one_error_not_one_per_table(tmp_path: Path, text: str) -> None:
    (error,) = check_text(tmp_path, text)
    assert error["message"].startswith("no scenario in the file: it is empty")
    assert "tracker scenario new NAME" in error["message"]


def test_check_of_a_directory_with_json_is_a_json_error_exit_2(tmp_path: Path) -> None:
    """The directory was refused by the argument's parser, before --json could answer."""
    folder = tmp_path / "board.toml"
    folder.mkdir()
    result = CliRunner().invoke(cli, ["scenario", "check", str(folder), "--json"])
    assert result.exit_code == 2
    message = f"{folder}: is a directory, not a TOML file"
    error = {"level": "error", "file": str(folder), "line": None, "key": "", "message": message}
    assert json.loads(result.stdout) == {"file": str(folder), "ok": False, "errors": [error], "warnings": []}
    assert result.stderr == f"Error: {message}\n"


def test_check_and_map_read_a_scenario_from_stdin_given_as_a_dash(tmp_path: Path) -> None:
    text = edited(NORTH_SEA, 'adjacent = ["Heligoland Bight"]\n', 'adjacent = ["Heligoland Bite"]\n')
    result = CliRunner().invoke(cli, ["scenario", "check", "-"], input=text.encode())
    assert result.exit_code == 1
    assert result.output.startswith(f"<stdin>:{line_with(text, 'Heligoland Bite')}: error: map.sea.Skagerrak.adjacent")
    result = CliRunner().invoke(cli, ["scenario", "map", "-", "-o", "-"], input=NORTH_SEA.encode())
    assert result.exit_code == 0 and result.output.startswith("<svg")
    result = CliRunner().invoke(cli, ["scenario", "map", "-", "--write-coordinates"], input=NORTH_SEA.encode())
    assert result.exit_code == 2 and "give its name, not '-'" in result.output


def test_map_json_says_a_layout_written_with_write_coordinates_was_computed(tmp_path: Path) -> None:
    path = tmp_path / "bare.toml"
    path.write_text(without_coordinates(NORTH_SEA))
    data = json.loads(run("scenario", "map", str(path), "--write-coordinates", "--json"))
    assert data["coordinates_written"] is True and data["layout"] == "computed"
    data = json.loads(run("scenario", "map", str(path), "-o", str(tmp_path / "m.svg"), "--json"))
    assert data["layout"] == "file"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_check_refuses_a_device_rather_than_reading_it_for_ever() -> None:
    # In a process of its own: read for ever, it would hang the suite rather than fail.
    command = [sys.executable, "-m", "tracker", "scenario", "check", "/dev/zero"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert (result.returncode, result.stderr) == (2, "Error: /dev/zero: is a device, not a TOML file\n")
