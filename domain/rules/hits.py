"""Hit allocation (HA1-HA7): selective targets and screening, the order in which other hits
fall, the cheapest legal default and the checking of an owner's choice, as pure functions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from domain.board import Board, Unit
from domain.errors import RuleViolation
from domain.text import plural


def hits_to_sink(board: Board, unit: Unit) -> int:
    """F3, NC5: hits a unit can still take before it sinks."""
    return board.unit_type(unit).hits - unit.damage


def capacity(board: Board, candidates: list[Unit]) -> int:
    return sum(hits_to_sink(board, u) for u in candidates)


def default_casualties(board: Board, candidates: list[Unit], hits: int) -> list[str]:
    """HA7: the cheapest legal choice: hits that only damage capital ships first, then the
    cheapest units; a unit appears once per hit it takes."""
    hits = min(hits, capacity(board, candidates))
    chosen: list[str] = []
    remaining = {u.id: hits_to_sink(board, u) for u in candidates}
    by_id = {u.id: u for u in candidates}
    while len(chosen) < hits:
        # A hit that leaves the unit afloat costs nothing; otherwise lose the cheapest unit.
        afloat = [uid for uid, left in remaining.items() if left > 1]
        if afloat:
            pick = min(afloat, key=lambda uid: (-board.unit_type(by_id[uid]).cost, uid))
        else:
            pick = min(
                (uid for uid, left in remaining.items() if left > 0),
                key=lambda uid: (board.unit_type(by_id[uid]).cost, uid),
            )
        chosen.append(pick)
        remaining[pick] -= 1
    return chosen


def check_casualties(
    board: Board, rule: str, owner: str, candidates: list[Unit], hits: int, chosen: list[str]
) -> list[str]:
    """HA7: the owner's choice must name exactly the hits that can be taken, among the
    candidates the rules allow, no unit more often than it has hits left."""
    by_id = {u.id: u for u in candidates}
    needed = min(hits, capacity(board, candidates))
    for uid in chosen:
        if uid not in by_id:
            if uid in board.units and board.units[uid].nation != owner:
                raise RuleViolation(
                    "HA7", f"{uid} belongs to {board.units[uid].nation}; {owner} chooses its own losses"
                )
            if uid not in board.units:
                raise board.unknown_unit(uid)
            legal = ", ".join(sorted(by_id)) or "none"
            raise RuleViolation(rule, f"{uid} cannot take these hits (legal: {legal})")
    if len(chosen) != needed:
        raise RuleViolation(
            "HA7",
            f"{owner} must assign {plural(needed, 'hit')}, got {len(chosen)} (legal: {', '.join(sorted(by_id))})",
        )
    for uid, n in Counter(chosen).items():
        if n > hits_to_sink(board, by_id[uid]):
            raise RuleViolation(
                "HA7", f"{uid} can take {plural(hits_to_sink(board, by_id[uid]), 'more hit')}, assigned {n}"
            )
    return chosen


# ----- selective fire: targets and screening (HA1-HA3) -----


def _cost(board: Board, unit: Unit) -> int:
    return board.unit_type(unit).cost


def is_selective(board: Board, unit: Unit) -> bool:
    """HA1, HA3: submarines and air units pick their targets before rolling."""
    ut = board.unit_type(unit)
    return ut.is_submarine or ut.is_air


def selective_targets(board: Board, firer: Unit, enemies: list[Unit]) -> list[Unit]:
    """HA1-HA3: the enemy units in the battle a submarine or an air unit may target.

    A submarine must pick a non-submarine naval unit while there is one (HA1) and never an
    aircraft (HA2); an air unit may pick any enemy unit (HA3)."""
    rs = board.ruleset
    if not board.unit_type(firer).is_submarine:
        return sorted(enemies, key=lambda u: u.id)
    pool = [u for u in enemies if board.unit_type(u).is_naval or rs.submarine_can_hit_air]
    if rs.submarine_targets_surface_first:
        surface = [u for u in pool if board.unit_type(u).is_naval and not board.unit_type(u).is_submarine]
        pool = surface or pool
    return sorted(pool, key=lambda u: u.id)


def may_hit_submarines(board: Board, unit: Unit) -> bool:
    """NC6: in a naval battle only escorts (destroyers, cruisers) hit submarines, and air units
    whose technology gives them an attack on submarines (TE4)."""
    ut = board.unit_type(unit)
    if ut.unit_class == "escort":
        return True
    if not ut.is_air:
        return False
    value, _ = board.ruleset.modified("asw_attack", unit.type, ut.asw_attack, board.acquired(unit.nation))
    return value > 0


def naval_targets(board: Board, firer: Unit, enemies: list[Unit]) -> list[Unit]:
    """HA1-HA3 with NC6: a selective shot in a naval battle; an air unit that may hit submarines
    picks one only when nothing else is left (they are its last tier)."""
    legal = selective_targets(board, firer, enemies)
    if board.unit_type(firer).is_submarine:
        return legal
    surface = [u for u in legal if not board.unit_type(u).is_submarine]
    if surface or not may_hit_submarines(board, firer):
        return surface
    return legal


def why_not_target(board: Board, firer: Unit, target: Unit, enemies: list[Unit], rule: str) -> RuleViolation:
    """The rule that forbids this target, for an error that names it and the legal choices."""
    legal = ", ".join(u.id for u in naval_targets(board, firer, enemies)) or "none"
    ids = {u.id for u in enemies}
    if target.id not in ids:
        return RuleViolation(
            rule, f"{firer.id} cannot target {target.id}: it is not an enemy unit fighting here (legal: {legal})"
        )
    ft, tt = board.unit_type(firer), board.unit_type(target)
    if ft.is_submarine and tt.is_air:
        return RuleViolation(
            "HA2", f"{firer.id} is a submarine: its hits can never fall on {target.id}, an aircraft (legal: {legal})"
        )
    if not ft.is_submarine and tt.is_submarine:
        return RuleViolation(
            "NC6",
            f"{firer.id} cannot hit {target.id}: in a naval battle submarines are hit only by destroyers and cruisers "
            f"(and air units with Advanced ASW), and only when nothing else is left (legal: {legal})",
        )
    if ft.is_submarine and tt.is_submarine:
        return RuleViolation(
            "HA1",
            f"{firer.id} must target a non-submarine naval unit while there is one, not {target.id} (legal: {legal})",
        )
    return RuleViolation(rule, f"{firer.id} cannot target {target.id} (legal: {legal})")


def check_targets(
    board: Board,
    rule: str,
    owner: str,
    legal: dict[str, list[str]],
    chosen: dict[str, str],
    why: Callable[[str, str], RuleViolation] | None = None,
) -> dict[str, str]:
    """Every firer of `owner` named once, each with one of its legal targets.

    `legal` maps each firer to the targets the rules allow it (HA1-HA3 for submarines and
    aircraft, AS3/SM4 for ASW units: a detected submarine); `why(firer, target)` names the
    rule an illegal target breaks."""
    for firer, target in chosen.items():
        if firer not in legal:
            unit = board.units.get(firer)
            if unit is None:
                raise board.unknown_unit(firer)
            firing = ", ".join(sorted(legal)) or "none"
            raise RuleViolation(rule, f"{firer} does not choose a target here ({owner} chooses for: {firing})")
        if target not in legal[firer]:
            if target not in board.units:
                raise board.unknown_unit(target)
            if why is not None:
                raise why(firer, target)
            raise RuleViolation(rule, f"{firer} cannot target {target} (legal: {', '.join(legal[firer]) or 'none'})")
    missing = [f for f in sorted(legal) if f not in chosen]
    if missing:
        raise RuleViolation(rule, f"{owner} must name a target for every unit firing: missing {', '.join(missing)}")
    return {f: chosen[f] for f in sorted(chosen)}


def default_targets(board: Board, legal: dict[str, list[str]]) -> dict[str, str]:
    """The default targets: spread over the legal targets, most valuable first, so that no
    target draws a second shot while another legal one has none."""
    counts: Counter[str] = Counter()
    chosen: dict[str, str] = {}
    for firer in sorted(legal):
        options = legal[firer]
        if not options:
            continue
        pick = min(options, key=lambda t: (counts[t], -_cost(board, board.units[t]), t))
        counts[pick] += 1
        chosen[firer] = pick
    return chosen


def can_screen(board: Board, unit: Unit) -> bool:
    """HA1, HA3: a unit type marked `screens`, or of a screening class, may take a hit instead."""
    return unit.type in board.ruleset.screeners


def screen_options(board: Board, target: Unit, side: list[Unit]) -> list[Unit]:
    """HA1, HA3: the escorts of the target's side in the battle that may take its hit."""
    return sorted((u for u in side if u.id != target.id and can_screen(board, u)), key=lambda u: u.id)


