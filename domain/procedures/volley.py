"""The volley every fight shares, step by step: targets and screens chosen before any die
(HA1-HA3), the dice (who fires and at what is `domain.procedures.fight`'s), and the hits placed
in the order the rules impose (HA4-HA7) and taken together (F3, NC5)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import groupby
from typing import Literal, TypeVar

from domain.board import Board, Unit
from domain.errors import RuleViolation
from domain.procedures.aim import (
    default_screens,
    default_targets,
    screen_choices,
    screening_of,
    screens_fact,
    targeting_of,
    targets_fact,
    targets_open,
    to_screening,
)
from domain.procedures.base import (
    SIDES,
    Context,
    Decision,
    Fact,
    Facts,
    Piece,
    Roll,
    Side,
    as_ids,
    as_pairs,
    check_counts,
    evolve,
    other,
)
from domain.procedures.fight import (
    Fight as Fight,
)
from domain.procedures.fight import (
    Firer,
    Shot,
    Stage,
    dice_kind,
    fire_dice,
    fire_groups,
    fire_rule,
    hunting,
    roller,
    target_rule,
    volley,
)
from domain.procedures.fight import (
    VolleyStep as VolleyStep,
)
from domain.rules import combat
from domain.rules import hits as hits_rules
from domain.rules import targets as targets_rules
from domain.text import plural

_S = TypeVar("_S")


def withheld(f: Fight, ctx: Context, stage: Stage, firing: tuple[Firer, ...]) -> Facts:
    """NC6: units with a value to fire but nothing their hits may fall on roll no die."""
    ids = {x.unit for x in firing}
    silent = [
        (p.id, side == "attacker")
        for side in SIDES
        for p in f.side(side)
        if p.id not in ids and (p.id in f.opening) == (stage == "opening")
    ]
    if not silent:
        return ()
    board = ctx.board(f.pieces)
    idle = tuple(uid for uid, attacking in silent if combat.fire_roll(board, board.units[uid], attacking).target > 0)
    return (Fact("fire_withheld", "NC6", idle),) if idle else ()


def begin(f: Fight, ctx: Context, stage: Literal["opening", "main"]) -> tuple[Fight, Facts] | None:
    """HA1, HA3, AS3, SM4: open a volley; the owners of selective shooters pick targets before any
    roll. A side whose every shooter has a single legal target has that choice taken for it.
    None when nobody fires."""
    firing = volley(f, ctx, stage)
    facts = withheld(f, ctx, stage, firing) if f.kind == "naval" else ()
    if not firing:
        return None
    waiting: list[Side] = []
    shots: list[Shot] = []
    for x in firing:
        side: Side = "attacker" if x.attacking else "defender"
        if x.legal and side not in waiting:
            waiting.append(side)
    left = []
    rule = target_rule(f, stage)
    if waiting:
        # Opening the step clears the last volley's shots, before any target of this one.
        facts += (targets_open(rule, tuple(waiting)),)  # the sides to choose
    for side in waiting:
        own = [x for x in firing if x.legal and x.attacking == (side == "attacker")]
        if all(len(x.legal or ()) == 1 for x in own):
            # A side whose every firer has a single legal target has nothing to choose: that
            # choice is recorded for it, as a default, instead of waiting.
            picked = [Shot(x.unit, (x.legal or ("",))[0]) for x in own]
            shots += picked
            pairs = tuple(sorted((s.firer, s.target) for s in picked))
            facts += (Fact("targets", rule, tuple(x.unit for x in own), pairs=pairs, default=True, side=side),)
        else:
            left.append(side)
    # The last volley's shots, hits and choices are cleared, this volley's first shots in.
    f = evolve(
        f,
        stage=stage,
        shots=tuple(sorted(shots, key=lambda s: s.firer)),
        hits=(),
        groups=(),
        chosen=(),
        waiting=tuple(left),
        step=VolleyStep.TARGETS if left else f.step,
    )
    if left:
        return f, facts
    nf, more = to_screening(f, ctx)
    return nf, facts + more


def _allocation(f: Fight, ctx: Context, side: Side) -> hits_rules.Placing:
    """HA4-HA7: the side's non-selective hits this volley and the units they may fall on."""
    hit = _hits_on(f, side)
    own, groups, landed = hit if hit is not None else (f.side(side), (), ())
    return _placing(f, ctx, own, groups, landed)


