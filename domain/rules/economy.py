"""Purchase and placement (PU1-PU3) and adjustments (AD1) as pure functions: what a unit
costs, where a new unit may go, the IDs new units get, and what an adjustment may change."""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation, require_each_once
from domain.text import plural, possessive, type_name

# Far beyond any table-top purchase, and small enough for every database integer.
MAX_COUNT = 1000
MAX_RESOURCES = 1_000_000_000


def _count(count: int, what: str) -> None:
    if not 1 <= count <= MAX_COUNT:
        raise InputError(f"{what} must be between 1 and {MAX_COUNT}, got {count}")


def unit_cap(board: Board, nation: str, unit_type: str) -> int | None:
    """PU3: the scenario's cap for the nation, else the ruleset's for the type (None: no cap)."""
    caps = board.scenario.nations[nation].caps
    if unit_type in caps:
        return caps[unit_type]
    return board.ruleset.units[unit_type].cap


def check_purchase(board: Board, nation: str, unit_type: str, count: int, unplaced: dict[str, int]) -> int:
    """PU1, PU2, PU3: the cost of `count` units of a type, paid from the nation's resources
    (never below 0), within the caps, for a nation with somewhere to place them. Returns the cost."""
    ut = board.ruleset.unit(unit_type)
    _count(count, "the number of units bought")
    if board.ruleset.purchases_need_a_place:
        _require_a_place(board, nation, unit_type, count)
    cost = ut.cost * count
    balance = board.balances[nation]
    if cost > balance:
        raise RuleViolation(
            "PU1",
            f"{plural(count, unit_type)} {'costs' if count == 1 else 'cost'} {cost} ({ut.cost} each) and {nation} "
            f"has {balance} resources",
        )
    cap = unit_cap(board, nation, unit_type)
    if cap is not None:
        have = sum(1 for u in board.units.values() if u.nation == nation and u.type == unit_type)
        waiting = unplaced.get(unit_type, 0)
        if have + waiting + count > cap:
            raise RuleViolation(
                "PU3",
                f"{nation} may have at most {plural(cap, unit_type)}: {have} in play and {waiting} bought, "
                f"cannot buy {count} more",
            )
    return cost


def _require_a_place(board: Board, nation: str, unit_type: str, count: int) -> None:
    """PU2: a unit is bought only if the nation could place it now: a unit with nowhere to go
    would hold its placement phase open for good (T4). A campaign recorded before the ruleset
    said so bought it all the same (`purchases_need_a_place`)."""
    if placement_zones(board, nation, unit_type):
        return
    ports = own_ports(board, nation)
    if board.ruleset.unit(unit_type).is_air:
        rule, lacks = "air units go in a port it holds or on a friendly carrier with room", "it has neither"
    else:
        rule = "naval units go in a sea zone beside a port it holds"
        lacks = f"no port it holds ({', '.join(ports)}) is beside a sea zone" if ports else "it holds no port"
    raise RuleViolation("PU2", f"{nation} has nowhere to place {plural(count, unit_type)}: new {rule}, and {lacks}")


def own_ports(board: Board, nation: str) -> list[str]:
    """PU2: the territories the nation owns now that the scenario marks as ports."""
    return sorted(t for t, owner in board.owners.items() if owner == nation and t in board.scenario.game_map.ports)


def shares_carriers(board: Board, nation: str, other: str) -> bool:
    """F7, PU2: whether `other`'s carriers hold `nation`'s air units (and its air units take
    their places): a friendly carrier is any of the side's, at war (F8); a campaign recorded
    before the ruleset said so counted the nation's own only (`friendly_carriers`)."""
    return other == nation or (board.ruleset.friendly_carriers and board.allies(nation, other))


def neutral_carriers(board: Board, nation: str, zone: str) -> str:
    """F8: a note naming the carriers in the zone of a nation still neutral, which are nobody's
    friendly carriers, for a refusal that counts none there; empty where there are none."""
    ids = sorted(
        u.id
        for u in board.units_at(zone)
        if u.nation != nation and u.nation in board.neutral and board.unit_type(u).carries
    )
    if not ids:
        return ""
    who = " and ".join(sorted({board.units[i].nation for i in ids}))
    return f"; {', '.join(ids)} of {who}, neutral in round {board.round}, carry no other nation's aircraft (F8)"


