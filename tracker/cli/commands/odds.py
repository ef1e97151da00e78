"""`tracker odds`: the exact odds of a procedure in progress, or of a position given by hand;
`tracker odds need` and `tracker odds escorts`: the cheapest force that meets a bound;
`tracker odds buy`: what one more unit of each type is worth, per resource."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from rich import box

from domain.errors import InputError
from tracker.cli.common import Context, console, counting, echo_prose, emit_json, fit_prose, json_option
from tracker.cli.completion import complete_battles_or, complete_nations, complete_sea_zones, complete_unit_types
from tracker.cli.params import MAX_INT, NATION, RULESET, ZONE, Real, Whole

if TYPE_CHECKING:
    from domain.ruleset import Ruleset
    from tracker.analysis.hand import NationOf

# The ruleset a position given by hand is weighed by where no campaign says another.
DEFAULT_RULESET = "twtea-3e"

# A mixed 10 v 10 naval battle reaches some 3,500 positions with dice to roll and takes a few
# seconds; time grows faster than the positions (each has more successors in a bigger battle).
MAX_POSITIONS = 20_000
MAX_POSITIONS_CEILING = 1_000_000


class WithAdvice(click.Command):
    """`tracker odds` with commands of its own (`tracker odds need`): a first argument naming
    one runs it, anything else is the odds of a battle or a position, as it always was."""

    advice: dict[str, click.Command] = {}

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        if args and args[0] in self.advice:
            name = f"{info_name} {args[0]}" if info_name else args[0]
            return self.advice[args[0]].make_context(name, args[1:], parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)


@click.command(name="odds", cls=WithAdvice)
@click.argument(
    "what",
    required=False,
    metavar="[BATTLE|convoy|intercept|asw|naval]",
    shell_complete=complete_battles_or(
        {
            "convoy": "a convoy battle given by hand",
            "intercept": "an interception given by hand",
            "asw": "ASW combat given by hand",
            "naval": "a naval battle given by hand",
            "need": "the cheapest force that takes or holds a zone",
            "escorts": "the cheapest escorts for a zone's NTR",
            "buy": "what one more unit of each type is worth",
        }
    ),
)
@click.option(
    "--attacker",
    multiple=True,
    help="A force: NATION:TYPE=N[,TYPE=N...] (repeat for allies); 'battleship (damaged)=1': a capital ship "
    "one hit from sinking (F3).",
)
@click.option("--defender", multiple=True, help="A force of the other side, as --attacker.")
@click.option("--tech", multiple=True, help="NATION:TECHNOLOGY[=LEVEL] (no level: acquired, TE2).")
@click.option("--ntr", type=Whole(0, 10_000), help="NTR in the zone (convoy battles, CV5).")
@click.option("--stops-here", is_flag=True, help="Interception: the zone is the group's destination (SM5).")
@click.option(
    "--ruleset",
    type=RULESET,
    default=None,
    help="Ruleset for a position given by hand (default: the selected campaign's; twtea-3e without one).",
)
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
    "--exact",
    is_flag=True,
    help="Compute in fractions (slower on big battles): print every outcome, and each chance and expected loss "
    "as a fraction beside its decimal; the rounds' mean and the standard deviations stay decimals.",
)
@click.option(
    "--max-positions",
    type=Whole(1, MAX_POSITIONS_CEILING),
    default=MAX_POSITIONS,
    show_default=True,
    help="Stop with an error beyond this many positions with dice to roll (time and memory grow with them).",
)
@json_option
@click.pass_obj
def odds(
    ctx: Context,
    what: str | None,
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
    selected campaign (left out: the one in progress), counting the losses from that step on
    and the rounds from the first; `tracker odds convoy|intercept|asw|naval` from a position
    given on the command line, with no database needed (weighed by --ruleset, else by the
    selected campaign's ruleset where there is one, else by twtea-3e). Remaining choices take
    the tracker's defaults (targets spread, cheapest casualties) unless --targets or
    --casualties name a policy, with --after-round for the choice after a round.

    `tracker odds need --zone ZONE` finds the cheapest force that takes a zone (or holds it)
    with a given chance, `tracker odds escorts --zone ZONE` the cheapest escorts that keep its
    NTR's expected loss under a bound, `tracker odds buy` what one more unit of each type is
    worth next turn per resource: see their --help.

    Example: tracker odds naval --attacker Germany:battleship=1,destroyer=2 --defender Britain:cruiser=2
    """
    from domain.procedures import policies
    from domain.procedures.odds import TooManyPositions, exact_odds
    from tracker.analysis import odds as view

    if what is None:
        # Read-only: the one battle in progress is the only one it can mean (none or several:
        # a usage error naming them).
        from tracker.cli.deciding import which_battle

        # The title names the battle: no line of its own.
        what = str(which_battle(ctx, None, label="BATTLE|convoy|intercept|asw|naval")[0])
    # ASCII digits: str.isdigit() also takes a superscript two, which int() refuses.
    if what.isascii() and what.isdigit():
        if attacker or defender or tech or ntr is not None or ruleset or stops_here:
            raise InputError(
                "a battle in progress takes its forces from the campaign: no --attacker, "
                "--defender, --tech, --ntr, --ruleset or --stops-here"
            )
        state, pctx, rounds, title = _in_progress(ctx, int(what))
    elif what in view.PROCEDURES:
        state, pctx, rounds, title = _by_hand(ctx, what, ruleset, attacker, defender, (tech, ntr, stops_here))
    else:
        raise InputError(
            f"give a battle number or one of {', '.join(view.PROCEDURES)}, got {what!r} "
            f"(or {' or '.join(WithAdvice.advice)} for advice)"
        )
    view.require_small_search(state)
    aims = view.parse_choices("--targets", targets, policies.TARGETS, pctx.ruleset)
    losses = view.parse_choices("--casualties", casualties, policies.CASUALTIES, None)
    chosen = view.policy(after_round, aims, losses, pctx)
    try:
        with counting("Positions enumerated"):
            result = exact_odds(state, pctx, chosen, rounds, exact, max_positions)
    except TooManyPositions as e:
        raise TooManyPositions(e.limit, "fewer units, or a higher --max-positions") from None
    data = view.summary(result)
    data["choices"] = view.choices(aims, losses, after_round)
    in_progress = what.isascii() and what.isdigit()
    if in_progress:
        data["round"] = rounds
    if as_json:
        emit_json(data)
    else:
        click.echo(fit_prose(view.render(data, title, exact, in_progress=in_progress)), nl=False)


