"""`tracker notify`: the channels a campaign's turn hand-offs are sent to (webhooks: JSON,
Discord, Slack), a test message, and the log of every delivery."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from domain.errors import InputError
from tracker.cli.common import Context, emit_json, json_option, next_command


@click.group(name="notify")
def notify() -> None:
    """Tell players when the game waits for them: webhook (JSON, Discord, Slack) and e-mail
    channels of a campaign, delivered by `tracker serve`. A channel without `--player` is the campaign's group
    channel; with it, only the hand-offs that player's nations owe. Run against the database."""


def _outbox(ctx: Context) -> tuple[Any, str]:
    from tracker.service.notify import Outbox

    t = ctx.tracker
    if not hasattr(t, "engine"):
        raise InputError("tracker notify runs on the database (--db), not through --server")
    t.require_writable()
    return Outbox(t.engine), str(t.campaign_id(ctx.campaign))


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@notify.command(name="add")
@click.argument("kind", type=click.Choice(["webhook", "email"]))
@click.argument("target")
@click.option("--player", help="Only the hand-offs owed by this player's nations (a player of `tracker players`).")
@click.option(
    "--format", "fmt", type=click.Choice(["json", "discord", "slack"]), default="json", show_default=True,
    help="The body posted: a JSON object, a Discord or a Slack message.",
)  # fmt: skip
@click.option("--mention", help="Put at the start of each message, e.g. <@123456> on Discord.")
@click.pass_obj
def notify_add(ctx: Context, kind: str, target: str, player: str | None, fmt: str, mention: str | None) -> None:
    """Add a webhook (its URL) or a player's e-mail channel (its address), shown masked from then on.

    Example: tracker notify add webhook https://discord.com/api/webhooks/1/abc --format discord \\
    --player anna --mention "<@123>"
    """
    from tracker.service.notify import mask
    from tracker.service.players import Players

    outbox, cid = _outbox(ctx)
    if kind == "email":
        if player is None:
            raise InputError("an e-mail channel is a player's: give --player NAME")
        if "@" not in target or any(c in target for c in " \r\n<>,"):
            raise InputError("an e-mail channel needs one address, e.g. anna@example.org")
        fmt = "email"
    elif not target.startswith(("http://", "https://")):
        raise InputError("a webhook is an http:// or https:// URL")
    if player is not None and Players(outbox.engine).player(cid, player) is None:
        raise InputError(f"no player {player!r} in this campaign (see tracker players list)")
    number = outbox.add(cid, kind, target, fmt, player, mention)
    who = f"player {player}" if player else "the group"
    what = "e-mail to" if kind == "email" else f"{fmt} webhook"
    click.echo(f"Channel {number}: {what} {mask(target)} for {who}.")


@notify.command(name="list")
@json_option
@click.pass_obj
def notify_list(ctx: Context, as_json: bool) -> None:
    """List the campaign's channels, their URLs masked.

    Example: tracker notify list --json
    """
    from tracker.service.notify import mask

    outbox, cid = _outbox(ctx)
    rows = [
        {
            "id": c["id"],
            "kind": c["kind"],
            "format": c["format"],
            "player": c["player"],
            "target": mask(c["target"]),
            "mention": c["mention"],
        }
        for c in outbox.channels(cid)
    ]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No channels: tracker notify add webhook URL")
    for r in rows:
        mention = f" mention {r['mention']}" if r["mention"] else ""
        what = "e-mail" if r["kind"] == "email" else f"{r['format']} webhook"
        click.echo(f"{r['id']}  {what}  {r['player'] or '(group)'}  {r['target']}{mention}")


@notify.command(name="remove")
@click.argument("channel", type=int)
@click.pass_obj
def notify_remove(ctx: Context, channel: int) -> None:
    """Remove a channel, and its messages not yet delivered.

    Example: tracker notify remove 2
    """
    outbox, cid = _outbox(ctx)
    outbox.remove(cid, channel)
    click.echo(f"Channel {channel} removed.")


@notify.command(name="test")
@click.argument("channel", type=int)
@click.pass_obj
def notify_test(ctx: Context, channel: int) -> None:
    """Send a test message to a channel now (what the game waits for at present), logged like
    any other; one attempt: the server's worker retries a failed one.

    Example: tracker notify test 1
    """
    from tracker.service.notify import Backoff, HttpSender, deliver, describe, mask

    outbox, cid = _outbox(ctx)
    t = ctx.tracker
    campaign = t.load(t.campaign_id(ctx.campaign))
    payload = describe(campaign, t.name_of(campaign))
    number = outbox.enqueue_test(cid, channel, payload)
    (row,) = outbox.due(float("inf"), row_id=number)
    target = mask(row["target"])
    if row["kind"] == "email":
        # Only the server knows its SMTP server.
        click.echo(f"Test message queued for channel {channel} ({target}): `tracker serve` sends it.")
        return
    failed = deliver(outbox, row, HttpSender(), next_command, Backoff())
    if failed is not None:
        raise InputError(f"channel {channel} ({target}) did not take the test message: {failed}")
    click.echo(f"Test message delivered to channel {channel} ({target}).")


@notify.command(name="log")
@json_option
@click.pass_obj
def notify_log(ctx: Context, as_json: bool) -> None:
    """Every message of the campaign: when, to which channel, status, attempts.

    Example: tracker notify log
    """
    outbox, cid = _outbox(ctx)
    rows = outbox.log(cid)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No messages yet.")
    for r in rows:
        error = f"  last: {r['last_error']}" if r["last_error"] and r["status"] != "delivered" else ""
        when = _when(r["delivered_at"] or r["created_at"])
        event = f"event {r['version']}" if r["version"] > 0 else "test"
        click.echo(
            f"{r['id']}  {when}  channel {r['channel_id']}  {event}  {r['status']}  attempts {r['attempts']}{error}"
        )