def carrier_room(board: Board, nation: str, zone: str) -> int:
    """F7: free places on the friendly carriers in a sea zone, for the nation's air units."""
    here = [u for u in board.units_at(zone) if shares_carriers(board, nation, u.nation)]
    capacity = sum(board.unit_type(u).carries for u in here)
    aboard = sum(1 for u in here if board.unit_type(u).is_air)
    return max(0, capacity - aboard)


def aboard(board: Board, nation: str, zone: str) -> frozenset[str]:
    """F7: the air units of `nation`'s side in sea zone `zone` that sit on the side's carriers
    there, as many as the carriers hold, by ID. The phasing nation's air units that flew this
    turn are in the air, not aboard, and take no place (they land at the end of its turn)."""
    here = [u for u in board.units_at(zone) if shares_carriers(board, nation, u.nation)]
    room = sum(board.unit_type(u).carries for u in here)
    resting = sorted(u.id for u in here if board.unit_type(u).is_air and not (u.nation == board.nation and u.moved > 0))
    return frozenset(resting[:room])


def takes_part_at_sea(board: Board, unit: Unit) -> bool:
    """F7, SM2: whether an air unit at sea may take part in a search or battle there: one the
    phasing nation flew there this turn, or one aboard a carrier of its side (an air unit whose
    carrier was sunk sits out until it lands). Every other unit may; so may every unit of a
    campaign recorded before the ruleset said so (`aircraft_need_a_carrier`)."""
    if not board.ruleset.aircraft_need_a_carrier or not board.unit_type(unit).is_air:
        return True
    if unit.nation == board.nation and unit.moved > 0:
        return True
    return not board.scenario.game_map.is_sea(unit.at) or unit.id in aboard(board, unit.nation, unit.at)


def placement_zones(board: Board, nation: str, unit_type: str) -> list[str]:
    """PU2: naval units go to a sea zone next to one of the nation's ports; air units to one of
    its ports or onto a friendly carrier with room."""
    game_map = board.scenario.game_map
    ports = own_ports(board, nation)
    if board.ruleset.unit(unit_type).is_naval:
        return sorted({z for p in ports for z in game_map.adjacency[p] if game_map.is_sea(z)})
    carriers = sorted(
        {u.at for u in board.units.values() if board.unit_type(u).carries and shares_carriers(board, nation, u.nation)}
    )
    return ports + [z for z in carriers if carrier_room(board, nation, z) > 0]


def check_placement(board: Board, nation: str, unit_type: str, zone: str, count: int, unplaced: dict[str, int]) -> None:
    """PU2: a unit bought this turn and not yet placed goes where the rule allows."""
    board.ruleset.unit(unit_type)
    _count(count, "the number of units placed")
    if not board.scenario.game_map.knows(zone):
        raise InputError(f"unknown zone {zone!r}")
    waiting = unplaced.get(unit_type, 0)
    if waiting < count:
        bought = ", ".join(plural(n, t) for t, n in sorted(unplaced.items()) if n) or "nothing"
        raise RuleViolation(
            "PU2", f"{nation} has {plural(waiting, unit_type)} to place, not {count} (to place: {bought})"
        )
    legal = placement_zones(board, nation, unit_type)
    if zone not in legal:
        where = ", ".join(legal) or "none"
        note = neutral_carriers(board, nation, zone) if board.ruleset.unit(unit_type).is_air else ""
        what = plural(count, unit_type)
        raise RuleViolation("PU2", f"{nation} cannot place {what} in {zone} (legal: {where}){note}")
    if board.ruleset.unit(unit_type).is_air and board.scenario.game_map.is_sea(zone):
        room = carrier_room(board, nation, zone)
        if count > room:
            # The room counted is on every carrier of the side (an ally's too), not the nation's own.
            whose = "the friendly" if board.ruleset.friendly_carriers else possessive(nation)
            raise RuleViolation("F7", f"{whose} carriers in {zone} have room for {plural(room, 'more air unit')}")