def _by_hand(
    ctx: Context,
    what: str,
    ruleset: str | None,
    attacker: tuple[str, ...],
    defender: tuple[str, ...],
    rest: tuple[tuple[str, ...], int | None, bool],
) -> tuple[Any, Any, Any, str]:
    """The position of a `what` procedure given on the command line (`rest`: --tech, --ntr,
    --stops-here), weighed by `hand_ruleset`, and the title that names it."""
    from tracker.analysis import odds as view

    rs = hand_ruleset(ctx, ruleset)
    state, pctx, rounds = view.hypothetical(what, rs, attacker, defender, *rest, hand_nations(ctx))
    article = "an" if what[0] in "aeiou" else "a"
    # Other values than the usual ones are said: the same forces weigh differently.
    played = f" (ruleset {rs.name})" if rs.name != DEFAULT_RULESET else ""
    forces = f"attacker {' + '.join(attacker)}; defender {' + '.join(defender)}"
    return state, pctx, rounds, f"Odds of {article} {what} position: {forces}{played}:"


def _in_progress(ctx: Context, battle: int) -> tuple[Any, Any, Any, str]:
    """The position of battle `battle` in progress in the selected campaign, from its current
    step, and the title that names it."""
    from domain.procedures.position import from_battle

    c = ctx.load()
    b = c.battles.get(str(battle))
    if b is None:
        c.require_not_ended(battle)
        active = ", ".join(f"{x['id']} ({x['kind']})" for x in c.battles.values()) or "none"
        raise InputError(f"no battle {battle} in progress (active: {active})")
    state, pctx, rounds = from_battle(c.board(), b, frozenset(c.committed))
    return state, pctx, rounds, f"Odds of battle {battle} ({b['kind']} in {b['zone']}), from its step {b['step']}:"


