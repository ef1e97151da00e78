"""`tracker db`: the side tables' schema. `db current` says which revision a database is at and
whether it is this tracker's head; `db upgrade` brings it there (a no-op when it is)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from domain.errors import InputError
from tracker.cli.common import Context, emit_json, json_option, suggested

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from tracker.storage.migrations import Step


# The words other tools use for these commands (alembic's, a package manager's), which
# click's spelling suggestions do not reach: `tracker db status` said no more than "no such
# command". Each is suggested, not run: `db current` and `db upgrade` stay the only names.
GUESSED = {
    "status": "current",
    "version": "current",
    "revision": "current",
    "heads": "current",
    "show": "current",
    "info": "current",
    "migrate": "upgrade",
    "update": "upgrade",
}


class DbGroup(click.Group):
    """`tracker db`, naming the command an operator's guess stands for."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else ""
        meant = GUESSED.get(name.lower())
        if meant is not None and self.get_command(ctx, name) is None and not ctx.resilient_parsing:
            raise click.UsageError(f"No such command {name!r}. Did you mean {meant!r}?", ctx)
        return super().resolve_command(ctx, args)


@click.group(name="db", cls=DbGroup)
def db_group() -> None:
    """The database's side tables: which revision they are at, and upgrading them to this tracker's."""


@contextmanager
def opened(ctx: Context) -> Iterator[tuple[Engine, str]]:
    """An engine on the existing database (never made here), without the upgrade that opening a
    campaign runs, and the URL to name it by (no password)."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    from tracker.storage.store import database_url

    url = database_url(ctx.db, create=False)
    engine = create_engine(url)
    try:
        yield engine, make_url(url).render_as_string(hide_password=True)
    finally:
        engine.dispose()


def _failed(doing: str, where: str, error: Exception) -> InputError:
    cause = getattr(error, "orig", None) or error
    reason = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    if isinstance(cause, sqlite3.OperationalError) and "readonly" in reason:
        # The driver's words name neither the file nor what to do about it.
        reason = "the database is read-only to this user (its file or its folder): nothing was changed"
    return InputError(f"cannot {doing} the tables of {where}: {reason}")


def _require_tracker(engine: Engine, where: str) -> None:
    """A PostgreSQL database without the tracker's tables (a mistyped name, another program's
    database) is refused as every other command refuses it, and gets no tables made in it (a
    SQLite file was refused when its path was read)."""
    from tracker.storage.store import has_tracker_tables, no_tracker_tables

    if engine.dialect.name != "postgresql":
        return
    with engine.connect() as conn:
        if not has_tracker_tables(conn):
            raise no_tracker_tables(where)


def _named(steps: list[Step]) -> str:
    return "".join(f"\n  {s.revision} {s.title}" for s in steps)


@db_group.command(name="current")
@json_option
@click.pass_obj
def db_current(ctx: Context, as_json: bool) -> None:
    """Say which revision the side tables are at and whether it is this tracker's head, with the
    revisions an upgrade would run.

    Example: tracker --db league.db db current
    """
    from sqlalchemy.exc import SQLAlchemyError

    from tracker.storage import migrations

    with opened(ctx) as (engine, where):
        try:
            _require_tracker(engine, where)
            schema = migrations.current(engine)
        except SQLAlchemyError as e:
            raise _failed("read", where, e) from None
    if as_json:
        emit_json(schema.as_json())
        return
    if not schema.known:
        click.echo(
            f"Revision {schema.current}: unknown to this tracker (head {schema.head}); a newer tracker "
            "upgraded the tables: upgrade the tracker."
        )
    elif schema.at_head:
        click.echo(f"Revision {schema.current}: the head of this tracker.")
    elif schema.current is None:
        held = f" (tables made before versioned upgrades, holding revision {schema.matches})" if schema.matches else ""
        upgrade = suggested("`tracker db upgrade`")
        click.echo(f"No revision recorded{held}; head {schema.head}. {upgrade} runs:{_named(schema.ahead)}")
    else:
        click.echo(
            f"Revision {schema.current}, behind this tracker's head {schema.head}. "
            f"{suggested('`tracker db upgrade`')} runs:{_named(schema.ahead)}"
        )


@db_group.command(name="upgrade")
@json_option
@click.pass_obj
def db_upgrade(ctx: Context, as_json: bool) -> None:
    """Upgrade the side tables to this tracker's head, in one transaction, keeping every row;
    tables made before versioned upgrades are first stamped at the revision they hold. Nothing
    to do at head. Take a copy of the database first; stop the servers of the earlier release
    on a shared PostgreSQL database.

    Example: tracker --db postgresql://league@db.example/naval db upgrade
    """
    from sqlalchemy.exc import SQLAlchemyError

    from tracker.storage import migrations

    with opened(ctx) as (engine, where):
        try:
            _require_tracker(engine, where)
            done = migrations.upgrade(engine)
        except SQLAlchemyError as e:
            raise _failed("upgrade", where, e) from None
    if as_json:
        emit_json(done.as_json())
        return
    if not done.applied:
        click.echo(f"Already at revision {done.head}, the head of this tracker: nothing to do.")
        return
    if done.stamped is not None:
        click.echo(f"Tables made before versioned upgrades hold revision {done.stamped}: stamped at it.")
    start = done.before or done.stamped or "no revision"
    click.echo(f"Upgraded from {start} to {done.head}, the head of this tracker:{_named(done.applied)}")
