"""Exact odds for the command line: the choice policies, and the distribution of outcomes as
text and JSON (`tracker odds`); positions given by hand are read in `hand`."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from fractions import Fraction
from typing import NotRequired, TypedDict, cast

from domain.errors import InputError
from domain.procedures import convoy, policies
from domain.procedures.base import Context, Decision, Outcome, Piece, Side
from domain.procedures.canon import pieces_in
from domain.procedures.interception import InterceptionDecision
from domain.procedures.naval import NavalDecision
from domain.procedures.odds import Number, Odds, Policy, State
from domain.ruleset import Ruleset
from domain.text import plural

# Positions given by hand, named here too for the callers (and tests) that always found them here.
from tracker.analysis.hand import DAMAGED as DAMAGED
from tracker.analysis.hand import MAX_UNITS_PER_SIDE as MAX_UNITS_PER_SIDE
from tracker.analysis.hand import PROCEDURES as PROCEDURES
from tracker.analysis.hand import NationOf as NationOf
from tracker.analysis.hand import hypothetical as hypothetical
from tracker.analysis.hand import nations as nations
from tracker.analysis.hand import parse_force as parse_force
from tracker.analysis.hand import parse_tech as parse_tech

AFTER_ROUND = ("default", "fight", "submerge")
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
    # A battle in progress: the round it is in (0: not begun), as its log holds it;
    # `expected.rounds` counts from its first round, the losses from its current step on.
    round: NotRequired[int]


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


def render(data: OddsSummary, title: str, exact: bool, limit: int = 15, in_progress: bool = False) -> str:
    """The odds as text: the choices when not the defaults, the results, expected values with
    standard deviations, the likeliest outcomes (all of them with --exact). `in_progress`: the
    odds of a battle in progress, whose losses count from its current step on while its rounds
    count from its first (the position read from the log starts where the battle stands)."""
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
        label = name.replace("_", " ")
        if in_progress:
            label += " in all (from the first)" if name == "rounds" else " from here on"
        lines.append(f"  {label}: {mean:.3f} ({data['sd'][name]:.3f}){frac}")
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
