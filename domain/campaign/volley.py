"""The rounds every procedure shares (HA1-HA7, NC2, NC3, NC6, AS3, AS4, SM4, CV4): the commands
for targets, screening, the dice and casualties, with their guards (whose step it is, who may
choose); the volley itself runs on the pure procedures (`domain.procedures.volley`)."""

from __future__ import annotations

from domain.board import Unit
from domain.campaign.procedure import Procedure, Side
from domain.campaign.record import command
from domain.campaign.referee import Referee
from domain.dice import DiceSource
from domain.errors import RuleViolation


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

    @command
    def choose_targets(self, battle: int, nation: str, targets: dict[str, str] | None) -> dict[str, str]:
        """HA1-HA3, AS3, SM4: a nation picks the target of each of its selective shooters
        (None: spread over the legal targets, most valuable first)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        self._require_steps(b, ("targets", "opening_targets"), "HA1")
        self._require_waiting(b, nation)
        picked = self._decided(b, targets, "attacker" if nation == b["attacker"] else "defender")
        return dict(picked.facts[0].pairs)

    @command
    def choose_screens(self, battle: int, nation: str, screens: dict[str, str] | None) -> dict[str, str]:
        """HA1, HA3: the owner of targeted ships lets escorts take shots instead, firer -> escort
        (None: the cheapest loss; {} : no screening)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        if b["step"] in ("fire", "opening_fire"):
            raise RuleViolation(
                "HA1",
                f"too late to screen in battle {battle}: screens are chosen before the dice, and this volley's "
                f"targets and screens are set; {self.step_refused(b, 'HA1')}",
            )
        self._require_steps(b, ("screening", "opening_screening"), "HA1")
        self._require_waiting(b, nation)
        side: Side = "attacker" if nation == b["attacker"] else "defender"
        return dict(self._decided(b, screens, side).facts[0].pairs)

    @command
    def fire(self, battle: int, dice: DiceSource) -> int:
        """SM4, AS4, NC2, NC3: roll one die per firing unit, in the order `pending` lists; the
        casualties of the volley are taken together. Returns the number of hits."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        self._require_steps(b, ("fire", "opening_fire"), "NC3")
        return self._rolled(b, dice).successes

    @command
    def choose_casualties(self, battle: int, nation: str, units: list[str] | None) -> list[str]:
        """HA4-HA7: the owner places the non-selective hits on its units, within the order the
        rules impose (None: the cheapest legal choice)."""
        b = self._procedure(battle, "naval", "convoy")
        self._require_steps(b, ("casualties",), "HA7")
        self._require_waiting(b, nation)
        side: Side = "attacker" if nation == b["attacker"] else "defender"
        return list(self._decided(b, units, side).facts[0].units)
