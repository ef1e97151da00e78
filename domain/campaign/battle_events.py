"""The events of the four procedures (convoy battles, interceptions, ASW combat, naval battles) and
how each folds into a procedure's state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from domain.campaign.events import Event, keep_stored_topics
from domain.campaign.procedure import Step
from domain.campaign.state import UNIT_LISTS, new_procedure
from domain.chain import UPCAST_ADDED

if TYPE_CHECKING:
    from domain.campaign import Campaign


class ConvoyAttackDeclared(Event):
    battle: int
    attacker: str
    defender: str
    zone: str
    submarines: list[str]
    ntr: int

    def apply(self, agg: Campaign) -> None:
        # A redo re-records a battle's start with its number: the count never goes back.
        agg.battle_count = max(agg.battle_count, self.battle)
        agg.convoy_declared.append([self.attacker, self.zone])
        agg.battles[str(self.battle)] = {
            "id": self.battle,
            "kind": "convoy",
            "zone": self.zone,
            "attacker": self.attacker,
            "defender": self.defender,
            "subs": list(self.submarines),
            "step": "declared",
            "waiting": [],
            "rule": "CV1",
            "detecting": [],
            "hits": {},
            "chosen": {},
            # CV4: the round is fought with the selective volley of the other procedures.
            "round": 0,
            "shots": {},
            "pending_hits": [],
            "groups": [],
            "submerged": [],
        }


class BattleAdvanced(Event):
    battle: int
    step: Step
    waiting: list[str]
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        if self.step not in ("casualties", "merchant_casualty"):
            # Hits and choices belong to the casualty step just closed.
            b["hits"], b["chosen"] = {}, {}
            if "pending_hits" in b:
                b["pending_hits"], b["groups"] = [], []
        if self.step in ("targets", "opening_targets") and b["step"] != self.step and "shots" in b:
            # A new volley: the targets of the last one are spent.
            b["shots"] = {}
        b["step"], b["waiting"], b["rule"] = self.step, list(self.waiting), self.rule


class SearchersChosen(Event):
    battle: int
    units: list[str]

    def apply(self, agg: Campaign) -> None:
        agg.battles[str(self.battle)]["searchers"] = list(self.units)
        agg.committed += self.units


class DetectionsRecorded(Event):
    battle: int
    detected: list[str]
    failed: list[str]

    def apply(self, agg: Campaign) -> None:
        agg.battles[str(self.battle)]["detecting"] = list(self.detected)


class HitsScored(Event):
    battle: int
    side: str
    nation: str
    hits: int
    candidates: list[str]
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        b["hits"][self.side] = {
            "hits": self.hits,
            "candidates": list(self.candidates),
            "nation": self.nation,
        }


class CasualtiesChosen(Event):
    battle: int
    side: str
    nation: str
    units: list[str]
    default: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        agg.battles[str(self.battle)]["chosen"][self.side] = list(self.units)


class UnitHit(Event):
    battle: int | None
    unit: str
    sunk: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        if self.sunk:
            del agg.units[self.unit]
            agg.lost[self.unit] = f"sunk in battle {self.battle}" if self.battle else "sunk"
            for b in agg.battles.values():
                lists = cast(dict[str, list[str]], b)  # the unit lists of UNIT_LISTS, by name
                for key in UNIT_LISTS:
                    if self.unit in lists.get(key, []):
                        lists[key].remove(self.unit)
        else:
            agg.units[self.unit]["damage"] += 1


class NtrDestroyed(Event):
    battle: int
    nation: str
    zone: str
    count: int
    rolled: int

    def apply(self, agg: Campaign) -> None:
        agg.ntr[self.nation][self.zone] -= self.count
        agg.ntr_lost[self.nation] = agg.ntr_lost.get(self.nation, 0) + self.count
        agg.ntr_lost_phase[self.nation] = agg.ntr_lost_phase.get(self.nation, 0) + self.count


class BattleEnded(Event):
    class_version = 2

    battle: int
    rule: str
    survivors: list[str]
    reason: str  # why it ended, in words (version 2; empty in older logs)

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["reason"] = ""
        state[UPCAST_ADDED] = ["reason"]

    def apply(self, agg: Campaign) -> None:
        b = agg.battles.pop(str(self.battle))
        agg.ended[str(self.battle)] = [b["kind"], self.rule]


class InterceptionStarted(Event):
    """SM2: a submarine group pauses in a hostile zone where the enemy may search."""

    battle: int
    nation: str
    defender: str
    zone: str
    submarines: list[str]
    route: list[str]
    index: int
    retreat: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        agg.battle_count = max(agg.battle_count, self.battle)
        agg.battles[str(self.battle)] = {
            **new_procedure(self.battle, "interception", self.zone, self.nation, self.defender),
            "subs": list(self.submarines),
            "route": list(self.route),
            "index": self.index,
            "retreat": self.retreat,
            "searchers": [],
            "found": 0,
            "found_by": [],
            "hunters": [],
            "detected": [],
            "undetected": list(self.submarines),
            "retreated": [],
        }


class AswCombatStarted(Event):
    """AS1: a nation starts ASW combat against the enemy submarines in a zone."""

    battle: int
    nation: str
    defender: str
    zone: str
    submarines: list[str]
    rule: str

    def apply(self, agg: Campaign) -> None:
        agg.battle_count = max(agg.battle_count, self.battle)
        agg.fought.append(["asw", self.zone])
        agg.battles[str(self.battle)] = {
            **new_procedure(self.battle, "asw", self.zone, self.nation, self.defender),
            "subs": list(self.submarines),
            "searchers": [],
            "hunters": [],
            "detected": [],
            "undetected": list(self.submarines),
        }


class NavalBattleStarted(Event):
    """NC1: the moving nation attacks the enemy naval units in a zone."""

    battle: int
    nation: str
    defender: str
    zone: str
    attackers: list[str]
    defenders: list[str]
    rule: str

    def apply(self, agg: Campaign) -> None:
        agg.battle_count = max(agg.battle_count, self.battle)
        agg.fought.append(["naval", self.zone])
        agg.committed += self.attackers + self.defenders
        agg.battles[str(self.battle)] = {
            **new_procedure(self.battle, "naval", self.zone, self.nation, self.defender),
            "attackers": list(self.attackers),
            "defenders": list(self.defenders),
            "opening": [],
            "cancelled": [],
        }


class HuntersChosen(Event):
    """SM2, AS2: the units the searching side sends to search."""

    battle: int
    nation: str
    units: list[str]
    default: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        b["searchers"] = list(self.units)
        agg.committed += self.units
        if b["kind"] == "asw":
            # AS3: every unit taking part fights, whether or not its own search succeeded.
            b["hunters"] = list(self.units)


class SearchesResolved(Event):
    """SM3: the successful interception searches; each finds one submarine of the group."""

    battle: int
    found_by: list[str]
    failed: list[str]
    found: int
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        b["found_by"], b["hunters"], b["found"] = list(self.found_by), list(self.found_by), self.found


class SubmarinesDetected(Event):
    """SM3, AS2: which submarines are detected (they fight) and which are not."""

    battle: int
    detected: list[str]
    undetected: list[str]
    default: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        b["detected"], b["undetected"] = list(self.detected), list(self.undetected)


class RoundStarted(Event):
    battle: int
    round: int
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        b["round"] = self.round
        if self.round > 1 and "opening" in b:
            b["opening"] = []  # NC2: opening fire is for the first round only


class OpeningFire(Event):
    """NC2: which submarines of a side fire first, and whose opening fire enemy escorts cancel."""

    battle: int
    side: str
    nation: str
    firing: list[str]
    cancelled: list[str]
    escorts: list[str]
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        b["opening"] += self.firing
        b["cancelled"] += self.cancelled


class TargetsChosen(Event):
    """HA1, HA3, AS3, SM4: targets picked before any die of the volley is rolled."""

    battle: int
    nation: str
    targets: dict[str, str]
    default: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        shots = agg.battles[str(self.battle)]["shots"]
        for firer, target in self.targets.items():
            shots[firer] = {"target": target, "screen": None}


class ScreeningChosen(Event):
    """HA1, HA3: escorts that take a shot's hit instead of the ship it targets."""

    battle: int
    nation: str
    screens: dict[str, str]
    default: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        shots = agg.battles[str(self.battle)]["shots"]
        for firer, escort in self.screens.items():
            shots[firer]["screen"] = escort


