"""A zone's name of several words is kept whole where a line is wrapped at the terminal's width:
in `show`'s lists of neighbours and ports ("Adjacent: ..., Central / Mediterranean" was cut)
and in a refusal's list of legal places ("legal: ..., Syria and / Palestine"), as prose already
kept it (`fit_prose`). No line grows past the terminal for it, and every name is still there, in
its order."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli
from tracker.cli.params import CLIENT_TERMINAL, fit_error


def run(db: str, *args: str, columns: int = 80) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args], env={"COLUMNS": str(columns)}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def cut(lines: list[str], names: list[str]) -> list[str]:
    """The names of several words broken across two lines."""
    joined = "\n".join(lines)
    return [n for n in names if " " in n and n not in joined]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("world") / "w.db")
    run(db, "new", "war", "--scenario", "great-war-1914")
    return db


@pytest.mark.parametrize("zone", ["Western Mediterranean", "Gulf of Guinea"])
@pytest.mark.parametrize("columns", [40, 56, 80])
def test_show_keeps_each_neighbours_name_whole(world: str, zone: str, columns: int) -> None:
    data = json.loads(run(world, "show", zone, "--json"))
    lines = run(world, "show", zone, columns=columns).splitlines()
    assert all(len(line) <= columns and line == line.rstrip() for line in lines), lines
    assert cut(lines, data["adjacent"] + data["ports"]) == []
    # Every neighbour, in order, on the lines of the listing.
    start = next(i for i, line in enumerate(lines) if line.startswith("Adjacent: "))
    listed = lines[start] + "".join(" " + line.strip() for line in lines[start + 1 :] if line.startswith("  "))
    assert listed.startswith("Adjacent: " + ", ".join(data["adjacent"]))


PLACES = [
    "Northern England",
    "Southern England",
    "Panama Canal Zone",
    "Syria and Palestine",
    "German South West Africa",
]
REFUSED = f"PU2: Britain has 2 destroyers bought and not placed (legal: {', '.join(PLACES)})"


@pytest.mark.parametrize("columns", [50, 66, 77, 84, 95])
def test_a_refusal_keeps_each_places_name_whole(columns: int) -> None:
    token = CLIENT_TERMINAL.set({"columns": columns, "tty": True})
    try:
        lines = fit_error(REFUSED).splitlines()
    finally:
        CLIENT_TERMINAL.reset(token)
    assert len(lines) > 1 and all(len(line) <= columns for line in lines), lines
    assert cut(lines, PLACES) == []
    assert " ".join(" ".join(lines).split()) == f"Error: {REFUSED}"  # every word, in order


@pytest.mark.parametrize(
    "path",
    ["/home/Anna/Games/Boards/house.toml:66:", "./Boards/My/house.toml", "https://Example.org/Some/Page"],
)
def test_a_path_or_a_url_is_never_broken_at_its_slashes(path: str) -> None:
    """A list of names may break after its "/" ("North Sea/" then "Bay of Biscay"); a file's
    path or a URL may not: "/home/Anna/Games/" and "Boards/house.toml" could not be copied."""
    from tracker.cli.wrapping import wrapped_keeping_names

    lines = wrapped_keeping_names(f"Error: {path} units.destroyer.attack: value -1 is out of range", 40)
    assert any(path in line for line in lines), lines
