"""The rounds every procedure shares (HA1-HA7, NC2, NC3, NC6, AS3, AS4, SM4, CV4): who fires,
targets, screening, the dice, hits and casualties, and what comes after a volley."""

from __future__ import annotations

from collections import Counter

from domain.board import Unit
from domain.campaign.battle_events import (
    BattleEnded,
    CasualtiesChosen,
    FireWithheld,
    HitsLost,
    NavalHitsScored,
    RoundStarted,
    ScreeningChosen,
    TargetHit,
    TargetsChosen,
    UnitHit,
)
from domain.campaign.procedure import SIDES, Procedure, Side, Step
from domain.campaign.record import command
from domain.campaign.referee import PURE, Referee
from domain.dice import DiceSource
from domain.errors import RuleViolation
from domain.rules import combat, convoy
from domain.rules import hits as hits_rules


class Volleys(Referee):
    """Volleys: targets, screens, fire, casualties."""

    def _active(self, b: Procedure, side: str) -> list[Unit]:
        """The units of a side still fighting: detected submarines and the units hunting them,
        or a naval battle's units not sunk, submerged or retreated."""
        if b["kind"] == "naval":
            ids = b["attackers" if side == "attacker" else "defenders"]
        elif b["kind"] == "convoy":
            # CV4: the detecting units fight all of the attacker's submarines in the zone.
            if side == "defender":
                return [self.board().units[u] for u in b["detecting"] if u in self.units]
            ids = [
                u
                for u, x in self.units.items()
                if x["nation"] == b["attacker"] and x["at"] == b["zone"] and x["type"] in self._submarine_types
            ]
        else:
            hunting = "defender" if b["kind"] == "interception" else "attacker"
            ids = b["hunters"] if side == hunting else b["detected"]
        board = self.board()
        return sorted((board.units[u] for u in ids if u in board.units), key=lambda u: u.id)

    def _side_of(self, b: Procedure, uid: str) -> Side:
        return "attacker" if self.units[uid]["nation"] == b["attacker"] else "defender"

    def _chooser(self, b: Procedure, uid: str) -> str:
        """HA7: the nation the battle names for the unit's side makes its side's choices."""
        return str(b[self._side_of(b, uid)])

    def _volley(self, b: Procedure, stage: str) -> list[tuple[Unit, bool, list[str] | None]]:
        """Who fires in this volley, in rolling order (attacker's side first, then by unit):
        (unit, on the attacking side, legal targets of a selective shot or None).

        Stages: "opening" (NC2: the submarines firing first in round one), "main" (the rest
        of the round: those that opened fire have fired), "next" (a whole round to come)."""
        if b["kind"] in PURE:
            return self._pure_volley(b, stage)
        board = self.board()
        fire: list[tuple[Unit, bool, list[str] | None]] = []
        if b["kind"] == "convoy":
            if stage == "next":
                return []  # CV7: one round only
            subs, detecting = self._active(b, "attacker"), self._active(b, "defender")
            ships = [u for u in detecting if board.unit_type(u).is_naval]
            for u in detecting if subs else []:
                # CV4, HA3: a detecting aircraft picks a submarine; a ship's hits are placed by
                # the submarines' owner (HA7).
                legal = [s.id for s in subs] if board.unit_type(u).is_air else None
                if convoy.attack_roll(board, u, b["attacker"]).target > 0:
                    fire.append((u, False, legal))
            for s in subs if ships else []:
                # CV4, HA1, HA2: each submarine picks a detecting ship, never an aircraft.
                fire.append((s, True, [t.id for t in hits_rules.selective_targets(board, s, ships)]))
            return fire
        for side, other in (("attacker", "defender"), ("defender", "attacker")):
            enemies = self._active(b, other)
            for u in self._active(b, side):
                opened = u.id in b["opening"]
                if (stage == "opening" and not opened) or (stage == "main" and opened):
                    continue
                if not combat.can_hit(board, u, side == "attacker", enemies):
                    continue
                if hits_rules.is_selective(board, u):
                    legal = [t.id for t in hits_rules.naval_targets(board, u, enemies)]
                    fire.append((u, side == "attacker", legal))
                else:
                    fire.append((u, side == "attacker", None))
        return fire

    def _fight_goes_on(self, b: Procedure) -> bool:
        """Whether anyone would still have something to fire at in another round (otherwise
        the fight is over)."""
        return bool(self._volley(b, "next"))

    def _round_rule(self, b: Procedure) -> str:
        return "NC3"

    def _next_round(self, b: Procedure) -> None:
        self._record(RoundStarted, battle=b["id"], round=b["round"] + 1, rule=self._round_rule(b))
        self._to_targets(b, "main")

    def _close_fight(self, b: Procedure) -> None:
        if b["kind"] == "convoy":
            self._to_convoy_table(b)
            return
        board = self.board()
        left = [u.id for side in ("attacker", "defender") for u in self._active(b, side)]
        submerged = [u for u in b["submerged"] if u in board.units]
        self._record(BattleEnded, battle=b["id"], rule="NC1", survivors=sorted(left + submerged))

    def _withhold_fire(self, b: Procedure, stage: str, volley: list[tuple[Unit, bool, list[str] | None]]) -> None:
        """NC6: a unit of this volley with a value to fire but nothing its hits may fall on rolls
        no die; that is recorded, so nobody wonders where its die went."""
        board = self.board()
        firing = {u.id for u, _, _ in volley}
        idle = [
            u.id
            for side in ("attacker", "defender")
            for u in self._active(b, side)
            if u.id not in firing
            and (u.id in b["opening"]) == (stage == "opening")
            and combat.fire_roll(board, u, side == "attacker").target > 0
        ]
        if idle:
            self._record(FireWithheld, battle=b["id"], units=idle, rule="NC6")

    def _to_targets(self, b: Procedure, stage: str) -> None:
        """HA1, HA3, AS3, SM4: the owners of selective shooters pick targets before any roll."""
        volley = self._volley(b, stage)
        if b["kind"] == "naval":
            self._withhold_fire(b, stage, volley)
        if not volley:
            if stage == "opening":
                self._to_targets(b, "main")
            elif b["kind"] == "naval":
                self._naval_after_round(b)
            else:
                self._close_fight(b)
            return
        waiting = list(dict.fromkeys(self._chooser(b, u.id) for u, _, legal in volley if legal))
        rule = {"convoy": "CV4"}.get(b["kind"], "NC2" if stage == "opening" else "HA1")
        step: Step = "opening_targets" if stage == "opening" else "targets"
        if not waiting:
            self._to_screening(b, stage)
            return
        # Opening the step clears the last volley's shots, before any target of this one.
        self._advance_battle(b, step, waiting, rule)
        left = list(waiting)
        for nation in waiting:
            # A nation whose every firer has a single legal target has nothing to choose: the
            # tracker records that choice for it (as a default) instead of waiting.
            own = {u.id: legal for u, _, legal in volley if legal and self._chooser(b, u.id) == nation}
            if all(len(legal) == 1 for legal in own.values()):
                targets = {firer: legal[0] for firer, legal in sorted(own.items())}
                self._record(TargetsChosen, battle=b["id"], nation=nation, targets=targets, default=True, rule=rule)
                left.remove(nation)
        if not left:
            self._to_screening(b, stage)
        elif left != waiting:
            self._advance_battle(b, step, left, rule)

    def _screen_choices(self, b: Procedure) -> dict[str, dict[str, list[str]]]:
        """HA1, HA3: per deciding nation, the shots of this volley at its ships that an escort
        could take (a shot left from an earlier volley, by a unit not firing now, is none)."""
        board = self.board()
        stage = "opening" if b["step"].startswith("opening") else "main"
        firing = {u.id for u, _, legal in self._volley(b, stage) if legal}
        need: dict[str, dict[str, list[str]]] = {}
        for firer, shot in sorted(b["shots"].items()):
            if firer not in firing:
                continue
            target = board.units.get(shot["target"])
            if target is None:
                continue
            side = self._side_of(b, target.id)
            options = hits_rules.screen_options(board, target, self._active(b, side))
            if options:
                need.setdefault(str(b[side]), {})[firer] = [u.id for u in options]
        return need

    def _to_screening(self, b: Procedure, stage: str) -> None:
        need = self._screen_choices(b)
        if need:
            step: Step = "opening_screening" if stage == "opening" else "screening"
            waiting = [n for n in (b["attacker"], b["defender"]) if n in need]
            self._advance_battle(b, step, waiting, "HA1")
        else:
            self._to_fire(b, stage)

    def _to_fire(self, b: Procedure, stage: str) -> None:
        volley = self._volley(b, stage)
        waiting = list(dict.fromkeys(self._chooser(b, u.id) for u, _, _ in volley))
        rule = {"convoy": "CV4"}.get(b["kind"], "NC2" if stage == "opening" else "NC3")
        self._advance_battle(b, "opening_fire" if stage == "opening" else "fire", waiting, rule)

    @command
    def choose_targets(self, battle: int, nation: str, targets: dict[str, str] | None) -> dict[str, str]:
        """HA1-HA3, AS3, SM4: a nation picks the target of each of its selective shooters
        (None: spread over the legal targets, most valuable first)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        self._require_steps(b, ("targets", "opening_targets"), "HA1")
        self._require_waiting(b, nation)
        if b["kind"] in PURE:
            picked = self._decided(b, targets, "attacker" if nation == b["attacker"] else "defender")
            return dict(picked.facts[0].pairs)
        stage = "opening" if b["step"] == "opening_targets" else "main"
        board = self.board()
        plan: dict[str, list[str]] = {}
        enemies: dict[str, list[Unit]] = {}
        for u, _, legal in self._volley(b, stage):
            if legal and self._chooser(b, u.id) == nation:
                plan[u.id] = legal
                other = "defender" if self._side_of(b, u.id) == "attacker" else "attacker"
                enemies[u.id] = self._active(b, other)

        def why(firer: str, target: str) -> RuleViolation:
            return hits_rules.why_not_target(board, board.units[firer], board.units[target], enemies[firer], b["rule"])

        if targets is None:
            chosen = hits_rules.default_targets(board, plan)
        else:
            chosen = hits_rules.check_targets(board, b["rule"], nation, plan, targets, why)
        self._record(
            TargetsChosen,
            battle=battle,
            nation=nation,
            targets=chosen,
            default=targets is None,
            rule=b["rule"],
        )
        waiting = [n for n in b["waiting"] if n != nation]
        if waiting:
            self._advance_battle(b, b["step"], waiting, b["rule"])
        else:
            self._to_screening(b, stage)
        return chosen

    @command
    def choose_screens(self, battle: int, nation: str, screens: dict[str, str] | None) -> dict[str, str]:
        """HA1, HA3: the owner of targeted ships lets escorts take shots instead, firer -> escort
        (None: the cheapest loss; {} : no screening)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        if b["step"] in ("fire", "opening_fire"):
            raise RuleViolation(
                "HA1",
                f"too late to screen in battle {battle}: screens are chosen before the dice, and this volley's "
                f"targets and screens are set; it is {self.describe_waiting(b)}",
            )
        self._require_steps(b, ("screening", "opening_screening"), "HA1")
        self._require_waiting(b, nation)
        side: Side = "attacker" if nation == b["attacker"] else "defender"
        if b["kind"] in PURE:
            return dict(self._decided(b, screens, side).facts[0].pairs)
        stage = "opening" if b["step"] == "opening_screening" else "main"
        board = self.board()
        own = self._active(b, side)
        own_ids = {u.id for u in own}
        shots = {f: s["target"] for f, s in sorted(b["shots"].items()) if s["target"] in own_ids}
        air = all(board.unit_type(board.units[f]).is_air for f in shots) if shots else False
        rule = "HA3" if air else "HA1"
        if screens is None:
            chosen = hits_rules.default_screens(board, shots, own)
        else:
            chosen = hits_rules.check_screens(board, rule, nation, shots, own, screens)
        self._record(
            ScreeningChosen,
            battle=battle,
            nation=nation,
            screens=chosen,
            default=screens is None,
            rule=rule,
        )
        waiting = [n for n in b["waiting"] if n != nation]
        if waiting:
            self._advance_battle(b, b["step"], waiting, "HA1")
        else:
            self._to_fire(b, stage)
        return chosen

    @command
    def fire(self, battle: int, dice: DiceSource) -> int:
        """SM4, AS4, NC2, NC3: roll one die per firing unit, in the order `pending` lists; the
        casualties of the volley are taken together. Returns the number of hits."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        self._require_steps(b, ("fire", "opening_fire"), "NC3")
        if b["kind"] in PURE:
            return self._rolled(b, dice).successes
        stage = "opening" if b["step"] == "opening_fire" else "main"
        board = self.board()
        naval = b["kind"] == "naval"
        kind = "naval_combat" if naval else "convoy_combat"
        rule = b["rule"]
        groups: dict[tuple[Side, str], int] = {}
        scored = 0
        volley = self._volley(b, stage)
        for unit, attacking, legal in volley:
            shot = b["shots"].get(unit.id)
            if legal is not None and shot is None:
                continue
            side = "attacker" if attacking else "defender"
            if b["kind"] == "convoy":
                spec = (
                    convoy.return_fire_roll(board, unit)
                    if attacking
                    else convoy.attack_roll(board, unit, b["attacker"])
                )
            else:
                spec = combat.fire_roll(board, unit, attacking)
            if shot is not None:
                screen = f", screened by {shot['screen']}" if shot["screen"] else ""
                purpose = f"{unit.id} ({unit.type}) fires at {shot['target']}{screen}"
            else:
                purpose = f"{unit.id} ({unit.type}) fires at {b['defender' if attacking else 'attacker']}'s units"
            hit = self._roll_at(dice, unit, spec, rule=rule, purpose=purpose, kind=kind, battle=battle)
            if not hit:
                continue
            scored += 1
            if shot is not None:
                ut = board.unit_type(unit)
                how = "HA3" if ut.is_air else "HA1"
                self._record(
                    TargetHit,
                    battle=battle,
                    firer=unit.id,
                    target=shot["target"],
                    unit=shot["screen"] or shot["target"],
                    rule=how,
                )
            else:
                other: Side = "defender" if attacking else "attacker"
                key = (other, board.unit_type(unit).unit_class)
                groups[key] = groups.get(key, 0) + 1
        waiting: list[str] = []
        order = list(self.ruleset.hit_priority)

        def group_order(key: tuple[str, str]) -> tuple[bool, int, str]:
            # HA5/HA6 hits are placed in the ruleset's order of firing classes, then the rest.
            side, firing_class = key
            return (
                side != "attacker",
                order.index(firing_class) if firing_class in order else len(order),
                firing_class,
            )

        for (side, firing_class), n in sorted(groups.items(), key=lambda kv: group_order(kv[0])):
            self._record(
                NavalHitsScored,
                battle=battle,
                side=side,
                nation=b[side],
                firing_class=firing_class,
                hits=n,
                rule=hits_rules.priority_rule(firing_class),
            )
        for side in SIDES:
            own = [g for g in b["groups"] if g["side"] == side]
            if not own:
                continue
            spec_groups = [(g["class"], g["hits"]) for g in own]
            units = self._active(b, side)
            taken = Counter(u for u in b["pending_hits"] if u in {x.id for x in units})
            nc6 = b["kind"] == "naval"
            placeable = hits_rules.allocate(board, b[side], spec_groups, units, taken, None, nc6)
            lost = sum(n for _, n in spec_groups) - len(placeable)
            if lost:
                # NC6, HA4-HA6: hits with no unit left that they may fall on are lost, and said so.
                if b["kind"] == "convoy":
                    rule = "CV4"
                else:
                    rule = "NC6" if any(board.unit_type(u).is_submarine for u in units) else "NC3"
                self._record(HitsLost, battle=battle, side=side, nation=b[side], hits=lost, rule=rule)
            if hits_rules.allocation_is_forced(board, spec_groups, units, taken, nc6):
                chosen = placeable
                if not chosen:
                    continue  # every unit there is already lost to this volley: the hits are lost
                self._record(
                    CasualtiesChosen,
                    battle=battle,
                    side=side,
                    nation=b[side],
                    units=chosen,
                    default=True,
                    rule=hits_rules.priority_rule(spec_groups[0][0]),
                )
            else:
                waiting.append(b[side])
        if waiting:
            self._advance_battle(b, "casualties", waiting, "HA7")
        else:
            self._end_volley(b, stage)
        return scored

    @command
    def choose_casualties(self, battle: int, nation: str, units: list[str] | None) -> list[str]:
        """HA4-HA7: the owner places the non-selective hits on its units, within the order the
        rules impose (None: the cheapest legal choice)."""
        b = self._procedure(battle, "naval", "convoy")
        self._require_steps(b, ("casualties",), "HA7")
        self._require_waiting(b, nation)
        board = self.board()
        side = "attacker" if nation == b["attacker"] else "defender"
        groups = [(g["class"], g["hits"]) for g in b["groups"] if g["side"] == side]
        own = self._active(b, side)
        taken = Counter(u for u in b["pending_hits"] if u in {x.id for x in own})
        chosen = hits_rules.allocate(board, nation, groups, own, taken, units, b["kind"] == "naval")
        self._record(
            CasualtiesChosen,
            battle=battle,
            side=side,
            nation=nation,
            units=chosen,
            default=units is None,
            rule="HA7",
        )
        waiting = [n for n in b["waiting"] if n != nation]
        if waiting:
            self._advance_battle(b, "casualties", waiting, "HA7")
        else:
            self._end_volley(b, "main")
        return chosen

    def _take_hits(self, b: Procedure, units: list[str], rule: str) -> None:
        """F3, NC5: every hit on a unit, together; a capital ship's first hit damages it. A hit
        on a unit already sunk this volley (two shots at one target) is lost."""
        board = self.board()
        for uid, n in Counter(units).items():
            if uid not in board.units:
                continue
            left = hits_rules.hits_to_sink(board, board.units[uid])
            for i in range(min(n, left)):
                self._record(UnitHit, battle=b["id"], unit=uid, sunk=i + 1 >= left, rule=rule)

    def _end_volley(self, b: Procedure, stage: str) -> None:
        """NC2: opening-fire casualties go before the other units fire; NC3, AS4, SM4: every other
        volley's casualties go together after it."""
        units = list(b["pending_hits"]) + [u for side in ("attacker", "defender") for u in b["chosen"].get(side, [])]
        rule = {"convoy": "CV4"}.get(b["kind"], "NC2" if stage == "opening" else "NC3")
        self._take_hits(b, units, rule)
        if b["kind"] == "convoy":
            self._to_convoy_table(b)
        elif stage == "opening":
            if self._active(b, "attacker") and self._active(b, "defender"):
                self._to_targets(b, "main")
            else:
                self._close_fight(b)
        else:
            self._naval_after_round(b)
