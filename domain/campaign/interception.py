"""Submarine movement through hostile zones (SM1-SM5): a group pauses where the enemy may search,
is found, fights, submerges, retreats, or goes on. The moves and the guards are here; each step of
an interception is run on the pure procedure (`domain.procedures.interception`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.campaign.battle_events import (
    InterceptionStarted,
    SearchesResolved,
    SubmarinesContinued,
    SubmarinesRetreated,
)
from domain.campaign.events import UnitsMoved
from domain.campaign.procedure import Procedure
from domain.campaign.record import command
from domain.campaign.referee import Referee
from domain.dice import DiceSource
from domain.rules import interception

if TYPE_CHECKING:
    from domain.procedures.base import Fact


class Interceptions(Referee):
    """SM2-SM5: interceptions of submarine groups."""

    def _submarine_leg(self, nation: str, subs: list[str], route: list[str], start: int) -> int | None:
        """SM2, SM5: move a submarine group on from route[start] to the next zone where it must
        pause (an interception starts there) or to its destination."""
        board = self.board()
        pause = interception.pause_index(board, nation, route, start)
        end = pause if pause is not None else len(route) - 1
        if end > start:
            # A group going on from a pause leaves a hostile zone, which SM1 allows: the zone is
            # listed as passed, as it would be for a move that was never stopped there.
            passed = [z for z in route[max(start, 1) : end] if board.is_hostile_for(nation, z)]
            self._record(
                UnitsMoved,
                nation=nation,
                units=list(subs),
                path=route[start : end + 1],
                hostile_passed=passed,
                carried=[],
            )
        if pause is None:
            return None
        return self._start_interception(nation, subs, route, pause, retreat=False)

    def _start_interception(self, nation: str, subs: list[str], route: list[str], index: int, retreat: bool) -> int:
        board = self.board()
        zone = route[index]
        defender = interception.deciding_nation(
            board, interception.eligible_searchers(board, nation, zone, self._committed)
        )
        number = self.battle_count + 1
        self._record(
            InterceptionStarted,
            battle=number,
            nation=nation,
            defender=defender,
            zone=zone,
            submarines=list(subs),
            route=list(route),
            index=index,
            retreat=retreat,
            rule="SM2",
        )
        self._opened(number)
        return number

    @command
    def intercept_search(self, battle: int, units: list[str] | None, dice: DiceSource) -> list[str]:
        """SM2, SM3: the enemy picks which eligible units search (None: all; [] is allowed);
        each rolls one die and every success finds one submarine of the group."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("search",), "SM2")
        chosen = None
        if units is not None:
            found = interception.check_searchers(self.board(), b["attacker"], b["zone"], units, self._committed)
            chosen = [u.id for u in found]
        searchers, facts = self._searched(b, chosen, dice)
        found_by = next((f.units for f in facts if f.kind == "found"), ())
        return [u for u in searchers if u in found_by]

    @command
    def intercept_detect(self, battle: int, submarines: list[str] | None) -> list[str]:
        """SM3: the searching side names the submarines its successes found (None: the first of
        the group, as they are alike)."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("detect",), "SM3")
        facts = self._decided(b, submarines).facts
        return list(next(f.units for f in facts if f.kind == "detected"))

    @command
    def intercept_decide(self, battle: int, submerge: list[str] | None, retreat: list[str] | None) -> None:
        """SM4: after a round, per detected submarine: fight on (not named), submerge (stays,
        its move ends) or retreat to the zone it came from. None for both: all submerge."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("decide",), "SM4")
        route, index = b["route"], b["index"]
        back = route[index - 1] if index > 0 else None
        default = submerge is None and retreat is None
        if not default:
            # The choices are checked against the submarines as detected, and named in that order.
            interception.check_decisions(
                list(b["detected"]), list(submerge or []), list(retreat or []), back, self.board()
            )
        # The procedure is imported with the first battle (see `domain.campaign.referee`).
        from domain.procedures.interception import InterceptionDecision

        choice = None if default else InterceptionDecision(tuple(submerge or ()), tuple(retreat or ()))
        self._decided(b, choice)

    def _record_fact(self, b: Procedure, fact: Fact, state: Any) -> None:
        """SM3, SM4, SM5: the interception's own facts; a retreat into a zone the enemy may
        search there is intercepted again."""
        if b["kind"] != "interception":
            super()._record_fact(b, fact, state)
            return
        battle = b["id"]
        if fact.kind == "found":
            found_by = set(fact.units)
            self._record(
                SearchesResolved,
                battle=battle,
                found_by=[u for u in b["searchers"] if u in found_by],
                failed=[u for u in b["searchers"] if u not in found_by],
                found=fact.count,
                rule=fact.rule,
            )
        elif fact.kind == "retreated":
            nation, route, index = b["attacker"], b["route"], b["index"]
            back = route[index - 1]
            leaving = list(fact.units)
            self._record(SubmarinesRetreated, battle=battle, nation=nation, units=leaving, zone=back, rule=fact.rule)
            board = self.board()
            if board.is_hostile_for(nation, back) and interception.eligible_searchers(
                board, nation, back, self._committed
            ):
                # SM4: a retreat into a zone with ASW units may be intercepted there; the
                # group's move then ends there (its route is cut back to that zone).
                self._start_interception(nation, leaving, route[:index], index - 1, retreat=True)
        elif fact.kind == "continued":
            going = set(fact.units)
            free = [u for u in b["undetected"] + b["detected"] if u in self.units]
            self._record(
                SubmarinesContinued,
                battle=battle,
                nation=b["attacker"],
                continuing=[u for u in free if u in going],
                stopping=list(state.stopping),
                default=fact.default,
                rule=fact.rule,
            )
        else:
            super()._record_fact(b, fact, state)

    @command
    def intercept_continue(self, battle: int, stop: list[str] | None) -> int | None:
        """SM5: the free submarines continue to their destination (pausing again at a later
        hostile zone) or stop in the zone (None: all continue). Returns a new interception."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("continue",), "SM5")
        free = [u for u in b["undetected"] + b["detected"] if u in self.units]
        interception.check_stops(free, list(stop or []), self.board())
        nation, route, index = b["attacker"], b["route"], b["index"]
        facts = self._decided(b, stop).facts
        going = next(f.units for f in facts if f.kind == "continued")
        if going:
            return self._submarine_leg(nation, [u for u in free if u in going], route, index)
        return None
