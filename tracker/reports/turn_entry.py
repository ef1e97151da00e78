"""The TURN entry of a report (the shape is described in `tracker.reports.report`): the records
of one national turn, in order, filed into its sections (moves, research, battles, rolls,
casualties, undos and the rest)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracker.reports.context import ReportContext
from tracker.reports.text import BATTLE_STARTS, DICE_RECORD, NEUTRALITY
from tracker.service.undo_log import stays_in_effect


def _roll(r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    return {
        "seq": r["seq"],
        "roll": d["roll"],
        "roller": d["roller"],
        "unit": d.get("unit"),
        "rule": d["rule"],
        "purpose": d["purpose"],
        "kind": d["kind"],
        "faces": d["faces"],
        "values": list(d["values"]),
        "target": d.get("target"),
        "base_target": d.get("base_target"),
        "success_when": d.get("success_when", "at_most"),
        "modifiers": list(d.get("modifiers", [])),
        "outcome": d.get("outcome", ""),
        "source": d.get("source", "auto"),
        "reference": d.get("reference"),
        "battle": d.get("battle"),
        "undone_by": r["undone_by"],
    }


def stays_note(kind: str) -> str | None:
    """D5: what an undo of an event of `kind` left in effect, with its rule ("the reveal stays
    in effect, D5"), or None."""
    stays = stays_in_effect(kind)
    return None if stays is None else f"{stays[0]}, {stays[2]}"


def _step(r: dict[str, Any]) -> dict[str, Any]:
    summary, undone_by = r["summary"], r["undone_by"]
    stays = stays_note(r["kind"]) if undone_by else None
    if stays is not None:
        # D5: an undo took the event back yet it holds (a seed revealed stays public): said as
        # `log` says it, not struck through as if it were gone.
        summary, undone_by = f"{summary} (undone by event {undone_by}, but {stays})", None
    return {"seq": r["seq"], "kind": r["kind"], "rule": r["rule"], "summary": summary, "undone_by": undone_by}


def undo_entry(r: Mapping[str, Any]) -> dict[str, Any]:
    """The entry of an undo recorded at record `r`; what it took back (`undone_events`) is
    filled in by the report, which reads those events wherever they are."""
    d = r["data"]
    return {
        "seq": r["seq"],
        "turn": r["turn"],
        "undone_from": d["undone_from"],
        "undone_to": d["undone_to"],
        "override": bool(d["override"]),
        "reason": d.get("reason", ""),
        "rolls": list(d.get("rolls", [])),
        "agreed_by": list(d.get("agreed_by", [])),
        "summary": r["summary"],
        "undone_by": r["undone_by"],
        "undone_events": [],
    }


def _casualty(ctx: ReportContext, r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    unit_type, nation = ctx.unit(d["unit"])
    # An aircraft lost is shot down, a ship sunk (F3, NC5: a capital ship may be damaged first).
    air = unit_type in ctx.ruleset.units and ctx.ruleset.units[unit_type].is_air
    return {
        "seq": r["seq"],
        "unit": d["unit"],
        "type": unit_type,
        "nation": nation,
        "result": ("shot down" if air else "sunk") if d["sunk"] else "damaged",
        "battle": d.get("battle"),
        "rule": d.get("rule", r["rule"]),
        "undone_by": r["undone_by"],
    }


def _move(r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    return {
        "seq": r["seq"],
        "phase": r["phase"],
        "nation": d["nation"],
        "units": list(d["units"]),
        "path": list(d["path"]),
        "hostile_passed": list(d["hostile_passed"]),
        "carried": list(d["carried"]),
        "undone_by": r["undone_by"],
    }


def _ntr_placed(r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    return {"seq": r["seq"], "nation": d["nation"], "zone": d["zone"], "count": d["count"], "undone_by": r["undone_by"]}


def _research(r: dict[str, Any]) -> dict[str, Any]:
    """Research paid for, waiting for its roll and its result."""
    d = r["data"]
    return {
        "seq": r["seq"],
        "nation": d["nation"],
        "technology": d["technology"],
        "cost": d["cost"],
        "roll": None,
        "success": False,
        "level": None,
        "acquired": False,
        "undone_by": r["undone_by"],
    }


def _collected(r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    return {
        "seq": r["seq"],
        **{k: d[k] for k in ("nation", "ntr_value", "income", "lost", "collected", "balance")},
        "undone_by": r["undone_by"],
    }


def _ntr_lost(r: dict[str, Any]) -> dict[str, Any]:
    d = r["data"]
    return {
        "seq": r["seq"],
        **{k: d[k] for k in ("nation", "zone", "count", "rolled")},
        "battle": d["battle"],
        "undone_by": r["undone_by"],
    }


def _battle(r: dict[str, Any]) -> dict[str, Any]:
    """A battle first met at record `r`: a convoy battle until its declaration says otherwise."""
    return {
        "battle": r["battle"],
        "kind": "convoy",
        "zone": r["zones"][0] if r["zones"] else None,
        "attacker": None,
        "defender": None,
        "defending_nations": [],
        "submarines": [],
        "ntr": None,
        "seq": r["seq"],
        "undone_by": r["undone_by"],
        "rolls": [],
        "steps": [],
        "casualties": [],
        "ntr_destroyed": 0,
        "ended": False,
        "survivors": [],
        "went_on": [],
    }


def _empty_turn(ctx: ReportContext, number: int, records: list[dict[str, Any]], end: dict[str, Any]) -> dict[str, Any]:
    """The TURN entry of a national turn before its records are filed into its sections."""
    first = records[0] if records else None
    return {
        "turn": number,
        "round": end["round"] if first is None else first["round"],
        "nation": end["nation"] if first is None else first["nation"],
        "complete": number < ctx.current,
        "passed_over": number == 1 and ctx.first_passed_over,
        "first_seq": first["seq"] if first else None,
        "last_seq": records[-1]["seq"] if records else None,
        "events": [{**_step(r), "phase": r["phase"]} for r in records],
        "moves": [],
        "ntr_placed": [],
        "research": [],
        "battles": [],
        "rolls": [],
        "casualties": [],
        "ntr_lost": [],
        "resources": [],
        "undos": [],
        "purchases": [],
        "unplaced": {},
        "adjustments": [],
        "dice_record": [],
        "neutrality": [],
        "other": [],
        # F8: filled in by the report, which reads the turn played before (`war_entries`).
        "war_entries": [],
        "end": {
            "seq": end["seq"],
            "phase": end["phase"],
            "nations": end["nations"],
            # The log's hash after the turn: posted to the group, it pins this history down.
            "hash": next((r["data"]["hash"] for r in reversed(records) if r["seq"] == end["seq"]), None),
        },
    }


class _TurnFiler:
    """Files the records of one national turn, in order, into the sections of its TURN entry;
    the battles and the research of the turn are kept by number until the turn is done, and the
    interceptions whose submarines go on until their move is recorded."""

    def __init__(self, ctx: ReportContext, section: dict[str, Any]) -> None:
        self.ctx = ctx
        self.section = section
        self.battles: dict[int, dict[str, Any]] = {}
        self.research: dict[int, dict[str, Any]] = {}
        self.going_on: list[tuple[dict[str, Any], frozenset[str]]] = []

    def file(self, r: dict[str, Any]) -> None:
        kind, d, section = r["kind"], r.get("data", {}), self.section
        if kind == "PhaseAdvanced":
            return
        if kind in DICE_RECORD:
            section["dice_record"].append(_step(r))
        elif kind in NEUTRALITY:
            section["neutrality"].append(_step(r))
        elif kind == "DiceRolled":
            self.roll(r)
        elif kind == "UnitsMoved":
            section["moves"].append(_move(r))
            self.went_on(r)
        elif kind == "NtrPlaced":
            section["ntr_placed"].append(_ntr_placed(r))
        elif kind == "ResearchPaid":
            entry = _research(r)
            self.research[d["action"]] = entry
            section["research"].append(entry)
        elif kind == "TechnologyAdvanced":
            found = self.research.get(d["action"])
            if found is not None:
                found["level"], found["acquired"] = d["level"], bool(d["acquired"])
            else:
                section["other"].append(_step(r))
        elif kind == "ResourcesCollected":
            section["resources"].append(_collected(r))
        elif kind == "ActionUndone":
            section["undos"].append(undo_entry(r))
        elif kind in ("UnitsPurchased", "UnitsPlaced", "PurchasesForfeited"):
            self.purchase(r)
        elif kind == "Adjusted":
            section["adjustments"].append({**_step(r), "reason": d["reason"]})
        elif r["battle"] is not None:
            self.battle_event(r)
        elif kind == "UnitHit":
            section["casualties"].append(_casualty(self.ctx, r))
        else:
            section["other"].append(_step(r))

    def battle_of(self, r: dict[str, Any]) -> dict[str, Any]:
        if r["battle"] not in self.battles:
            self.battles[r["battle"]] = _battle(r)
        return self.battles[r["battle"]]

    def roll(self, r: dict[str, Any]) -> None:
        """A roll goes to its battle or its research, and to the turn's list of rolls."""
        roll = _roll(r)
        self.section["rolls"].append(roll)
        if roll["battle"] is not None:
            self.battle_of(r)["rolls"].append(roll)
        elif roll["kind"] == "research" and r["data"]["action"] in self.research:
            entry = self.research[r["data"]["action"]]
            entry["roll"] = roll
            entry["success"] = roll["outcome"] == "success"
        else:
            self.section["other"].append(_step(r))

    def purchase(self, r: dict[str, Any]) -> None:
        """PU1, PU2: what was bought and placed, and what still waits to be placed."""
        d = r.get("data", {})
        self.section["purchases"].append(_step(r))
        if not r["undone_by"]:
            waiting = self.section["unplaced"].setdefault(d["nation"], {})
            if r["kind"] == "PurchasesForfeited":
                # PU2: given up with nowhere to go; they wait no longer.
                for unit_type, count in d["units"].items():
                    waiting[unit_type] = waiting.get(unit_type, 0) - count
                return
            change = d["count"] if r["kind"] == "UnitsPurchased" else -len(d["units"])
            waiting[d["unit_type"]] = waiting.get(d["unit_type"], 0) + change

    def battle_event(self, r: dict[str, Any]) -> None:
        """A step of a battle: its declaration or start names the sides; every step but a round
        change is listed; hits, NTR destroyed and the end change the battle's result."""
        kind, d, b = r["kind"], r.get("data", {}), self.battle_of(r)
        if kind == "ConvoyAttackDeclared":
            b.update(
                zone=d["zone"],
                attacker=d["attacker"],
                defender=d["defender"],
                submarines=list(d["submarines"]),
                ntr=d["ntr"],
                seq=r["seq"],
                undone_by=r["undone_by"],
            )
            return
        if kind in BATTLE_STARTS:
            b.update(
                kind=BATTLE_STARTS[kind],
                zone=d["zone"],
                attacker=d["nation"],
                defender=d["defender"],
                submarines=list(d.get("submarines", [])),
                seq=r["seq"],
                undone_by=r["undone_by"],
            )
            # NC1: the defence is every enemy naval unit in the zone, of whichever nation; the
            # event names one nation for them all.
            owners = [self.ctx.unit(u)[1] for u in d.get("defenders", [])]
            b["defending_nations"] = list(dict.fromkeys([d["defender"], *(n for n in owners if n != "?")]))
        if kind != "BattleAdvanced":
            b["steps"].append(_step(r))
        if kind == "UnitHit":
            casualty = _casualty(self.ctx, r)
            b["casualties"].append(casualty)
            self.section["casualties"].append(casualty)
        elif kind == "NtrDestroyed":
            self.section["ntr_lost"].append(_ntr_lost(r))
            if not r["undone_by"]:
                b["ntr_destroyed"] += d["count"]
        elif kind == "BattleEnded":
            b["ended"] = not r["undone_by"]
            b["survivors"] = list(d["survivors"])
        elif kind == "SubmarinesContinued" and d["continuing"] and not r["undone_by"]:
            self.going_on.append((b, frozenset(d["continuing"])))

    def went_on(self, r: dict[str, Any]) -> None:
        """SM5: the move that takes an interception's free submarines on from its zone (recorded
        after the interception ends) says where they went."""
        d = r["data"]
        for n, (b, units) in enumerate(self.going_on):
            if frozenset(d["units"]) == units and d["path"][0] == b["zone"]:
                if not r["undone_by"]:
                    b["went_on"].append({"units": list(d["units"]), "zone": d["path"][-1], "seq": r["seq"]})
                del self.going_on[n]
                return

    def finish(self, undos_elsewhere: list[dict[str, Any]]) -> dict[str, Any]:
        """The entry, with what waits to be placed, the battles in order, and the undos recorded
        in other turns that took back events of this one."""
        section = self.section
        section["unplaced"] = {
            n: {t: c for t, c in sorted(w.items()) if c}
            for n, w in sorted(section["unplaced"].items())
            if any(w.values())
        }
        section["battles"] = [self.battles[k] for k in sorted(self.battles)]
        seen = {u["seq"] for u in section["undos"]}
        section["undos"].extend(u for u in undos_elsewhere if u["seq"] not in seen)
        section["undos"].sort(key=lambda u: u["seq"])
        return section


def file_turn(
    ctx: ReportContext,
    number: int,
    records: list[dict[str, Any]],
    undos_elsewhere: list[dict[str, Any]],
    end: dict[str, Any],
) -> dict[str, Any]:
    """The TURN entry of national turn `number`: its `records` filed in order, the undos
    recorded in other turns that took back events of it, and `end`, its series entry."""
    filer = _TurnFiler(ctx, _empty_turn(ctx, number, records, end))
    for r in records:
        filer.file(r)
    return filer.finish(undos_elsewhere)
