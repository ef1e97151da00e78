"""Convoy battles (CV2-CV7) as a pure state machine: merchant defence, the escort search, the
one round against the detecting units (the shared volley) and the convoy table."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from domain.board import Board
from domain.errors import RuleViolation
from domain.procedures import volley
from domain.procedures.base import (
    Context,
    Decision,
    Die,
    DieGroup,
    Ended,
    Fact,
    Facts,
    Need,
    Outcome,
    Piece,
    Roll,
    Side,
    as_ids,
    check_counts,
    evolve,
    keeps_hash,
    left_by_type,
    rolling_order,
    searcher_dice,
)
from domain.procedures.fight import Fight, VolleyStep
from domain.rules import convoy as convoy_rules
from domain.rules import hits as hits_rules
from domain.rules.convoy import Roll as Spec


class ConvoyStep(Enum):
    MERCHANT_DEFENCE = "merchant_defence"
    MERCHANT_CASUALTY = "merchant_casualty"
    SEARCHERS = "searchers"
    SEARCH = "search"
    VOLLEY = "volley"
    CONVOY_TABLE = "convoy_table"
    ENDED = "ended"


@keeps_hash
@dataclass(frozen=True)
class ConvoyBattle:
    """An enemy's submarines attacking the NTR of the nation whose collect phase it is."""

    step: ConvoyStep
    attacker: str
    defender: str
    subs: tuple[str, ...]  # CV1: the taking-part submarines
    zone_subs: tuple[Piece, ...]  # CV4: all of the attacker's submarines in the zone fight
    eligible: tuple[Piece, ...]  # CV3: the units that may search (a board fact)
    ntr: int  # CV5: the NTR in the zone
    searchers: tuple[Piece, ...] = ()
    fight: Fight | None = None
    ntr_destroyed: int = 0
    detecting: tuple[str, ...] = ()
    defender_sunk: tuple[str, ...] = ()
    started_subs: int = 0
    result: str = ""


def start(
    ctx: Context,
    attacker: str,
    defender: str,
    subs: tuple[str, ...],
    zone_subs: tuple[Piece, ...],
    eligible: tuple[Piece, ...],
    ntr: int,
) -> ConvoyBattle:
    """CV1: a declared convoy attack waits for the NTR owner's merchant defence (CV2)."""
    return ConvoyBattle(
        ConvoyStep.MERCHANT_DEFENCE,
        attacker,
        defender,
        tuple(subs),
        tuple(sorted(zone_subs)),
        tuple(sorted(eligible)),
        ntr,
        started_subs=len(zone_subs),
    )


def _taking_part(s: ConvoyBattle) -> tuple[Piece, ...]:
    return tuple(p for p in s.zone_subs if p.id in s.subs)


def need(s: ConvoyBattle, ctx: Context) -> Need:
    rs = ctx.ruleset
    if s.step == ConvoyStep.MERCHANT_DEFENCE:
        group = DieGroup(
            ("merchant_defence",),
            1,
            rs.faces_for("merchant_defence"),
            kind="total_at_least",
            target=rs.merchant_defence_sinks_on_total,
            dice=rs.merchant_defence_dice,
        )
        # The dice are rolled together and recorded as one roll (their total counts).
        return Roll(s.defender, "CV2", (group,), "merchant_defence")
    if s.step == ConvoyStep.MERCHANT_CASUALTY:
        return Decision(s.attacker, "CV2", "casualties", (("units", s.subs),), tuple(_merchant_default(s, ctx)))
    if s.step == ConvoyStep.SEARCHERS:
        ids = tuple(p.id for p in s.eligible)
        return Decision(s.defender, "CV3", "searchers", (("units", ids),), ids)
    if s.step == ConvoyStep.SEARCH:
        groups, dice = _search_dice(s, ctx)
        return Roll(s.defender, "CV3", groups, "convoy_search", dice)
    if s.step == ConvoyStep.VOLLEY:
        assert s.fight is not None
        return volley.need(s.fight, ctx)
    if s.step == ConvoyStep.CONVOY_TABLE:
        groups, dice = _table_dice(s, ctx)
        return Roll(s.attacker, "CV5", groups, "convoy_table", dice)
    return Ended(outcome(s, ctx))


def _search_dice(s: ConvoyBattle, ctx: Context) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    """CV3: one die per searcher (see `searcher_dice`)."""
    return searcher_dice(
        ctx, "convoy_search", s.attacker, s.searchers, s.zone_subs, convoy_rules.search_roll, "detects"
    )


def alike_runs(searchers: tuple[Piece, ...], named: Iterable[str]) -> list[list[int]]:
    """For the odds only (`domain.procedures.engine`): the places in `searchers` in runs of
    units alike (equal but for their IDs: nation, type, damage) whose IDs follow one another
    among `named` (every ID the position names), each run in the order of its IDs.

    CV3, CV4: which units of a run detect changes nothing but their names. After the search a
    unit that failed is read only in the outcome's count of units left by type (`outcome`),
    and the detecting ones are compared by ID only among themselves and with the submarines;
    no unit of another run has an ID between two of a run. So any k of a run detecting lead,
    renamed, to the same battle, and the odds may take its first k for all of them."""
    place = {u: i for i, u in enumerate(sorted(set(named)))}
    runs: list[list[int]] = []
    for i in sorted(range(len(searchers)), key=lambda i: place[searchers[i].id]):
        if runs:
            last = searchers[runs[-1][-1]]
            p = searchers[i]
            if place[p.id] == place[last.id] + 1 and p._replace(id="") == last._replace(id=""):
                runs[-1].append(i)
                continue
        runs.append([i])
    return runs


