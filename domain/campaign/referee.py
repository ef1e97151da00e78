"""The referee on the pure procedures (`domain.procedures`): a battle's recorded state is read into
the procedure's frozen value, the procedure gives the transition for one input (a decision, or
the dice of one roll step), and the facts it returns are recorded as the events the log has
always held. The rules live in the procedures; what stays here is rolling and recording each
die (D1-D4) and naming the facts as events."""

from __future__ import annotations

from collections import OrderedDict
from types import ModuleType
from typing import Any, NamedTuple

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
from domain.dice import DiceSource
from domain.procedures import asw, convoy, fight, interception, naval
from domain.procedures.base import Context, Die, Fact, Facts, Roll, Side
from domain.procedures.fight import Fight, VolleyStep, fire_rule, fire_waiting, target_rule
from domain.procedures.position import from_battle
from domain.rules import convoy as convoy_rules

# The procedures the referee runs on their pure transitions, by the kind a battle records.
PURE: dict[str, ModuleType] = {"asw": asw, "interception": interception, "convoy": convoy, "naval": naval}

# Contexts by ruleset, scenario and technology: their memo (who fires, the dice of a volley)
# serves every battle fought under the same rules, so the referee computes each once.
_contexts: OrderedDict[tuple[Any, ...], Context] = OrderedDict()
_MEMO_LIMIT = 20_000  # entries: past this a memo starts afresh (a server runs for weeks)

# The state each recent transition left, by the hash of the last event it recorded (which names
# a whole history), the battle and the board: the next step of that battle starts from it. Kept
# outside the aggregate, whose state is plain data (snapshots and undo copy it).
_kept: OrderedDict[tuple[Any, ...], tuple[Any, Context]] = OrderedDict()


