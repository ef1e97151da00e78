"""`tracker buy`, `tracker place` and `tracker adjust`: purchases in the purchase phase (PU1,
PU3), placement of what was bought (PU2), and adjustments for what the tracker does not
model (AD1), each printing what it recorded with its rule ID."""

from __future__ import annotations

import click

from domain.campaign import Campaign
from domain.dice import DiceSource
from domain.errors import InputError
from domain.rules.economy import Adjustment
from tracker.cli_common import Context, act, acting, names, split_list


@click.command()
@click.argument("unit_type")
@click.argument("count", type=click.IntRange(1, 1000), default=1)
@click.option("--nation", help="Buying nation (default: the nation whose turn it is).")
@click.pass_obj
def buy(ctx: Context, unit_type: str, count: int, nation: str | None) -> None:
    """Buy units in the purchase phase at the ruleset's cost (PU1, PU3); undo takes a purchase back
    until the phase ends.

    Example: tracker buy submarine 2
    """
    act(ctx, lambda c, d: c.buy(acting(c, nation), names(c).unit_type(unit_type), count))


@click.command()
@click.argument("unit_type")
@click.option("--at", "zone", required=True, help="Sea zone next to a port (ships), or a port or carrier zone (air).")
@click.option("--count", type=click.IntRange(1, 1000), default=1, show_default=True, help="How many to place.")
@click.option("--nation", help="Placing nation (default: the nation whose turn it is).")
@click.pass_obj
def place(ctx: Context, unit_type: str, zone: str, count: int, nation: str | None) -> None:
    """Place units bought this turn in the placement phase (PU2); they get the next unused IDs.

    Example: tracker place submarine --at "Heligoland Bight"
    """
    act(ctx, lambda c, d: c.place(acting(c, nation), names(c).unit_type(unit_type), names(c).zone(zone), count))


def _parse(option: str, text: str, parts: int, form: str) -> list[str]:
    """'A:B=C' style values: split on ':' and one '=' into `parts` pieces."""
    left, sep, right = text.rpartition("=")
    pieces = [p.strip() for p in left.split(":")] + [right.strip()] if sep else []
    if len(pieces) != parts or not all(pieces):
        raise InputError(f"{option} takes {form}, got {text!r}")
    return pieces


def _number(option: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{option}: {text!r} is not a whole number") from None
    if abs(value) > 1_000_000_000:
        raise InputError(f"{option}: {text} is out of range")
    return value


def build_adjustment(
    add: tuple[str, ...],
    remove: str | None,
    resources: tuple[str, ...],
    ntr: tuple[str, ...],
    owner: tuple[str, ...],
    tech: tuple[str, ...],
) -> Adjustment:
    """The adjustment the options describe (AD1), each value checked for its form."""
    added = []
    for text in add:
        pieces = [p.strip() for p in text.split(":")]
        if len(pieces) not in (3, 4) or not all(pieces):
            raise InputError(f"--add takes NATION:TYPE:ZONE[:COUNT], got {text!r}")
        count = _number("--add", pieces[3]) if len(pieces) == 4 else 1
        added.append((pieces[0], pieces[1], pieces[2], count))
    changes: dict[str, int] = {}
    for text in resources:
        nation, change = _parse("--resources", text, 2, "NATION=CHANGE (e.g. Germany=-5)")
        changes[nation] = changes.get(nation, 0) + _number("--resources", change)
    ntr_changes = []
    for text in ntr:
        nation, zone, change = _parse("--ntr", text, 3, "NATION:ZONE=CHANGE (e.g. 'Britain:Irish Sea=+1')")
        ntr_changes.append((nation, zone, _number("--ntr", change)))
    owners = {}
    for text in owner:
        territory, nation = _parse("--owner", text, 2, "TERRITORY=NATION")
        owners[territory] = nation
    levels = []
    for text in tech:
        nation, technology, level = _parse("--tech", text, 3, "NATION:TECHNOLOGY=LEVEL")
        levels.append((nation, technology, _number("--tech", level)))
    return Adjustment(
        add=tuple(added),
        remove=tuple(split_list(remove) or ()),
        resources=changes,
        ntr=tuple(ntr_changes),
        owners=owners,
        tech=tuple(levels),
    )


@click.command()
@click.option("--reason", required=True, help="Why (required): shown in the log, explain and reports.")
@click.option("--add", multiple=True, help="Add units: NATION:TYPE:ZONE[:COUNT] (repeatable).")
@click.option("--remove", help="Remove units, comma-separated IDs.")
@click.option("--resources", multiple=True, help="Change resources: NATION=CHANGE, e.g. Germany=-5 (repeatable).")
@click.option("--ntr", multiple=True, help="Change NTR: NATION:ZONE=CHANGE (repeatable).")
@click.option("--owner", multiple=True, help="A territory changes hands: TERRITORY=NATION (repeatable).")
@click.option("--tech", multiple=True, help="Set a technology level: NATION:TECHNOLOGY=LEVEL (repeatable).")
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
) -> None:
    """Record what the tracker does not model (land combat, territory changes, agreed events) as one
    explicit adjustment with a reason (AD1).

    Example: tracker adjust --owner "Northern France=Germany" --reason "the German offensive takes Lille"
    """
    adjustment = build_adjustment(add, remove, resources, ntr, owner, tech)

    def action(c: Campaign, _dice: DiceSource) -> None:
        n = names(c)
        c.adjust(
            Adjustment(
                add=tuple((n.nation(a), n.unit_type(t), n.zone(z), k) for a, t, z, k in adjustment.add),
                remove=tuple(n.unit(u) for u in adjustment.remove),
                resources={n.nation(a): k for a, k in adjustment.resources.items()},
                ntr=tuple((n.nation(a), n.zone(z), k) for a, z, k in adjustment.ntr),
                owners={n.zone(t): n.nation(a) for t, a in adjustment.owners.items()},
                tech=tuple((n.nation(a), n.technology(t), k) for a, t, k in adjustment.tech),
            ),
            reason,
        )

    act(ctx, action)


COMMANDS = [buy, place, adjust]
