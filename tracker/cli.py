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
from domain.ruleset import KNOWN_PHASES, builtin_names, load_ruleset, read_builtin_or_file
from projections.summary import summary
from tracker.cli_common import (
    Context,
    act,
    console,
    dice_options,
    emit_json,
    json_option,
    run,
    split_list,
    waiting_nation,
)
from tracker.verify import verify_events
from tracker.views import board_now, heading, render_board

if TYPE_CHECKING:
    # Storage (through the campaign's history) is imported by the commands that read it, so
    # `tracker --help` and `--version` start without it (tests/test_cli_startup.py).
    from domain.campaign import Campaign
    from domain.dice import DiceSource


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


class TrackerGroup(click.Group):
    """Maps every error to a one-line message and an exit status."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TrackerError as e:
            _fail(str(e), e.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, BrokenPipeError):
            raise
        except Exception as e:  # noqa: BLE001 - the promise is: never a traceback
            if os.environ.get("TRACKER_DEBUG"):
                raise
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            _fail(f"unexpected {type(e).__name__}: {first} (set TRACKER_DEBUG=1 for details)", 1)


@click.group(cls=TrackerGroup)
@click.option("--db", envvar="TRACKER_DB", help="SQLite file path or SQLAlchemy URL (default ./campaign.db).")
@click.option(
    "--campaign", envvar="TRACKER_CAMPAIGN", help="Campaign name (needed when the database holds several)."
)
@click.version_option(package_name="twtea-naval-tracker")
@click.pass_context
def cli(ctx: click.Context, db: str | None, campaign: str | None) -> None:
    """Campaign tracker and referee for the naval war of The War to End All Wars.

    Example: tracker new autumn --scenario north-sea-1914 && tracker state
    """
    obj = Context(db, campaign)
    ctx.obj = obj
    ctx.call_on_close(obj.close)


def _acting(campaign: Campaign, nation: str | None) -> str:
    return nation or campaign.nation


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
    type=click.IntRange(min=1),
    help="The board at the end of this national turn (1 = round 1's first nation).",
)
@click.option(
    "--phase",
    type=click.Choice(list(KNOWN_PHASES)),
    help="With --turn: at the end of this phase of that turn.",
)
@click.option("--at", "at", type=click.IntRange(min=1), help="The board right after this event.")
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
@click.option(
    "--to", "to_phase", type=click.Choice(list(KNOWN_PHASES)), help="Keep going until this phase opens."
)
@click.option(
    "--nation", help="With --to: the phase of this nation's turn (default: the nation whose turn it is)."
)
@click.pass_obj
def next_phase(ctx: Context, to_phase: str | None, nation: str | None) -> None:
    """Close the current phase and open the next (collecting resources at the end of a turn);
    with --to, step phase by phase (each step its own action) until that phase opens.

    Example: tracker next --to collect_resources --nation Britain
    """

    def command(c: Campaign, _dice: DiceSource) -> list[str]:
        before = c.version
        c.advance()
        return [summary(e) for e in c.pending_events if e.originator_version > before]

    if to_phase is None:
        if nation is not None:
            raise click.UsageError("--nation goes with --to")
        for line in run(ctx, command):
            click.echo(line)
        return
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    campaign = t.load(cid)
    target = nation or campaign.nation
    if target not in campaign.scenario.nations:
        raise InputError(f"unknown nation {target!r} (known: {', '.join(campaign.scenario.turn_order)})")
    if to_phase not in campaign.ruleset.phases:
        raise InputError(f"phase {to_phase!r} is not in this campaign's ruleset")
    # One full round at most: every nation's every phase.
    for _ in range(len(campaign.ruleset.phases) * len(campaign.scenario.turn_order)):
        for line in run(ctx, command):
            click.echo(line)
        now = t.load(cid)
        if (now.nation, now.phase) == (target, to_phase):
            return
    raise AssertionError("the turn sequence did not reach the phase within a round")  # pragma: no cover


@cli.command()
@click.argument("units", nargs=-1, required=True)
@click.option(
    "--to",
    "to",
    help="Destination zone (the shortest legal route is not guessed: use --path for more than one step).",
)
@click.option(
    "--path", "path", help="Zones after the start, comma-separated, e.g. 'Southern North Sea,Dover Strait'."
)
@click.option("--nation", help="Acting nation (default: the nation whose turn it is).")
@click.pass_obj
def move(ctx: Context, units: tuple[str, ...], to: str | None, path: str | None, nation: str | None) -> None:
    """Move units together along a path of adjacent zones; a submarine group stops at a hostile
    zone where the enemy may search it (SM2: see `tracker intercept`).

    Example: tracker move DE-SS3 DE-SS4 --path "Southern North Sea,Dover Strait"
    """
    if bool(to) == bool(path):
        raise click.UsageError("give exactly one of --to or --path")
    steps = [to] if to else split_list(path) or []

    def action(c: Campaign, _dice: DiceSource) -> None:
        c.move(_acting(c, nation), list(units), steps)

    act(ctx, action)


@cli.group()
def ntr() -> None:
    """Naval trade resources."""


@ntr.command(name="place")
@click.argument("zone")
@click.argument("count", type=int, default=1)
@click.option("--nation", help="Acting nation (default: the nation whose turn it is).")
@click.pass_obj
def ntr_place(ctx: Context, zone: str, count: int, nation: str | None) -> None:
    """Place NTR in a sea zone in the placement phase (CV6).

    Example: tracker ntr place "Central North Sea" 1
    """

    def command(c: Campaign, _dice: DiceSource) -> str:
        c.place_ntr(_acting(c, nation), zone, count)
        return summary(c.pending_events[-1])

    click.echo(run(ctx, command))


@cli.command()
@click.argument("technology")
@click.option("--nation", help="Acting nation (default: the nation whose turn it is).")
@dice_options
@click.pass_obj
def research(
    ctx: Context, technology: str, nation: str | None, dice_text: str | None, reference: str | None
) -> None:
    """Make a research roll in the research phase (TE1).

    Example: tracker research advanced_asw --dice 9
    """

    def command(c: Campaign, dice: DiceSource) -> list[str]:
        before = c.version
        c.research(_acting(c, nation), technology, dice)
        return [summary(e) for e in c.pending_events if e.originator_version > before]

    for line in run(ctx, command, dice_text, reference):
        click.echo(line)


# ----- convoy battles -----


@cli.group()
def convoy() -> None:
    """Convoy battles in the NTR owner's collect_resources phase (CV1-CV7)."""


