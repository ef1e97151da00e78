"""`tracker buy`, `tracker place` and `tracker adjust`: purchases in the purchase phase (PU1,
PU3), placement of what was bought (PU2), and adjustments for what the tracker does not
model (AD1), each printing what it recorded with its rule ID."""

from __future__ import annotations

import click

from tracker.cli.common import Context, act, record_json_option, seen_option, split_list
from tracker.cli.completion import (
    complete_nations,
    complete_placement_zones,
    complete_purchases,
    complete_unplaced_types,
)
from tracker.cli.params import NATION, REASON, ZONE, Whole
from tracker.service.actions import build_adjustment
from tracker.service.names import once_each

# `place` took its count as a word and as --count, `buy` as a word alone: `buy submarine
# --count 2` was answered "did you mean --json?". Both take both.
COUNT_OPTION = click.option("--count", type=Whole(1, 1000), default=None, help="How many (or COUNT; default 1).")


def how_many(number: int | None, count: int | None) -> int:
    """The count given as the COUNT word or as --count (default 1); a usage error where both are
    given and differ."""
    if number is not None and count is not None and number != count:
        raise click.UsageError(f"COUNT {number} and --count {count} disagree: give one of them")
    return number if number is not None else count if count is not None else 1


@click.command()
@click.argument("unit_type", shell_complete=complete_purchases)
@click.argument("number", type=Whole(1, 1000), required=False, metavar="[COUNT]")
@COUNT_OPTION
@click.option(
    "--nation",
    type=NATION,
    help="Buying nation (default: the nation whose turn it is).",
    shell_complete=complete_nations,
)
@record_json_option
@seen_option
@click.pass_obj
def buy(ctx: Context, unit_type: str, number: int | None, count: int | None, nation: str | None) -> None:
    """Buy units in the purchase phase at the ruleset's cost (PU1, PU3); undo takes a purchase back
    until the phase ends.

    Example: tracker buy submarine 2
    """
    act(ctx, "buy", {"unit_type": unit_type, "count": how_many(number, count), "nation": nation})


@click.command()
@click.argument("unit_type", shell_complete=complete_unplaced_types)
# `buy destroyer 2` takes its count as a word: `place destroyer 2 --at ...` does too.
@click.argument("number", type=Whole(1, 1000), required=False, metavar="[COUNT]")
@click.option(
    "--at",
    "zone",
    type=ZONE,
    required=True,
    help="Sea zone next to a port (ships), or a port or carrier zone (air).",
    shell_complete=complete_placement_zones,
)
@COUNT_OPTION
@click.option(
    "--nation",
    type=NATION,
    help="Placing nation (default: the nation whose turn it is).",
    shell_complete=complete_nations,
)
@record_json_option
@seen_option
@click.pass_obj
def place(ctx: Context, unit_type: str, number: int | None, zone: str, count: int | None, nation: str | None) -> None:
    """Place units bought this turn in the placement phase (PU2); they get the next unused IDs.

    Example: tracker place submarine 2 --at "Heligoland Bight"
    """
    act(ctx, "place", {"unit_type": unit_type, "zone": zone, "count": how_many(number, count), "nation": nation})


@click.command()
@click.option("--reason", type=REASON, required=True, help="Why (required): shown in the log, explain and reports.")
@click.option("--add", multiple=True, help="Add units: NATION:TYPE:ZONE[:COUNT] (repeatable).")
@click.option("--remove", help="Remove units, comma-separated IDs.")
@click.option("--resources", multiple=True, help="Change resources: NATION=CHANGE, e.g. Germany=-5 (repeatable).")
@click.option("--ntr", multiple=True, help="Change NTR: NATION:ZONE=CHANGE (repeatable).")
@click.option("--owner", multiple=True, help="A territory changes hands: TERRITORY=NATION (repeatable).")
@click.option("--tech", multiple=True, help="Set a technology level: NATION:TECHNOLOGY=LEVEL (repeatable).")
@click.option(
    "--enter", multiple=True, help="A neutral nation enters the war now, before its entry round (F8; repeatable)."
)
@record_json_option
@seen_option
@click.pass_obj
def adjust(
    ctx: Context,
    reason: str,
    add: tuple[str, ...],
    remove: str | None,
    resources: tuple[str, ...],
    ntr: tuple[str, ...],
    owner: tuple[str, ...],
    tech: tuple[str, ...],
    enter: tuple[str, ...],
) -> None:
    """Record what the tracker does not model (land combat, territory changes, agreed events) as one
    explicit adjustment with a reason (AD1); --enter brings a neutral nation's entry into the war
    forward (F8).

    Example: tracker adjust --owner "Northern France=Germany" --reason "the German offensive takes Lille"
    """
    inputs = {
        "reason": reason,
        "add": list(add),
        "remove": remove,
        "resources": list(resources),
        "ntr": list(ntr),
        "owner": list(owner),
        "tech": list(tech),
    }
    if enter:
        inputs["enter"] = list(enter)
    # The forms are checked before the database is opened (bad usage, exit 2).
    once_each(split_list(remove) or [], "--remove")
    build_adjustment(add, remove, resources, ntr, owner, tech)
    act(ctx, "adjust", inputs)
