"""What the command line takes: the click parameter types of the numbers, names and dice a user
types, and the one line a usage error prints.

A value these types refuse is bad usage (exit 2), said before the command opens the database
or records anything. The module imports click alone: the main group's global options use it,
and `tracker --help` must stay as quick as importing click.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from tracker.cli.terminal import CLIENT_TERMINAL as CLIENT_TERMINAL
from tracker.cli.terminal import terminal_width as terminal_width

# Every number a command takes fits a PostgreSQL INTEGER column (and so SQLite's): larger
# ones are refused as bad usage (exit 2) before anything reaches the database.
MAX_INT = 2**31 - 1

# Digits as a keyboard types them: Python's int() and float() also take other scripts' digits
# ("٥" is 5) and underscores ("1_0"), which would go into the record as something not typed.
_WHOLE = re.compile(r"[+-]?[0-9]+")
_REAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class Expected(click.BadParameter):
    """A value refused by saying what was expected: printed as `HINT: MESSAGE`, the option or
    argument named first, without click's "invalid value for"."""


def _bounds(low: float | None, high: float | None, low_open: bool = False, high_open: bool = False) -> str:
    """A range in words: "of at least 1", "from 0 to 1000", "more than 0 and at most 1"."""
    # The database's limits are not the option's: not worth saying.
    low = None if low is not None and low <= -MAX_INT else low
    high = None if high is not None and high >= MAX_INT else high
    if low is not None and high is not None and not (low_open or high_open):
        return f" from {low:g} to {high:g}"
    words = []
    if low is not None:
        at_least = f"of at least {low:g}" if high is None else f"at least {low:g}"
        words.append(f"more than {low:g}" if low_open else at_least)
    if high is not None:
        words.append(f"less than {high:g}" if high_open else f"at most {high:g}")
    return " " + " and ".join(words) if words else ""


class Whole(click.IntRange):
    """A whole number in a range, in the digits 0-9; anything else is refused by saying so
    (click says "'abc' is not a valid integer range"). The help reads as click's IntRange."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _WHOLE.fullmatch(value.strip()):
            words = _bounds(self.min, self.max)
            raise Expected(f"give a whole number{words} (got {value!r})", ctx, param)
        return super().convert(value, param, ctx)


class Real(click.FloatRange):
    """A finite number in a range, in the digits 0-9: NaN passes every comparison of a range
    check, and an infinite bound or time means nothing to the commands that take one."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if (isinstance(value, str) and not _REAL.fullmatch(value.strip())) or (
            isinstance(value, float) and not math.isfinite(value)
        ):
            words = _bounds(self.min, self.max, self.min_open, self.max_open)
            raise Expected(f"give a number{words} (got {value!r})", ctx, param)
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            # Digits alone can be infinite too: 1e400 is beyond any float.
            words = _bounds(self.min, self.max, self.min_open, self.max_open)
            raise Expected(f"give a number{words} (got {value!r})", ctx, param)
        return number


class Name(click.types.StringParamType):
    """A name (a nation, zone, campaign, database, server): an empty one is refused instead of
    being read as "no option given", which would act for the default nation or database."""

    name = "text"  # the help's metavar, as for any text

    def __init__(self, what: str) -> None:
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = super().convert(value, param, ctx)
        if not text.strip():
            raise Expected(f"give {self.what} (got an empty one)", ctx, param)
        _refuse_nul(text, self.what, param, ctx)
        return text


class Line(click.types.StringParamType):
    """Free text that is recorded and printed on one line (a reason, a dice reference): no line
    break, tab, escape or other control character, which would split the log's one line per
    event and reach the reports and the terminals that show them as typed."""

    name = "text"  # the help's metavar, as for any text

    def __init__(self, what: str) -> None:
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from domain.schema import control_character

        text = super().convert(value, param, ctx)
        bad = control_character(text)
        if bad is not None:
            raise Expected(f"{self.what} may not contain control characters such as {bad!r}", ctx, param)
        return text


def _refuse_nul(text: str, what: str, param: click.Parameter | None, ctx: click.Context | None) -> None:
    # No name holds a NUL character, and no file name can: the system refuses it with an error
    # that names neither the value nor the option.
    if "\x00" in text:
        raise Expected(f"give {what} (got one holding a NUL character: {text!r})", ctx, param)


