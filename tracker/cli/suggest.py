"""The commands the tracker suggests to copy (`next: tracker battle fire 1`, `to close it:
tracker next`, `see tracker pending`), said with the global options the player typed to select
the database and the campaign: `tracker --db games/war.db pending` suggests `tracker --db
games/war.db battle fire 1`, which, copied, runs on the same campaign (without them it ran on
./campaign.db, or asked which campaign).

Only options typed on the command line are repeated: a TRACKER_DB or TRACKER_CAMPAIGN in the
environment selects the same for the copy. They are repeated on a terminal, where a person
copies the command; a pipe or a file gets the lines as they always were, for the scripts that
read them (a command that names its campaign, as `inbox` prints it, names it everywhere), and
JSON keeps its `command` fields as they are (the same on a database and through a server, for
scripts that add their own options). Through a league server, `--server URL` is repeated
instead of --db; a password in a URL never is (it is shown as ***), nor a token (no option
holds one). A line of `tracker shell` takes no global option: there, and in what the shell
prints itself, commands are said as they are.

A command that already names --db or --server is spelled for another place (another database,
a template) and is left as it is; one that names --campaign (`inbox`, a hand-off, the export
another player is asked for) gets only the typed database or server, and only where the
output comes from a server (`through_server`) or the caller says the campaign is this one
(`suggested(command, campaign=NAME)`).
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence

import click

# Where `remember` keeps the options on the click context (shared by its child contexts).
_KEY = "tracker.suggested_globals"
# The global options that say where a command runs, in the order they are said.
_OPTIONS = ("server", "db", "campaign")
# Commands that read no database (inserted: nothing), or no campaign of it (no --campaign).
_NO_DATABASE = frozenset({"scenario", "scenarios", "rulesets"})
_NO_CAMPAIGN = frozenset({"new", "campaigns", "demo", "db", "serve"})
# The odds of a position given by hand (the lines behind `odds buy`, `need`, `escorts`): they
# run anywhere, on the ruleset they name.
_BY_HAND = frozenset({"odds naval", "odds convoy", "odds asw", "odds intercept"})

# A global option already given after `tracker`, with its value as shlex quotes it.
_GIVEN = re.compile(r"""(--db|--campaign|--server)(?:=|\s+)(?:'[^']*'|"[^"]*"|[^\s`)]+)\s+""")


def _commands() -> str:
    from tracker.cli.catalog import COMMANDS

    return "|".join(sorted(map(re.escape, COMMANDS), key=len, reverse=True))


_PATTERN: re.Pattern[str] | None = None


def _pattern() -> re.Pattern[str]:
    """`tracker ` where a command to copy begins: at the start of a line (indented or after
    `next: `), in backquotes or brackets, after a colon or "or"/"and"/"run"; followed by one of
    the tracker's commands or a global option. Not "the tracker rolls", "by tracker serve" (the
    server as a player's name) nor "a tracker shell"."""
    global _PATTERN
    if _PATTERN is None:
        _PATTERN = re.compile(
            r"(?P<before>^[ \t]*|[`(\[]|: |\b(?:or|and|run) )tracker "
            rf"(?=(?:--db|--campaign|--server)[\s=]|(?:{_commands()})(?=[\s`),;.\]]|$))",
            re.MULTILINE,
        )
    return _PATTERN


def shown_url(value: str) -> str:
    """A URL's password as ***: a suggested command is printed, posted and pasted."""
    if "://" not in value or "@" not in value:
        return value
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(value)
        password = parts.password
    except ValueError:
        return value
    if not password:
        return value
    netloc = parts.netloc.replace(f":{password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def typed_globals(ctx: click.Context, server: bool = False) -> list[tuple[str, str]]:
    """The options among --db and --campaign (with `server`, --server and --campaign) typed on
    the command line of the main group's context `ctx`, as (option, value)."""
    names = ("server", "campaign") if server else ("db", "campaign")
    typed = []
    for name in _OPTIONS:
        value = ctx.params.get(name)
        if name in names and value and ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
            typed.append((f"--{name}", str(value)))
    return typed


def remember(ctx: click.Context, server: bool = False) -> None:
    """Keep the typed global options (`typed_globals`) for the commands this command line
    suggests."""
    ctx.meta[_KEY] = typed_globals(ctx, server)


def remembered() -> list[tuple[str, str]]:
    """The options `remember` kept for the command running; none in a shell's line, on a
    server, or outside a command."""
    ctx = click.get_current_context(silent=True)
    return list(ctx.meta.get(_KEY, ())) if ctx is not None else []


def with_globals(
    text: str, options: Sequence[tuple[str, str]], campaign: str | None = None, through_server: bool = False
) -> str:
    """`text` with `options` inserted after each `tracker ` that begins a command to copy (see
    the module); with `campaign`, every command in it runs on that campaign."""
    if campaign is not None:
        options = [*(o for o in options if o[0] != "--campaign"), ("--campaign", campaign)]
    if not options or "tracker " not in text:
        return text

    def insert(m: re.Match[str]) -> str:
        at, named = m.end(), set()
        while found := _GIVEN.match(text, at):
            named.add(found.group(1))
            at = found.end()
        words = [w.rstrip("`),;.]\n") for w in text[at:].split(" ", 2)[:2]]
        word = words[0]
        if named & {"--db", "--server"} or word in _NO_DATABASE or " ".join(words) in _BY_HAND:
            return m.group()
        if "--campaign" in named and campaign is None and not through_server:
            return m.group()
        said = [
            f"{option} {shlex.quote(shown_url(value))}"
            for option, value in options
            if option not in named and not (option == "--campaign" and word in _NO_CAMPAIGN)
        ]
        return m.group() + "".join(f"{s} " for s in said)

    return _pattern().sub(insert, text)


def at_terminal(err: bool = False) -> bool:
    """Whether standard output (`err`: standard error) is a terminal, where a person copies
    what the tracker suggests; a pipe or a file is read by a script, which gets the lines as
    they always were (as --json keeps its fields)."""
    from tracker.cli.terminal import terminal_width

    return terminal_width(sys.stderr if err else sys.stdout) is not None


def suggested(text: str, campaign: str | None = None, err: bool = False) -> str:
    """`text` (a line, an error, a command) with the typed global options in each command to
    copy (`with_globals`) when it is printed on a terminal (`err`: standard error), for the
    command line running; with `campaign`, naming that campaign wherever it is printed."""
    options = remembered()
    options = options if options and at_terminal(err) else []
    return with_globals(text, options, campaign)


def from_server(text: str, err: bool = False) -> str:
    """What a league server printed for `tracker --server URL ...` on standard output (`err`:
    standard error), its commands to copy with the --server and --campaign typed here (the
    server knows neither) when that is a terminal; JSON as it is."""
    options = remembered()
    if not options or "tracker " not in text or not at_terminal(err):
        return text
    import json

    try:
        json.loads(text)
    except ValueError:
        return with_globals(text, options, through_server=True)
    return text


# A command to copy in the middle of a line, in backquotes (in brackets it may go on in words:
# "(tracker verify checks the log)").
_SPAN = re.compile(r"`tracker [^`\n]*`")
# Stands for a space inside such a command while a line is wrapped: a private-use character.
_GLUE = "\ue000"


def glued(text: str) -> str:
    """`text` with the spaces of each command to copy in it in backquotes made part of one
    word, so wrapping a line never cuts such a command in two (`unglued` after)."""
    return _SPAN.sub(lambda m: m.group().replace(" ", _GLUE), text)


def unglued(text: str) -> str:
    return text.replace(_GLUE, " ")
