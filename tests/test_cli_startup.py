"""`tracker --help` and `--version` start without the storage stack (SQLAlchemy, eventsourcing's
persistence, the SQLAlchemy recorder, psycopg): checked on the modules a fresh process imported."""

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
    "from tracker.cli import main\n"
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