def casualty_choices(f: Fight, ctx: Context, side: Side) -> tuple[str, list[str], list[str]]:
    """HA4-HA7, NC6: what the side's owner may answer at the casualties step, from the placing
    the referee checks the answer against, in the words of its refusals: the hits per firing
    class (`Placing.words`), the legal choices (`Placing.legal`), and the units some legal
    choice puts a hit on."""
    placing = _allocation(f, ctx, side)
    by_class = placing.by_class
    if by_class is None:
        outcomes = placing.outcomes()
        units = sorted({u for a in outcomes for p, n in enumerate(a) if n for u in placing.pools[p]})
        return placing.words(), placing.legal(), units
    # HA7 as first written: each class's hits on the first tier with hits left, any unit of it.
    seen: hits_rules.Placed = []
    by_class.place(by_class.key, seen=seen)
    runs = [(c, units, len(list(hits))) for (c, units), hits in groupby(seen)]
    legal = "; ".join(f"{plural(n, 'hit')} from {c} ships among {'/'.join(units)}" for c, units, n in runs)
    return placing.words(), [legal], sorted({u for _, units in seen for u in units})


def _placing(
    f: Fight, ctx: Context, own: tuple[Piece, ...], groups: tuple[tuple[str, int], ...], landed: tuple[str, ...]
) -> hits_rules.Placing:
    board = ctx.board(f.pieces)
    units = [board.units[p.id] for p in own]
    tiers = _tiers(f, ctx, own, groups, board)
    return hits_rules.Placing(board, list(groups), units, Counter(landed), f.kind == "naval", tiers)


def _hits_on(f: Fight, side: Side) -> tuple[tuple[Piece, ...], tuple[tuple[str, int], ...], tuple[str, ...]] | None:
    """HA4-HA7: a side's units, the non-selective hits on it per firing class, and the selective
    hits landing on it in the volley's (sorted) order, keys that need no board; None without
    non-selective hits."""
    groups = tuple((c, n) for s, c, n in f.groups if s == side)
    if not groups:
        return None
    own = f.side(side)
    ids = {p.id for p in own}
    return own, groups, tuple(u for u in f.hits if u in ids)


def _forced(f: Fight, ctx: Context, side: Side) -> tuple[bool, tuple[str, ...]] | None:
    """HA7: whether the rules leave the owner no choice, and the default; None without hits."""
    hit = _hits_on(f, side)
    if hit is None:
        return None
    own, groups, landed = hit
    key = ("forced", f.kind, own, groups, landed)
    found = ctx.memo.get(key)
    if found is None:
        placing = _placing(f, ctx, own, groups, landed)
        default = ctx.memo.get(("default", f.kind, own, groups, landed))
        if default is None:
            default = ctx.memo[("default", f.kind, own, groups, landed)] = tuple(placing.default())
        found = ctx.memo[key] = (placing.forced(), default)
    return found


def _tiers(
    f: Fight, ctx: Context, own: tuple[Piece, ...], groups: tuple[tuple[str, int], ...], board: Board
) -> dict[str, list[list[Unit]]]:
    """HA4-HA6: the tiers of `own` for each firing class hitting it; they depend on the units
    alone, not on the hits, so each is worked out once per side and class."""
    nc6 = f.kind == "naval"
    out: dict[str, list[list[Unit]]] = {}
    for c, _ in groups:
        key = ("tiers", nc6, own, c)
        found = ctx.memo.get(key)
        if found is None:
            found = ctx.memo[key] = hits_rules.hit_tiers(board, c, [board.units[p.id] for p in own], nc6)
        out[c] = found
    return out


def _default(f: Fight, ctx: Context, side: Side) -> tuple[str, ...]:
    """HA7: the default casualties alone (without asking whether the rules leave a choice,
    `_forced`); empty without hits."""
    hit = _hits_on(f, side)
    if hit is None:
        return ()
    own, groups, landed = hit
    key = ("default", f.kind, own, groups, landed)
    default = ctx.memo.get(key)
    if default is None:
        default = ctx.memo[key] = tuple(_placing(f, ctx, own, groups, landed).default())
    return default


def default_casualties(f: Fight, ctx: Context, side: Side) -> list[str]:
    """HA7: the cheapest legal choice over every order of placing the hits."""
    forced = _forced(f, ctx, side)
    return list(forced[1]) if forced else []


