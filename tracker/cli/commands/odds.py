"""`tracker odds`: the exact odds of a procedure in progress, or of a position given by hand."""

from __future__ import annotations

import click

from domain.errors import InputError
from tracker.cli.common import Context, counting, emit_json, json_option

# A mixed 10 v 10 naval battle reaches some 3,500 positions with dice to roll and takes a few
# seconds; time grows faster than the positions (each has more successors in a bigger battle).
MAX_POSITIONS = 20_000
MAX_POSITIONS_CEILING = 1_000_000


@click.command(name="odds")
@click.argument("what", metavar="BATTLE|convoy|intercept|asw|naval")
@click.option("--attacker", multiple=True, help="A force: NATION:TYPE=N[,TYPE=N...] (repeat for allies).")
@click.option("--defender", multiple=True, help="A force of the other side, as --attacker.")
@click.option("--tech", multiple=True, help="NATION:TECHNOLOGY[=LEVEL] (no level: acquired, TE2).")
@click.option("--ntr", type=click.IntRange(0, 10_000), help="NTR in the zone (convoy battles, CV5).")
@click.option("--stops-here", is_flag=True, help="Interception: the zone is the group's destination (SM5).")
@click.option("--ruleset", default=None, help="Ruleset for a position given by hand (default: twtea-3e).")
@click.option(
    "--after-round",
    type=click.Choice(["default", "fight", "submerge"]),
    default="default",
    show_default=True,
    help="The choice after each round (NC4, AS5, SM4): the tracker's default (naval battles fight on, "
    "ASW and interceptions submerge), fight on, or submerge every submarine.",
)
@click.option(
    "--targets",
    "targets",
    multiple=True,
    metavar="[SIDE=]POLICY",
    help="Targets of selective shots (HA1, HA3, AS3, SM4): spread (default), focus (all at the most valuable "
    "target) or a unit type to pick first; SIDE is attacker or defender (default: both); repeatable.",
)
@click.option(
    "--casualties",
    "casualties",
    multiple=True,
    metavar="[SIDE=]POLICY",
    help="Which units take the hits (HA7) and which a screen exposes (HA1): cheapest (default; hits that only "
    "damage a capital ship first), costliest, or firepower (the weakest guns first); SIDE as for --targets.",
)
@click.option(
    "--exact", is_flag=True, help="Compute in fractions (slower on big battles); print them and every outcome."
)
@click.option(
    "--max-positions",
    type=click.IntRange(1, MAX_POSITIONS_CEILING),
    default=MAX_POSITIONS,
    show_default=True,
    help="Stop with an error beyond this many positions with dice to roll (time and memory grow with them).",
)
@json_option
@click.pass_obj
def odds(
    ctx: Context,
    what: str,
    attacker: tuple[str, ...],
    defender: tuple[str, ...],
    tech: tuple[str, ...],
    ntr: int | None,
    stops_here: bool,
    ruleset: str | None,
    after_round: str,
    targets: tuple[str, ...],
    casualties: tuple[str, ...],
    exact: bool,
    max_positions: int,
    as_json: bool,
) -> None:
    """Exact odds: every outcome with its probability, expected values and standard deviations.

    `tracker odds BATTLE` works from the current step of a procedure in progress in the
    selected campaign; `tracker odds convoy|intercept|asw|naval` from a position given on the
    command line, without any database. Remaining choices take the tracker's defaults
    (targets spread, cheapest casualties) unless --targets or --casualties name a policy, with
    --after-round for the choice after a round.

    Example: tracker odds naval --attacker Germany:battleship=1,destroyer=2 --defender Britain:cruiser=2
    """
    from domain.procedures import policies
    from domain.procedures.odds import TooManyPositions, exact_odds
    from domain.ruleset import load_ruleset
    from tracker.analysis import odds as view

    if what.isdigit():
        if attacker or defender or tech or ntr is not None or ruleset or stops_here:
            raise InputError(
                "a battle in progress takes its forces from the campaign: no --attacker, "
                "--defender, --tech, --ntr, --ruleset or --stops-here"
            )
        from domain.procedures.position import from_battle

        c = ctx.load()
        battle = int(what)
        b = c.battles.get(str(battle))
        if b is None:
            c.require_not_ended(battle)
            active = ", ".join(f"{x['id']} ({x['kind']})" for x in c.battles.values()) or "none"
            raise InputError(f"no battle {battle} in progress (active: {active})")
        state, pctx, rounds = from_battle(c.board(), b, frozenset(c.committed))
        title = f"Odds of battle {battle} ({b['kind']} in {b['zone']}), from its step {b['step']}:"
    elif what in view.PROCEDURES:
        rs, _ = load_ruleset(ruleset or "twtea-3e")
        state, pctx, rounds = view.hypothetical(what, rs, attacker, defender, tech, ntr, stops_here)
        article = "an" if what[0] in "aeiou" else "a"
        title = f"Odds of {article} {what} position: attacker {' + '.join(attacker)}; defender {' + '.join(defender)}:"
    else:
        raise InputError(f"give a battle number or one of {', '.join(view.PROCEDURES)}, got {what!r}")
    aims = view.parse_choices("--targets", targets, policies.TARGETS, pctx.ruleset)
    losses = view.parse_choices("--casualties", casualties, policies.CASUALTIES, None)
    chosen = view.policy(after_round, aims, losses, pctx)
    try:
        with counting("Positions enumerated") as shown:
            result = exact_odds(state, pctx, chosen, rounds, exact, max_positions, shown)
    except TooManyPositions as e:
        raise TooManyPositions(e.limit, "fewer units, or a higher --max-positions") from None
    data = view.summary(result)
    data["choices"] = view.choices(aims, losses, after_round)
    if as_json:
        emit_json(data)
    else:
        click.echo(view.render(data, title, exact), nl=False)


