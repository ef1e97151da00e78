"""Selective fire (HA1-HA3) as pure functions: the targets a submarine or an air unit may
pick, the escorts that may take a hit in their target's place, the defaults and the checking
of an owner's choices."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from domain.board import Board, Unit
from domain.errors import RuleViolation
from domain.rules.hits import hits_to_sink, unit_cost
from domain.text import possessive


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


def why_not_target(
    board: Board, firer: Unit, target: Unit, enemies: list[Unit], rule: str, allowed: list[str] | None = None
) -> RuleViolation:
    """The rule that forbids this target, for an error that names it and the legal choices:
    `allowed` where the procedure knows them (a convoy round's aircraft pick a submarine, CV4,
    HA3), else a naval battle's (NC6)."""
    chosen_from = allowed if allowed is not None else [u.id for u in naval_targets(board, firer, enemies)]
    legal = ", ".join(chosen_from) or "none"
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
        pick = min(options, key=lambda t: (counts[t], -unit_cost(board, board.units[t]), t))
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
        cited = "" if rule == "HA1" else " (HA1)"
        raise RuleViolation(rule, f"{twice[0]} may screen at most one shot per volley{cited}")
    for firer, escort in chosen.items():
        if firer not in shots:
            aimed = ", ".join(f"{f}->{t}" for f, t in sorted(shots.items())) or "none"
            raise RuleViolation(rule, f"{firer} fires no selective shot at {possessive(owner)} units (shots: {aimed})")
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
        return 0 if left > 1 else unit_cost(board, by_id[uid])

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
