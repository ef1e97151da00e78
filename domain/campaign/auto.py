"""Playing a procedure on with the defaults: one step, or to its end (`auto`), as far as typed
dice go."""

from __future__ import annotations

from domain.campaign.base import CampaignBase
from domain.campaign.record import command, restore, savepoint
from domain.dice import DiceSource, ManualDice, PromptDice
from domain.errors import DiceError

# The steps only a convoy battle has, or takes its own way (CV3: its search is the NTR owner's).
_CONVOY_STEPS = ("merchant_defence", "merchant_casualty", "search", "convoy_table")


class AutoPlay(CampaignBase):
    """Defaults for the step a procedure waits for."""

    @command
    def convoy_auto(self, battle: int, dice: DiceSource) -> None:
        """Resolve the remaining steps with the defaults: every eligible unit searches, the
        cheapest legal casualties are taken."""
        self._battle(battle)
        while str(battle) in self.battles:
            if not self._auto_step_if_dice_last(battle, dice):
                return

    def _convoy_step(self, battle: int, dice: DiceSource) -> None:
        """The default for the one step a convoy battle waits for."""
        b = self.battles[str(battle)]
        step = b["step"]
        if step == "merchant_defence":
            self.convoy_merchant_defence(battle, dice)
        elif step == "merchant_casualty":
            self.convoy_choose_casualties(battle, b["waiting"][0], None)
        elif step == "search":
            self.convoy_search(battle, None, dice)
        elif step == "convoy_table":
            self.convoy_table(battle, dice)
        else:
            self.auto_step(battle, dice)

    def _auto_step_if_dice_last(self, battle: int, dice: DiceSource) -> bool:
        """Take one default step; with typed dice that ran out exactly before a step that rolls,
        stop there instead (False), so `auto --dice` plays as far as the dice given go. Dice left
        over that cannot complete a step are refused, never dropped."""
        if not isinstance(dice, ManualDice) or isinstance(dice, PromptDice):
            self._one_step(battle, dice)
            return True
        saved, used = savepoint(self), dice.used
        try:
            self._one_step(battle, dice)
        except DiceError:
            if used < len(dice.values):
                raise
            restore(self, saved)
            dice.used = used
            return False
        return True

    def _one_step(self, battle: int, dice: DiceSource) -> None:
        if self.battles[str(battle)]["kind"] == "convoy":
            self._convoy_step(battle, dice)
        else:
            self.auto_step(battle, dice)

    @command
    def battle_auto(self, battle: int, dice: DiceSource) -> list[int]:
        """Resolve a procedure with the default choices, and the interceptions it leads to
        (a group going on or retreating); returns the battles resolved."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        if b["kind"] == "convoy":
            self.convoy_auto(battle, dice)
            return [battle]
        todo, done = [battle], []
        while todo:
            number = todo[0]
            if str(number) not in self.battles:
                done.append(todo.pop(0))
                continue
            before = self.battle_count
            if not self._auto_step_if_dice_last(number, dice):
                break  # the typed dice ran out: the battle waits for the next roll
            todo.extend(range(before + 1, self.battle_count + 1))
        return done

    @command
    def auto_step(self, battle: int, dice: DiceSource) -> None:
        """Take the default for the one step a procedure waits for (whoever's it is)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        step, kind, first = b["step"], b["kind"], (b["waiting"] or [""])[0]
        if kind == "convoy" and step in _CONVOY_STEPS:
            # CV2, CV3, CV5: a convoy battle's own steps (its round is a volley like any other).
            self._convoy_step(battle, dice)
        elif step == "search":
            if kind == "interception":
                self.intercept_search(battle, None, dice)
            else:
                self.asw_search(battle, None, dice)
        elif step == "detect":
            self.intercept_detect(battle, None)
        elif step in ("targets", "opening_targets"):
            self.choose_targets(battle, first, None)
        elif step in ("screening", "opening_screening"):
            self.choose_screens(battle, first, None)
        elif step in ("fire", "opening_fire"):
            self.fire(battle, dice)
        elif step == "casualties":
            self.choose_casualties(battle, first, None)
        elif step == "decide":
            if kind == "interception":
                self.intercept_decide(battle, None, None)
            elif kind == "asw":
                self.asw_submerge(battle, None)
            else:
                self.naval_decide(battle, first, None, None)
        elif step == "continue":
            self.intercept_continue(battle, None)
        else:  # pragma: no cover - every step is handled above
            raise AssertionError(step)
