"""The `tracker` command line: the main group, its table of commands and the mapping of every
error to one line and an exit status.

The table names each command's module and its one-line help, so `tracker --help`, `--version`
and the completion of a command's name import click and this module alone: a command's module
(and what it needs: the storage stack, rich, the referee) is imported when that command runs.

Every error a user can cause is printed as one line naming the rule or the input, with exit
status 1 for a refused action and 2 for bad usage; never a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from domain.errors import InputError, TrackerError
from tracker.cli.catalog import COMMANDS as COMMANDS
from tracker.cli.params import (
    CAMPAIGN,
    DATABASE,
    SERVER,
    OneLineUsage,
    fit_error,
    one_line,
    unquoted_hint,
    with_unquoted_hint,
)
from tracker.cli.startup import importing, settle_imports_from_now

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


def _fail(message: str, code: int) -> NoReturn:
    click.echo(fit_error(message), err=True)
    sys.exit(code)


def _quiet_stdout() -> None:
    """Point standard output at the null device, so that flushing what is left of it after its
    reader went away (`tracker log | head -1`) raises nothing more."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass  # not a file (a test's captured output): nothing is flushed to a closed pipe


def damaged_database(error: BaseException, obj: object) -> str | None:
    """The one-line message for a database file found damaged while it was read, or None."""
    import sqlite3

    cause = getattr(error, "orig", None) or error.__cause__ or error.__context__
    for e in (error, cause):
        if type(e) is sqlite3.DatabaseError:
            from tracker.storage.store import DEFAULT_DB

            where = getattr(obj, "db", None) or os.environ.get("TRACKER_DB") or DEFAULT_DB
            return f"database {where!r} is damaged ({e}); restore it from a copy or an export"
    return None


def unusable_file(error: OSError) -> tuple[str, int] | None:
    """The one-line message and exit status for a file the user named that cannot be opened,
    read or written (a name too long for the file system, no permission, a device that
    fails), or for output that cannot be written (a full disk); None for any other OSError."""
    import errno

    if error.filename is not None:
        # Quoted, so a name of thousands of characters is cut (fit_error).
        return f"cannot use {str(error.filename)!r}: {error.strerror or error}", 2
    if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        # Standard output on a full disk (files the tracker writes say so themselves): an
        # action printing its result was recorded all the same, only its words are lost.
        return f"cannot write the output: {error.strerror} (anything recorded stays recorded: tracker log)", 1
    if error.errno == errno.EIO:
        return f"a device failed to read or write: {error.strerror}", 1
    return None


def unopenable_database(error: BaseException, obj: object) -> str | None:
    """The one-line message for a database file SQLite cannot open (no permission to read it,
    or to read its folder), or None."""
    import sqlite3

    cause = getattr(error, "orig", None) or error.__cause__ or error.__context__
    for e in (error, cause):
        if isinstance(e, sqlite3.OperationalError) and "unable to open database file" in str(e):
            from tracker.storage.store import DEFAULT_DB

            where = getattr(obj, "db", None) or os.environ.get("TRACKER_DB") or DEFAULT_DB
            return f"cannot open database {where!r}: {e} (may this user read it and its folder?)"
    return None


def _command_context(ctx: click.Context, words: list[str]) -> click.Context | None:
    """The context of the (sub)command the words after the global options name, or None."""
    found = None
    command: click.Command = ctx.command
    for word in words:
        sub = command.get_command(found or ctx, word) if isinstance(command, click.Group) else None
        if sub is None:
            break
        found = click.Context(sub, info_name=word, parent=found or ctx)
        command = sub
    return found


# Commands that work on a database (or a file) and never run through a league server.
LOCAL_ONLY = frozenset({"db", "demo", "export", "import", "projections", "replay", "scenario", "serve"})
# Of them, what reads and writes files alone (a board being written): run here whatever server
# the environment names, which a player who exported TRACKER_SERVER had to unset for it.
NO_DATABASE = frozenset({"scenario"})


