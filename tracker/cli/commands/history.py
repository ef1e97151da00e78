"""The record's commands: `tracker undo`, `redo`, `log`, `explain`, `replay`, `verify` and
`projections rebuild` (RK1-RK4, D1-D5)."""

from __future__ import annotations

import sys
from typing import Any

import click

from domain.errors import InputError, TrackerError
from domain.rules.record import UndoPlan
from domain.text import phase_name, plural, type_name
from projections.summary import rule_of, summary
from tracker.cli.common import (
    PHASES,
    POSITIVE,
    Context,
    console,
    echo_prose,
    emit_json,
    emit_recorded,
    fit_prose,
    json_option,
    names,
    nations_option,
    override_options,
    perform,
    progress,
    prose_width,
    record_json_option,
    seen_option,
    wants_json,
)
from tracker.cli.completion import (
    complete_battles,
    complete_event_kinds,
    complete_nations,
    complete_recent_events,
    complete_turns,
    complete_zones,
)
from tracker.cli.params import NATION, ZONE
from tracker.service.names import event_kind
from tracker.service.undo_log import stays_in_effect, undone_mark
from tracker.service.undo_text import plan_heading, plan_json, plan_lines

# ----- undo and redo -----

# Where `tracker log` prints an event's summary: after its number, kind and rule.
LOG_SUMMARY_COLUMN = len(f"{'':>5}  {'':<19} {'':<6} ")


def _interactive() -> bool:
    """A person at a terminal, who can answer a confirmation prompt."""
    return sys.stdin.isatty()


@click.command()
@click.option("--to", "to", type=POSITIVE, help="Undo every action after this event (lists them and asks first).")
@override_options("Undo locked actions: dice were rolled or the other side answered since")
@click.option("--yes", is_flag=True, help="With --to: undo without asking (for scripts).")
@record_json_option
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
        if wants_json():
            # The listing and the question would break the JSON: a script says --yes.
            raise click.UsageError("undo --to with --json asks nothing: add --yes")
        # Asked at a terminal with the output piped (`undo --to 9 | less`), the listing and the
        # question went down the pipe while the command waited for an answer: they go to the
        # terminal (standard error) instead, and the pipe gets what the undo did.
        aside = _interactive() and not sys.stdout.isatty()
        click.echo(fit_prose(f"undo --to {to} takes back {plan_heading(plan)}:"), err=aside)
        for line in plan_lines(plan, t.load(t.campaign_id(ctx.campaign))):
            click.echo(fit_prose(line), err=aside)
        if not _interactive():
            raise InputError(f"undo --to {to} asks before it undoes anything; without a terminal, add --yes")
        these = "this action" if len(plan.actions) == 1 else f"these {len(plan.actions)} actions"
        return click.confirm(f"Undo {these}?", default=False, err=aside)

    inputs = {"to": to, "override": override, "reason": reason, "agreed_by": list(nations_option(agreed_by))}
    done = perform(ctx, "undo", inputs, confirm=confirm)
    event, plan = done.events[-1], done.value
    if wants_json():
        emit_recorded(ctx, "undo", done.events, done.campaign, undone=plan_json(plan))
        return
    # Wrapped between words on a narrow terminal, as `pending` is (a shell at 60 columns).
    echo_prose(f"{summary(event, done.campaign.scenario, done.campaign.ruleset)}   [RK3]")
    echo_prose(f"Undone: {plan_heading(plan)}")
    for line in plan_lines(plan, done.campaign):
        echo_prose(line)
    campaign = t.load(t.campaign_id(ctx.campaign))
    click.echo(f"Now: round {campaign.round} · {campaign.nation} · {phase_name(campaign.phase)}")


@click.command()
@click.option("--all", "every", is_flag=True, help="Redo every action of the last undo still undone, in order.")
@record_json_option
@seen_option
@click.pass_obj
def redo(ctx: Context, every: bool) -> None:
    """Re-record the most recently undone action with the dice it rolled (RK4).

    Example: tracker undo && tracker redo
    """
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    done = perform(ctx, "redo", {"all": every})
    if wants_json():
        emit_recorded(ctx, "redo", [e for events in done.value for e in events], done.campaign)
        return
    scenario, ruleset = done.campaign.scenario, done.campaign.ruleset
    for events in done.value:
        for e in events:
            echo_prose(f"{summary(e, scenario, ruleset)}   [{rule_of(e)}]")
    campaign = t.load(cid)
    click.echo(f"Now: round {campaign.round} · {campaign.nation} · {phase_name(campaign.phase)}")


