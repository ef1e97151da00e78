"""The `tracker` command line: a thin click layer over the application service.

Every error a user can cause is printed as one line naming the rule or the input, with
exit status 1 for a refused action and 2 for bad usage; never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click

from domain.errors import InputError, TrackerError
from domain.rules.record import UndoPlan
from domain.ruleset import KNOWN_PHASES, builtin_names, load_ruleset, read_builtin_or_file
from projections.summary import rule_of, summary
from tracker.cli_common import (
    INTEGER,
    POSITIVE,
    Context,
    act,
    acting,
    console,
    dice_options,
    emit_json,
    json_option,
    names,
    nations_option,
    next_command,
    override_options,
    perform,
    progress,
    seen_option,
    split_list,
)
from tracker.completion import (
    complete_battles,
    complete_event_kinds,
    complete_nations,
    complete_path,
    complete_sea_zones,
    complete_technologies,
    complete_units,
    complete_zones,
)
from tracker.names import event_kind
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
                if ctx.params.get("db"):
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


PHASES = click.Choice(list(KNOWN_PHASES), case_sensitive=False)


def _nation_option(help_text: str = "Acting nation (default: the nation whose turn it is).") -> Any:
    return click.option("--nation", help=help_text, shell_complete=complete_nations)


def _battle_argument(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("battle", type=POSITIVE, shell_complete=complete_battles)(f)


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
@_nation_option("With --to: the phase of this nation's turn (default: the nation whose turn it is).")
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
@_nation_option()
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
@_nation_option()
@seen_option
@click.pass_obj
def ntr_place(ctx: Context, zone: str, count: int, nation: str | None) -> None:
    """Place NTR in a sea zone in the placement phase (CV6).

    Example: tracker ntr place "Central North Sea" 1
    """

    click.echo(summary(perform(ctx, "ntr place", {"zone": zone, "count": count, "nation": nation}).events[-1]))


@cli.command()
@click.argument("technology", shell_complete=complete_technologies)
@_nation_option()
@dice_options
@seen_option
@click.pass_obj
def research(ctx: Context, technology: str, nation: str | None, dice_text: str | None, reference: str | None) -> None:
    """Make a research roll in the research phase (TE1).

    Example: tracker research advanced_asw --dice 9
    """

    for e in perform(ctx, "research", {"technology": technology, "nation": nation}, dice_text, reference).events:
        click.echo(summary(e))


# ----- convoy battles -----


@cli.group()
def convoy() -> None:
    """Convoy battles in the NTR owner's collect_resources phase (CV1-CV7)."""


@convoy.command(name="declare")
@click.option("--by", "attacker", required=True, help="The attacking nation.", shell_complete=complete_nations)
@click.option(
    "--zone", required=True, help="Sea zone holding the phasing nation's NTR.", shell_complete=complete_sea_zones
)
@click.option(
    "--subs",
    help="Taking-part submarines, comma-separated (default: all in the zone).",
    shell_complete=complete_units,
)
@click.option(
    "--auto", "auto", is_flag=True, help="Resolve every step with default choices (and --dice, or auto dice)."
)
@dice_options
@seen_option
@click.pass_obj
def convoy_declare(
    ctx: Context,
    attacker: str,
    zone: str,
    subs: str | None,
    auto: bool,
    dice_text: str | None,
    reference: str | None,
) -> None:
    """Declare a convoy attack (CV1).

    Example: tracker convoy declare --by Germany --zone "Central North Sea" --subs DE-SS1,DE-SS2
    """

    act(ctx, "convoy declare", {"by": attacker, "zone": zone, "subs": subs, "auto": auto}, dice_text, reference)


@convoy.command(name="pass")
@click.option("--by", "nation", required=True, help="The enemy nation that passes.")
@seen_option
@click.pass_obj
def convoy_pass(ctx: Context, nation: str) -> None:
    """Record that an enemy declares no (more) convoy attacks in this collect_resources phase (CV1, T4).

    Example: tracker convoy pass --by Austria-Hungary
    """
    act(ctx, "convoy pass", {"by": nation})


@convoy.command(name="roll")
@_battle_argument
@dice_options
@seen_option
@click.pass_obj
def convoy_roll(ctx: Context, battle: int, dice_text: str | None, reference: str | None) -> None:
    """Roll what the battle waits for: merchant defence (CV2), the round (CV4) or the convoy table (CV5).

    Example: tracker convoy roll 1 --dice 10,10
    """

    act(ctx, "convoy roll", {"battle": battle}, dice_text, reference)


