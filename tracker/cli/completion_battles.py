"""Completion of the battle commands from what the referee allows now: the zones where a naval
battle (NC1) or ASW combat (AS1) may start, the nations a battle's step waits for, the legal
targets (HA1-HA3, AS3, SM4), screens (HA1, HA3) and casualties (HA4-HA7) of its volley, where
its attacker may retreat (NC1), the submarines an interception's or ASW combat's decision may
name (SM4, SM5, AS5), and who may declare a convoy attack where (CV1).

The functions are click `shell_complete` callbacks, as those of `tracker.cli.completion`, on
whose helpers they build: they answer nothing rather than fail.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import click
from click.shell_completion import CompletionItem

from domain.campaign import Campaign
from domain.text import possessive, type_name
from tracker.cli.completion import (
    Completer,
    acting_units,
    campaign_of,
    completion_key,
    context_completer,
    line_params,
    matching,
    nation_items,
    sea_zone_items,
    typed_names,
    unit_items,
)

if TYPE_CHECKING:
    from domain.board import Board


def _starting_nation(c: Campaign, params: dict[str, Any]) -> str | None:
    """The nation a `battle start` or `asw start` line starts for: `--nation` as the campaign
    spells it, or the nation whose turn it is; None when `--nation` names no nation."""
    nation, _ = typed_names(c, params)
    return nation if nation is not None or params.get("nation") else c.nation


def _may_start(c: Campaign, board: Board, nation: str, action: str) -> bool:
    """T3, and one procedure at a time: what `naval_start` and `asw_start` check before the
    zone (`turn.require_turn`, and `_require_no_procedure`'s open battles)."""
    from domain.errors import TrackerError
    from domain.rules import turn

    try:
        turn.require_turn(board, nation, ("naval_combat",), action)
    except TrackerError:
        return False
    return not c.battles


def _remote_starts(c: Any, params: dict[str, Any], kinds: tuple[str, ...]) -> list[tuple[str, str]]:
    """A league server's campaign (`shell.RemoteCampaign`), which has no board here: the zones
    of the battles its `pending` says the phasing nation may start (NC1, AS1, by the server's
    referee); every sea zone when the line names another nation than the phasing one, as the
    server may take its name or code."""
    nation = params.get("nation")
    if isinstance(nation, str) and completion_key(nation) != completion_key(c.nation):
        return sea_zone_items(c)
    starts = {
        i["zone"]: i.get("holds") or f"enemy submarines {', '.join(i.get('submarines') or [])}"
        for i in c.starts
        if i["kind"] in kinds
    }
    return [(z, starts[z]) for z, _ in sea_zone_items(c) if z in starts]


def _start_zones(
    c: Campaign,
    params: dict[str, Any],
    kinds: tuple[str, ...],
    action: str,
    check: Callable[[Board, str, str, frozenset[str]], str],
) -> list[tuple[str, str]]:
    """The sea zones where the nation (`--nation`, or the nation whose turn it is) may start a
    battle now: those `check(board, nation, zone, committed)` passes, described as it says.
    None outside its naval_combat phase or while a battle is open; every sea zone when the line
    names a nation the campaign does not know; on a league server's campaign, the zones of
    the `kinds` of battle its `pending` lists."""
    from domain.errors import TrackerError

    if not isinstance(c, Campaign):
        return _remote_starts(c, params, kinds)
    nation = _starting_nation(c, params)
    if nation is None:
        return sea_zone_items(c)
    board = c.board()
    if not _may_start(c, board, nation, action):
        return []
    committed = frozenset(c.committed)
    zones = []
    for zone, _ in sea_zone_items(c):
        try:
            zones.append((zone, check(board, nation, zone, committed)))
        except TrackerError:
            continue
    return zones


def _naval_start_zones(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """NC1: the zones where a naval battle may start, by the referee's own checks
    (`NavalBattles.naval_start`: the nation's units and enemy naval units there, not fought
    there this phase, not enemy submarines alone unless its submarines came to attack them)."""
    from domain.rules import combat

    def check(board: Board, nation: str, zone: str, committed: frozenset[str]) -> str:
        _, defenders = combat.check_start(board, nation, zone, c.fought, committed)
        attacking = zone in c.attack_zones
        combat.check_not_submarines_alone(board, nation, zone, defenders, attacking, c.fought, committed)
        return board.describe_zone(zone)

    return _start_zones(c, params, ("naval_due", "naval_may"), "a naval battle", check)


def _asw_start_zones(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """AS1: the zones where ASW combat may start, by the referee's own check
    (`AswCombat.asw_start`: enemy submarines there, and the nation's units there that may
    search, not fought there this phase)."""
    from domain.rules import asw

    def check(board: Board, nation: str, zone: str, committed: frozenset[str]) -> str:
        subs = asw.check_start(board, nation, zone, c.fought, committed)
        return f"enemy submarines {', '.join(u.id for u in subs)}"

    return _start_zones(c, params, ("asw_may",), "ASW combat", check)


def _step_facts(c: Campaign, params: dict[str, Any]) -> dict[str, Any]:
    """What the open battle the line names waits for, as `pending` reads it (`waiting_facts`);
    nothing for a battle not open, or a league server's campaign (its `pending` names no
    targets or screens)."""
    battle = c.battles.get(str(params.get("battle")))
    if battle is None or not isinstance(c, Campaign):
        return {}
    return c.waiting_facts(battle)


def _choosers(c: Campaign, params: dict[str, Any], facts: Mapping[str, Any], key: str) -> list[str]:
    """The nations whose choices (`facts[key]`) a line may give: `--nation`, or every nation the
    step waits for when the line names none the campaign knows."""
    nation, _ = typed_names(c, params)
    choices = facts.get(key) or {}
    if nation is None:
        return list(choices)
    return [nation] if nation in choices else []


def _target_pairs(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """HA1-HA3, AS3, SM4: the FIRER=TARGET pairs of the open battle's selective shots: each
    firer of the nation choosing with each of its legal targets, as `pending` lists them."""
    facts = _step_facts(c, params)
    units = c.units
    return [
        (f"{shot['unit']}={target}", f"{type_name(units[shot['unit']]['type'])} at {type_name(units[target]['type'])}")
        for nation in _choosers(c, params, facts, "targets")
        for shot in facts["targets"][nation]
        for target in shot["legal"]
    ]


def _screen_pairs(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """HA1, HA3: the FIRER=ESCORT pairs of the open battle's screening step: each shot at the
    choosing nation's ships with each escort that may take it, as `pending` lists them."""
    facts = _step_facts(c, params)
    units = c.units
    return [
        (f"{screen['firer']}={escort}", f"{type_name(units[escort]['type'])} takes the shot at {screen['target']}")
        for nation in _choosers(c, params, facts, "screens")
        for screen in facts["screens"][nation]
        for escort in screen["options"]
    ]


def _pairs_completer(source: Callable[[Campaign, dict[str, Any]], list[tuple[str, str]]]) -> Completer:
    """A completer of a comma list of FIRER=UNIT pairs: a firer named earlier in the list is
    not offered again (each firer takes one pair)."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        with campaign_of(ctx) as campaign:
            if campaign is None:
                return []
            try:
                named = {completion_key(p.partition("=")[0].strip()) for p in incomplete.split(",")[:-1]}
                pairs = source(campaign, line_params(ctx))
                return matching([p for p in pairs if completion_key(p[0].partition("=")[0]) not in named], incomplete)
            except Exception:  # noqa: BLE001
                return []

    return complete


def _casualty_units(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """HA4-HA7: the `--units` of `battle casualties`: the units the open battle's step lets
    the nation placing its hits choose among (`--nation`, or each nation it waits for), as
    `pending` lists them; the battle's units (`acting_units`) at another step."""
    facts = _step_facts(c, params)
    if not facts.get("casualties"):
        return acting_units(c, params)
    ids = [u for nation in _choosers(c, params, facts, "casualties") for u in facts["casualties"][nation]["units"]]
    return unit_items(c, list(dict.fromkeys(ids)))


def _waiting_nations(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """The `--nation` of a battle's choice: the nations its step waits for (another nation's
    choice is refused); every nation while the line names no open battle."""
    battle = c.battles.get(str(params.get("battle")))
    nations = nation_items(c)
    if battle is None:
        return nations
    return [(n, help_text) for n, help_text in nations if n in battle["waiting"]]


complete_casualty_units = context_completer(_casualty_units)


complete_naval_start_zones = context_completer(_naval_start_zones)


complete_asw_start_zones = context_completer(_asw_start_zones)


complete_targets = _pairs_completer(_target_pairs)


complete_screens = _pairs_completer(_screen_pairs)


complete_waiting_nations = context_completer(_waiting_nations)


def _phasing_nation(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """T3: the `--nation` of `battle start` and `asw start`: the nation whose turn it is, the only
    one that may start a battle, while it may (its naval_combat phase, no battle open)."""
    if isinstance(c, Campaign):
        may = _may_start(c, c.board(), c.nation, "a battle")
    else:
        may = c.phase == "naval_combat" and not c.battles  # a league server's campaign: no board here
    return [(n, help_text) for n, help_text in nation_items(c) if n == c.nation] if may else []


complete_phasing_nation = context_completer(_phasing_nation)


def _decisions(c: Campaign, params: dict[str, Any]) -> dict[str, Any] | None:
    """NC4, NC1: each waiting side's options at the decide step of the naval battle the line
    names, as `pending` lists them (a league server's campaign keeps them from its `pending`);
    None while the line names no open battle."""
    battle = c.battles.get(str(params.get("battle")))
    if battle is None:
        return None
    if not isinstance(c, Campaign):
        return battle.get("decisions") or {}
    return _step_facts(c, params).get("decisions") or {}


def _retreat_zones(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """NC1: the `--retreat-to` of `battle decide`: the zones the battle's attacker may retreat
    to, as `pending` says them (none at another step, or for the defender); every sea zone
    while the line names no open battle."""
    decisions = _decisions(c, params)
    if decisions is None:
        return sea_zone_items(c)
    nation, _ = typed_names(c, params)
    choosers = [n for n in decisions if nation is None or n == nation]
    zones = dict.fromkeys(z for n in choosers for z in decisions[n].get("retreat") or [])
    return [(z, "sea") for z in zones]


complete_retreat_zones = context_completer(_retreat_zones)


def _step_units(key: str, steps: tuple[str, ...]) -> Callable[[Campaign, dict[str, Any]], list[tuple[str, str]]]:
    """The units a battle's step lets the line name (`waiting_facts(...)[key]` at one of
    `steps`: the detected submarines of an interception's or ASW combat's decision, SM4, AS5;
    those free to go on or stop, SM5); none at another step; the battle's units
    (`acting_units`) while the line names no open battle, or on a league server's campaign."""

    def source(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
        battle = c.battles.get(str(params.get("battle")))
        if battle is None or not isinstance(c, Campaign):
            return acting_units(c, params)
        if battle["step"] not in steps:
            return []
        facts = _step_facts(c, params)
        if key == "retreat" and not facts.get("back"):
            return []  # SM4: submarines where their move began have no zone to retreat to
        return unit_items(c, [u for u in facts.get("free" if key == "free" else "detected") or [] if u in c.units])

    return source


complete_detected = context_completer(_step_units("detected", ("decide",)))
complete_retreating = context_completer(_step_units("retreat", ("decide",)))
complete_going_on = context_completer(_step_units("free", ("continue",)))


def _convoy_open(c: Campaign) -> dict[str, list[str]]:
    """CV1: each enemy that may still declare a convoy attack, with its zones, as `pending`'s
    convoy_open items say (a league server's campaign keeps them from its `pending`)."""
    if not isinstance(c, Campaign):
        return {i["nation"]: list(i["zones"]) for i in c.starts if i["kind"] == "convoy_open"}
    return c.convoy_attacks_open()


def _convoy_nations(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """CV1: the `--by` of `convoy declare` and `convoy pass`: the enemies of the phasing
    nation that may still declare a convoy attack (not the NTR's owner, nor a neutral)."""
    found = _convoy_open(c)
    return [(n, f"may attack in {', '.join(found[n])}") for n, _ in nation_items(c) if n in found]


def _convoy_zones(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """CV1: the `--zone` of `convoy declare`: where the `--by` nation (or, naming none the
    campaign knows, any nation) may declare a convoy attack now."""
    found = _convoy_open(c)
    nation, _ = typed_names(c, params)
    nations = [nation] if nation is not None else list(found)
    zones = dict.fromkeys(z for n in nations for z in found.get(n, []))
    return [(z, f"{possessive(c.nation)} NTR") for z in zones]


complete_convoy_nations = context_completer(_convoy_nations)
complete_convoy_zones = context_completer(_convoy_zones)


def _naval_submerging(c: Campaign, params: dict[str, Any]) -> list[tuple[str, str]]:
    """NC4: the `--submerge` of `battle decide`: the waiting sides' submarines that may
    submerge, as `pending` lists them; the battle's units while the line names no open battle."""
    decisions = _decisions(c, params)
    if decisions is None:
        return acting_units(c, params)
    nation, _ = typed_names(c, params)
    ids = [u for n, d in decisions.items() if nation is None or n == nation for u in d.get("submerge") or []]
    return unit_items(c, [u for u in dict.fromkeys(ids) if u in c.units])


complete_naval_submerging = context_completer(_naval_submerging)
