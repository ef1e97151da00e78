"""Completion of what a player types, from the selected campaign: units, zones, nations,
technologies and battle numbers.

The functions are click `shell_complete` callbacks, used by the shell's tab completion
(`eval "$(_TRACKER_COMPLETE=bash_source tracker)"`) and by `tracker shell`. They read the
database named by `--db`/`TRACKER_DB` (never creating one) and answer nothing rather than
fail: a completion must never print an error into the middle of a command line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
from click.shell_completion import CompletionItem

from domain.campaign import Campaign
from domain.text import type_name, unit_order
from tracker.service.names import bare, fold

if TYPE_CHECKING:
    from tracker.service.shapes import PlayerListed

Completer = Callable[[click.Context, click.Parameter, str], list[CompletionItem]]


@contextmanager
def campaign_of(ctx: click.Context) -> Iterator[Campaign | None]:
    """The campaign the command line selects: from the open session when there is one
    (`tracker shell`), else from a database opened only for this completion."""
    from tracker.cli.context import Context
    from tracker.service.application import Tracker

    root = ctx.find_root()
    obj = root.obj
    if isinstance(obj, Context) and obj.has_tracker:
        try:
            yield obj.load()
        except Exception:  # noqa: BLE001 - no completion rather than an error
            yield None
        return
    db = root.params.get("db") or os.environ.get("TRACKER_DB")
    name = root.params.get("campaign") or os.environ.get("TRACKER_CAMPAIGN")
    try:
        t = Tracker(db, create=False)
    except Exception:  # noqa: BLE001
        yield None
        return
    try:
        try:
            campaign: Campaign | None = t.load(t.campaign_id(name))
        except Exception:  # noqa: BLE001
            campaign = None
        yield campaign
    finally:
        t.close()


def matching(candidates: list[tuple[str, str]], incomplete: str, again: bool = False) -> list[CompletionItem]:
    """Candidates (value, help) starting with what was typed, as the commands compare names
    (`starting`). The last word of a comma list is completed, keeping what comes before it;
    a name the list gives already is not offered again (`gb-dd3,GB-DD3`: a unit searches or
    moves once, a nation agrees once), unless `again` (a path may pass a zone twice), and then
    not the zone just named (a step goes to another zone)."""
    head, sep, last = incomplete.rpartition(",")
    prefix = head + sep
    named = [completion_key(n.strip()) for n in head.split(",")] if sep else []
    given = set(named[-1:] if again else named)
    begin = set(starting([value for value, _ in candidates], last))
    return [
        CompletionItem(prefix + value, help=help_text or None)
        for value, help_text in candidates
        if value in begin and completion_key(value) not in given
    ]


def completion_key(text: str) -> str:
    """Text as completion compares it: as the commands compare a name (`names.fold`: case, runs
    of spaces, '-' and '_', and the Unicode form aside: 'Ö' typed as 'O' and a combining
    diaeresis, as some systems send it, completes 'Öresund')."""
    return fold(text)


def starting(values: list[str], typed: str) -> list[str]:
    """The values that begin with `typed` as the commands read a name (`tracker.service.names`):
    in its fold (`completion_key`), and without accents (`names.bare`) when it is typed without
    any, or with accents no value begins with: 'det' and 'DET' complete 'Détroit', as `show
    detroit` finds it; 'Crè' completes 'Crète' and not 'Crête', 'cre' both."""
    key, plain = completion_key(typed), bare(typed)
    if key != plain:
        found = [v for v in values if completion_key(v).startswith(key)]
        if found:
            return found
    return [v for v in values if bare(v).startswith(plain)]


def _completer(source: Callable[[Campaign], list[tuple[str, str]]]) -> Completer:
    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        with campaign_of(ctx) as campaign:
            if campaign is None:
                return []
            try:
                return matching(source(campaign), incomplete)
            except Exception:  # noqa: BLE001
                return []

    return complete


def unit_items(c: Campaign, ids: list[str]) -> list[tuple[str, str]]:
    """Unit IDs to complete, each with its type in words and where it is ("aircraft carrier in
    Northern North Sea")."""
    return [(uid, f"{type_name(c.units[uid]['type'])} in {c.units[uid]['at']}") for uid in sorted(ids, key=unit_order)]


def typed_names(c: Campaign, params: dict[str, Any]) -> tuple[str | None, str | None]:
    """The nation (`--nation`, `--by`) and zone (`--zone`) the command line names so far, as
    the campaign spells them; None for what it does not name, or names wrongly."""
    from tracker.service.names import Names

    names = Names(c)
    nation = params.get("nation") or params.get("attacker")
    zone = params.get("zone")
    return (
        names.nation.get(nation) if isinstance(nation, str) else None,
        names.zone.get(zone) if isinstance(zone, str) else None,
    )


def acting_units(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """The units a command line may name: in a battle's command, the battle's (in its zone;
    at a search step, CV3, SM2, AS2, only the units that may search, as `pending` lists them,
    aircraft in range included; every unit while the line names no open battle), of `--nation`
    if it names one;
    elsewhere the acting nation's (`--nation`, `--by`, or the nation whose turn it is, T3), in
    `--zone` if it names one. Another nation's units would only be refused."""
    nation, zone = typed_names(c, params)
    if "battle" in params:
        battle = c.battles.get(str(params["battle"]))
        # A battle not open (not yet typed): every unit, as the command names no battle yet.
        searchers = _eligible(c, battle) if battle is not None else None
        if searchers is not None:
            # The submarines searched for, and the searcher's other units there, were offered
            # as searchers too: each only refused.
            ids = searchers
        else:
            ids = [uid for uid, u in c.units.items() if battle is None or u["at"] == battle["zone"]]
        return unit_items(c, [uid for uid in ids if nation is None or c.units[uid]["nation"] == nation])
    if nation is None and not (params.get("nation") or params.get("attacker")):
        nation = c.nation
    return unit_items(
        c,
        [
            uid
            for uid, u in c.units.items()
            if (nation is None or u["nation"] == nation) and (zone is None or u["at"] == zone)
        ],
    )


def _eligible(c: Campaign, battle: Mapping[str, Any]) -> list[str] | None:
    """The units a battle's search step may take (searchers, aircraft in range), as `pending`
    lists them; None at a step that lists none (not a search)."""
    if "eligible" in battle:
        # A league server's campaign (`shell.RemoteCampaign`) keeps them from its `pending`.
        found = battle["eligible"]
    else:
        found = next((i.get("eligible") for i in c.open_items() if i["battle"] == battle["id"]), None)
    return None if found is None else list(found)


def _placement_zones(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """PU2: where the placing nation (`--nation`, or the nation whose turn it is) may place
    the unit type named; every zone when the line names no type the ruleset knows."""
    from domain.rules.economy import placement_zones
    from tracker.service.names import Names

    if not isinstance(c, Campaign):
        return zone_items(c)  # a league server's campaign (`shell.RemoteCampaign`): no board here
    names = Names(c)
    unit_type = names.unit_type.get(str(params.get("unit_type") or ""))
    nation = names.nation.get(str(params.get("nation") or "")) or c.nation
    if unit_type is None:
        return zone_items(c)
    kinds = dict(zone_items(c))
    return [(z, kinds.get(z, "")) for z in placement_zones(c.board(), nation, unit_type)]


def _move_zones(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """Where a move may go: sea zones, and the territories no neutral holds (F8: no unit of a
    belligerent enters them); sea zones only when every unit named is a ship (F4)."""
    from tracker.service.names import Names, split_units

    if not isinstance(c, Campaign):
        return zone_items(c)  # a league server's campaign (`shell.RemoteCampaign`): no scenario here
    names = Names(c)
    typed = [names.unit(u) for u in split_units(params.get("units") or ()) or []]
    types = [c.units[u]["type"] for u in typed if u in c.units]
    ships = bool(types) and all(c.ruleset.units[t].is_naval for t in types)
    neutral = c.scenario.neutral(c.round, c.entered)
    return [(z, kind) for z, kind in zone_items(c) if kind == "sea" or not ships and c.owners.get(z) not in neutral]


def _one_step(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """F4: the `--to` of `move`, one step away: the zones beside the units' zone (when the line
    names units all in one). Every zone of the map was offered, all but a few refused ("not
    adjacent"); a destination further away is typed, and its refusal names the route."""
    zones = _move_zones(c, params)
    start = _step_from(c, params, "")
    if start is None:
        return zones
    near = c.scenario.game_map.adjacency.get(start, frozenset())
    return [(z, kind) for z, kind in zones if z in near]


def nation_items(c: Campaign) -> list[tuple[str, str]]:
    sc = c.scenario
    return [(n, f"{sc.nations[n].code}, {sc.nations[n].side}") for n in sc.turn_order]


def zone_items(c: Campaign) -> list[tuple[str, str]]:
    m = c.scenario.game_map
    # AD1: a territory's owner now, as adjusted (`owners`), not the scenario's.
    owners = c.owners if isinstance(c, Campaign) else m.land
    return [(z, "sea") for z in sorted(m.sea)] + [(z, f"land, {owners.get(z, m.land[z])}") for z in sorted(m.land)]


def sea_zone_items(c: Campaign) -> list[tuple[str, str]]:
    return [(z, "sea") for z in sorted(c.scenario.game_map.sea)]


def _technologies(c: Campaign) -> list[tuple[str, str]]:
    return [(t, "") for t in c.ruleset.technologies]


def _unit_types(c: Campaign) -> list[tuple[str, str]]:
    return [(name, u.abbr) for name, u in c.ruleset.units.items()]


def _researchable(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """TE1, TE2: the `TECHNOLOGY` of `research`: those the researching nation (`--nation`, or
    the nation whose turn it is) may roll for now, each with its level; every one on a league
    server's campaign. A technology rolled for this turn, or acquired, or a roll the nation
    cannot pay, was offered, and refused."""
    from domain.errors import TrackerError
    from domain.rules.tech import check_research

    if not isinstance(c, Campaign):
        return _technologies(c)
    nation = typed_names(c, params)[0] or c.nation
    board, found = c.board(), []
    for name in c.ruleset.technologies:
        try:
            check_research(board, nation, name, c.research_rolls.get(name, 0) if nation == c.nation else 0)
        except TrackerError:
            continue
        found.append((name, f"level {board.tech.get(nation, {}).get(name, 0)} of {c.ruleset.research_levels}"))
    return found


def _purchasable(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """PU1: the `UNIT_TYPE` of `buy`: the types the buying nation (`--nation`, or the nation
    whose turn it is) can pay one of, each with its cost; every type on a league server's
    campaign. A battleship was offered to a nation with 10 resources, and refused."""
    if not isinstance(c, Campaign):
        return _unit_types(c)
    balance = c.balances.get(typed_names(c, params)[0] or c.nation, 0)
    return [(name, f"{u.abbr}, {u.cost} each") for name, u in c.ruleset.units.items() if u.cost <= balance]


def _unplaced_types(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """PU2: the `UNIT_TYPE` of `place`: the types the placing nation (`--nation`, or the
    nation whose turn it is) bought this turn and has not placed, with how many; every type on
    a league server's campaign (its state is not read here)."""
    if not isinstance(c, Campaign):
        return _unit_types(c)
    nation, _ = typed_names(c, params)
    bought = c.unplaced.get(nation or c.nation, {})
    return [(name, f"{bought[name]} to place") for name, _ in _unit_types(c) if bought.get(name)]


def _battles(c: Campaign) -> list[tuple[str, str]]:
    return [
        (str(b["id"]), f"{b['kind']} in {b['zone']}, waiting for {', '.join(b['waiting']) or 'nobody'}")
        for b in sorted(c.battles.values(), key=lambda b: b["id"])
    ]


def line_params(ctx: click.Context) -> dict[str, Any]:
    """What the command line names so far. Click reads no argument of a line that ends with an
    option still waiting for its value, the one being completed (`move DE-SS1 --to `): they
    are left in `ctx.args`, and read again here."""
    params = dict(ctx.params)
    if ctx.args:
        try:
            again = ctx.command.make_context(ctx.info_name, list(ctx.args), parent=ctx.parent, resilient_parsing=True)
        except Exception:  # noqa: BLE001 - what was read already
            return params
        params.update({k: v for k, v in again.params.items() if v is not None and params.get(k) is None})
    return params


def context_completer(source: Callable[[Campaign, dict[str, Any]], list[tuple[str, str]]]) -> Completer:
    """A completer whose candidates depend on what the command line names so far (`ctx.params`)."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        with campaign_of(ctx) as campaign:
            if campaign is None:
                return []
            try:
                return matching(source(campaign, line_params(ctx)), incomplete)
            except Exception:  # noqa: BLE001
                return []

    return complete


complete_units = context_completer(acting_units)
complete_placement_zones = context_completer(_placement_zones)
complete_move_zones = context_completer(_one_step)
complete_nations = _completer(nation_items)
complete_zones = _completer(zone_items)
complete_sea_zones = _completer(sea_zone_items)
complete_technologies = context_completer(_researchable)
complete_purchases = context_completer(_purchasable)
complete_unit_types = _completer(_unit_types)
complete_battles = _completer(_battles)
complete_unplaced_types = context_completer(_unplaced_types)


@contextmanager
def _players_listed(ctx: click.Context, every_campaign: bool) -> Iterator[list[PlayerListed]]:
    """The players the command line's campaign lists (`--league`: the league's; `every_campaign`
    without `--campaign`: those of every campaign), through the players service as `tracker
    players list` reads them; none on a league server, whose players only its referee reads."""
    import sys

    from tracker.cli.context import Context
    from tracker.service.application import Tracker
    from tracker.service.players import LEAGUE, Players

    root = ctx.find_root()
    obj = root.obj
    shell = sys.modules.get("tracker.cli.shell")
    if shell is not None and isinstance(obj, shell.RemoteContext):
        yield []
        return
    session = isinstance(obj, Context) and obj.has_tracker
    name = obj.campaign if isinstance(obj, Context) else None
    if not session:
        name = root.params.get("campaign") or os.environ.get("TRACKER_CAMPAIGN")
    t: Tracker | None = None
    try:
        t = obj.tracker if session else Tracker(root.params.get("db") or os.environ.get("TRACKER_DB"), create=False)
        if line_params(ctx).get("league"):
            ids = [LEAGUE]
        elif name is None and every_campaign:
            ids = [str(t.campaign_id(n)) for n in t.campaign_names()]
        else:
            ids = [str(t.campaign_id(name))]
        players = Players(t.engine)
        listed = [p for cid in ids for p in players.listed(cid)]
    except Exception:  # noqa: BLE001 - no completion rather than an error
        listed = []
    try:
        yield listed
    finally:
        if t is not None and not session:
            t.close()


def _players_completer(every_campaign: bool) -> Completer:
    """PL1: the names of the players with a live token, as `players add` registered them."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        with _players_listed(ctx, every_campaign) as listed:
            found: dict[str, str] = {}
            for p in listed:
                if not p["revoked"]:
                    role = "referee" if p["referee"] else "spectator" if p["spectator"] else ", ".join(p["nations"])
                    found[p["name"]] = f"{found[p['name']]}; {role}" if p["name"] in found else role
            return matching(sorted(found.items()), incomplete)

    return complete


complete_players = _players_completer(every_campaign=False)
# `inbox --player`, `wait --player`: without --campaign, the players of every campaign.
complete_players_anywhere = _players_completer(every_campaign=True)


def complete_battles_or(words: Mapping[str, str]) -> Completer:
    """Open battle numbers, then `words` (value: help): `tracker odds BATTLE|convoy|...|need`,
    whose words complete without a campaign too."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        with campaign_of(ctx) as campaign:
            try:
                battles = _battles(campaign) if campaign is not None else []
            except Exception:  # noqa: BLE001
                battles = []
        return matching([*battles, *words.items()], incomplete)

    return complete


def _step_from(c: Campaign, params: dict[str, Any], incomplete: str) -> str | None:
    """The zone the next step of a path being typed leaves from: the zone named last, or, for
    the first step, the zone of the units the line names when they are all in one; None when
    the line does not tell (or on a league server's campaign, which has no adjacency here)."""
    from tracker.service.names import Names, split_units

    if not isinstance(c, Campaign):
        return None
    names = Names(c)
    head, sep, _ = incomplete.rpartition(",")
    if sep:
        return names.zone.get(head.rpartition(",")[2].strip())
    starts = {c.units[u]["at"] for u in map(names.unit, split_units(params.get("units") or ()) or []) if u in c.units}
    return starts.pop() if len(starts) == 1 else None


def complete_path(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Zones of a comma-separated path of adjacent zones (F4): each a neighbour of the zone
    before it (the units' zone for the first), never the one just named."""
    with campaign_of(ctx) as campaign:
        if campaign is None:
            return []
        try:
            params = line_params(ctx)
            zones = _move_zones(campaign, params)
            before = _step_from(campaign, params, incomplete)
            if before is not None:
                # Every zone of the map was offered after each step: all but a few refused.
                near = campaign.scenario.game_map.adjacency.get(before, frozenset())
                zones = [(z, kind) for z, kind in zones if z in near]
            return matching(zones, incomplete, again=True)
        except Exception:  # noqa: BLE001
            return []


def completions(group: click.Group, args: list[str], incomplete: str, obj: Any = None) -> list[CompletionItem]:
    """What click's shell completion offers after `args` for the word being typed, with `obj`
    (the open session) as the root context's object."""
    from click.shell_completion import _resolve_context, _resolve_incomplete

    ctx_args: dict[str, Any] = {} if obj is None else {"obj": obj}
    try:
        ctx = _resolve_context(group, ctx_args, "tracker", list(args))
        command, incomplete = _resolve_incomplete(ctx, list(args), incomplete)
        found = command.shell_complete(ctx, incomplete)
        if not found and not incomplete and command is ctx.command and not isinstance(command, click.Group):
            # Nothing waits for a value (every argument given, no option open): the options
            # left. Click offers them only once a dash is typed, and Tab after `convoy declare `,
            # whose options are all it takes, offered nothing.
            found = command.shell_complete(ctx, "--")
        return found
    except Exception:  # noqa: BLE001 - no completion rather than an error
        return []


def _played_turns(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """T1: the `--turn` of `state`, `report` and `log`: the national turns played so far, the
    one under way last, each with its nation and round; a neutral nation's turn passed over
    (F8) left out, as it has no events or board of its own. Every turn is kept once an
    adjustment brought an entry forward (AD1): the campaign alone does not say from when.
    None on a league server's campaign (its turn count is not read here)."""
    from projections.positions import turn_number, turn_position
    from tracker.service.passed_over import passed_over

    if not isinstance(c, Campaign):
        return []
    order = c.scenario.turn_order
    now = turn_number(order, c.round, c.nation)
    found = []
    for k in range(1, now + 1):
        if not c.entered and passed_over(c, k) is not None:
            continue
        rnd, nation = turn_position(order, k)
        found.append((str(k), f"{nation}, round {rnd}" + (", under way" if k == now else "")))
    return found


complete_turns = context_completer(_played_turns)

# How many of the last events `explain` offers.
RECENT_EVENTS = 20


def complete_recent_events(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The SEQ of `explain`: the campaign's last RECENT_EVENTS events, newest first, each
    with what `log` says of it; in `tracker shell` only (its database is open), none in a
    league server's shell or the shell's own completion."""
    import sys

    from projections.summary import summary
    from tracker.cli.context import Context

    obj = ctx.find_root().obj
    shell = sys.modules.get("tracker.cli.shell")
    if not isinstance(obj, Context) or not obj.has_tracker or shell and isinstance(obj, shell.RemoteContext):
        return []
    try:
        t = obj.tracker
        cid = t.campaign_id(obj.campaign)
        # What was asked before each action (ActionAsked) is left out, as `log` leaves it out.
        stored = t.recorder.select_events(cid, desc=True, limit=4 * RECENT_EVENTS)
        events = [(s.originator_version, t.decode(s)) for s in stored]
        campaign = t.load(cid)  # as `log` says them: a unit by its type in the campaign's ruleset
        scenario, ruleset = campaign.scenario, campaign.ruleset
        found = [(str(seq), summary(e, scenario, ruleset)) for seq, e in events if type(e).__name__ != "ActionAsked"]
        return matching(found[:RECENT_EVENTS], incomplete)
    except Exception:  # noqa: BLE001 - no completion rather than an error
        return []


def complete_event_kinds(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from tracker.service.names import event_kinds

    return matching([(k, "") for k in event_kinds()], incomplete)
