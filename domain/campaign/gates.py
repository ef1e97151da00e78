"""The turn sequence (T1, T2, T4): what the game waits for before a phase may end, and `advance`."""

from __future__ import annotations

from typing import Any

from domain.board import Board
from domain.campaign.base import CampaignBase
from domain.campaign.events import AircraftLost, PhaseAdvanced, PurchasesForfeited, ResourcesCollected
from domain.campaign.record import command
from domain.errors import RuleViolation, TrackerError
from domain.rules import asw, combat, convoy, economy, movement, trade
from domain.text import phase_name


class Gates(CampaignBase):
    """T1, T2, T4: open items and closing a phase."""

    def convoy_attacks_open(self, board: Board | None = None) -> dict[str, list[str]]:
        """CV1, T4: each enemy of the phasing nation that may still declare a convoy attack in
        its collect_resources phase (has not passed), with the zones where it may (`board`:
        the board now, when the caller built it already)."""
        if self.phase != "collect_resources":
            return {}
        board = self.board() if board is None else board
        defender = self.nation
        open_: dict[str, list[str]] = {}
        for nation in self.scenario.turn_order:
            if not board.enemies(nation, defender) or nation in self.convoy_passed:
                continue
            zones = [
                zone
                for zone, count in sorted(self.ntr.get(defender, {}).items())
                if count > 0
                and [nation, zone] not in self.convoy_declared
                and convoy.submarines_of(board, nation, zone)
            ]
            if zones:
                open_[nation] = zones
        return open_

    def stranded_aircraft(self, board: Board | None = None) -> list[str]:
        """F7: the phasing nation's air units that would end noncombat_movement with nowhere to
        land: at sea beyond its carriers' room, or in a territory not of its side (now held by
        the enemy, or by a neutral, F8). A campaign recorded before the ruleset said so left an
        air unit on a neutral's territory where it was (`neutral_land_closed`)."""
        board = self.board() if board is None else board
        nation = self.nation
        stranded: list[str] = []
        places = sorted({u.at for u in board.units.values() if u.nation == nation and board.unit_type(u).is_air})
        for place in places:
            air = sorted(u.id for u in board.units_at(place) if u.nation == nation and board.unit_type(u).is_air)
            if board.scenario.game_map.is_land(place):
                owner = board.owners[place]
                if board.enemies(nation, owner) or (
                    board.ruleset.neutral_land_closed and not board.allies(nation, owner)
                ):
                    stranded += air
                continue
            # F7: friendly carriers' places, less those of their side's other aircraft aboard.
            friendly = [u for u in board.units_at(place) if economy.shares_carriers(board, nation, u.nation)]
            room = sum(board.unit_type(u).carries for u in friendly) - sum(
                1 for u in friendly if u.nation != nation and board.unit_type(u).is_air
            )
            stranded += air[max(0, room) :]
        return stranded

    def landing_flight(self, board: Board, unit_id: str) -> list[str] | None:
        """F7: the zones after its own of a shortest flight of air unit `unit_id` to a place where
        it may end noncombat_movement (a territory of its side, a friendly carrier with room),
        within the range it has left, as `move` checks it; None where it reaches none."""
        unit = board.units[unit_id]
        adjacency = board.scenario.game_map.adjacency
        came: dict[str, str] = {unit.at: unit.at}
        frontier = [unit.at]
        for _ in range(board.unit_type(unit).move - unit.moved):
            following = []
            for zone in frontier:
                for near in sorted(adjacency[zone] - came.keys()):
                    came[near] = zone
                    following.append(near)
            frontier = following
            for zone in frontier:  # the nearest first
                path = [zone]
                while came[path[-1]] != unit.at:
                    path.append(came[path[-1]])
                try:
                    movement.plan_move(board, unit.nation, [unit_id], path[::-1])
                except TrackerError:
                    continue
                return path[::-1]
        return None

    def due_naval_battles(self, board: Board | None = None) -> list[str]:
        """NC1: zones where a naval battle is due this naval_combat phase (T4: `next` waits)."""
        if self.phase != "naval_combat":
            return []
        return combat.due_zones(
            self.board() if board is None else board, self.nation, self.fought, self.attack_zones, self.movement_ended
        )

    def turn_item(self) -> dict[str, Any]:
        """T3, T4: the item of a phase that nothing keeps open, kind "turn": the game waits for
        the phasing nation to do what it will in its phase and end it (`next`). It has the
        keys of the other items (`battle`, `zone` None; `step` "open"; `waiting` the phasing
        nation; never `blocking`), and `nation`, `phase` and `round` of the position."""
        entry: dict[str, Any] = {
            "battle": None,
            "kind": "turn",
            "zone": None,
            "step": "open",
            "waiting": [self.nation],
            "rule": "T3",
            "blocking": False,
            "text": "",
            "nation": self.nation,
            "phase": self.phase,
            "round": self.round,
        }
        entry["text"] = self.describer.item({**entry, "phasing": self.nation})
        return entry

    def open_items(self, board: Board | None = None) -> list[dict[str, Any]]:
        """What the game waits for (T4): every unfinished procedure; then what the phase still
        requires before it may end (a naval battle due, an enemy that may still declare a
        convoy attack, units to place, air units to land), each with its rule, the nations
        it waits for and the command that closes it. `blocking` items stop `next`; units
        bought this turn are listed from purchase on, blocking (and placed) only in placement.
        `pending(turn=True)` adds the phasing nation's own work (`turn_item`)."""
        items: list[dict[str, Any]] = []
        for b in sorted(self.battles.values(), key=lambda b: b["id"]):
            # Who is waited for, as the procedure asks (the same nations its step recorded).
            facts = self.waiting_facts(b)
            items.append(
                {
                    "battle": b["id"],
                    "kind": b["kind"],
                    "zone": b["zone"],
                    "step": b["step"],
                    "waiting": facts["waiting"],
                    "rule": b["rule"],
                    "blocking": True,
                    "text": self.describer.item(facts),
                    "eligible": self._eligible(b),
                    "dice": self._dice_needed(b),
                    # At a decide step, the options the hint names: a naval battle's sides'
                    # (NC4, NC1), an interception's zone to go back to, or None (SM4).
                    **{key: facts[key] for key in ("decisions", "back") if key in facts},
                }
            )
        if items:
            return items

        def item(
            kind: str, rule: str, waiting: list[str], facts: dict[str, Any], zone: str | None = None, **more: Any
        ) -> None:
            entry = {
                "battle": None,
                "kind": kind,
                "zone": zone,
                "step": "open",
                "waiting": waiting,
                "rule": rule,
                "blocking": more.pop("blocking", True),
                "text": "",
                **more,
            }
            entry["text"] = self.describer.item({**entry, "phasing": self.nation, "phase": self.phase, **facts})
            items.append(entry)

        # One board for every check below (building it is most of what they cost), and none
        # in a phase whose checks do not read it: each check builds its own board when given
        # none, so this only spares work, it decides nothing.
        if board is None and self._checks_read_board():
            board = self.board()
        for zone in self.due_naval_battles(board):
            # NC1: a battle is due where the phasing nation moved in or stopped submarines to attack.
            board = self.board() if board is None else board
            item("naval_due", "NC1", [self.nation], {"holds": board.describe_zone(zone)}, zone)
        for nation, zones in self.convoy_attacks_open(board).items():
            item("convoy_open", "CV1", [nation], {}, zones[0], zones=zones, nation=nation)
        for unit_type, count, legal in self._bought_with_places(board):
            item(
                "unplaced",
                "PU2",
                [self.nation],
                {"legal": legal},
                unit_type=unit_type,
                count=count,
                blocking=self.phase == "placement",
                legal=legal,
            )
        if self.phase == "noncombat_movement":
            stranded = self.stranded_aircraft(board)
            if stranded:
                # F7: the first unit's flight to a place to land, for the move that answers the
                # item wherever it is printed (`pending`, after a move, a refused `next`).
                path = self.landing_flight(self.board() if board is None else board, stranded[0])
                landing: dict[str, Any] = {"landing": {"unit": stranded[0], "path": path}} if path else {}
                item("air_landing", "F7", [self.nation], {}, units=stranded, **landing)
        return items

    def _bought_with_places(self, board: Board | None) -> list[tuple[str, int, list[str]]]:
        """PU2: the phasing nation's units bought this turn, (type, count, where it may place
        them now), those with a place first (T4): `next --confirm-losses` gives up the units
        with none only once nothing else waits, so the command the first item names (what a
        refused `next` says closes the phase) is one that is accepted now."""
        bought = self.unplaced.get(self.nation, {})
        if not bought:
            return []
        board = self.board() if board is None else board
        found = [(t, n, economy.placement_zones(board, self.nation, t)) for t, n in sorted(bought.items())]
        return sorted(found, key=lambda b: (not b[2], b[0]))

    def optional_combats(self, board: Board | None = None) -> list[dict[str, Any]]:
        """NC1, AS1: what the phasing nation may start in its naval_combat phase but need not,
        by zone: a naval battle where its units share a sea zone with enemy surface ships
        without having moved in (a battle due is an open item), and ASW combat where enemy
        submarines share a zone with its ships or aircraft that can search. Never blocking,
        and waiting for nobody: the phase may end without them. None while a battle is under
        way (one at a time), nor in another phase."""
        if self.phase != "naval_combat" or self.battles:
            return []
        board = self.board() if board is None else board
        nation, game_map, committed = self.nation, board.scenario.game_map, self._committed
        due = set(self.due_naval_battles(board))
        items: list[dict[str, Any]] = []

        def item(kind: str, rule: str, zone: str, **facts: Any) -> None:
            entry = {
                "battle": None,
                "kind": kind,
                "zone": zone,
                "step": "open",
                "waiting": [],
                "rule": rule,
                "blocking": False,
                "text": "",
                "nation": nation,
                **facts,
            }
            entry["text"] = self.describer.item({**entry, "phasing": nation, "phase": self.phase})
            items.append(entry)

        for zone in sorted({u.at for u in board.units.values() if u.nation == nation and game_map.is_sea(u.at)}):
            if zone not in due:
                try:
                    _, defenders = combat.check_start(board, nation, zone, self.fought, committed)
                except RuleViolation:
                    defenders = []
                ships = [u.id for u in defenders if board.unit_type(u).is_naval and not board.unit_type(u).is_submarine]
                if ships:
                    item("naval_may", "NC1", zone, holds=board.describe_zone(zone))
            try:
                subs = asw.check_start(board, nation, zone, self.fought, committed)
            except RuleViolation:
                continue
            item("asw_may", "AS1", zone, submarines=[u.id for u in subs])
        return items

    def _checks_read_board(self) -> bool:
        """Whether a check of `open_items` or `advance` reads the board in this position: a
        naval battle due (NC1), a convoy attack open or resources collected (CV1, T2), units
        to place (PU2), aircraft to land (F7)."""
        return self.phase in ("naval_combat", "collect_resources", "noncombat_movement") or bool(
            self.unplaced.get(self.nation)
        )

    def _still_open(self, gates: list[dict[str, Any]]) -> str:
        """T4: why the phase cannot end: the first open item, the command that closes it, and
        how many more there are."""
        close = self.describer.command(gates[0])
        how = f"; to close it: {close}" if close else ""
        more = f" (and {len(gates) - 1} more: see `tracker pending`)" if len(gates) > 1 else ""
        return f"{phase_name(self.phase)} cannot end yet: {gates[0]['text']}{how}{more}"

    @command
    def advance(self, confirm_losses: bool = False) -> None:
        """T1, T2, T4: close the current phase, if nothing it requires is left open, and open the
        next; collect resources when due. Air units that cannot land (F7), and units bought with
        nowhere to be placed (PU2), are lost only when the player confirms it."""
        board = self.board() if self._checks_read_board() else None
        gates = [i for i in self.open_items(board) if i["blocking"]]
        if confirm_losses and gates and all(i["kind"] == "air_landing" for i in gates):
            self._record(AircraftLost, nation=self.nation, units=self.stranded_aircraft(board), rule="F7")
            board = self.board()  # the lost aircraft are off the board now
            gates = []
        if confirm_losses and gates and all(i["kind"] == "unplaced" and not i["legal"] for i in gates):
            # PU2, T4: nothing moves in placement, so a unit bought with nowhere to go now (its
            # nation's last port was taken by an adjustment after the purchase) never will;
            # the player gives it up rather than the turn staying stuck.
            lost = {i["unit_type"]: i["count"] for i in gates}
            self._record(PurchasesForfeited, nation=self.nation, units=lost, rule="PU2")
            gates = []
        if gates:
            raise RuleViolation("T4", self._still_open(gates))
        if self.phase == "collect_resources":
            ntr_value, income = trade.collection(self.board() if board is None else board, self.nation)
            collected = ntr_value + income
            self._record(
                ResourcesCollected,
                nation=self.nation,
                ntr_value=ntr_value,
                income=income,
                lost=self.ntr_lost_phase.get(self.nation, 0),
                collected=collected,
                balance=self.balances[self.nation] + collected,
            )
        rnd, nation, phase = self._next_turn_position()  # F8: neutral turns passed over
        self._record(PhaseAdvanced, round=rnd, nation=nation, phase=phase)
