"""Luck within a battle, nation by nation (`tracker luck`): each unit lost is its owner's, each
sinking the nation's whose hit sank it; what the battle's odds expected of a side, shared among
its nations. A side may be allied nations: the defenders of a naval battle (NC1), the NTR
owner and allies searching a convoy (CV3), the enemy submarines under ASW combat (AS1), the
enemies searching for an interception (SM2)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from domain.procedures.base import Outcome
    from domain.procedures.odds import Number, Odds

# The rolls whose successes are hits that may sink a unit: the shots of every procedure, and
# merchant defence (CV2), whose total sinks a submarine.
HITTING = frozenset({"CV2", "CV4", "SM4", "AS4", "NC2", "NC3"})
# The steps within a volley: its casualties are still being taken (`BattleAdvanced`).
CASUALTY_STEPS = frozenset({"casualties", "merchant_casualty"})
DAMAGED = " (damaged)"

Credit = dict[str, Fraction]


def _total_chance(dice: int, faces: int, target: int) -> Fraction:
    """The chance that `dice` dice of `faces` total `target` or more (CV2)."""
    totals: dict[int, int] = {0: 1}
    for _ in range(dice):
        nxt: dict[int, int] = {}
        for total, ways in totals.items():
            for face in range(1, faces + 1):
                nxt[total + face] = nxt.get(total + face, 0) + ways
        totals = nxt
    return Fraction(sum(w for total, w in totals.items() if total >= target), faces**dice)


def successes(roll: Mapping[str, Any]) -> int:
    """The hits a recorded roll scored."""
    if roll.get("success_when", "at_most") == "at_most" and roll.get("target") is not None:
        return sum(1 for v in roll["values"] if v <= roll["target"])
    return 1 if roll.get("outcome") == "success" else 0


def expected_successes(roll: Mapping[str, Any]) -> Fraction:
    """The hits a recorded roll should have scored, at its odds when rolled (D2, CV2)."""
    from domain.dice import clamp_target

    target, faces, dice = roll.get("target"), int(roll["faces"]), len(roll["values"])
    if target is None:
        return Fraction(0)
    if roll.get("success_when", "at_most") == "at_most":
        return Fraction(clamp_target(int(target), faces), faces) * dice
    if roll.get("success_when") == "total":
        return _total_chance(dice, faces, int(target))
    return Fraction(0)


def _shares(weights: Mapping[str, Number]) -> Credit:
    """`weights` as fractions of their sum (empty when they add to nothing)."""
    total = sum(weights.values(), Fraction(0))
    if not total:
        return {}
    return {n: Fraction(w) / Fraction(total) for n, w in weights.items() if w}


class _Volley:
    """One volley of a battle as the log records it: the hits each unit's dice scored, the
    selective hits (`TargetHit`: whose shot fell on which unit) and the hits each unit took."""

    def __init__(self) -> None:
        self.scored: dict[str, tuple[str, int]] = {}  # firer: (its nation, hits)
        self.selective: list[tuple[str, str]] = []  # (firer, unit hit)
        self.taken: dict[str, int] = {}
        self.casualties = False

    def pool(self, side: Callable[[str], str], enemy_of: str) -> Credit:
        """The non-selective hits of the side against `enemy_of`, as each nation's share."""
        weights: dict[str, int] = {}
        aimed = {f for f, _ in self.selective}
        for firer, (nation, hits) in self.scored.items():
            if side(nation) != side(enemy_of):
                left = hits - sum(1 for f in aimed if f == firer)
                weights[nation] = weights.get(nation, 0) + max(0, left)
        return _shares(weights)

    def credit(
        self, unit: str, owner: str, side: Callable[[str], str], lead: str, nation_of: Mapping[str, str]
    ) -> Credit:
        """Who sank `unit` (of `owner`), sunk by the hits it took in this volley (taken together,
        NC3: each hit's nation a like share). A selective hit names its firer; a non-selective
        hit is one of the hits the firing side pooled for the owner to place (HA4-HA7), and the
        log does not say whose dice placed it: it is shared among the nations in proportion to
        the non-selective hits each scored in the volley. What the log cannot place at all
        (no hit recorded) is the enemy side's lead nation's."""
        out: Credit = {}
        aimed = [f for f, u in self.selective if u == unit]
        for firer in aimed:
            nation = nation_of.get(firer, lead)
            out[nation] = out.get(nation, Fraction(0)) + 1
        pooled = max(0, self.taken.get(unit, 0) - len(aimed))
        if pooled or not aimed:
            shares = self.pool(side, owner) or {lead: Fraction(1)}
            for nation, share in shares.items():
                out[nation] = out.get(nation, Fraction(0)) + share * max(pooled, 1)
        total = sum(out.values(), Fraction(0))
        return {n: v / total for n, v in out.items()}


