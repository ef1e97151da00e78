"""Exact odds for the command line: positions given by hand, the choice policies, and the
distribution of outcomes as text and JSON (`tracker odds`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from fractions import Fraction
from functools import cache
from typing import NotRequired, TypedDict, cast

from domain.errors import InputError
from domain.procedures import asw, convoy, interception, naval, policies
from domain.procedures.base import Context, Decision, Outcome, Piece, Side, hypothetical_scenario
from domain.procedures.canon import pieces_in
from domain.procedures.interception import InterceptionDecision
from domain.procedures.naval import NavalDecision
from domain.procedures.odds import Number, Odds, Policy, State
from domain.ruleset import Ruleset
from domain.scenario_slips import fold_name
from domain.text import plural

PROCEDURES = ("convoy", "intercept", "asw", "naval")
DAMAGED = " (damaged)"  # a capital ship one hit from sinking (F3, NC5), in counts and outcomes
AFTER_ROUND = ("default", "fight", "submerge")
# Bigger forces make the enumeration slow (the states grow with every unit type present).
MAX_UNITS_PER_SIDE = 20
# CV3: a convoy search's results are how many of each kind of searcher (one nation, type and
# damage: `convoy.alike_runs`) detect, N + 1 for N alike, multiplied across kinds. All are
# worked out before the first position counts against --max-positions: 4,096 (what twelve
# searchers rolling each on its own made) take a second or two; 24 destroyers and cruisers, 169.
MAX_SEARCH_RESULTS = 4096
RESULT_WORDS = {
    "attacker_wins": "attacker wins",
    "defender_wins": "defender wins",
    "mutual_destruction": "mutual destruction",
    "submerged": "ended by submerging",
    "retreated": "ended by retreat",
    "no_hit_possible": "nobody can hit (NC6)",
    "merchant_defence": "merchant defence sank the attack (CV2, CV7)",
    "submarines_sunk": "no taking-part submarine left (CV7)",
    "convoy_table": "convoy table rolled (CV5)",
    "not_detected": "no submarine detected",
    "all_sunk": "every submarine sunk",
    "detected_sunk": "the detected submarines sunk, the rest unseen",
    "fought": "the fight stopped (nobody can hit)",
    "hunters_sunk": "every hunter sunk",
}
# The same result read in the words of another procedure: an ASW combat ends "submarines_sunk"
# when every detected submarine is sunk (AS4, AS5); undetected ones may be left, and CV7 is a
# convoy rule.
PROCEDURE_RESULT_WORDS = {("asw", "submarines_sunk"): "the detected submarines sunk (AS4)"}


def result_words(procedure: str, result: str) -> str:
    """The words for an outcome's result in `procedure`."""
    return PROCEDURE_RESULT_WORDS.get((procedure, result)) or RESULT_WORDS.get(result, result.replace("_", " "))


class OddsOutcome(TypedDict):
    """One outcome of `tracker odds --json`, with its probability (and fraction, exactly)."""

    probability: float
    exact: NotRequired[str]
    result: str
    attacker_left: dict[str, int]
    defender_left: dict[str, int]
    attacker_units_lost: int
    defender_units_lost: int
    ntr_destroyed: int
    holder: str
    # An interception's own counts (the procedure's `Outcome.extra`).
    submarines_going_on: NotRequired[int]
    submarines_submerged: NotRequired[int]
    submarines_detected: NotRequired[int]


class Choices(TypedDict):
    """The policies the odds were computed under, per side."""

    targets: dict[str, str]
    casualties: dict[str, str]
    after_round: str


class OddsSummary(TypedDict):
    """`tracker odds --json`: the outcomes likeliest first, expected values, the chances of each
    result and holder; the fractions only when computed exactly; the choices once the command
    adds them."""

    procedure: str
    outcomes: list[OddsOutcome]
    expected: dict[str, float]
    sd: dict[str, float]
    p: dict[str, float]
    holder: dict[str, float]
    truncated: float
    states: int
    expected_exact: NotRequired[dict[str, str]]
    p_exact: NotRequired[dict[str, str]]
    holder_exact: NotRequired[dict[str, str]]
    truncated_exact: NotRequired[str]
    choices: NotRequired[Choices]