class FilePath(click.Path):
    """A file's path: one holding a NUL character is refused as bad usage (`_refuse_nul`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            if not value:
                # Not the current folder, which the error would otherwise name as ": is a directory".
                raise Expected("give a file name (got an empty one)", ctx, param)
            _refuse_nul(value, "a file name", param, ctx)
        return super().convert(value, param, ctx)


NATION = Name("a nation's name")
ZONE = Name("a zone's name")
CAMPAIGN = Name("a campaign's name")
DATABASE = Name("a database file or URL")
SERVER = Name("a server's URL")
PLAYER = Name("a player's name")
SCENARIO = Name("a scenario's name or file")
RULESET = Name("a ruleset's name or file")
REASON = Line("a reason")
REFERENCE = Line("a dice reference")


def dice_problem(text: str) -> str | None:
    """What is wrong with typed dice ('10,3', '10 3') as typing, or None: an empty value between
    commas, digits of other scripts, anything but a whole number. Whether each die is one the
    roll may show is the referee's (D3)."""
    parts = text.split(",")
    if len(parts) > 1:
        for i, part in enumerate(parts):
            if not part.strip():
                where = "before the first comma" if i == 0 else "after the last comma" if i == len(parts) - 1 else ""
                return f"empty value {where or 'between commas'}"
    from domain.dice import is_typed_die

    for word in text.replace(",", " ").split():
        if not word.isascii():
            return f"give each die in the digits 0-9 (got {word!r})"
        if not is_typed_die(word):
            return f"give each die as a whole number (got {word!r})"
        if len(word.lstrip("+-0")) > 10:
            # No die shows a number of 11 digits; one of thousands Python refuses to read at all.
            shown = word if len(word) <= 20 else word[:20] + "..."
            return f"no die shows {shown!r}: give each die as the number it shows"
    return None


class Dice(click.types.StringParamType):
    """Typed dice, checked by `dice_problem` before any die is recorded."""

    name = "text"  # the help's metavar, as for any text

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = super().convert(value, param, ctx)
        problem = dice_problem(text)
        if problem is not None:
            raise Expected(problem, ctx, param)
        return text


# ----- the one line of a usage error -----

# How click's own messages begin: said in lower case after "Error: ", as every other message.
_CLICK_OPENINGS = ("Invalid value", "Missing ", "No such ", "Option ", "Got unexpected", "Argument ", "Error ")
_EXTRA = re.compile(r"Got unexpected extra arguments?")
# An option named in quotes by click ('--seen'): named bare, as the help names it.
_QUOTED_OPTION = re.compile(r"'(--?[A-Za-z][\w-]*)'")
# click's suggestions when several names are close: "--too. (Did you mean one of: --nation,
# --to?)", or "(Possible options: ...)" in click before 8.2; one sentence, as one suggestion is.
_SEVERAL = re.compile(r"\. \((?:Did you mean one of|Possible options): ([^)]*?)\??\)")


def _hint(error: click.BadParameter) -> str | None:
    """The option or argument click names in the error, as it quotes it ("'--nation'")."""
    hint: Any = error.param_hint
    if hint is None and error.param is not None:
        hint = error.param.get_error_hint(error.ctx)
    if hint is None or isinstance(hint, str):
        return hint
    return " / ".join(hint)


def usage_line(error: click.UsageError) -> str:
    """A usage error as one line: the command, what is wrong naming the option or argument, and
    where its help is, e.g. `buy: invalid value for [COUNT]: 0 is not in the range 1<=x<=1000
    (see tracker buy --help)`."""
    hint = _hint(error) if isinstance(error, click.BadParameter) else None
    if isinstance(error, Expected):
        text = f"{hint}: {error.message}" if hint else error.message
    else:
        text = error.format_message()
    if hint:
        text = text.replace(hint, hint.replace("'", ""), 1)
    # click's lists ("Choose from:\n\tauto,\n\tmanual") and second sentences, on the one line.
    text = " ".join(text.split())
    text = text.replace(". Choose from:", "; choose from").replace(". Did you mean", "; did you mean")
    text = _SEVERAL.sub(r"; did you mean one of: \1?", text)
    text = _QUOTED_OPTION.sub(r"\1", text)
    text = _EXTRA.sub("more arguments than the command takes:", text)
    if text.startswith(_CLICK_OPENINGS):
        text = text[0].lower() + text[1:]
    text = text.removesuffix(".")
    ctx = error.ctx
    if ctx is None:
        return text
    path = ctx.command_path
    command = path.partition(" ")[2]  # without the program's own name
    return f"{command + ': ' if command else ''}{text} (see {path} --help)"


