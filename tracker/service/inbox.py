"""What a player owes, across every campaign they may read (`tracker inbox`, `tracker wait`):
the items of `pending` that wait for one of their nations, each with the command that answers
it. Who the player is: the token's player on a server, `--player NAME` on a database (looked up
in each campaign's players, whatever its case), or nobody in particular (every campaign, whoever is waited for)."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.errors import InputError
from tracker.service.application import Tracker
from tracker.service.describe import command
from tracker.service.players import Player, Players
from tracker.service.shapes import OwedItem
from tracker.storage.mapper import DamagedLogError

if TYPE_CHECKING:
    from domain.campaign import Campaign


@dataclass(frozen=True)
class Owed:
    """One thing owed in one campaign: its words, the nations waited for, the command."""

    campaign: str
    round: int
    phase: str
    nation: str
    text: str
    waiting: list[str]
    rule: str
    command: str | None
    version: int


def nations_of(t: Tracker, campaign_id: str, player_name: str | None) -> frozenset[str] | None:
    """The nations the asking player acts for in this campaign: every nation (None) for its
    referee (or the league's) or when nobody in particular asks, none for a spectator or a
    stranger (a player of another campaign reading this one because it is public)."""
    served: Player | None = getattr(t, "player", None)  # the token's player, on a server
    if served is not None and not served.plays_in(campaign_id):
        # A public campaign the token's player reads but does not play: nothing is theirs
        # there, whichever nations or role they have in their own campaign (PL2).
        return frozenset()
    player = served
    if player is None and player_name is not None:
        player = Players(t.engine).named(campaign_id, player_name)
        if player is None:
            return frozenset()  # the named player does not play in this campaign
    if player is None or player.referee:
        return None
    return frozenset(player.nations)


def check_player(t: Tracker, player_name: str | None, campaign: str | None = None) -> None:
    """PL1: on a database, a `--player` that plays in none of the campaigns asked about (a typo,
    a revoked token) is refused, naming who does play there, rather than owing nothing for ever."""
    if player_name is None or getattr(t, "player", None) is not None:
        return
    players = Players(t.engine)
    names = [campaign] if campaign is not None else t.campaign_names()
    known: set[str] = set()
    for name in names:
        cid = str(t.campaign_id(name))
        if players.named(cid, player_name) is not None:
            return
        known.update(p["name"] for p in players.listed(cid) if not p["revoked"])
    where = f"campaign {campaign!r}" if campaign is not None else "any campaign of this database"
    who = f"players: {', '.join(sorted(known))}" if known else "no players are set up: `tracker players add`"
    raise InputError(f"--player {player_name!r} does not play in {where} ({who})")


# How `import --resolve theirs` names the history a copy keeps aside when it gives way at a
# PBEM fork: NAME-fork-SEQ, with -2, -3, ... when that name is taken.
_KEPT_AT_FORK = re.compile(r"-fork-\d+(-\d+)?")


def kept_at_fork(name: str, created: str, names: Collection[str]) -> bool:
    """Whether campaign `name`, whose log was created as `created`, is a history kept aside at
    a fork while the campaign `created` of the same database goes on: nobody plays it."""
    return (
        name != created
        and created in names
        and name.startswith(created)
        and _KEPT_AT_FORK.fullmatch(name[len(created) :]) is not None
    )


def owed(t: Tracker, player_name: str | None = None, campaign: str | None = None) -> list[Owed]:
    """Everything owed by the asking player (see the module), campaign by campaign in the
    order the database lists them; only `campaign` when it is named. A history kept aside at a
    PBEM fork is listed only when named: left where it stopped, it waits for ever."""
    names = [campaign] if campaign is not None else t.campaign_names()
    out: list[Owed] = []
    for name in names:
        cid = t.campaign_id(name)
        mine = nations_of(t, str(cid), player_name)
        if mine is not None and not mine:
            continue
        try:
            c = t.load(cid)
            if campaign is None and kept_at_fork(name, c.name, names):
                continue
            out.extend(_owed_in(t, name, c, mine))
        except DamagedLogError:
            if campaign is not None:
                raise
            # Damaged outside the tracker: its own commands and `verify` say how; the
            # player's other campaigns are still listed.
    return out


def _owed_in(t: Tracker, name: str, c: Campaign, mine: frozenset[str] | None) -> list[Owed]:
    found = []
    for item in c.pending(turn=True):
        waiting = list(item.get("waiting") or [])
        if not waiting or (mine is not None and not mine.intersection(waiting)):
            continue
        found.append(
            Owed(
                campaign=name,
                round=c.round,
                phase=c.phase,
                nation=c.nation,
                text=str(item["text"]),
                waiting=waiting,
                rule=str(item.get("rule") or ""),
                command=command(item),
                version=c.version,
            )
        )
    return found


# The command of a volley (NC2, NC3), as `tracker.service.describe.command` writes it.
_VOLLEY = re.compile(r"tracker battle fire \d+\b")


def recorder_of(item: OwedItem) -> str | None:
    """NC3: the nation that records a volley several nations are waited for, as
    `tracker.service.describe.recorder` names it for a pending item, known from what an item of
    `inbox --json` keeps (a server's too): its command rolls a volley, and the first nation
    waited for records it. None where one nation answers."""
    waiting = item["waiting"]
    if len(waiting) < 2 or not _VOLLEY.match(item["command"] or ""):
        return None
    return str(waiting[0])


def as_json(items: list[Owed]) -> list[OwedItem]:
    """The items as `tracker inbox --json` prints them, their keys in the order of `Owed`'s fields."""
    return [
        {
            "campaign": i.campaign,
            "round": i.round,
            "phase": i.phase,
            "nation": i.nation,
            "text": i.text,
            "waiting": list(i.waiting),
            "rule": i.rule,
            "command": i.command,
            "version": i.version,
        }
        for i in items
    ]
