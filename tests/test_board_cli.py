"""`tracker map`, `tracker units` and `tracker show ZONE`, and tables that fit the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tracker.cli.main import cli
from tracker.reports.text import tech_name

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "c.db")
    run(path, "new", "autumn", "--scenario", "north-sea-1914")
    return path


def run(db: str, *args: str, code: int = 0, columns: int = 80) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], env={"COLUMNS": str(columns)}, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def test_map_json_lists_every_zone_with_adjacency_ports_forces_and_ntr(db: str) -> None:
    data = json.loads(run(db, "map", "--json"))
    zones = {z["zone"]: z for z in data["zones"]}
    assert len(zones) == 17
    bight = zones["Heligoland Bight"]
    assert bight["kind"] == "sea" and bight["owner"] is None
    assert set(bight["adjacent"]) == {"Central North Sea", "Skagerrak", "Southern North Sea", "Northern Germany"}
    assert bight["ports"] == ["Northern Germany"]
    assert bight["forces"]["Germany"] == {"battleship": 2, "cruiser": 1, "destroyer": 2, "submarine": 3}
    assert bight["ntr"] == {"Germany": 2}
    assert zones["England"]["owner"] == "Britain" and "Irish Sea" in zones["England"]["ports"]


def test_map_text_fits_80_columns(db: str) -> None:
    out = run(db, "map")
    assert "Heligoland Bight" in out and "DE 2 BB" in out
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("columns", [60, 80])
def test_the_world_maps_text_cuts_no_name(tmp_path: Path, columns: int) -> None:
    world = str(tmp_path / "w.db")
    run(world, "new", "war", "--scenario", "great-war-1914")
    out = run(world, "map", columns=columns)
    # A name too long for its column folds onto the next line; none ends in an ellipsis.
    assert "\u2026" not in out and max(len(line) for line in out.splitlines()) <= columns
    if columns == 80:
        assert "Constantinople," in out


@pytest.mark.parametrize("scenario", ["north-sea-1914", "great-war-1914"])
def test_state_tables_fit_80_columns_and_break_no_word(tmp_path: Path, scenario: str) -> None:
    """The nations' numbers fit one table; their NTR and technology lists, which grow with the
    board, are tables of their own, wrapped between words. A table too wide for the terminal
    loses its right edge (rich crops it) and breaks words anywhere."""
    path = str(tmp_path / "c.db")
    run(path, "new", "c", "--scenario", scenario)
    out = run(path, "state")
    edges = {"┏": "┓", "┃": "┃", "┡": "┩", "│": "│", "└": "┘"}
    for line in out.splitlines():
        if line[:1] in edges:
            assert line.endswith(edges[line[0]]) and len(line) <= 80, line
    tokens = set(out.split())
    state = json.loads(run(path, "state", "--json"))
    listed = [zone for ntr in state["ntr"].values() for zone in ntr]
    # A technology by its name in words ("Advanced ASW"), as the log names it.
    listed += [tech_name(tech) for techs in state["tech"].values() for tech, level in techs.items() if level]
    assert listed
    for name in listed:
        for word in name.split():
            assert word in tokens or f"{word}," in tokens, (name, word)
    assert "NTR at sea" in out and "Nations" in out


def test_units_shows_the_campaigns_own_ruleset(db: str, tmp_path: Path) -> None:
    rows = {r["type"]: r for r in json.loads(run(db, "units", "--json"))["units"]}
    assert (rows["destroyer"]["attack"], rows["destroyer"]["cost"], rows["destroyer"]["abbr"]) == (3, 8, "DD")
    assert rows["battleship"]["hits"] == 2
    raw = (ROOT / "domain/data/rulesets/twtea-3e.toml").read_text()
    house = tmp_path / "house.toml"
    marker = "[units.destroyer]\n"
    head, tail = raw.split(marker)
    house.write_text(head + marker + tail.replace("cost = 8", "cost = 9", 1))
    other = str(tmp_path / "house.db")
    run(other, "new", "house", "--scenario", "north-sea-1914", "--ruleset", str(house))
    house_rows = {r["type"]: r for r in json.loads(run(other, "units", "--json"))["units"]}
    assert house_rows["destroyer"]["cost"] == 9
    out = run(db, "units")
    assert "destroyer" in out and max(len(line) for line in out.splitlines()) <= 80


def test_show_a_zone_in_any_case(db: str) -> None:
    data = json.loads(run(db, "show", "heligoland bight", "--json"))
    assert data["zone"] == "Heligoland Bight"
    assert {u["id"] for u in data["units"]} >= {"DE-BB1", "DE-SS5", "GB-SS1"}
    assert data["ntr_max"] == {"Germany": 2}
    out = run(db, "show", "HELIGOLAND BIGHT")
    assert out.startswith("Heligoland Bight: sea zone\n") and "DE-BB1" in out and "NTR: Germany 2" in out
    assert "England: land territory of Britain" in run(db, "show", "england")


def test_state_and_show_list_unit_ids_in_counting_order(tmp_path: Path) -> None:
    """On the whole-war board Britain has fifteen battleships: GB-BB8, GB-BB9, GB-BB10, not
    GB-BB10 first as their text sorts."""
    world = str(tmp_path / "w.db")
    run(world, "new", "war", "--scenario", "great-war-1914")
    (row,) = [line for line in run(world, "state").splitlines() if "Central North Sea" in line]
    assert row.split("│")[2].split() == ["GB-BB8", "GB-BB9", "GB-BB10", "GB-CA3"]
    shown = json.loads(run(world, "show", "Central North Sea", "--json"))["units"]
    assert [u["id"] for u in shown] == ["GB-BB8", "GB-BB9", "GB-BB10", "GB-CA3"]


def test_show_wraps_a_long_list_of_neighbours_between_words_without_trailing_spaces(tmp_path: Path) -> None:
    world = str(tmp_path / "w.db")
    run(world, "new", "war", "--scenario", "great-war-1914")
    neighbours = json.loads(run(world, "show", "Western Mediterranean", "--json"))["adjacent"]
    out = run(world, "show", "Western Mediterranean")
    lines = out.splitlines()
    assert all(line == line.rstrip() and len(line) <= 80 for line in lines), lines
    start = next(i for i, line in enumerate(lines) if line.startswith("Adjacent: "))
    listed = lines[start] + "".join(" " + line.strip() for line in lines[start + 1 :] if line.startswith("  "))
    assert listed == "Adjacent: " + ", ".join(neighbours)


def test_show_gives_a_move_only_to_the_phasing_nations_units(db: str) -> None:
    run(db, "next", "--to", "combat_movement")
    run(db, "move", "DE-CA1", "--to", "Skagerrak")  # from the Heligoland Bight, no enemy there
    row = next(line for line in run(db, "show", "skagerrak").splitlines() if "DE-CA1" in line)
    assert "moved 1" in row
    run(db, "next", "--to", "collect_resources")
    run(db, "convoy", "pass", "--by", "Britain")
    run(db, "next")
    # Germany's turn is over: its count is last turn's, cleared when its next turn opens.
    row = next(line for line in run(db, "show", "skagerrak").splitlines() if "DE-CA1" in line)
    assert "moved" not in row


def test_show_an_unknown_zone_names_the_closest(db: str) -> None:
    out = run(db, "show", "heligoland", code=2)
    assert out.startswith("Error: unknown zone 'heligoland' (did you mean 'Heligoland Bight'?")


def test_show_names_the_battles_open_in_the_zone(db: str) -> None:
    run(db, "next")
    run(db, "next")
    run(db, "move", "de-ss3", "de-ss4", "--path", "southern north sea,dover strait")
    data = json.loads(run(db, "show", "southern north sea", "--json"))
    assert data["battles"] == [{"battle": 1, "kind": "interception", "step": "search", "waiting": ["Britain"]}]


@pytest.mark.parametrize("columns", [80, 100, 160])
def test_state_tables_fit_the_terminal_width(db: str, columns: int) -> None:
    out = run(db, "state", columns=columns)
    widths = [len(line) for line in out.splitlines()]
    assert max(widths) <= columns
    assert "Heligoland Bight" in out and "Austria-Hungary" in out


def test_output_is_plain_text_when_not_a_terminal(db: str) -> None:
    for args in (["state"], ["map"], ["show", "skagerrak"], ["units"]):
        assert "\x1b[" not in run(db, *args)


def test_nations_are_coloured_by_side_on_a_terminal(db: str) -> None:
    from io import StringIO

    from rich.console import Console

    from tracker.reports.views import board_now, render_board, side_style
    from tracker.service.application import Tracker

    with Tracker(db) as t:
        campaign = t.load(t.campaign_id(None))
        scenario = campaign.scenario
        assert side_style(scenario, "Germany") == side_style(scenario, "Austria-Hungary")
        assert side_style(scenario, "Britain") == side_style(scenario, "France") != side_style(scenario, "Germany")
        buffer = StringIO()
        out = Console(file=buffer, force_terminal=True, width=100, color_system="standard")
        render_board(out, board_now(campaign), scenario)
    text = buffer.getvalue()
    assert "\x1b[1;31mGermany" in text and "\x1b[1;34mBritain" in text


DATA_COMMANDS = [
    "campaigns", "scenarios", "rulesets", "state", "pending", "log", "explain", "verify",
    "map", "units", "show", "stats", "export", "import",
]  # fmt: skip


@pytest.mark.parametrize("name", DATA_COMMANDS)
def test_every_command_that_shows_data_has_json(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert "--json" in {opt for p in command.params for opt in getattr(p, "opts", [])}


def test_report_has_json_markdown_discord_bbcode_and_html() -> None:
    fmt = next(p for p in cli.get_command(click.Context(cli), "report").params if p.name == "fmt")
    assert set(fmt.type.choices) == {"md", "discord", "bbcode", "html", "json"}  # type: ignore[attr-defined]


def test_long_work_is_quiet_in_scripts(db: str) -> None:
    result = CliRunner().invoke(cli, ["--db", db, "projections", "rebuild"])
    assert result.exit_code == 0 and result.output.startswith("Rebuilt the projections of ")
    assert "Rebuilding" not in result.output
    result = CliRunner().invoke(cli, ["--db", db, "verify"])
    assert result.output.startswith("OK: ") and "Verifying" not in result.output


def test_long_work_shows_a_progress_bar_on_a_terminal(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from tracker.cli.common import progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with progress(10, "Verifying") as tick:
        tick(10)
    assert "Verifying" in err.getvalue() and "100%" in err.getvalue()


def test_ad1_map_and_show_name_the_owner_now_not_the_scenarios(db: str) -> None:
    """They showed the scenario's owner after `adjust --owner` had changed it (AD1: owners are
    part of the board)."""
    run(db, "adjust", "--owner", "Flanders=Germany", "--reason", "the Germans took Flanders")
    zones = {z["zone"]: z for z in json.loads(run(db, "map", "--json"))["zones"]}
    assert zones["Flanders"]["owner"] == "Germany"
    assert json.loads(run(db, "show", "Flanders", "--json"))["owner"] == "Germany"
    assert run(db, "show", "Flanders").startswith("Flanders: land territory of Germany")


def test_pu2_map_and_show_name_ports_as_the_scenario_marks_them(tmp_path: Path) -> None:
    """A sea zone's ports were every territory beside it, and a territory's every sea beside
    it, though a scenario may mark only some territories as ports (PU2)."""
    db = str(tmp_path / "w.db")
    run(db, "new", "world", "--scenario", "great-war-1914")
    zones = {z["zone"]: z for z in json.loads(run(db, "map", "--json"))["zones"]}
    anatolia, constantinople = zones["Western Anatolia"], zones["Constantinople"]
    assert anatolia["port"] is False and anatolia["ports"] == []
    assert constantinople["port"] is True and "Aegean Sea" in constantinople["ports"]
    assert zones["Aegean Sea"]["ports"] == ["Constantinople"] and zones["Aegean Sea"]["port"] is None
    assert "Constantinople (OT, port)" in run(db, "map", columns=200)
    assert "a port (PU2)" not in run(db, "show", "Western Anatolia")


def test_the_world_maps_adjacent_zones_take_most_of_a_narrow_terminal(tmp_path: Path) -> None:
    # At 80 columns every column was narrowed to the same 21 characters, the adjacent zones'
    # lists as the mostly empty units column: 576 lines for 148 zones.
    world = str(tmp_path / "w.db")
    run(world, "new", "war", "--scenario", "great-war-1914")
    out = run(world, "map", columns=80)
    header = next(line for line in out.splitlines() if line.startswith("┃ Zone"))
    zone, adjacent, units, ntr = (len(cell) for cell in header.strip("┃").split("┃"))
    assert adjacent > 1.5 * units and adjacent > zone, header
    assert len(out.splitlines()) < 450
