"""`tracker campaign`: settings of a served campaign; `campaign public on|off`: whether anyone who
can reach the league server reads it, or only its players, referee and spectators (PL2)."""

from __future__ import annotations

import click

from tracker.cli.commands.players import served_tracker
from tracker.cli.common import Context, emit_json, json_option, quoted


@click.group(name="campaign")
def campaign_group() -> None:
    """Settings of a served campaign: whether anyone may read it without a token."""


@campaign_group.command(name="public")
@click.argument("setting", required=False, type=click.Choice(["on", "off"]))
@json_option
@click.pass_obj
def campaign_public(ctx: Context, setting: str | None, as_json: bool) -> None:
    """Make the campaign readable by anyone who reaches the server (on), or only with a token of
    its players, referee or spectators (off, as every campaign starts); without ON or OFF, say
    which it is. Set on the database by whoever administers it, or through the server by the
    campaign's referee (or the league's).

    Example: tracker --campaign autumn campaign public on
    """
    from tracker.service.players import LEAGUE, Players

    t = ctx.tracker
    served = served_tracker(t)
    if setting is not None and served is not None and served.player is None:
        # Refused before the campaign is looked up: the same answer for every name.
        served.require_referee(LEAGUE, "making a campaign public or private")
    cid = str(t.campaign_id(ctx.campaign))
    table = served.players if served is not None else Players(t.engine)
    name = t.registry.name_of(cid) or ctx.campaign or ""
    if setting is not None:
        t.require_writable()
        if served is not None:
            served.require_referee(cid, "making a campaign public or private")
        by = served.player.name if served is not None and served.player is not None else None
        table.set_public(cid, setting == "on", by)
    public = table.is_public(cid)
    if as_json:
        emit_json({"campaign": name, "public": public})
        return
    if public:
        click.echo(f"Campaign {quoted(name)} is public: anyone who reaches the server reads it (no token needed).")
    else:
        click.echo(
            f"Campaign {quoted(name)} is private: only its players, referee and spectators read it, with their tokens."
        )
