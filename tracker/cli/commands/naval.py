"""`tracker intercept`, `tracker asw` and `tracker battle`: submarine interceptions (SM1-SM5),
ASW combat (AS1-AS5) and naval battles (NC1-NC5) step by step, with hit allocation (HA1-HA7).

Every command prints the events it recorded with their rule IDs, what the game waits for next,
and the command that answers it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from tracker.cli.common import (
    Context,
    act,
    dice_options,
    record_json_option,
    seen_option,
)
from tracker.cli.completion import Completer, complete_units
from tracker.cli.completion_battles import (
    complete_asw_start_zones,
    complete_casualty_units,
    complete_detected,
    complete_going_on,
    complete_naval_start_zones,
    complete_naval_submerging,
    complete_phasing_nation,
    complete_retreat_zones,
    complete_retreating,
    complete_screens,
    complete_targets,
    complete_waiting_nations,
)
from tracker.cli.deciding import ANY_BATTLE, act_auto, act_on, optional_battle, which_battle
from tracker.cli.params import NATION, ZONE

if TYPE_CHECKING:
    pass


def _nation_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--nation",
        type=NATION,
        help="The nation choosing (default: the only one the battle waits for).",
        shell_complete=complete_waiting_nations,
    )(f)


def _acting_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--nation",
        type=NATION,
        help="Acting nation (default: the nation whose turn it is).",
        shell_complete=complete_phasing_nation,
    )(f)


def _units_option(name: str, help_text: str, complete: Completer = complete_units) -> Callable[..., Any]:
    return click.option(name, help=help_text, shell_complete=complete)


def _zone_option(complete: Completer, **kwargs: Any) -> Callable[..., Any]:
    return click.option("--zone", type=ZONE, shell_complete=complete, **kwargs)


# ----- submarine movement: interceptions (SM2-SM5) -----


@click.group(name="intercept")
def intercept() -> None:
    """Interceptions of submarine groups passing hostile zones (SM2-SM5); `tracker move` starts them.

    BATTLE may be left out while one interception is in progress, but not with --dice.
    """


@intercept.command(name="search")
@optional_battle
@_units_option("--units", "Searching destroyers/cruisers (TE4: aircraft on carriers), comma-separated; '' for none.")
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def intercept_search(
    ctx: Context, battle: int | None, units: str | None, dice_text: str | None, reference: str | None
) -> None:
    """The enemy chooses which units search and rolls one die each; each success finds one submarine (SM2, SM3).

    Example: tracker intercept search 1 --units GB-DD3,GB-DD4,GB-DD5 --dice 1,2,7
    """
    act_on(ctx, "intercept search", battle, {"units": units}, ("interception",), dice_text, reference)


@intercept.command(name="detect")
@optional_battle
@_units_option("--subs", "The submarines found, as many as searches succeeded (default: the first of the group).")
@record_json_option
@seen_option
@click.pass_obj
def intercept_detect(ctx: Context, battle: int | None, subs: str | None) -> None:
    """Name the submarines the successful searches found (SM3).

    Example: tracker intercept detect 1 --subs DE-SS4,DE-SS5
    """
    act_on(ctx, "intercept detect", battle, {"subs": subs}, ("interception",))


@intercept.command(name="decide")
@optional_battle
@_units_option(
    "--submerge", "Detected submarines that submerge (stay in the zone, their move ends).", complete_detected
)
@_units_option("--retreat", "Detected submarines that go back to the zone they came from.", complete_retreating)
@record_json_option
@seen_option
@click.pass_obj
def intercept_decide(ctx: Context, battle: int | None, submerge: str | None, retreat: str | None) -> None:
    """After an ASW round: per detected submarine fight on (not named), submerge or retreat (SM4).

    With neither option every detected submarine submerges; name '' to have them all fight on.

    Example: tracker intercept decide 1 --submerge DE-SS4 --retreat DE-SS5
    """
    act_on(ctx, "intercept decide", battle, {"submerge": submerge, "retreat": retreat}, ("interception",))


@intercept.command(name="continue")
@optional_battle
@_units_option("--stop", "Undetected submarines that stop in the zone (default: all go on).", complete_going_on)
@record_json_option
@seen_option
@click.pass_obj
def intercept_continue(ctx: Context, battle: int | None, stop: str | None) -> None:
    """Undetected submarines go on to their destination or stop in the zone (SM5).

    Example: tracker intercept continue 1 --stop DE-SS5
    """
    act_on(ctx, "intercept continue", battle, {"stop": stop}, ("interception",))


def _auto_command(group: click.Group, action: str, summary: str, example: str, kinds: tuple[str, ...]) -> None:
    """The group's `auto` command: the `action` that resolves a battle's remaining steps with
    default choices (the same for every kind of battle: `battle auto`); without BATTLE, the one
    battle of `kinds` in progress."""

    def auto(ctx: Context, battle: int | None, dice_text: str | None, reference: str | None) -> None:
        number, note = which_battle(ctx, battle, kinds, dice_text)
        act_auto(ctx, action, {"battle": number}, dice_text, reference, note)

    auto.__doc__ = (
        f"{summary}\n\n"
        "Without BATTLE: the one battle in progress (typed dice name their battle). With manual\n"
        "dice, --dice gives every die the remaining steps roll, in order. Through a\n"
        "league server it takes your own nations' steps and stops where another player must choose\n"
        "or roll, naming them and the command that answers (PL2).\n\n"
        f"Example: tracker {example}\n"
    )
    group.command(name="auto")(optional_battle(dice_options(record_json_option(seen_option(click.pass_obj(auto))))))


_auto_command(
    intercept,
    "intercept auto",
    "Resolve an interception, and those the group meets further on, with default choices.",
    "intercept auto 1",
    ("interception",),
)


# ----- ASW combat (AS1-AS5) -----


@click.group(name="asw")
def asw_group() -> None:
    """ASW combat against enemy submarines in one's own naval combat phase (AS1-AS5).

    BATTLE may be left out while one ASW combat is in progress, but not with --dice.
    """


@asw_group.command(name="start")
@_zone_option(complete_asw_start_zones, required=True, help="Sea zone with enemy submarines.")
@_acting_option
@click.option(
    "--auto", "auto", is_flag=True, help="Resolve every step with default choices (and --dice, or auto dice)."
)
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def asw_start(
    ctx: Context, zone: str, nation: str | None, auto: bool, dice_text: str | None, reference: str | None
) -> None:
    """Start ASW combat in a zone (AS1).

    Example: tracker asw start --zone "Heligoland Bight"
    """

    run = act_auto if auto else act
    run(ctx, "asw start", {"zone": zone, "nation": nation, "auto": auto}, dice_text, reference)


@asw_group.command(name="search")
@optional_battle
@_units_option("--units", "Escorts in the zone and aircraft in range taking part (default: every eligible one).")
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def asw_search(
    ctx: Context, battle: int | None, units: str | None, dice_text: str | None, reference: str | None
) -> None:
    """Each unit taking part rolls one search die per enemy submarine; detections are pooled (AS2).

    Dice go unit by unit, and for each unit submarine by submarine.

    Example: tracker asw search 2 --units DE-DD1,DE-DD2 --dice 2,9,8,1
    """
    act_on(ctx, "asw search", battle, {"units": units}, ("asw",), dice_text, reference)


@asw_group.command(name="submerge")
@optional_battle
@_units_option(
    "--subs", "Detected submarines that submerge (default: all); '' for none (all fight on).", complete_detected
)
@record_json_option
@seen_option
@click.pass_obj
def asw_submerge(ctx: Context, battle: int | None, subs: str | None) -> None:
    """After an ASW round the submarines' owner submerges some or all of them; the rest fight on (AS5).

    Example: tracker asw submerge 2 --subs GB-SS1
    """
    act_on(ctx, "asw submerge", battle, {"subs": subs}, ("asw",))


_auto_command(
    asw_group, "asw auto", "Resolve an ASW combat's remaining steps with default choices.", "asw auto 2", ("asw",)
)


# ----- naval battles (NC1-NC5) and the steps every fight shares (HA1-HA7) -----


@click.group(name="battle")
def battle_group() -> None:
    """Naval battles (NC1-NC5), and the targets, screens, dice and casualties of every fight (HA1-HA7).

    BATTLE may be left out while one battle is in progress, but not with --dice: dice rolled at
    the table name the battle they were rolled for.
    """


@battle_group.command(name="start")
@_zone_option(
    complete_naval_start_zones, required=True, help="Sea zone where the phasing nation meets enemy naval units."
)
@_acting_option
@click.option(
    "--auto", "auto", is_flag=True, help="Resolve every step with default choices (and --dice, or auto dice)."
)
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def battle_start(
    ctx: Context, zone: str, nation: str | None, auto: bool, dice_text: str | None, reference: str | None
) -> None:
    """Start a naval battle with all the phasing nation's units in a zone; round 1 opens with submarine fire (NC1, NC2).

    Example: tracker battle start --zone "Central North Sea"
    """

    run = act_auto if auto else act
    run(ctx, "battle start", {"zone": zone, "nation": nation, "auto": auto}, dice_text, reference)


@battle_group.command(name="targets")
@optional_battle
@_nation_option
@click.option(
    "--targets",
    help="FIRER=TARGET pairs for every unit of the nation that picks (default: spread).",
    shell_complete=complete_targets,
)
@record_json_option
@seen_option
@click.pass_obj
def battle_targets(ctx: Context, battle: int | None, nation: str | None, targets: str | None) -> None:
    """Pick the targets of submarines, aircraft and ASW units before any die is rolled (HA1-HA3, AS3, SM4).

    Example: tracker battle targets 3 --nation Germany --targets DE-SS1=GB-BB1,DE-SS2=GB-CA1
    """
    act_on(ctx, "battle targets", battle, {"nation": nation, "targets": targets})


@battle_group.command(name="screen")
@optional_battle
@_nation_option
@click.option(
    "--screens",
    help="FIRER=ESCORT pairs: the escort takes that shot's hit; '' for none (default: cheapest).",
    shell_complete=complete_screens,
)
@record_json_option
@seen_option
@click.pass_obj
def battle_screen(ctx: Context, battle: int | None, nation: str | None, screens: str | None) -> None:
    """Let escorts take the shots aimed at other ships of their side (HA1, HA3).

    Example: tracker battle screen 3 --nation Britain --screens DE-SS1=GB-DD2
    """
    act_on(ctx, "battle screen", battle, {"nation": nation, "screens": screens})


@battle_group.command(name="fire")
@optional_battle
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def battle_fire(ctx: Context, battle: int | None, dice_text: str | None, reference: str | None) -> None:
    """Roll the volley the fight waits for: one die per firing unit, in the order `pending` lists (SM4, AS4, NC2, NC3).

    Example: tracker battle fire 3 --dice 4,9,1,7,2
    """
    act_on(ctx, "battle fire", battle, {}, ANY_BATTLE, dice_text, reference)


@battle_group.command(name="casualties")
@optional_battle
@_nation_option
@_units_option(
    "--units",
    "Units taking the hits, one entry per hit taken (a capital ship twice to sink it), in any order; "
    "leave a lost hit out (default: the cheapest legal choice).",
    complete_casualty_units,
)
@record_json_option
@seen_option
@click.pass_obj
def battle_casualties(ctx: Context, battle: int | None, nation: str | None, units: str | None) -> None:
    """Place the hits of battleships, carriers and escorts on one's units (HA4-HA7).

    The hits go one at a time in the order you like, each to a unit of the highest tier its
    firer's rule (HA4-HA6, NC6) still finds afloat and not yet hit; a damaged capital ship counts
    again for its second hit. A hit with no legal target left is lost. Name the units that take
    the hits, one entry per hit: a lost hit is not written. The choice is accepted when some
    order of placing the hits leads to it (HA7); `pending` shows how many hits there are.

    \b
    Example: tracker battle casualties 3 --nation Britain --units GB-DD1,GB-BB1
    A battleship's and a destroyer's hit on GB-CA1 and GB-SS1, the destroyer's placed first:
    it takes the cruiser, the battleship's finds nothing left (NC6) and is lost:
      tracker battle casualties 3 --nation Britain --units GB-CA1
    """
    act_on(ctx, "battle casualties", battle, {"nation": nation, "units": units}, ("naval", "convoy"))


@battle_group.command(name="decide")
@optional_battle
@_nation_option
@_units_option("--submerge", "Submarines of the nation that submerge and leave the battle.", complete_naval_submerging)
@click.option(
    "--retreat-to",
    "retreat_to",
    type=ZONE,
    shell_complete=complete_retreat_zones,
    help="Attacker only: retreat every remaining unit to this zone.",
)
@record_json_option
@seen_option
@click.pass_obj
def battle_decide(
    ctx: Context, battle: int | None, nation: str | None, submerge: str | None, retreat_to: str | None
) -> None:
    """At the end of a round: submerge submarines (NC4), or, for the attacker, retreat (NC1); default: fight on.

    Example: tracker battle decide 3 --nation Germany --retreat-to "Skagerrak"
    """
    # NC4: fighting on records no event of its own; `echo_events` says it ("Britain fights on"),
    # before what follows it: the other side's decision or the next round.
    act_on(ctx, "battle decide", battle, {"nation": nation, "submerge": submerge, "retreat_to": retreat_to}, ("naval",))


_auto_command(
    battle_group,
    "battle auto",
    "Resolve any battle's remaining steps with default choices.",
    "battle auto 3",
    ANY_BATTLE,
)


@battle_group.command(name="step")
@optional_battle
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def battle_step(ctx: Context, battle: int | None, dice_text: str | None, reference: str | None) -> None:
    """Take the default for the one step any battle waits for (a choice, or its roll), then stop.

    Through a league server, only a step of your own nations (PL2).

    Example: tracker battle step 3
    """
    act_on(ctx, "battle step", battle, {}, ANY_BATTLE, dice_text, reference)
