"""Escorts that advise (`tracker odds escorts`): for a zone holding the nation's NTR, the
cheapest ships and aircraft that search (CV3: escorts, battleships, aircraft; by the ruleset's
costs) that keep the expected NTR loss to the enemy submarines able to be there at or below a
bound, at each of its next convoy windows.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from domain.board import Board, Unit
from domain.errors import InputError, RuleViolation
from domain.procedures import convoy
from domain.procedures.base import Context, Piece, hypothetical_scenario
from domain.procedures.odds import Odds, State, TooManyPositions, exact_odds
from domain.procedures.odds import Shared as OneContext
from domain.rules.convoy import air_can_join, eligible_searchers
from domain.ruleset import UnitType
from domain.text import plural, possessive
from tracker.analysis import advise, reach
from tracker.analysis import odds as view


class Searcher(TypedDict):
    """A ship or aircraft that can search in a window, and where it is now."""

    unit: str
    type: str
    at: str


class WindowAnswer(TypedDict):
    """One convoy window of `tracker odds escorts --json`: the enemy submarines by nation, the
    searchers that can be there, and the cheapest of them that keep the loss under the bound
    (or, `found` false, all of them), with the `tracker odds convoy` lines behind it."""

    window: str
    threats: dict[str, int]
    reachable: list[Searcher]
    found: bool
    counts: dict[str, int]
    cost: int
    expected_ntr_lost: float
    units: list[str]
    commands: list[str]
    # The enemies whose attack has no command: more than `tracker odds` takes a side.
    too_large_by_hand: list[str]
    weighed: int
    attacks_summed: bool  # several enemy nations: their attacks weighed alone and added up (`loss`)


class EscortsAnswer(TypedDict):
    """`tracker odds escorts --json`."""

    zone: str
    nation: str
    ntr: int
    bound: float
    windows: list[WindowAnswer]


@dataclass(frozen=True)
class Window:
    """One convoy window of the NTR owner (its collect_resources phase, CV1): the searchers it
    may choose from and the enemy submarines, by nation, that can be in the zone by then."""

    label: str
    pool: list[reach.Reach]
    threats: dict[str, int]


@dataclass(frozen=True)
class Convoys:
    board: Board
    zone: str
    nation: str
    ntr: int
    allies: dict[str, dict[str, int]]  # CV3: allied ships in the zone and aircraft in range, searching too
    windows: list[Window]


def searches(board: Board, unit: Unit) -> bool:
    """CV3: a unit with a convoy search value."""
    return board.unit_type(unit).search.get("convoy", 0) > 0


def escort_or_aircraft(board: Board, unit: Unit) -> bool:
    """The units sent to guard convoys: the ships and aircraft that search (CV3)."""
    return guards(board.unit_type(unit))


def guards(ut: UnitType) -> bool:
    """`escort_or_aircraft` of a unit type: CV3 lets every ship and aircraft with a convoy search
    value search, battleships (2) as well as escorts, so none of them is left out of the advice."""
    return ut.search.get("convoy", 0) > 0


def searchers(board: Board, nation: str, zone: str, next_turn: bool) -> list[reach.Reach]:
    """CV3, F4, F7: the nation's escorts that can be in the zone at the window, and its aircraft
    within the range they have left (a full range on the next turn)."""
    out = []
    ships = reach.reach(board, nation, zone, next_turn=next_turn, phases=reach.TO_HOLD)
    for r in ships:
        if board.unit_type(r.unit).is_naval and escort_or_aircraft(board, r.unit):
            out.append(r)
    for unit in sorted(board.units.values(), key=lambda u: u.id):
        if unit.nation != nation or not board.unit_type(unit).is_air or not escort_or_aircraft(board, unit):
            continue
        fresh = Unit(unit.id, unit.type, unit.nation, unit.at, unit.damage, 0) if next_turn else unit
        if air_can_join(board, fresh, zone, frozenset()):
            out.append(reach.Reach(unit, board.air_distance(unit, zone) or 0))
    return out


def submarines(board: Board, nation: str, zone: str, next_turn: bool) -> dict[str, int]:
    """SM1: each enemy nation's submarines in the zone now, or (`next_turn`) within a full move."""
    found: dict[str, int] = {}
    for enemy in board.scenario.nations:
        if not board.enemies(nation, enemy):
            continue
        subs = [r.unit for r in reach.reach(board, enemy, zone, True)] if next_turn else board.units_at(zone)
        n = sum(1 for u in subs if u.nation == enemy and board.unit_type(u).is_submarine)
        if n:
            found[enemy] = n
    return found