# ----- the log -----


@click.command()
@click.option("--turn", type=POSITIVE, help="Only events of this national turn.", shell_complete=complete_turns)
@click.option("--phase", type=PHASES, help="Only events recorded in this phase.")
@click.option("--nation", type=NATION, help="Only events involving this nation.", shell_complete=complete_nations)
@click.option("--zone", type=ZONE, help="Only events in or through this zone.", shell_complete=complete_zones)
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
    from tracker.service.history import log_records

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
    if not records:
        # Refused as `report --turn` and `replay --battle` refuse theirs.
        from tracker.service.history import unplayed

        why = unplayed(t, cid, turn, battle)
        if why is not None:
            raise InputError(why)
    if as_json:
        emit_json(records)
        return
    if not records and turn is not None:
        # F8: a neutral's turn passed over has no events of its own; its TurnPassedOver is the
        # turn before's. Said on stderr, so that the (empty) listing stays as it is.
        said = t.passed_over(cid, turn)
        if said is not None:
            click.echo(f"{said}: its TurnPassedOver event is in the log of turn {said.logged}", err=True)
    # On a terminal a long summary goes on under its own column; in a pipe the lines go as they
    # are, without asking at every line of a long log what the output is.
    wrap = prose_width() is not None
    for r in records:
        rule = f"[{r['rule']}]" if r["rule"] else ""
        mark = f"  {undone_mark(r['kind'], r['undone_by'])}" if r["undone_by"] else ""
        line = f"{r['seq']:>5}  {r['kind']:<19} {rule:<6} {r['summary']}{mark}"
        if wrap:
            echo_prose(line, hang=LOG_SUMMARY_COLUMN)
        else:
            click.echo(line)


class _EventOrRoll(click.Command):
    """`explain`, whose usage says what it takes: an event (SEQ) or --roll N, one of them. Its
    SEQ is optional to click, which would show it bare (as if required even with --roll) or in
    brackets (as if neither were)."""

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return ["[OPTIONS]", "(SEQ | --roll N)"]

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """`explain roll 16` as `explain --roll 16`: a battle line says "roll 16: ...", and the
        words copied from it were refused as an event number ("give a whole number (got 'roll')")."""
        taken = list(args)
        for i, word in enumerate(taken):
            if word == "--":
                break
            if word.lower() == "roll" and (i == 0 or taken[i - 1] != "--roll"):
                if i == len(taken) - 1:
                    raise click.UsageError("give the roll's number after roll: tracker explain roll N", ctx)
                taken[i] = "--roll"
                break
        return super().parse_args(ctx, taken)