@convoy.command(name="search")
@_battle_argument
@click.option(
    "--units",
    help="Searching units, comma-separated (default: every eligible unit); '' for none.",
    shell_complete=complete_units,
)
@dice_options
@seen_option
@click.pass_obj
def convoy_search(ctx: Context, battle: int, units: str | None, dice_text: str | None, reference: str | None) -> None:
    """Choose the ships and aircraft that search, and roll their searches (CV3).

    Example: tracker convoy search 1 --units GB-DD1,GB-BM1 --dice 3,2
    """

    act(ctx, "convoy search", {"battle": battle, "units": units}, dice_text, reference)


@convoy.command(name="casualties")
@_battle_argument
@_nation_option("The nation choosing (default: the only one the battle waits for).")
@click.option(
    "--units",
    help="Units taking the hits, comma-separated (default: the cheapest legal choice).",
    shell_complete=complete_units,
)
@seen_option
@click.pass_obj
def convoy_casualties(ctx: Context, battle: int, nation: str | None, units: str | None) -> None:
    """Choose which units take the hits (CV2, CV4, HA7).

    Example: tracker convoy casualties 1 --nation Germany --units DE-SS2
    """

    act(ctx, "convoy casualties", {"battle": battle, "nation": nation, "units": units})


@convoy.command(name="auto")
@_battle_argument
@dice_options
@seen_option
@click.pass_obj
def convoy_auto(ctx: Context, battle: int, dice_text: str | None, reference: str | None) -> None:
    """Resolve a battle's remaining steps with default choices: auto dice, or the --dice given
    (fewer than the battle needs: it stops where they run out and says what comes next).

    Example: tracker convoy auto 1 --dice 7,4,2
    """

    act(ctx, "convoy auto", {"battle": battle}, dice_text, reference)


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


# ----- undo and redo -----


def _interactive() -> bool:
    """A person at a terminal, who can answer a confirmation prompt."""
    return sys.stdin.isatty()


def _plan_lines(plan: UndoPlan) -> list[str]:
    """What an undo takes back: each action with its events, and the dice among them."""
    lines = []
    for action in plan.actions:
        lines.append(f"  action {action.start} by {action.nation}:")
        lines += [
            f"    {e.originator_version}  {summary(e)}   [{rule_of(e)}]"
            for e in action.events
            if type(e).__name__ != "ActionAsked"
        ]
    if plan.rolls:
        lines.append(f"  dice taken back: roll {', '.join(map(str, plan.rolls))}")
    return lines


def _plan_heading(plan: UndoPlan) -> str:
    count = len(plan.actions)
    events = sum(1 for a in plan.actions for e in a.events if type(e).__name__ != "ActionAsked")
    span = f"event {plan.first}" if plan.first == plan.last else f"events {plan.first}-{plan.last}"
    dice = f", {len(plan.rolls)} dice roll(s)" if plan.rolls else ""
    return f"{count} action(s) in {span} ({events} event(s) in play{dice})"


@cli.command()
@click.option("--to", "to", type=POSITIVE, help="Undo every action after this event (lists them and asks first).")
@override_options("Undo locked actions: dice were rolled or the other side answered since")
@click.option("--yes", is_flag=True, help="With --to: undo without asking (for scripts).")
@seen_option
@click.pass_obj
def undo(ctx: Context, to: int | None, override: bool, reason: str, agreed_by: tuple[str, ...], yes: bool) -> None:
    """Undo the last action (or back to an event) with a compensating event (RK3).

    Example: tracker undo --to 12 --override --reason "moved the wrong U-boat" --agreed-by Britain
    """
    t = ctx.tracker

    def confirm(plan: UndoPlan) -> bool:
        if to is None or yes:
            return True
        click.echo(f"undo --to {to} takes back {_plan_heading(plan)}:")
        for line in _plan_lines(plan):
            click.echo(line)
        if not _interactive():
            raise InputError(f"undo --to {to} asks before it undoes anything; without a terminal, add --yes")
        return click.confirm(f"Undo these {len(plan.actions)} action(s)?", default=False)

    inputs = {"to": to, "override": override, "reason": reason, "agreed_by": list(nations_option(agreed_by))}
    done = perform(ctx, "undo", inputs, confirm=confirm)
    event, plan = done.events[-1], done.value
    click.echo(f"{summary(event)}   [RK3]")
    click.echo(f"Undone: {_plan_heading(plan)}")
    for line in _plan_lines(plan):
        click.echo(line)
    campaign = t.load(t.campaign_id(ctx.campaign))
    click.echo(f"Now: round {campaign.round} · {campaign.nation} · {campaign.phase}")


@cli.command()
@click.option("--all", "every", is_flag=True, help="Redo every action of the last undo still undone, in order.")
@seen_option
@click.pass_obj
def redo(ctx: Context, every: bool) -> None:
    """Re-record the most recently undone action with the dice it rolled (RK4).

    Example: tracker undo && tracker redo
    """
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    for events in perform(ctx, "redo", {"all": every}).value:
        for e in events:
            click.echo(f"{summary(e)}   [{rule_of(e)}]")
    campaign = t.load(cid)
    click.echo(f"Now: round {campaign.round} · {campaign.nation} · {campaign.phase}")