def new_unit_ids(board: Board, numbers: dict[str, int], nation: str, unit_type: str, count: int) -> list[str]:
    """PU2: the next IDs of the nation and type never used before, lost units included."""
    prefix = f"{board.scenario.nations[nation].code}-{board.ruleset.units[unit_type].abbr}"
    first = numbers.get(prefix, 0) + 1
    return [f"{prefix}{n}" for n in range(first, first + count)]


def unit_prefix(unit_id: str) -> tuple[str, int] | None:
    """'DE-SS12' -> ('DE-SS', 12); None for an ID without a trailing number."""
    stem = unit_id.rstrip("0123456789")
    if stem == unit_id:
        return None
    return stem, int(unit_id[len(stem) :])


# ----- adjustments (AD1) -----


@dataclass(frozen=True)
class Adjustment:
    """What an adjustment changes; every part may be empty, but not all of them."""

    add: tuple[tuple[str, str, str, int], ...] = ()  # (nation, unit type, zone, count)
    remove: tuple[str, ...] = ()
    resources: dict[str, int] = field(default_factory=dict)  # nation -> change
    ntr: tuple[tuple[str, str, int], ...] = ()  # (nation, zone, change)
    owners: dict[str, str] = field(default_factory=dict)  # territory -> new owner
    tech: tuple[tuple[str, str, int], ...] = ()  # (nation, technology, new level)
    enter: tuple[str, ...] = ()  # F8: neutral nations whose entry into the war comes now

    def is_empty(self) -> bool:
        return not (self.add or self.remove or self.resources or self.ntr or self.owners or self.tech or self.enter)


def _nation(board: Board, nation: str) -> None:
    if nation not in board.scenario.nations:
        raise InputError(f"unknown nation {nation!r} (known: {', '.join(board.scenario.nations)})")


def check_entry(board: Board, nations: tuple[str, ...]) -> None:
    """F8, AD1: an entry is brought forward only for a nation neutral now, once."""
    require_each_once(nations, "nation")
    for nation in nations:
        _nation(board, nation)
        if nation not in board.neutral:
            entry = board.scenario.nations[nation].entry_round
            raise RuleViolation(
                "F8",
                f"{nation} is already at war in round {board.round} (entry round {entry}): nothing to bring forward",
            )


def _require_carrier_room(board: Board, adj: Adjustment, nation: str, zone: str) -> None:
    """F7: air units added at sea go aboard friendly carriers there, within their room (what the
    scenario check asks of a starting board); carriers added with them count."""
    here = [u for u in board.units_at(zone) if shares_carriers(board, nation, u.nation) and u.id not in adj.remove]
    room = sum(board.unit_type(u).carries for u in here)
    aboard = sum(1 for u in here if board.unit_type(u).is_air)
    added = 0
    for who, unit_type, at, n in adj.add:
        if at != zone or not shares_carriers(board, nation, who):
            continue
        ut = board.ruleset.unit(unit_type)
        room += n * ut.carries
        added += n if ut.is_air else 0
    if aboard + added > room:
        raise RuleViolation(
            "F7",
            f"{possessive(nation)} air units at sea in {zone} need room on friendly carriers there: "
            f"{aboard} aboard and {added} added, room for {room}",
        )