# A nation typed in a position given by hand, and the force or technology it is typed in, as
# the nation's own name; refused (InputError) when no scenario at hand has it.
NationOf = Callable[[str, str], str]


def parse_force(
    text: str, ruleset: Ruleset, empty: bool = False, nation_of: NationOf | None = None
) -> tuple[str, dict[str, int]]:
    """'Germany:submarine=3,destroyer=1' as (nation, {type: count}); with `empty`, 'Britain'
    (or 'Britain:') too, a nation without units. A unit type by its name or abbreviation in
    any case ('DE:bb=2'), "battleship (damaged)" a damaged one (F3, NC5; its key in the
    counts); with `nation_of`, the nation by its name or code (`nations`)."""
    nation, sep, rest = text.partition(":")
    types = unit_types(ruleset)
    if nation_of is not None and not sep and fold_name(nation) in types:
        # `--defender destroyer`: a force without its nation, not a nation called "destroyer".
        raise InputError(f"{text!r} is a unit type, not a force: a force is NATION:TYPE=N[,TYPE=N...]")
    if empty and nation.strip() and not rest.strip():
        return nation_of(nation.strip(), text) if nation_of else nation.strip(), {}
    if not sep or not nation.strip() or not rest.strip():
        raise InputError(f"a force is NATION:TYPE=N[,TYPE=N...], got {text!r}")
    named = nation_of(nation.strip(), text) if nation_of else nation.strip()
    counts: dict[str, int] = {}
    for part in rest.split(","):
        typed, eq, number = part.strip().partition("=")
        folded = fold_name(typed)
        damaged = folded.endswith(DAMAGED)
        name = types.get(folded.removesuffix(DAMAGED).strip())
        if name is None:
            raise InputError(f"unknown unit type {typed.strip()!r} in {text!r} (known: {', '.join(ruleset.units)})")
        if damaged and ruleset.units[name].hits < 2:
            raise InputError(f"{typed.strip()!r} in {text!r}: only a capital ship fights on damaged (F3, NC5)")
        n = _count(number if eq else "1", text)
        key = name + DAMAGED if damaged else name
        counts[key] = counts.get(key, 0) + n
    return named, counts


def unit_types(ruleset: Ruleset) -> dict[str, str]:
    """The ruleset's unit types by name and abbreviation as typed (folded: `fold_name`), as
    the campaign's commands take them."""
    types = {fold_name(u.abbr): name for name, u in ruleset.units.items()}
    return types | {fold_name(name): name for name in ruleset.units}


@cache
def builtin_nations() -> dict[str, str]:
    """Every nation of the built-in scenarios, name to code, in their turn order."""
    from domain.ruleset import builtin_names, read_builtin_or_file

    found: dict[str, str] = {}
    for scenario in builtin_names("scenarios"):
        data, _ = read_builtin_or_file("scenarios", scenario)
        for name, nation in data.get("nations", {}).items():
            found.setdefault(name, str(nation.get("code", "")))
    return found


def nations(known: Mapping[str, str], more: Callable[[], Mapping[str, str]] | None = None) -> NationOf:
    """A position's nations by name or code (name to code: `known`), in any case, as their
    own names; one that is not there is looked for in `more` (read once, when first needed:
    the selected campaign's), else refused naming it and every nation taken."""
    extra: list[Mapping[str, str]] = []

    def keys(table: Mapping[str, str]) -> dict[str, str]:
        by_code = {fold_name(code): name for name, code in table.items() if code}
        return by_code | {fold_name(name): name for name in table}

    def nation_of(typed: str, text: str) -> str:
        found = keys(known).get(fold_name(typed))
        if found is None and more is not None:
            if not extra:
                extra.append(more())
            found = keys(extra[0]).get(fold_name(typed))
        if found is not None:
            return found
        taken = list(dict.fromkeys([*known, *(extra[0] if extra else {})]))
        raise InputError(f"unknown nation {typed!r} in {text!r} (known, by name or code: {', '.join(taken)})")

    return nation_of