def context_for(board: Board) -> Context:
    """The procedures' context for this board's ruleset, scenario and technology levels."""
    tech = tuple(sorted((n, tuple(sorted(levels.items()))) for n, levels in board.tech.items()))
    key = (id(board.ruleset), id(board.scenario), tech)
    ctx = _contexts.get(key)
    if ctx is None or ctx.ruleset is not board.ruleset or ctx.scenario is not board.scenario:
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
        board = self.board()
        state, ctx, _ = from_battle(board, b, self._committed, context_for(board))
        return state, ctx

    def _kept_key(self, b: Procedure) -> tuple[Any, ...]:
        """What names the board a kept state was read from: the last event (a whole history)
        and the board's content, for a board set up by hand since."""
        # map() over the plain dicts: this runs twice a step, for every unit on the board.
        units = (tuple(self.units), tuple(map(tuple, map(dict.values, self.units.values()))))
        tech = (tuple(self.tech), tuple(map(tuple, map(dict.items, self.tech.values()))))
        ntr = (tuple(self.ntr), tuple(map(tuple, map(dict.items, self.ntr.values()))))
        return (self.last_hash, b["id"], hash((units, tech, ntr, tuple(self.committed))))

    def _pure_volley(self, b: Procedure, stage: str) -> list[tuple[Unit, bool, list[str] | None]]:
        """Who fires in the battle's volley (see `volley.volley`), for what the game waits for."""
        state, ctx = self._pure(b)
        if state.fight is None:
            return []
        units = self.board().units
        firing = fight.volley(state.fight, ctx, stage)  # type: ignore[arg-type]
        return [(units[x.unit], x.attacking, None if x.legal is None else list(x.legal)) for x in firing]

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
        state, facts = PURE[b["kind"]].decide(state, ctx, choice, side, board)
        self._record_facts(b, state, ctx, facts)
        return Step(state, ctx, facts)

    def _rolled(self, b: Procedure, dice: DiceSource, state: Any = None, ctx: Context | None = None) -> Step:
        """The dice of the roll step the battle waits for: each die rolled and recorded (D1-D3),
        a selective hit recorded as it lands, then the procedure's transition for them."""
        if state is None or ctx is None:
            state, ctx = self._pure(b)
        procedure = PURE[b["kind"]]
        need = procedure.need(state, ctx)
        assert isinstance(need, Roll)
        counts = [[0] * len(g.values) for g in need.groups]
        values: list[int] = []
        if need.kind == "merchant_defence":
            # CV2: the merchant defence dice are one roll, their total against the target.
            (group,) = need.groups
            rolled = self._roll_merchant_defence(b, group.dice, group.target, dice)
            counts[0][1 if sum(rolled) >= group.target else 0] += 1
            values += rolled
        board = self.board()
        for die in need.dice:
            if need.kind == "convoy_table":
                value = self._roll_convoy_table(b, board, die, dice)
                group = need.groups[die.group]
                counts[die.group][group.values.index(group.table[value - 1])] += 1
            else:
                value, hit = self._roll_die(b, need, board.units[die.unit], die, dice)
                counts[die.group][1 if hit else 0] += 1
            values.append(value)
        state, facts = procedure.roll(state, ctx, tuple(tuple(c) for c in counts))
        self._record_facts(b, state, ctx, facts)
        successes = sum(c[1] for c, g in zip(counts, need.groups, strict=True) if g.kind == "at_most")
        return Step(state, ctx, facts, successes, tuple(values))

    def _roll_merchant_defence(self, b: Procedure, count: int, sinks_on: int, dice: DiceSource) -> list[int]:
        return self.roll(
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
        return value

    def _roll_die(self, b: Procedure, need: Roll, unit: Unit, die: Die, dice: DiceSource) -> tuple[int, bool]:
        if need.kind == "asw_search":
            purpose = f"{unit.id} ({unit.type}) searches for {die.against} in {b['zone']}"
        elif need.kind == "interception_search":
            purpose = f"{unit.id} ({unit.type}) interception search in {b['zone']}"
        elif need.kind == "convoy_search":
            purpose = f"{unit.id} ({unit.type}) convoy search in {b['zone']}"
        elif die.against:
            screen = f", screened by {die.screen}" if die.screen else ""
            purpose = f"{unit.id} ({unit.type}) fires at {die.against}{screen}"
        else:
            enemy = b["defender"] if unit.nation == b["attacker"] else b["attacker"]
            purpose = f"{unit.id} ({unit.type}) fires at {enemy}'s units"
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
        if fact.kind == "searchers":
            self._record(
                HuntersChosen,
                battle=battle,
                nation=nation,
                units=list(fact.units),
                default=fact.default,
                rule=fact.rule,
            )
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
        elif fact.kind == "casualties":
            self._record(
                CasualtiesChosen,
                battle=battle,
                side=fact.side,
                nation=nation,
                units=list(fact.units),
                default=fact.default,
                rule=fact.rule,
            )
        else:  # pragma: no cover - every fact the pure procedures return is named
            raise AssertionError(fact.kind)

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

    def _moment(self, b: Procedure, state: Any, ctx: Context) -> tuple[str, list[str], str]:
        """The step a battle waits at, as recorded: its name, the nations it waits for, the rule."""
        if b["kind"] == "asw":
            if state.step in (asw.AswStep.SEARCHERS, asw.AswStep.SEARCH):
                return "search", [b["attacker"]], "AS2"
            if state.step == asw.AswStep.DECIDE:
                return "decide", [b["defender"]], "AS5"
            return self._volley_moment(b, state.fight, ctx)
        if b["kind"] == "interception":
            moments = {
                interception.InterceptionStep.SEARCHERS: ("search", [b["defender"]], "SM2"),
                interception.InterceptionStep.SEARCH: ("search", [b["defender"]], "SM2"),
                interception.InterceptionStep.DETECT: ("detect", [b["defender"]], "SM3"),
                interception.InterceptionStep.DECIDE: ("decide", [b["attacker"]], "SM4"),
                interception.InterceptionStep.CONTINUE: ("continue", [b["attacker"]], "SM5"),
            }
            moment = moments.get(state.step)
            return moment if moment is not None else self._volley_moment(b, state.fight, ctx)
        if b["kind"] == "convoy":
            steps = {
                convoy.ConvoyStep.MERCHANT_DEFENCE: ("merchant_defence", [b["defender"]], "CV2"),
                convoy.ConvoyStep.MERCHANT_CASUALTY: ("merchant_casualty", [b["attacker"]], "CV2"),
                convoy.ConvoyStep.SEARCHERS: ("search", [b["defender"]], "CV3"),
                convoy.ConvoyStep.SEARCH: ("search", [b["defender"]], "CV3"),
                convoy.ConvoyStep.CONVOY_TABLE: ("convoy_table", [b["attacker"]], "CV5"),
            }
            found = steps.get(state.step)
            return found if found is not None else self._volley_moment(b, state.fight, ctx)
        if b["kind"] == "naval":
            if state.step == naval.NavalStep.DECIDE:
                return "decide", [self._nation(b, side) for side in state.waiting], "NC4"
            return self._volley_moment(b, state.fight, ctx)
        raise AssertionError(b["kind"])  # pragma: no cover

    def _volley_moment(self, b: Procedure, f: Fight, ctx: Context) -> tuple[str, list[str], str]:
        opening = "opening_" if f.stage == "opening" else ""
        if f.step == VolleyStep.TARGETS:
            return opening + "targets", [b[s] for s in f.waiting], target_rule(f, f.stage)
        if f.step == VolleyStep.SCREENING:
            return opening + "screening", [b[s] for s in f.waiting], "HA1"
        if f.step == VolleyStep.FIRE:
            return opening + "fire", [b[s] for s in fire_waiting(f, ctx)], fire_rule(f)
        return "casualties", [b[s] for s in f.waiting], "HA7"