def hand_ruleset(ctx: Context, given: str | None) -> Ruleset:
    """The ruleset a position given by hand is weighed by: --ruleset's; else the selected
    campaign's (a group playing house values asks about its own cruisers); else, with no
    campaign to select, the built-in one."""
    from domain.errors import TrackerError
    from domain.ruleset import load_ruleset

    if given:
        return load_ruleset(given)[0]
    if not ctx.names_a_database:
        # No campaign at hand: the database is not looked for (nor its library imported).
        return load_ruleset(DEFAULT_RULESET)[0]
    try:
        return ctx.load().ruleset
    except TrackerError:
        return load_ruleset(DEFAULT_RULESET)[0]  # no database, or no campaign chosen in it


def hand_nations(ctx: Context) -> NationOf:
    """The nations a position given by hand may name: those of the built-in scenarios, and
    those of the selected campaign (read only for a nation that is none of them, so that a
    position of the usual nations needs no database)."""
    from domain.errors import TrackerError
    from domain.ruleset import builtin_nations
    from tracker.analysis import odds as view

    def campaign_nations() -> dict[str, str]:
        try:
            scenario = ctx.load().scenario
        except TrackerError:
            return {}  # no database, or no campaign chosen in it: the built-in nations only
        return {name: n.code for name, n in scenario.nations.items()}

    return view.nations(builtin_nations(), campaign_nations)


# `odds need` and `odds escorts`: the unit types their searches weigh.
weigh_types = click.option(
    "--type",
    "types",
    multiple=True,
    help="Weigh only units of this type (repeatable).",
    shell_complete=complete_unit_types,
)


@click.command(name="need")
@click.option(
    "--zone",
    type=ZONE,
    required=True,
    help="The sea zone to take (or hold, with --hold).",
    shell_complete=complete_sea_zones,
)
@click.option(
    "--win",
    type=Real(0, 1, min_open=True),
    default=0.9,
    show_default=True,
    help="The chance to meet: of winning the battle (the attacker left alone in the zone), or with --hold "
    "of still having units there when it ends.",
)
@click.option(
    "--hold",
    is_flag=True,
    help="The defender's view: which units must be in the zone at the end of this phase to hold it against "
    "each enemy nation's units within a full move of it.",
)
@weigh_types
@click.option(
    "--enemy-type",
    "enemy_types",
    multiple=True,
    help="Weigh only enemy units of this type (repeatable): for an enemy too large to weigh whole; the answer "
    "then weighs only part of the enemy and says so.",
    shell_complete=complete_unit_types,
)
@click.option(
    "--max-positions",
    type=Whole(1, MAX_POSITIONS_CEILING),
    default=MAX_POSITIONS,
    show_default=True,
    help="Stop with an error when one battle weighed goes beyond this many positions with dice to roll.",
)
@json_option
@click.pass_obj
def need(
    ctx: Context,
    zone: str,
    win: float,
    hold: bool,
    types: tuple[str, ...],
    enemy_types: tuple[str, ...],
    max_positions: int,
    as_json: bool,
) -> None:
    """The cheapest force of the nation whose turn it is that takes a sea zone with a chance.

    From its naval and air units that can be in ZONE at the end of this phase (the moves they
    have left before combat movement ends, F4, F7, SM1; the units there from naval combat on),
    the force of the lowest cost (PU1) whose exact chance of winning the naval battle (NC1)
    against every enemy unit there is at least --win, with its expected losses and the
    `tracker odds naval` line that computes the same odds. With --hold: the cheapest force
    to be there so that the zone is still held (own or allied units left) after an attack
    by any one enemy nation with all its units within a full move. Against enemy submarines
    alone there is no naval battle but ASW combat (NC1, AS1): refused, with the `tracker odds
    asw` line to weigh instead. --enemy-type weighs only part of an enemy too large to weigh
    whole (more than 20 units a side); the answer says so.

    Example: tracker odds need --zone "Central North Sea" --win 0.9
    """
    from tracker.analysis import advise, reach
    from tracker.service.names import Names

    c = ctx.load()
    names = Names(c)
    board = c.board()
    sea, ended = names.sea(zone), frozenset(c.movement_ended)
    # SM4, SM5: submarines whose movement has ended this turn stay where they are; where they
    # stopped to attack, a naval battle against submarines alone is due (NC1).
    if hold:
        asked = reach.hold_question(board, board.nation, sea, ended)
    else:
        asked = reach.attack_question(board, board.nation, sea, ended, frozenset(c.attack_zones))
    question = reach.only_types(asked, tuple(names.unit_type(t) for t in types))
    question = reach.only_enemy_types(question, tuple(names.unit_type(t) for t in enemy_types))
    with counting("Positions enumerated"):
        data = advise.answer(question, win, max_positions)
    if as_json:
        emit_json(data)
    else:
        click.echo(fit_prose(advise.render(data)), nl=False)