def _count(number: str, text: str) -> int:
    try:
        n = int(number.strip())
    except ValueError:
        raise InputError(f"{number.strip()!r} in {text!r} is not a whole number") from None
    if not 1 <= n <= MAX_UNITS_PER_SIDE:
        raise InputError(f"unit counts are 1..{MAX_UNITS_PER_SIDE}, got {n} in {text!r}")
    return n


def parse_tech(
    texts: tuple[str, ...], ruleset: Ruleset, nation_of: NationOf | None = None
) -> dict[str, dict[str, int]]:
    """'Germany:advanced_submarine=3' (a level; no level: acquired, TE2)."""
    tech: dict[str, dict[str, int]] = {}
    for text in texts:
        nation, sep, rest = text.partition(":")
        if not sep or not rest.strip():
            raise InputError(f"a technology is NATION:TECHNOLOGY[=LEVEL], got {text!r}")
        if nation_of is not None:
            nation = nation_of(nation.strip(), text)
        for part in rest.split(","):
            name, eq, level = part.strip().partition("=")
            name = name.strip()
            if name not in ruleset.technologies:
                raise InputError(f"unknown technology {name!r} (known: {', '.join(ruleset.technologies)})")
            try:
                value = int(level) if eq else ruleset.research_levels
            except ValueError:
                raise InputError(f"{level!r} in {text!r} is not a level") from None
            if not 0 <= value <= ruleset.research_levels:
                raise InputError(f"technology levels are 0..{ruleset.research_levels}, got {value}")
            tech.setdefault(nation.strip(), {})[name] = value
    return tech


def _pieces(ruleset: Ruleset, forces: list[tuple[str, dict[str, int]]], codes: dict[str, str]) -> tuple[Piece, ...]:
    """The forces' units numbered by nation and type, the undamaged first (F3: "battleship (damaged)")."""
    out = []
    numbered: dict[tuple[str, str], int] = {}
    for nation, counts in forces:
        for key in sorted(counts, key=lambda k: k.endswith(DAMAGED)):
            unit_type = key.removesuffix(DAMAGED)
            abbr = ruleset.units[unit_type].abbr
            for _ in range(counts[key]):
                i = numbered[nation, unit_type] = numbered.get((nation, unit_type), 0) + 1
                out.append(Piece(f"{codes[nation]}-{abbr}{i}", unit_type, nation, int(key != unit_type)))
    return tuple(out)


