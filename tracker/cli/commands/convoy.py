"""`tracker convoy`: convoy battles in the NTR owner's collect resources phase (CV1-CV7), declared,
searched, rolled and resolved step by step or automatically."""

from __future__ import annotations

import click

from tracker.cli.common import (
    Context,
    act,
    dice_options,
    nation_option,
    record_json_option,
    seen_option,
)
from tracker.cli.completion import complete_units
from tracker.cli.completion_battles import complete_convoy_nations, complete_convoy_zones
from tracker.cli.deciding import act_auto, act_on, optional_battle, which_battle
from tracker.cli.params import NATION, ZONE

# ----- convoy battles -----


@click.group()
def convoy() -> None:
    """Convoy battles in the NTR owner's collect resources phase (CV1-CV7).

    BATTLE may be left out while one convoy battle is in progress, but not with --dice.
    """


@convoy.command(name="declare")
@click.option(
    "--by", "attacker", type=NATION, required=True, help="The attacking nation.", shell_complete=complete_convoy_nations
)
@click.option(
    "--zone",
    type=ZONE,
    required=True,
    help="Sea zone holding the phasing nation's NTR.",
    shell_complete=complete_convoy_zones,
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
@record_json_option
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

    run = act_auto if auto else act
    run(ctx, "convoy declare", {"by": attacker, "zone": zone, "subs": subs, "auto": auto}, dice_text, reference)


@convoy.command(name="pass")
@click.option(
    "--by",
    "nation",
    type=NATION,
    required=True,
    help="The enemy nation that passes.",
    shell_complete=complete_convoy_nations,
)
@record_json_option
@seen_option
@click.pass_obj
def convoy_pass(ctx: Context, nation: str) -> None:
    """Record that an enemy declares no (more) convoy attacks in this collect resources phase (CV1, T4).

    Example: tracker convoy pass --by Austria-Hungary
    """
    act(ctx, "convoy pass", {"by": nation})


@convoy.command(name="roll")
@optional_battle
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def convoy_roll(ctx: Context, battle: int | None, dice_text: str | None, reference: str | None) -> None:
    """Roll what the battle waits for: merchant defence (CV2), the round (CV4) or the convoy table (CV5).

    Example: tracker convoy roll 1 --dice 10,10
    """

    act_on(ctx, "convoy roll", battle, {}, ("convoy",), dice_text, reference)


@convoy.command(name="search")
@optional_battle
@click.option(
    "--units",
    help="Searching units, comma-separated (default: every eligible unit); '' for none.",
    shell_complete=complete_units,
)
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def convoy_search(
    ctx: Context, battle: int | None, units: str | None, dice_text: str | None, reference: str | None
) -> None:
    """Choose the ships and aircraft that search, and roll their searches (CV3).

    Example: tracker convoy search 1 --units GB-BM1,GB-DD1 --dice 2,3
    """

    act_on(ctx, "convoy search", battle, {"units": units}, ("convoy",), dice_text, reference)


@convoy.command(name="casualties")
@optional_battle
@nation_option("The nation choosing (default: the only one the battle waits for).")
@click.option(
    "--units",
    help="Units taking the hits, comma-separated (default: the cheapest legal choice).",
    shell_complete=complete_units,
)
@record_json_option
@seen_option
@click.pass_obj
def convoy_casualties(ctx: Context, battle: int | None, nation: str | None, units: str | None) -> None:
    """Choose which units take the hits (CV2, CV4, HA7).

    Example: tracker convoy casualties 1 --nation Germany --units DE-SS2
    """

    act_on(ctx, "convoy casualties", battle, {"nation": nation, "units": units}, ("convoy",))


@convoy.command(name="auto")
@optional_battle
@dice_options
@record_json_option
@seen_option
@click.pass_obj
def convoy_auto(ctx: Context, battle: int | None, dice_text: str | None, reference: str | None) -> None:
    """Resolve a battle's remaining steps with default choices: auto dice, or the --dice given
    (fewer than the battle needs: it stops where they run out and says what comes next).
    Without BATTLE: the one convoy battle in progress (typed dice name their battle).
    Through a league server it takes your own nations' steps and stops where another player
    must choose or roll, naming them and the command that answers (PL2).

    Example: tracker convoy auto 1 --dice 7,4,2
    """

    number, note = which_battle(ctx, battle, ("convoy",), dice_text)
    act_auto(ctx, "convoy auto", {"battle": number}, dice_text, reference, note)