def convoy_question(board: Board, zone: str) -> Convoys:
    """CV1: the nation whose turn it is guards its NTR in `zone`: at the end of this turn, and
    at the end of its next (enemy submarines within a full move by then)."""
    reach.require_sea_zone(board, zone)
    nation = board.nation
    ntr = board.ntr.get(nation, {}).get(zone, 0)
    if ntr <= 0:
        # The zones it could have meant: the nation's NTR at sea, where it is.
        held = sorted(
            (z, n) for z, n in board.ntr.get(nation, {}).items() if n > 0 and board.scenario.game_map.is_sea(z)
        )
        where = ", ".join(f"{z} {n}" for z, n in held) if held else "none at sea"
        raise RuleViolation("CV1", f"{zone} holds no NTR of {nation} ({possessive(nation)} NTR: {where})")
    # CV3, F7: the allies' ships in the zone search too, and so do their aircraft that can reach
    # it from where they are (on another nation's turn an air unit has its whole range): the
    # referee's own list of searchers (`eligible_searchers`), the nation's own units apart.
    allied = [u for u in eligible_searchers(board, nation, zone) if u.nation != nation]
    allies = reach.by_nation(allied)
    # F8: at the next turn's window, a nation entering the war next round is an enemy.
    windows = [
        Window(
            f"round {r}, {possessive(nation)} collect resources",
            searchers(then, nation, zone, later),
            submarines(then, nation, zone, later),
        )
        for r, later, then in ((board.round, False, board), (board.round + 1, True, reach.next_round(board)))
    ]
    return Convoys(board, zone, nation, ntr, allies, windows)


def convoy_position(
    board: Board, attacker: str, subs: int, defenders: Mapping[str, Mapping[str, int]], ntr: int
) -> tuple[State, Context]:
    """CV1-CV7: one convoy attack by `subs` submarines on `ntr` NTR, the defenders' searchers
    looking for them (none: the submarines go straight to the convoy table)."""
    sides = {attacker: "attacking side"} | {n: "defending side" for n in defenders}
    ctx = Context(board.ruleset, hypothetical_scenario(sides), {n: dict(board.tech.get(n, {})) for n in sides})
    a = tuple(Piece(f"A-SS{i + 1}", "submarine", attacker) for i in range(subs))
    d = tuple(
        Piece(f"D{j}-{board.ruleset.units[t].abbr}{i + 1}", t, n)
        for j, (n, counts) in enumerate(sorted(defenders.items()))
        for t, k in sorted(counts.items())
        for i in range(k)
    )
    owner = next(iter(sorted(defenders)), attacker) if defenders else attacker
    return convoy.start(ctx, attacker, owner, tuple(p.id for p in a), a, d, ntr), ctx


def convoy_odds(
    board: Board,
    attacker: str,
    subs: int,
    defenders: Mapping[str, Mapping[str, int]],
    ntr: int,
    limit: int,
    shared: OneContext | None = None,
) -> Odds:
    """The odds of `convoy_position` (with `shared`, among the others of a search: the same
    nations on each side)."""
    state, ctx = convoy_position(board, attacker, subs, defenders, ntr)
    try:
        if shared is not None:
            return shared.odds(state, 0, limit)
        return exact_odds(state, ctx, None, 0, exact=False, limit=limit)
    except TooManyPositions as e:
        # The refusal names the convoy attack, of the several a search weighs, that was too large.
        searchers = " + ".join(reach.force_text(n, c) for n, c in sorted(defenders.items()))
        attack = f"{attacker}:submarine={subs} against {searchers or 'no searcher'} on {ntr} NTR"
        raise TooManyPositions(e.limit, f"{attack}; weigh fewer types (--type) or raise --max-positions") from None


class Shared:
    """The convoy attacks of one search enumerated together, one engine per enemy nation
    (`domain.procedures.odds.Shared`): `most`, the largest searchers weighed, names every
    unit; an attack on other defending nations (no searcher of the nation) goes on its own."""

    def __init__(self, q: Convoys, w: Window, most: Mapping[str, int]) -> None:
        self.defenders = _defenders(q, most)
        self.by_enemy = {
            enemy: OneContext(*convoy_position(q.board, enemy, subs, self.defenders, q.ntr))
            for enemy, subs in sorted(w.threats.items())
        }

    def of(self, enemy: str, defenders: Mapping[str, Mapping[str, int]]) -> OneContext | None:
        return self.by_enemy.get(enemy) if set(defenders) == set(self.defenders) else None