# ----- the log -----


@cli.command()
@click.option("--turn", type=POSITIVE, help="Only events of this national turn.")
@click.option("--phase", type=PHASES, help="Only events recorded in this phase.")
@click.option("--nation", help="Only events involving this nation.", shell_complete=complete_nations)
@click.option("--zone", help="Only events in or through this zone.", shell_complete=complete_zones)
@click.option("--kind", help="Only events of this kind (e.g. DiceRolled).", shell_complete=complete_event_kinds)
@click.option("--battle", type=POSITIVE, help="Only the events of this battle.", shell_complete=complete_battles)
@click.option("--tail", type=POSITIVE, help="Only the last N events.")
@click.option("--asked", is_flag=True, help="Also list what was asked before each action (ActionAsked, RK1).")
@json_option
@click.pass_obj
def log(
    ctx: Context,
    turn: int | None,
    phase: str | None,
    nation: str | None,
    zone: str | None,
    kind: str | None,
    battle: int | None,
    tail: int | None,
    asked: bool,
    as_json: bool,
) -> None:
    """List the campaign's events in order, with rule IDs, filtered as asked.

    Example: tracker log --battle 1 --kind DiceRolled
    """

    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    if nation is not None or zone is not None:
        n = names(t.load(cid))
        nation, zone = n.optional_nation(nation), n.optional_zone(zone)
    kind = event_kind(kind) if kind is not None else None
    from tracker.history import log_records

    records = log_records(
        t,
        cid,
        turn=turn,
        phase=phase,
        nation=nation,
        zone=zone,
        kind=kind,
        battle=battle,
        with_data=as_json,
        tail=tail,
        asked=asked,
    )
    if as_json:
        emit_json(records)
        return
    for r in records:
        rule = f"[{r['rule']}]" if r["rule"] else ""
        mark = f"  (undone by {r['undone_by']})" if r["undone_by"] else ""
        click.echo(f"{r['seq']:>5}  {r['kind']:<19} {rule:<6} {r['summary']}{mark}")


@cli.command()
@click.argument("seq", type=POSITIVE)
@json_option
@click.pass_obj
def explain(ctx: Context, seq: int, as_json: bool) -> None:
    """Explain one event: its rules, dice and target numbers, choices, what it changed, undo status.

    Example: tracker explain 27
    """

    t = ctx.tracker
    from tracker.history import explain as explain_event

    data = explain_event(t, t.campaign_id(ctx.campaign), seq)
    if as_json:
        emit_json(data)
        return
    click.echo(f"Event {data['seq']}: {data['kind']} (turn {data['turn']}, {data['phase']}, {data['timestamp']})")
    click.echo(f"  {data['summary']}")
    for rule in data["rules"]:
        click.echo(f"  Rule {rule['id']}: {rule['statement']}")
    dice = data["dice"]
    if dice:
        source = dice["source"] + (f", ref {dice['reference']}" if dice["reference"] else "")
        click.echo(
            f"  Dice: roll {dice['roll']} by {dice['roller']} for {dice['reason']}: "
            f"D{dice['faces']} -> {dice['values']} ({source})"
        )
        if dice["target"] is not None:
            op = "or less" if dice["success_when"] == "at_most" else "or more"
            base = f" (base {dice['base_target']})" if dice["base_target"] is not None else ""
            click.echo(f"  Target: {dice['target']} {op}{base}")
        for m in dice["modifiers"]:
            change = f"set to {m['set']}" if m["set"] is not None else f"{m['add']:+d}"
            click.echo(f"  Modifier {m['rule']}: {change}, from {m['cause']}")
        if dice["outcome"]:
            click.echo(f"  Outcome: {dice['outcome']}")
    if data["choice"]:
        how = "default (cheapest legal)" if data["choice"]["default"] else "chosen"
        click.echo(f"  Decided by: {data['choice']['by']} ({how})")
    for line in data["changes"]:
        click.echo(f"  Changed: {line}")
    if data["undone_by"]:
        click.echo(f"  Undone by event {data['undone_by']}")
    click.echo(f"  Hash: {data['hash']} (previous {data['prev_hash'][:16]}...)")