def check_screens(
    board: Board, rule: str, owner: str, shots: dict[str, str], side: list[Unit], chosen: dict[str, str]
) -> dict[str, str]:
    """The owner's screens: firer -> the escort that takes that firer's hit instead of its target.

    `shots` maps each selective firer to its target on `owner`'s side."""
    by_id = {u.id: u for u in side}
    screening = [e for f, e in chosen.items() if f in shots and e != shots[f]]
    twice = sorted({e for e in screening if screening.count(e) > 1})
    if twice:
        raise RuleViolation(rule, f"{twice[0]} may screen at most one shot per volley (HA1)")
    for firer, escort in chosen.items():
        if firer not in shots:
            aimed = ", ".join(f"{f}->{t}" for f, t in sorted(shots.items())) or "none"
            raise RuleViolation(rule, f"{firer} fires no selective shot at {owner}'s units (shots: {aimed})")
        target = by_id[shots[firer]]
        options = [u.id for u in screen_options(board, target, side)]
        if escort == target.id:
            continue
        if escort not in options:
            if escort not in board.units:
                raise board.unknown_unit(escort)
            raise RuleViolation(
                rule,
                f"{escort} cannot screen {target.id} against {firer} (screening escorts of {owner} in this battle: "
                f"{', '.join(options) or 'none'})",
            )
    return {f: e for f, e in sorted(chosen.items()) if e != shots[f]}