@click.command(name="escorts")
@click.option(
    "--zone",
    type=ZONE,
    required=True,
    help="A sea zone holding NTR of the nation whose turn it is.",
    shell_complete=complete_sea_zones,
)
@click.option(
    "--ntr-loss",
    type=Real(0),
    default=1.0,
    show_default=True,
    help="The most NTR the convoys in the zone may expect to lose at a window.",
)
@weigh_types
@click.option(
    "--max-positions",
    type=Whole(1, MAX_POSITIONS_CEILING),
    default=MAX_POSITIONS,
    show_default=True,
    help="Stop with an error when one convoy attack weighed goes beyond this many positions with dice to roll.",
)
@json_option
@click.pass_obj
def escorts(
    ctx: Context, zone: str, ntr_loss: float, types: tuple[str, ...], max_positions: int, as_json: bool
) -> None:
    """The cheapest searching ships and aircraft that keep a zone's expected NTR loss under a bound.

    For the NTR of the nation whose turn it is in ZONE, at each of its next two convoy windows
    (its collect resources phase this turn, against the enemy submarines there now, and next
    turn, against those within a full move, CV1, SM1): the searchers of the lowest cost (PU1),
    of its ships that can be there and its aircraft in range (CV3, F7), that keep the expected
    NTR destroyed (CV5), the attacks of each enemy nation added up, at or below --ntr-loss,
    its allies' ships in the zone and aircraft in range searching too (CV3); with the
    `tracker odds convoy` lines that compute the same odds. Each enemy's attack is weighed
    alone against all the NTR and searchers: the referee's attacks one after the other can
    lose more (an aircraft searches once a phase, F7; a ship sunk misses the next) or less
    (NTR destroyed in one are gone for the next, CV5).

    Example: tracker odds escorts --zone "Western Approaches" --ntr-loss 0.5
    """
    from tracker.analysis import escorts as advice
    from tracker.service.names import Names

    c = ctx.load()
    names = Names(c)
    question = advice.convoy_question(c.board(), names.sea(zone))
    with counting("Positions enumerated"):
        data = advice.answer(question, ntr_loss, max_positions, tuple(names.unit_type(t) for t in types))
    if as_json:
        emit_json(data)
    else:
        click.echo(fit_prose(advice.render(data)), nl=False)


@click.command(name="buy")
@click.option(
    "--budget",
    type=Whole(0, MAX_INT),
    default=None,
    help="The resources to spend (default: all the nation has); types costing more are not weighed.",
)
@click.option(
    "--max-positions",
    type=Whole(1, MAX_POSITIONS_CEILING),
    default=MAX_POSITIONS,
    show_default=True,
    help="The most positions with dice to roll a battle or convoy attack may reach; one beyond is named as "
    "too large to weigh.",
)
@json_option
@click.pass_obj
def buy(ctx: Context, budget: int | None, max_positions: int, as_json: bool) -> None:
    """What one more unit of each type is worth next turn, per resource, ranked.

    For each naval and air type the nation whose turn it is can buy with --budget (PU1, PU3)
    and place this turn (PU2), one more unit of it acting next turn with a full move, against
    the enemy units on the board now; its gain is the best of, over the zones it can reach:

    \b
      convoy  expected NTR lost (CV1-CV7) in a zone of the nation's NTR with enemy submarines
              within a full move, with its searchers able to be there next turn, less the
              same with one more (a searcher, CV3);
      win     the chance that its naval and air units able to reach a zone holding enemy
              naval units next turn win there (NC1), gained with one more, times the cost of
              the enemy force (not against submarines alone: ASW combat, AS1, not weighed);
      trade   in the same battles, the expected cost of enemy units sunk less that of its own
              units lost, gained with one more.

    The value is the gain divided by the type's cost. Each figure is exact and names the
    `tracker odds` lines that compute it. Battles of more than 10 units a side, and those
    beyond a budget of positions (smallest weighed first), are named as too large to weigh.

    Example: tracker odds buy --budget 30
    """
    from tracker.analysis import buy as advice

    c = ctx.load()
    with counting("Positions enumerated"):
        data = advice.answer(c.board(), budget, max_positions)
    if as_json:
        emit_json(data)
    else:
        _echo_buy(data)


