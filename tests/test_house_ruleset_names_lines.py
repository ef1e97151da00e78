"""A house ruleset a new campaign is made from, second pass:

- A unit type named with a character the commands split at (`sea,plane`, `sea:plane`,
  `sea=plane`), with a control character, spaces around it or alike another but for case loaded
  and could be bought, but `odds --attacker NATION:TYPE=N`, `adjust --add NATION:TYPE:ZONE` or
  `buy` could not name it. A new campaign's ruleset file is refused naming the type and the
  character; a campaign that recorded one keeps loading and verifying.
- The refusal of a ruleset file named no line where a scenario's does: it is said at the line
  of the key now (`house.toml:80: units.cruiser.attack: ...`), by `tracker new --ruleset`,
  `scenario check --ruleset` and the scenario that names the file alike."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

import domain.ruleset
from domain.errors import DataFileError
from domain.ruleset import load_ruleset
from tracker.cli.main import cli

BUILTIN = resources.files("domain.data").joinpath("rulesets", "twtea-3e.toml").read_text(encoding="utf-8")
SEAPLANE = """
[units.{name}]
category = "air"
class = "air"
abbr = "SP"
attack = 2
defense = 2
move = 4
hits = 1
cost = 6
"""


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def line_of(text: str, written: str) -> int:
    """The line of a text that `written` begins on (counted here, not by the tracker)."""
    return text[: text.index(written)].count("\n") + 1


def with_type(tmp_path: Path, name: str) -> tuple[Path, int]:
    """The built-in ruleset with one more unit type, named `name` as TOML writes it (a quoted
    key), and the line of its header."""
    house = tmp_path / "house.toml"
    text = BUILTIN + SEAPLANE.format(name=json.dumps(name))
    house.write_text(text, encoding="utf-8")
    return house, line_of(text, f"[units.{json.dumps(name)}]")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("sea,plane", "'sea,plane': a unit type name may not contain a comma (`odds --attacker NATION:TYPE=N,TYPE=N`"),
        ("sea:plane", "'sea:plane': a unit type name may not contain ':' (`odds --attacker NATION:TYPE=N` and "
         "`adjust --add NATION:TYPE:ZONE` split their values at it)"),
        ("sea=plane", "'sea=plane': a unit type name may not contain '=' (`odds --attacker NATION:TYPE=N` splits"),
        ("sea\x1bplane", "'sea\\x1bplane': a unit type name may not contain control characters such as '\\x1b'"),
        (" seaplane", "' seaplane': a unit type name may not begin or end with spaces"),
        ("", "a unit type needs a name: '' is empty"),
    ],
)  # fmt: skip
def test_a_unit_type_the_commands_cannot_name_is_refused_at_its_line(tmp_path: Path, name: str, problem: str) -> None:
    house, line = with_type(tmp_path, name)
    db = str(tmp_path / "c.db")
    out = run("--db", db, "new", "c", "--scenario", "north-sea-1914", "--ruleset", str(house), code=2)
    key = "units." + name.replace("\x1b", "\\x1b")
    assert out.startswith(f"Error: {house}:{line}: {key}: {problem}")
    # One line: the escape character is said, never sent to the terminal.
    assert len(out.strip().split("\n")) == 1 and "\x1b" not in out
    assert not Path(db).exists()
    # The ruleset is refused whatever reads it as a user's file.
    assert f"{house}:{line}: {key}: {problem}" in run(
        "scenario", "check", "north-sea-1914", "--ruleset", str(house), code=2
    )


def test_two_unit_types_alike_but_for_case_are_refused_at_the_later(tmp_path: Path) -> None:
    house, line = with_type(tmp_path, "Fighter")
    with pytest.raises(DataFileError) as refused:
        load_ruleset(str(house))
    first = line_of(BUILTIN, "[units.fighter]")
    assert str(refused.value) == (
        f"{house}:{line}: units.Fighter: unit types 'fighter' and 'Fighter' differ only in case, spaces, '-', '_' or "
        "how their letters are encoded: the commands, which take a type whatever its case, could not tell them apart "
        f"(also at line {first})"
    )


def test_a_unit_type_with_a_space_is_typed_back(tmp_path: Path) -> None:
    house, _ = with_type(tmp_path, "sea plane")
    db = str(tmp_path / "c.db")
    run("--db", db, "new", "c", "--scenario", "north-sea-1914", "--ruleset", str(house))
    fight = ("odds", "naval", "--attacker", "Germany:sea plane=1", "--defender", "Britain:destroyer=1", "--json")
    assert json.loads(run("--db", db, *fight))["holder"]
    run("--db", db, "next", "--to", "purchase")
    assert "Germany buys 1 sea plane for 6" in run("--db", db, "buy", "Sea_Plane")


def test_a_campaign_that_recorded_such_a_name_keeps_loading_and_verifying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made as an older tracker made it, before names were checked: read as recorded."""
    house, _ = with_type(tmp_path, "sea,plane")
    db = str(tmp_path / "c.db")
    with monkeypatch.context() as older:
        older.setattr(domain.ruleset, "check_new_ruleset", lambda data, source: None, raising=False)
        run("--db", db, "new", "c", "--scenario", "north-sea-1914", "--ruleset", str(house))
    run("--db", db, "next", "--to", "purchase")
    assert "Germany buys 1 sea,plane for 6" in run("--db", db, "buy", "sea,plane")
    assert json.loads(run("--db", db, "state", "--json"))["phase"] == "purchase"
    run("--db", db, "verify")


