"""What the game waits for, as facts (`pending`, refusals), and why a procedure ended.

The facts are read from the pure procedure (`domain.procedures`) at the battle's step: what its
`need` asks (a decision's options, a roll's dice), and where a view shows what the next step
will ask (the dice of a search while the step is still which units search), the `need` after
the tracker's default decision, taken on the frozen state: nothing is recorded.

The domain states facts; the words a player reads are the tracker's (`tracker.describe`),
given to the aggregate as its `describer`. Without one, a plain description of the facts is
used, so the domain works (and its refusals read) on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from domain.campaign.base import CampaignBase
from domain.campaign.procedure import Procedure
from domain.campaign.referee import PURE
from domain.procedures.base import Context, Decision, Need, Roll

# The dice of each procedure's search (CV3, SM3, AS2), for a search no unit may make: the
# procedure then asks for no roll to read them from.
_SEARCH_DICE = {"convoy": "convoy_search", "interception": "interception_search", "asw": "asw_search"}


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

    def _asked(self, b: Procedure) -> tuple[Any, Context, Need]:
        """The battle's pure state (`Referee._pure`), its context, and what the procedure asks
        there (its `need`)."""
        state, ctx = self._pure(b)
        need: Need = PURE[b["kind"]].need(state, ctx)
        return state, ctx, need

    def _decisions(self, b: Procedure) -> list[Decision]:
        """The decisions of this step, one per nation it waits for, in that order: the
        procedure's `need`, then the `need` after the tracker's default for the nation before
        (taken on the frozen state: nothing is recorded)."""
        state, ctx, need = self._asked(b)
        procedure = PURE[b["kind"]]
        asked: list[Decision] = []
        while isinstance(need, Decision):
            asked.append(need)
            if len(asked) == len(b["waiting"]):
                break
            state, _ = procedure.decide(state, ctx, None)
            need = procedure.need(state, ctx)
        return asked

    def _search(self, b: Procedure) -> tuple[Decision, Roll | None]:
        """A search step (CV3, SM2-SM3, AS2): the choice of searchers the procedure asks for,
        and the roll it asks for next if every eligible unit searches (the default); None when
        no unit may search."""
        state, ctx, need = self._asked(b)
        assert isinstance(need, Decision) and need.kind == "searchers", need
        ((_, units),) = need.options
        if not units:
            return need, None
        procedure = PURE[b["kind"]]
        searching, _ = procedure.decide(state, ctx, None)
        roll: Need = procedure.need(searching, ctx)
        assert isinstance(roll, Roll), roll
        return need, roll

    @staticmethod
    def _searchers(choice: Decision, roll: Roll | None) -> list[dict[str, Any]]:
        """CV3, SM3, AS2: each eligible unit of a search (`_search`) with the target number of
        its search die (an ASW searcher rolls once per submarine, alike: the first; None
        without a submarine)."""
        targets: dict[str, int] = {}
        for die in roll.dice if roll is not None else ():
            targets.setdefault(die.unit, die.spec.target)
        ((_, units),) = choice.options
        return [{"unit": u, "target": targets.get(u)} for u in units]

    def _eligible(self, b: Procedure) -> list[str] | None:
        """The units a search step may send (all of them is the default), for `pending --json`."""
        if b["step"] != "search":
            return None
        ((_, units),) = self._search(b)[0].options
        return list(units)

    def _dice_needed(self, b: Procedure) -> dict[str, Any] | None:
        """The dice the step waits for: how many, of how many faces, and in which order (what
        each die is for), as the procedure's roll has them; searches with every eligible unit.
        None for a decision."""
        step = b["step"]
        roll: Need | None
        if step == "search":
            roll = self._search(b)[1]
            if roll is None:
                return {"count": 0, "faces": self.ruleset.faces_for(_SEARCH_DICE[b["kind"]]), "order": []}
        elif step in ("merchant_defence", "convoy_table", "fire", "opening_fire"):
            roll = self._asked(b)[2]
        else:
            return None
        assert isinstance(roll, Roll), roll
        order: list[str]
        if roll.kind == "merchant_defence":
            # CV2: the dice are one roll, their total against the target.
            (group,) = roll.groups
            order = [f"merchant defence die {i + 1}" for i in range(group.dice)]
        elif roll.kind == "asw_search":
            order = [f"{die.unit} vs {die.against}" for die in roll.dice]
        else:
            order = [die.unit for die in roll.dice]
        return {"count": len(order), "faces": self.ruleset.faces_for(roll.kind), "order": order}

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
        if kind == "convoy" and step == "merchant_defence":
            roll = self._asked(b)[2]
            assert isinstance(roll, Roll), roll
            (group,) = roll.groups
            facts["dice"] = {"count": group.dice, "faces": group.faces, "sinks_on_total": group.target}
        elif kind == "convoy" and step == "merchant_casualty":
            ((_, subs),) = self._decisions(b)[0].options
            facts["submarines"] = list(subs)
        elif kind == "convoy" and step == "search":
            facts["searchers"] = self._searchers(*self._search(b))
        elif kind == "convoy" and step == "convoy_table":
            roll = self._asked(b)[2]
            assert isinstance(roll, Roll), roll
            facts["faces"] = self.ruleset.faces_for(roll.kind)
            facts["submarines"] = [die.unit for die in roll.dice]
        elif step == "search" and kind == "interception":
            facts["submarines"] = list(b["subs"])
            facts["searchers"] = self._searchers(*self._search(b))
        elif step == "search":
            # AS2: each searcher rolls once per submarine still there.
            choice, searched = self._search(b)
            facts["submarines"] = list(b["subs"])
            facts["searchers"] = self._searchers(choice, searched)
            facts["dice"] = {"count": len(searched.dice) if searched is not None else 0}
        elif step == "detect":
            facts["submarines"] = list(b["subs"])
            facts["found"] = b["found"]
        elif step in ("targets", "opening_targets"):
            # Every selective shooter of the volley with its legal targets, as the procedure's
            # volley has them (`fight.volley`), not its `need`: that asks only the sides still to
            # choose, and these facts also name the side that chose already, or whose every
            # shooter had a single legal target (HA1).
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
            roll = self._asked(b)[2]
            assert isinstance(roll, Roll), roll
            facts["firing"] = [die.unit for die in roll.dice]
        elif step == "casualties":
            facts["casualties"] = {}
            for decision in self._decisions(b):
                side = "attacker" if decision.chooser == b["attacker"] else "defender"
                ((_, units),) = decision.options
                facts["casualties"][decision.chooser] = {
                    "hits": sum(g["hits"] for g in b["groups"] if g["side"] == side),
                    "units": list(units),
                }
        elif step == "decide" and kind in ("interception", "asw"):
            facts["detected"] = list(b["detected"])
            if kind == "interception":
                facts["back"] = b["route"][b["index"] - 1] if b["index"] > 0 else None
        elif step == "decide":
            # NC4, NC1: the submarines of each waiting side, and where the attacker may retreat.
            facts["decisions"] = {}
            for decision in self._decisions(b):
                options = dict(decision.options)
                facts["decisions"][decision.chooser] = {
                    "submerge": list(options["submerge"]),
                    "retreat": list(options["retreat"]),
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
