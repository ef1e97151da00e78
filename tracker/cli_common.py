"""What every `tracker` command module shares: the click context, the output options, running
an action and printing what it recorded and what the game waits for next."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console

from domain.campaign import Campaign
from domain.dice import DiceSource, parse_dice
from domain.errors import InputError
from projections.summary import rule_of, summary
from tracker.application import Tracker
from tracker.names import Names


class Context:
    """The global options, and the database opened on first use.

    Only a command that makes a campaign (`new`, `import`) sets `may_create`: every other
    one refuses a database file that does not exist instead of leaving an empty one behind.
    """

    def __init__(self, db: str | None, campaign: str | None) -> None:
        self.db = db
        self.campaign = campaign
        self.may_create = False
        self._tracker: Tracker | None = None

    @property
    def tracker(self) -> Tracker:
        if self._tracker is None:
            self._tracker = Tracker(self.db, create=self.may_create)
        return self._tracker

    @property
    def has_tracker(self) -> bool:
        return self._tracker is not None

    def load(self) -> Campaign:
        """The selected campaign now."""
        t = self.tracker
        return t.load(t.campaign_id(self.campaign))

    def close(self) -> None:
        if self._tracker is not None:
            self._tracker.close()


@contextmanager
def progress(length: int, label: str) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr for long work when stderr is a terminal; nothing at all in a
    script or a pipe (the function it yields then does nothing)."""
    if length < 1 or not sys.stderr.isatty():
        yield lambda _n: None
        return
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield bar.update


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


def console(file: Any = None) -> Console:
    """Rich output as wide as the terminal (or COLUMNS), in colour only on a terminal."""
    return Console(file=file, highlight=False, soft_wrap=False)


def split_list(text: str | None) -> list[str] | None:
    """'A,B' as [A, B]; '' as []; no option at all as None (the default choice). For zone
    lists, whose names hold spaces; unit lists go through `names.split_units`."""
    return None if text is None else [p.strip() for p in text.split(",") if p.strip()]


def names(c: Campaign) -> Names:
    return Names(c)


def acting(c: Campaign, nation: str | None) -> str:
    """The nation named (in any spelling or by code), or the one whose turn it is."""
    return Names(c).nation(nation) if nation else c.nation


def run(
    ctx: Context,
    command: Callable[[Campaign, DiceSource], Any],
    dice_text: str | None = None,
    reference: str | None = None,
) -> Any:
    """Run a command on the selected campaign through the application service."""
    values = parse_dice(dice_text) if dice_text is not None else None
    t = ctx.tracker
    t.require_writable()
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
        return Names(c).nation(nation)
    waiting = c.battles.get(str(battle), {}).get("waiting", [])
    if len(waiting) != 1:
        raise InputError(
            f"say which nation chooses with --nation (waiting for: {', '.join(waiting) or 'nobody'})"
        )
    return str(waiting[0])
