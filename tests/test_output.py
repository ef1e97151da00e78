"""Output files of export, report and stats: whole or not at all, never over the database,
a directory or a device (exit 2)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from domain.errors import InputError
from tracker.cli import output
from tracker.cli.main import cli

WRITERS = {
    "export": lambda target: ["export", target],
    "report": lambda target: ["report", "--all", "-o", target],
    "stats": lambda target: ["stats", "--csv", "-o", target],
}


def run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.output


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "d.db"
    assert run(path, "new", "autumn", "--scenario", "north-sea-1914")[0] == 0
    assert run(path, "next")[0] == 0
    return path


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_writing_over_the_open_database_is_refused(db: Path, command: str) -> None:
    before = digest(db)
    for target in (str(db), str(db) + "-wal", f"{db.parent}/./{db.name}"):
        code, out = run(db, *WRITERS[command](target))
        assert code == 2, out
        assert out.startswith("Error: ") and "is the database" in out and out.count("\n") == 1, out
    assert digest(db) == before
    code, out = run(db, "verify")
    assert code == 0 and out.startswith("OK:"), out


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_another_database_is_never_written_over(db: Path, tmp_path: Path, command: str) -> None:
    # `report -o league.db` meant for another file: another campaign's database stays whole.
    other = tmp_path / "league.db"
    assert run(other, "new", "spring", "--scenario", "north-sea-1914")[0] == 0
    before = digest(other)
    code, out = run(db, *WRITERS[command](str(other)))
    assert code == 2, out
    assert out == f"Error: {other}: is a SQLite database; write to another file\n"
    assert digest(other) == before
    assert run(other, "verify")[0] == 0


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_directory_or_a_device_is_refused(db: Path, tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    targets = [str(tmp_path), str(fifo)] + (["/dev/full"] if Path("/dev/full").exists() else [])
    for target in targets:
        code, out = run(db, *WRITERS[command](target))
        assert code == 2, (target, out)
        assert out.startswith(("Error: ", "Usage:")) and "Traceback" not in out, out
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    if Path("/dev/full").exists():
        assert stat.S_ISCHR(Path("/dev/full").stat().st_mode), "the device is still a device"


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_output_replaces_a_file_whole(db: Path, tmp_path: Path, command: str) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old contents\n")
    code, out = run(db, *WRITERS[command](str(target)))
    assert code == 0, out
    assert target.read_text() != "old contents\n" and target.stat().st_size > 0
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.md"
    target.write_text("old\n")

    def fail(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output.os, "replace", fail)
    with pytest.raises(InputError, match="No space left on device"):
        output.write_output(str(target), "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_a_new_file_gets_ordinary_permissions(tmp_path: Path) -> None:
    target = tmp_path / "stats.csv"
    output.write_output(str(target), "a,b\n")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "board.toml"
    target.write_text("old\n")
    target.chmod(0o640)
    output.write_output(str(target), "new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_symbolic_link_is_written_through_to_its_file(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "board.toml"
    real.write_text("old\n")
    link = tmp_path / "board.toml"
    link.symlink_to(real)
    output.write_output(str(link), "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["board.toml"]


def test_a_link_to_the_open_database_is_refused(db: Path, tmp_path: Path) -> None:
    link = tmp_path / "looks-like-a-report.md"
    link.symlink_to(db)
    with pytest.raises(InputError, match="is the database in use"):
        output.write_output(str(link), "x", [db])


def test_a_hard_linked_file_is_written_for_every_name(tmp_path: Path) -> None:
    one = tmp_path / "board.toml"
    one.write_text("old\n")
    other = tmp_path / "copy.toml"
    os.link(one, other)
    output.write_output(str(one), iter([b"new ", b"text\n"]))
    assert one.read_text() == other.read_text() == "new text\n"
    assert one.stat().st_nlink == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["board.toml", "copy.toml"]
