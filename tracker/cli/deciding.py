"""The commands that take the defaults of several steps (`auto`, `--auto`): run as `act` runs an
action, and where the command stopped at another player's step (PL2: each side decides for
itself), who is waited for and the command that answers. Also the default of a battle
command's BATTLE: the one battle in progress (`which_battle`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from tracker.cli.common import (
    Context,
    echo_events,
    echo_prose,
    echo_waiting,
    emit_recorded,
    next_command,
    perform,
    suggested,
    wants_json,
)


def act_auto(
    ctx: Context,
    name: str,
    inputs: dict[str, Any],
    dice_text: str | None = None,
    reference: str | None = None,
    note: str | None = None,
) -> None:
    """Run an auto action; print the events it recorded (after `note`, the battle taken for a
    BATTLE left out), the step another player takes next if it stopped there, and what the
    game waits for with the command that answers it (with --json, `recorded_json` and the
    other players' steps under "waiting_for")."""
    done = perform(ctx, name, inputs, dice_text, reference)
    deciding = _recorded_deciding(ctx, done.campaign.id, done.asked) if done.events else None
    pending = done.campaign.pending()
    others = []  # the steps another player takes next (PL2): (nation, command)
    for item in pending:
        if deciding is None or item["battle"] is None:
            continue
        nation, mine = done.campaign.step_owner(item["battle"], deciding)
        if not mine:
            others.append((nation, next_command(item)))
    if wants_json():
        stopped = [{"nation": nation, "command": answer, "rule": "PL2"} for nation, answer in others]
        emit_recorded(ctx, name, done.events, done.campaign, waiting_for=stopped)
        return
    if note:
        echo_prose(note)
    echo_events(ctx, done)
    for nation, answer in others:
        click.echo(f"Waiting for {nation}{': ' + suggested(answer) if answer else ''}   [PL2]")
    echo_waiting(done.events, pending)


def _recorded_deciding(ctx: Context, cid: Any, asked: int) -> list[str] | None:
    """The nations the action recorded at event `asked` decided for (None: all)."""
    t = ctx.tracker
    stored = t.recorder.select_events(cid, gt=asked - 1, lte=asked)
    if not stored:
        return None
    inputs = getattr(t.decode(stored[0]), "inputs", None) or {}
    deciding = inputs.get("deciding")
    return list(deciding) if isinstance(deciding, list) else None


# The kinds of battle every fight command takes (`battle fire`, `battle auto`, `odds BATTLE`).
ANY_BATTLE = ("interception", "asw", "naval", "convoy")
_KIND_WORDS = {"interception": "interception", "asw": "ASW combat", "naval": "naval battle", "convoy": "convoy battle"}


def optional_battle(f: Callable[..., Any]) -> Callable[..., Any]:
    """The BATTLE argument of a battle command, which `which_battle` may supply."""
    from tracker.cli.common import POSITIVE
    from tracker.cli.completion import complete_battles

    return click.argument("battle", type=POSITIVE, required=False, shell_complete=complete_battles)(f)


def which_battle(
    ctx: Context,
    battle: int | None,
    kinds: tuple[str, ...] = ANY_BATTLE,
    dice_text: str | None = None,
    label: str = "BATTLE",
) -> tuple[int, str | None]:
    """The battle a command acts on, and the line that says which when BATTLE was left out
    (None when it was given): the one battle of `kinds` in progress, "battle 3 (naval, Dogger
    Bank): the only battle in progress". Left out with none or several in progress, or with
    typed dice, it is a usage error naming those in progress: dice rolled at the table were
    rolled for one battle, and a default could record them in another that opened meanwhile."""
    if battle is not None:
        return battle, None
    from domain.text import plural

    battles = sorted(ctx.load().battles.values(), key=lambda b: b["id"])
    ours = [b for b in battles if b["kind"] in kinds]
    what = "battle" if set(kinds) == set(ANY_BATTLE) else " or ".join(_KIND_WORDS[k] for k in kinds)
    named = ", ".join(f"{b['id']} ({b['kind']}, {b['zone']})" for b in battles)
    missing = f"missing argument {label};"
    if not ours:
        raise click.UsageError(f"{missing} no {what} in progress" + (f" (in progress: {named})" if named else ""))
    if dice_text is not None:
        # D3: typed dice were rolled for one battle; a default could record them in another.
        raise click.UsageError(f"{missing} typed dice (--dice) name the battle they were rolled for ({named})")
    if len(ours) > 1:
        raise click.UsageError(f"{missing} {plural(len(ours), what)} in progress, name one ({named})")
    (b,) = ours
    return int(b["id"]), f"battle {b['id']} ({b['kind']}, {b['zone']}): the only {what} in progress"


def act_on(
    ctx: Context,
    name: str,
    battle: int | None,
    inputs: dict[str, Any],
    kinds: tuple[str, ...] = ANY_BATTLE,
    dice_text: str | None = None,
    reference: str | None = None,
) -> None:
    """`act` on a battle: BATTLE as given, or the one of `kinds` in progress (`which_battle`),
    whose line comes once the action is recorded, before its events (a refusal stays one line)."""
    number, note = which_battle(ctx, battle, kinds, dice_text)
    done = perform(ctx, name, {"battle": number, **inputs}, dice_text, reference)
    if wants_json():
        emit_recorded(ctx, name, done.events, done.campaign)
        return
    if note:
        echo_prose(note)
    echo_events(ctx, done)
    echo_waiting(done.events, done.campaign.pending())
