"""Wrapping a line to the terminal between words without ending a line inside a name of several
words ("Central North / Sea") or a command to copy: what `fit_prose` (prose), `fit_error`
(refusals) and `show`'s listings share."""

from __future__ import annotations

import re
import textwrap

from tracker.cli.suggest import glued, unglued

# A zone's (or a nation's) name of several words: capitalised words, with the small words that
# join them ("Central South Atlantic", "Bay of Biscay", "Canaries and Cape Verde").
_WORD = r"[A-Z][\w.'&-]*"
_NAME = rf"{_WORD}(?: (?:(?:of|and|the|de|la|del|du) )*{_WORD})+"
# Such a name in a list: after or before a "/" ("retreat to North Sea/Bay of Biscay") or a
# comma ("legal: Northern Anatolia, Crimea"; "--path 'Dogger Bank,Heligoland Bight'").
_LISTED = re.compile(rf"(?:(?<=/)|(?<=,)|(?<=, )){_NAME}|{_NAME}(?=[/,])")
# A quoted name or list of them in a command to copy (--path 'Heligoland Bight,Dogger Bank').
_QUOTED = re.compile(r"""(?<![\w'"])(?:'[^'\n]+'|"[^"\n]+")(?!\w)""")
# Stands for a space inside such a name while a line is wrapped (as `glued` does for commands).
_NAME_GLUE = "\ue001"
# Where a list of names may break after its "/" (before the next name's capital).
_AFTER_SLASH = re.compile(r"(?<=[\w)]/)(?=[A-Z])")
# A file's path or a URL (/home/Anna/house.toml, ./Boards/my.toml, https://...): its "/" is no
# list's, and a path broken across lines cannot be copied.
_PATH = re.compile(r"""^['"(]?(?:/|~|\.{1,2}/|[\w+.-]+://)""")


def _at_slashes(chunk: str) -> list[str]:
    """`chunk` split where a list of names may break after a "/", unless it is a path or a URL."""
    return [chunk] if _PATH.match(chunk) else _AFTER_SLASH.split(chunk)


def wrapped_keeping_names(text: str, width: int, indent: str = "", under: str = "") -> list[str]:
    """The lines of `text` wrapped between words at `width` columns, the first indented by
    `indent`, the others by `under`: never inside a command to copy in backquotes (`glued`)
    nor inside a name of several words where it is one of a list or quoted in a command
    (`_names_kept`), as long as the name fits on a line of its own."""
    wrapper = _Wrapper(
        width, initial_indent=indent, subsequent_indent=under, break_long_words=False, break_on_hyphens=False
    )
    lines = wrapper.wrap(glued(_names_kept(text, width - len(under))))
    if any(len(row) > width for row in lines):
        # A list of names with no room to break between them: broken between words instead.
        lines = wrapper.wrap(glued(text))
    return [unglued(row).replace(_NAME_GLUE, " ") for row in lines]


def _names_kept(text: str, room: int) -> str:
    """`text` with the spaces of each name of several words in a list, and of each quoted span
    of a command, made part of one word, so wrapping never ends a line inside one ("Central
    South / Atlantic"); only where the name fits on a line of its own (`room` columns), so that
    no line grows past the terminal."""

    def keep(m: re.Match[str]) -> str:
        found = m.group()
        return found.replace(" ", _NAME_GLUE) if len(found) <= room else found

    def fits(word: str) -> bool:
        return all(len(piece) <= room for piece in _at_slashes(word))

    kept = _LISTED.sub(keep, _QUOTED.sub(keep, text)).split(" ")
    # A word made of several names with no break between them ('A B,C D'), too long for a
    # line, goes back to breaking between its words.
    return " ".join(w if fits(w) else w.replace(_NAME_GLUE, " ") for w in kept)


class _Wrapper(textwrap.TextWrapper):
    """textwrap's, which may also end a line after the "/" of a list of names ("North Sea/" and
    "Bay of Biscay" on the next), as its names are kept whole; never inside a command to copy."""

    def _split(self, text: str) -> list[str]:
        chunks = super()._split(text)
        return [piece for chunk in chunks for piece in ([chunk] if "`" in chunk else _at_slashes(chunk))]