WithAdvice.advice = {"need": need, "escorts": escorts, "buy": buy}


def _echo_buy(data: Any) -> None:
    """`tracker odds buy` on the terminal: its table without the places, which follow it by
    type (at 80 columns the table fits, a zone's name wrapping in its column, a figure never
    cut), and the prose around it wrapped."""
    from rich.table import Table
    from rich.text import Text

    from tracker.analysis import buy as advice

    echo_prose(advice.title(data))
    columns = advice.HEADER[:-1]
    table = Table(box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False)
    for name in columns:
        text = name in ("type", "measure", "zone")
        table.add_column(name, no_wrap=name != "zone", justify="left" if text else "right")
    places: dict[str, list[str]] = {}
    for row in advice.table_rows(data):
        table.add_row(*map(Text, row[: len(columns)]))  # names as they are, never read as markup
        if row[-1]:
            places.setdefault(row[-1], []).append(row[0])
    out = console()
    out.width = max(out.width, out.measure(table).minimum)
    out.print(table)
    lines = ["Placed in (PU2): " + "; ".join(f"{', '.join(types)}: {where}" for where, types in places.items())]
    click.echo(fit_prose("\n".join([*lines, *advice.notes(data)])))


# `tracker luck`'s column headers, short enough for the table to fit 80 columns; a legend
# under it gives each figure's words.
LUCK_HEADERS = {
    "ntr_destroyed": "NTR sunk",
    "ntr_lost": "NTR lost",
    "units_sunk": "sank",
    "units_lost": "lost",
    "searches": "searches",
    "hits": "hits",
}


@click.command(name="luck")
@click.option("--nation", type=NATION, help="Only this nation (name or code).", shell_complete=complete_nations)
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
    from rich.table import Table
    from rich.text import Text

    from tracker.reports.views import nation_text

    # A table that fits 80 columns (a pipe's width too): short headers, each figure's words in
    # a legend under it, a value never cut ("expected/actual").
    rows = [[*row[:2], *(v.replace(" / ", "/") for v in row[2:])] for row in rows_for(data)]
    widest = [max(len(row[i]) for row in rows) if rows else 0 for i in range(2 + len(data["metrics"]))]
    table = Table(
        title="Expected/actual, each roll at its odds when rolled",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        collapse_padding=True,
        pad_edge=False,
    )
    table.add_column("Nation", min_width=widest[0])
    table.add_column("Turn", justify="right", min_width=max(widest[1], 4))
    for i, metric in enumerate(data["metrics"]):
        table.add_column(LUCK_HEADERS.get(metric, metric), justify="right", min_width=widest[2 + i])
    scenario = ctx.load().scenario
    for i, row in enumerate(rows):
        last_of_nation = i + 1 == len(rows) or rows[i + 1][0] != row[0]
        table.add_row(nation_text(scenario, row[0]), *map(Text, row[1:]), end_section=last_of_nation)
    out = console()
    # A long campaign's figures can be wider than the terminal: drawn whole, never cut.
    out.width = max(out.width, out.measure(table).maximum)
    out.print(table)
    import textwrap

    legend = "; ".join(f"{LUCK_HEADERS.get(m, m)}: {words}" for m, words in data["metrics"].items())
    out.print(textwrap.fill(legend, max(40, out.width)), soft_wrap=True, markup=False)
    if data["battles"]:
        out.print(
            "Battles (percentile of the outcome for the attacker, from the odds at its first roll):", markup=False
        )
        for b in data["battles"]:
            line = (
                f"battle {b['battle']} ({b['kind']}, {b['zone']}), {b['attacker']} against {b['defender']}: "
                f"{b['percentile']:.0%} (units lost {b['actual']['attacker_units_lost']} against "
                f"{b['expected']['attacker_units_lost']:.2f} expected; sunk {b['actual']['defender_units_lost']} "
                f"against {b['expected']['defender_units_lost']:.2f})"
            )
            width = max(40, out.width)
            out.print(
                textwrap.fill(line, width, initial_indent="  ", subsequent_indent="    "), soft_wrap=True, markup=False
            )