def _merchant_default(s: ConvoyBattle, ctx: Context) -> list[str]:
    board = ctx.board(s.zone_subs)
    return hits_rules.default_casualties(board, [board.units[u] for u in s.subs], 1)


def _table_dice(s: ConvoyBattle, ctx: Context) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    """CV5: one die per taking-part submarine afloat, in the order they were declared; alike
    submarines (same type and nation) share a group, since their table (TE3) is the same."""
    key = ("convoy_table", s.subs, s.zone_subs)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = _table(s, ctx)
    return found


def _table(s: ConvoyBattle, ctx: Context) -> tuple[tuple[DieGroup, ...], tuple[Die, ...]]:
    board = ctx.board(s.zone_subs)
    faces = ctx.ruleset.faces_for("convoy_table")
    tables: dict[tuple[str, ...], tuple[tuple[int, ...], int]] = {}
    afloat = {p.id: p for p in _taking_part(s)}
    keyed: list[tuple[tuple[str, ...], Die]] = []
    for uid in s.subs:
        p = afloat.get(uid)
        if p is None:
            continue
        unit = board.units[p.id]
        table = tuple(convoy_rules.convoy_table(board, unit, v)[1] for v in range(1, faces + 1))
        key = ("ntr", p.type, p.nation)
        tables[key] = (table, tables.get(key, (table, 0))[1] + 1)
        modifiers = convoy_rules.convoy_table(board, unit, 1)[2]
        keyed.append((key, Die(p.id, Spec(p.id, 0, 0, modifiers), 0)))
    keys = sorted(tables)
    groups = tuple(DieGroup(key, tables[key][1], faces, kind="table", table=tables[key][0], cap=None) for key in keys)
    return groups, tuple(evolve(d, group=keys.index(key)) for key, d in keyed)


def decide(
    s: ConvoyBattle, ctx: Context, choice: object | None, side: Side | None = None, board: Board | None = None
) -> tuple[ConvoyBattle, Facts]:
    """The submarine merchant defence sinks (CV2), the searchers (CV3), or a volley's targets,
    screens or casualties (CV4, HA1-HA7: `side` and `board` as in `volley.decide`); None takes
    the default."""
    if s.step == ConvoyStep.MERCHANT_CASUALTY:
        own = ctx.board(s.zone_subs)
        candidates = [own.units[u] for u in s.subs]
        if choice is None:
            chosen = hits_rules.default_casualties(own, candidates, 1)
        else:
            chosen = hits_rules.check_casualties(board or own, "CV2", s.attacker, candidates, 1, as_ids(choice))
        return _merchant_loss(s, ctx, chosen[0], choice is None)
    if s.step == ConvoyStep.SEARCHERS:
        ids = [p.id for p in s.eligible] if choice is None else as_ids(choice)
        unknown = [u for u in ids if u not in {p.id for p in s.eligible}]
        if unknown or len(set(ids)) != len(ids):
            raise RuleViolation("CV3", f"{', '.join(unknown) or 'a unit named twice'} cannot search here")
        ids = rolling_order(ctx, s.eligible, ids)
        picked = tuple(next(p for p in s.eligible if p.id == u) for u in ids)
        ns = evolve(s, searchers=picked, step=ConvoyStep.SEARCH)
        facts: Facts = (Fact("searchers", "CV3", tuple(ids), default=choice is None, side="defender"),)
        if not picked:
            nt, more = _to_table(ns, ctx)
            return nt, facts + (Fact("detected", "CV3"),) + more
        return ns, facts
    if s.step == ConvoyStep.VOLLEY:
        assert s.fight is not None
        return volley.through(s, ctx, volley.decide(s.fight, ctx, choice, side, board), after_volley)
    raise RuleViolation("CV7", f"the convoy battle waits for {s.step.value}, not a decision")


def _merchant_loss(s: ConvoyBattle, ctx: Context, uid: str, default: bool) -> tuple[ConvoyBattle, Facts]:
    """CV2, CV7: the chosen submarine is sunk; with none left taking part the battle ends."""
    s = evolve(s, subs=tuple(u for u in s.subs if u != uid), zone_subs=tuple(p for p in s.zone_subs if p.id != uid))
    facts: Facts = (
        Fact("casualties", "CV2", (uid,), default=default, side="attacker"),
        Fact("hit", "CV2", (uid,), 1),
        Fact("sunk", "CV2", (uid,)),
    )
    if not s.subs:
        return evolve(s, step=ConvoyStep.ENDED, result="merchant_defence"), facts + (Fact("ended", "CV7"),)
    return _to_search(s, ctx, facts)