def default_screens(board: Board, shots: dict[str, str], side: list[Unit]) -> dict[str, str]:
    """HA7 for screening: expose the unit whose hit costs least. A hit that only damages a
    capital ship costs nothing; otherwise the cheaper unit is lost; ties keep the target."""
    by_id = {u.id: u for u in side}
    exposed: Counter[str] = Counter()
    chosen: dict[str, str] = {}

    def loss(uid: str) -> int:
        left = hits_to_sink(board, by_id[uid]) - exposed[uid]
        return 0 if left > 1 else _cost(board, by_id[uid])

    for firer in sorted(shots):
        target = by_id[shots[firer]]
        # HA1: an escort screens at most one shot per volley.
        used = set(chosen.values())
        options = [target.id] + [u.id for u in screen_options(board, target, side) if u.id not in used]
        pick = min(options, key=lambda uid: (loss(uid), uid != target.id, uid))
        exposed[pick] += 1
        if pick != target.id:
            chosen[firer] = pick
    return chosen


# ----- non-selective hits in naval battles (HA4-HA7) -----


def priority_rule(firing_class: str) -> str:
    """The rule behind a firing class's order of casualties."""
    return {"capital": "HA5", "escort": "HA6"}.get(firing_class, "HA4")


def hit_tiers(board: Board, firing_class: str, units: list[Unit], nc6: bool = True) -> list[list[Unit]]:
    """HA4-HA6: the units a non-selective hit from `firing_class` may fall on, tier by tier.

    Naval classes follow the ruleset's priority for the firing class; naval classes it does
    not list (submarines) come after them; aircraft come last (HA4). Submarines take hits only
    from escorts (NC6)."""
    rs = board.ruleset
    naval = sorted(
        (
            u
            for u in units
            if board.unit_type(u).is_naval
            and (not nc6 or firing_class == "escort" or not board.unit_type(u).is_submarine)
        ),
        key=lambda u: u.id,
    )
    air = sorted((u for u in units if board.unit_type(u).is_air), key=lambda u: u.id)
    tiers: list[list[Unit]] = []
    listed: set[str] = set()
    for classes in rs.hit_priority.get(firing_class, ()):
        tiers.append([u for u in naval if board.unit_type(u).unit_class in classes])
        listed.update(classes)
    tiers.append([u for u in naval if board.unit_type(u).unit_class not in listed])
    if rs.naval_hits_naval_before_air:
        tiers.append(air)
    else:
        tiers[-1] = tiers[-1] + air
    return [t for t in tiers if t]


def _class_words(firing_class: str) -> str:
    return {"capital": "battleships and carriers", "escort": "cruisers and destroyers"}.get(
        firing_class, f"{firing_class} units"
    )


