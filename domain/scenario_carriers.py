"""Air units that start a scenario at sea, aboard carriers (F7): the carriers of their side
under the ruleset's `friendly_carriers`, their nation's own while it is neutral (F8: nobody's
ally) or under a ruleset that counts a nation's own only; and the refusal of a group that
overflows them, counting what it counts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.ruleset import Ruleset
from domain.text import plural, possessive

if TYPE_CHECKING:
    from domain.scenario import GameMap, Nation, UnitGroup


def carrier_pool(nation: Nation, ruleset: Ruleset) -> str:
    """F7, F8: whose carriers the nation's air units start aboard, as a key shared by all the
    nations whose carriers they share: the side's (of the nations at war in round 1) under
    `friendly_carriers`, else the nation's own. A recorded campaign's scenario reads as before:
    the side's carriers hold at least the nation's own."""
    if ruleset.friendly_carriers and nation.entry_round <= 1:
        return f"side:{nation.side}"
    return f"nation:{nation.name}"


def overfull_carriers(
    placed: list[tuple[str, UnitGroup]], nations: dict[str, Nation], ruleset: Ruleset, game_map: GameMap
) -> list[tuple[str, str]]:
    """F7: the key path of each starting group that overflows the carriers it may start
    aboard (the group after which the air units at sea there outnumber the carriers' places:
    its own lines, not the first group's), with the refusal."""
    pool = {name: carrier_pool(nation, ruleset) for name, nation in nations.items()}
    carriers: dict[tuple[str, str], dict[str, int]] = {}
    flying: dict[tuple[str, str], dict[str, int]] = {}
    at_sea = []
    for path, g in placed:
        unit = ruleset.units[g.type]
        if unit.carries:
            held = carriers.setdefault((pool[g.nation], g.at), {})
            held[g.nation] = held.get(g.nation, 0) + unit.carries * g.count
        if unit.is_air and game_map.is_sea(g.at):
            by_nation = flying.setdefault((pool[g.nation], g.at), {})
            by_nation[g.nation] = by_nation.get(g.nation, 0) + g.count
            at_sea.append((path, g))
    overfull = []
    so_far: dict[tuple[str, str], int] = {}
    for path, g in at_sea:
        place = (pool[g.nation], g.at)
        room = sum(carriers.get(place, {}).values())
        before = so_far.get(place, 0)
        so_far[place] = before + g.count
        if before <= room < so_far[place]:
            overfull.append((path, _refusal(g, nations, ruleset, pool, flying[place], carriers)))
    return overfull


def _refusal(
    g: UnitGroup,
    nations: dict[str, Nation],
    ruleset: Ruleset,
    pool: dict[str, str],
    flying: dict[str, int],
    carriers: dict[tuple[str, str], dict[str, int]],
) -> str:
    """The air units counted together and the carriers that hold them, by nation; then the
    carriers of the side there that hold none of them, and why (F8, or the ruleset)."""
    own = pool[g.nation] == f"nation:{g.nation}"
    held = carriers.get((pool[g.nation], g.at), {})
    total = sum(flying.values())
    if list(flying) == [g.nation]:
        who = f"{plural(total, g.nation + ' air unit')} at sea in {g.at}"
    else:
        who = f"{plural(total, 'air unit')} of {possessive(g.nation)} side at sea in {g.at} ({_by_nation(flying)})"
    whose = "its own carriers" if own else "carriers of its side"
    named = f" ({_by_nation(held)})" if held and list(held) != [g.nation] else ""
    message = f"{who} but {whose} there hold {sum(held.values())}{named} (F7)"
    side = nations[g.nation].side
    others = sorted(
        n
        for (p, zone), by_nation in carriers.items()
        if zone == g.at and p != pool[g.nation]
        for n in by_nation
        if nations[n].side == side
    )
    if not others:
        return message
    if not ruleset.friendly_carriers:
        why = "the ruleset says friendly_carriers = false"
    else:
        # Of one side, in different pools: the group's nation is neutral, or they are.
        neutral = [g.nation] if own else others
        why = " and ".join(f"{n} is neutral until round {nations[n].entry_round}" for n in neutral) + " (F8)"
    carrying = " and ".join(possessive(n) for n in others)
    return f"{message}; {carrying} carry none of them: {why}"


def _by_nation(counts: dict[str, int]) -> str:
    return ", ".join(f"{nation} {count}" for nation, count in sorted(counts.items()))