@click.command(cls=_EventOrRoll)
@click.argument("seq", type=POSITIVE, required=False, metavar="SEQ", shell_complete=complete_recent_events)
@click.option(
    "--roll",
    "roll",
    type=POSITIVE,
    help="Explain the event of this roll (D3: the campaign's dice, numbered from 1, as in 'roll 16: ...').",
)
@json_option
@click.pass_obj
def explain(ctx: Context, seq: int | None, roll: int | None, as_json: bool) -> None:
    """Explain one event: its rules, dice and target numbers, choices, what it changed, undo status.
    SEQ is the event's number in the log; a battle line's "roll 16" is a roll number: roll 16.

    Example: tracker explain 27; tracker explain --roll 16; tracker explain roll 16
    """

    t = ctx.tracker
    from tracker.service.history import explain as explain_event
    from tracker.service.history import roll_events

    if (seq is None) == (roll is None):
        raise click.UsageError("give an event number (SEQ) or --roll N, one of them")
    cid = t.campaign_id(ctx.campaign)
    also: list[int] = []
    if roll is not None:
        # The last event that recorded the roll: a redo's (RK4) when the first was undone.
        *also, seq = roll_events(t, cid, roll)
    assert seq is not None
    data = explain_event(t, cid, seq)
    if as_json:
        emit_json(data)
        return
    # D3: a roll's number is no event number: both are said, so neither is taken for the other.
    number = f" (roll {data['dice']['roll']})" if data["dice"] else ""
    where = f"turn {data['turn']}, {phase_name(str(data['phase']))}, {data['timestamp']}"
    echo_prose(f"Event {data['seq']}{number}: {data['kind']} ({where})")
    if also:
        before = f"event{'s' if len(also) > 1 else ''} {', '.join(map(str, also))}"
        echo_prose(f"  Roll {roll} was recorded before by {before}, undone and redone since (RK4)")
    echo_prose(f"  {data['summary']}")
    for rule in data["rules"]:
        echo_prose(f"  Rule {rule['id']}: {rule['statement']}")
    if data["dice"]:
        _echo_dice(data["dice"], data["seq"])
    choice = data["choice"]
    if choice:
        # Only a casualty choice's default is the cheapest legal one (HA7); a target's or a
        # submarine's default follows its own rule, which the event's rule line states.
        cheapest = ", the cheapest legal choice (HA7)" if data["kind"] == "CasualtiesChosen" else ""
        how = f"{choice['by']} took the default{cheapest}" if choice["default"] else f"chosen by {choice['by']}"
        echo_prose(f"  Decided: {how}")
        for hit in choice["hits"]:
            echo_prose(f"  Placing: event {hit['seq']}: {hit['summary']}")
    for line in data["changes"]:
        echo_prose(f"  Changed: {line}")
    if data["undone_by"]:
        stays = stays_in_effect(data["kind"])
        but = f", but {stays[0]}: {stays[1]} ({stays[2]})" if stays else ""
        echo_prose(f"  Undone by event {data['undone_by']}{but}")
    echo_prose(f"  Hash: {data['hash']} (previous {data['prev_hash'][:16]}...)")


def _echo_dice(dice: Any, seq: int) -> None:
    """`explain`'s lines of a roll: its dice, target, the unit value it was made at (F4), its
    modifiers and outcome, a reroll (RK3), its seed and volley (D5, CV4)."""
    source = dice["source"] + (f", ref {dice['reference']}" if dice["reference"] else "")
    echo_prose(
        f"  Dice: roll {dice['roll']} by {dice['roller']} for {dice['reason']}: "
        f"D{dice['faces']} -> {dice['values']} ({source})"
    )
    if dice["target"] is not None:
        op = "or less" if dice["success_when"] == "at_most" else "or more"
        base = f" (base {dice['base_target']})" if dice["base_target"] is not None else ""
        echo_prose(f"  Target: {dice['target']} {op}{base}")
    value = dice["value"]
    if value:
        # F4: a base alone ("base 2") leaves the dispute to look up which value it is, and why.
        kind = type_name(value["type"])
        echo_prose(f"  Value: {value['unit']}'s {value['value']} {value['base']} ({kind}): {value['why']}")
    for m in dice["modifiers"]:
        change = f"set to {m['set']}" if m["set"] is not None else f"{m['add']:+d}"
        echo_prose(f"  Modifier {m['rule']}: {change}, from {m['cause']}")
    if dice["outcome"]:
        echo_prose(f"  Outcome: {dice['outcome']}")
    # RK3: a reroll and the roll it replaced name each other, as the reports list them.
    if dice["reroll_of"]:
        was = dice["reroll_of"]
        echo_prose(
            f"  Reroll (RK3): makes again roll {was['roll']}, taken back by override undo event "
            f"{was['undo']} (event {was['event']})"
        )
    if dice["rerolled_as"]:
        again = dice["rerolled_as"]
        echo_prose(
            f"  Rerolled (RK3): taken back by override undo event {again['undo']} and made again as "
            f"roll {again['roll']} (event {again['event']})"
        )
    _echo_seed_and_volley(dice, seq)


