"""`tracker --help` and `--version` start without the storage stack (SQLAlchemy, eventsourcing's
persistence, the SQLAlchemy recorder, psycopg), and a cold `tracker state` with only the part of
it that reads a campaign: checked on the modules a fresh process imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

STORAGE = (
    "sqlalchemy",
    "eventsourcing.persistence",
    "eventsourcing.application",
    "eventsourcing_sqlalchemy",
    "psycopg",
)

PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
    "sys.argv = ['tracker', *json.loads(sys.argv[1])]\n"
    "from tracker.cli.main import main\n"
    "main()\n"
)


def imported_by(*args: str, cwd: Path | None = None) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def storage_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == s or m.startswith(s + ".") for s in STORAGE))


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["report", "--help"], ["export", "--help"]])
def test_help_and_version_import_no_storage(args: list[str]) -> None:
    assert storage_in(imported_by(*args)) == []


def test_a_command_that_reads_the_database_does_import_it(tmp_path: Path) -> None:
    modules = imported_by("--db", str(tmp_path / "c.db"), "new", "x", "--scenario", "north-sea-1914", cwd=tmp_path)
    assert "sqlalchemy" in modules and "eventsourcing_sqlalchemy" in modules


# What reading a campaign never needs: the library's ORM record classes and sqlalchemy-utils
# under them (which import SQLAlchemy's PostgreSQL, MSSQL and Oracle dialects), and the ORM.
NOT_FOR_READING = (
    "eventsourcing_sqlalchemy",
    "sqlalchemy_utils",
    "sqlalchemy.orm",
    "sqlalchemy.dialects.oracle",
    "sqlalchemy.dialects.mssql",
    "sqlalchemy.dialects.postgresql",
    "sqlalchemy.dialects.mysql",
    # The pure battle procedures: the referee imports them with the first battle it runs.
    "domain.procedures",
    # Only for an error's suggestions and for reading a TOML file.
    "difflib",
    "tomllib",
)


def test_a_cold_state_imports_only_what_it_reads_with(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    imported_by("--db", db, "new", "x", "--scenario", "north-sea-1914", cwd=tmp_path)
    modules = imported_by("--db", db, "state", cwd=tmp_path)
    assert "sqlalchemy.dialects.sqlite" in modules and "tracker.storage.recorder" in modules
    found = sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_FOR_READING))
    assert found == []


def test_the_event_tables_read_are_the_tables_the_library_creates() -> None:
    """The tracker reads and writes eventsourcing-sqlalchemy's tables through its own copy of
    their columns (which keeps the library off a command's start): the copy must be the
    library's table, column for column, on both databases."""
    from eventsourcing_sqlalchemy.datastore import SQLAlchemyDatastore
    from sqlalchemy.dialects import postgresql, sqlite
    from sqlalchemy.schema import CreateIndex, CreateTable

    from tracker.storage.datastore import event_table

    for for_snapshots, base in (
        (False, SQLAlchemyDatastore.base_stored_event_record_cls),
        (True, SQLAlchemyDatastore.base_snapshot_record_cls),
    ):
        name = f"startup_check_{'snapshots' if for_snapshots else 'events'}"
        theirs = SQLAlchemyDatastore.define_record_class(
            cls_name=name.title().replace("_", ""), table_name=name, schema_name=None, base_cls=base
        ).__table__
        ours = event_table(name, None, for_snapshots)
        for dialect in (sqlite.dialect(), postgresql.dialect()):
            assert str(CreateTable(ours).compile(dialect=dialect)) == str(CreateTable(theirs).compile(dialect=dialect))
            assert sorted(str(CreateIndex(i).compile(dialect=dialect)) for i in ours.indexes) == sorted(
                str(CreateIndex(i).compile(dialect=dialect)) for i in theirs.indexes
            )


# At exit: whether a function of the domain and one of the storage stack are still among the
# objects the collector walks (frozen ones are not).
FROZEN = (
    "import atexit, gc, sys\n"
    "def walked():\n"
    "    from domain.campaign import Campaign\n"
    "    from sqlalchemy.orm import Session\n"
    "    mine, theirs = Campaign.__init__, Session.commit\n"
    "    print([any(o is f for o in gc.get_objects()) for f in (mine, theirs)], file=sys.stderr)\n"
    "atexit.register(walked)\n"
    "sys.argv = ['tracker', *sys.argv[1:]]\n"
    "from tracker.cli.main import main\n"
    "main()\n"
)


def test_the_command_line_leaves_its_imports_out_of_garbage_collection(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    made = subprocess.run(
        [sys.executable, "-c", FROZEN, "--db", db, "new", "x", "--scenario", "north-sea-1914"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    # The domain imported with the command line, the storage stack imported by the command.
    assert made.stderr.strip().splitlines()[-1] == "[False, False]"


def test_a_caller_of_the_commands_keeps_its_garbage_collection(tmp_path: Path) -> None:
    import gc

    from click.testing import CliRunner

    from tracker.cli.main import cli

    before = gc.get_freeze_count()
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "c.db"), "new", "x", "--scenario", "north-sea-1914"])
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before


def test_the_help_listing_imports_no_command_module() -> None:
    modules = imported_by("--help")
    assert sorted(m for m in modules if m.startswith("tracker.") and m not in LISTING) == []


# What `tracker --help` may import of the tracker: the main group and its table of commands,
# and the types of its global options (click alone, and the terminal they are shown on).
LISTING = {
    "tracker.cli",
    "tracker.cli.main",
    "tracker.cli.catalog",
    "tracker.cli.startup",
    "tracker.cli.params",
    "tracker.cli.terminal",
}


def test_the_command_table_gives_each_command_its_own_one_line_help() -> None:
    import click

    from tracker.cli.main import COMMANDS, cli

    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name
        for limit in (45, 60, 200):
            assert cli.listed_help(name, limit) == command.get_short_help_str(limit), name


def test_python_dash_m_tracker_is_the_command_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "tracker", "-h"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("Usage: ")
