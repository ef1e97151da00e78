"""The commands that take the defaults of several steps (`auto`, `--auto`): run as `act` runs an
action, and where the command stopped at another player's step (PL2: each side decides for
itself), who is waited for and the command that answers."""

from __future__ import annotations

from typing import Any

import click

from projections.summary import rule_of, summary
from tracker.cli.common import (
    Context,
    echo_prose,
    echo_waiting,
    emit_recorded,
    next_command,
    perform,
    suggested,
    wants_json,
)


def act_auto(
    ctx: Context, name: str, inputs: dict[str, Any], dice_text: str | None = None, reference: str | None = None
) -> None:
    """Run an auto action; print the events it recorded, the step another player takes next if
    it stopped there, and what the game waits for with the command that answers it (with
    --json, `recorded_json` and the other players' steps under "waiting_for")."""
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
    for e in done.events:
        echo_prose(f"{summary(e, done.campaign.scenario)}   [{rule_of(e)}]")
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
