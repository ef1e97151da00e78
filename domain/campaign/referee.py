"""The referee on the pure procedures (`domain.procedures`): a battle's recorded state is read into
the procedure's frozen value, the procedure gives the transition for one input (a decision, or
the dice of one roll step), and the facts it returns are recorded as the events the log has
always held. The rules live in the procedures; what stays here is rolling and recording each
die (D1-D4) and naming the facts as events."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from domain.board import Board, Unit
from domain.campaign.base import CampaignBase
from domain.campaign.battle_events import (
    BattleAdvanced,
    BattleEnded,
    CasualtiesChosen,
    HitsLost,
    HuntersChosen,
    NavalHitsScored,
    RoundStarted,
    ScreeningChosen,
    SubmarinesDetected,
    SubmarinesSubmerged,
    TargetHit,
    TargetsChosen,
    UnitHit,
)
from domain.campaign.procedure import Procedure
from domain.campaign.procedure import Step as StepName
from domain.dice import DiceSource
from domain.errors import DiceError
from domain.rules import convoy as convoy_rules
from domain.text import listed, plural, possessive, side_nations, type_name

if TYPE_CHECKING:
    from domain.procedures.base import Context, Die, Fact, Facts, Need, Roll, Side
    from domain.procedures.fight import Fight, VolleyStep

# The pure procedures (`domain.procedures`) are imported with the first battle a process
# referees, not with the aggregate: a command that only reads the board (`tracker state`, a
# report, the log) never loads them, a twentieth of its start.


@cache
def _procedures() -> dict[str, ModuleType]:
    from domain.procedures import asw, convoy, interception, naval

    return {"asw": asw, "interception": interception, "convoy": convoy, "naval": naval}


def pure(kind: str) -> ModuleType:
    """The procedure the referee runs on its pure transitions for a battle of this kind (the
    kind a battle records)."""
    return _procedures()[kind]


class _StepNames(NamedTuple):
    """The names the log gives the steps of each procedure (BattleAdvanced.step): `by_kind`,
    by the procedure's own step; a step not named there is its volley's (`volley`), and the
    opening volley's choices and dice are named apart (`opening`)."""

    by_kind: dict[str, dict[Any, StepName]]
    volley: dict[VolleyStep, StepName]
    opening: tuple[VolleyStep, ...]


@cache
def _step_names() -> _StepNames:
    from domain.procedures import asw, convoy, interception, naval
    from domain.procedures.fight import VolleyStep

    by_kind: dict[str, dict[Any, StepName]] = {
        "convoy": {
            convoy.ConvoyStep.MERCHANT_DEFENCE: "merchant_defence",
            convoy.ConvoyStep.MERCHANT_CASUALTY: "merchant_casualty",
            convoy.ConvoyStep.SEARCHERS: "search",
            convoy.ConvoyStep.SEARCH: "search",
            convoy.ConvoyStep.CONVOY_TABLE: "convoy_table",
        },
        "interception": {
            interception.InterceptionStep.SEARCHERS: "search",
            interception.InterceptionStep.SEARCH: "search",
            interception.InterceptionStep.DETECT: "detect",
            interception.InterceptionStep.DECIDE: "decide",
            interception.InterceptionStep.CONTINUE: "continue",
        },
        "asw": {asw.AswStep.SEARCHERS: "search", asw.AswStep.SEARCH: "search", asw.AswStep.DECIDE: "decide"},
        "naval": {naval.NavalStep.DECIDE: "decide"},
    }
    volley: dict[VolleyStep, StepName] = {
        VolleyStep.TARGETS: "targets",
        VolleyStep.SCREENING: "screening",
        VolleyStep.FIRE: "fire",
        VolleyStep.CASUALTIES: "casualties",
        VolleyStep.DONE: "casualties",  # the hits of a volley just over are placed, if any
    }
    return _StepNames(by_kind, volley, (VolleyStep.TARGETS, VolleyStep.SCREENING, VolleyStep.FIRE))


_SEARCH_RULES = {"convoy": "CV3", "interception": "SM2", "asw": "AS2"}
# The facts that are a nation's choice at its step, each recorded with the nation and whether
# it was the default.
_CHOICES = frozenset({"searchers", "targets", "screens", "submerged", "casualties"})


