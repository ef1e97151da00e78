"""`tracker intercept`, `tracker asw` and `tracker battle`: submarine interceptions (SM1-SM5),
ASW combat (AS1-AS5) and naval battles (NC1-NC5) step by step, with hit allocation (HA1-HA7).

Every command prints the events it recorded with their rule IDs, what the game waits for next,
and the command that answers it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from domain.errors import InputError
from tracker.cli_common import POSITIVE, Context, act, acting, dice_options, names, waiting_nation
from tracker.completion import complete_battles, complete_nations, complete_sea_zones, complete_units, complete_zones
from tracker.names import split_units

if TYPE_CHECKING:
    from domain.campaign import Campaign
    from domain.dice import DiceSource


def _nation_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--nation",
        help="The nation choosing (default: the only one the battle waits for).",
        shell_complete=complete_nations,
    )(f)


def _acting_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--nation", help="Acting nation (default: the nation whose turn it is).", shell_complete=complete_nations
    )(f)


def _battle_argument(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("battle", type=POSITIVE, shell_complete=complete_battles)(f)


def _units_option(name: str, help_text: str) -> Callable[..., Any]:
    return click.option(name, help=help_text, shell_complete=complete_units)


def _zone_option(name: str = "--zone", **kwargs: Any) -> Callable[..., Any]:
    return click.option(name, shell_complete=complete_sea_zones, **kwargs)


def _pairs(c: Campaign, text: str | None, option: str) -> dict[str, str] | None:
    """'A=B,C=D' (or 'A=B C=D') as {A: B, C: D}, unit IDs in any case; '' as {}."""
    if text is None:
        return None
    n = names(c)
    pairs: dict[str, str] = {}
    for part in split_units(text) or []:
        left, sep, right = part.partition("=")
        if not sep or not left.strip() or not right.strip():
            raise InputError(f"{option} takes UNIT=UNIT pairs separated by commas, got {part!r}")
        firer = n.unit(left)
        if firer in pairs:
            raise InputError(f"{firer} is named twice in {option}")
        pairs[firer] = n.unit(right)
    return pairs


def _act(
    ctx: Context,
    action: Callable[[Campaign, DiceSource], object],
    dice_text: str | None = None,
    reference: str | None = None,
) -> None:
    """Run a battle step, print what it recorded and the command that answers what comes next."""
    act(ctx, action, dice_text, reference)


# ----- submarine movement: interceptions (SM2-SM5) -----


@click.group(name="intercept")
def intercept() -> None:
    """Interceptions of submarine groups passing hostile zones (SM2-SM5); `tracker move` starts them."""


@intercept.command(name="search")
@_battle_argument
@_units_option("--units", "Searching destroyers/cruisers (TE4: aircraft on carriers), comma-separated; '' for none.")
@dice_options
@click.pass_obj
def intercept_search(
    ctx: Context, battle: int, units: str | None, dice_text: str | None, reference: str | None
) -> None:
    """The enemy chooses which units search and rolls one die each; each success finds one submarine (SM2, SM3).

    Example: tracker intercept search 1 --units GB-DD3,GB-DD4,GB-DD5 --dice 1,2,7
    """
    _act(ctx, lambda c, d: c.intercept_search(battle, names(c).units(units), d), dice_text, reference)


@intercept.command(name="detect")
@_battle_argument
@_units_option("--subs", "The submarines found, as many as searches succeeded (default: the first of the group).")
@click.pass_obj
def intercept_detect(ctx: Context, battle: int, subs: str | None) -> None:
    """Name the submarines the successful searches found (SM3).

    Example: tracker intercept detect 1 --subs DE-SS4,DE-SS5
    """
    _act(ctx, lambda c, d: c.intercept_detect(battle, names(c).units(subs)))


@intercept.command(name="decide")
@_battle_argument
@_units_option("--submerge", "Detected submarines that submerge (stay in the zone, their move ends).")
@_units_option("--retreat", "Detected submarines that go back to the zone they came from.")
@click.pass_obj
def intercept_decide(ctx: Context, battle: int, submerge: str | None, retreat: str | None) -> None:
    """After an ASW round: per detected submarine fight on (not named), submerge or retreat (SM4).

    With neither option every detected submarine submerges; name '' to have them all fight on.

    Example: tracker intercept decide 1 --submerge DE-SS4 --retreat DE-SS5
    """
    _act(ctx, lambda c, d: c.intercept_decide(battle, names(c).units(submerge), names(c).units(retreat)))


@intercept.command(name="continue")
@_battle_argument
@_units_option("--stop", "Undetected submarines that stop in the zone (default: all go on).")
@click.pass_obj
def intercept_continue(ctx: Context, battle: int, stop: str | None) -> None:
    """Undetected submarines go on to their destination or stop in the zone (SM5).

    Example: tracker intercept continue 1 --stop DE-SS5
    """
    _act(ctx, lambda c, d: c.intercept_continue(battle, names(c).units(stop)))


@intercept.command(name="auto")
@_battle_argument
@dice_options
@click.pass_obj
def intercept_auto(ctx: Context, battle: int, dice_text: str | None, reference: str | None) -> None:
    """Resolve an interception, and those the group meets further on, with default choices.

    With manual dice, --dice gives every die the remaining steps roll, in order.

    Example: tracker intercept auto 1
    """
    _act(ctx, lambda c, d: c.battle_auto(battle, d), dice_text, reference)


# ----- ASW combat (AS1-AS5) -----


@click.group(name="asw")
def asw_group() -> None:
    """ASW combat against enemy submarines in one's own naval_combat phase (AS1-AS5)."""


