"""Files the tracker writes (exports, reports, statistics): whole or not at all, and never
over the database itself, a directory or a device.

The text goes to a temporary file in the target's folder, which is renamed into place once
complete, so a full disk or a crash never leaves half a file, and an existing file is only
ever replaced by a complete one. A symbolic link is written through; a replaced file keeps its
permissions; a file with other hard-linked names is written in place once the new text is whole
(renaming would split it from them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from domain.errors import InputError

# The files SQLite keeps beside a database: writing over any of them damages it.
_SQLITE_SIDE_FILES = ("", "-wal", "-shm", "-journal")
# The first bytes of every SQLite database file.
_SQLITE_HEADER = b"SQLite format 3\x00"


def check_output(path: str, protected: Iterable[Path] = ()) -> Path:
    """The path to write, refused (exit 2) if it names a protected file (the open database),
    a directory, a device or anything else that is not a regular file."""
    target = Path(path).expanduser()
    for db in protected:
        for suffix in _SQLITE_SIDE_FILES:
            guarded = Path(str(db) + suffix)
            if _same_file(target, guarded):
                what = f"the database's {suffix[1:]} file" if suffix else "the database"
                raise InputError(f"{path}: is {what} in use; write to another file")
    try:
        info = target.stat()
    except FileNotFoundError:
        info = None
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{path}: is a directory; give a file name")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(
                f"{path}: is not a regular file (a device or a pipe?); give a file name, or '-' for stdout"
            )
        if _is_sqlite(target):
            # Another campaign's database (or any program's) is never written over by a report
            # or an export named after it by a slip of the keyboard.
            raise InputError(f"{path}: is a SQLite database; write to another file")
    if not target.parent.is_dir():
        raise InputError(f"cannot write {path}: folder {str(target.parent)!r} does not exist")
    return target


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:
        return False  # unreadable: writing it says why


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        # Either does not exist (yet): compare the paths as they would resolve.
        return a.resolve() == b.resolve()


def write_output(path: str, text: str | Iterable[bytes], protected: Iterable[Path] = ()) -> int:
    """Write `text` as UTF-8 (or its UTF-8 chunks, for output too long to hold whole) to `path`
    through a temporary file renamed into place; returns the number of bytes written. Refuses
    what `check_output` refuses. A symbolic link is written through to its file, and a file
    replaced keeps its permissions (a private scenario or report stays private)."""
    target = check_output(path, list(protected))
    if target.is_symlink():
        # Renaming onto the link would replace the link with a file and leave its file as it was.
        target = target.resolve()
        if not target.parent.is_dir():
            raise InputError(f"cannot write {path}: folder {str(target.parent)!r} does not exist")
    try:
        old = target.stat()
    except OSError:
        old = None
    # Renamed into place, a file's other (hard-linked) names would keep the old text: the whole
    # new text, written first, is copied into it instead.
    linked = old is not None and old.st_nlink > 1
    chunks = [text.encode("utf-8")] if isinstance(text, str) else text
    written = 0
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w+b") as f:
            for chunk in chunks:
                written += f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
            if linked:
                f.seek(0)
                with target.open("r+b") as into:
                    into.truncate(0)
                    shutil.copyfileobj(f, into)
                    into.flush()
                    os.fsync(into.fileno())
        if linked:
            Path(tmp).unlink()
        else:
            _same_permissions(tmp, old)
            os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return written


def _same_permissions(tmp: str, old: os.stat_result | None) -> None:
    """The replacing file gets the replaced one's mode (and owner, where the user may give it);
    a new file the mode a new file would get (mkstemp makes it private)."""
    if old is None:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        return
    os.chmod(tmp, stat.S_IMODE(old.st_mode))
    if hasattr(os, "chown"):
        # Giving a file away takes root: otherwise it stays the writer's.
        with contextlib.suppress(OSError):
            os.chown(tmp, old.st_uid, old.st_gid)
