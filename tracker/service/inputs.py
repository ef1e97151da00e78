"""The inputs of an action and the registry of actions: each input's kind and bounds, checked
the same way whether typed at the command line, sent as JSON or read back from the log."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from domain.dice import parse_dice
from domain.errors import InputError, TrackerError
from tracker.service.shapes import ActionDescribed, InputDescribed

if TYPE_CHECKING:
    from domain.campaign import Campaign
    from domain.dice import DiceSource
    from tracker.service.undo_log import Log

MAX_INT = 2**31 - 1
MAX_TEXT = 10_000
MAX_ITEMS = 1_000


def shown(given: Any) -> str:
    """A value as an error echoes it: its first 60 characters, so a message stays a line."""
    text = repr(given)
    return text if len(text) <= 60 else text[:60] + "..."


@dataclass(frozen=True)
class Field:
    """One input of an action: its name, its kind, whether it must be given, its bounds."""

    name: str
    kind: str  # text, units, zones, texts, int, flag, dice
    required: bool = False
    default: Any = None
    low: int = -MAX_INT
    high: int = MAX_INT
    help: str = ""
    # An input added after campaigns were recorded without it: left out of what an action
    # records while it holds its default, so the logs recorded before it re-referee (and
    # verify) as they were recorded.
    added: bool = False

    def describe(self) -> InputDescribed:
        """The input as the action list describes it: its bounds for a whole number only."""
        if self.kind == "int":
            return {
                "name": self.name,
                "kind": self.kind,
                "required": self.required,
                "default": self.default,
                "min": self.low,
                "max": self.high,
                "help": self.help,
            }
        return {
            "name": self.name,
            "kind": self.kind,
            "required": self.required,
            "default": self.default,
            "help": self.help,
        }

    def check(self, action: str, value: Any) -> Any:
        if value is None:
            if self.required:
                raise InputError(f"{action}: input {self.name!r} is required")
            return self.default
        # Only an error says it; worked out here for the checks below (an absent input, the
        # usual case, returns above without it).
        where = f"{action}: input {self.name!r}"
        if self.kind == "flag":
            if not isinstance(value, bool):
                raise InputError(f"{where} must be true or false, got {shown(value)}")
            return value
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(f"{where} must be a whole number, got {shown(value)}")
            if not self.low <= value <= self.high:
                raise InputError(f"{where} must be between {self.low} and {self.high}, got {shown(value)}")
            return value
        if self.kind == "dice":
            if isinstance(value, str):
                if len(value) > MAX_TEXT:
                    raise InputError(f"{where} is longer than {MAX_TEXT} characters")
                try:
                    value = parse_dice(value)
                except TrackerError:
                    # Said here, not by parse_dice, which echoes the whole text.
                    raise InputError(f"{where}: D3: dice must be whole numbers, got {shown(value)}") from None
                except ValueError:
                    # A die of more than 4300 digits, which Python refuses to read as a number.
                    raise InputError(f"{where}: too many dice or a die out of range") from None
            if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
                raise InputError(f"{where} must be a list of whole numbers, got {shown(value)}")
            if len(value) > MAX_ITEMS or any(not -MAX_INT <= v <= MAX_INT for v in value):
                raise InputError(f"{where}: too many dice or a die out of range")
            return list(value)
        if self.kind == "text":
            if not isinstance(value, str):
                raise InputError(f"{where} must be a string, got {shown(value)}")
            if len(value) > MAX_TEXT:
                raise InputError(f"{where} is longer than {MAX_TEXT} characters")
            return value
        # units (one string "A,B" or a list), zones (a list, or one comma-separated string), texts
        if isinstance(value, str):
            if len(value) > MAX_TEXT:
                raise InputError(f"{where} is longer than {MAX_TEXT} characters")
            if self.kind == "zones":
                value = [p.strip() for p in value.split(",") if p.strip()]
            elif self.kind == "texts":
                value = [value]
        if isinstance(value, str):
            return value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(f"{where} must be a list of strings, got {shown(value)}")
        if any(len(v) > MAX_TEXT for v in value):
            raise InputError(f"{where} has an item longer than {MAX_TEXT} characters")
        if len(value) > MAX_ITEMS:
            raise InputError(f"{where} has more than {MAX_ITEMS} items")
        return list(value)


# The dice a rolling action takes: typed values, their reference, and the D4 override.
DICE_FIELDS = (
    Field("dice", "dice", help="Manual dice values in the order `pending` lists."),
    Field("ref", "text", help="External reference of manual dice (a dice-server roll id)."),
    Field("override", "flag", default=False, help="Typed dice in an auto-dice campaign (D4, RK3)."),
    Field("reason", "text", default="", help="Why the override."),
    Field("agreed_by", "texts", default=[], help="Nations of the other side that agree."),
)


@dataclass(frozen=True)
class Action:
    """A named action: its inputs and the function that performs it on the campaign."""

    name: str
    fields: tuple[Field, ...]
    perform: Callable[[Campaign, DiceSource, dict[str, Any], Log], Any]
    rolls: bool = False
    doc: str = ""
    # The part of the state the action's meaning rests on (which step of a battle it takes,
    # which seed it reveals): after a conflict with another writer, the action is run again
    # on the newer state only if that part is as the first attempt found it.
    depends: Callable[[Campaign, dict[str, Any]], Any] | None = None

    def describe(self) -> ActionDescribed:
        """The action and its inputs as JSON (for an API listing what can be asked)."""
        return {"action": self.name, "doc": self.doc, "inputs": [f.describe() for f in self.fields]}

    def validate(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """The inputs checked and completed with defaults, in the order the fields are declared."""
        if not isinstance(inputs, Mapping):
            raise InputError(f"{self.name}: inputs must be an object of named values")
        known = self.known
        unknown = sorted(str(k) for k in inputs if k not in known)
        if unknown:
            raise InputError(
                f"{self.name}: unknown input {unknown[0]!r} (inputs: {', '.join(sorted(known)) or 'none'})"
            )
        checked = {}
        for f in self.fields:
            value = f.check(self.name, inputs.get(f.name))
            if not (f.added and value == f.default):
                checked[f.name] = value
        return checked

    @functools.cached_property
    def known(self) -> frozenset[str]:
        """The names of the action's inputs (asked for every action validated)."""
        return frozenset(f.name for f in self.fields)


ACTIONS: dict[str, Action] = {}


def action(
    name: str,
    *fields: Field,
    rolls: bool = False,
    depends: Callable[[Campaign, dict[str, Any]], Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register `perform(campaign, dice, inputs, log)` as the action `name`; `depends`, the
    part of the state its meaning rests on (see `Action.depends`)."""

    def register(perform: Callable[..., Any]) -> Callable[..., Any]:
        all_fields = fields + (DICE_FIELDS if rolls else ())
        ACTIONS[name] = Action(name, all_fields, perform, rolls, (perform.__doc__ or "").strip(), depends)
        return perform

    return register


def get(name: str) -> Action:
    found = ACTIONS.get(name) if isinstance(name, str) else None
    if found is None:
        raise InputError(f"unknown action {name!r} (actions: {', '.join(sorted(ACTIONS))})")
    return found