@convoy.command(name="declare")
@click.option("--by", "attacker", required=True, help="The attacking nation.")
@click.option("--zone", required=True, help="Sea zone holding the phasing nation's NTR.")
@click.option("--subs", help="Taking-part submarines, comma-separated (default: all in the zone).")
@click.option("--auto", "auto", is_flag=True, help="Resolve every step with default choices and auto dice.")
@click.pass_obj
def convoy_declare(ctx: Context, attacker: str, zone: str, subs: str | None, auto: bool) -> None:
    """Declare a convoy attack (CV1).

    Example: tracker convoy declare --by Germany --zone "Central North Sea" --subs DE-SS1,DE-SS2
    """

    def action(c: Campaign, dice: DiceSource) -> None:
        number = c.declare_convoy_attack(attacker, zone, split_list(subs))
        if auto:
            c.convoy_auto(number, dice)

    act(ctx, action)


@convoy.command(name="roll")
@click.argument("battle", type=int)
@dice_options
@click.pass_obj
def convoy_roll(ctx: Context, battle: int, dice_text: str | None, reference: str | None) -> None:
    """Roll what the battle waits for: merchant defence (CV2), the round (CV4) or the convoy table (CV5).

    Example: tracker convoy roll 1 --dice 10,10
    """

    def action(c: Campaign, dice: DiceSource) -> None:
        c.convoy_roll(battle, dice)

    act(ctx, action, dice_text, reference)