def hypothetical(
    procedure: str,
    ruleset: Ruleset,
    attacker: tuple[str, ...],
    defender: tuple[str, ...],
    tech: tuple[str, ...],
    ntr: int | None,
    stops_here: bool,
    nation_of: NationOf | None = None,
) -> tuple[State, Context, int]:
    """A position given on the command line: (state, context, rounds fought). `nation_of`:
    the nations the forces may name (`nations`); None takes them as given (the advice's own
    positions, named from the campaign)."""
    if procedure == "convoy" and attacker and not defender:
        raise InputError(
            "a convoy battle needs --defender NATION, the NTR owner, with its searching ships and aircraft if any "
            "(NATION:TYPE=N,...; none: merchant defence alone, CV2)"
        )
    if not attacker or not defender:
        raise InputError("give the forces of both sides with --attacker and --defender")
    att = [parse_force(t, ruleset, nation_of=nation_of) for t in attacker]
    # CV2: the NTR owner defends its convoy whether or not it has ships there.
    dfd = [parse_force(t, ruleset, empty=procedure == "convoy", nation_of=nation_of) for t in defender]
    for label, side in (("attacker", att), ("defender", dfd)):
        if sum(n for _, c in side for n in c.values()) > MAX_UNITS_PER_SIDE:
            raise InputError(f"at most {MAX_UNITS_PER_SIDE} units per side (the {label} has more)")
    a_nations = list(dict.fromkeys(n for n, _ in att))
    d_nations = list(dict.fromkeys(n for n, _ in dfd))
    both = set(a_nations) & set(d_nations)
    if both:
        raise InputError(f"{', '.join(sorted(both))} cannot be on both sides")
    sides = {n: "attacking side" for n in a_nations} | {n: "defending side" for n in d_nations}
    levels = parse_tech(tech, ruleset, nation_of)
    unknown = sorted(set(levels) - set(sides))
    if unknown:
        raise InputError(f"--tech names {unknown[0]}, which has no units here")
    codes: dict[str, str] = {}
    for n in sides:
        code = n[:2].upper()
        while code in codes.values():
            code += "X"
        codes[n] = code
    ctx = Context(ruleset, hypothetical_scenario(sides), levels)
    a, d = _pieces(ruleset, att, codes), _pieces(ruleset, dfd, codes)
    subs_only = {"convoy": a, "intercept": a, "asw": d}
    if procedure in subs_only and any(not ruleset.units[p.type].is_submarine for p in subs_only[procedure]):
        who = "defender" if procedure == "asw" else "attacker"
        raise InputError(f"in {procedure} the {who} has submarines only")
    if procedure == "convoy":
        if ntr is None:
            raise InputError("a convoy battle needs --ntr N (the NTR in the zone, CV5)")
        searchers = tuple(p for p in d if ruleset.units[p.type].search.get("convoy", 0) > 0)
        state: State = convoy.start(ctx, a_nations[0], d_nations[0], tuple(p.id for p in a), a, searchers, ntr)
        return state, ctx, 0
    if ntr is not None:
        raise InputError("--ntr belongs to convoy battles")
    if procedure == "intercept":
        board = ctx.board(a + d)
        from domain.rules import interception as rules

        searchers = tuple(p for p in d if rules.can_search(board, board.units[p.id]))
        if not searchers:
            raise InputError("none of the defender's units may search for passing submarines (SM2)")
        return interception.start(ctx, a_nations[0], d_nations[0], a, searchers, True, not stops_here), ctx, 0
    if procedure == "asw":
        board = ctx.board(a + d)
        from domain.rules import asw as rules_asw

        hunters = tuple(p for p in a if rules_asw.can_search(board, board.units[p.id]))
        if not hunters:
            raise InputError("none of the attacker's units may search for submarines (AS2)")
        return asw.start(ctx, a_nations[0], d_nations[0], d, hunters), ctx, 0
    if any(n != a_nations[0] for n in a_nations):
        raise InputError("in a naval battle the attacker is one nation (NC1)")
    if not any(ruleset.units[p.type].is_naval for p in d):
        raise InputError("a naval battle needs enemy naval units (NC1)")
    state, facts = naval.start(ctx, a_nations[0], d_nations[0], a, d)
    return state, ctx, sum(1 for f in facts if f.kind == "round")


def searchers_ahead(state: State) -> tuple[Piece, ...]:
    """CV3: the ships and aircraft a convoy battle's odds still roll search dice for: before
    the owner picks, every unit that may search (the default: all search); at the search, those
    picked; none past it, or for another battle."""
    if not isinstance(state, convoy.ConvoyBattle):
        return ()
    early = (convoy.ConvoyStep.MERCHANT_DEFENCE, convoy.ConvoyStep.MERCHANT_CASUALTY, convoy.ConvoyStep.SEARCHERS)
    if state.step in early:
        return state.eligible
    return state.searchers if state.step == convoy.ConvoyStep.SEARCH else ()


def search_results(state: State, picked: Collection[str] | None = None) -> int:
    """CV3: the results of a convoy search the odds work out in one step (1 with no search
    ahead): the product, over the runs of alike searchers (`convoy.alike_runs`), of one more
    than their number. `picked`: the units that search, if not the default (`searchers_ahead`)."""
    ahead = searchers_ahead(state)
    if picked is not None:
        ahead = tuple(p for p in state.eligible if p.id in picked)
    if not ahead:
        return 1
    return math.prod(len(run) + 1 for run in convoy.alike_runs(ahead, pieces_in(state)))


