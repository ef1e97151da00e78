"""Tab completes a name as the commands find it: in any case and without its accents (`show det`
completes `Détroit d'Öresund`, as `tracker show "detroit d'oresund"` finds the zone), for every
kind of name completed (zones, nations, technologies, unit types), in `tracker shell` and in
bash alike; the name goes on the line as the scenario writes it, quoted as the shell needs.
Typed without accents, nothing was offered; bash also broke a name holding a `'` completed after
an opening `'` (`'Détroit d'Öresund'`, an open quote)."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import cli_on
from tests.test_bash_completion import BASH, bash_completes, needs_bash
from tracker.cli.common import Context
from tracker.cli.completion import completions, matching
from tracker.cli.main import cli

ZONE = "Détroit d'Öresund"
NATION = "Österreich-Ungarn"
TECHNOLOGY = "écoute_avancée"
UNIT_TYPE = "croiseur_cuirassé"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """north-sea-1914 with Skagerrak, Austria-Hungary, advanced_asw and cruiser renamed with
    accents (a house ruleset for the last two)."""
    folder = tmp_path_factory.mktemp("accents")
    run = cli_on(str(folder / "c.db"))
    run("scenario", "new", "board", "--from", "north-sea-1914", "-o", str(folder / "board.toml"))
    run("rulesets", "--copy", "twtea-3e", "-o", str(folder / "house.toml"))
    renamed = {
        "Skagerrak": ZONE,
        "[nations.Austria-Hungary]": f'[nations."{NATION}"]',
        "Austria-Hungary": NATION,
        "tech = { advanced_asw =": f'tech = {{ "{TECHNOLOGY}" =',
        '"advanced_asw"': f'"{TECHNOLOGY}"',
        "[units.cruiser]": f'[units."{UNIT_TYPE}"]',
        '"cruiser"': f'"{UNIT_TYPE}"',
        "type = cruiser": f'type = "{UNIT_TYPE}"',
    }
    for name in ("board.toml", "house.toml"):
        path = folder / name
        text = path.read_text(encoding="utf-8")
        for old, new in renamed.items():
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    run("new", "acc", "--scenario", str(folder / "board.toml"), "--ruleset", str(folder / "house.toml"))
    return str(folder / "c.db")


@pytest.fixture
def obj(db: str) -> Iterator[Context]:
    obj = Context(db, None)
    obj.load()
    yield obj
    obj.close()


def shell_completes(obj: Context, text: str) -> list[str]:
    from prompt_toolkit.document import Document

    from tracker.cli.shell_prompt import completer

    return [c.text for c in completer(cli, obj).get_completions(Document(text), None)]


QUOTED = "'Détroit d'\"'\"'Öresund'"  # as shlex quotes it: read back as the zone's name


@pytest.mark.parametrize(
    "text",
    [
        "show det",
        "show DET",
        "show 'detroit d",
        "show detroit d",  # words typed unquoted: read as the name, quoted
        "show detroit-d",  # '-' as the commands read it: a space
        "move de-ss1 --to det",
    ],
)
def test_the_shell_completes_a_zone_typed_without_its_accents(obj: Context, text: str) -> None:
    assert shell_completes(obj, text) == [QUOTED]


def test_after_a_double_quote_the_zone_stays_in_it(obj: Context) -> None:
    assert shell_completes(obj, "show \"detroit d'o") == [f'"{ZONE}"']


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("log --nation oste", NATION),
        ("log --nation OSTERREICH U", NATION),
        ("research ecou", TECHNOLOGY),
        ("research ecoute a", TECHNOLOGY),
        ("buy croiseur_cuirasse", UNIT_TYPE),
        ("odds need --zone 'Northern North Sea' --type CROISEUR-CUIRAS", UNIT_TYPE),
        ("odds need --zone det", ZONE),
        ("log --zone det", ZONE),
    ],
)
def test_every_kind_of_name_completes_without_its_accents(obj: Context, text: str, name: str) -> None:
    # As the shell reads the completion back (a name typed over several words comes quoted).
    assert [shlex.split(c)[0] for c in shell_completes(obj, text)] == [name]


def test_click_completion_offers_the_names_as_written(db: str) -> None:
    """What bash, zsh and fish are handed (`_TRACKER_COMPLETE`): the same completers."""
    found = completions(cli, ["--db", db, "log", "--nation"], "oste")
    assert [i.value for i in found] == [NATION]
    found = completions(cli, ["--db", db, "show"], "detroit d'")
    assert [i.value for i in found] == [ZONE]


def test_typed_with_an_accent_only_the_names_with_it_are_offered() -> None:
    names = [("Crète", ""), ("Crête", ""), ("Creta", ""), ("Ölmühle", "")]
    assert [i.value for i in matching(names, "cre")] == ["Crète", "Crête", "Creta"]
    assert [i.value for i in matching(names, "Crè")] == ["Crète"]
    # An accent no name has there: as the command finds 'crëte', without the accents.
    assert [i.value for i in matching(names, "crë")] == ["Crète", "Crête", "Creta"]
    assert [i.value for i in matching(names, "olmuh")] == ["Ölmühle"]
    # The last zone of a path, those before it kept as typed.
    assert [i.value for i in matching(names, "Ölmühle,cret")] == ["Ölmühle,Crète", "Ölmühle,Crête", "Ölmühle,Creta"]


@needs_bash
@pytest.mark.parametrize(
    ("word", "reply", "closed"),
    [
        ("det", "Détroit\\ d\\'Öresund", ""),
        ("'det", "Détroit d'\\''Öresund", "'"),
        ('"det', "Détroit d'Öresund", '"'),
    ],
)
def test_bash_completes_the_zone_as_one_word_it_reads_back(
    tmp_path: Path, db: str, word: str, reply: str, closed: str
) -> None:
    assert bash_completes(tmp_path, db, "show", word) == [reply]
    # As bash puts it on the line: after the opening quote typed, and the quote closed.
    assert BASH is not None
    line = f"{closed}{reply}{closed}"
    words = subprocess.run([BASH, "--norc", "-c", f'set -- {line}; echo "$#:$1"'], capture_output=True, text=True)
    assert words.stdout == f"1:{ZONE}\n"


@needs_bash
def test_bash_completes_a_nation_without_its_accents(tmp_path: Path, db: str) -> None:
    assert bash_completes(tmp_path, db, "log", "--nation", "osterr") == [NATION]