@convoy.command(name="search")
@click.argument("battle", type=int)
@click.option("--units", help="Searching units, comma-separated (default: every eligible unit); '' for none.")
@dice_options
@click.pass_obj
def convoy_search(
    ctx: Context, battle: int, units: str | None, dice_text: str | None, reference: str | None
) -> None:
    """Choose the ships and aircraft that search, and roll their searches (CV3).

    Example: tracker convoy search 1 --units GB-DD1,GB-BM1 --dice 3,2
    """

    def action(c: Campaign, dice: DiceSource) -> None:
        c.convoy_search(battle, split_list(units), dice)

    act(ctx, action, dice_text, reference)


@convoy.command(name="casualties")
@click.argument("battle", type=int)
@click.option("--nation", help="The nation choosing (default: the only one the battle waits for).")
@click.option("--units", help="Units taking the hits, comma-separated (default: the cheapest legal choice).")
@click.pass_obj
def convoy_casualties(ctx: Context, battle: int, nation: str | None, units: str | None) -> None:
    """Choose which units take the hits (CV2, CV4, HA7).

    Example: tracker convoy casualties 1 --nation Germany --units DE-SS2
    """

    def action(c: Campaign, dice: DiceSource) -> None:
        c.convoy_choose_casualties(battle, waiting_nation(c, battle, nation), split_list(units))

    act(ctx, action)


@convoy.command(name="auto")
@click.argument("battle", type=int)
@click.pass_obj
def convoy_auto(ctx: Context, battle: int) -> None:
    """Resolve a battle's remaining steps with default choices and auto dice.

    Example: tracker convoy auto 1
    """

    def action(c: Campaign, dice: DiceSource) -> None:
        c.convoy_auto(battle, dice)

    act(ctx, action)


@cli.command()
@json_option
@click.pass_obj
def pending(ctx: Context, as_json: bool) -> None:
    """List what the game waits for: whose decision or roll, under which rule.

    Example: tracker pending --json
    """
    t = ctx.tracker
    campaign = t.load(t.campaign_id(ctx.campaign))
    items = campaign.pending()
    if as_json:
        emit_json(items)
        return
    if not items:
        click.echo(f"Nothing pending. Round {campaign.round} · {campaign.nation} · {campaign.phase}")
    for item in items:
        click.echo(item["text"])


# ----- undo -----


@cli.command()
@click.option("--to", "to", type=int, help="Undo every action after this event.")
@click.option("--override", is_flag=True, help="Undo actions that rolled dice (needs --reason).")
@click.option("--reason", default="", help="Why: recorded in the log and shown in reports.")
@click.pass_obj
def undo(ctx: Context, to: int | None, override: bool, reason: str) -> None:
    """Undo the last action (or back to an event) with a compensating event (RK3).

    Example: tracker undo --to 12 --override --reason "moved the wrong U-boat"
    """
    t = ctx.tracker
    event = t.undo(t.campaign_id(ctx.campaign), to, override, reason)
    click.echo(f"{summary(event)}   [RK3]")
    campaign = t.load(t.campaign_id(ctx.campaign))
    click.echo(f"Now: round {campaign.round} · {campaign.nation} · {campaign.phase}")


# ----- the log -----


@cli.command()
@click.option("--turn", type=click.IntRange(min=1), help="Only events of this national turn.")
@click.option("--phase", type=click.Choice(list(KNOWN_PHASES)), help="Only events recorded in this phase.")
@click.option("--nation", help="Only events involving this nation.")
@click.option("--zone", help="Only events in or through this zone.")
@click.option("--kind", help="Only events of this kind (e.g. DiceRolled).")
@click.option("--battle", type=int, help="Only the events of this battle.")
@click.option("--tail", type=click.IntRange(min=1), help="Only the last N events.")
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
    as_json: bool,
) -> None:
    """List the campaign's events in order, with rule IDs, filtered as asked.

    Example: tracker log --battle 1 --kind DiceRolled
    """
    from tracker.history import log_records

    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    records = log_records(
        t, cid, turn=turn, phase=phase, nation=nation, zone=zone, kind=kind, battle=battle, with_data=as_json
    )
    if tail:
        records = records[-tail:]
    if as_json:
        emit_json(records)
        return
    for r in records:
        rule = f"[{r['rule']}]" if r["rule"] else ""
        mark = f"  (undone by {r['undone_by']})" if r["undone_by"] else ""
        click.echo(f"{r['seq']:>5}  {r['kind']:<19} {rule:<6} {r['summary']}{mark}")


