"""What the game waits for, as facts (`pending`, refusals), and why a procedure ended.

The domain states facts; the words a player reads are the tracker's (`tracker.describe`),
given to the aggregate as its `describer`. Without one, a plain description of the facts is
used, so the domain works (and its refusals read) on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from domain.campaign.base import CampaignBase
from domain.campaign.procedure import Procedure
from domain.rules import asw, combat, convoy, interception


class Describer(Protocol):
    """Turns the facts of what the game waits for into words."""

    def waiting(self, facts: Mapping[str, Any]) -> str:
        """What a procedure waits for (`Campaign.waiting_facts`), e.g. in a refusal."""
        ...

    def item(self, facts: Mapping[str, Any]) -> str:
        """One open item of `pending` (T4): a procedure, or what the phase still requires."""
        ...


class PlainDescriber:
    """The facts named, without the tracker's sentences."""

    def waiting(self, facts: Mapping[str, Any]) -> str:
        who = " and ".join(facts["waiting"]) or "nobody"
        return f"waiting for {who}: {facts['step']} [{facts['rule']}]"

    def item(self, facts: Mapping[str, Any]) -> str:
        if facts.get("battle") is not None:
            return f"battle {facts['battle']} ({facts['kind']}, {facts['zone']}): {self.waiting(facts)}"
        return f"{facts['kind']} for {', '.join(facts['waiting'])} [{facts['rule']}]"


class Waiting(CampaignBase):
    """Pending procedures as facts; their words come from `describer`."""

    # The tracker sets its own (tracker.describe); see the module docstring.
    describer: ClassVar[Describer] = PlainDescriber()

    def pending(self) -> list[dict[str, Any]]:
        """What the game waits for (see `open_items`)."""
        return self.open_items()

    def _eligible(self, b: Procedure) -> list[str] | None:
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

    def _dice_needed(self, b: Procedure) -> dict[str, Any] | None:
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

    def describe_waiting(self, b: Procedure) -> str:
        """What a procedure waits for, in words (see `Describer.waiting`)."""
        return self.describer.waiting(self.waiting_facts(b))

    def waiting_facts(self, b: Procedure) -> dict[str, Any]:
        """What a procedure waits for, as facts without words: its step, the nations it waits
        for and the rule, and what they may answer (eligible units with their target numbers,
        legal targets and screens, hits to place, decisions, the dice order)."""
        facts: dict[str, Any] = {
            "battle": b["id"],
            "kind": b["kind"],
            "zone": b["zone"],
            "step": b["step"],
            "waiting": list(b["waiting"]),
            "rule": b["rule"],
            "attacker": b["attacker"],
            "defender": b["defender"],
        }
        step, kind = b["step"], b["kind"]
        board = self.board()
        rs = self.ruleset
        if kind == "convoy" and step == "merchant_defence":
            facts["dice"] = {
                "count": rs.merchant_defence_dice,
                "faces": rs.faces_for("merchant_defence"),
                "sinks_on_total": rs.merchant_defence_sinks_on_total,
            }
        elif kind == "convoy" and step == "merchant_casualty":
            facts["submarines"] = list(b["subs"])
        elif kind == "convoy" and step == "search":
            facts["searchers"] = [
                {"unit": u.id, "target": convoy.search_roll(board, u, b["attacker"]).target}
                for u in convoy.eligible_searchers(board, b["defender"], b["zone"], self._committed)
            ]
        elif kind == "convoy" and step == "convoy_table":
            facts["faces"] = rs.faces_for("convoy_table")
            facts["submarines"] = [u for u in b["subs"] if u in self.units]
        elif step == "search" and kind == "interception":
            facts["submarines"] = list(b["subs"])
            facts["searchers"] = [
                {"unit": u.id, "target": interception.search_roll(board, u, b["attacker"]).target}
                for u in interception.eligible_searchers(board, b["attacker"], b["zone"], self._committed)
            ]
        elif step == "search":
            # AS2: each searcher rolls once per submarine still there (alike: one target number).
            subs = [board.units[u] for u in b["subs"] if u in board.units]
            searchers = asw.eligible_units(board, b["attacker"], b["zone"], self._committed)
            facts["submarines"] = list(b["subs"])
            facts["searchers"] = [
                {"unit": u.id, "target": asw.search_roll(board, u, subs[0]).target if subs else None} for u in searchers
            ]
            facts["dice"] = {"count": len(subs) * len(searchers)}
        elif step == "detect":
            facts["submarines"] = list(b["subs"])
            facts["found"] = b["found"]
        elif step in ("targets", "opening_targets"):
            per: dict[str, list[dict[str, Any]]] = {}
            for u, _, legal in self._volley(b, "opening" if step == "opening_targets" else "main"):
                if legal:
                    per.setdefault(self._chooser(b, u.id), []).append({"unit": u.id, "legal": list(legal)})
            facts["targets"] = per
        elif step in ("screening", "opening_screening"):
            facts["screens"] = {
                nation: [
                    {"firer": firer, "target": b["shots"][firer]["target"], "options": options}
                    for firer, options in shots.items()
                ]
                for nation, shots in self._screen_choices(b).items()
            }
        elif step in ("fire", "opening_fire"):
            stage = "opening" if step == "opening_fire" else "main"
            facts["firing"] = [u.id for u, _, _ in self._volley(b, stage)]
        elif step == "casualties":
            facts["casualties"] = {}
            for n in b["waiting"]:
                side = "attacker" if n == b["attacker"] else "defender"
                facts["casualties"][n] = {
                    "hits": sum(g["hits"] for g in b["groups"] if g["side"] == side),
                    "units": [u.id for u in self._active(b, side)],
                }
        elif step == "decide" and kind in ("interception", "asw"):
            facts["detected"] = list(b["detected"])
            if kind == "interception":
                facts["back"] = b["route"][b["index"] - 1] if b["index"] > 0 else None
        elif step == "decide":
            facts["decisions"] = {}
            for n in b["waiting"]:
                side = "attacker" if n == b["attacker"] else "defender"
                facts["decisions"][n] = {
                    "submerge": [u.id for u in self._active(b, side) if board.unit_type(u).is_submarine],
                    # NC1: only the attacker may retreat.
                    "retreat": combat.retreat_zones(board, n, b["zone"]) if side == "attacker" else [],
                }
        elif step == "continue":
            facts["free"] = [u for u in b["undetected"] + b["detected"] if u in self.units]
            facts["destination"] = b["route"][-1]
        return facts

    def _ending_reason(self, b: Procedure, rule: str) -> str:
        """Why a procedure ends, in the words a player would use (the summary of BattleEnded).
        Unlike the descriptions of what the game waits for, these words are recorded in the
        event (version 2) and hashed with it, so the domain keeps them: the same facts must
        always record the same reason."""
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