class TargetHit(Event):
    """A selective shot hits: the hit falls on `unit` (the target, or the escort screening
    it) and is taken with the round's other casualties."""

    battle: int
    firer: str
    target: str
    unit: str
    rule: str

    def apply(self, agg: Campaign) -> None:
        agg.battles[str(self.battle)]["pending_hits"].append(self.unit)


class NavalHitsScored(Event):
    """HA4-HA6: hits from non-selective fire of one class, for the owner to allocate."""

    battle: int
    side: str
    nation: str
    firing_class: str
    hits: int
    rule: str

    def apply(self, agg: Campaign) -> None:
        agg.battles[str(self.battle)]["groups"].append(
            {"side": self.side, "nation": self.nation, "class": self.firing_class, "hits": self.hits}
        )


class FireWithheld(Event):
    """NC6: units that could fire but have nothing their hits may fall on roll no die."""

    battle: int
    units: list[str]
    rule: str

    def apply(self, agg: Campaign) -> None:
        pass


class HitsLost(Event):
    """NC6, HA4-HA6: hits scored that no unit in the battle may take."""

    battle: int
    side: str
    nation: str
    hits: int
    rule: str

    def apply(self, agg: Campaign) -> None:
        pass


class SubmarinesSubmerged(Event):
    """SM4, AS5, NC4: the submarines leave the fight and stay in the zone."""

    battle: int
    nation: str
    units: list[str]
    default: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        for key in ("detected", "attackers", "defenders"):
            if key in b:
                b[key] = [u for u in b[key] if u not in self.units]
        b["submerged"] += self.units
        if b["kind"] == "interception":
            # SM4: a submarine that submerged stays there; its movement ends for the turn.
            agg.movement_ended.update(dict.fromkeys(self.units, "SM4"))


