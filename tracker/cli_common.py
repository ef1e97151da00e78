"""What every `tracker` command module shares: the click context, the output options, running
an action and printing what it recorded and what the game waits for next."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from domain.dice import DiceSource, parse_dice
from domain.errors import InputError
from projections.summary import rule_of, summary

if TYPE_CHECKING:
    # Storage is imported by the first command that opens the database, so `--help` and
    # `--version` start without it.
    from domain.campaign import Campaign
    from tracker.application import Tracker


class Context:
    """The global options, and the database opened on first use."""

    def __init__(self, db: str | None, campaign: str | None) -> None:
        self.db = db
        self.campaign = campaign
        self._tracker: Tracker | None = None

    @property
    def tracker(self) -> Tracker:
        if self._tracker is None:
            from tracker.application import Tracker

            self._tracker = Tracker(self.db)
        return self._tracker

    def close(self) -> None:
        if self._tracker is not None:
            self._tracker.close()


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def dice_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--ref", "reference", help="External reference of manual dice (e.g. a dice-server roll id)."
    )(f)
    return click.option(
        "--dice",
        "dice_text",
        help="Manual dice values in the order `pending` lists, e.g. '10,3' (required with manual dice).",
    )(f)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def console() -> Console:
    return Console(width=120, highlight=False, soft_wrap=False)


def split_list(text: str | None) -> list[str] | None:
    """'A,B' as [A, B]; '' as []; no option at all as None (the default choice)."""
    return None if text is None else [p.strip() for p in text.split(",") if p.strip()]


def run(
    ctx: Context,
    command: Callable[[Campaign, DiceSource], Any],
    dice_text: str | None = None,
    reference: str | None = None,
) -> Any:
    """Run a command on the selected campaign through the application service."""
    values = parse_dice(dice_text) if dice_text is not None else None
    t = ctx.tracker
    return t.execute(t.campaign_id(ctx.campaign), command, values, reference)


def act(
    ctx: Context,
    action: Callable[[Campaign, DiceSource], object],
    dice_text: str | None = None,
    reference: str | None = None,
    hint: Callable[[dict[str, Any]], str | None] | None = None,
) -> None:
    """Run an action and print each event it recorded with its rule ID, then what the game
    waits for (with `hint`, the command that answers it)."""

    def command(c: Campaign, dice: DiceSource) -> list[str]:
        before = c.version
        action(c, dice)
        lines = [f"{summary(e)}   [{rule_of(e)}]" for e in c.pending_events if e.originator_version > before]
        for item in c.pending():
            lines.append(f"Waiting: {item['text']}")
            answer = hint(item) if hint is not None else None
            if answer:
                lines.append(f"  next: {answer}")
        return lines

    for line in run(ctx, command, dice_text, reference):
        click.echo(line)


def waiting_nation(c: Campaign, battle: int, nation: str | None) -> str:
    """The nation named, or the only one the battle waits for."""
    if nation is not None:
        return nation
    waiting = c.battles.get(str(battle), {}).get("waiting", [])
    if len(waiting) != 1:
        raise InputError(
            f"say which nation chooses with --nation (waiting for: {', '.join(waiting) or 'nobody'})"
        )
    return str(waiting[0])
