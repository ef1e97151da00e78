"""A group's organiser entering a board of their own, as the README's "Enter your own board" and
the guide's chapter tell it: a small Mediterranean of 1915 with a nation entering the war in
round 2 (F8) and aircraft aboard a carrier, checked, drawn, and played into round 2; and what
the check and the template say about ports (PU2) and caps (PU3) on such a board."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tracker.cli.commands.scenario import template
from tracker.cli.main import cli

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide.md"

MED = """\
[scenario]
name = "med-1915"
title = "Mare Nostrum 1915"
turn_order = ["Austria-Hungary", "Ottoman Empire", "Italy", "Britain"]

[sides]
"Central Powers" = ["Austria-Hungary", "Ottoman Empire"]
"Entente" = ["Britain", "Italy"]

[nations.Austria-Hungary]
code = "AH"
resources = 24

[nations."Ottoman Empire"]
code = "OT"
resources = 12

[nations.Italy]
code = "IT"
resources = 20
entry_round = 2

[nations.Britain]
code = "GB"
resources = 30
ntr = { "Strait of Sicily" = 2 }

[map.sea."Strait of Sicily"]
adjacent = ["Ionian Sea", "Tyrrhenian Sea", "Malta"]

[map.sea."Tyrrhenian Sea"]
adjacent = ["Southern Italy"]

[map.sea."Ionian Sea"]
adjacent = ["Lower Adriatic", "Aegean Sea", "Southern Italy"]

[map.sea."Lower Adriatic"]
adjacent = ["Dalmatia", "Southern Italy"]

[map.sea."Aegean Sea"]
adjacent = ["Dardanelles"]

[map.sea."Dardanelles"]
adjacent = ["Constantinople"]

[map.land."Malta"]
owner = "Britain"
port = true

[map.land."Southern Italy"]
owner = "Italy"
port = true

[map.land."Dalmatia"]
owner = "Austria-Hungary"
port = true

[map.land."Constantinople"]
owner = "Ottoman Empire"
port = true

[[units]]
nation = "Austria-Hungary"
type = "submarine"
at = "Lower Adriatic"
count = 2

[[units]]
nation = "Ottoman Empire"
type = "destroyer"
at = "Dardanelles"

[[units]]
nation = "Italy"
type = "battleship"
at = "Tyrrhenian Sea"

[[units]]
nation = "Britain"
type = "aircraft_carrier"
at = "Aegean Sea"

[[units]]
nation = "Britain"
type = "fighter"
at = "Aegean Sea"

[[units]]
nation = "Britain"
type = "bomber"
at = "Aegean Sea"