def sinkings(
    records: Iterable[Mapping[str, Any]],
    nation_of: Mapping[str, str],
    side: Callable[[str], str],
    lead: Callable[[str], str],
) -> dict[int, Credit]:
    """For each unit sunk in a battle (its `UnitHit` event's seq), the nations whose hits sank
    it, each with its share (see `_Volley.credit`). `records`: the battle's log records with
    their data, oldest first; `nation_of` the units' nations; `side` gives a nation's side,
    `lead` the lead nation of the side facing a nation's units."""
    owners = dict(nation_of)
    volley = _Volley()
    out: dict[int, Credit] = {}
    for r in records:
        if r.get("undone_by"):
            continue
        kind, d = r["kind"], r.get("data") or {}
        if kind == "BattleAdvanced" and d.get("step") not in CASUALTY_STEPS:
            volley = _Volley()
        elif kind == "DiceRolled" and d.get("unit") and d.get("rule") in HITTING:
            if volley.casualties:
                volley = _Volley()  # a new volley, though no step was recorded between
            owners[d["unit"]] = d["roller"]
            nation, hits = volley.scored.get(d["unit"], (d["roller"], 0))
            volley.scored[d["unit"]] = (nation, hits + successes(d))
        elif kind == "DiceRolled" and d.get("rule") == "CV2":
            # Merchant defence is the NTR owner's roll, no unit's.
            volley.scored[f"CV2:{r['seq']}"] = (d["roller"], successes(d))
        elif kind == "TargetHit":
            volley.selective.append((d["firer"], d["unit"]))
        elif kind == "UnitHit":
            volley.casualties = True
            unit = d["unit"]
            volley.taken[unit] = volley.taken.get(unit, 0) + 1
            if d.get("sunk"):
                owner = owners.get(unit)
                if owner is not None:
                    out[int(r["seq"])] = volley.credit(unit, owner, side, lead(owner), owners)
    return out