class Asked(NamedTuple):
    """What a procedure waits for at its step, as its `need` says: the nations waited for, in
    order (each of those who decide at this step, one after the other, or those whose units
    roll the dice, in rolling order), the rule, and the needs themselves (a decision per
    nation, or the one roll, its dice in the order they are consumed)."""

    nations: tuple[str, ...]
    rule: str
    needs: tuple[Need, ...]


# Contexts by ruleset, scenario and technology: their memo (who fires, the dice of a volley)
# serves every battle fought under the same rules, so the referee computes each once.
_contexts: OrderedDict[tuple[Any, ...], Context] = OrderedDict()
_MEMO_LIMIT = 20_000  # entries: past this a memo starts afresh (a server runs for weeks)

# The state each recent transition left, by the hash of the last event it recorded (which names
# a whole history), the battle and the board: the next step of that battle starts from it. Kept
# outside the aggregate, whose state is plain data (snapshots and undo copy it).
_kept: OrderedDict[tuple[Any, ...], tuple[Any, Context]] = OrderedDict()


@contextmanager
def afresh() -> Iterator[None]:
    """Within: as in a new process, nothing kept between steps (the states recent transitions
    left, the contexts and their memos), so every battle is read from its recorded state;
    after: this process's own again. The state a command leaves must be the state the log
    rebuilds, and a test compares the two this way."""
    kept, contexts = _kept.copy(), _contexts.copy()
    _kept.clear()
    _contexts.clear()
    try:
        yield
    finally:
        _kept.clear()
        _kept.update(kept)
        _contexts.clear()
        _contexts.update(contexts)


def context_for(board: Board) -> Context:
    """The procedures' context for this board's ruleset, scenario and technology levels."""
    tech = tuple(sorted((n, tuple(sorted(levels.items()))) for n, levels in board.tech.items()))
    key = (id(board.ruleset), id(board.scenario), tech)
    ctx = _contexts.get(key)
    if ctx is None or ctx.ruleset is not board.ruleset or ctx.scenario is not board.scenario:
        from domain.procedures.base import Context

        ctx = _contexts[key] = Context(board.ruleset, board.scenario, {n: dict(t) for n, t in tech})
        if len(_contexts) > 64:
            _contexts.popitem(last=False)
    elif len(ctx.memo) > _MEMO_LIMIT:
        ctx.memo.clear()
    return ctx


class Step(NamedTuple):
    """A transition recorded: the state after it, its context, the facts, and the successes
    among the dice rolled for it."""

    state: Any
    ctx: Context
    facts: Facts
    successes: int = 0
    values: tuple[int, ...] = ()  # every die's value, in rolling order


