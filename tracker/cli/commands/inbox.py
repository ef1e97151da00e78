"""`tracker inbox` and `tracker wait`: what the game waits for from you, across campaigns, and
a terminal that waits for it instead of polling `pending` by hand."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from domain.text import phase_name
from tracker.cli.common import Context, echo_prose, emit_json, json_option, suggested
from tracker.cli.completion import complete_players_anywhere
from tracker.cli.params import PLAYER, Real

if TYPE_CHECKING:
    from tracker.service.shapes import OwedItem

PLAYER_OPTION = click.option(
    "--player",
    type=PLAYER,
    shell_complete=complete_players_anywhere,
    help="On a database: the player (as `players add` named them) whose nations count. Through "
    "--server the token says who you are.",
)


def show(items: list[OwedItem]) -> None:
    """Each owed item on a line of its own, with the command that answers it, naming its
    campaign (the items come from every campaign you play, as a hand-off's message names it)."""
    from tracker.service.inbox import recorder_of

    for item in items:
        where = f"round {item['round']} · {item['nation']} · {phase_name(item['phase'])}"
        echo_prose(f"{item['campaign']} · {where}: {item['text']}")
        # With --campaign NAME (as a hand-off's message names it), and the --db or --server typed.
        command = suggested(item["command"], item["campaign"]) if item["command"] else None
        if command and command not in item["text"]:
            # NC3: a volley several nations are waited for is recorded once, by the nation named
            # (as the hand-off messages label it): the others' copies would fork on it.
            records = recorder_of(item)
            click.echo(f"  next ({records}): {command}" if records else f"  next: {command}")


@click.command()
@PLAYER_OPTION
@json_option
@click.pass_obj
def inbox(ctx: Context, player: str | None, as_json: bool) -> None:
    """List what the game waits for from you in every campaign you play (--campaign: in that one):
    whose decision or roll, under which rule, and the command that answers it.

    Example: tracker --server https://league.example inbox --json
    """
    from tracker.service.inbox import as_json as inbox_json
    from tracker.service.inbox import check_player, owed

    check_player(ctx.tracker, player, ctx.campaign)
    items = inbox_json(owed(ctx.tracker, player, ctx.campaign))
    if as_json:
        emit_json(items)
        return
    if not items:
        click.echo("Nothing waits for you.")
    show(items)


@click.command()
@PLAYER_OPTION
@click.option(
    "--timeout",
    type=Real(0, 7 * 24 * 3600),
    default=None,
    help="Give up after this many seconds (exit 1); default: wait for as long as it takes.",
)
@json_option
@click.pass_obj
def wait(ctx: Context, player: str | None, timeout: float | None, as_json: bool) -> None:
    """Wait until the game waits for you (in every campaign you play, or --campaign), then print
    what it waits for, as `tracker inbox` does. On a database it reads each campaign's last
    event number, and the rest only when something new was recorded; through --server it
    follows the campaign's event stream (without --campaign it asks the server every 10 s).

    Example: tracker --campaign autumn wait --player anna --timeout 3600
    """
    from domain.errors import TrackerError
    from tracker.service.inbox import as_json as inbox_json
    from tracker.service.inbox import check_player, owed

    t = ctx.tracker
    check_player(t, player, ctx.campaign)
    deadline = None if timeout is None else time.monotonic() + timeout
    seen: dict[str, int] | None = None
    pause = 0.2
    while True:
        names = [ctx.campaign] if ctx.campaign is not None else t.campaign_names()
        heads = {name: t.recorder.last_version(t.campaign_id(name)) for name in names}
        if heads != seen:
            seen = heads
            items = owed(t, player, ctx.campaign)
            if items:
                if as_json:
                    emit_json(inbox_json(items))
                else:
                    show(inbox_json(items))
                return
            pause = 0.2
        if deadline is not None and time.monotonic() >= deadline:
            raise TrackerError(f"nothing waited for you within {timeout:g} s")
        # Cheap reads of each campaign's last version; less often the longer nothing happens.
        time.sleep(pause if deadline is None else max(0.0, min(pause, deadline - time.monotonic())))
        pause = min(pause * 1.5, 2.0)