def _echo_seed_and_volley(dice: Any, seq: int) -> None:
    """D5, CV4: where an auto roll's seed stands and what it re-derives, and the rolls of its
    volley in the order rolled: what a dispute over a roll checks."""
    seed = dice["seed"]
    if seed is not None:
        made = f"committed at event {seed['committed_at']}" if seed["committed_at"] else "committed"
        if seed["revealed_at"] is None:
            state = "not revealed yet: once `tracker dice reveal` publishes it, `tracker verify` re-derives this roll"
        elif seed["matches"]:
            state = f"revealed at event {seed['revealed_at']}: it re-derives {seed['derived']}, as recorded"
        else:
            state = (
                f"revealed at event {seed['revealed_at']}: it re-derives {seed['derived']}, NOT what was recorded "
                "(run `tracker verify`)"
            )
        echo_prose(f"  Seed (D5): epoch {seed['epoch']}, {made}, {state}")
    volley = dice["volley"]
    if volley:
        place = next(i for i, r in enumerate(volley, 1) if r["event"] == seq)
        order = ", ".join(f"{r['unit'] or r['purpose']} (roll {r['roll']})" for r in volley)
        echo_prose(f"  Order (CV4): die {place} of {len(volley)} rolled together, in this order: {order}")


@click.command()
@click.option(
    "--to",
    "to",
    type=POSITIVE,
    help="Print the board after this event and stop (any event `log --asked` lists, what was asked too).",
)
@click.option("--battle", type=POSITIVE, help="Print every event of this battle with the board beside it.")
@click.option(
    "--json", "as_json", is_flag=True, help="With --to or --battle: print the frames (event and board) as JSON."
)
@click.pass_obj
def replay(ctx: Context, to: int | None, battle: int | None, as_json: bool) -> None:
    """Step through the log with the board beside each event, forward and backward, roll by roll
    and battle by battle (keys in a terminal), or print chosen frames with --to / --battle.

    Example: tracker replay --battle 1
    """
    from tracker.service.replay import KEYS, Replay

    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    player = Replay(t, cid, battle=battle)
    if not player.frames:
        # Worded as `log --battle` refuses it: the battles there are.
        from tracker.service.history import unplayed

        why = unplayed(t, cid, None, battle) if battle is not None else None
        raise InputError(why or (f"no events for battle {battle}" if battle is not None else "the log is empty"))
    if as_json and to is None and battle is None:
        raise click.UsageError("replay --json prints chosen frames: give --to SEQ or --battle ID")
    out = console()
    if to is not None:
        if not player.go_to_seq(to):
            # Name what there is: the span of the log, or of the battle's events.
            if battle is not None:
                first, last = player.frames[0]["seq"], player.frames[-1]["seq"]
                raise InputError(
                    f"no event {to} in battle {battle} (its events run from {first} to {last}: "
                    f"tracker log --battle {battle} lists them)"
                )
            raise InputError(f"no event {to} in this campaign (the last is event {t.recorder.last_version(cid)})")
        if as_json:
            emit_json(player.listed([player.frame]))
            return
        player.render(out)
        return
    if battle is not None:
        if as_json:
            emit_json(player.listed(player.frames))
            return
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
        try:
            key = click.getchar()
        except KeyboardInterrupt:
            key = "\x03"  # Ctrl-C leaves as q does (click reads it as an interrupt, not a key)
        if not player.handle(key):
            return


@click.group()
def projections() -> None:
    """The read models behind state, log, explain and reports."""


@projections.command(name="rebuild")
@json_option
@click.pass_obj
def projections_rebuild(ctx: Context, as_json: bool) -> None:
    """Drop every campaign's projections and rebuild them from the log, with a progress bar.

    One set of views serves all the campaigns of the database: --campaign does not narrow it.

    Example: tracker projections rebuild
    """
    t = ctx.tracker
    t.require_writable()
    total = t.max_notification_id()
    with progress(total, "Rebuilding projections") as tick:
        done = t.projector.rebuild(tick)
    if as_json:
        emit_json({"rebuilt": True, "events": done})
        return
    # The views are one over the whole database (one position in its log), so a rebuild is of
    # every campaign. --campaign is not refused (TRACKER_CAMPAIGN sets it for every command),
    # but the message says what was rebuilt, not just a count that looks like the campaign's.
    count = len(t.campaign_names())
    scope = {0: "no campaign", 1: "the only campaign", 2: "both campaigns"}.get(count, f"all {count} campaigns")
    named = f" (not only {ctx.campaign!r}: the views are shared)" if ctx.campaign and count > 1 else ""
    click.echo(f"Rebuilt the projections of {scope} in the database{named} from {plural(done, 'event')}.")


