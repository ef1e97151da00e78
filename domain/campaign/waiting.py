"""What the game waits for, as facts (`pending`, refusals), and why a procedure ended.

The facts are read from the pure procedure (`domain.procedures`) at the battle's step, as the
referee asks it (`Referee._asks`, the one place): who is waited for, in order, and what its
`need` asks of them (a decision's options, a roll's dice in the order they are consumed); and
where a view shows what the next step will ask (the dice of a search while the step is still
which units search), the `need` after the tracker's default decision, taken on the frozen
state: nothing is recorded.

The domain states facts; the words a player reads are the tracker's (`tracker.describe`),
given to the aggregate as its `describer`. Without one, a plain description of the facts is
used, so the domain works (and its refusals read) on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from domain.campaign.base import CampaignBase
from domain.campaign.procedure import Procedure
from domain.campaign.referee import Asked, pure
from domain.text import listed, side_nations

if TYPE_CHECKING:
    from domain.procedures.base import Decision, Need, Roll, Side

# The dice of each procedure's search (CV3, SM3, AS2), for a search no unit may make: the
# procedure then asks for no roll to read them from.
_SEARCH_DICE = {"convoy": "convoy_search", "interception": "interception_search", "asw": "asw_search"}

# The steps only a convoy battle has (its search too reads apart from the others'), and a
# volley's steps in any battle.
_CONVOY_STEPS = ("merchant_defence", "merchant_casualty", "search", "convoy_table")
_VOLLEY_STEPS = ("targets", "opening_targets", "screening", "opening_screening", "fire", "opening_fire", "casualties")


class Describer(Protocol):
    """Turns the facts of what the game waits for into words."""

    def waiting(self, facts: Mapping[str, Any], cite: bool = True) -> str:
        """What a procedure waits for (`Campaign.waiting_facts`), e.g. in a refusal; with its
        rule in brackets unless not `cite` (a refusal under that rule names it already)."""
        ...

    def item(self, facts: Mapping[str, Any]) -> str:
        """One open item of `pending` (T4): a procedure, what the phase still requires, or the
        phasing nation's own work (kind "turn")."""
        ...

    def command(self, item: Mapping[str, Any]) -> str | None:
        """The command that closes one open item (T4: `next` names it when refused), or None
        when no command closes it now (units to place before placement)."""
        ...


class PlainDescriber:
    """The facts named, without the tracker's sentences."""

    def waiting(self, facts: Mapping[str, Any], cite: bool = True) -> str:
        who = " and ".join(facts["waiting"]) or "nobody"
        rule = f" [{facts['rule']}]" if cite else ""
        return f"waiting for {who}: {facts['step']}{rule}"

    def item(self, facts: Mapping[str, Any]) -> str:
        if facts.get("battle") is not None:
            return f"battle {facts['battle']} ({facts['kind']}, {facts['zone']}): {self.waiting(facts)}"
        return f"{facts['kind']} for {', '.join(facts['waiting'])} [{facts['rule']}]"

    def command(self, item: Mapping[str, Any]) -> str | None:
        return None