class TrackerGroup(click.Group):
    """The main group: commands from the table, loaded on demand, and every error mapped to a
    one-line message and an exit status."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:  # one added by hand (a test's copy of the group)
            return self.commands[cmd_name]
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module, attribute, _ = entry
        with importing():
            command: click.Command = getattr(importlib.import_module(f"tracker.{module}"), attribute)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        if not ctx.resilient_parsing and not name.startswith("-") and self.get_command(ctx, name) is None:
            raise no_such_command(ctx, name, self.list_commands(ctx))
        return super().resolve_command(ctx, args)

    def _main_shell_completion(self, ctx_args: Any, prog_name: str, complete_var: str | None = None) -> None:
        # Asked by bash for completions: a zone of several words goes on the line as one word.
        if os.environ.get(complete_var or "_TRACKER_COMPLETE", "").startswith("bash"):
            from tracker.cli.completion_bash import keep_names_whole_in_bash

            keep_names_whole_in_bash()
        super()._main_shell_completion(ctx_args, prog_name, complete_var)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The listing from the table, so `--help` imports no command's module.
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self.listed_help(name, limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem

        names = [name for name in self.list_commands(ctx) if name.startswith(incomplete)]
        items = [CompletionItem(name, help=self.listed_help(name, 45)) for name in names]
        # The group's own options, as click completes them (skipping click.Group's command listing).
        return items + click.Command.shell_complete(self, ctx, incomplete)

    def listed_help(self, name: str, limit: int) -> str:
        if name in self.commands:
            return self.commands[name].get_short_help_str(limit)
        return short_help(name, limit)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        # Bad usage of the global options, found before `invoke`: one line too.
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as e:
            if e.ctx is None:  # "Option '--db' requires an argument": said with where the help is
                e.ctx = click.Context(self, info_name=info_name, parent=parent)
            raise one_line(e) from None

    def _through_server(self, ctx: click.Context, server: str) -> Any:
        """Run the command line on the server `--server` names (TRACKER_SERVER), but for what
        the client does itself (`shell`'s loop, `wait`) and what is refused here."""
        # The command line after the global options, as typed.
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        # A TRACKER_DB left in the environment for local work does not stand in the way; a
        # command that runs on a database (`serve`) is said as such below, with its --db.
        local = bool(rest[:1]) and rest[0] in LOCAL_ONLY
        if ctx.get_parameter_source("db") == click.core.ParameterSource.COMMANDLINE and not local:
            raise click.UsageError("--server runs commands on the server's database: leave out --db")
        from tracker.cli.client import run_remote

        names = self.list_commands(ctx)
        if rest[:1] and not rest[0].startswith("-") and rest[0] not in names:
            # Said here, with the commands it is close to: the server would call a
            # typo a command it does not run.
            raise no_such_command(ctx, rest[0], names)
        if rest[:1] and rest[0] in NO_DATABASE:
            return super().invoke(ctx)
        if rest[:1] and rest[0] in LOCAL_ONLY:
            # Said here, not "cannot reach the server" (`serve` restarting the server a
            # referee's TRACKER_SERVER names) or the server's refusal of a command it never runs.
            given = ctx.get_parameter_source("server") == click.core.ParameterSource.COMMANDLINE
            where = "leave out --server" if given else "unset TRACKER_SERVER for it"
            # Bad usage of no one command (exit 2), said as it is: no command's help to name.
            raise InputError(f"'{rest[0]}' runs on a database, not through a server: {where}")
        if rest[:1] == ["shell"]:
            # The shell's loop is the client's (each line runs on the server): the
            # shell command itself, which knows --server.
            return super().invoke(ctx)
        from tracker.cli.suggest import remember

        # The commands it prints to copy repeat the --server (and --campaign) typed.
        remember(ctx, server=True)
        if rest[:1] == ["wait"]:
            # Waiting is the client's: no server thread is held for it.
            from tracker.cli.remote_wait import wait_remote

            ctx.exit(wait_remote(server, ctx.params.get("campaign"), rest[1:]))
        ctx.exit(run_remote(server, ctx.params.get("campaign"), rest))

    def invoke(self, ctx: click.Context) -> Any:
        # The words after the global options, kept: click empties them as it runs the command.
        words = [*getattr(ctx, "_protected_args", []), *ctx.args]
        # A line of `tracker shell` comes with the session's context; the command line without.
        shell_line = ctx.obj is not None
        try:
            with importing():
                from tracker.cli.client import check_utf8_args
                from tracker.cli.context import Context

            # An argument that is not UTF-8 (bytes from a Latin-1 terminal or a file) is bad usage,
            # said before anything tries to store, send or print it.
            check_utf8_args([v for v in ctx.params.values() if isinstance(v, str)], "a global option")
            check_utf8_args([*getattr(ctx, "_protected_args", []), *ctx.args])
            server = ctx.params.get("server")
            if server and not isinstance(ctx.obj, Context):
                return self._through_server(ctx, server)
            return super().invoke(ctx)
        except TrackerError as e:
            # A name typed unquoted (`move GB-DD1 --to Central North Sea`): "unknown zone 'Central'".
            hint = unquoted_hint(words, ctx.obj) if e.exit_code == 2 else None
            _fail(f"{e}; {hint}" if hint else str(e), e.exit_code)
        except click.UsageError as e:
            # Bad usage anywhere below (a command's options, its own checks): one line.
            if e.ctx is None:
                # click says "Option '--to' requires an argument" without the command's context:
                # found from the words typed, so the line names the command and its help too.
                e.ctx = _command_context(ctx, words)
            e = _phase_as_word(_bracketed(e, words), words)
            e = with_unquoted_hint(e if shell_line else _global_option_after(e), words, ctx.obj)
            raise one_line(e) from None
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except BrokenPipeError:
            # Output piped into `head` and the like: stop quietly with 0, as Unix tools do; click
            # would exit 1, the status of a refused action. What is still buffered goes nowhere.
            _quiet_stdout()
            raise click.exceptions.Exit(0) from None
        except OverflowError as e:
            # Every number a user types is bounded; one this large came from a damaged record.
            _fail(f"a number is too large to handle ({e}): a damaged record? run `tracker verify`", 1)
        except Exception as e:  # noqa: BLE001 - the promise is: never a traceback
            said = unusable_file(e) if isinstance(e, OSError) else None
            if said is not None:
                _fail(*said)
            damaged = damaged_database(e, ctx.obj) or unopenable_database(e, ctx.obj)
            if damaged is not None:
                _fail(damaged, 2)
            if isinstance(e, UnicodeEncodeError):
                bad = e.object[e.start : e.end]
                if e.encoding.lower().replace("-", "") != "utf8":
                    # Output to a terminal or pipe whose encoding (PYTHONIOENCODING=ascii, a
                    # Latin-1 locale) lacks a character the tracker prints (·, →, an accent).
                    _fail(
                        f"the output's encoding ({e.encoding}) cannot show {bad!r}: "
                        "set a UTF-8 locale or PYTHONIOENCODING=utf-8",
                        2,
                    )
                # Only UTF-8 itself left: a lone surrogate, which a file's JSON escape ("\ud800")
                # gives (the command line's are refused before): half a character, no text.
                _fail(f"the input holds {bad!r}, half of a UTF-16 pair and no character: not text to keep", 2)
            if isinstance(e, ValueError) and "integer string conversion" in str(e):
                # A number of thousands of digits in a file read (an export, a scenario, a
                # ruleset): Python refuses to read it, and no count or die of the game has one.
                _fail("a number in the input has more than 4300 digits: not a file the tracker wrote", 2)
            if os.environ.get("TRACKER_DEBUG"):
                raise
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            _fail(f"unexpected {type(e).__name__}: {first} (set TRACKER_DEBUG=1 for details)", 1)


def _bracketed(error: click.UsageError, words: list[str]) -> click.UsageError:
    """A command `pending` suggested, pasted with its optional parts in brackets (`[--units
    U1,U2]`), was refused as "more arguments than the command takes" without a word on why."""
    if not any(w.startswith("[-") for w in words):
        return error
    hint = (
        "; the parts of a suggested command in [brackets] are optional: leave them out, or type them "
        "without the brackets"
    )
    return click.UsageError(f"{error.message}{hint}", error.ctx)


def _phase_as_word(error: click.UsageError, words: list[str]) -> click.UsageError:
    """`tracker next combat_movement` (or `next combat movement`, as the demo says a phase) was
    refused as "more arguments than the command takes", without a word on where `next` takes a
    phase: after --to."""
    if words[:1] != ["next"] or "--to" in words or not error.message.startswith("Got unexpected extra argument"):
        return error
    from domain.ruleset import KNOWN_PHASES

    # click lists the words left over in brackets: "Got unexpected extra arguments (combat movement)".
    extra = error.message[error.message.find("(") + 1 : error.message.rfind(")")]
    typed = "_".join(extra.replace("-", " ").split()).casefold()
    close = [p for p in KNOWN_PHASES if typed and p.startswith(typed)]
    if not close:
        return error
    return OneLineUsage(error, f"a phase goes after --to: `tracker next --to {close[0]}`")


def _global_option_after(error: click.UsageError) -> click.UsageError:
    """`tracker new w --db x.db` said "no such option --db; did you mean --dice?": an option of
    tracker itself typed after the command is said as that, with where it goes (not in the
    shell, whose lines take no global option at all)."""
    if not isinstance(error, click.NoSuchOption):
        return error
    option = error.option_name.split("=", 1)[0]
    if option not in ("--db", "--campaign", "--server") or error.ctx is None:
        return error
    path = error.ctx.command_path.split(" ", 1)
    command = path[1] if len(path) > 1 else ""
    value = {"--db": "PATH", "--campaign": "NAME", "--server": "URL"}[option]
    return click.UsageError(
        f"{option} is an option of tracker itself: give it before the command, "
        f"as in `tracker {option} {value} {command} ...`",
        error.ctx,
    )


def no_such_command(ctx: click.Context, name: str, names: list[str]) -> click.UsageError:
    """The error for a word that is none of the command `names`, naming those it is close to
    ("tracker pendng": did you mean 'pending'?). click suggests from the commands a group holds,
    and the main group holds none until one runs (they load on demand)."""
    import difflib

    # `tracker help` is close to `shell` by its letters; what it asks for is the help.
    close = ["--help"] if name == "help" else sorted(difflib.get_close_matches(name, names))
    message = f"No such command {name!r}."
    if len(close) == 1:
        message += f" Did you mean {close[0]!r}?"
    elif close:
        message += f" (Did you mean one of: {', '.join(repr(c) for c in close)}?)"
    return click.UsageError(message, ctx)


def short_help(name: str, limit: int = 45) -> str:
    """A command's one-line help from the table, cut to `limit` as click cuts a command's own."""
    return click.Command(name, help=COMMANDS[name][2]).get_short_help_str(limit)


@click.group(cls=TrackerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db", envvar="TRACKER_DB", type=DATABASE, help="SQLite file path or SQLAlchemy URL (default ./campaign.db)."
)
@click.option(
    "--campaign",
    envvar="TRACKER_CAMPAIGN",
    type=CAMPAIGN,
    help="Campaign name (needed when the database holds several).",
)
@click.option(
    "--server",
    envvar="TRACKER_SERVER",
    type=SERVER,
    help="Run the command on a league server (tracker serve) with the token in TRACKER_TOKEN or the config file.",
)
@click.version_option(package_name="twtea-naval-tracker")
@click.pass_context
def cli(ctx: click.Context, db: str | None, campaign: str | None, server: str | None) -> None:
    """Campaign tracker and referee for the naval war of The War to End All Wars.

    Example: tracker new autumn --scenario north-sea-1914 && tracker state
    """
    from tracker.cli.context import Context

    if isinstance(ctx.obj, Context):
        return  # a line of `tracker shell`: the session's open database and campaign
    obj = Context(db, campaign)
    ctx.obj = obj
    if ctx.invoked_subcommand != "shell":
        # The commands it suggests repeat the --db and --campaign typed; a shell's lines take
        # neither, and say their commands as they are typed there.
        from tracker.cli.suggest import remember

        remember(ctx)
    ctx.call_on_close(obj.close)


def main() -> None:
    settle_imports_from_now()
    try:
        cli(prog_name="tracker")
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, as Unix tools do.
        sys.stderr.close()
        sys.exit(0)