class SubmarinesRetreated(Event):
    """SM4: detected submarines go back to the zone they came from."""

    battle: int
    nation: str
    units: list[str]
    zone: str
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        for uid in self.units:
            agg.units[uid]["at"] = self.zone
            agg.units[uid]["moved"] += 1
        b["detected"] = [u for u in b["detected"] if u not in self.units]
        b["retreated"] += self.units
        agg.movement_ended.update(dict.fromkeys(self.units, "SM4"))


class SubmarinesContinued(Event):
    """SM5: the free submarines that go on to their destination, and those that stop here."""

    battle: int
    nation: str
    continuing: list[str]
    stopping: list[str]
    default: bool
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        # SM5: detected submarines free to go (their hunters sunk), which the battle's end names.
        b["free_detected"] = [u for u in b["detected"] if u in agg.units]
        b["detected"], b["undetected"] = [], []
        if self.stopping:
            # SM5: submarines that stop to attack end their move; a naval battle is due.
            agg.movement_ended.update(dict.fromkeys(self.stopping, "SM5"))
            if b["zone"] not in agg.attack_zones:
                agg.attack_zones.append(b["zone"])


class AttackerRetreated(Event):
    """NC1: the attacker leaves the battle, all its remaining units together."""

    battle: int
    nation: str
    units: list[str]
    zone: str
    rule: str

    def apply(self, agg: Campaign) -> None:
        b = agg.battles[str(self.battle)]
        for uid in self.units:
            agg.units[uid]["at"] = self.zone
            agg.units[uid]["moved"] += 1
        b["attackers"] = [u for u in b["attackers"] if u not in self.units]
        b["retreated"] = list(self.units)


keep_stored_topics(globals(), __name__)