def results_of(counts: Iterable[int]) -> int:
    """CV3: the results of a search by these numbers of alike searchers (`search_results`)."""
    return math.prod(n + 1 for n in counts)


def require_small_search(state: State) -> None:
    """Refuse (one line) a convoy battle whose search has more than MAX_SEARCH_RESULTS results
    (CV3): they would all be worked out before any limit of positions is met."""
    results = search_results(state)
    if results > MAX_SEARCH_RESULTS:
        raise InputError(
            f"{len(searchers_ahead(state))} ships and aircraft search in this convoy battle (CV3), "
            f"{results:,} results of how many of each kind detect; exact odds take at most "
            f"{MAX_SEARCH_RESULTS:,}: fewer searchers, of fewer kinds"
        )


SIDE_NAMES: tuple[Side, Side] = ("attacker", "defender")


def parse_choices(
    option: str, texts: tuple[str, ...], known: tuple[str, ...], ruleset: Ruleset | None
) -> dict[Side, str]:
    """`--targets` / `--casualties`: POLICY for both sides, or SIDE=POLICY (attacker or
    defender), repeated; a later one wins. `ruleset` given: a unit type is a policy too."""
    chosen: dict[Side, str] = {}
    types = tuple(ruleset.units) if ruleset is not None else ()
    for text in texts:
        who, eq, how = text.partition("=")
        sides: tuple[Side, ...] = SIDE_NAMES
        if eq:
            if who.strip() not in SIDE_NAMES:
                raise InputError(f"{option} {text}: the side is attacker or defender, got {who.strip()!r}")
            sides = ("attacker",) if who.strip() == "attacker" else ("defender",)
        else:
            how = who
        how = how.strip()
        if how not in known and how not in types:
            words = ", ".join(known) + (", or a unit type" if types else "")
            raise InputError(f"{option}: unknown policy {how!r} (known: {words}; SIDE=POLICY for one side)")
        for side in sides:
            chosen[side] = how
    return chosen


def policy(
    after_round: str,
    targets: Mapping[Side, str] | None = None,
    casualties: Mapping[Side, str] | None = None,
    ctx: Context | None = None,
) -> Policy | None:
    """The choices left to the owners: the targets of selective shots and the units taking the
    hits (`domain.procedures.policies`, per side), and after a round (NC4, AS5, SM4) the
    tracker's default, fight on, or submerge every submarine that may. None: all defaults.
    `ctx`, the procedure's context, is needed for targets and casualties."""
    targets = {s: h for s, h in (targets or {}).items() if h != policies.DEFAULT_TARGETS}
    casualties = {s: h for s, h in (casualties or {}).items() if h != policies.DEFAULT_CASUALTIES}
    if after_round == "default" and not targets and not casualties:
        return None
    if (targets or casualties) and ctx is None:
        raise ValueError("targets and casualties policies read the procedure's context")

    def choose(state: State, d: Decision) -> object | None:
        if d.kind in ("targets", "screens", "casualties"):
            if not targets and not casualties:
                return None
            assert ctx is not None
            return policies.volley_choice(state, d, ctx, targets, casualties)
        if after_round == "default":
            return None
        if d.kind == "naval_decide":
            subs = dict(d.options)["submerge"]
            return NavalDecision(submerge=subs if after_round == "submerge" else ())
        if d.kind == "submerge":  # AS5
            return dict(d.options)["units"] if after_round == "submerge" else ()
        if d.kind == "decide":  # SM4
            subs = dict(d.options)["submerge"]
            return InterceptionDecision(submerge=subs if after_round == "submerge" else ())
        return None

    return choose


def _fraction(p: Number) -> str:
    assert isinstance(p, Fraction)
    return f"{_decimal(p.numerator)}/{_decimal(p.denominator)}"