def need(f: Fight, ctx: Context) -> Decision | Roll:
    """What the volley waits for: targets, screens, the dice, or casualties."""
    if f.step == VolleyStep.FIRE:
        groups, dice = fire_dice(f, ctx)
        return Roll(roller(f, ctx), fire_rule(f), groups, dice_kind(f.kind), dice)
    side = f.waiting[0]
    if f.step == VolleyStep.TARGETS:
        legal = {
            x.unit: x.legal or () for x in volley(f, ctx, f.stage) if x.legal and x.attacking == (side == "attacker")
        }
        return Decision(
            f.nation(side),
            target_rule(f, f.stage),
            "targets",
            tuple(sorted(legal.items())),
            tuple(sorted(default_targets(f, ctx, side).items())),
        )
    if f.step == VolleyStep.SCREENING:
        options = screen_choices(f, ctx).get(side, {})
        return Decision(
            f.nation(side),
            "HA1",
            "screens",
            tuple(sorted(options.items())),
            tuple(sorted(default_screens(f, ctx, side).items())),
        )
    ids = tuple(p.id for p in f.side(side))
    return Decision(f.nation(side), "HA7", "casualties", (("units", ids),), tuple(default_casualties(f, ctx, side)))


def through(
    s: _S, ctx: Context, moved: tuple[Fight, Facts], after: Callable[[_S, Context], tuple[_S, Facts]]
) -> tuple[_S, Facts]:
    """A procedure's state with its fight moved by one volley step (`decide` or `roll`), then
    what the procedure does once the volley is over (`after`, which sees the volley's step)."""
    fight, facts = moved
    ns, more = after(evolve(s, fight=fight), ctx)
    return ns, facts + more


def roll(f: Fight, ctx: Context, counts: tuple[tuple[int, ...], ...]) -> tuple[Fight, Facts]:
    """The volley's dice, as the number of dice of each group (of `fire_groups`) per result:
    selective hits land on their unit; the other hits go to the owner to place (HA4-HA7),
    which the tracker does for a side when the rules leave no choice."""
    f = _scored(f, ctx, counts)
    placed = f.groups
    facts = [Fact("hits", hits_rules.priority_rule(c), (s, c), n, side=s) for s, c, n in placed]
    waiting: list[Side] = []
    chosen: list[tuple[Side, tuple[str, ...]]] = []
    for side in SIDES:
        forced = _forced(f, ctx, side)
        if forced is None:
            continue
        own = [(c, n) for s, c, n in placed if s == side]
        if forced[0] or not _owner_order(ctx):
            lost = sum(n for _, n in own) - len(forced[1])
            if lost:
                # NC6, HA4-HA7: hits with no unit left that they may fall on are lost, and said
                # so; where the owner chooses, how many depends on the order it places them in
                # (not under HA7 as first written, which lost them at the roll).
                facts.append(Fact("hits_lost", _lost_rule(f, ctx, side), count=lost, side=side))
        if forced[0]:
            chosen.append((side, forced[1]))
            if forced[1]:
                rule = hits_rules.priority_rule(own[0][0])
                facts.append(Fact("casualties", rule, forced[1], default=True, side=side))
        else:
            waiting.append(side)
    f = evolve(f, chosen=tuple(chosen))
    if waiting:
        return evolve(f, step=VolleyStep.CASUALTIES, waiting=tuple(waiting)), tuple(facts)
    nf, more = _end(f, ctx)
    return nf, tuple(facts) + more


def _scored(f: Fight, ctx: Context, counts: tuple[tuple[int, ...], ...]) -> Fight:
    """The volley with its dice counted: the selective hits on their units, the others per
    side and firing class in the order they are placed (HA4-HA6), nothing chosen yet."""
    groups = fire_groups(f, ctx)
    check_counts(groups, counts)
    landed: list[str] = []
    scored: Counter[tuple[Side, str]] = Counter()
    for g, c in zip(groups, counts, strict=True):
        hits = c[1]
        if not hits:
            continue
        if g.effect[0] == "unit":
            landed += [g.effect[1]] * hits
        else:
            scored[(g.effect[1], g.effect[2])] += hits  # type: ignore[index]

    def group_order(key: tuple[Side, str]) -> tuple[bool, int, str]:
        side, cls = key
        return (side != "attacker", *placing_order(ctx, cls))

    placed = tuple((s, c, n) for (s, c), n in sorted(scored.items(), key=lambda kv: group_order(kv[0])))
    return evolve(f, hits=tuple(sorted(landed)), groups=placed, chosen=())


def _owner_order(ctx: Context) -> bool:
    """HA7 as amended (the ruleset's `placement`): the owner's order decides which hits are lost."""
    return ctx.ruleset.hit_placement == "owner-order"


