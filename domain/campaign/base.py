"""What every part of the Campaign aggregate stands on: its state, recording an event, the board
and the ruleset it reads, and finding a procedure in progress."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

from domain.board import Board, units_of
from domain.campaign.battle_events import BattleAdvanced, BattleEnded
from domain.campaign.events import Event, PhaseAdvanced, TurnPassedOver, WarEntered
from domain.campaign.procedure import Kind, Procedure, Step
from domain.campaign.state import LATER_STATE, scenario_from_recorded
from domain.chain import event_content, event_hash
from domain.errors import InputError, RuleViolation
from domain.rules import turn
from domain.ruleset import Ruleset, ruleset_from_recorded
from domain.scenario import Scenario

# A battle of each kind as a refusal names it (the reports' words), and the command family
# that answers it.
_KIND_NOUNS = {"convoy": "convoy battle", "interception": "interception", "asw": "ASW combat", "naval": "naval battle"}
_KIND_WORDS = {
    "convoy": "a convoy battle: tracker convoy ...",
    "interception": "an interception: tracker intercept ...",
    "asw": "an ASW combat: tracker asw ...",
    "naval": "a naval battle: tracker battle ...",
}


class CampaignBase:
    """The aggregate's state and the helpers every command uses (mixed into `Campaign`)."""

    # Attributes set by Created.apply, declared for type checkers only: they are plain state,
    # never constructor arguments of the aggregate (which its annotations would make them).
    if TYPE_CHECKING:
        name: str
        scenario_data: dict[str, Any]
        ruleset_data: dict[str, Any]
        dice_mode: str
        dice_scheme: str
        commitments: list[str]
        revealed_seeds: list[str]
        roll_count: int
        round: int
        nation: str
        phase: str
        units: dict[str, dict[str, Any]]
        ntr: dict[str, dict[str, int]]
        ntr_lost: dict[str, int]
        tech: dict[str, dict[str, int]]
        balances: dict[str, int]
        research_rolls: dict[str, int]
        battles: dict[str, Procedure]
        battle_count: int
        convoy_declared: list[list[str]]
        ntr_lost_phase: dict[str, int]
        fought: list[list[str]]
        owners: dict[str, str]
        unplaced: dict[str, dict[str, int]]
        unit_numbers: dict[str, int]
        ended: dict[str, list[str]]
        convoy_passed: list[str]
        movement_ended: dict[str, str]
        attack_zones: list[str]
        committed: list[str]
        lost: dict[str, str]
        last_hash: str

    def _record(self, event_class: type[Event], **fields: Any) -> None:
        if event_class is BattleEnded and "reason" not in fields:
            fields["reason"] = self._ending_reason(self.battles[str(fields["battle"])], fields["rule"])
        version = self.version + 1
        fields["action"] = self.__dict__.get("_action", version)
        timestamp = event_class.create_timestamp()
        digest = event_hash(self.last_hash, event_class.__name__, version, timestamp, event_content(fields))
        self.trigger_event(event_class, timestamp=timestamp, prev_hash=self.last_hash, hash=digest, **fields)

    def __getattr__(self, name: str) -> Any:
        # Only reached for a missing attribute: state added after an older snapshot was taken.
        make = LATER_STATE.get(name)
        if make is None:
            raise AttributeError(name)
        value = make(self)
        self.__dict__[name] = value
        return value

    @property
    def ruleset(self) -> Ruleset:
        return ruleset_from_recorded(self.ruleset_data)

    @property
    def scenario(self) -> Scenario:
        return scenario_from_recorded(self.scenario_data, self.ruleset)

    @property
    def _submarine_types(self) -> frozenset[str]:
        return frozenset(name for name, ut in self.ruleset.units.items() if ut.is_submarine)

    @property
    def _committed(self) -> frozenset[str]:
        """F7: the units that have taken part in a search or battle this phase."""
        return frozenset(self.committed)

    @property
    def dice_epoch(self) -> int:
        return len(self.revealed_seeds)

    @property
    def entered(self) -> tuple[str, ...]:
        """F8, AD1: the nations whose entry into the war an adjustment brought forward. Kept in
        the state only once there is one, so that campaigns without (and their snapshots,
        older ones included) hold the state they always held."""
        return tuple(self.__dict__.get("entered", ()))

    def at_war(self, nation: str, round_: int | None = None) -> bool:
        """F8: the nation is at war in this round (default: the round now), by its scenario
        entry round or an adjustment that brought the entry forward (AD1)."""
        return self.scenario.at_war(nation, self.round if round_ is None else round_, self.entered)

    def _next_turn_position(self) -> tuple[int, str, str]:
        """T1, T2, F8: the position after this one; every neutral nation's turn on the way is
        passed over and recorded so (the phasing nation is never a neutral)."""
        position, passed = turn.next_turn_f8(
            self.scenario.turn_order, self.ruleset.phases, self.round, self.nation, self.phase, self.at_war
        )
        self._record_passed_over(self.round, passed, position[0])
        return position

    def _record_passed_over(self, round_: int, passed: list[tuple[int, str]], to_round: int) -> None:
        """F8: the turns passed over on the way from `round_` to a turn of `to_round`, in order,
        each naming the round its nation enters the war; and at the start of each new round on
        the way, the nations whose entry round it is (WarEntered). A ruleset recorded before
        `entries_recorded` passes the turns over naming no entry round, and records no entry."""
        told = self.ruleset.entries_recorded
        for passed_round, nation in passed:
            if told:
                self._record_entries(round_, passed_round)
            round_ = passed_round
            enters = self.scenario.nations[nation].entry_round if told else None
            self._record(TurnPassedOver, round=passed_round, nation=nation, rule="F8", enters=enters)
        if told:
            self._record_entries(round_, to_round)

    def _record_entries(self, after: int, until: int) -> None:
        """F8: at the start of each round after `after` up to `until`, the nations (in turn
        order) that enter the war then, by their scenario's entry round. A nation at war from
        round 1 never entered; one whose entry an adjustment brought forward entered by it
        (AD1: the adjustment's line says so), so neither is recorded again."""
        nations = self.scenario.nations
        for rnd in range(max(after + 1, 2), until + 1):
            for nation in self.scenario.turn_order:
                if nations[nation].entry_round == rnd and nation not in self.entered:
                    self._record(WarEntered, round=rnd, nation=nation, rule="F8")

    def open_first_turn(self) -> None:
        """F8: a campaign whose first nation is still neutral in round 1 opens on the first turn
        of a nation at war; the turns before it are passed over and recorded so, as part of
        the creation (its events carry the Created event's action, so no undo takes them)."""
        order = self.scenario.turn_order
        if self.at_war(order[0], 1):
            return
        phases = self.ruleset.phases
        # From the end of a turn before the first, as the turn sequence goes on from any turn.
        (rnd, nation, phase), passed = turn.next_turn_f8(order, phases, 0, order[-1], phases[-1], self.at_war)
        self.__dict__["_action"] = self.version
        try:
            self._record_passed_over(0, passed, rnd)
            self._record(PhaseAdvanced, round=rnd, nation=nation, phase=phase)
        finally:
            self.__dict__.pop("_action", None)

    def board(self) -> Board:
        return Board(
            scenario=self.scenario,
            ruleset=self.ruleset,
            units=units_of(self.units),
            ntr=self.ntr,
            tech=self.tech,
            balances=self.balances,
            round=self.round,
            nation=self.nation,
            phase=self.phase,
            owners=self.owners,
            lost=self.lost,
            neutral=self.scenario.neutral(self.round, self.entered),
        )

    def require_not_ended(self, battle: int) -> None:
        """CV7 (and every procedure's ending rule): a command for a battle that has ended is
        refused, not taken for a typo."""
        ended = self.ended.get(str(battle))
        if ended is not None:
            kind, rule = ended
            raise RuleViolation(
                "CV7" if kind == "convoy" else rule,
                f"battle {battle} ({kind}) has ended; nothing more can be done in it",
            )

    def _battle(self, battle: int, kind: str = "convoy") -> Procedure:
        return self._procedure(battle, kind)

    def _procedure(self, battle: int, *kinds: str) -> Procedure:
        self.require_not_ended(battle)
        b = self.battles.get(str(battle))
        if b is None or b["kind"] not in kinds:
            active = (
                ", ".join(f"{x['id']} ({x['kind']})" for x in sorted(self.battles.values(), key=lambda x: x["id"]))
                or "none"
            )
            # Every kind a command takes (`battle fire` takes any) is no battle of a kind at all.
            what = "battle" if set(kinds) == set(get_args(Kind)) else " or ".join(_KIND_NOUNS[k] for k in kinds)
            # A battle of another kind is answered by another command family: say which.
            other = f"; battle {battle} is {_KIND_WORDS[b['kind']]}" if b is not None else ""
            raise InputError(f"no {what} {battle} in progress (active: {active}){other}")
        return b

    def _require_step(self, b: Procedure, step: Step, rule: str) -> None:
        if b["step"] != step:
            raise RuleViolation(rule, self.step_refused(b, rule))

    def _require_steps(self, b: Procedure, steps: tuple[Step, ...], rule: str) -> None:
        if b["step"] not in steps:
            raise RuleViolation(b["rule"] or rule, self.step_refused(b, b["rule"] or rule))

    def _require_waiting(self, b: Procedure, nation: str) -> None:
        if nation not in self.scenario.nations:
            raise InputError(f"unknown nation {nation!r}")
        if nation not in b["waiting"]:
            waiting = self.describe_waiting(b, b["rule"])
            raise RuleViolation(b["rule"], f"battle {b['id']} is {waiting}, not for {nation}")

    def _advance_battle(self, b: Procedure, step: Step, waiting: list[str], rule: str) -> None:
        self._record(BattleAdvanced, battle=b["id"], step=step, waiting=waiting, rule=rule)

    def _require_no_procedure(self) -> None:
        """One procedure at a time in a nation's turn: a move or a new battle waits until the
        game no longer waits for anyone (a paused submarine move included)."""
        if self.battles:
            b = min(self.battles.values(), key=lambda b: b["id"])
            waiting = f"{self.describe_waiting(b, b['rule'])}{self.answering(b)}"
            raise RuleViolation(b["rule"], f"battle {b['id']} in {b['zone']} is not finished: {waiting}")