@asw_group.command(name="start")
@_zone_option(required=True, help="Sea zone with enemy submarines.")
@_acting_option
@click.option(
    "--auto", "auto", is_flag=True, help="Resolve every step with default choices (and --dice, or auto dice)."
)
@dice_options
@click.pass_obj
def asw_start(
    ctx: Context, zone: str, nation: str | None, auto: bool, dice_text: str | None, reference: str | None
) -> None:
    """Start ASW combat in a zone (AS1).

    Example: tracker asw start --zone "Heligoland Bight"
    """

    def action(c: Campaign, d: DiceSource) -> None:
        number = c.asw_start(acting(c, nation), names(c).zone(zone))
        if auto:
            c.battle_auto(number, d)

    _act(ctx, action, dice_text, reference)


@asw_group.command(name="search")
@_battle_argument
@_units_option("--units", "Escorts in the zone and aircraft in range taking part (default: every eligible one).")
@dice_options
@click.pass_obj
def asw_search(ctx: Context, battle: int, units: str | None, dice_text: str | None, reference: str | None) -> None:
    """Each unit taking part rolls one search die per enemy submarine; detections are pooled (AS2).

    Dice go unit by unit, and for each unit submarine by submarine.

    Example: tracker asw search 2 --units DE-DD1,DE-DD2 --dice 2,9,8,1
    """
    _act(ctx, lambda c, d: c.asw_search(battle, names(c).units(units), d), dice_text, reference)


@asw_group.command(name="submerge")
@_battle_argument
@_units_option("--subs", "Detected submarines that submerge (default: all); '' for none (all fight on).")
@click.pass_obj
def asw_submerge(ctx: Context, battle: int, subs: str | None) -> None:
    """After an ASW round the submarines' owner submerges some or all of them; the rest fight on (AS5).

    Example: tracker asw submerge 2 --subs GB-SS1
    """
    _act(ctx, lambda c, d: c.asw_submerge(battle, names(c).units(subs)))


# ----- naval battles (NC1-NC5) and the steps every fight shares (HA1-HA7) -----


@click.group(name="battle")
def battle_group() -> None:
    """Naval battles (NC1-NC5), and the targets, screens, dice and casualties of every fight (HA1-HA7)."""


@battle_group.command(name="start")
@_zone_option(required=True, help="Sea zone where the phasing nation meets enemy naval units.")
@_acting_option
@click.option(
    "--auto", "auto", is_flag=True, help="Resolve every step with default choices (and --dice, or auto dice)."
)
@dice_options
@click.pass_obj
def battle_start(
    ctx: Context, zone: str, nation: str | None, auto: bool, dice_text: str | None, reference: str | None
) -> None:
    """Start a naval battle with all the phasing nation's units in a zone; round 1 opens with submarine fire (NC1, NC2).

    Example: tracker battle start --zone "Central North Sea"
    """

    def action(c: Campaign, d: DiceSource) -> None:
        number = c.naval_start(acting(c, nation), names(c).zone(zone))
        if auto:
            c.battle_auto(number, d)

    _act(ctx, action, dice_text, reference)