def _defenders(q: Convoys, counts: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """CV3: the allies' searchers (ships in the zone, aircraft in range) and the nation's `counts`."""
    defenders = {n: dict(c) for n, c in q.allies.items()}
    if any(counts.values()):
        defenders[q.nation] = {t: n for t, n in counts.items() if n}
    return defenders


def loss(
    q: Convoys, w: Window, counts: Mapping[str, int], limit: int, shared: Shared | None = None
) -> tuple[float, int]:
    """The expected NTR lost in a window, and the positions enumerated: each enemy nation's
    attack (CV1: each attacks on its own) weighed alone against the whole NTR and every
    searcher, the losses added up. Not a bound on the truth either way: the referee's attacks
    come one after the other, the NTR destroyed in one not there for the next (CV5: the sum
    can be higher), an aircraft that searched in one not searching in the next (F7) and a
    ship sunk in one gone (the sum can be lower). `shared`: the attacks of the search,
    enumerated together."""
    defenders = _defenders(q, counts)
    total, positions = 0.0, 0
    for enemy, subs in sorted(w.threats.items()):
        together = shared.of(enemy, defenders) if shared is not None else None
        odds = convoy_odds(q.board, enemy, subs, defenders, q.ntr, limit, together)
        total += float(odds.expected(lambda o: o.ntr_destroyed)[0])
        positions += odds.states
    return total, positions


def by_hand(q: Convoys, w: Window, counts: Mapping[str, int]) -> list[str]:
    """The `tracker odds convoy` lines of a window's attacks (when someone searches)."""
    defenders = _defenders(q, counts)
    if not defenders:
        return []
    lines = []
    for enemy, subs in sorted(w.threats.items()):
        if not fits_by_hand(subs, defenders):
            continue  # a line `tracker odds` refuses is no line to give (`too_large_by_hand`)
        # Quoted for the shell as `advise.command` quotes them ('Deutsches Reich:submarine=2').
        words = [f"tracker odds convoy --attacker {shlex.quote(f'{enemy}:submarine={subs}')}"]
        words += [f"--defender {shlex.quote(reach.force_text(n, c))}" for n, c in sorted(defenders.items())]
        words += [f"--ntr {q.ntr}"]
        words += [f"--tech {shlex.quote(t)}" for t in reach.tech_texts(q.board, {enemy, *defenders})]
        lines.append(" ".join(words))
    return lines


def fits_by_hand(subs: int, defenders: Mapping[str, Mapping[str, int]]) -> bool:
    """Whether `tracker odds convoy` takes an attack of `subs` submarines on `defenders`: at
    most `view.MAX_UNITS_PER_SIDE` units a side (weighed here all the same)."""
    searchers = sum(n for counts in defenders.values() for n in counts.values())
    return max(subs, searchers) <= view.MAX_UNITS_PER_SIDE


def too_large_by_hand(q: Convoys, w: Window, counts: Mapping[str, int]) -> list[str]:
    """The enemies of a window whose attack `by_hand` gives no line for (none without searchers)."""
    defenders = _defenders(q, counts)
    return [e for e, subs in sorted(w.threats.items()) if defenders and not fits_by_hand(subs, defenders)]


def answer(
    q: Convoys, bound: float, limit: int, types: tuple[str, ...] = (), most_choices: int | None = None
) -> EscortsAnswer:
    """The JSON shape of `tracker odds escorts`: per window, the cheapest searchers that keep the
    expected NTR loss at or below `bound`, or the loss with all of them when none does
    (`most_choices`: stop, SearchTooLong, rather than weigh more choices in a window)."""
    # Windows facing the same submarines weigh the same attacks: each is enumerated once.
    known: dict[Any, tuple[float, int]] = {}
    windows = [window_answer(q, w, bound, limit, types, most_choices, known) for w in q.windows]
    return {"zone": q.zone, "nation": q.nation, "ntr": q.ntr, "bound": bound, "windows": windows}


def window_answer(
    q: Convoys,
    w: Window,
    bound: float,
    limit: int,
    types: tuple[str, ...],
    most_choices: int | None = None,
    known: dict[Any, tuple[float, int]] | None = None,
) -> WindowAnswer:
    """One window of `answer`: `advise.cheapest` on a chance of minus the loss (more is better),
    the choices' attacks enumerated together (`Shared`), the answer's once more on their own,
    as `tracker odds convoy` computes them. `known`: the losses of earlier windows, by the
    submarines and the searchers (kept for the windows after)."""
    pool = [r for r in w.pool if not types or r.unit.type in types]
    full = reach.full_force_of(pool)
    advise.require_few_choices(full, q.zone)
    order = list(full)
    memo: dict[advise.Composition, float] = {}
    spent = [0]
    shared = Shared(q, w, full)
    known = {} if known is None else known
    threats = tuple(sorted(w.threats.items()))

    def weighed(counts: Mapping[str, int], together: Shared | None) -> tuple[float, int]:
        key = (threats, tuple(sorted((t, n) for t, n in counts.items() if n)), together is None)
        if key not in known:
            known[key] = loss(q, w, counts, limit, together)
        return known[key]

    allied = [n for counts in q.allies.values() for n in counts.values()]

    def chance(c: advise.Composition) -> float:
        if c not in memo:
            advise.too_many(len(memo), most_choices)
            require_few_searchers(q, w, sum(c) + sum(allied), view.results_of((*c, *allied)))
            lost, positions = weighed(dict(zip(order, c, strict=True)), shared)
            memo[c] = -lost
            spent[0] += positions
            if spent[0] > advise.BUDGET_BATTLES * limit:
                raise advise.SearchTooLong(
                    f"{w.label}: the search for the cheapest escorts weighed {len(memo)} choices "
                    f"({spent[0]:,} positions) without an answer, over its budget of "
                    f"{advise.BUDGET_BATTLES * limit:,} positions: weigh fewer types (--type) or raise --max-positions"
                )
        return memo[c]

    costs = {t: q.board.ruleset.units[t].cost for t in order}
    # CV3-CV5: a searcher more only adds search and attack dice against the submarines (their
    # fire falls on the searchers, never on the NTR), so the expected loss never grows with one:
    # when all of them together miss the bound, no choice of them meets it.
    # Past MAX_SEARCH_RESULTS all of them cannot be weighed (`require_few_searchers`): the
    # search by cost goes on without that proof and stops at the first choice too big.
    everyone = tuple(full.values())
    proof = view.results_of((*everyone, *allied)) > view.MAX_SEARCH_RESULTS or chance(everyone) >= -bound
    found = advise.cheapest(full, costs, chance, -bound) if proof else None
    c = found[0] if found else tuple(full.values())
    counts = {t: n for t, n in zip(order, c, strict=True) if n}
    return {
        "window": w.label,
        "threats": w.threats,
        "reachable": [{"unit": r.unit.id, "type": r.unit.type, "at": r.unit.at} for r in pool],
        "found": found is not None,
        "counts": counts,
        "cost": sum(n * costs[t] for t, n in counts.items()),
        "expected_ntr_lost": weighed(counts, None)[0],
        "units": [r.unit.id for r in reach.pick_from(pool, counts)],
        "commands": by_hand(q, w, counts),
        "too_large_by_hand": too_large_by_hand(q, w, counts),
        "weighed": found[2] if found else len(memo),
        "attacks_summed": len(w.threats) > 1,
    }


def require_few_searchers(q: Convoys, w: Window, searching: int, results: int) -> None:
    """Refuse, in one line, to weigh a choice of `searching` searchers whose search has more
    `results` than exact odds take (CV3, `view.MAX_SEARCH_RESULTS`: how many of each kind
    detect, all worked out at once)."""
    most = view.MAX_SEARCH_RESULTS
    if results > most:
        raise InputError(
            f"{w.label}: the search for the cheapest escorts in {q.zone} came to {searching} searchers without "
            f"an answer, {results:,} results of their search; exact odds take at most {most:,} (CV3, how many of "
            "each kind detect): name fewer with --type"
        )


# What a window's figure is against several enemies (`loss`), said beside it.
SUMMED = (
    "  each enemy's attack weighed alone against all the NTR and searchers, added up: one after the other the "
    "loss can be higher (an aircraft searches once a phase, F7; a ship sunk in one attack misses the next) or "
    "lower (NTR destroyed in one are not there for the next, CV5)"
)


def render(data: EscortsAnswer) -> str:
    """`tracker odds escorts` as text."""
    lines = [
        f"{possessive(data['nation'])} {data['ntr']} NTR in {data['zone']}: searching ships and aircraft to keep "
        f"the expected loss at most {data['bound']:g} (CV1-CV7)"
    ]
    for w in data["windows"]:
        threat = ", ".join(f"{plural(n, 'submarine')} [{nation}]" for nation, n in sorted(w["threats"].items()))
        lines += ["", f"{w['window']}: {threat or 'no enemy submarine can be there'}"]
        what = ", ".join(plural(n, t) for t, n in sorted(w["counts"].items())) or "nothing"
        if not w["found"]:
            n, lost = len(w["reachable"]), w["expected_ntr_lost"]
            lines.append(f"  no choice of the {n} searchers does: all of them leave {lost:.3f}")
        else:
            lines.append(f"  {what} (cost {w['cost']}): expected NTR lost {w['expected_ntr_lost']:.3f}")
        if w["attacks_summed"]:
            lines.append(SUMMED)
        if w["units"]:
            lines.append(f"  units: {', '.join(w['units'])}")
        if w["commands"]:
            # Each line alone, so that a terminal keeps it whole to copy (`fit_prose`).
            lines += ["  by hand:", *(f"    {c}" for c in w["commands"])]
        if w["too_large_by_hand"]:
            whose = " and ".join(possessive(e) for e in w["too_large_by_hand"])
            most = f"more than the {view.MAX_UNITS_PER_SIDE} units a side `tracker odds convoy` takes"
            lines.append(f"  by hand: none for {whose} attack, {most}")
    return "\n".join(lines) + "\n"