@cli.command()
@click.option("--to", "to", type=POSITIVE, help="Print the board after this event and stop.")
@click.option("--battle", type=POSITIVE, help="Print every event of this battle with the board beside it.")
@click.pass_obj
def replay(ctx: Context, to: int | None, battle: int | None) -> None:
    """Step through the log with the board beside each event, forward and backward, roll by roll
    and battle by battle (keys in a terminal), or print chosen frames with --to / --battle.

    Example: tracker replay --battle 1
    """
    from tracker.replay import KEYS, Replay

    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    player = Replay(t, cid, battle=battle)
    if not player.frames:
        raise InputError(f"no events for battle {battle}" if battle is not None else "the log is empty")
    out = console()
    if to is not None:
        if not player.go_to_seq(to):
            raise InputError(f"no event {to} in this campaign")
        player.render(out)
        return
    if battle is not None:
        for i in range(len(player.frames)):
            player.position = i
            player.render(out, zone_only=True)
        return
    if not sys.stdin.isatty():
        raise click.UsageError("replay steps with keys in a terminal; without one use --to SEQ or --battle ID")
    while True:
        click.clear()
        player.render(out)
        out.print(KEYS, style="dim")
        if not player.handle(click.getchar()):
            return


@cli.group()
def projections() -> None:
    """The read models behind state, log, explain and reports."""


@projections.command(name="rebuild")
@click.pass_obj
def projections_rebuild(ctx: Context) -> None:
    """Drop the projections and rebuild them from the whole log, with a progress bar.

    Example: tracker projections rebuild
    """
    t = ctx.tracker
    t.require_writable()
    total = t.max_notification_id()
    with progress(total, "Rebuilding projections") as tick:
        done = t.projector.rebuild(tick)
    click.echo(f"Rebuilt from {done} events.")


@cli.command()
@click.option(
    "--head",
    "head_text",
    metavar="SEQ:HASH",
    help="A head posted earlier (from verify, a report or an export): the log must still hold it.",
)
@click.option(
    "--projections", "check_views", is_flag=True, help="Also compare every view row with a rebuild of the log."
)
@json_option
@click.pass_obj
def verify(ctx: Context, head_text: str | None, check_views: bool, as_json: bool) -> None:
    """Check the hash chain, re-derive every auto die whose seed is available, check every
    snapshot against the log, the dice seed against its commitment and rows beyond the last
    event; print the head (last event and hash) to post, or check one posted earlier.

    Example: tracker verify --head 42:3f9a6c0e5b7d2a11
    """
    from tracker.verify import Head, verify_campaign

    head = Head.parse(head_text) if head_text is not None else None
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    with progress(t.recorder.last_version(cid), "Verifying") as tick:
        report = verify_campaign(t, cid, head, check_views, tick)
    ok = report.ok and not report.dice_problems
    if as_json:
        emit_json(
            {
                "ok": ok,
                "events": report.events,
                "head": {"seq": report.head_seq, "hash": report.head_hash},
                "rolls_checked": report.rolls_checked,
                "rolls_unchecked": report.rolls_unchecked,
                "snapshots_checked": report.snapshots_checked,
                "actions_refereed": report.actions_refereed,
                "actions_checked_by_hash_only": report.actions_unasked,
                "projection_rows_checked": report.projection_rows_checked,
                "problem": report.problem,
                "bad_event": report.bad_version,
                "dice_switches": report.switches,
                "overrides": report.overrides,
                "rerolls": report.rerolls,
                "dice_problems": report.dice_problems,
                "notes": report.notes,
            }
        )
    elif report.ok:
        click.echo(
            f"OK: {report.events} events, hash chain intact; "
            f"{report.rolls_checked} auto roll(s) re-derived from the seed; "
            f"{report.snapshots_checked} snapshot(s) match the log."
        )
        click.echo(
            f"Re-refereed: {report.actions_refereed} action(s) run again with their recorded inputs and dice "
            "record exactly the logged events"
            + (
                f"; {report.actions_unasked} action(s) recorded without their inputs "
                "(by an earlier tracker or a script) checked by hash only."
                if report.actions_unasked
                else "."
            )
        )
        if report.projection_rows_checked is not None:
            click.echo(f"Projections: {report.projection_rows_checked} view rows match a rebuild of the log.")
        for note in report.notes:
            click.echo(note)
        for title, items in (
            ("Dice source switches (D4)", report.switches),
            ("Overrides (D4, RK3)", report.overrides),
            ("Rerolls after an override undo (RK3)", report.rerolls),
        ):
            if items:
                click.echo(f"{title}:")
                for item in items:
                    click.echo(f"  event {item['seq']}: {item['text']}")
        click.echo(f"Head: {report.head_seq}:{report.head_hash}")
    if not ok:
        if not as_json:
            for problem in [report.problem] if report.problem else report.dice_problems:
                click.echo(f"FAILED: {problem}", err=True)
        sys.exit(1)


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
    try:
        cli(prog_name="tracker")
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, as Unix tools do.
        sys.stderr.close()
        sys.exit(0)


def _register_extensions() -> None:
    """Command groups kept in their own modules, registered on the main group."""
    from tracker import cli_board, cli_economy, cli_naval, cli_odds, cli_report, cli_server, cli_transfer, shell

    for module in (cli_board, cli_economy, cli_naval, cli_odds, cli_report, cli_server, cli_transfer, shell):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_extensions()
