"""The turn's commands: `tracker state`, `next`, `move`, `ntr place`, `research`, `pending` and
`dice` (T1-T4, D4, D5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from domain.errors import InputError, RuleViolation, TrackerError
from domain.text import phase_name, possessive
from projections.summary import rule_of, summary
from tracker.cli.commands.board import turn_heading
from tracker.cli.common import (
    PHASES,
    POSITIVE,
    Context,
    act,
    acting,
    console,
    dice_options,
    echo_prose,
    echo_waiting,
    emit_json,
    emit_recorded,
    json_option,
    nation_option,
    next_command,
    perform,
    record_json_option,
    seen_option,
    split_list,
    suggested,
    wants_json,
)
from tracker.cli.completion import (
    complete_move_zones,
    complete_path,
    complete_sea_zones,
    complete_technologies,
    complete_turns,
    complete_units,
)
from tracker.cli.params import MAX_INT, REASON, ZONE, Whole
from tracker.reports.views import board_now, heading, render_board
from tracker.service.describe import quoted
from tracker.service.names import once_each, split_units
from tracker.service.turn_played import in_progress, played_now

if TYPE_CHECKING:
    from domain.campaign import Campaign

# ----- state -----


@click.command()
@click.option(
    "--turn",
    type=POSITIVE,
    help="The board at the end of this national turn (1 = round 1's first nation).",
    shell_complete=complete_turns,
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
    board = t.board_at(cid, turn=turn, phase=phase, at=at) if turn or at else board_now(campaign)
    name = t.name_of(campaign)
    # T1: the turn (or phase) asked for may still be played: its board is then the board now.
    turn_now, phase_now = played_now(campaign, turn, phase) if turn else (False, False)
    if as_json:
        emit_json({"campaign": name, **board, **in_progress(campaign, turn, phase)})
        return
    out = console()
    out.print(turn_heading(name, board, turn_now, phase_now, phase) if turn else heading(name, board))
    render_board(out, board, campaign.scenario)


# ----- turn sequence and actions -----


@click.command(name="next")
@click.option("--to", "to_phase", type=PHASES, help="Keep going until this phase opens.")
@nation_option("With --to: the phase of this nation's turn (default: the nation whose turn it is).")
@click.option(
    "--confirm-losses",
    is_flag=True,
    help=(
        "End noncombat movement even though air units cannot land: they are lost (F7); end placement "
        "even though units bought have no place to go: they are given up (PU2)."
    ),
)
@record_json_option
@seen_option
@click.pass_obj
def next_phase(ctx: Context, to_phase: str | None, nation: str | None, confirm_losses: bool) -> None:
    """Close the current phase and open the next (collecting resources at the end of a turn);
    refused while the phase still requires something (T4: `tracker pending` lists it). With --to,
    step phase by phase (each step its own action, under the same gates) until that position:
    later this round, or in the next round's first turn (never past another nation's turn of it).

    Example: tracker next --to collect_resources --nation Britain
    """

    recorded: list[Any] = []  # every step's events, for --json

    def step() -> Campaign:
        done = perform(ctx, "next", {"confirm_losses": confirm_losses})
        recorded.extend(done.events)
        if not wants_json():
            for e in done.events:
                echo_prose(f"{summary(e, done.campaign.scenario, done.campaign.ruleset)}   [{rule_of(e)}]")
        return done.campaign

    if to_phase is None:
        if nation is not None:
            raise click.UsageError("--nation goes with --to")
        now = step()
        if wants_json():
            emit_recorded(ctx, "next", recorded, now)
            return
        # T4: what the phase just opened waits for (a battle due, a convoy attack that may be
        # declared, aircraft to land where they may, F7), as after any other action.
        echo_waiting(recorded, now.pending())
        return
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    campaign = t.load(cid)
    target = acting(campaign, nation)
    if to_phase not in campaign.ruleset.phases:
        raise InputError(f"phase {to_phase!r} is not in this campaign's ruleset")
    if (campaign.nation, campaign.phase) == (target, to_phase):
        raise InputError(
            f"already there: it is {possessive(target)} {phase_name(to_phase)} phase (round {campaign.round}); "
            "plain `tracker next` ends it"
        )
    if not campaign.at_war(target) and not campaign.at_war(target, campaign.round + 1):
        entry = campaign.scenario.nations[target].entry_round
        raise RuleViolation("F8", f"{target} is neutral until round {entry}: its turns are passed over")
    beyond = past_next_round_opening(campaign, target, to_phase)
    if beyond is not None:
        raise beyond
    # One full round at most: every nation's every phase (two: the next round's first nation
    # at war is reached after the turns of this round that are left).
    now = campaign
    try:
        for _ in range(2 * len(campaign.ruleset.phases) * len(campaign.scenario.turn_order)):
            now = step()
            if (now.nation, now.phase) == (target, to_phase):
                break
        else:
            raise AssertionError("the turn sequence did not reach the phase within a round")  # pragma: no cover
    except TrackerError:
        # The steps taken before a refusal stay recorded: --json still prints them (exit 1,
        # the refusal on stderr), as the text lines would have been printed one by one.
        if wants_json() and recorded:
            emit_recorded(ctx, "next", recorded, t.load(cid))
        raise
    if wants_json():
        emit_recorded(ctx, "next", recorded, now)
        return
    # Only where the steps stopped: the phases passed through were closed by the next step.
    echo_waiting(recorded, now.pending())


def past_next_round_opening(campaign: Campaign, target: str, to_phase: str) -> RuleViolation | None:
    """T4, F8: the refusal of a `next --to` target reached only after a whole turn of another
    nation in the next round (a nation neutral this round, or a position behind this one, whose
    turn in the next round comes after other nations'); None when the target lies in this round
    or in the next round's first turn."""
    order, phases, round_ = campaign.scenario.turn_order, campaign.ruleset.phases, campaign.round
    here = (order.index(campaign.nation), phases.index(campaign.phase))
    there = (order.index(target), phases.index(to_phase))
    if campaign.at_war(target) and there > here:
        return None
    nxt = round_ + 1
    before = [n for n in order[: there[0]] if campaign.at_war(n, nxt)]
    if not before:
        return None
    owners = [possessive(n) for n in before]
    turns = " and ".join([", ".join(owners[:-1]), owners[-1]] if len(owners) > 1 else owners)
    # The round's end as far as `--to` goes: the next round's first turn; from the current
    # position itself (already there) the last phase of this round's last turn at war.
    opening = (before[0], phases[0])
    if opening == (campaign.nation, campaign.phase):
        last = [n for n in order if campaign.at_war(n)][-1]
        stop = f"`tracker next --to {phases[-1]} --nation {quoted(last)}` ends round {round_}"
    else:
        stop = f"`tracker next --to {opening[1]} --nation {quoted(opening[0])}` opens round {nxt}"
    then = (
        f"from {possessive(before[-1])} round-{nxt} turn, "
        f"`tracker next --to {to_phase} --nation {quoted(target)}` reaches it"
    )
    where = (
        f"its {phase_name(to_phase)} comes after {turns} round-{nxt} turn{'s' if len(before) > 1 else ''}; "
        f"`next --to` stops at the round's end: {stop}; {then}"
    )
    if campaign.at_war(target):
        return RuleViolation("T4", f"{possessive(target)} {phase_name(to_phase)} is in round {nxt}: {where}")
    return RuleViolation("F8", f"{target} is neutral in round {round_} (at war from round {nxt}): {where}")


@click.command()
@click.argument("units", nargs=-1, required=True, shell_complete=complete_units)
@click.option(
    "--to",
    "to",
    type=ZONE,
    help="Destination zone, one step away; further, the refusal names the move along a shortest route (--path).",
    shell_complete=complete_move_zones,
)
@click.option(
    "--path",
    "path",
    help="Zones after the start, comma-separated, e.g. 'Southern North Sea,Dover Strait'.",
    shell_complete=complete_path,
)
@nation_option()
@record_json_option
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
    once_each(split_units(units) or [])
    # A zone typed unquoted (`--to Central North Sea`) is said how to quote by the main group.
    act(ctx, "move", {"units": list(units), "path": steps, "nation": nation})


@click.group()
def ntr() -> None:
    """Naval trade resources."""


@ntr.command(name="place")
@click.argument("zone", type=ZONE, shell_complete=complete_sea_zones)
@click.argument("count", type=Whole(1, MAX_INT), default=1)
@nation_option()
@record_json_option
@seen_option
@click.pass_obj
def ntr_place(ctx: Context, zone: str, count: int, nation: str | None) -> None:
    """Place NTR in a sea zone in the placement phase (CV6).

    Example: tracker ntr place "Central North Sea" 1
    """

    done = perform(ctx, "ntr place", {"zone": zone, "count": count, "nation": nation})
    if wants_json():
        emit_recorded(ctx, "ntr place", done.events, done.campaign)
        return
    # With its rule and fitted to the terminal, as every other action's line (`act`).
    e = done.events[-1]
    echo_prose(f"{summary(e)}   [{rule_of(e)}]")


@click.command()
@click.argument("technology", shell_complete=complete_technologies)
@nation_option()
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def research(ctx: Context, technology: str, nation: str | None, dice_text: str | None, reference: str | None) -> None:
    """Make a research roll in the research phase (TE1).

    Example: tracker research advanced_asw --dice 9
    """

    done = perform(ctx, "research", {"technology": technology, "nation": nation}, dice_text, reference)
    if wants_json():
        emit_recorded(ctx, "research", done.events, done.campaign)
        return
    for e in done.events:
        echo_prose(f"{summary(e)}   [{rule_of(e)}]")


@click.command()
@json_option
@click.pass_obj
def pending(ctx: Context, as_json: bool) -> None:
    """List what the game waits for: whose decision or roll, under which rule, and the command
    that answers it. When nothing keeps the phase open, the first item (kind "turn") names the
    nation whose phase it is: the game waits for it to finish the phase (T3, T4). In its
    naval combat phase, the battles it may start but need not follow (NC1, AS1).

    Example: tracker pending --json
    """
    t = ctx.tracker
    campaign = t.load(t.campaign_id(ctx.campaign))
    # F7: an item of aircraft that must land carries the flight that lands them (`landing`).
    items = [{**item, "command": next_command(item)} for item in campaign.pending(turn=True)]
    if as_json:
        emit_json(items)
        return
    for item in items:
        echo_prose(item["text"])
        # The turn item's words name its command already.
        if item["command"] and item["command"] not in item["text"]:
            click.echo(f"  next: {suggested(item['command'])}")


@click.group()
def dice() -> None:
    """Dice seeds and commitments."""


@dice.command(name="reveal")
@record_json_option
@seen_option
@click.pass_obj
def dice_reveal(ctx: Context) -> None:
    """Publish the current dice seed in the log (anyone can then re-derive its rolls) and commit to a new one.

    Example: tracker dice reveal
    """
    done = perform(ctx, "dice reveal", {})
    seed = done.value
    if wants_json():
        emit_recorded(ctx, "dice reveal", done.events, done.campaign, seed=seed)
        return
    click.echo(f"Seed revealed: {seed}")
    click.echo("Later rolls use a fresh seed, committed to in the same event.")


@dice.command(name="switch")
@click.argument("mode", type=click.Choice(["auto", "manual"]))
@click.option("--reason", type=REASON, required=True, help="Why the dice source changes: shown by verify and reports.")
@record_json_option
@seen_option
@click.pass_obj
def dice_switch(ctx: Context, mode: str, reason: str) -> None:
    """Switch the campaign's dice source, recorded with a reason (D4).

    Example: tracker dice switch manual --reason "imported copy: the seed stayed behind"
    """
    done = perform(ctx, "dice switch", {"mode": mode, "reason": reason})
    if wants_json():
        emit_recorded(ctx, "dice switch", done.events, done.campaign)
        return
    echo_prose(f"{summary(done.events[-1])}   [D4]")


@dice.command(name="adopt", short_help="Bring a moved campaign's secret dice seed over from the database it left (D5).")
@click.option(
    "--from",
    "source",
    required=True,
    metavar="DB",
    help="The database (a SQLite file or a URL) the campaign was exported from, which holds its seed.",
)
@click.option(
    "--keys",
    metavar="KEYS",
    help="Read the seed from this league server's key store (the server that served the campaign there).",
)
@json_option
@click.pass_obj
def dice_adopt(ctx: Context, source: str, keys: str | None, as_json: bool) -> None:
    """Bring the campaign's secret dice seed over from the database it was exported from, so an
    imported or moved campaign rolls its auto dice again (D4, D5). The seed is checked against
    the commitment this log holds; nothing is written in the other database.

    Example: tracker --db postgresql://league@db/league dice adopt --from campaign.db
    """
    from tracker.service.seed_adopt import adopt_seed

    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    done = adopt_seed(t, cid, source, keys)
    mode = t.load(cid).dice_mode
    if as_json:
        emit_json({"epoch": done.epoch, "from": done.source, "already_here": done.already, "dice": mode})
        return
    if done.already:
        click.echo(f"This database holds the dice seed of epoch {done.epoch} already: nothing to adopt.")
    else:
        click.echo(f"Adopted the dice seed of epoch {done.epoch} from {done.source}: it matches the log's commitment.")
    if mode == "auto":
        click.echo("The campaign rolls its auto dice here again (D5).")
    else:
        click.echo(
            f"The campaign rolls {mode} dice: to roll the tracker's again, "
            f"`{suggested('tracker dice switch auto --reason TEXT', ctx.campaign)}` (D4)."
        )
