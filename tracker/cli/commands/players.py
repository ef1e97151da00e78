"""`tracker players`, `approve` and `overrides`: the players of a served campaign, their tokens
and nations (PL1, PL2), its spectators, and override requests on a league server (RK3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from domain.errors import InputError
from tracker.cli.common import POSITIVE, Context, emit_json, json_option, quoted, suggested
from tracker.cli.completion import complete_nations, complete_players

if TYPE_CHECKING:
    from domain.scenario import Scenario


@click.group(name="players")
def players() -> None:
    """The players of a campaign, for `tracker serve`: tokens bound to nations (PL1, PL2).
    Run against the database by whoever administers it, or through the server by a referee
    (`tracker --server URL players ...`): the campaign's, or the league's for `--league`."""


LEAGUE_OPTION = click.option(
    "--league",
    is_flag=True,
    help="The league's referees (referee of every campaign in the database, and the ones who create "
    "campaigns through the server) and spectators (who read every campaign).",
)


def _players(ctx: Context, league: bool, writing: bool = True) -> tuple[Any, str]:
    """The players' table and whose players (a campaign's, or the league's); `writing` False
    for `list`, which a read-only database (a shared copy, a backup) answers too."""
    from tracker.service.players import LEAGUE, Players

    t = ctx.tracker
    if writing:
        t.require_writable()
    served = served_tracker(t)
    if served is not None and served.player is None:
        # Refused before the campaign is looked up: the same answer for every name.
        served.require_referee(LEAGUE, "managing players")
    cid = LEAGUE if league else str(t.campaign_id(ctx.campaign))
    if served is not None:
        served.require_referee(cid, "managing players")
        return served.players, cid
    return Players(t.engine), cid


def served_tracker(t: Any) -> Any:
    """The server's tracker when the command runs through `tracker --server`, else None."""
    import sys

    module = sys.modules.get("tracker.server.served")
    return t if module is not None and isinstance(t, module.ServedTracker) else None


@players.command(name="add")
@click.argument("name")
@click.option("--nations", help="The nations this player acts for, comma-separated.", shell_complete=complete_nations)
@click.option(
    "--referee", is_flag=True, help="The campaign's referee: acts for any nation, adjusts, approves overrides."
)
@click.option(
    "--spectator",
    is_flag=True,
    help="Reads the campaign (state, log, reports, the viewer) and acts for nobody.",
)
@LEAGUE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the player, role, nations and token.")
@click.pass_obj
def players_add(
    ctx: Context, name: str, nations: str | None, referee: bool, spectator: bool, league: bool, as_json: bool
) -> None:
    """Add a player and print their token, once (only its hash is kept). `--spectator` adds a
    reader who acts for nobody; `--referee --league` adds a referee of every campaign, who may
    create campaigns through the server, `--spectator --league` a reader of every campaign.

    Example: tracker players add anna --nations Germany,Austria-Hungary
    """
    from tracker.service.names import Names

    if sum(map(bool, (referee, spectator, nations))) > 1:
        raise click.UsageError("give one of --nations, --referee and --spectator")
    if league and not (referee or spectator):
        raise click.UsageError(
            "a league player referees or reads every campaign: give --referee --league or --spectator --league"
        )
    # A league starts with its referee, before any campaign: the database may be new.
    ctx.may_create = league
    table, cid = _players(ctx, league)
    if league:
        token = table.add(cid, name, [], referee, spectator=spectator)
        if as_json:
            kind = "referee" if referee else "spectator"
            emit_json({"player": name.strip(), "role": kind, "nations": [], "campaign": None, "token": token})
            return
        role = "the league's referee" if referee else "the league's spectator"
        # Through a server, the database's URL is not the client's business.
        where = "the league" if served_tracker(ctx.tracker) else f"the league in {ctx.tracker.safe_url}"
        click.echo(f"Player {quoted(name.strip())} ({role}) added to {where}. Token (shown once):")
        click.echo(token)
        return
    campaign = ctx.load()
    given = [Names(campaign).nation(n) for n in (nations or "").split(",") if n.strip()]
    token = table.add(cid, name, list(dict.fromkeys(given)), referee, spectator=spectator)
    for note in _unusual_nations(table.listed(cid), name.strip(), given, campaign.scenario):
        click.echo(f"Note: {note}", err=True)
    if as_json:
        data = {
            "player": name.strip(),
            "role": "referee" if referee else "spectator" if spectator else "player",
            "nations": list(dict.fromkeys(given)),
            "campaign": ctx.tracker.name_of(campaign),
            "token": token,
        }
        emit_json(data)
        return
    role = "referee" if referee else "spectator" if spectator else ", ".join(dict.fromkeys(given))
    campaign_name = quoted(ctx.tracker.name_of(campaign))
    click.echo(f"Player {quoted(name.strip())} ({role}) added to {campaign_name}. Token (shown once):")
    click.echo(token)


