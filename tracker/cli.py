"""The `tracker` command line: a thin click layer over the application service.

Every error a user can cause is printed as one line naming the rule or the input, with
exit status 1 for a refused action and 2 for bad usage; never a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from domain.errors import InputError, TrackerError
from domain.ruleset import builtin_names, load_ruleset, read_builtin_or_file
from projections.summary import rule_of, summary
from tracker.cli_common import (
    INTEGER,
    PHASES,
    POSITIVE,
    Context,
    act,
    acting,
    console,
    dice_options,
    emit_json,
    json_option,
    nation_option,
    next_command,
    perform,
    seen_option,
    settle_imports_from_now,
    split_list,
)
from tracker.completion import (
    complete_path,
    complete_sea_zones,
    complete_technologies,
    complete_units,
    complete_zones,
)
from tracker.views import board_now, heading, render_board

if TYPE_CHECKING:
    # Storage (through the campaign's history) is imported by the commands that read it, so
    # `tracker --help` and `--version` start without it (tests/test_cli_startup.py).
    pass


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def damaged_database(error: BaseException, obj: object) -> str | None:
    """The one-line message for a database file found damaged while it was read, or None."""
    import sqlite3

    cause = getattr(error, "orig", None) or error.__cause__ or error.__context__
    for e in (error, cause):
        if type(e) is sqlite3.DatabaseError:
            from tracker.store import DEFAULT_DB

            where = getattr(obj, "db", None) or os.environ.get("TRACKER_DB") or DEFAULT_DB
            return f"database {where!r} is damaged ({e}); restore it from a copy or an export"
    return None


class TrackerGroup(click.Group):
    """Maps every error to a one-line message and an exit status."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            server = ctx.params.get("server")
            if server and not isinstance(ctx.obj, Context):
                # A TRACKER_DB left in the environment for local work does not stand in the way.
                if ctx.get_parameter_source("db") == click.core.ParameterSource.COMMANDLINE:
                    raise click.UsageError("--server runs commands on the server's database: leave out --db")
                from tracker.client import run_remote

                # The command line after the global options, as typed.
                rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
                ctx.exit(run_remote(server, ctx.params.get("campaign"), rest))
            return super().invoke(ctx)
        except TrackerError as e:
            _fail(str(e), e.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, BrokenPipeError):
            raise
        except OverflowError as e:
            # Every number a user types is bounded; one this large came from a damaged record.
            _fail(f"a number is too large to handle ({e}): a damaged record? run `tracker verify`", 1)
        except Exception as e:  # noqa: BLE001 - the promise is: never a traceback
            damaged = damaged_database(e, ctx.obj)
            if damaged is not None:
                _fail(damaged, 2)
            if os.environ.get("TRACKER_DEBUG"):
                raise
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            _fail(f"unexpected {type(e).__name__}: {first} (set TRACKER_DEBUG=1 for details)", 1)


@click.group(cls=TrackerGroup)
@click.option("--db", envvar="TRACKER_DB", help="SQLite file path or SQLAlchemy URL (default ./campaign.db).")
@click.option("--campaign", envvar="TRACKER_CAMPAIGN", help="Campaign name (needed when the database holds several).")
@click.option(
    "--server",
    envvar="TRACKER_SERVER",
    help="Run the command on a league server (tracker serve) with the token in TRACKER_TOKEN or the config file.",
)
@click.version_option(package_name="twtea-naval-tracker")
@click.pass_context
def cli(ctx: click.Context, db: str | None, campaign: str | None, server: str | None) -> None:
    """Campaign tracker and referee for the naval war of The War to End All Wars.

    Example: tracker new autumn --scenario north-sea-1914 && tracker state
    """
    if isinstance(ctx.obj, Context):
        return  # a line of `tracker shell`: the session's open database and campaign
    obj = Context(db, campaign)
    ctx.obj = obj
    ctx.call_on_close(obj.close)


# ----- campaigns, scenarios, rulesets -----


@cli.command()
@click.argument("name")
@click.option("--scenario", required=True, help="Built-in scenario name or a scenario TOML file.")
@click.option("--ruleset", help="Built-in ruleset name or a ruleset TOML file (default: the scenario's).")
@click.option("--dice", type=click.Choice(["auto", "manual"]), help="Dice source (default: the scenario's).")
@click.pass_obj
def new(ctx: Context, name: str, scenario: str, ruleset: str | None, dice: str | None) -> None:
    """Create a campaign.

    Example: tracker new autumn --scenario north-sea-1914 --dice auto
    """
    ctx.may_create = True
    campaign = ctx.tracker.create(name, scenario, ruleset, dice)
    click.echo(
        f"Campaign {campaign.name!r} created: {campaign.scenario.title} with ruleset "
        f"{campaign.ruleset.name}, {campaign.dice_mode} dice."
    )
    click.echo(f"Round {campaign.round} · {campaign.nation} · {campaign.phase}")


