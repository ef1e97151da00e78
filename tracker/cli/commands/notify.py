"""`tracker notify`: the channels a campaign's turn hand-offs are sent to (webhooks: JSON,
Discord, Slack), a test message, and the log of every delivery."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from domain.errors import InputError, TrackerError
from tracker.cli.common import POSITIVE, Context, emit_json, json_option, next_command, quoted, suggested
from tracker.cli.completion import complete_players
from tracker.cli.params import PLAYER, Expected


@click.group(name="notify")
def notify() -> None:
    """Tell players when the game waits for them: webhook (JSON, Discord, Slack) and e-mail
    channels of a campaign, delivered by `tracker serve`. A channel without `--player` is the campaign's group
    channel; with it, only the hand-offs that player's nations owe. On the database, or through
    the server (`tracker --server URL notify ...`): a player their own channels, the referee all."""


class Scope:
    """The channels a command may see and change: all of the campaign's (on the database, or
    the referee through the server), or through the server a player's own (`player`)."""

    def __init__(self, outbox: Any, campaign_id: str, player: str | None, served: bool = True) -> None:
        self.outbox = outbox
        self.campaign_id = campaign_id
        self.player = player
        self.served = served

    def channels(self) -> list[dict[str, Any]]:
        return [c for c in self.outbox.channels(self.campaign_id) if self.player in (None, c["player"])]

    def channel(self, number: int) -> dict[str, Any]:
        found: dict[str, Any] = self.outbox.channel(self.campaign_id, number)
        if self.player not in (None, found["player"]):
            # The same words as for a number nobody uses: another player's channels are not listed.
            from tracker.service.notify import NotifyError

            raise NotifyError(f"no notification channel {number} in this campaign (see tracker notify list)")
        return found


def _scope(ctx: Context, writing: bool = True) -> Scope:
    """PL2 through the server: the referee manages every channel, a player only their own.
    `writing` False: a command that only reads (`list`, `log`), which a read-only database
    (a shared copy, a backup) answers as it answers `state`."""
    from tracker.cli.commands.players import served_tracker
    from tracker.service.notify import Outbox
    from tracker.service.players import Forbidden, Unauthenticated

    t = ctx.tracker
    if writing:
        t.require_writable()
    served = served_tracker(t)
    if served is None:
        return Scope(Outbox(t.engine), str(t.campaign_id(ctx.campaign)), None, served=False)
    player = served.player
    refusal: Exception | None = None
    if player is None:
        refusal = Unauthenticated("tracker notify needs a player's token: set TRACKER_TOKEN (see tracker players add)")
    elif player.spectator:
        refusal = Forbidden(f"{player.name} is a spectator: notifications are for the players and the referee")
    if refusal is not None:
        if served.refusals is not None:
            served.refusals.append(refusal)  # answered with the refusal's own status
        raise refusal
    cid = str(served.campaign_id(ctx.campaign))
    return Scope(Outbox(served.engine), cid, None if player.referee else player.name)


# The widest mention the channel table keeps.
MENTION_MAX = 200

DURATION = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# A reminder at least once a minute (it is not a poll) and at most once a month: a longer
# interval is a typo, and one of billions of seconds overflows the clock it is added to.
REMIND_MIN = 60
REMIND_MAX = 30 * 86400


def parse_duration(text: str) -> float:
    """Seconds from `12h`, `30m`, `90s` or `1d`, from a minute to 30 days."""
    unit = DURATION.get(text[-1:].lower())
    number = text[:-1].strip()
    if unit is None or not (number.isascii() and number.isdigit()):
        raise ValueError(f"give a whole number and s, m, h or d, e.g. 12h (got {text!r})")
    seconds = int(number) * unit
    if not REMIND_MIN <= seconds <= REMIND_MAX:
        raise ValueError(f"give an interval from 60s to 30d (got {text!r})")
    return float(seconds)


