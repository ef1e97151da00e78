"""Campaign files compressed with gzip: read whatever their name, when their first bytes say
so, a line at a time; written when the file's name ends in `.gz`; and what a file damaged on
its way (cut short, wrapped by a mail program) says of itself.

Groups mail and post long exports gzipped; the tracker reads them as they are, without
unpacking them first, and writes them so with `export FILE.jsonl.gz`.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO, cast

from domain.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
# Other packings a file might come in, refused by name rather than as "not UTF-8 text". None
# can begin a campaign export, whose first line is a JSON object.
_OTHER_PACKINGS = {
    b"PK\x03\x04": "zip archive",
    b"\xfd7zXZ\x00": "xz-compressed file",
    b"BZh": "bzip2-compressed file",
    b"\x28\xb5\x2f\xfd": "zstd-compressed file",
    b"7z\xbc\xaf\x27\x1c": "7z archive",
}
_HEAD = 6

# What reading a damaged or cut-short gzip file raises, line by line (`damage` words it).
DAMAGED = (EOFError, gzip.BadGzipFile, zlib.error)
# The gzip program's default: an export shrinks within a few per cent of level 9, in about
# two thirds of the time.
_LEVEL = 6


class _Rejoined:
    """A stream that can neither peek nor seek, its first bytes (read to recognise it) put
    back in front of the rest, which is read with `readline` only (all a file of lines must
    have), and never further than asked: nothing is read ahead of the line being checked."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def readline(self, limit: int = -1) -> bytes:
        if not self._head:
            return self._rest.readline(limit)
        if 0 <= limit < len(self._head):
            out, self._head = self._head[:limit], self._head[limit:]
            return out
        out, self._head = self._head, b""
        if out.endswith(b"\n"):
            return out
        return out + self._rest.readline(limit - len(out) if limit >= 0 else -1)

    # What gzip asks of its file: a short read is no end of it.
    read = readline


class _CarriageReturnLines:
    """A file whose lines end in a carriage return alone (as the classic Mac OS saved text, and
    some mail programs still convert it), read with `readline` as if each ended in "\n"; an
    "\n" or "\r\n" also ends a line. Safe: JSON writes no raw carriage return inside a value
    (a string escapes it as "\\r"; UTF-8 holds no 0x0D byte inside a character), so a CR is
    a line's end or whitespace the parser skips, and every event's hash is checked on its
    parsed content, not on the bytes of its line."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._buffer = bytearray(head)
        self._rest = rest
        self._ended = False

    def _more(self) -> bool:
        # `readline` with a size is all a stream of lines must have (`_Rejoined`): with no
        # "\n" in the file, it reads up to the size, as `read` would.
        chunk = b"" if self._ended else self._rest.readline(1 << 16)
        self._ended = not chunk
        self._buffer += chunk
        return bool(chunk)

    def readline(self, limit: int = -1) -> bytes:
        scanned = 0
        while True:
            ends = [i for i in (self._buffer.find(b"\r", scanned), self._buffer.find(b"\n", scanned)) if i != -1]
            if not ends:
                scanned = len(self._buffer)
                if 0 <= limit <= scanned or not self._more():
                    return self._take(scanned if limit < 0 else min(limit, scanned))
                continue
            end = min(ends)
            if end == len(self._buffer) - 1 and self._buffer[end] == 13 and self._more():
                continue  # a CR last in the buffer: an "\n" may follow it in what comes next
            if 0 <= limit <= end:
                return self._take(limit)
            line = self._take(end) + b"\n"
            del self._buffer[: 2 if self._buffer[:2] == b"\r\n" else 1]
            return line

    def _take(self, size: int) -> bytes:
        line = bytes(self._buffer[:size])
        del self._buffer[:size]
        return line


def old_mac_lines(first: bytes, rest: BinaryIO) -> BinaryIO | None:
    """The file read line by line when its first line, as `readline` found it (`first`), says
    its lines end in a carriage return alone: a CR inside it, with no "\n" at all, that is not
    the last of the whitespace at its end. None for any other file (a line ending in "\r\n",
    or "\r\r\n" from a mail relay converting it twice, is read as it always was)."""
    if b"\n" in first or b"\r" not in first.rstrip(b"\r\t "):
        return None
    return cast(BinaryIO, _CarriageReturnLines(first, rest))


def _first_bytes(stream: BinaryIO) -> tuple[bytes, BinaryIO]:
    """The stream's first bytes, and the stream to read from the start."""
    peek = getattr(stream, "peek", None)
    if peek is not None:
        return peek(_HEAD)[:_HEAD], stream
    seekable = getattr(stream, "seekable", None)
    if seekable is not None and seekable():
        at = stream.tell()
        head = stream.read(_HEAD)
        stream.seek(at)
        return head, stream
    head = stream.readline(_HEAD)
    return head, cast(BinaryIO, _Rejoined(head, stream))


def decompressing(stream: BinaryIO, source: str) -> BinaryIO:
    """The stream's plain bytes: a gzip stream (known by its magic bytes, not by its name) is
    decompressed as it is read, never whole. Another packing is refused (exit 2), naming it."""
    head, stream = _first_bytes(stream)
    if head.startswith(GZIP_MAGIC):
        return cast(BinaryIO, gzip.GzipFile(fileobj=stream, mode="rb"))
    for magic, kind in _OTHER_PACKINGS.items():
        if head.startswith(magic):
            raise InputError(
                f"{source} is a {kind}: the tracker reads campaign files plain or gzip-compressed; "
                "unpack it first (or send it gzipped)"
            )
    return stream


def damage(error: BaseException, lines: int) -> str:
    """What a `DAMAGED` error met after `lines` whole lines says of the file, in a user's words."""
    where = f"after line {lines}" if lines else "before its first line"
    if isinstance(error, EOFError):
        return f"the gzip data ends too soon, {where}: the file was cut short (in the copy, the upload or the mail?)"
    return f"the gzip data is damaged, {where} ({error})"


def broken_line(ends_in_newline: bool) -> str:
    """What a line whose JSON runs on past its end says of the file: without its newline, the
    file was cut short (a mail's size limit, a copy that stopped); with it, the line was broken
    in two (the file pasted into a mail's body, wrapped at its width)."""
    if not ends_in_newline:
        return (
            "the file ends inside this line, so it was cut short (in the copy, the upload or the mail?); "
            "ask for it again, as an attachment or gzipped"
        )
    return (
        "the line breaks off before its JSON ends, as when a mail program wraps long lines; "
        "send the file as an attachment (or gzipped), not pasted into the mail"
    )


def compressed(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """`chunks` gzip-compressed, a piece for each chunk: no name and no time in the gzip
    header, so the same bytes always compress to the same file."""
    sink = io.BytesIO()

    def drained() -> bytes:
        data = sink.getvalue()
        sink.seek(0)
        sink.truncate()
        return data

    with gzip.GzipFile(filename="", mode="wb", fileobj=sink, compresslevel=_LEVEL, mtime=0) as packed:
        for chunk in chunks:
            packed.write(chunk)
            if sink.tell():
                yield drained()
    yield drained()


def for_file(path: str, chunks: Iterable[bytes]) -> Iterable[bytes]:
    """A campaign file's bytes as written to `path`: gzip-compressed when its name ends in `.gz`."""
    return compressed(chunks) if path.lower().endswith(".gz") else chunks