@click.command(name="luck")
@click.option("--nation", help="Only this nation (name or code).")
@json_option
@click.pass_obj
def luck(ctx: Context, nation: str | None, as_json: bool) -> None:
    """Luck: per nation and turn, what its dice should have brought against what they brought.

    Each roll counts at its odds at the moment it was rolled (searches and shots at their
    recorded target numbers, the convoy table with its modifiers and the NTR in the zone);
    units sunk and lost at the exact odds of each battle from its first roll, which also give
    each battle's percentile for its attacker (0.5: as expected, above: luckier).

    Example: tracker luck --nation Germany
    """
    from tracker.analysis.luck import rows_for
    from tracker.reports.report import build_report
    from tracker.service.names import Names

    t = ctx.tracker
    cid = t.campaign_id(ctx.campaign)
    chosen = Names(ctx.load()).nation(nation) if nation else None
    data = build_report(t, cid)["luck"]
    if chosen is not None:
        data["nations"] = {chosen: data["nations"][chosen]}
        data["battles"] = [b for b in data["battles"] if chosen in (b["attacker"], b["defender"])]
    if as_json:
        emit_json(data)
        return
    header = ["nation", "turn", *(words for words in data["metrics"].values())]
    rows = rows_for(data)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    click.echo("Expected / actual (each roll at its odds when rolled):")
    for r in [header, *rows]:
        click.echo("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    if data["battles"]:
        click.echo("\nBattles (percentile of the outcome for the attacker, from the odds at its first roll):")
        for b in data["battles"]:
            click.echo(
                f"  battle {b['battle']} ({b['kind']}, {b['zone']}), {b['attacker']} against {b['defender']}: "
                f"{b['percentile']:.0%} (units lost {b['actual']['attacker_units_lost']} against "
                f"{b['expected']['attacker_units_lost']:.2f} expected; sunk {b['actual']['defender_units_lost']} "
                f"against {b['expected']['defender_units_lost']:.2f})"
            )