class Every(click.types.StringParamType):
    """`--remind EVERY`: refused as bad usage naming the option, as any other option's value."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return parse_duration(super().convert(value, param, ctx))
        except ValueError as e:
            raise Expected(str(e), ctx, param) from None


def _every(seconds: float | None) -> str:
    if not seconds:
        return ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@notify.command(name="add")
@click.argument("kind", type=click.Choice(["webhook", "email"]))
@click.argument("target")
@click.option(
    "--player",
    type=PLAYER,
    shell_complete=complete_players,
    help="Only the hand-offs owed by this player's nations (a player of `tracker players`).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["json", "discord", "slack"]), default="json", show_default=True,
    help="Webhooks only: the body posted, a JSON object, a Discord or a Slack message.",
)  # fmt: skip
@click.option("--mention", help="Webhooks only: put at the start of each message, e.g. <@123456> on Discord.")
@click.option(
    "--remind", "every", metavar="EVERY", type=Every(),
    help="Send the message again every EVERY (12h, 30m, 1d; at most 30d) while the same thing is still owed.",
)  # fmt: skip
@click.option(
    "--attach-export", is_flag=True,
    help="E-mail only: attach the export of the events since the player last acted (for by-file play).",
)  # fmt: skip
@json_option
@click.pass_obj
def notify_add(
    ctx: Context, kind: str, target: str, player: str | None, fmt: str, mention: str | None,
    every: float | None, attach_export: bool, as_json: bool = False,
) -> None:  # fmt: skip
    """Add a webhook (its URL) or a player's e-mail channel (its address), shown masked from then on.
    Through the server (`tracker --server URL notify add ...`) a player adds their own channels,
    the referee anyone's.

    Example: tracker notify add webhook https://discord.com/api/webhooks/1/abc --format discord \\
    --player anna --mention "<@123>" --remind 12h
    """
    from tracker.service.notify import is_address, mask, normal_url, url_problem
    from tracker.service.players import Forbidden, Players, pick_name

    if kind == "email":
        _webhook_only(click.get_current_context())
    scope = _scope(ctx)
    outbox, cid = scope.outbox, scope.campaign_id
    if scope.player is not None:
        if player is not None and pick_name(player, [scope.player]) is None:
            raise Forbidden(f"{scope.player} adds channels for themselves only: leave out --player {player}")
        player = scope.player
    if mention is not None and (len(mention) > MENTION_MAX or not mention.isprintable()):
        # Stored in a column of this width (PostgreSQL refuses a longer one), and shown on one
        # line of `notify list`.
        raise InputError(f"--mention is one line of at most {MENTION_MAX} characters, e.g. <@123456>")
    if attach_export and kind != "email":
        raise InputError("--attach-export is for e-mail channels: a webhook carries no file")
    if kind == "email":
        if player is None:
            raise InputError("an e-mail channel is a player's: give --player NAME")
        if not is_address(target):
            raise InputError("an e-mail channel needs one address, e.g. anna@example.org")
        fmt = "email"
    else:
        problem = url_problem(target)
        if problem is not None:
            # Not quoted: a webhook's URL holds its secret (shown masked everywhere else).
            raise InputError(f"a webhook is an http:// or https:// URL: this one {problem}")
        target = normal_url(target)
    if player is not None:
        found = Players(outbox.engine).named(cid, player)
        if found is None:
            raise InputError(f"no player {quoted(player)} in this campaign (see tracker players list)")
        # PL1: the channel keeps the name as registered (`anna` typed for `Anna`), by which
        # its hand-offs find the player's nations.
        player = found.name
    number = outbox.add(cid, kind, target, fmt, player, mention, every, attach_export)
    who = f"player {player}" if player else "the group"
    what = "e-mail to" if kind == "email" else f"{fmt} webhook"
    more = f", reminded every {_every(every)}" if every else ""
    more += ", with the export attached" if attach_export else ""
    if as_json:
        emit_json(
            {
                "id": number, "kind": kind, "format": fmt, "player": player, "target": mask(target),
                "mention": mention, "remind": every, "attach_export": attach_export,
            }
        )  # fmt: skip
        return
    click.echo(f"Channel {number}: {what} {mask(target)} for {who}{more}.")
    if not scope.served:
        # Added on the database itself: the messages wait in it until a server sends them, and
        # a group playing by file, with no server, would otherwise wait for them in vain.
        click.echo(
            suggested(
                f"Messages are sent while `tracker serve` runs on this database; `tracker notify test {number}` "
                "sends one now."
            )
        )


def _webhook_only(command: click.Context) -> None:
    """Refuse an e-mail channel's `--format` or `--mention` as given: an e-mail is always the
    same text and HTML parts, and nobody is mentioned in it; taking them without a word would
    let the player think they take effect."""
    from click.core import ParameterSource

    for name, option, why in (
        ("fmt", "--format", "an e-mail is always sent as text and HTML parts"),
        ("mention", "--mention", "an e-mail is the player's own and mentions nobody"),
    ):
        if command.get_parameter_source(name) not in (None, ParameterSource.DEFAULT):
            raise InputError(f"{option} is for webhooks only ({why}): leave it out for an e-mail channel")


@notify.command(name="list")
@json_option
@click.pass_obj
def notify_list(ctx: Context, as_json: bool) -> None:
    """List the campaign's channels, their URLs masked.

    Example: tracker notify list --json
    """
    from tracker.service.notify import mask

    rows = [
        {
            "id": c["id"],
            "kind": c["kind"],
            "format": c["format"],
            "player": c["player"],
            "target": mask(c["target"]),
            "mention": c["mention"],
            "remind": c["remind"],
            "attach_export": bool(c["attach_export"]),
        }
        for c in _scope(ctx, writing=False).channels()
    ]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo(suggested("No channels: tracker notify add webhook URL"))
    for r in rows:
        mention = f" mention {r['mention']}" if r["mention"] else ""
        mention += f" every {_every(r['remind'])}" if r["remind"] else ""
        mention += " with export" if r["attach_export"] else ""
        what = "e-mail" if r["kind"] == "email" else f"{r['format']} webhook"
        click.echo(f"{r['id']}  {what}  {r['player'] or '(group)'}  {r['target']}{mention}")


@notify.command(name="remove")
@click.argument("channel", type=POSITIVE)
@json_option
@click.pass_obj
def notify_remove(ctx: Context, channel: int, as_json: bool = False) -> None:
    """Remove a channel, and its messages not yet delivered.

    Example: tracker notify remove 2
    """
    scope = _scope(ctx)
    scope.channel(channel)
    scope.outbox.remove(scope.campaign_id, channel)
    if as_json:
        emit_json({"id": channel, "removed": True})
        return
    click.echo(f"Channel {channel} removed.")


@notify.command(name="test")
@click.argument("channel", type=POSITIVE)
@json_option
@click.pass_obj
def notify_test(ctx: Context, channel: int, as_json: bool = False) -> None:
    """Send a test message to a channel now (what the game waits for at present), logged like
    any other; one attempt: a test the channel did not take is not tried again.

    Example: tracker notify test 1
    """
    from tracker.service.notify import Backoff, HttpSender, deliver, describe, mask

    scope = _scope(ctx)
    found = scope.channel(channel)
    outbox, cid = scope.outbox, scope.campaign_id
    t = ctx.tracker
    campaign = t.load(t.campaign_id(ctx.campaign))
    payload = describe(campaign, t.name_of(campaign))
    # One attempt: a test reported failed is a failed check, not a message owed. Retried in
    # the background, it reached a mended receiver later, stale, after the user was told it failed.
    backoff = Backoff(limit=1)
    # A webhook's test is sent here and now: held from the server's worker, which would
    # otherwise take it first and leave this command reporting it "taken by another worker".
    hold = 0.0 if found["kind"] == "email" else backoff.lease
    number = outbox.enqueue_test(cid, channel, payload, hold)
    (row,) = outbox.due(float("inf"), row_id=number)
    target = mask(row["target"])
    if row["kind"] == "email":
        # Only the server knows its SMTP server.
        if as_json:
            emit_json({"id": channel, "target": target, "message": number, "status": "queued"})
            return
        click.echo(suggested(f"Test message queued for channel {channel} ({target}): `tracker serve` sends it."))
        return
    failed = deliver(outbox, row, HttpSender(), next_command, backoff)
    if failed is not None:
        # Tried and failed (the receiver's answer, or an address the server may not post to):
        # not a mistake in the command line, so exit 1, not 2.
        raise TrackerError(f"channel {channel} ({target}) did not take the test message: {failed}")
    if as_json:
        emit_json({"id": channel, "target": target, "message": number, "status": "delivered"})
        return
    click.echo(f"Test message delivered to channel {channel} ({target}).")


def _what(version: int) -> str:
    """A row's cause: the event that handed off, an override request (RK3) or a test."""
    from tracker.service.notify import OVERRIDE_VERSIONS

    if version > 0:
        return f"event {version}"
    if version <= -OVERRIDE_VERSIONS:
        return f"override request {-version - OVERRIDE_VERSIONS}"
    return "test"


@notify.command(name="log")
@json_option
@click.pass_obj
def notify_log(ctx: Context, as_json: bool) -> None:
    """The campaign's messages: when, to which channel, status, attempts. Through the server
    (`tracker --server URL notify log`) a player sees only their own channels' messages, the
    referee every one.

    Example: tracker notify log
    """
    scope = _scope(ctx, writing=False)
    mine = {c["id"] for c in scope.channels()}
    rows = [r for r in scope.outbox.log(scope.campaign_id) if scope.player is None or r["channel_id"] in mine]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No messages yet.")
    for r in rows:
        error = f"  last: {r['last_error']}" if r["last_error"] and r["status"] != "delivered" else ""
        when = _when(r["delivered_at"] or r["created_at"])
        event = _what(r["version"])
        click.echo(
            f"{r['id']}  {when}  channel {r['channel_id']}  {event}  {r['status']}  attempts {r['attempts']}{error}"
        )
