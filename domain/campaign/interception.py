"""Submarine movement through hostile zones (SM1-SM5): a group pauses where the enemy may search,
is found, fights, submerges, retreats, or goes on."""

from __future__ import annotations

from domain.campaign.base import CampaignBase
from domain.campaign.battle_events import (
    BattleEnded,
    HuntersChosen,
    InterceptionStarted,
    SearchesResolved,
    SubmarinesContinued,
    SubmarinesDetected,
    SubmarinesRetreated,
    SubmarinesSubmerged,
)
from domain.campaign.events import UnitsMoved
from domain.campaign.procedure import Procedure
from domain.campaign.record import command
from domain.dice import DiceSource
from domain.rules import interception


class Interceptions(CampaignBase):
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
        self._advance_battle(self.battles[str(number)], "search", [defender], "SM2")
        return number

    @command
    def intercept_search(self, battle: int, units: list[str] | None, dice: DiceSource) -> list[str]:
        """SM2, SM3: the enemy picks which eligible units search (None: all; [] is allowed);
        each rolls one die and every success finds one submarine of the group."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("search",), "SM2")
        board = self.board()
        mover, zone = b["attacker"], b["zone"]
        if units is None:
            chosen = interception.eligible_searchers(board, mover, zone, self._committed)
        else:
            chosen = interception.check_searchers(board, mover, zone, units, self._committed)
        self._record(
            HuntersChosen,
            battle=battle,
            nation=b["defender"],
            units=[u.id for u in chosen],
            default=units is None,
            rule="SM2",
        )
        found_by: list[str] = []
        failed: list[str] = []
        for unit in chosen:
            spec = interception.search_roll(board, unit, mover)
            hit = self._roll_at(
                dice,
                unit,
                spec,
                rule="SM3",
                purpose=f"{unit.id} ({unit.type}) interception search in {zone}",
                kind="interception_search",
                battle=battle,
            )
            (found_by if hit else failed).append(unit.id)
        subs = list(b["subs"])
        found = min(len(found_by), len(subs))
        self._record(
            SearchesResolved,
            battle=battle,
            found_by=found_by,
            failed=failed,
            found=found,
            rule="SM3",
        )
        if found == 0:
            self._interception_over(b)
        elif found == len(subs):
            self._record(
                SubmarinesDetected,
                battle=battle,
                detected=subs,
                undetected=[],
                default=True,
                rule="SM3",
            )
            self._next_round(b)
        else:
            self._advance_battle(b, "detect", [b["defender"]], "SM3")
        return found_by

    @command
    def intercept_detect(self, battle: int, submarines: list[str] | None) -> list[str]:
        """SM3: the searching side names the submarines its successes found (None: the first of
        the group, as they are alike)."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("detect",), "SM3")
        subs = list(b["subs"])
        found = b["found"]
        chosen = subs[:found] if submarines is None else interception.check_detected(subs, found, submarines)
        self._record(
            SubmarinesDetected,
            battle=battle,
            detected=chosen,
            undetected=[s for s in subs if s not in chosen],
            default=submarines is None,
            rule="SM3",
        )
        self._next_round(b)
        return chosen

    @command
    def intercept_decide(self, battle: int, submerge: list[str] | None, retreat: list[str] | None) -> None:
        """SM4: after a round, per detected submarine: fight on (not named), submerge (stays,
        its move ends) or retreat to the zone it came from. None for both: all submerge."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("decide",), "SM4")
        nation, route, index = b["attacker"], b["route"], b["index"]
        detected = list(b["detected"])
        back = route[index - 1] if index > 0 else None
        default = submerge is None and retreat is None
        diving = detected if default else list(submerge or [])
        leaving = [] if default else list(retreat or [])
        interception.check_decisions(detected, diving, leaving, back)
        if diving:
            self._record(
                SubmarinesSubmerged,
                battle=battle,
                nation=nation,
                units=diving,
                default=default,
                rule="SM4",
            )
        if leaving:
            assert back is not None
            self._record(
                SubmarinesRetreated,
                battle=battle,
                nation=nation,
                units=leaving,
                zone=back,
                rule="SM4",
            )
            board = self.board()
            if board.is_hostile_for(nation, back) and interception.eligible_searchers(
                board, nation, back, self._committed
            ):
                # SM4: a retreat into a zone with ASW units may be intercepted there; the
                # group's move then ends there (its route is cut back to that zone).
                self._start_interception(nation, leaving, route[:index], index - 1, retreat=True)
        if b["detected"] and self._fight_goes_on(b):
            self._next_round(b)
        else:
            self._interception_over(b)

    def _interception_over(self, b: Procedure) -> None:
        """SM5: when nobody fights any more, free submarines go on or stop; otherwise the
        interception ends."""
        free = [u for u in b["undetected"] + b["detected"] if u in self.units]
        if free and b["index"] < len(b["route"]) - 1:
            self._advance_battle(b, "continue", [b["attacker"]], "SM5")
            return
        # SM5 when free submarines stay (their move ends here); SM4 when the fight took them all.
        rule = "SM5" if free else "SM4"
        self._record(BattleEnded, battle=b["id"], rule=rule, survivors=self._in_zone(b))

    def _in_zone(self, b: Procedure) -> list[str]:
        return [u for u in b["subs"] if u in self.units and self.units[u]["at"] == b["zone"]]

    @command
    def intercept_continue(self, battle: int, stop: list[str] | None) -> int | None:
        """SM5: the free submarines continue to their destination (pausing again at a later
        hostile zone) or stop in the zone (None: all continue). Returns a new interception."""
        b = self._procedure(battle, "interception")
        self._require_steps(b, ("continue",), "SM5")
        free = [u for u in b["undetected"] + b["detected"] if u in self.units]
        stopping = list(stop or [])
        interception.check_stops(free, stopping)
        going = [u for u in free if u not in stopping]
        nation, route, index = b["attacker"], b["route"], b["index"]
        self._record(
            SubmarinesContinued,
            battle=battle,
            nation=nation,
            continuing=going,
            stopping=stopping,
            default=stop is None,
            rule="SM5",
        )
        staying = [u for u in self._in_zone(b) if u not in going]
        self._record(BattleEnded, battle=battle, rule="SM5", survivors=staying)
        if going:
            return self._submarine_leg(nation, going, route, index)
        return None
