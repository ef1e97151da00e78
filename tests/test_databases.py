"""Database files: reading never creates one, a read-only file or folder can still be read,
a damaged file is one line naming it, and a campaign name is one printable line."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracker.cli.main import cli

READERS = [
    ["state"],
    ["log"],
    ["pending"],
    ["verify"],
    ["campaigns"],
    ["report", "--all"],
    ["explain", "1"],
    ["export", "-"],
    ["map"],
    ["units"],
]


def invoke(db: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", db, *args])
    return result.exit_code, result.output


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_reading_a_database_that_does_not_exist_says_so_and_creates_nothing(tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "missing.db"
    code, out = invoke(str(db), *args)
    assert code == 2
    assert out.startswith(f"Error: no database at {str(db)!r}") and out.count("\n") == 1
    assert not db.exists() and list(tmp_path.iterdir()) == []


def test_a_recording_command_on_a_missing_database_creates_nothing_either(tmp_path: Path) -> None:
    db = tmp_path / "missing.db"
    code, out = invoke(str(db), "next")
    assert code == 2 and "no database at" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_reading_an_empty_database_file_says_so_and_writes_nothing(tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "empty.db"
    db.touch()
    code, out = invoke(str(db), *args)
    assert (code, out) == (
        2,
        f"Error: no campaign in {str(db)!r} (an empty database): create one with `tracker new NAME --scenario S` "
        "or `tracker import FILE`, or name another with --db\n",
    )
    assert db.stat().st_size == 0 and list(tmp_path.iterdir()) == [db]


@pytest.mark.parametrize("args", [*READERS, ["next"], ["new", "autumn", "--scenario", "north-sea-1914"]], ids=str)
def test_no_command_writes_into_another_programs_sqlite_database(tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "notes.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.commit()
    conn.close()
    before = _digest(tmp_path)
    code, out = invoke(str(db), *args)
    assert (code, out) == (
        2,
        f"Error: {str(db)!r} is another program's SQLite database (tables: notes): "
        "give the tracker a file of its own with --db\n",
    )
    assert _digest(tmp_path) == before


def test_new_takes_an_empty_database_file(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    db.touch()
    assert invoke(str(db), "new", "autumn", "--scenario", "north-sea-1914")[0] == 0
    assert invoke(str(db), "state")[0] == 0


def test_new_and_import_create_the_database(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    assert invoke(str(db), "new", "autumn", "--scenario", "north-sea-1914")[0] == 0
    export = tmp_path / "autumn.jsonl"
    assert invoke(str(db), "export", str(export))[0] == 0
    other = tmp_path / "other.db"
    code, out = invoke(str(other), "import", str(export))
    assert code == 0, out
    assert other.exists()


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def read_only_db(tmp_path: Path) -> Iterator[Path]:
    """A campaign with a few events in a folder and file nobody may write."""
    folder = tmp_path / "shared"
    folder.mkdir()
    db = folder / "c.db"
    invoke(str(db), "new", "autumn", "--scenario", "north-sea-1914")
    invoke(str(db), "research", "advanced_asw")
    invoke(str(db), "next")
    db.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    yield db
    folder.chmod(stat.S_IRWXU)
    db.chmod(stat.S_IRUSR | stat.S_IWUSR)


@pytest.mark.parametrize(
    "args",
    [["state"], ["state", "--turn", "1"], ["log"], ["verify"], ["report", "--turn", "1"], ["explain", "2"]],
    ids=lambda a: " ".join(a),
)
def test_a_read_only_database_can_still_be_read_and_stays_untouched(read_only_db: Path, args: list[str]) -> None:
    before = _digest(read_only_db.parent)
    code, out = invoke(str(read_only_db), *args)
    assert code == 0, out
    assert _digest(read_only_db.parent) == before  # no byte changed, no journal or WAL file left


def test_a_read_only_database_reads_the_same_as_a_writable_one(read_only_db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    copy.write_bytes(read_only_db.read_bytes())
    for args in (["log", "--json"], ["state", "--json"]):
        assert json.loads(invoke(str(read_only_db), *args)[1]) == json.loads(invoke(str(copy), *args)[1])


def test_a_read_only_database_refuses_to_record_in_one_line(read_only_db: Path) -> None:
    before = _digest(read_only_db.parent)
    for args in (["next"], ["undo"], ["dice", "reveal"], ["projections", "rebuild"]):
        code, out = invoke(str(read_only_db), *args)
        assert code == 2, out
        assert out.endswith("is read-only: it can be read, not recorded to\n") and out.count("\n") == 1
    assert _digest(read_only_db.parent) == before


def test_a_damaged_database_is_one_line_naming_the_file(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    invoke(str(db), "new", "autumn", "--scenario", "north-sea-1914")
    for _ in range(3):
        invoke(str(db), "next")
    data = bytearray(db.read_bytes())
    # Overwrite every page but the first (the schema): the tables' pages are garbage now.
    data[4096:] = b"\xab" * (len(data) - 4096)
    db.write_bytes(bytes(data))
    for args in (["state"], ["log"], ["report", "--all"], ["verify"]):
        code, out = invoke(str(db), *args)
        assert code == 2, (args, out)
        assert out.count("\n") == 1 and "c.db" in out and "Traceback" not in out, out
        assert "unexpected" not in out


def test_a_database_file_cut_short_is_damaged_not_empty(tmp_path: Path) -> None:
    """Its first 5,000 bytes (a copy stopped half-way) read as "no campaign ... (an empty
    database)"."""
    db = tmp_path / "c.db"
    invoke(str(db), "new", "autumn", "--scenario", "north-sea-1914")
    cut = tmp_path / "cut.db"
    cut.write_bytes(db.read_bytes()[:5000])
    for args in (["state"], ["log"], ["new", "b", "--scenario", "north-sea-1914"]):
        code, out = invoke(str(cut), *args)
        assert code == 2, (args, out)
        assert out.startswith(f"Error: database {str(cut)!r} is damaged (database disk image is malformed)"), out
        assert out.count("\n") == 1


