"""Playing a procedure on with the defaults: one step, or to its end (`auto`), as far as typed
dice go, and only the steps of the nations the command decides for (PL2: each side decides for
itself; a referee, or one person recording for everyone, decides for all)."""

from __future__ import annotations

from collections.abc import Collection

from domain.campaign.base import CampaignBase
from domain.campaign.procedure import Procedure
from domain.campaign.record import command, restore, savepoint
from domain.dice import DiceSource, ManualDice, PromptDice
from domain.errors import DiceError, RuleViolation
from domain.text import possessive

# The nations whose steps a command takes; None: every nation's (PL2: no players set up, or the
# referee). A player's command takes the steps of their own nations and stops at another's.
Deciding = Collection[str] | None

# The steps only a convoy battle has, or takes its own way (CV3: its search is the NTR owner's).
_CONVOY_STEPS = ("merchant_defence", "merchant_casualty", "search", "convoy_table")

# Steps that are one roll: their command acts for the first nation whose units roll (PL2), who
# rolls the step's dice for every side at once (a volley). Every other step is one nation's
# decision: a command takes the default of a waited-for nation it decides for.
_ROLL_STEPS = frozenset({"merchant_defence", "convoy_table", "fire", "opening_fire"})


class NotTheirs(RuleViolation):
    """PL2: the step a battle waits for is another nation's than those the command decides for;
    nothing of it is taken. Names the battle and the nation whose step it is."""

    def __init__(self, battle: int, nation: str, waiting: str, deciding: Collection[str]) -> None:
        super().__init__(
            "PL2",
            f"battle {battle} is {waiting}: that step is {possessive(nation)}, and this command decides for "
            f"{', '.join(sorted(deciding)) or 'no nation'} alone",
        )
        self.battle = battle
        self.nation = nation