def _to_search(s: ConvoyBattle, ctx: Context, facts: Facts) -> tuple[ConvoyBattle, Facts]:
    """CV3: with no eligible searcher the empty search is taken for the NTR owner."""
    if not s.eligible:
        ns, more = _to_table(s, ctx)
        searched = (Fact("searchers", "CV3", default=True, side="defender"), Fact("detected", "CV3"))
        return ns, facts + searched + more
    return evolve(s, step=ConvoyStep.SEARCHERS), facts


def _to_table(s: ConvoyBattle, ctx: Context) -> tuple[ConvoyBattle, Facts]:
    """CV5, CV7: the taking-part submarines afloat roll the convoy table; none left ends it."""
    if _taking_part(s):
        return evolve(s, step=ConvoyStep.CONVOY_TABLE, fight=None), ()
    return evolve(s, step=ConvoyStep.ENDED, fight=None, result="submarines_sunk"), (Fact("ended", "CV7"),)


def after_volley(s: ConvoyBattle, ctx: Context) -> tuple[ConvoyBattle, Facts]:
    """CV4, CV5: once the round's volley is over, the submarines left go on to the convoy
    table; a state whose volley is not over is returned as it is."""
    assert s.fight is not None
    if s.fight.step != VolleyStep.DONE:
        return s, ()
    f = s.fight
    alive = {p.id for p in f.attackers}
    afloat = {p.id for p in f.defenders}
    sunk = tuple(u for u in s.detecting if u not in afloat)
    # The units still afloat stay named (as the battle read back from the board has them).
    s = evolve(
        s,
        zone_subs=f.attackers,
        subs=tuple(u for u in s.subs if u in alive),
        detecting=tuple(u for u in s.detecting if u in afloat),
        defender_sunk=s.defender_sunk + sunk,
    )
    return _to_table(s, ctx)


def roll(s: ConvoyBattle, ctx: Context, counts: tuple[tuple[int, ...], ...]) -> tuple[ConvoyBattle, Facts]:
    """The dice of the step: merchant defence (CV2), the search (CV3), the round (CV4) or the
    convoy table (CV5), as the number of dice of each group per result."""
    need_ = need(s, ctx)
    if not isinstance(need_, Roll):
        raise RuleViolation("CV7", f"the convoy battle waits for {s.step.value}, not dice")
    check_counts(need_.groups, counts)
    if s.step == ConvoyStep.MERCHANT_DEFENCE:
        if not counts[0][1]:
            return _to_search(s, ctx, (Fact("merchant_defence", "CV2", (), 0),))
        facts: Facts = (Fact("merchant_defence", "CV2", (), 1),)
        if len(s.subs) == 1:
            # A single taking-part submarine: nothing to choose (taken as the default).
            ns, more = _merchant_loss(s, ctx, s.subs[0], True)
            return ns, facts + more
        return evolve(s, step=ConvoyStep.MERCHANT_CASUALTY), facts
    if s.step == ConvoyStep.SEARCH:
        # CV4: the detecting units fight in the order of their IDs, whatever order they
        # searched in: the order of the round's dice, as `pending` lists them and as the
        # battle read back from the log has them.
        found = tuple(sorted(p for p, c in zip(s.searchers, counts, strict=True) if c[1]))
        facts = (Fact("detected", "CV3", tuple(p.id for p in found)),)
        if not found:
            ns, more = _to_table(s, ctx)
            return ns, facts + more
        fight = Fight("convoy", s.attacker, s.defender, s.zone_subs, found)
        begun = volley.begin(fight, ctx, "main")
        facts += (Fact("round", "CV4", (), 1),)
        if begun is None:
            ns, more = _to_table(s, ctx)
            return ns, facts + more
        detecting = tuple(p.id for p in found)
        return evolve(s, step=ConvoyStep.VOLLEY, fight=begun[0], detecting=detecting), facts + begun[1]
    if s.step == ConvoyStep.VOLLEY:
        assert s.fight is not None
        return volley.through(s, ctx, volley.roll(s.fight, ctx, counts), after_volley)
    total = sum(v * n for g, c in zip(need_.groups, counts, strict=True) for v, n in zip(g.values, c, strict=True))
    destroyed = min(total, s.ntr)
    facts = (Fact("ntr_destroyed", "CV5", (), destroyed, total=total), Fact("ended", "CV7"))
    return evolve(s, step=ConvoyStep.ENDED, ntr_destroyed=destroyed, result="convoy_table"), facts


def outcome(s: ConvoyBattle, ctx: Context) -> Outcome:
    left = s.zone_subs
    return Outcome(
        procedure="convoy",
        result=s.result,
        attacker_left=left_by_type(ctx, left),
        defender_left=left_by_type(ctx, tuple(p for p in s.eligible if p.id not in s.defender_sunk)),
        attacker_units_lost=s.started_subs - len(left),
        defender_units_lost=len(s.defender_sunk),
        ntr_destroyed=s.ntr_destroyed,
        holder="both" if left else "defender",
    )