def _unusual_nations(listed: list[Any], name: str, given: list[str], scenario: Scenario) -> list[str]:
    """PL2: what a group may have meant otherwise, said and allowed (a nation played as a team,
    one person playing a minor power of the other side): a nation another player with a live
    token also plays, and nations of both sides in one player's hands."""
    notes = []
    for nation in dict.fromkeys(given):
        others = [r["name"] for r in listed if r["name"] != name and not r["revoked"] and nation in r["nations"]]
        if others:
            notes.append(f"{nation} is also played by {', '.join(others)}: each of them may act for it (PL2)")
    sides = {scenario.side_of(n) for n in given}
    if len(sides) > 1:
        notes.append(
            f"{name} plays nations of both sides ({', '.join(dict.fromkeys(given))}); an override they ask for "
            "still needs another player's approval (RK3)"
        )
    return notes


@players.command(name="list")
@LEAGUE_OPTION
@json_option
@click.pass_obj
def players_list(ctx: Context, league: bool, as_json: bool) -> None:
    """List the campaign's players (`--league`: the league's referees), their nations and
    whether their token was revoked.

    Example: tracker players list --json
    """
    table, cid = _players(ctx, league, writing=False)
    rows = table.listed(cid)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        add = "tracker players add NAME " + ("--referee --league" if league else "--nations A,B")
        click.echo(f"No players yet: {suggested(add)}")
    for r in rows:
        role = "referee" if r["referee"] else "spectator" if r["spectator"] else ", ".join(r["nations"])
        click.echo(f"{r['name']}: {role}{' (revoked)' if r['revoked'] else ''}")


@players.command(name="revoke")
@click.argument("name", shell_complete=complete_players)
@LEAGUE_OPTION
@json_option
@click.pass_obj
def players_revoke(ctx: Context, name: str, league: bool, as_json: bool) -> None:
    """Revoke a player's token at once, in every server process; `players add` gives a new one.

    Example: tracker players revoke anna
    """
    table, cid = _players(ctx, league)
    # PL1: `alice` revokes `Alice`: the name as registered is the one printed.
    name = table.revoke(cid, name)
    if as_json:
        emit_json({"player": name, "revoked": True, "league": league})
        return
    click.echo(f"Token of {quoted(name)} revoked.")


@click.command(name="approve")
@click.argument("request", type=POSITIVE)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the events recorded and what the game waits for.")
def approve(request: int, as_json: bool) -> None:
    """Approve override request REQUEST on a league server, as a player of the other side or the
    referee (RK3): the override is then recorded with your agreement.

    Example: tracker --server http://127.0.0.1:8000 approve 3
    """
    raise InputError("approve works on a league server: tracker --server URL approve REQUEST")


@click.command(name="overrides")
@json_option
def overrides(as_json: bool) -> None:
    """List a league server's override requests: who asked what, whose agreement, approved or waiting.

    Example: tracker --server http://127.0.0.1:8000 overrides
    """
    raise InputError("overrides are requested and approved on a league server: tracker --server URL overrides")