[[units]]
nation = "Britain"
type = "destroyer"
at = "Strait of Sicily"
"""


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def edited(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def line_with(text: str, fragment: str) -> int:
    return text.count("\n", 0, text.index(fragment)) + 1


def checked(tmp_path: Path, text: str) -> tuple[Path, list[str]]:
    path = tmp_path / "board.toml"
    path.write_text(text)
    return path, run("scenario", "check", str(path)).splitlines()


# ----- the walk: check, map, new, two rounds' turn order -----


def test_f8_an_own_board_is_checked_drawn_and_played_into_the_round_its_neutral_enters(tmp_path: Path) -> None:
    board, lines = checked(tmp_path, MED)
    assert lines == [f"{board}: 0 errors, 0 warnings (6 sea zones, 4 land territories, 4 nations, 7 unit groups)"]
    run("scenario", "map", str(board), "--write-coordinates", "-o", str(tmp_path / "map.svg"))
    assert "Mare Nostrum 1915" in (tmp_path / "map.svg").read_text()
    assert run("scenario", "check", str(board)).startswith(f"{board}: 0 errors, 0 warnings")
    db = ("--db", str(tmp_path / "c.db"))
    run(*db, "new", "med", "--scenario", str(board))
    run(*db, "next", "--to", "combat_movement", "--nation", "Britain")
    # F7: the aircraft aboard sail with their carrier.
    assert "carrying GB-BM1, GB-FT1" in run(*db, "move", "gb-cv1", "--path", "ionian sea")
    run(*db, "next", "--to", "research", "--nation", "Austria-Hungary")
    log = run(*db, "log")
    assert "round 1, Italy: turn passed over, neutral until it enters the war in round 2" in log
    assert "round 2, Italy: enters the war at its entry round" in log


# ----- PU2: a port is where new ships go beside it and new aircraft on it -----


def test_pu2_the_template_and_the_guide_say_new_aircraft_are_placed_on_ports_as_the_referee_does(
    tmp_path: Path,
) -> None:
    # Bavaria, no port: Germany's new fighter may go to Northern Germany, its port, only.
    text = edited(
        template("ports"),
        '[map.land."Northern Germany"]\nowner = "Germany"\nport = true\n',
        '[map.land."Northern Germany"]\nowner = "Germany"\nport = true\n\n'
        '[map.land."Bavaria"]\nowner = "Germany"\nadjacent = ["Northern Germany"]\n',
    )
    board, _ = checked(tmp_path, text)
    db = ("--db", str(tmp_path / "c.db"))
    run(*db, "new", "ports", "--scenario", str(board))
    run(*db, "next")
    run(*db, "buy", "fighter")
    run(*db, "next", "--to", "placement")
    assert "PU2: Germany cannot place 1 fighter in Bavaria (legal: Northern Germany)" in run(
        *db, "place", "fighter", "--at", "Bavaria", code=1
    )
    said = template("ports").split("# port: ", 1)[1].split("\n[", 1)[0]
    assert "new aircraft on it" in said
    ports = GUIDE.read_text().split("- **Ports** (PU2).", 1)[1].split("\n- **", 1)[0]
    assert "new aircraft on them" in ports


def test_pu2_an_inland_port_is_said_to_take_new_aircraft_only(tmp_path: Path) -> None:
    highlands = '[map.land."Highlands"]\nowner = "Britain"\nport = true\nadjacent = ["Scotland"]\n\n'
    text = edited(template("inland"), "# Starting forces:", highlands + "# Starting forces:")
    board, lines = checked(tmp_path, text)
    port = line_with(text, highlands) + 2
    assert lines[0] == (
        f"{board}:{port}: warning: map.land.Highlands.port: a port with no sea zone "
        "beside it (PU2): no new ship can be placed beside it, only new aircraft on it; leave `port = true` "
        "out unless it is meant as an airfield"
    )


# ----- PU3: a cap below the forces the nation starts with -----


def test_pu3_a_cap_below_the_units_a_nation_starts_with_is_a_warning_at_the_cap(tmp_path: Path) -> None:
    # Britain starts with 2 battleships.
    ntr_max = 'ntr_max = { "North Sea" = 3, "Western Approaches" = 4 }\n'
    text = edited(template("caps"), ntr_max, ntr_max + "caps = { battleship = 1, cruiser = 1 }\n")
    board, lines = checked(tmp_path, text)
    caps = line_with(text, ntr_max) + 1
    assert lines == [
        f"{board}:{caps}: warning: nations.Britain.caps.battleship: Britain starts with "
        "2 battleships, more than its cap of 1 (PU3: the most it may have): raise the cap to at least 2, or "
        "start it with fewer",
        f"{board}: 0 errors, 1 warning (4 sea zones, 3 land territories, 2 nations, 7 unit groups)",
    ]
    # A cap the start reaches exactly (1 cruiser) is what the nation may have: nothing to say.
    text = edited(text, "battleship = 1, ", "battleship = 2, ")
    assert checked(tmp_path, text)[1][0].endswith(
        ": 0 errors, 0 warnings (4 sea zones, 3 land territories, 2 nations, 7 unit groups)"
    )