@battle_group.command(name="targets")
@_battle_argument
@_nation_option
@click.option("--targets", help="FIRER=TARGET pairs for every unit of the nation that picks (default: spread).")
@click.pass_obj
def battle_targets(ctx: Context, battle: int, nation: str | None, targets: str | None) -> None:
    """Pick the targets of submarines, aircraft and ASW units before any die is rolled (HA1-HA3, AS3, SM4).

    Example: tracker battle targets 3 --nation Germany --targets DE-SS1=GB-BB1,DE-SS2=GB-CA1
    """
    _act(
        ctx,
        lambda c, d: c.choose_targets(battle, waiting_nation(c, battle, nation), _pairs(c, targets, "--targets")),
    )


@battle_group.command(name="screen")
@_battle_argument
@_nation_option
@click.option(
    "--screens", help="FIRER=ESCORT pairs: the escort takes that shot's hit; '' for none (default: cheapest)."
)
@click.pass_obj
def battle_screen(ctx: Context, battle: int, nation: str | None, screens: str | None) -> None:
    """Let escorts take the shots aimed at other ships of their side (HA1, HA3).

    Example: tracker battle screen 3 --nation Britain --screens DE-SS1=GB-DD2
    """
    _act(
        ctx,
        lambda c, d: c.choose_screens(battle, waiting_nation(c, battle, nation), _pairs(c, screens, "--screens")),
    )


@battle_group.command(name="fire")
@_battle_argument
@dice_options
@click.pass_obj
def battle_fire(ctx: Context, battle: int, dice_text: str | None, reference: str | None) -> None:
    """Roll the volley the fight waits for: one die per firing unit, in the order `pending` lists (SM4, AS4, NC2, NC3).

    Example: tracker battle fire 3 --dice 4,9,1,7,2
    """
    _act(ctx, lambda c, d: c.fire(battle, d), dice_text, reference)


@battle_group.command(name="casualties")
@_battle_argument
@_nation_option
@_units_option("--units", "Units taking the hits, one entry per hit (default: the cheapest legal choice).")
@click.pass_obj
def battle_casualties(ctx: Context, battle: int, nation: str | None, units: str | None) -> None:
    """Place the hits of battleships, carriers and escorts on one's units in the order the rules impose (HA4-HA7).

    Example: tracker battle casualties 3 --nation Britain --units GB-DD1,GB-BB1
    """
    _act(ctx, lambda c, d: c.choose_casualties(battle, waiting_nation(c, battle, nation), names(c).units(units)))


@battle_group.command(name="decide")
@_battle_argument
@_nation_option
@_units_option("--submerge", "Submarines of the nation that submerge and leave the battle.")
@click.option(
    "--retreat-to",
    "retreat_to",
    shell_complete=complete_zones,
    help="Attacker only: retreat every remaining unit to this zone.",
)
@click.pass_obj
def battle_decide(ctx: Context, battle: int, nation: str | None, submerge: str | None, retreat_to: str | None) -> None:
    """At the end of a round: submerge submarines (NC4), or, for the attacker, retreat (NC1); default: fight on.

    Example: tracker battle decide 3 --nation Germany --retreat-to "Skagerrak"
    """
    _act(
        ctx,
        lambda c, d: c.naval_decide(
            battle,
            waiting_nation(c, battle, nation),
            names(c).units(submerge),
            None if retreat_to is None else names(c).zone(retreat_to),
        ),
    )


@battle_group.command(name="auto")
@_battle_argument
@dice_options
@click.pass_obj
def battle_auto(ctx: Context, battle: int, dice_text: str | None, reference: str | None) -> None:
    """Resolve any battle's remaining steps with default choices.

    With manual dice, --dice gives every die the remaining steps roll, in order.

    Example: tracker battle auto 3
    """
    _act(ctx, lambda c, d: c.battle_auto(battle, d), dice_text, reference)


COMMANDS = [intercept, asw_group, battle_group]