@cli.command()
@json_option
@click.pass_obj
def campaigns(ctx: Context, as_json: bool) -> None:
    """List the campaigns in the database.

    Example: tracker --db league.db campaigns
    """
    names = ctx.tracker.campaign_names()
    if as_json:
        emit_json(names)
        return
    if not names:
        click.echo("No campaigns yet: tracker new NAME --scenario north-sea-1914")
    for name in names:
        click.echo(name)


@cli.command()
@json_option
def scenarios(as_json: bool) -> None:
    """List the built-in scenarios.

    Example: tracker scenarios --json
    """
    rows = []
    for name in builtin_names("scenarios"):
        data, _ = read_builtin_or_file("scenarios", name)
        meta = data["scenario"]
        rows.append(
            {
                "name": name,
                "title": meta.get("title", name),
                "ruleset": meta.get("ruleset"),
                "nations": meta.get("turn_order"),
            }
        )
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['name']}: {r['title']} (ruleset {r['ruleset']}; {', '.join(r['nations'])})")


@cli.command()
@json_option
def rulesets(as_json: bool) -> None:
    """List the built-in rulesets.

    Example: tracker rulesets
    """
    rows = []
    for name in builtin_names("rulesets"):
        rs, _ = load_ruleset(name)
        rows.append({"name": name, "title": rs.title, "version": rs.version, "units": list(rs.units)})
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        click.echo(f"{r['name']}: {r['title']} (version {r['version']})")


# ----- state -----


@cli.command()
@click.option(
    "--turn",
    type=POSITIVE,
    help="The board at the end of this national turn (1 = round 1's first nation).",
)
@click.option(
    "--phase",
    type=PHASES,
    help="With --turn: at the end of this phase of that turn.",
)
@click.option("--at", "at", type=POSITIVE, help="The board right after this event.")
@json_option
@click.pass_obj
def state(ctx: Context, turn: int | None, phase: str | None, at: int | None, as_json: bool) -> None:
    """Show the board: turn position, units by zone, NTR, resources, technology; now or at any point.

    Example: tracker state --turn 2 --phase combat_movement --json
    """
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    campaign = t.load(cid)
    if phase and not turn:
        raise click.UsageError("--phase needs --turn")
    if turn and at:
        raise click.UsageError("give --turn or --at, not both")
    data = t.board_at(cid, turn=turn, phase=phase, at=at) if turn or at else board_now(campaign)
    name = t.name_of(campaign)
    data = {"campaign": name, **data}
    if as_json:
        emit_json(data)
        return
    out = console()
    out.print(heading(name, data))
    render_board(out, data, campaign.scenario)


# ----- turn sequence and actions -----


@cli.command(name="next")
@click.option("--to", "to_phase", type=PHASES, help="Keep going until this phase opens.")
@nation_option("With --to: the phase of this nation's turn (default: the nation whose turn it is).")
@click.option(
    "--confirm-losses",
    is_flag=True,
    help="End noncombat_movement even though air units cannot land: they are lost (F7).",
)
@seen_option
@click.pass_obj
def next_phase(ctx: Context, to_phase: str | None, nation: str | None, confirm_losses: bool) -> None:
    """Close the current phase and open the next (collecting resources at the end of a turn);
    refused while the phase still requires something (T4: `tracker pending` lists it). With --to,
    step phase by phase (each step its own action, under the same gates) until that position.

    Example: tracker next --to collect_resources --nation Britain
    """

    def step() -> None:
        for e in perform(ctx, "next", {"confirm_losses": confirm_losses}).events:
            click.echo(f"{summary(e)}   [{rule_of(e)}]")

    if to_phase is None:
        if nation is not None:
            raise click.UsageError("--nation goes with --to")
        step()
        return
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    campaign = t.load(cid)
    target = acting(campaign, nation)
    if to_phase not in campaign.ruleset.phases:
        raise InputError(f"phase {to_phase!r} is not in this campaign's ruleset")
    if (campaign.nation, campaign.phase) == (target, to_phase):
        raise InputError(
            f"already there: it is {target}'s {to_phase} phase (round {campaign.round}); plain `tracker next` ends it"
        )
    # One full round at most: every nation's every phase.
    for _ in range(len(campaign.ruleset.phases) * len(campaign.scenario.turn_order)):
        step()
        now = t.load(cid)
        if (now.nation, now.phase) == (target, to_phase):
            return
    raise AssertionError("the turn sequence did not reach the phase within a round")  # pragma: no cover