class AutoPlay(CampaignBase):
    """Defaults for the step a procedure waits for."""

    def step_owner(self, battle: int, deciding: Deciding = None) -> tuple[str, bool]:
        """PL2: whose step battle `battle` waits at, as a command deciding for `deciding` would
        take it: (the nation whose default it takes, or whose step stops it; whether it may
        take it). A step nobody is waited for is anyone's."""
        b = self.battles[str(battle)]
        waiting = [str(n) for n in b["waiting"]]
        if not waiting:
            return "", True
        if deciding is None:
            return waiting[0], True
        if b["step"] in _ROLL_STEPS:
            return waiting[0], waiting[0] in deciding
        mine = next((n for n in waiting if n in deciding), None)
        return (mine, True) if mine is not None else (waiting[0], False)

    def _may_take(self, battle: int, deciding: Deciding, refuse: bool) -> bool:
        """Whether the command may take the step battle `battle` waits at; if not, a refusal
        (`refuse`: the command's very first step, so nothing at all would be recorded)."""
        nation, mine = self.step_owner(battle, deciding)
        if mine:
            return True
        if refuse:
            assert deciding is not None  # a command deciding for all takes every step
            raise NotTheirs(battle, nation, self.describe_waiting(self.battles[str(battle)]), deciding)
        return False

    @command
    def convoy_auto(self, battle: int, dice: DiceSource, deciding: Deciding = None, declared: bool = False) -> None:
        """Resolve the remaining steps with the defaults: every eligible unit searches, the
        cheapest legal casualties are taken; up to a step of a nation outside `deciding`
        (refused if it is the first, unless the command `declared` the battle first)."""
        self._battle(battle)
        first = not declared
        while str(battle) in self.battles:
            if not self._may_take(battle, deciding, refuse=first):
                return
            first = False
            if not self._auto_step_if_dice_last(battle, dice, deciding):
                return

    def _auto_step_if_dice_last(self, battle: int, dice: DiceSource, deciding: Deciding) -> bool:
        """Take one default step; with typed dice that ran out exactly before a step that rolls,
        stop there instead (False), so `auto --dice` plays as far as the dice given go. Dice left
        over that cannot complete a step are refused, never dropped."""
        if not isinstance(dice, ManualDice) or isinstance(dice, PromptDice):
            self._one_step(battle, dice, deciding)
            return True
        saved, used = savepoint(self), dice.used
        try:
            self._one_step(battle, dice, deciding)
        except DiceError:
            if used < len(dice.values):
                raise
            restore(self, saved)
            dice.used = used
            return False
        return True

    def _one_step(self, battle: int, dice: DiceSource, deciding: Deciding) -> None:
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        nation, _ = self.step_owner(battle, deciding)
        self._take_step(b, nation, dice)

    @command
    def battle_auto(self, battle: int, dice: DiceSource, deciding: Deciding = None, started: bool = False) -> list[int]:
        """Resolve a procedure with the default choices, and the interceptions it leads to
        (a group going on or retreating); returns the battles resolved. Stops at a step of a
        nation outside `deciding` (refused if it is the first, unless the command `started`
        the battle first)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        if b["kind"] == "convoy":
            self.convoy_auto(battle, dice, deciding, declared=started)
            return [battle]
        todo, done, first = [battle], [], not started
        while todo:
            number = todo[0]
            if str(number) not in self.battles:
                done.append(todo.pop(0))
                continue
            if not self._may_take(number, deciding, refuse=first):
                break  # another nation's step: the battle waits for its player
            first = False
            before = self.battle_count
            if not self._auto_step_if_dice_last(number, dice, deciding):
                break  # the typed dice ran out: the battle waits for the next roll
            todo.extend(range(before + 1, self.battle_count + 1))
        return done

    @command
    def auto_step(self, battle: int, dice: DiceSource, deciding: Deciding = None) -> None:
        """Take the default for the one step a procedure waits for: of the first nation it
        waits for, or of the first one of `deciding` (PL2: refused when the step is another
        nation's)."""
        b = self._procedure(battle, "interception", "asw", "naval", "convoy")
        self._may_take(battle, deciding, refuse=True)
        nation, _ = self.step_owner(battle, deciding)
        self._take_step(b, nation, dice)

    def _take_step(self, b: Procedure, nation: str, dice: DiceSource) -> None:
        """The default for the step `b` waits at, taken for `nation` where it is a choice."""
        battle, step, kind = b["id"], b["step"], b["kind"]
        if kind == "convoy" and step in _CONVOY_STEPS:
            # CV2, CV3, CV5: a convoy battle's own steps (its round is a volley like any other).
            if step == "merchant_casualty":
                self.convoy_choose_casualties(battle, nation, None)
            elif step == "search":
                self.convoy_search(battle, None, dice)
            elif step == "merchant_defence":
                self.convoy_merchant_defence(battle, dice)
            else:
                self.convoy_table(battle, dice)
        elif step == "search":
            if kind == "interception":
                self.intercept_search(battle, None, dice)
            else:
                self.asw_search(battle, None, dice)
        elif step == "detect":
            self.intercept_detect(battle, None)
        elif step in ("targets", "opening_targets"):
            self.choose_targets(battle, nation, None)
        elif step in ("screening", "opening_screening"):
            self.choose_screens(battle, nation, None)
        elif step in ("fire", "opening_fire"):
            self.fire(battle, dice)
        elif step == "casualties":
            self.choose_casualties(battle, nation, None)
        elif step == "decide":
            self._take_decision(b, nation)
        elif step == "continue":
            self.intercept_continue(battle, None)
        else:  # pragma: no cover - every step is handled above
            raise AssertionError(step)

    def _take_decision(self, b: Procedure, nation: str) -> None:
        """The default at the end of a round: submerge (SM4, AS5), or fight on (NC1, NC4)."""
        battle, kind = b["id"], b["kind"]
        if kind == "interception":
            self.intercept_decide(battle, None, None)
        elif kind == "asw":
            self.asw_submerge(battle, None)
        else:
            self.naval_decide(battle, nation, None, None)
