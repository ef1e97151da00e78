"""What a procedure waits for, for `pending` and for refusals: its facts (eligible units, dice
needed) and their description, and why a procedure ended."""

from __future__ import annotations

from typing import Any

from domain.campaign.base import CampaignBase
from domain.rules import asw, combat, convoy, interception
from domain.text import plural


class Waiting(CampaignBase):
    """Pending procedures: facts and descriptions."""

    def pending(self) -> list[dict[str, Any]]:
        """What the game waits for (see `open_items`)."""
        return self.open_items()

    def _eligible(self, b: dict[str, Any]) -> list[str] | None:
        """The units a search step may send (all of them is the default), for `pending --json`."""
        if b["step"] != "search":
            return None
        board = self.board()
        if b["kind"] == "convoy":
            units = convoy.eligible_searchers(board, b["defender"], b["zone"], self._committed)
        elif b["kind"] == "interception":
            units = interception.eligible_searchers(board, b["attacker"], b["zone"], self._committed)
        else:
            units = asw.eligible_units(board, b["attacker"], b["zone"], self._committed)
        return [u.id for u in units]

    def _dice_needed(self, b: dict[str, Any]) -> dict[str, Any] | None:
        """The dice the step waits for: how many, of how many faces, and in which order (what
        each die is for); searches with every eligible unit. None for a decision."""
        rs, step = self.ruleset, b["step"]
        order: list[str]
        if step == "merchant_defence":
            faces = rs.faces_for("merchant_defence")
            order = [f"merchant defence die {i + 1}" for i in range(rs.merchant_defence_dice)]
        elif step == "convoy_table":
            faces = rs.faces_for("convoy_table")
            order = [u for u in b["subs"] if u in self.units]
        elif step in ("fire", "opening_fire"):
            kind = {"naval": "naval_combat", "convoy": "convoy_combat"}.get(b["kind"], "asw_combat")
            faces = rs.faces_for(kind)
            stage = "opening" if step == "opening_fire" else "main"
            order = [u.id for u, _, legal in self._volley(b, stage) if legal is None or u.id in b.get("shots", {})]
        elif step == "search":
            eligible = self._eligible(b) or []
            if b["kind"] == "asw":
                faces = rs.faces_for("asw_search")
                subs = [u for u in b["subs"] if u in self.units]
                order = [f"{u} vs {s}" for u in eligible for s in subs]
            else:
                faces = rs.faces_for("convoy_search" if b["kind"] == "convoy" else "interception_search")
                order = list(eligible)
        else:
            return None
        return {"count": len(order), "faces": faces, "order": order}

    def describe_waiting(self, b: dict[str, Any]) -> str:
        convoy_steps = ("merchant_defence", "merchant_casualty", "search", "convoy_table")
        if b["kind"] != "convoy" or b["step"] not in convoy_steps:
            return self._describe_procedure(b)
        who = " and ".join(b["waiting"]) or "nobody"
        rs = self.ruleset
        board = self.board()
        if b["step"] == "merchant_defence":
            dice = f"{rs.merchant_defence_dice}D{rs.faces_for('merchant_defence')}"
            sinks = rs.merchant_defence_sinks_on_total
            what = f"to roll merchant defence ({dice}; a total of {sinks} sinks one submarine)"
        elif b["step"] == "merchant_casualty":
            what = f"to choose the submarine sunk by merchant defence among {', '.join(b['subs'])}"
        elif b["step"] == "search":
            options = ", ".join(
                f"{u.id} at {convoy.search_roll(board, u, b['attacker']).target}"
                for u in convoy.eligible_searchers(board, b["defender"], b["zone"], self._committed)
            )
            what = f"to choose which ships and aircraft search (eligible: {options or 'none'}; default: all)"
        else:
            subs = [u for u in b["subs"] if u in self.units]
            what = (
                f"to roll the convoy table, 1D{rs.faces_for('convoy_table')} for each taking-part submarine "
                f"in this order: {', '.join(subs)}"
            )
        return f"waiting for {who} {what} [{b['rule']}]"

    def _describe_procedure(self, b: dict[str, Any]) -> str:
        """What an interception, ASW combat or naval battle waits for, with what a player needs to
        answer: the eligible units and their target numbers, the legal choices, the dice order."""
        who = " and ".join(b["waiting"]) or "nobody"
        step, kind = b["step"], b["kind"]
        board = self.board()
        if step == "search" and kind == "interception":
            mover = b["attacker"]
            options = ", ".join(
                f"{u.id} at {interception.search_roll(board, u, mover).target}"
                for u in interception.eligible_searchers(board, mover, b["zone"], self._committed)
            )
            what = (
                f"to choose which units search for {mover}'s {', '.join(b['subs'])} passing through "
                f"(eligible: {options}; default: all; none may search)"
            )
        elif step == "search":
            subs = [board.units[u] for u in b["subs"] if u in board.units]
            searchers = asw.eligible_units(board, b["attacker"], b["zone"], self._committed)
            options = ", ".join(
                f"{u.id} at {asw.search_roll(board, u, subs[0]).target}" if subs else u.id for u in searchers
            )
            dice = plural(len(subs) * len(searchers), "die")
            what = (
                f"to choose the units searching for {', '.join(b['subs'])}, each rolling once per submarine "
                f"(eligible: {options}; default: all, {dice} in the order listed, each unit against each submarine)"
            )
        elif step == "detect":
            what = (
                f"to name the {plural(b['found'], 'submarine')} found among {', '.join(b['subs'])} "
                f"(default: {', '.join(b['subs'][: b['found']])})"
            )
        elif step in ("targets", "opening_targets"):
            stage = "opening" if step == "opening_targets" else "main"
            per: dict[str, list[str]] = {}
            for u, _, legal in self._volley(b, stage):
                if legal:
                    per.setdefault(self._chooser(b, u.id), []).append(f"{u.id} at {'/'.join(legal)}")
            what = "to choose targets: " + "; ".join(f"{n}: {', '.join(per[n])}" for n in b["waiting"] if n in per)
            what += " (default: spread, most valuable first)"
        elif step in ("screening", "opening_screening"):
            need = self._screen_choices(b)
            parts = [
                f"{firer}'s shot at {b['shots'][firer]['target']} may be taken by {'/'.join(options)}"
                for n in b["waiting"]
                for firer, options in need.get(n, {}).items()
            ]
            what = f"to choose screening escorts: {'; '.join(parts)} (default: the cheapest loss)"
        elif step in ("fire", "opening_fire"):
            order = [u.id for u, _, legal in self._volley(b, "opening" if step == "opening_fire" else "main")]
            what = f"to roll {plural(len(order), 'die')}, one per firing unit in this order: {', '.join(order)}"
        elif step == "casualties":
            parts = []
            for n in b["waiting"]:
                side = "attacker" if n == b["attacker"] else "defender"
                hits = sum(g["hits"] for g in b["groups"] if g["side"] == side)
                units = ", ".join(u.id for u in self._active(b, side))
                parts.append(f"{n} places {plural(hits, 'hit')} among {units}")
            what = f"to choose casualties: {'; '.join(parts)} (HA4-HA6 order; default: the cheapest legal choice)"
        elif step == "decide" and kind == "interception":
            back = b["route"][b["index"] - 1] if b["index"] > 0 else None
            retreat = f" or retreat to {back}" if back else ""
            what = f"to choose for {', '.join(b['detected'])}: fight on, submerge{retreat} (default: submerge)"
        elif step == "decide" and kind == "asw":
            what = f"to choose which of {', '.join(b['detected'])} submerge (default: all; the others fight on)"
        elif step == "decide":
            parts = []
            for n in b["waiting"]:
                side = "attacker" if n == b["attacker"] else "defender"
                diving = [u.id for u in self._active(b, side) if board.unit_type(u).is_submarine]
                choices = [f"submerge {'/'.join(diving)}"] if diving else []
                if side == "attacker":
                    zones = combat.retreat_zones(board, n, b["zone"])
                    if zones:
                        choices.append(f"retreat to {'/'.join(zones)}")
                parts.append(f"{n}: {' or '.join(choices)}")
            what = f"to decide: {'; '.join(parts)} (default: fight on)"
        elif step == "continue":
            free = [u for u in b["undetected"] + b["detected"] if u in self.units]
            what = (
                f"to choose whether {', '.join(free)} go on to {b['route'][-1]} or stop in {b['zone']} (default: go on)"
            )
        else:
            what = step.replace("_", " ")
        return f"waiting for {who} {what} [{b['rule']}]"

    def _ending_reason(self, b: dict[str, Any], rule: str) -> str:
        """Why a procedure ends, in the words a player would use (the summary of BattleEnded)."""
        kind = b["kind"]
        if kind == "convoy":
            if not any(u in self.units for u in b["subs"]):
                return "no taking-part submarine is left"
            return "it lasts one round; the surviving submarines stay"
        if kind == "naval":
            if b.get("retreated"):
                return f"{b['attacker']} retreated"
            attackers, defenders = self._active(b, "attacker"), self._active(b, "defender")
            if (
                not attackers
                and b["submerged"]
                and any(self.units.get(u, {}).get("nation") == b["attacker"] for u in b["submerged"])
            ):
                return f"every submarine of {b['attacker']} left in the battle submerged"
            if not attackers:
                return f"{b['attacker']} has no unit left in the battle"
            if not defenders:
                return f"{b['defender']} has no unit left in the battle"
            return "no unit left can hit an enemy (NC6)"
        if rule == "SM5":
            return "the submarines not detected went on or stayed; the interception is over"
        if rule == "AS2":
            return "no submarine was detected"
        hunting = "defender" if kind == "interception" else "attacker"
        if not self._active(b, hunting):
            return "no hunting unit is left"
        if not [u for u in b.get("detected", []) if u in self.units]:
            return "every detected submarine was sunk, submerged or went back"
        return "nobody left can attack"
