"""Dice (D1-D4): every roll goes through the dice service and is recorded as a DiceRolled event;
the dice source is checked, a reroll after an override undo is flagged, seeds are revealed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from domain.board import Unit
from domain.campaign.base import CampaignBase
from domain.campaign.events import DiceRerolled, DiceRolled, DiceSourceSwitched, SeedRevealed, TypedDiceAccepted
from domain.campaign.record import command
from domain.dice import DiceSource, clamp_target
from domain.errors import InputError, RuleViolation
from domain.rules import record
from domain.ruleset import AppliedModifier


class Rolling(CampaignBase):
    """D1-D4: rolling, the dice source and seed reveals."""

    def roll(
        self,
        dice: DiceSource,
        *,
        roller: str,
        rule: str,
        purpose: str,
        kind: str,
        count: int = 1,
        base_target: int | None = None,
        modifiers: Sequence[AppliedModifier] = (),
        target: int | None = None,
        success_when: str = "at_most",
        battle: int | None = None,
        unit: str | None = None,
        describe: Callable[[list[int]], str] | None = None,
    ) -> list[int]:
        """Roll through the dice service and record one DiceRolled event (D1-D3)."""
        faces = self.ruleset.faces_for(kind)
        number = self.roll_count + 1
        self._check_dice_source(dice, roller, number, purpose)
        result = dice.roll(number, count, faces, purpose)
        if target is None and base_target is not None:
            target = base_target
        if target is not None:
            target = clamp_target(target, faces)
        outcome = describe(list(result.values)) if describe is not None else ""
        if target is not None:
            if success_when == "at_most":
                hits = sum(1 for v in result.values if v <= target)
            else:
                hits = sum(1 for v in result.values if v >= target)
            outcome = "success" if count == 1 and hits else "failure" if count == 1 else f"{hits} successes"
        self._record(
            DiceRolled,
            roll=number,
            epoch=self.dice_epoch,
            roller=roller,
            rule=rule,
            purpose=purpose,
            kind=kind,
            faces=faces,
            values=list(result.values),
            source=result.source,
            reference=result.reference,
            base_target=base_target,
            target=target,
            modifiers=[m.as_dict() for m in modifiers],
            success_when=success_when,
            outcome=outcome,
            battle=battle,
            unit=unit,
        )
        self._flag_reroll(number, roller, rule, kind, unit)
        return list(result.values)

    def _check_dice_source(self, dice: DiceSource, roller: str, number: int, purpose: str) -> None:
        """D4: a campaign rolls with the source it was created with (or switched to); a typed roll
        in an auto-dice campaign needs the RK3 override, recorded once per action."""
        source = getattr(dice, "source", self.dice_mode)
        if source == self.dice_mode:
            return
        if self.dice_mode == "manual":
            raise RuleViolation("D4", f"this campaign uses manual dice: {purpose} needs dice typed in with --dice")
        override = getattr(dice, "override", None)
        if override is None:
            raise RuleViolation(
                "D4",
                f"this campaign uses auto dice, so the tracker rolls {purpose}; typed dice need "
                f"--override --reason TEXT --agreed-by NATION (a nation of another side than {roller}, RK3), "
                "or a recorded switch: tracker dice switch manual --reason TEXT",
            )
        agreed = record.check_override(self.scenario, [roller], override, "a typed-dice override")
        action = self.__dict__.get("_action", self.version + 1)
        if not any(isinstance(e, TypedDiceAccepted) and e.action == action for e in self.pending_events):
            self._record(
                TypedDiceAccepted,
                rule="D4",
                reason=override.reason.strip(),
                agreed_by=list(agreed),
                roll=number,
            )

    def _flag_reroll(self, number: int, roller: str, rule: str, kind: str, unit: str | None) -> None:
        """RK3: a roll made again, in the same position, by the same roller for the same rule
        and unit, after an override undo took the first one back, is recorded as a reroll."""
        key = (self.round, self.nation, self.phase, roller, rule, kind, unit)
        for w in self.__dict__.get("reroll_watch", []):
            if (w["round"], w["nation"], w["phase"], w["roller"], w["rule"], w["kind"], w["unit"]) == key:
                self._record(DiceRerolled, roll=number, rerolls=w["roll"], undo=w["undo"], roller=roller, rule=rule)
                return

    def _roll_one(
        self, dice: DiceSource, unit: Unit, spec: Any, *, rule: str, purpose: str, kind: str, battle: int
    ) -> tuple[int, bool]:
        """One die for one unit against its (modified) target number: its value, and whether it
        succeeds (D2)."""
        (value,) = self.roll(
            dice,
            roller=unit.nation,
            rule=rule,
            purpose=purpose,
            kind=kind,
            base_target=spec.base,
            target=spec.target,
            modifiers=spec.modifiers,
            battle=battle,
            unit=unit.id,
        )
        return value, value <= clamp_target(spec.target, self.ruleset.faces_for(kind))

    def reveal_seed(self, seed_hex: str, next_commitment: Callable[[], str]) -> None:
        """Publish the current dice seed (checked against its commitment) and commit to the next,
        whose commitment `next_commitment()` gives. It is asked for only once the seed passed
        its check, because it stores the next epoch's seed: a refused reveal stores nothing."""
        from domain.dice import commitment

        if commitment(seed_hex) != self.commitments[-1]:
            raise RuleViolation("D3", "the seed does not match the commitment recorded for it")
        self._record(SeedRevealed, epoch=self.dice_epoch, seed=seed_hex, next_commitment=next_commitment())

    @command
    def switch_dice(self, mode: str, reason: str) -> None:
        """D4: change the campaign's dice source, only explicitly and for a written reason."""
        if mode not in ("auto", "manual"):
            raise InputError(f"dice mode must be auto or manual, got {mode!r}")
        if mode == self.dice_mode:
            raise RuleViolation("D4", f"this campaign already uses {mode} dice")
        if not reason.strip():
            raise InputError("a dice switch needs --reason TEXT, shown in verify and reports")
        self._record(DiceSourceSwitched, mode=mode, previous=self.dice_mode, reason=reason.strip())