class Referee(CampaignBase):
    """Runs a procedure's step on its pure transition and records what it returns."""

    def _pure(self, b: Procedure) -> tuple[Any, Context]:
        """The battle as the procedure's frozen state, at the step it waits for: the state the
        last transition left when nothing was recorded since (the same last event), otherwise
        read from the recorded state."""
        kept = _kept.get(self._kept_key(b))
        if kept is not None:
            return kept
        from domain.procedures.position import from_battle

        board = self.board()
        state, ctx, _ = from_battle(board, b, self._committed, context_for(board))
        return state, ctx

    def procedure_state(self, battle: int) -> Any:
        """A battle in progress as the referee runs its next step on it: the procedure's frozen
        state (`domain.procedures`)."""
        return self._pure(self.battles[str(battle)])[0]

    def _kept_key(self, b: Procedure) -> tuple[Any, ...]:
        """What names the board a kept state was read from: the last event (a whole history)
        and the board's content, for a board set up by hand since."""
        # map() over the plain dicts: this runs twice a step, for every unit on the board.
        units = (tuple(self.units), tuple(map(tuple, map(dict.values, self.units.values()))))
        tech = (tuple(self.tech), tuple(map(tuple, map(dict.items, self.tech.values()))))
        ntr = (tuple(self.ntr), tuple(map(tuple, map(dict.items, self.ntr.values()))))
        return (self.last_hash, b["id"], hash((units, tech, ntr, tuple(self.committed))))

    def _opened(self, battle: int) -> None:
        """A procedure just started waits at its first step, recorded as it opens."""
        b = self.battles[str(battle)]
        state, ctx = self._pure(b)
        self._record_facts(b, state, ctx, ())

    def _searched(self, b: Procedure, chosen: list[str] | None, dice: DiceSource) -> tuple[tuple[str, ...], Facts]:
        """A search step (AS2, SM2-SM3, CV3): the searchers named (None: every eligible one) and
        their dice. Returns the searchers in rolling order and the facts of the roll."""
        searched = self._decided(b, chosen)
        searchers = searched.facts[0].units
        if not searchers:
            return (), searched.facts
        return searchers, self._rolled(b, dice, searched.state, searched.ctx).facts

    def _decided(self, b: Procedure, choice: object | None, side: Side | None = None) -> Step:
        """One decision (None: the default) for the step the battle waits for, recorded; the
        state after it, its context and the facts."""
        state, ctx = self._pure(b)
        # A choice given is checked against the whole board, to name a unit outside the fight.
        board = self.board() if choice is not None else None
        state, facts = pure(b["kind"]).decide(state, ctx, choice, side, board)
        self._record_facts(b, state, ctx, facts)
        return Step(state, ctx, facts)

    def _rolled(self, b: Procedure, dice: DiceSource, state: Any = None, ctx: Context | None = None) -> Step:
        """The dice of the roll step the battle waits for: each die rolled and recorded (D1-D3),
        a selective hit recorded as it lands, then the procedure's transition for them."""
        if state is None or ctx is None:
            state, ctx = self._pure(b)
        from domain.procedures.base import Roll

        procedure = pure(b["kind"])
        need = procedure.need(state, ctx)
        assert isinstance(need, Roll)
        _enough_typed(b, need, dice)
        counts = [[0] * len(g.values) for g in need.groups]
        values: list[int] = []
        if need.kind == "merchant_defence":
            # CV2: the merchant defence dice are one roll, their total against the target.
            (group,) = need.groups
            rolled = self._roll_merchant_defence(b, group.dice, group.target, dice)
            counts[0][1 if sum(rolled) >= group.target else 0] += 1
            values += rolled
        board = self.board()
        # Whose units a volley's dice fire at (a search's dice and the convoy table's fire at none).
        fired_at = self._fired_at(b) if need.dice and not need.kind.endswith(("search", "table")) else {}
        for die in need.dice:
            if need.kind == "convoy_table":
                value = self._roll_convoy_table(b, board, die, dice)
                group = need.groups[die.group]
                counts[die.group][group.values.index(group.table[value - 1])] += 1
            else:
                value, hit = self._roll_die(b, need, board.units[die.unit], die, dice, fired_at)
                counts[die.group][1 if hit else 0] += 1
            values.append(value)
        state, facts = procedure.roll(state, ctx, tuple(tuple(c) for c in counts))
        self._record_facts(b, state, ctx, facts)
        successes = sum(c[1] for c, g in zip(counts, need.groups, strict=True) if g.kind == "at_most")
        return Step(state, ctx, facts, successes, tuple(values))

    def _roll_merchant_defence(self, b: Procedure, count: int, sinks_on: int, dice: DiceSource) -> list[int]:
        values: list[int] = self.roll(
            dice,
            roller=b["defender"],
            rule="CV2",
            purpose=f"{b['defender']} merchant defence in {b['zone']}",
            kind="merchant_defence",
            count=count,
            success_when="total",
            battle=b["id"],
            describe=lambda v: f"total {sum(v)}: " + ("sinks one submarine" if sum(v) >= sinks_on else "no effect"),
        )
        return values

    def _roll_convoy_table(self, b: Procedure, board: Board, die: Die, dice: DiceSource) -> int:
        sub = board.units[die.unit]

        def describe(values: list[int]) -> str:
            adjusted, destroyed, _ = convoy_rules.convoy_table(board, sub, values[0])
            if adjusted == values[0]:
                return f"{destroyed} NTR"
            return f"{values[0]}{adjusted - values[0]:+d}={adjusted}: {destroyed} NTR"

        (value,) = self.roll(
            dice,
            roller=sub.nation,
            rule="CV5",
            purpose=f"{sub.id} attacks the convoy in {b['zone']}",
            kind="convoy_table",
            modifiers=die.spec.modifiers,
            battle=b["id"],
            unit=sub.id,
            describe=describe,
        )
        return int(value)

    def _fired_at(self, b: Procedure) -> dict[str, str]:
        """NC1, F5: whose units the dice of each unit fighting fire at, where they hit no chosen
        target: the other side's, named by the nations of its units still fighting, "Britain's
        and France's units" (`sides_named_whole`). Recorded before the key: none here, and the
        die names the nation deciding for the other side alone."""
        if not self.ruleset.sides_named_whole:
            return {}
        fighting = {side: self._active(b, side) for side in ("attacker", "defender")}
        order = self.scenario.turn_order
        fired_at: dict[str, str] = {}
        for side, other in (("attacker", "defender"), ("defender", "attacker")):
            nations = side_nations([u.nation for u in fighting[other]], self._nation(b, other), order)
            units = f"{listed([possessive(n) for n in nations])} units"
            fired_at.update(dict.fromkeys((u.id for u in fighting[side]), units))
        return fired_at

    def _roll_die(
        self, b: Procedure, need: Roll, unit: Unit, die: Die, dice: DiceSource, fired_at: dict[str, str]
    ) -> tuple[int, bool]:
        # D3: the die's unit by its type in words ("aircraft carrier", `purposes_in_words`);
        # recorded before the key, by its ID, which `verify` compares exactly.
        named = f"{unit.id} ({type_name(unit.type) if self.ruleset.purposes_in_words else unit.type})"
        if need.kind == "asw_search":
            purpose = f"{named} searches for {die.against} in {b['zone']}"
        elif need.kind == "interception_search":
            purpose = f"{named} interception search in {b['zone']}"
        elif need.kind == "convoy_search":
            purpose = f"{named} convoy search in {b['zone']}"
        elif die.against:
            screen = f", screened by {die.screen}" if die.screen else ""
            purpose = f"{named} fires at {die.against}{screen}"
        else:
            enemy = b["defender"] if unit.nation == b["attacker"] else b["attacker"]
            units = fired_at.get(unit.id) or f"{enemy}'s units"
            purpose = f"{named} fires at {units}"
        value, hit = self._roll_one(
            dice, unit, die.spec, rule=need.rule, purpose=purpose, kind=need.kind, battle=b["id"]
        )
        if hit and die.hit_rule:
            self._record(
                TargetHit,
                battle=b["id"],
                firer=die.unit,
                target=die.against,
                unit=die.screen or die.against,
                rule=die.hit_rule,
            )
        return value, hit

    def _record_facts(self, b: Procedure, state: Any, ctx: Context, facts: Facts) -> None:
        """The facts of one transition as events, in order; then the step the battle waits at
        (BattleAdvanced), unless it ended or waits where it did."""
        hits: list[Fact] = []
        for fact in facts:
            if fact.kind in ("hit", "sunk"):
                # A volley's hits are taken together, recorded once all of them are known.
                hits.append(fact)
                continue
            if hits:
                self._record_hits(b, hits)
                hits = []
            if fact.kind == "ended":
                self._record(BattleEnded, battle=b["id"], rule=fact.rule, survivors=self._survivors(b, facts))
                return
            self._record_fact(b, fact, state)
        if hits:
            self._record_hits(b, hits)
        step, waiting, rule = self._moment(b, state, ctx)
        if (step, waiting, rule) != (b["step"], b["waiting"], b["rule"]):
            self._record(BattleAdvanced, battle=b["id"], step=step, waiting=waiting, rule=rule)
        # The next step starts from this state (the recorded one reads back to it), unless an
        # event is recorded before it: the last event names the state it belongs to.
        _kept[self._kept_key(b)] = (state, ctx)
        if len(_kept) > 16:
            _kept.popitem(last=False)

    def _record_fact(self, b: Procedure, fact: Fact, state: Any) -> None:
        """One fact as its event (the procedures' own facts are named where they are run)."""
        battle = b["id"]
        nation = self._nation(b, fact.side) if fact.side else ""
        if fact.kind in _CHOICES:
            self._record_choice(b, fact, nation)
        elif fact.kind == "detected":
            found = set(fact.units)
            self._record(
                SubmarinesDetected,
                battle=battle,
                detected=list(fact.units),
                undetected=[u for u in b["subs"] if u not in found and u in self.units],
                default=fact.default,
                rule=fact.rule,
            )
        elif fact.kind == "round":
            self._record(RoundStarted, battle=battle, round=b["round"] + 1, rule=fact.rule)
        elif fact.kind == "targets_open":
            step = "opening_targets" if fact.rule == "NC2" else "targets"
            waiting = [self._nation(b, side) for side in fact.units]
            self._record(BattleAdvanced, battle=battle, step=step, waiting=waiting, rule=fact.rule)
        elif fact.kind == "hits":
            self._record(
                NavalHitsScored,
                battle=battle,
                side=fact.side,
                nation=nation,
                firing_class=fact.units[1],
                hits=fact.count,
                rule=fact.rule,
            )
        elif fact.kind == "hits_lost":
            self._record(HitsLost, battle=battle, side=fact.side, nation=nation, hits=fact.count, rule=fact.rule)
        else:  # pragma: no cover - every fact the pure procedures return is named
            raise AssertionError(fact.kind)

    def _record_choice(self, b: Procedure, fact: Fact, nation: str) -> None:
        """A nation's choice (or its default) as its event: searchers, targets, screens, the
        submarines submerging or the casualties."""
        battle = b["id"]
        if fact.kind == "searchers":
            self._record(
                HuntersChosen,
                battle=battle,
                nation=nation,
                units=list(fact.units),
                default=fact.default,
                rule=fact.rule,
            )
        elif fact.kind == "targets":
            self._record(
                TargetsChosen,
                battle=battle,
                nation=nation,
                targets=dict(fact.pairs),
                default=fact.default,
                rule=fact.rule,
            )
        elif fact.kind == "screens":
            self._record(
                ScreeningChosen,
                battle=battle,
                nation=nation,
                screens=dict(fact.pairs),
                default=fact.default,
                rule=fact.rule,
            )
        elif fact.kind == "submerged":
            # The default submerges every detected submarine, in the order they were detected.
            units = [u for u in b["detected"] if u in fact.units] if fact.default else list(fact.units)
            self._record(
                SubmarinesSubmerged,
                battle=battle,
                nation=nation,
                units=units,
                default=fact.default,
                rule=fact.rule,
            )
        else:
            self._record(
                CasualtiesChosen,
                battle=battle,
                side=fact.side,
                nation=nation,
                units=list(fact.units),
                default=fact.default,
                rule=fact.rule,
            )

    @staticmethod
    def _nation(b: Procedure, side: str) -> str:
        """HA7: the nation the battle names for a side."""
        return b["attacker"] if side == "attacker" else b["defender"]

    def _record_hits(self, b: Procedure, facts: list[Fact]) -> None:
        """F3, NC5: a volley's hits taken together, one UnitHit per hit (the last of a unit's
        sinking it), in the order they landed: selective hits first, then the casualties."""
        landed = {f.units[0]: f for f in facts if f.kind == "hit"}
        sunk = {f.units[0] for f in facts if f.kind == "sunk"}
        order = list(b["pending_hits"]) + [u for side in ("attacker", "defender") for u in b["chosen"].get(side, [])]
        for uid in dict.fromkeys(order + sorted(landed)):
            fact = landed.get(uid)
            if fact is None:
                continue
            for i in range(fact.count):
                last = i + 1 == fact.count
                self._record(UnitHit, battle=b["id"], unit=uid, sunk=last and uid in sunk, rule=fact.rule)

    def _in_zone(self, b: Procedure) -> list[str]:
        """The submarines of the procedure still in its zone."""
        return [u for u in b["subs"] if u in self.units and self.units[u]["at"] == b["zone"]]

    def _survivors(self, b: Procedure, facts: Facts) -> list[str]:
        """The units a procedure's end names as left: the submarines staying in the zone (not
        those going on, SM5)."""
        going = {u for f in facts if f.kind == "continued" for u in f.units}
        return [u for u in self._in_zone(b) if u not in going]

    def _asks(self, b: Procedure, state: Any, ctx: Context) -> Asked:
        """What the battle's procedure asks for at its step, as its `need` says (see `Asked`):
        who is waited for and the order of the dice come from here, and nowhere else."""
        from domain.procedures.base import Decision, Roll
        from domain.procedures.fight import VolleyStep

        procedure = pure(b["kind"])
        need = procedure.need(state, ctx)
        if isinstance(need, Roll):
            fight = getattr(state, "fight", None)
            if fight is None or fight.step != VolleyStep.FIRE:
                return Asked((need.roller,), need.rule, (need,))
            # A volley's dice are rolled by the sides whose units fire, in the order they roll.
            sides = dict.fromkeys(fight.side_of(die.unit) for die in need.dice)
            return Asked(tuple(self._nation(b, side) for side in sides), need.rule, (need,))
        if not isinstance(need, Decision):
            return Asked((), "", ())
        # Nations that decide at the same step (targets, screens, casualties, a naval battle's
        # decisions), each in turn: the next one's need as it stands once the one before takes
        # its default, on the frozen state (nothing is recorded).
        asked = [need]
        while True:
            state, _ = procedure.decide(state, ctx, None)
            after = procedure.need(state, ctx)
            if not isinstance(after, Decision) or after.kind != need.kind:
                break
            if any(after.chooser == d.chooser for d in asked):
                break
            asked.append(after)
        return Asked(tuple(d.chooser for d in asked), need.rule, tuple(asked))

    def _moment(self, b: Procedure, state: Any, ctx: Context) -> tuple[str, list[str], str]:
        """The step a battle waits at, as recorded: its name, the nations it waits for, the rule
        (both as its procedure asks, `_asks`)."""
        kind = b["kind"]
        asked = self._asks(b, state, ctx)
        names = _step_names()
        named = names.by_kind[kind].get(state.step)
        if named is not None:
            step: str = named
        else:
            f: Fight = state.fight
            # NC2: the opening volley's choices and dice are named apart (its casualties are not).
            opening = f.stage == "opening" and f.step in names.opening
            step = ("opening_" if opening else "") + names.volley[f.step]
        # A search is one command, the choice of searchers and their dice: it waits at the
        # choice's rule (SM2, not the dice's SM3) until it is rolled.
        rule = _SEARCH_RULES[kind] if step == "search" else asked.rule
        return step, list(asked.nations), rule