# The command to copy that ends an error ("...; to close it: tracker next").
_TAIL_COMMAND = re.compile(r"(?<=: )tracker .*$")
# Characters that would break an error's one line or drive the terminal: the tracker's own
# words hold none, so they come from what the user gave (a file name with a newline in it).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escaped(text: str) -> str:
    """`text` with each control character shown as Python escapes it (a newline as `\\n`)."""
    return _CONTROLS.sub(lambda m: repr(m.group())[1:-1], text)


# The most characters of a value an error message quotes: an error stays one short line, whatever
# was sent and however the layer that refused it quoted it. The server's answers quote less
# than a terminal, where a long path is still shown whole.
ECHO = 60
TERMINAL_ECHO = 300
# A value quoted as Python's repr quotes it ('...' or "..."), not an apostrophe inside a word.
_QUOTED = re.compile(r"""(?<!\w)(['"])((?:\\.|(?!\1)[^\\\n])*)\1(?!\w)""")


def shorten_echoes(message: str, most: int = ECHO) -> str:
    """`message` with each quoted value longer than `most` characters cut to `most` and "..."."""

    def cut(m: re.Match[str]) -> str:
        quote, inside = m.group(1), m.group(2)
        return m.group(0) if len(inside) <= most else f"{quote}{inside[:most]}...{quote}"

    return _QUOTED.sub(cut, message)


def quote_hint(name: str) -> str:
    """The end of a refusal of a name with spaces typed unquoted (`Central North Sea`)."""
    import shlex

    return f"a name with spaces is one word when quoted: {shlex.quote(name)}"


# What may join a name to the rest of one value: `--path A,B`, `--ntr Germany:ZONE=1`.
_VALUE_SEPARATORS = re.compile(r"[,:=]")
# The most words a name typed unquoted spans that is looked for (`Central North Atlantic`).
_NAME_WORDS = 6


def _word_runs(words: Sequence[str]) -> list[list[str]]:
    """The runs of two or more words, none an option, that one value typed unquoted may have
    become: the longest first, then from the left. An option's value given after `=`
    (`--zone=Central North Sea`) begins a run."""
    stretches: list[list[str]] = [[]]
    for word in words:
        if word.startswith("-"):
            _, sep, value = word.partition("=")
            stretches.append([value] if sep and value else [])
        else:
            stretches[-1].append(word)
    runs = [
        stretch[i:j]
        for stretch in stretches
        for i in range(len(stretch))
        for j in range(i + 2, min(len(stretch), i + _NAME_WORDS) + 1)
    ]
    return sorted(runs, key=len, reverse=True)


def unquoted_name(words: Sequence[str], known: Callable[[str], str | None]) -> str | None:
    """The value to quote when `words` (a command line) hold a name with spaces typed unquoted,
    split into several words: a run of words whose parts holding a space (between commas, `:`
    and `=`) are each a name `known` gives. None when there is none."""
    for run in _word_runs(words):
        joined = " ".join(run)
        spaced = [part.strip() for part in _VALUE_SEPARATORS.split(joined) if " " in part.strip()]
        if spaced and all(known(part) for part in spaced):
            return joined
    return None