class Waiting(CampaignBase):
    """Pending procedures as facts; their words come from `describer`."""

    # The tracker sets its own (tracker.describe); see the module docstring.
    describer: ClassVar[Describer] = PlainDescriber()

    def pending(self, turn: bool = False) -> list[dict[str, Any]]:
        """What the game waits for (see `open_items`). With `turn`, a phase that nothing keeps
        open lists first the phasing nation's own work (`turn_item`, kind "turn"), so a player
        who owes nothing still reads whom the game waits for, and after every item the battles
        the phasing nation may start but need not (`optional_combats`); hand-offs take the
        first but not the battles, which wait for nobody (`tracker.service.notify.waited`)."""
        items: list[dict[str, Any]] = self.open_items()
        if not turn:
            return items
        # NC1, AS1: what the phasing nation may also start (a player reads them; nobody is
        # waited for, so no hand-off or inbox names them).
        optional = self.optional_combats()
        if not any(i["blocking"] for i in items):
            return [self.turn_item(), *items, *optional]
        return [*items, *optional]

    def procedure_asks(self, battle: int) -> Asked:
        """What the procedure of a battle in progress asks for at its step (see `Asked`)."""
        return self._asked(self.battles[str(battle)])

    def _asked(self, b: Procedure) -> Asked:
        """The battle's pure state (`Referee._pure`) and what its procedure asks there."""
        asked: Asked = self._asks(b, *self._pure(b))
        return asked

    def _search(self, b: Procedure) -> tuple[Decision, Roll | None]:
        """A search step (CV3, SM2-SM3, AS2): the choice of searchers the procedure asks for,
        and the roll it asks for next if every eligible unit searches (the default); None when
        no unit may search."""
        from domain.procedures.base import Decision, Roll  # as the referee: with the first battle

        state, ctx = self._pure(b)
        (need,) = self._asks(b, state, ctx).needs
        assert isinstance(need, Decision) and need.kind == "searchers", need
        ((_, units),) = need.options
        if not units:
            return need, None
        procedure = pure(b["kind"])
        searching, _ = procedure.decide(state, ctx, None)
        (roll,) = self._asks(b, searching, ctx).needs
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
        from domain.procedures.base import Roll

        roll: Need | None
        if b["step"] == "search":
            roll = self._search(b)[1]
            if roll is None:
                faces = self.ruleset.faces_for(_SEARCH_DICE[b["kind"]])
                return {"count": 0, "faces": faces, "order": [], "typed": self.dice_mode == "manual"}
        else:
            roll = next(iter(self._asked(b).needs), None)
            if not isinstance(roll, Roll):
                return None
        order: list[str]
        if roll.kind == "merchant_defence":
            # CV2: the dice are one roll, their total against the target.
            (group,) = roll.groups
            order = [f"merchant defence die {i + 1}" for i in range(group.dice)]
        elif roll.kind == "asw_search":
            order = [f"{die.unit} vs {die.against}" for die in roll.dice]
        else:
            order = [die.unit for die in roll.dice]
        # D4: whether the dice are typed in (manual dice) or rolled by the tracker (auto).
        typed = self.dice_mode == "manual"
        return {"count": len(order), "faces": self.ruleset.faces_for(roll.kind), "order": order, "typed": typed}

    def describe_waiting(self, b: Procedure, cited: str | None = None) -> str:
        """What a procedure waits for, in words (see `Describer.waiting`), with the rule of its
        step unless that is `cited`, the rule the refusal quoting it names already."""
        facts = self.waiting_facts(b)
        return self.describer.waiting(facts, cite=facts["rule"] != cited)

    def step_refused(self, b: Procedure, rule: str, but: str = "") -> str:
        """Why a command that does not answer the step battle `b` waits at is refused under
        `rule`: what the battle waits for (`describe_waiting`; `but` follows it), then the
        command that answers the step (`answering`)."""
        return f"battle {b['id']} is {self.describe_waiting(b, rule)}{but}{self.answering(b)}"

    def answering(self, b: Procedure) -> str:
        """The end of a refusal naming the command that answers the step battle `b` waits at,
        the one `pending` suggests ("; to answer it: COMMAND"), so the player reads what to
        type instead; empty where the describer names none."""
        item = next((i for i in self.open_items() if i["battle"] == b["id"]), None)
        answer = self.describer.command(item) if item is not None else None
        return f"; to answer it: {answer}" if answer else ""

    def waiting_facts(self, b: Procedure) -> dict[str, Any]:
        """What a procedure waits for, as facts without words: its step, the nations it waits
        for and the rule, and what they may answer (eligible units with their target numbers,
        legal targets and screens, hits to place, decisions, the dice order)."""
        asked = self._asked(b)
        first = next(iter(asked.needs), None)
        facts: dict[str, Any] = {
            "battle": b["id"],
            "kind": b["kind"],
            "zone": b["zone"],
            "step": b["step"],
            "waiting": list(asked.nations),
            "rule": b["rule"],
            "attacker": b["attacker"],
            "defender": b["defender"],
        }
        from domain.procedures.base import Decision

        step, kind = b["step"], b["kind"]
        decisions = [d for d in asked.needs if isinstance(d, Decision)]
        if kind == "convoy" and step in _CONVOY_STEPS:
            self._convoy_facts(facts, b, first, decisions)
        elif step in ("search", "detect"):
            self._search_facts(facts, b)
        elif step in _VOLLEY_STEPS:
            self._volley_facts(facts, b, first, decisions)
        elif step in ("decide", "continue"):
            self._decide_facts(facts, b, decisions)
        return facts

    def _nations(self, units: list[str]) -> dict[str, str]:
        """NC1, F5: the nation of each unit a step names, where one nation decides for a side
        its allies' units fight on too (the words say whose units it decides for)."""
        return {u: self.units[u]["nation"] for u in units if u in self.units}

    def _convoy_facts(self, facts: dict[str, Any], b: Procedure, first: Need | None, decisions: list[Decision]) -> None:
        """Adds what a convoy battle's own steps wait for (CV2-CV5) to `facts`."""
        from domain.procedures.base import Roll

        step = b["step"]
        if step == "merchant_defence":
            assert isinstance(first, Roll), first
            (group,) = first.groups
            facts["dice"] = {"count": group.dice, "faces": group.faces, "sinks_on_total": group.target}
        elif step == "merchant_casualty":
            ((_, subs),) = decisions[0].options
            facts["submarines"] = list(subs)
        elif step == "search":
            facts["searchers"] = self._searchers(*self._search(b))
        elif step == "convoy_table":
            assert isinstance(first, Roll), first
            facts["faces"] = self.ruleset.faces_for(first.kind)
            facts["submarines"] = [die.unit for die in first.dice]

    def _search_facts(self, facts: dict[str, Any], b: Procedure) -> None:
        """Adds what an interception's or an ASW combat's search, or its detection, waits for
        to `facts`."""
        step, kind = b["step"], b["kind"]
        if step == "search" and kind == "interception":
            facts["submarines"] = list(b["subs"])
            facts["searchers"] = self._searchers(*self._search(b))
        elif step == "search":
            # AS2: each searcher rolls once per submarine still there.
            choice, searched = self._search(b)
            facts["submarines"] = list(b["subs"])
            facts["searchers"] = self._searchers(choice, searched)
            facts["dice"] = {"count": len(searched.dice) if searched is not None else 0}
        else:
            facts["submarines"] = list(b["subs"])
            facts["found"] = b["found"]

    def _volley_facts(self, facts: dict[str, Any], b: Procedure, first: Need | None, decisions: list[Decision]) -> None:
        """Adds what a volley's step waits for (its targets, screens, dice or casualties) to
        `facts`."""
        step = b["step"]
        if step in ("targets", "opening_targets"):
            # HA1, HA3: each deciding nation's selective shooters with their legal targets.
            facts["targets"] = {
                d.chooser: [{"unit": firer, "legal": list(legal)} for firer, legal in d.options] for d in decisions
            }
            facts["nations"] = self._nations([firer for d in decisions for firer, _ in d.options])
        elif step in ("screening", "opening_screening"):
            facts["screens"] = {
                d.chooser: [
                    {"firer": firer, "target": b["shots"][firer]["target"], "options": list(options)}
                    for firer, options in d.options
                ]
                for d in decisions
            }
            escorts = [
                e for d in decisions for firer, options in d.options for e in (b["shots"][firer]["target"], *options)
            ]
            facts["nations"] = self._nations(escorts)
        elif step in ("fire", "opening_fire"):
            from domain.procedures.base import Roll

            assert isinstance(first, Roll), first
            facts["firing"] = [die.unit for die in first.dice]
            # Each die is its unit's nation's (D3), an ally's too: a shared volley says who rolls which.
            facts["rollers"] = {die.unit: self.units[die.unit]["nation"] for die in first.dice}
        else:
            from domain.procedures.volley import casualty_choices

            # HA7: which reading places the hits (the owner's order, or each class's in turn).
            facts["placement"] = self.ruleset.hit_placement
            facts["casualties"] = {}
            state, ctx = self._pure(b)
            for decision in decisions:
                side: Side = "attacker" if decision.chooser == b["attacker"] else "defender"
                # HA4-HA6, NC6: the choices the referee takes (`Placing.check`), not every unit
                # of the side (the decision's options).
                words, legal, units = casualty_choices(state.fight, ctx, side)
                facts["casualties"][decision.chooser] = {
                    "hits": sum(g["hits"] for g in b["groups"] if g["side"] == side),
                    "units": units,
                    "legal": legal,
                    # HA5, HA6: the hits per firing class, whose rules set where each may fall.
                    "from": words,
                    # HA7: what the tracker takes if the owner does not choose (`--auto`).
                    "default": list(cast(tuple[str, ...], decision.default)),
                }
            facts["nations"] = self._nations([u for c in facts["casualties"].values() for u in c["units"]])

    def _decide_facts(self, facts: dict[str, Any], b: Procedure, decisions: list[Decision]) -> None:
        """Adds what a battle's decision step waits for, or where an interception's submarines
        not detected may go on (its continue step), to `facts`."""
        step, kind = b["step"], b["kind"]
        if step == "decide" and kind in ("interception", "asw"):
            facts["detected"] = list(b["detected"])
            if kind == "interception":
                facts["back"] = b["route"][b["index"] - 1] if b["index"] > 0 else None
        elif step == "decide":
            # NC4, NC1: the submarines of each waiting side, and where the attacker may retreat.
            facts["decisions"] = {}
            for decision in decisions:
                options = dict(decision.options)
                facts["decisions"][decision.chooser] = {
                    "submerge": list(options["submerge"]),
                    "retreat": list(options["retreat"]),
                }
            facts["nations"] = self._nations([u for d in facts["decisions"].values() for u in d["submerge"]])
        else:
            facts["free"] = [u for u in b["undetected"] + b["detected"] if u in self.units]
            facts["destination"] = b["route"][-1]

    def _side_named(self, b: Procedure, side: Side) -> str:
        """NC1, F5: a naval battle's side as its ending names it, with its verb: "Britain and
        France have" (`sides_named_whole`), by the nations of the units that fought on it; recorded
        before the key, "Britain has", the nation deciding for the side alone."""
        deciding = b["attacker"] if side == "attacker" else b["defender"]
        if not self.ruleset.sides_named_whole:
            return f"{deciding} has"
        nations = side_nations(self._fought_on(b, side), deciding, self.scenario.turn_order)
        return f"{listed(nations)} {'has' if len(nations) == 1 else 'have'}"

    def _fought_on(self, b: Procedure, side: Side) -> list[str]:
        """NC1: the nations of the units that fought on a side of a naval battle: those still in
        it, submerged or retreated, and those sunk in it (gone from `units`, so a sunk unit's
        nation is read from its ID, whose code names it: GB-CA6). The attacking side is the
        moving nation's units alone (NC1), the defending side every other nation's there."""
        here = b.get("attackers", []) + b.get("defenders", []) + b["submerged"] + b.get("retreated", [])
        nations = [self.units[u]["nation"] for u in here if u in self.units]
        codes = {n.code: name for name, n in self.scenario.nations.items() if n.code}
        sunk = f"sunk in battle {b['id']}"  # why `UnitHit` says a unit sunk in this battle is lost
        nations += [codes.get(u.split("-", 1)[0], "") for u, why in self.lost.items() if why == sunk]
        return [n for n in nations if n and (n == b["attacker"]) == (side == "attacker")]

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
            if not attackers and not defenders and self.ruleset.purposes_in_words:
                # NC1: both sides' last units sunk at once; recorded before the key, the
                # attacking side alone was named (`purposes_in_words`).
                return "neither side has a unit left in the battle"
            if not attackers or not defenders:
                return f"{self._side_named(b, 'defender' if attackers else 'attacker')} no unit left in the battle"
            return "no unit left can hit an enemy (NC6)"
        if rule == "SM5":
            # A detected submarine whose hunters were all sunk goes on too (`detected_survivors_named`).
            if self.ruleset.detected_survivors_named and b.get("free_detected"):
                return "the free submarines went on or stayed; the interception is over"
            return "the submarines not detected went on or stayed; the interception is over"
        if rule == "AS2":
            return "no submarine was detected"
        hunting = "defender" if kind == "interception" else "attacker"
        if not self._active(b, hunting):
            return "no hunting unit is left"
        if not [u for u in b.get("detected", []) if u in self.units]:
            return "every detected submarine was sunk, submerged or went back"
        return "nobody left can attack"