def _enough_typed(b: Procedure, need: Roll, dice: DiceSource) -> None:
    """D3: typed dice too few for the whole roll step are refused before any is taken, saying
    how many the step rolls and in which order: a step is one roll of every die it needs (a
    volley, one die per firing unit), so "DE-CA1 needs 1 die but the rolls before it took 2"
    named the wrong unit of the problem."""
    from domain.dice import ManualDice, NoDice, PromptDice

    typing = isinstance(dice, ManualDice) and not isinstance(dice, PromptDice)
    if not typing and not isinstance(dice, NoDice):
        return
    count = len(need.dice) + sum(g.dice for g in need.groups if need.kind == "merchant_defence")
    left = len(dice.values) - dice.used if isinstance(dice, ManualDice) else 0
    if left >= count:
        return
    if need.kind == "merchant_defence":
        order = "merchant defence dice"
    else:
        units = [die.unit for die in need.dice]
        order = ", ".join(units[:12]) + (f" and {len(units) - 12} more" if len(units) > 12 else "")
    step = (
        f"battle {b['id']} ({b['kind']}, {b['zone']}) rolls {plural(count, 'die')} at its {b['step']} step, "
        f"in the order `tracker pending` lists ({order})"
    )
    if isinstance(dice, NoDice):
        # No --dice at all: the whole step's count, not the first die's ("DE-BB1 ... needs 1
        # D10" for a volley of ten read as if one die would do).
        raise DiceError(f"D4: this campaign uses manual dice; {step}: roll them and pass them with --dice")
    assert isinstance(dice, ManualDice)
    typed = f"{left} {'was' if left == 1 else 'were'} typed for it"
    if dice.used:
        typed = f"{plural(len(dice.values), 'die')} typed, the steps before it took {dice.used}, {left} left"
    raise DiceError(f"D3: {step}; {typed}")