# Digits written at a time: below the 4,300 Python's str() of an int allows.
_CHUNK = 1000


def _decimal(n: int) -> str:
    """`n` in decimal, however many digits: a big battle's exact chances have denominators of
    thousands, past the 4,300 digits str() allows (a guard against reading huge numbers from
    untrusted input, which writing one does not need), so they are written a chunk at a time."""
    if n < 0:
        return "-" + _decimal(-n)
    chunks: list[int] = []
    base = 10**_CHUNK
    while n >= base:
        n, rest = divmod(n, base)
        chunks.append(rest)
    return str(n) + "".join(f"{c:0{_CHUNK}d}" for c in reversed(chunks))


def _sd(variance: Number) -> float:
    return math.sqrt(max(0.0, float(variance)))


def _is_result(result: str) -> Callable[[Outcome], bool]:
    return lambda o: o.result == result


def _is_holder(holder: str) -> Callable[[Outcome], bool]:
    return lambda o: o.holder == holder


def _outcome(o: Outcome, probability: Number, exact: bool) -> OddsOutcome:
    """One outcome as the JSON gives it."""
    row: OddsOutcome = {
        "probability": float(probability),
        "result": o.result,
        "attacker_left": dict(o.attacker_left),
        "defender_left": dict(o.defender_left),
        "attacker_units_lost": o.attacker_units_lost,
        "defender_units_lost": o.defender_units_lost,
        "ntr_destroyed": o.ntr_destroyed,
        "holder": o.holder,
    }
    if exact:
        # The fraction goes right after the probability, as the JSON has always had it: a key
        # given again keeps the place it was first given.
        row = {"probability": row["probability"], "exact": _fraction(probability), **row}
    # The procedure's own counts last, by the names it gives them (declared above).
    cast("dict[str, object]", row).update(o.extra)
    return row


def summary(odds: Odds) -> OddsSummary:
    """The JSON shape of `tracker odds --json`; the fractions (`exact`, `p_exact`,
    `holder_exact`, `truncated_exact`, `expected_exact`) only when the odds were computed
    exactly (`--exact`). The rounds' mean and every standard deviation are decimals even then:
    the enumeration counts rounds in floats, and a deviation is a square root."""
    outcomes = sorted(odds.outcomes.items(), key=lambda kv: -kv[1][0])
    measures: dict[str, Callable[[Outcome], int]] = {
        "ntr_destroyed": lambda o: o.ntr_destroyed,
        "attacker_units_lost": lambda o: o.attacker_units_lost,
        "defender_units_lost": lambda o: o.defender_units_lost,
    }
    expected: dict[str, float] = {}
    sd: dict[str, float] = {}
    exact: dict[str, str] = {}
    for name, f in measures.items():
        mean, var = odds.expected(f)
        expected[name], sd[name] = float(mean), _sd(var)
        if odds.exact:
            exact[name] = _fraction(mean)
    rounds_mean, rounds_var = odds.rounds()
    expected["rounds"], sd["rounds"] = rounds_mean, math.sqrt(max(0.0, rounds_var))
    results = sorted({o.result for o in odds.outcomes})
    p = {r: odds.probability(_is_result(r)) for r in results}
    holders = sorted({o.holder for o in odds.outcomes})
    hold = {h: odds.probability(_is_holder(h)) for h in holders}
    data: OddsSummary = {
        "procedure": odds.procedure,
        "outcomes": [_outcome(o, m[0], odds.exact) for o, m in outcomes],
        "expected": expected,
        "sd": sd,
        "p": {r: float(v) for r, v in p.items()},
        "holder": {h: float(v) for h, v in hold.items()},
        "truncated": float(odds.truncated),
        "states": odds.states,
    }
    if odds.exact:
        data["expected_exact"] = exact
        data["p_exact"] = {r: _fraction(v) for r, v in p.items()}
        data["holder_exact"] = {h: _fraction(v) for h, v in hold.items()}
        data["truncated_exact"] = _fraction(odds.truncated)
    return data