@pytest.mark.parametrize("name", ["two\nlines", "tab\there", "bell\x07", "line\u2028sep"])
def test_a_campaign_name_with_a_newline_or_control_character_is_refused(tmp_path: Path, name: str) -> None:
    db = tmp_path / "c.db"
    code, out = invoke(str(db), "new", name, "--scenario", "north-sea-1914")
    assert code == 2
    assert out.startswith("Error: a campaign name may not contain control characters") and out.count("\n") == 1
    invoke(str(db), "new", "fine", "--scenario", "north-sea-1914")
    invoke(str(db), "export", str(tmp_path / "x.jsonl"))
    code, out = invoke(str(db), "import", str(tmp_path / "x.jsonl"), "--as", name)
    assert code == 2 and "control characters" in out
    assert json.loads(invoke(str(db), "campaigns", "--json")[1]) == ["fine"]


def test_a_campaign_name_is_one_name_in_any_unicode_normal_form(tmp_path: Path) -> None:
    """ "Nörd sea" typed with a combining diaeresis made a second campaign looking exactly like
    the first, and `--campaign` typed the other way found neither."""
    db = str(tmp_path / "c.db")
    composed, decomposed = "N\u00f6rd sea", "No\u0308rd sea"
    assert invoke(db, "new", decomposed, "--scenario", "north-sea-1914")[0] == 0
    code, out = invoke(db, "new", composed, "--scenario", "north-sea-1914")
    assert code == 2 and "already exists" in out, out
    assert json.loads(invoke(db, "campaigns", "--json")[1]) == [composed]
    for typed in (composed, decomposed, f" {composed} "):
        code, out = invoke(db, "--campaign", typed, "state", "--json")
        assert code == 0 and json.loads(out)["round"] == 1, out


def test_an_edited_event_row_is_one_line_naming_the_event(tmp_path: Path) -> None:
    """A stored event cut in half outside the tracker: every command meeting it says which
    event, as `verify` does, never the library's "unexpected" error."""
    db = tmp_path / "c.db"
    invoke(str(db), "new", "autumn", "--scenario", "north-sea-1914")
    invoke(str(db), "research", "advanced_asw")
    conn = sqlite3.connect(db)
    (state,) = conn.execute("SELECT state FROM tracker_events WHERE originator_version = 3").fetchone()
    conn.execute("UPDATE tracker_events SET state = ? WHERE originator_version = 3", (state[: len(state) // 2],))
    conn.commit()
    conn.close()
    code, out = invoke(str(db), "explain", "3")
    assert (code, out) == (
        1,
        "Error: event 3 cannot be read (MapperDeserialisationError): the stored row was edited; run `tracker verify`\n",
    )
    code, out = invoke(str(db), "verify")
    assert code == 1 and "FAILED: event 3 cannot be read (MapperDeserialisationError): the stored row was edited" in out
    for args in (["report", "--all"], ["export", str(tmp_path / "x.jsonl")]):
        code, out = invoke(str(db), *args)
        assert code == 1 and "event 3" in out and "unexpected" not in out, out


@pytest.fixture
def empty_pg(pg_url: str) -> Iterator[str]:
    """A PostgreSQL database of its own with no table at all (a mistyped name that is another
    database, or a new one); skipped with pg_url where no server answers."""
    import uuid

    import psycopg
    from sqlalchemy.engine import make_url

    name = f"tracker_test_{uuid.uuid4().hex[:12]}_empty"
    admin = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(pg_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _pg_tables(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        return [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_reading_a_postgresql_database_without_tracker_tables_says_so_and_creates_none(
    empty_pg: str, args: list[str]
) -> None:
    code, out = invoke(empty_pg, *args)
    assert code == 2, out
    assert out.startswith("Error: no campaign in postgresql+psycopg://") and "has no tracker tables" in out
    # A league's database starts with its referee, not with a campaign.
    assert "tracker players add NAME --referee --league" in out
    assert out.count("\n") == 1
    assert _pg_tables(empty_pg) == []
    # The commands that make a campaign still make the tables there.
    assert invoke(empty_pg, "new", "autumn", "--scenario", "north-sea-1914")[0] == 0
    assert invoke(empty_pg, *args)[0] == 0