@cli.command()
@click.argument("seq", type=click.IntRange(min=1))
@json_option
@click.pass_obj
def explain(ctx: Context, seq: int, as_json: bool) -> None:
    """Explain one event: its rules, dice and target numbers, choices, what it changed, undo status.

    Example: tracker explain 27
    """
    from tracker.history import explain as explain_event

    t = ctx.tracker
    data = explain_event(t, t.campaign_id(ctx.campaign), seq)
    if as_json:
        emit_json(data)
        return
    click.echo(
        f"Event {data['seq']}: {data['kind']} (turn {data['turn']}, {data['phase']}, {data['timestamp']})"
    )
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
@click.option("--to", "to", type=click.IntRange(min=1), help="Print the board after this event and stop.")
@click.option("--battle", type=int, help="Print every event of this battle with the board beside it.")
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
        raise click.UsageError(
            "replay steps with keys in a terminal; without one use --to SEQ or --battle ID"
        )
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
    total = t.max_notification_id()
    with click.progressbar(length=total, label="Rebuilding projections", file=sys.stderr) as bar:
        done = t.projector.rebuild(bar.update)
    click.echo(f"Rebuilt from {done} events.")


@cli.command()
@json_option
@click.pass_obj
def verify(ctx: Context, as_json: bool) -> None:
    """Check the hash chain of the log and re-derive every auto die whose seed is available.

    Example: tracker verify
    """
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    stored = t.stored_events(cid)

    def decoder(s: Any) -> Callable[[], Any]:
        return lambda: t.decode(s)

    report = verify_events(
        ((s.originator_version, decoder(s)) for s in stored), lambda epoch: t.seed_for(cid, epoch)
    )
    if as_json:
        emit_json(
            {
                "ok": report.ok,
                "events": report.events,
                "rolls_checked": report.rolls_checked,
                "rolls_unchecked": report.rolls_unchecked,
                "problem": report.problem,
                "bad_event": report.bad_version,
            }
        )
    elif report.ok:
        click.echo(
            f"OK: {report.events} events, hash chain intact; "
            f"{report.rolls_checked} auto roll(s) re-derived from the seed."
        )
        for note in report.notes:
            click.echo(note)
    if not report.ok:
        if not as_json:
            click.echo(f"FAILED: {report.problem}", err=True)
        sys.exit(1)


@cli.group()
def dice() -> None:
    """Dice seeds and commitments."""


@dice.command(name="reveal")
@click.pass_obj
def dice_reveal(ctx: Context) -> None:
    """Publish the current dice seed in the log (anyone can then re-derive its rolls) and commit to a new one.

    Example: tracker dice reveal
    """
    t = ctx.tracker
    seed = t.reveal_seed(t.campaign_id(ctx.campaign))
    click.echo(f"Seed revealed: {seed}")
    click.echo("Later rolls use a fresh seed, committed to in the same event.")


@cli.command()
@click.option(
    "--db",
    "demo_db",
    default="demo-campaign.db",
    show_default=True,
    help="SQLite file for the demo campaign (replaced if it exists).",
)
@click.pass_obj
def demo(ctx: Context, demo_db: str) -> None:
    """Play a short scripted campaign with auto dice and narrate it.

    Example: tracker demo --db demo.db && tracker --db demo.db verify
    """
    from tracker.demo import run_demo

    run_demo(demo_db, click.echo)


def main() -> None:
    try:
        cli(prog_name="tracker")
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, as Unix tools do.
        sys.stderr.close()
        sys.exit(0)


def _register_extensions() -> None:
    """Command groups kept in their own modules, registered on the main group."""
    from tracker import cli_naval, cli_report, cli_transfer

    for module in (cli_naval, cli_report, cli_transfer):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_extensions()