@click.command()
@click.option(
    "--head",
    "head_text",
    metavar="SEQ:HASH",
    help="A head posted earlier (from verify, a report or an export): the log must still hold it.",
)
@click.option(
    "--projections", "check_views", is_flag=True, help="Also compare every view row with a rebuild of the log."
)
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Verify every campaign of the database, a line each (after a restore, say); exit 1 if any fails.",
)
@json_option
@click.pass_obj
def verify(ctx: Context, head_text: str | None, check_views: bool, every: bool, as_json: bool) -> None:
    """Check the hash chain, re-derive every auto die whose seed is available, check every
    snapshot against the log, the dice seed against its commitment and rows beyond the last
    event; print the head (last event and hash) to post, or check one posted earlier.

    Example: tracker verify --head 42:3f9a6c0e5b7d2a11
    """
    from tracker.service.verify import Head, verify_campaign

    if every:
        if head_text is not None:
            raise click.UsageError("--head is one campaign's: give it with --campaign NAME, not with --all")
        verify_every(ctx, check_views, as_json)
        return
    head = Head.parse(head_text) if head_text is not None else None
    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    with progress(t.recorder.last_version(cid), "Verifying") as tick:
        report = verify_campaign(t, cid, head, check_views, tick)
    ok = report.ok and not report.dice_problems
    if as_json:
        emit_json(report.as_json())
    elif report.ok:
        echo_prose(
            f"OK: {plural(report.events, 'event')}, hash chain intact; "
            f"{report.dice_checked()}; "
            f"{plural(report.snapshots_checked, 'snapshot')} {'matches' if report.snapshots_checked == 1 else 'match'}"
            " the log."
        )
        echo_prose(
            f"Re-refereed: {plural(report.actions_refereed, 'action')} run again with their recorded inputs and dice "
            "record exactly the logged events"
            + (
                f"; {plural(report.actions_unasked, 'action')} recorded without their inputs "
                "(by an earlier tracker or a script) checked by hash only."
                if report.actions_unasked
                else "."
            )
        )
        # None: not asked; 0: none built yet, which a note says.
        if report.projection_rows_checked:
            echo_prose(f"Projections: {report.projection_rows_checked} view rows match a rebuild of the log.")
        for note in report.notes:
            echo_prose(note)
        for title, items in (
            ("Dice source switches (D4)", report.switches),
            ("Overrides (D4, RK3)", report.overrides),
            ("Rerolls after an override undo (RK3)", report.rerolls),
        ):
            if items:
                echo_prose(f"{title}:")
                for item in items:
                    echo_prose(f"  event {item['seq']}: {item['text']}")
        click.echo(f"Head: {report.head_seq}:{report.head_hash}")
    if not ok:
        if not as_json:
            for problem in [report.problem] if report.problem else report.dice_problems:
                click.echo(f"FAILED: {problem}", err=True)
        sys.exit(1)


def verify_every(ctx: Context, check_views: bool, as_json: bool) -> None:
    """`verify --all`: each campaign of the database checked as `verify` checks one, a line
    each (or a JSON list of `verify --json`'s objects, each with its campaign's name). A
    campaign that cannot be read at all is reported failed, and the others are checked still."""
    from tracker.service.verify import verify_campaign

    t = ctx.tracker
    names = t.campaign_names()
    results: list[dict[str, Any]] = []
    failed = 0
    for name in names:
        try:
            cid = t.campaign_id(name)
            with progress(t.recorder.last_version(cid), f"Verifying {name}") as tick:
                report = verify_campaign(t, cid, None, check_views, tick)
            result: dict[str, Any] = {"campaign": name, **report.as_json()}
        except TrackerError as e:
            result = {"campaign": name, "ok": False, "problem": str(e)}
        problem = result["problem"] or "; ".join(result.get("dice_problems", []))
        failed += not result["ok"]
        results.append(result)
        if as_json:
            continue
        if result["ok"]:
            head = result["head"]
            echo_prose(f"{name}: OK, {plural(result['events'], 'event')}, head {head['seq']}:{head['hash']}")
        else:
            # On standard output with the others: the list is the command's answer.
            click.echo(f"{name}: FAILED: {problem}")
    if as_json:
        emit_json(results)
    elif not names:
        click.echo("No campaigns to verify.")
    else:
        click.echo(f"{plural(len(names), 'campaign')} verified: {len(names) - failed} OK, {failed} failed.")
    if failed:
        sys.exit(1)