def test_a_value_of_a_ruleset_file_is_refused_at_its_line(tmp_path: Path) -> None:
    house = tmp_path / "house.toml"
    text = BUILTIN.replace('abbr = "CA"\nattack = 5', 'abbr = "CA"\nattack = "five"', 1)
    house.write_text(text, encoding="utf-8")
    line = line_of(text, 'attack = "five"')
    said = f"{house}:{line}: units.cruiser.attack: expected an integer, got a string"
    assert run(
        "--db", str(tmp_path / "c.db"), "new", "c", "--scenario", "north-sea-1914", "--ruleset", str(house), code=2
    ) == (f"Error: {said}\n")
    assert run("scenario", "check", "north-sea-1914", "--ruleset", str(house), code=2) == f"Error: {said}\n"
    # Named by a scenario beside it: its one finding quotes the ruleset's line.
    board = tmp_path / "board.toml"
    board.write_text(
        resources.files("domain.data")
        .joinpath("scenarios", "north-sea-1914.toml")
        .read_text(encoding="utf-8")
        .replace('ruleset = "twtea-3e"', 'ruleset = "house.toml"', 1),
        encoding="utf-8",
    )
    assert said in run("scenario", "check", str(board), code=1)
    assert said in run("--db", str(tmp_path / "c.db"), "new", "c", "--scenario", str(board), code=2)
    assert not (tmp_path / "c.db").exists()


def test_a_missing_table_a_repeated_abbr_and_toml_itself_are_said_at_their_lines(tmp_path: Path) -> None:
    house = tmp_path / "house.toml"
    text = BUILTIN.replace('abbr = "CA"', 'abbr = "DD"', 1)
    house.write_text(text, encoding="utf-8")
    # The repeat is the cruiser's, below the destroyer's.
    repeated = text[: text.index('abbr = "DD"', text.index("[units.cruiser]"))].count("\n") + 1
    with pytest.raises(
        DataFileError, match=f"^{re.escape(str(house))}:{repeated}: units.cruiser.abbr: 'DD' is destroyer's abbr too"
    ):
        load_ruleset(str(house))
    house.write_text('[ruleset]\nname = "x"\n\n[dice]\nfaces = 6\n', encoding="utf-8")
    with pytest.raises(DataFileError, match=f"^{re.escape(str(house))}:4: dice.default_faces: missing required key$"):
        load_ruleset(str(house))
    house.write_text('[ruleset]\nname = "x"\n[units\n', encoding="utf-8")
    with pytest.raises(DataFileError) as refused:
        load_ruleset(str(house))
    assert str(refused.value) == f"{house}:3: units: not valid TOML (Expected ']' at the end of a table declaration)"


def test_an_abbreviation_alike_another_but_for_case_is_refused(tmp_path: Path) -> None:
    """Unit IDs are made of it and typed in any case: a cruiser's `Dd` made GB-Dd1, which took
    the place of the destroyer GB-DD1 in whatever a player typed."""
    house = tmp_path / "house.toml"
    text = BUILTIN.replace('abbr = "CA"', 'abbr = "Dd"', 1)
    house.write_text(text, encoding="utf-8")
    later, first = line_of(text, 'abbr = "Dd"'), line_of(text, 'abbr = "DD"')
    out = run(
        "--db", str(tmp_path / "c.db"), "new", "c", "--scenario", "north-sea-1914", "--ruleset", str(house), code=2
    )
    assert out == (
        f"Error: {house}:{later}: units.cruiser.abbr: 'Dd' differs from destroyer's abbr 'DD' only in case: each type "
        "needs its own (unit IDs are made of it, and commands take them whatever their case) "
        f"(also at line {first})\n"
    )
