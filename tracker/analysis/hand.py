"""Positions given by hand (`tracker odds convoy|intercept|asw|naval`): the forces and
technology typed on the command line, read as the referee would start that procedure."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from domain.errors import InputError
from domain.procedures import asw, convoy, interception, naval
from domain.procedures.base import Context, Piece, hypothetical_scenario
from domain.procedures.odds import State
from domain.ruleset import Ruleset
from domain.scenario_slips import fold_name

PROCEDURES = ("convoy", "intercept", "asw", "naval")
DAMAGED = " (damaged)"  # a capital ship one hit from sinking (F3, NC5), in counts and outcomes
# Bigger forces make the enumeration slow (the states grow with every unit type present).
MAX_UNITS_PER_SIDE = 20
# Each procedure as a refusal names it, and the rule that gives it one attacking nation.
ONE_ATTACKER = {
    "convoy": ("a convoy battle", "CV1"),
    "intercept": ("an interception", "SM2"),
    "asw": ("ASW combat", "AS1"),
    "naval": ("a naval battle", "NC1"),
}


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


def _codes(sides: Mapping[str, str]) -> dict[str, str]:
    """A two-letter code for each nation of a position given by hand, unique among them."""
    codes: dict[str, str] = {}
    for n in sides:
        code = n[:2].upper()
        while code in codes.values():
            code += "X"
        codes[n] = code
    return codes


def _check_options(procedure: str, a_nations: list[str], ntr: int | None, stops_here: bool) -> None:
    """What a position's procedure takes: one attacking nation, --stops-here for an
    interception alone, --ntr (at least 1) for a convoy battle alone."""
    if any(n != a_nations[0] for n in a_nations):
        # The referee's procedures have one attacking nation: it declares the convoy attack
        # with its submarines (CV1), moves the group (SM2), hunts with its own units (AS1), or
        # moves into the zone (NC1); allies attack one after another.
        words, rule = ONE_ATTACKER[procedure]
        raise InputError(f"in {words} the attacker is one nation ({rule})")
    if stops_here and procedure != "intercept":
        raise InputError("--stops-here belongs to interceptions (SM5)")
    if procedure != "convoy":
        if ntr is not None:
            raise InputError("--ntr belongs to convoy battles")
    elif ntr is None:
        raise InputError("a convoy battle needs --ntr N (the NTR in the zone, CV5)")
    elif ntr == 0:
        raise InputError("--ntr 0 leaves nothing to attack: a convoy attack is made where the defender has NTR (CV1)")


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
    codes = _codes(sides)
    ctx = Context(ruleset, hypothetical_scenario(sides), levels)
    a, d = _pieces(ruleset, att, codes), _pieces(ruleset, dfd, codes)
    subs_only = {"convoy": a, "intercept": a, "asw": d}
    if procedure in subs_only and any(not ruleset.units[p.type].is_submarine for p in subs_only[procedure]):
        who = "defender" if procedure == "asw" else "attacker"
        raise InputError(f"in {procedure} the {who} has submarines only")
    _check_options(procedure, a_nations, ntr, stops_here)
    if procedure == "convoy":
        assert ntr is not None
        searchers = tuple(p for p in d if ruleset.units[p.type].search.get("convoy", 0) > 0)
        state: State = convoy.start(ctx, a_nations[0], d_nations[0], tuple(p.id for p in a), a, searchers, ntr)
        return state, ctx, 0
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
    if not any(ruleset.units[p.type].is_naval for p in d):
        raise InputError("a naval battle needs enemy naval units (NC1)")
    state, facts = naval.start(ctx, a_nations[0], d_nations[0], a, d)
    return state, ctx, sum(1 for f in facts if f.kind == "round")