def placing_order(ctx: Context, firing_class: str) -> tuple[int, str]:
    """HA5, HA6: a side's non-selective hits are placed in the ruleset's order of firing
    classes, then the rest (by name); the sort key of a firing class's hits."""
    order = ctx.ruleset.hit_priority
    return (list(order).index(firing_class) if firing_class in order else len(order), firing_class)


def left_after(
    f: Fight,
    ctx: Context,
    side: Side,
    own: tuple[Piece, ...],
    landed: tuple[str, ...],
    placed: tuple[tuple[str, int], ...],
) -> tuple[Piece, ...]:
    """What is left of `own`, a side's units, after the selective hits `landed` (one entry per
    hit) and the non-selective hits `placed` (firing class, hits; in `placing_order`), with the
    tracker's defaults for its casualties (HA4-HA7) and every hit taken together (F3, NC5).

    The default depends on nothing but the units' hits left, so the selective hits may be taken
    first and `placed` on what they leave (`placing_of`, `left_of`). Not so one firing class
    at a time: HA7 places the hits in the order the owner likes best, and which order that is
    depends on every class's hits (a destroyer's hit on the last cruiser leaves a battleship's
    nothing to hit among submarines, NC6, where the battleship's alone would take the cruiser):
    `placed` goes together."""
    taken = Counter(landed)
    if placed:
        taken.update(_default(_alone(f, side, own, landed, placed), ctx, side))
    return left_of(own, taken, ctx)


def _alone(
    f: Fight, side: Side, own: tuple[Piece, ...], landed: tuple[str, ...], placed: tuple[tuple[str, int], ...]
) -> Fight:
    """The fight with `own` alone on its side, nothing on the other, these hits on it."""
    return evolve(
        f,
        attackers=own if side == "attacker" else (),
        defenders=own if side == "defender" else (),
        hits=tuple(sorted(landed)),
        groups=tuple((side, c, n) for c, n in placed),
        chosen=(),
    )


def placing_of(
    f: Fight, ctx: Context, side: Side, own: tuple[Piece, ...], placed: tuple[tuple[str, int], ...]
) -> hits_rules.Placing:
    """HA4-HA7: the hits `placed` (firing class, hits) on `own`, a side's units, nothing else
    landing on them: `Placing.cheapest` gives the default for any other numbers of hits of the
    same classes, as `left_after` would (it is the same choice)."""
    return _placing(_alone(f, side, own, (), placed), ctx, own, placed, ())


def left_of(own: tuple[Piece, ...], taken: Counter[str], ctx: Context) -> tuple[Piece, ...]:
    """F3, NC5: what is left of `own` once each unit takes its hits in `taken`."""
    return tuple(q for p in own if (q := _struck(p, taken.get(p.id, 0), ctx)) is not None)


def _struck(p: Piece, n: int, ctx: Context) -> Piece | None:
    """F3, NC5: a unit after the volley's `n` hits on it, None once sunk; hits beyond what
    sinks it are lost (NC2, NC3)."""
    if not n:
        return p
    if n >= ctx.hits_left(p):
        return None
    return p._replace(damage=p.damage + n)


def _lost_rule(f: Fight, ctx: Context, side: Side) -> str:
    """CV4 in a convoy round; NC6 where the hits could only fall on submarines; else HA7 (a hit
    with no legal target left is lost), NC3 in a campaign recorded before that was cited."""
    if f.kind == "convoy":
        return "CV4"
    board = ctx.board(f.pieces)
    if any(board.unit_type(board.units[p.id]).is_submarine for p in f.side(side)):
        return "NC6"
    return "HA7" if ctx.ruleset.hits_lost_by_ha7 else "NC3"


