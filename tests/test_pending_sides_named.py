"""One nation decides for a side of several nations (NC1, F5): Britain chooses for France's ships
in the English Channel. `pending` (and the viewer's waiting list, which reads the same text)
listed France's submarine under "Britain:"; it says "Britain, for France", as the battle lines
say "Britain targets for France". And a zone named without quotes (`move GB-DD1 --to Central
North Sea`) is refused saying how to quote it, as the shell says for `show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

EC = "English Channel"


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


def pending(db: str) -> str:
    (item,) = [i for i in json.loads(run(db, "pending", "--json")) if i["battle"] == 1]
    assert item["text"] in run(db, "pending")
    return str(item["text"])


@pytest.fixture
def db(tmp_path: Path) -> str:
    """Great War, round 1: German cruisers and a submarine in the English Channel, where
    Britain's and France's ships lie together; Britain decides for the side."""
    path = str(tmp_path / "w.db")
    run(path, "new", "war", "--scenario", "great-war-1914", "--dice", "manual")
    run(path, "adjust", "--add", f"Germany:cruiser:{EC}:3", "--add", f"Germany:submarine:{EC}:1", "--reason", "test")
    run(path, "next", "--to", "combat_movement")
    run(path, "next")
    run(path, "battle", "start", "--zone", EC)
    return path


def test_ha1_nc1_britain_chooses_the_targets_of_frances_submarine(db: str) -> None:
    text = pending(db)
    assert "Britain, for France: FR-SS2 at DE-CA12/DE-CA13/DE-CA14" in text
    assert "Britain: FR-SS2" not in text
    # Germany's own submarine stays Germany's.
    assert "Germany: DE-SS5 at " in text


def test_ha1_nc1_britain_screens_a_shot_at_frances_cruiser(db: str) -> None:
    run(db, "battle", "targets", "1", "--nation", "Germany", "--targets", "DE-SS5=FR-CA2")
    run(db, "battle", "targets", "1", "--nation", "Britain")
    text = pending(db)
    # Germany's screens are its own: said as before.
    assert (
        "screening escorts: FR-SS2's shot at DE-CA12 may be taken by DE-CA13/DE-CA14; "
        "Britain, for Britain and France: DE-SS5's shot at FR-CA2 may be taken by FR-DD2/GB-CA6 "
    ) in text


def volley(db: str) -> None:
    """Targets and screens by default, then one hit on the allies: DE-CA12 rolls 1."""
    run(db, "battle", "targets", "1", "--nation", "Germany", "--targets", "DE-SS5=FR-CA2")
    run(db, "battle", "targets", "1", "--nation", "Britain")
    run(db, "battle", "screen", "1", "--nation", "Germany")
    run(db, "battle", "screen", "1", "--nation", "Britain")
    run(db, "battle", "fire", "1", "--dice", ",".join(["1"] + ["6"] * 10))


def test_ha7_nc1_britain_places_the_hits_among_britains_and_frances_ships(db: str) -> None:
    volley(db)
    text = pending(db)
    assert "Britain, for Britain and France, places 1 hit among FR-CA2, FR-DD2, GB-CA6" in text
    assert "Britain places" not in text


def test_nc4_nc1_britain_decides_whether_frances_submarine_submerges(db: str) -> None:
    volley(db)
    run(db, "battle", "casualties", "1")
    text = pending(db)
    assert "Germany: submerge DE-SS5 or retreat to Bay of Biscay; Britain, for France: submerge FR-SS2" in text


@pytest.fixture
def moving(tmp_path: Path) -> str:
    path = str(tmp_path / "m.db")
    run(path, "new", "war", "--scenario", "great-war-1914")
    run(path, "next", "--to", "combat_movement")
    return path


@pytest.mark.parametrize(
    ("words", "quoted"),
    [
        (["--to", "Central", "North", "Sea"], "'Central North Sea'"),
        (["--path", "Central", "North", "Sea"], "'Central North Sea'"),
        (["--path", "Dover Strait,English", "Channel"], "'Dover Strait,English Channel'"),
    ],
)
def test_move_a_zone_typed_without_quotes_is_refused_saying_how_to_quote_it(
    moving: str, words: list[str], quoted: str
) -> None:
    result = CliRunner().invoke(cli, ["--db", moving, "move", "GB-DD1", *words])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert f"a name with spaces is one word when quoted: {quoted}" in line
    assert "Traceback" not in result.output
    assert "GB-DD1 moves" not in run(moving, "log")


def test_move_a_misspelt_zone_gets_no_quoting_hint(moving: str) -> None:
    result = CliRunner().invoke(cli, ["--db", moving, "move", "GB-DD1", "--to", "Centrl", "North", "Sea"])
    assert result.exit_code == 2, result.output
    assert "unknown zone 'Centrl'" in result.output and "quoted" not in result.output