@cli.command()
@click.argument("units", nargs=-1, required=True, shell_complete=complete_units)
@click.option(
    "--to",
    "to",
    help="Destination zone (the shortest legal route is not guessed: use --path for more than one step).",
    shell_complete=complete_zones,
)
@click.option(
    "--path",
    "path",
    help="Zones after the start, comma-separated, e.g. 'Southern North Sea,Dover Strait'.",
    shell_complete=complete_path,
)
@nation_option()
@seen_option
@click.pass_obj
def move(ctx: Context, units: tuple[str, ...], to: str | None, path: str | None, nation: str | None) -> None:
    """Move units together along a path of adjacent zones; a submarine group stops at a hostile
    zone where the enemy may search it (SM2: see `tracker intercept`).

    Example: tracker move DE-SS3 DE-SS4 --path "Southern North Sea,Dover Strait"
    """
    if bool(to) == bool(path):
        raise click.UsageError("give exactly one of --to or --path")
    steps = [to] if to else split_list(path) or []

    act(ctx, "move", {"units": list(units), "path": steps, "nation": nation})


@cli.group()
def ntr() -> None:
    """Naval trade resources."""


@ntr.command(name="place")
@click.argument("zone", shell_complete=complete_sea_zones)
@click.argument("count", type=INTEGER, default=1)
@nation_option()
@seen_option
@click.pass_obj
def ntr_place(ctx: Context, zone: str, count: int, nation: str | None) -> None:
    """Place NTR in a sea zone in the placement phase (CV6).

    Example: tracker ntr place "Central North Sea" 1
    """

    click.echo(summary(perform(ctx, "ntr place", {"zone": zone, "count": count, "nation": nation}).events[-1]))


@cli.command()
@click.argument("technology", shell_complete=complete_technologies)
@nation_option()
@dice_options
@seen_option
@click.pass_obj
def research(ctx: Context, technology: str, nation: str | None, dice_text: str | None, reference: str | None) -> None:
    """Make a research roll in the research phase (TE1).

    Example: tracker research advanced_asw --dice 9
    """

    for e in perform(ctx, "research", {"technology": technology, "nation": nation}, dice_text, reference).events:
        click.echo(summary(e))


@cli.command()
@json_option
@click.pass_obj
def pending(ctx: Context, as_json: bool) -> None:
    """List what the game waits for: whose decision or roll, under which rule.

    Example: tracker pending --json
    """
    t = ctx.tracker
    campaign = t.load(t.campaign_id(ctx.campaign))
    items = [{**item, "command": next_command(item)} for item in campaign.pending()]
    if as_json:
        emit_json(items)
        return
    if not items:
        click.echo(f"Nothing pending. Round {campaign.round} · {campaign.nation} · {campaign.phase}")
    for item in items:
        click.echo(item["text"])
        if item["command"]:
            click.echo(f"  next: {item['command']}")


@cli.group()
def dice() -> None:
    """Dice seeds and commitments."""


@dice.command(name="reveal")
@seen_option
@click.pass_obj
def dice_reveal(ctx: Context) -> None:
    """Publish the current dice seed in the log (anyone can then re-derive its rolls) and commit to a new one.

    Example: tracker dice reveal
    """
    seed = perform(ctx, "dice reveal", {}).value
    click.echo(f"Seed revealed: {seed}")
    click.echo("Later rolls use a fresh seed, committed to in the same event.")


@dice.command(name="switch")
@click.argument("mode", type=click.Choice(["auto", "manual"]))
@click.option("--reason", required=True, help="Why the dice source changes: shown by verify and reports.")
@seen_option
@click.pass_obj
def dice_switch(ctx: Context, mode: str, reason: str) -> None:
    """Switch the campaign's dice source, recorded with a reason (D4).

    Example: tracker dice switch manual --reason "imported copy: the seed stayed behind"
    """
    event = perform(ctx, "dice switch", {"mode": mode, "reason": reason}).events[-1]
    click.echo(f"{summary(event)}   [D4]")


@cli.command()
@click.option(
    "--db",
    "demo_db",
    type=click.Path(dir_okay=False),
    help="New SQLite file for the demo campaign, as the global --db (default demo-campaign.db; never replaced).",
)
@click.pass_obj
def demo(ctx: Context, demo_db: str | None) -> None:
    """Play a short scripted campaign with auto dice and narrate it, in a new database.

    Example: tracker --db demo.db demo && tracker --db demo.db verify
    """
    from tracker.demo import run_demo

    if demo_db and ctx.db and demo_db != ctx.db:
        raise InputError(f"two databases given ({ctx.db} and {demo_db}): give --db once")
    run_demo(demo_db or ctx.db or "demo-campaign.db", click.echo)


def main() -> None:
    settle_imports_from_now()
    try:
        cli(prog_name="tracker")
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, as Unix tools do.
        sys.stderr.close()
        sys.exit(0)


def _register_extensions() -> None:
    """Command groups kept in their own modules, registered on the main group."""
    import importlib

    names = ("board", "convoy", "economy", "history", "naval", "odds", "report", "server", "transfer")
    modules = [importlib.import_module(f"tracker.cli_{name}") for name in names]
    modules.append(importlib.import_module("tracker.shell"))
    for module in modules:
        for command in module.COMMANDS:
            cli.add_command(command)


_register_extensions()