def unquoted_hint(words: Sequence[str], obj: Any) -> str | None:
    """How to quote a name with spaces (a zone, nation, unit type or technology of the campaign
    `obj` selects; without one, a built-in scenario's nation or the default ruleset's names) the
    command line `words` gave unquoted, for the end of the error it caused; None when it gave
    none."""
    if not _word_runs(words):
        return None  # nothing to look for: the campaign is not read
    from tracker.service.names import Names, Resolver

    resolvers: tuple[Resolver, ...]
    try:
        # Only a database that is there is read: a refused `import` or `new` removed the file
        # it would have made, and the hint must not make it again.
        from tracker.storage.store import database_url, sqlite_file

        file = sqlite_file(obj.tracker.url if obj.has_tracker else database_url(obj.db))
        if file is not None and not file.is_file():
            raise FileNotFoundError(file)
        names = Names(obj.load())
        resolvers = (names.zone, names.nation, names.unit_type, names.technology)
    except Exception:  # noqa: BLE001 - no campaign: the names `odds naval` takes without one
        try:
            from domain.ruleset import builtin_nations, load_ruleset

            ruleset, _ = load_ruleset("twtea-3e")  # the ruleset `odds` weighs by default
            nations = list(builtin_nations())
        except Exception:  # noqa: BLE001 - the error as it is, without the hint
            return None
        resolvers = (
            Resolver("nation", nations),
            Resolver("unit type", ruleset.units),
            Resolver("technology", ruleset.technologies),
        )
    found = unquoted_name(words, lambda text: next((r.get(text) for r in resolvers if r.get(text)), None))
    return None if found is None else quote_hint(found)


def with_unquoted_hint(error: click.UsageError, words: Sequence[str], obj: Any) -> click.UsageError:
    """`error` ending with how to quote the name with spaces the command line typed unquoted,
    if it did; click's "more arguments than the command takes: (North Sea)" said as what it is."""
    # An error already made one line (`OneLineUsage`) has been through here: it stays as it is.
    hint = None if isinstance(error, OneLineUsage) else unquoted_hint(words, obj)
    if hint is None:
        return error
    if error.message.startswith("Got unexpected extra argument"):
        # The words it lists are the name's last: confusing, where the name is said whole.
        error = click.UsageError("more words than the command takes", error.ctx)
    return OneLineUsage(error, hint)


def fit_error(message: str) -> str:
    """`Error: MESSAGE` as a terminal shows it: wrapped between words at its width (never inside
    a name of several words in a list), the next lines indented, the command to copy that ends
    it on a line of its own; one line elsewhere (a pipe, a file, a script reading stderr). A
    huge value it quotes is cut (TERMINAL_ECHO)."""
    from tracker.cli.suggest import suggested

    text = f"Error: {_escaped(shorten_echoes(suggested(message, err=True), TERMINAL_ECHO))}"
    width = terminal_width(sys.stderr)
    if width is None or len(text) <= width:
        return text
    from tracker.cli.wrapping import wrapped_keeping_names

    found = _TAIL_COMMAND.search(text)
    head, command = (text[: found.start()].rstrip(), found.group()) if found else (text, "")
    # A zone's name of several words in a list (legal: North Sea, Bay of Biscay) kept whole, as
    # prose keeps it.
    lines = wrapped_keeping_names(head, width, under="    ")
    return "\n".join([*lines, *(["    " + command] if command else [])])


class OneLineUsage(click.UsageError):
    """A usage error printed as `Error: ` and `usage_line`: one line on stderr, exit 2, where
    click prints the usage, a hint and a blank line before it."""

    def __init__(self, error: click.UsageError, hint: str | None = None) -> None:
        line = usage_line(error)
        if hint:
            # Before the closing "(see tracker show --help)".
            head, sep, tail = line.rpartition(" (see ")
            line = f"{head}; {hint}{sep}{tail}" if sep else f"{line}; {hint}"
        super().__init__(line, error.ctx)

    def show(self, file: Any = None) -> None:
        click.echo(fit_error(self.message), file=file, err=file is None)


# A group given no command prints its help (click 8.2 on; 8.1 printed it and exited).
_HELP_INSTEAD: Any = getattr(click.exceptions, "NoArgsIsHelpError", OneLineUsage)


def one_line(error: click.UsageError) -> click.UsageError:
    """The error to raise for `error`: itself when it prints its own way already (one line,
    or the help a group prints when given no command), else `OneLineUsage`."""
    if isinstance(error, OneLineUsage | _HELP_INSTEAD):
        return error
    return OneLineUsage(error)