def losses_by_nation(odds: Odds, pieces: Iterable[Any], side_of: Callable[[str], str]) -> dict[str, Number]:
    """Each nation's expected units lost. The odds count a side's units left by type (F3:
    damaged capital ships apart), not by nation: a type only one nation of the side has is
    that nation's; one that several have is shared in proportion to how many each has at the
    start (which of them is lost is the owner's choice, HA7, or the firer's, HA1)."""
    start: dict[tuple[str, str], int] = {}
    owners: dict[tuple[str, str], dict[str, int]] = {}
    for p in pieces:
        key = (side_of(p.nation), p.type)
        start[key] = start.get(key, 0) + 1
        owners.setdefault(key, {})
        owners[key][p.nation] = owners[key].get(p.nation, 0) + 1
    out: dict[str, Number] = {n: Fraction(0) for by in owners.values() for n in by}

    def left(pairs: tuple[tuple[str, int], ...]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for name, n in pairs:
            base = name.removesuffix(DAMAGED)
            counts[base] = counts.get(base, 0) + n
        return counts

    for o, (mass, _, _) in odds.outcomes.items():
        for side, here, lost in _sides(o):
            kept = left(here)
            by_type = {t: max(0, n - kept.get(t, 0)) for (s, t), n in start.items() if s == side}
            weights: dict[str, Fraction] = {}
            for t, n in by_type.items():
                for nation, count in owners[(side, t)].items():
                    weights[nation] = weights.get(nation, Fraction(0)) + Fraction(n * count, start[(side, t)])
            # The side's count of units lost is the odds' own: the types only share it out.
            shares = _shares(weights) or _shares(
                {nation: count for (s, _), by in owners.items() if s == side for nation, count in by.items()}
            )
            for nation, share in shares.items():
                out[nation] += mass * lost * share
    return out


def _sides(o: Outcome) -> tuple[tuple[str, tuple[tuple[str, int], ...], int], ...]:
    return (
        ("attacker", o.attacker_left, o.attacker_units_lost),
        ("defender", o.defender_left, o.defender_units_lost),
    )


def battle_by_nation(
    records: Iterable[Mapping[str, Any]],
    b: Mapping[str, Any],
    first: int,
    pieces: Iterable[Any],
    odds: Odds,
    side_expected: Mapping[str, Number],
    side_of: Callable[[str], str],
) -> dict[str, dict[str, tuple[Number, Fraction]]]:
    """Each nation's units sunk and lost in one battle: {nation: {metric: (expected, actual)}}.

    Actual: each unit lost is its owner's, each sinking shared among the nations whose hits sank
    it (`sinkings`). Expected: units lost as `losses_by_nation` gives them; the units a side
    should have sunk (what the odds expect the other side to lose) shared among its nations
    in proportion to the hits their recorded shots should have scored in the battle, at their
    odds when rolled (CV2's merchant defence included): the odds of the whole battle do not
    say whose hits sink, and a nation's dice bring sinkings as they bring hits. A side that
    rolled no such die shares it by its units at the start, or leaves it to its lead nation."""
    pieces = list(pieces)
    expected_lost = losses_by_nation(odds, pieces, side_of)
    lead = {"attacker": b["attacker"], "defender": b["defender"]}
    nation_of = {p.id: p.nation for p in pieces} | {c["unit"]: c["nation"] for c in b["casualties"]}
    credits = sinkings(
        records, nation_of, side_of, lambda n: lead["defender" if side_of(n) == "attacker" else "attacker"]
    )
    zero = Fraction(0)
    out: dict[str, dict[str, list[Any]]] = {}

    def add(nation: str, metric: str, expected: Number, actual: Fraction) -> None:
        cell = out.setdefault(nation, {"units_sunk": [zero, zero], "units_lost": [zero, zero]})
        cell[metric][0] += expected
        cell[metric][1] += actual

    for nation in dict.fromkeys((*lead.values(), *expected_lost)):
        add(nation, "units_lost", expected_lost.get(nation, zero), zero)
    for cas in b["casualties"]:
        if cas.get("undone_by") or cas["result"] not in ("sunk", "shot down") or cas["seq"] < first:
            continue
        add(cas["nation"], "units_lost", zero, Fraction(1))
        enemy = lead["defender" if side_of(cas["nation"]) == "attacker" else "attacker"]
        for nation, share in (credits.get(int(cas["seq"])) or {enemy: Fraction(1)}).items():
            add(nation, "units_sunk", zero, share)
    weights: dict[str, dict[str, Fraction]] = {"attacker": {}, "defender": {}}
    for roll in b["rolls"]:
        if roll.get("undone_by") or roll["rule"] not in HITTING or roll["seq"] < first:
            continue
        by = weights[side_of(roll["roller"])]
        by[roll["roller"]] = by.get(roll["roller"], zero) + expected_successes(roll)
    for side, theirs in (("attacker", "defender"), ("defender", "attacker")):
        present: dict[str, int] = {}
        for p in pieces:
            if side_of(p.nation) == side:
                present[p.nation] = present.get(p.nation, 0) + 1
        shares = _shares(weights[side]) or _shares(present) or {lead[side]: Fraction(1)}
        for nation, share in shares.items():
            add(nation, "units_sunk", side_expected[f"{theirs}_units_lost"] * share, zero)
    return {n: {m: (v[0], v[1]) for m, v in cells.items()} for n, cells in out.items()}