def check_adjustment(board: Board, adj: Adjustment, reason: str) -> None:
    """AD1: an adjustment changes only what exists, to values the board can hold, and says why."""
    if not reason.strip():
        raise InputError("an adjustment needs --reason TEXT: it is shown in the log and in reports")
    if adj.is_empty():
        raise InputError("an adjustment must change something (units, resources, NTR, owners, technology or entry)")
    check_entry(board, adj.enter)
    game_map = board.scenario.game_map
    for nation, unit_type, zone, count in adj.add:
        _nation(board, nation)
        ut = board.ruleset.unit(unit_type)
        _count(count, "the number of units added")
        if not game_map.knows(zone):
            raise InputError(f"unknown zone {zone!r}")
        if ut.is_naval and not game_map.is_sea(zone):
            raise RuleViolation("AD1", f"naval units cannot be added in {zone}, a land territory")
        # AD1: the territory's owner as the adjustment leaves it (`owners_change_first`).
        owner = (
            adj.owners.get(zone, board.owners.get(zone))
            if board.ruleset.owners_change_first
            else board.owners.get(zone)
        )
        if ut.is_air and game_map.is_land(zone) and owner is not None and board.enemies(nation, owner):
            now = " after this adjustment" if zone in adj.owners and board.ruleset.owners_change_first else ""
            raise RuleViolation(
                "AD1", f"{possessive(nation)} air units cannot be added in {zone}, held by {owner}{now}"
            )
        if ut.is_air and game_map.is_sea(zone):
            _require_carrier_room(board, adj, nation, zone)
    twice = next((u for u in adj.remove if adj.remove.count(u) > 1), None)
    if twice is not None:
        raise InputError(f"{twice} is named twice in --remove")
    for uid in adj.remove:
        if uid not in board.units:
            raise board.unknown_unit(uid)
    for nation, change in adj.resources.items():
        _nation(board, nation)
        after = board.balances[nation] + change
        if not 0 <= after <= MAX_RESOURCES:
            raise RuleViolation(
                "AD1", f"{nation} has {board.balances[nation]} resources; a change of {change:+d} leaves {after}"
            )
    for nation, zone, change in adj.ntr:
        _nation(board, nation)
        if not game_map.knows(zone):
            raise InputError(f"unknown zone {zone!r}")
        if not game_map.is_sea(zone):
            raise RuleViolation("AD1", f"{zone} is a land territory: NTR are markers in sea zones (F6)")
        limit = board.scenario.nations[nation].ntr_max.get(zone, 0)
        present = board.ntr.get(nation, {}).get(zone, 0)
        if not 0 <= present + change <= limit:
            raise RuleViolation(
                "AD1",
                f"{zone} holds {present} {nation} NTR (scenario limit {limit}); a change of {change:+d} does not fit",
            )
    for territory, nation in adj.owners.items():
        if not game_map.is_land(territory):
            what = "a sea zone" if game_map.is_sea(territory) else "unknown"
            raise InputError(f"{territory!r} is {what}, not a land territory")
        _nation(board, nation)
    for nation, technology, level in adj.tech:
        _nation(board, nation)
        if technology not in board.ruleset.technologies:
            raise InputError(f"unknown technology {technology!r} (known: {', '.join(board.ruleset.technologies)})")
        if not 0 <= level <= board.ruleset.research_levels:
            raise RuleViolation("AD1", f"technology levels go from 0 to {board.ruleset.research_levels}, got {level}")
    if board.ruleset.neutral_land_closed:
        _require_neutral_land_clear(board, adj)


def _require_neutral_land_clear(board: Board, adj: Adjustment) -> None:
    """F8: no unit of another nation stands on a neutral's territory, as the board is after the
    adjustment (its owners, its entries brought forward): none is added there, and no territory
    passes to a neutral with another nation's units on it. A campaign recorded before the
    ruleset said so refused only an air unit added on an enemy's territory (`neutral_land_closed`)."""
    neutral = board.neutral - set(adj.enter)
    for nation, unit_type, zone, _ in adj.add:
        owner = adj.owners.get(zone, board.owners.get(zone))
        if owner in neutral and owner != nation:
            raise RuleViolation(
                "F8",
                f"{zone} is {possessive(owner)} territory and {owner} is neutral in round {board.round}: "
                f"{possessive(nation)} {type_name(unit_type)} cannot be added there",
            )
    for territory, owner in adj.owners.items():
        others = sorted(u.id for u in board.units_at(territory) if u.nation != owner and u.id not in adj.remove)
        if owner in neutral and others:
            raise RuleViolation(
                "F8",
                f"{territory} cannot pass to {owner}, neutral in round {board.round}, with {', '.join(others)} on it: "
                "no other nation's unit may stand on a neutral's territory (move it off first, or --remove it)",
            )