def decide(
    f: Fight, ctx: Context, choice: object | None, side: Side | None = None, board: Board | None = None
) -> tuple[Fight, Facts]:
    """A waiting side's targets (firer -> target), screens (firer -> escort) or casualties
    (units, one entry per hit); None takes the default. `side` is the first waiting side unless
    named; `board` is the whole board a choice is checked against (to name a unit outside the
    fight), the fight's own units unless given."""
    side = f.waiting[0] if side is None else side
    if side not in f.waiting:
        raise RuleViolation("HA7", f"the volley does not wait for the {side}")
    rest = tuple(s for s in f.waiting if s != side)
    default = choice is None
    if f.step == VolleyStep.TARGETS:
        rule = target_rule(f, f.stage)
        targeting = targeting_of(f, ctx, side)
        if choice is None:
            new, fact = targeting.shots, targeting.fact(rule, side)
        else:
            # A choice is checked against the whole board where given, to name units outside.
            board = board or ctx.board(f.pieces)
            legal = targeting.legal
            picked = targets_rules.check_targets(
                board, rule, f.nation(side), legal, as_pairs(choice), _why_not(f, board, rule, legal)
            )
            new, fact = {k: Shot(k, t) for k, t in picked.items()}, targets_fact(rule, side, picked, False)
        shots = {s.firer: s for s in f.shots} | new
        f = evolve(f, shots=tuple(shots[k] for k in sorted(shots)), waiting=rest)
        facts: Facts = (fact,)
        if rest:
            return f, facts
        nf, more = to_screening(f, ctx)
        return nf, facts + more
    if f.step == VolleyStep.SCREENING:
        screening = screening_of(f, ctx, side)
        if choice is None:
            screened, facts = screening.screened, (screening.fact,)
        else:
            own_board = ctx.board(f.pieces)
            board = board or own_board
            own = [own_board.units[p.id] for p in f.side(side)]
            rule, shots_at = screening.rule, screening.shots_at
            screens = targets_rules.check_screens(board, rule, f.nation(side), shots_at, own, as_pairs(choice))
            screened = {k: Shot(k, shots_at[k], e) for k, e in screens.items()}
            facts = (screens_fact(rule, side, screens, False),)
        aimed = tuple(screened.get(s.firer, s) for s in f.shots)
        return evolve(f, shots=aimed, waiting=rest, step=f.step if rest else VolleyStep.FIRE), facts
    if f.step != VolleyStep.CASUALTIES:
        raise RuleViolation("HA7", "this volley waits for dice, not a decision")
    if choice is None:
        picked_units = default_casualties(f, ctx, side)
    else:
        picked_units = _allocation(f, ctx, side).check(f.nation(side), as_ids(choice), board or ctx.board(f.pieces))
    f = evolve(f, chosen=f.chosen + ((side, tuple(picked_units)),), waiting=rest)
    facts = (Fact("casualties", "HA7", tuple(picked_units), default=default, side=side),)
    lost = sum(n for s, _, n in f.groups if s == side) - len(picked_units)
    if lost and _owner_order(ctx):
        # HA7: the hits that found no legal target in the order the owner placed them.
        facts += (Fact("hits_lost", _lost_rule(f, ctx, side), count=lost, side=side),)
    if rest:
        return f, facts
    nf, more = _end(f, ctx)
    return nf, facts + more


def _why_not(f: Fight, board: Board, rule: str, legal: dict[str, list[str]]) -> Callable[[str, str], RuleViolation]:
    """The rule an illegal target breaks: a hunter must attack a detected submarine still
    fighting (AS3, SM4); any other firer is told by HA1-HA3 and NC6."""
    hunters = hunting(f.kind)

    def why(firer: str, target: str) -> RuleViolation:
        side = f.side_of(firer)
        if hunters is not None and side == hunters:
            return RuleViolation(
                rule,
                f"{firer} must attack a detected submarine still fighting, not {target} "
                f"(legal: {', '.join(legal[firer])})",
            )
        enemies = [board.units[p.id] for p in f.side(other(side))]
        return targets_rules.why_not_target(
            board, board.units[firer], board.units[target], enemies, rule, legal.get(firer)
        )

    return why


def _end(f: Fight, ctx: Context) -> tuple[Fight, Facts]:
    """F3, NC5, NC2, NC3: every hit of the volley is taken together; a capital ship's first hit
    damages it; a hit on a unit already sunk this volley is lost."""
    rule = fire_rule(f)
    taken = Counter(f.hits) + Counter(u for _, units in f.chosen for u in units)
    facts: list[Fact] = []
    sunk: set[str] = set()

    def hit(p: Piece) -> Piece:
        n = taken.get(p.id)
        if not n:
            return p
        n = min(n, ctx.hits_left(p))
        facts.append(Fact("hit", rule, (p.id,), n))
        after = _struck(p, n, ctx)
        if after is None:
            sunk.add(p.id)
            facts.append(Fact("sunk", rule, (p.id,)))
            return p
        return after

    attackers = tuple(hit(p) for p in f.attackers)
    defenders = tuple(hit(p) for p in f.defenders)
    f = evolve(
        f,
        attackers=tuple(p for p in attackers if p.id not in sunk),
        defenders=tuple(p for p in defenders if p.id not in sunk),
        opening=tuple(u for u in f.opening if u not in sunk),
        step=VolleyStep.DONE,
        waiting=(),
        shots=(),
        hits=(),
        groups=(),
        chosen=(),
    )
    return f, tuple(facts)