def allocate(
    board: Board,
    owner: str,
    groups: list[tuple[str, int]],
    units: list[Unit],
    taken: Counter[str],
    chosen: list[str] | None,
    nc6: bool = True,
    tiers: dict[str, list[list[Unit]]] | None = None,
) -> list[str]:
    """HA4-HA7: place non-selective hits, group by group in the order given (one group per
    firing class), each hit on the first tier that still has a unit afloat.

    `taken` counts hits already landing on these units this round (selective hits), which
    the units can no longer absorb. With `chosen` None the cheapest legal units are taken
    (HA7 default); otherwise the owner's list is checked and returned, naming the rule and
    the legal units for the first hit it cannot account for. Hits beyond what the units can
    take are lost. `tiers` holds `hit_tiers` of these units per firing class when the caller
    has them already."""
    by_id = {u.id: u for u in units}
    remaining = {u.id: max(0, hits_to_sink(board, u) - taken[u.id]) for u in units}
    total = sum(n for _, n in groups)
    needed = min(total, sum(remaining.values()))
    pool: Counter[str] = Counter()
    if chosen is not None:
        for uid in chosen:
            if uid not in by_id:
                unit = board.units.get(uid)
                if unit is None:
                    raise board.unknown_unit(uid)
                if unit.nation != owner and board.enemies(owner, unit.nation):
                    raise RuleViolation("HA7", f"{uid} belongs to {unit.nation}; {owner} chooses its own side's losses")
                legal = ", ".join(sorted(uid for uid, left in remaining.items() if left)) or "none"
                raise RuleViolation("HA7", f"{uid} is not in this battle or is already lost (legal: {legal})")
        if len(chosen) != needed:
            legal = ", ".join(sorted(uid for uid, left in remaining.items() if left))
            raise RuleViolation(
                "HA7", f"{owner} must assign {plural(needed, 'hit')}, got {len(chosen)} (legal: {legal})"
            )
        pool = Counter(chosen)
        for uid, n in pool.items():
            if n > remaining[uid]:
                raise RuleViolation("HA7", f"{uid} can take {plural(remaining[uid], 'more hit')}, assigned {n}")
    placed: list[str] = []
    for firing_class, n in groups:
        order = tiers[firing_class] if tiers is not None else hit_tiers(board, firing_class, units, nc6)
        for _ in range(n):
            tier = next((t for t in order if any(remaining[u.id] for u in t)), None)
            if tier is None:
                break  # every unit is already sunk: the hit is lost
            options = [u.id for u in tier if remaining[u.id]]
            if chosen is None:
                afloat = [uid for uid in options if remaining[uid] > 1]
                if afloat:
                    # A hit that only damages a capital ship costs nothing.
                    pick = min(afloat, key=lambda uid: (-_cost(board, by_id[uid]), uid))
                else:
                    pick = min(options, key=lambda uid: (_cost(board, by_id[uid]), uid))
            else:
                found = [uid for uid in options if pool[uid]]
                if not found:
                    rest = ", ".join(sorted(pool.elements()))
                    raise RuleViolation(
                        priority_rule(firing_class),
                        f"a hit from {_class_words(firing_class)} must fall on {', '.join(options)} first; "
                        f"{rest} cannot take it (legal: {', '.join(options)})",
                    )
                pick = found[0]
                pool[pick] -= 1
            remaining[pick] -= 1
            placed.append(pick)
    return placed if chosen is None else list(chosen)


def allocation_is_forced(
    board: Board,
    groups: list[tuple[str, int]],
    units: list[Unit],
    taken: Counter[str],
    nc6: bool = True,
    default: list[str] | None = None,
    tiers: dict[str, list[list[Unit]]] | None = None,
) -> bool:
    """True when the rules leave the owner no choice: every tier a hit falls on takes either
    all it can or has a single unit afloat (HA7 then asks nobody). `default` is the HA7
    default for these hits and `tiers` their `hit_tiers` per firing class, when the caller
    has them already (else they are worked out here)."""
    if default is None:
        default = allocate(board, "", groups, units, taken, None, nc6, tiers)
    placed = Counter(default)
    remaining = {u.id: max(0, hits_to_sink(board, u) - taken[u.id]) for u in units}
    seen: set[tuple[str, ...]] = set()
    for firing_class, _ in groups:
        for tier in tiers[firing_class] if tiers is not None else hit_tiers(board, firing_class, units, nc6):
            key = tuple(u.id for u in tier)
            if key in seen:
                continue
            seen.add(key)
            hits = sum(placed[u.id] for u in tier)
            afloat = [u.id for u in tier if remaining[u.id]]
            if hits and len(afloat) > 1 and hits < sum(remaining[uid] for uid in afloat):
                return False
    return True