def _left(left: dict[str, int]) -> str:
    """Units left by type: "2 battleships (damaged), 1 cruiser" (the outcome's keys name a
    damaged capital ship "battleship (damaged)")."""
    words = []
    for t, n in left.items():
        unit_type, damaged, _ = t.partition(DAMAGED)
        words.append(plural(n, unit_type) + damaged)
    return ", ".join(words) or "none"


def choices(targets: Mapping[Side, str], casualties: Mapping[Side, str], after_round: str) -> Choices:
    """The policies the odds were computed under (the `choices` key of the JSON)."""
    return {
        "targets": {s: targets.get(s, policies.DEFAULT_TARGETS) for s in SIDE_NAMES},
        "casualties": {s: casualties.get(s, policies.DEFAULT_CASUALTIES) for s in SIDE_NAMES},
        "after_round": after_round,
    }


def _choice_words(data: OddsSummary) -> str:
    """'targets: attacker focus, defender spread; ...', or '' when every choice is the default."""
    c = data.get("choices")
    if not c:
        return ""
    parts = []
    for what, per, default in (
        ("targets", c["targets"], policies.DEFAULT_TARGETS),
        ("casualties", c["casualties"], policies.DEFAULT_CASUALTIES),
    ):
        if all(v == default for v in per.values()):
            continue
        if per["attacker"] == per["defender"]:
            parts.append(f"{what}: {per['attacker']}")
        else:
            parts.append(f"{what}: attacker {per['attacker']}, defender {per['defender']}")
    if c["after_round"] != "default":
        parts.append(f"after each round: {c['after_round']}")
    return "; ".join(parts)


def render(data: OddsSummary, title: str, exact: bool, limit: int = 15) -> str:
    """The odds as text: the choices when not the defaults, the results, expected values with
    standard deviations, the likeliest outcomes (all of them with --exact)."""
    lines = [title, ""]
    words = _choice_words(data)
    if words:
        lines[1:1] = [f"Choices: {words}"]
    for r, p in sorted(data["p"].items(), key=lambda kv: -kv[1]):
        frac = f"  {data['p_exact'][r]}" if exact else ""
        lines.append(f"  {p:8.2%}  {result_words(data['procedure'], r)}{frac}")
    lines.append("")
    # Only the chances and the expected losses are fractions: the rounds are counted in
    # floats, and a standard deviation is a square root.
    lines.append(
        "Expected (standard deviation; exact where a fraction follows):" if exact else "Expected (standard deviation):"
    )
    for name, mean in data["expected"].items():
        if name == "ntr_destroyed" and data["procedure"] != "convoy":
            continue
        frac = f" = {data['expected_exact'][name]}" if exact and name in data["expected_exact"] else ""
        lines.append(f"  {name.replace('_', ' ')}: {mean:.3f} ({data['sd'][name]:.3f}){frac}")
    outcomes = data["outcomes"] if exact else data["outcomes"][:limit]
    lines += ["", f"Outcomes ({len(data['outcomes'])}; {'all' if exact else f'the {len(outcomes)} likeliest'}):"]
    for o in outcomes:
        frac = f"  {o['exact']}" if exact else ""
        ntr = f"; {o['ntr_destroyed']} NTR destroyed" if data["procedure"] == "convoy" else ""
        lines.append(
            f"  {o['probability']:8.3%}  {result_words(data['procedure'], o['result'])}: "
            f"attacker left: {_left(o['attacker_left'])}; "
            f"defender left: {_left(o['defender_left'])}{ntr}{frac}"
        )
    if data["truncated"]:
        left = data["truncated_exact"] if exact and "truncated_exact" in data else f"{data['truncated']:.3g}"
        lines.append(f"\nProbability mass left in a loop nothing can leave (not counted): {left}")
    if not data["truncated"]:
        lines.append(f"\n{plural(data['states'], 'position')} enumerated; nothing truncated.")
    return "\n".join(lines).rstrip() + "\n"
