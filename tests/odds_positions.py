"""Positions the odds tests and the benchmark share, built as pure procedure states."""

from __future__ import annotations

from collections.abc import Mapping

from domain.procedures import asw, convoy, interception, naval
from domain.procedures.base import Context, Piece, hypothetical_scenario
from domain.ruleset import load_ruleset

RULESET, _ = load_ruleset("twtea-3e")
SIDES = {"Germany": "Central Powers", "Britain": "Entente"}
CODES = {"Germany": "DE", "Britain": "GB"}
ABBR = {u: t.abbr for u, t in RULESET.units.items()}
TOP = {"advanced_submarine": RULESET.research_levels, "advanced_asw": RULESET.research_levels}


def context(tech: Mapping[str, Mapping[str, int]] | None = None) -> Context:
    return Context(RULESET, hypothetical_scenario(SIDES), dict(tech or {}))


def fleet(nation: str, counts: Mapping[str, int]) -> tuple[Piece, ...]:
    """Units named as the tracker names them (DE-SS1, GB-DD2)."""
    return tuple(Piece(f"{CODES[nation]}-{ABBR[t]}{i + 1}", t, nation) for t, n in counts.items() for i in range(n))


def naval_battle(ctx: Context, attackers: Mapping[str, int], defenders: Mapping[str, int]) -> naval.NavalBattle:
    state, _ = naval.start(ctx, "Germany", "Britain", fleet("Germany", attackers), fleet("Britain", defenders))
    return state


def convoy_battle(ctx: Context, subs: int, searchers: Mapping[str, int], ntr: int) -> convoy.ConvoyBattle:
    zone_subs = fleet("Germany", {"submarine": subs})
    return convoy.start(
        ctx, "Germany", "Britain", tuple(p.id for p in zone_subs), zone_subs, fleet("Britain", searchers), ntr
    )


def asw_combat(ctx: Context, hunters: Mapping[str, int], subs: int) -> asw.AswCombat:
    return asw.start(ctx, "Britain", "Germany", fleet("Germany", {"submarine": subs}), fleet("Britain", hunters))


def interception_of(
    ctx: Context, subs: int, searchers: Mapping[str, int], goes_on: bool = True
) -> interception.Interception:
    return interception.start(
        ctx, "Germany", "Britain", fleet("Germany", {"submarine": subs}), fleet("Britain", searchers), True, goes_on
    )
