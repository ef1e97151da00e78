"""The shapes the service hands its callers (the command line, the server's JSON API, reports):
typed dictionaries, so a caller's type checker knows every key, and `--json` prints them as
they are (docs/json.md describes each for users).

They are dictionaries at run time, built where the service builds them; only their keys and
value types are declared here, in one place."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired, TypedDict


class LogRecord(TypedDict):
    """One event as `tracker log` and the API's log list it (from the event index)."""

    seq: int
    turn: int
    round: int
    nation: str
    phase: str
    kind: str
    rule: str
    battle: int | None
    zones: list[str]
    summary: str
    undone_by: int | None
    # With the event's stored fields (`with_data`): when it was recorded, and its content.
    timestamp: NotRequired[str]
    data: NotRequired[dict[str, Any]]


class RuleCited(TypedDict):
    id: str
    statement: str


class Choice(TypedDict):
    by: str | None
    default: bool
    # HA7: for a casualty choice, the recorded hits it placed (and those no unit could take),
    # each {seq, summary}: what a dispute over a hit placement reads first.
    hits: list[dict[str, Any]]


class SeedExplained(TypedDict):
    """D5: where an auto roll's seed stands: the epoch, the events that committed to it and
    revealed it (None: not yet), and the roll re-derived from the revealed seed (None: not
    revealed), with whether it matches the recorded values."""

    epoch: int
    commitment: str | None
    committed_at: int | None
    revealed_at: int | None
    derived: list[int] | None
    matches: bool | None


class ValueExplained(TypedDict):
    """F4: which of the rolling unit's values a roll's base target is, and why that one (its side
    in the battle, or the rule that names the value)."""

    unit: str
    type: str
    # "attack", "defense", "ASW attack", or a search's: "convoy search", "ASW search",
    # "interception search".
    value: str
    base: int
    # The unit's side in the battle: "attacker" or "defender" (a search: None).
    side: str | None
    why: str


class DiceExplained(TypedDict):
    """A roll as `explain` shows it: the dice, the target and each modifier with its cause."""

    roll: int
    roller: str
    reason: str
    purpose: str
    faces: int
    values: list[int]
    source: str
    reference: str | None
    base_target: int | None
    target: int | None
    success_when: str
    outcome: Any
    modifiers: list[dict[str, Any]]
    # RK3: the roll this one makes again after an override undo, and the roll that made this
    # one again: each {roll, event (the DiceRerolled), undo}, or None.
    reroll_of: dict[str, int] | None
    rerolled_as: dict[str, int] | None
    # D5: the seed of an auto roll (None for typed dice).
    seed: SeedExplained | None
    # CV4: the rolls of the same volley in the order they were rolled, each {roll, event,
    # unit, purpose} (one roll alone: empty).
    volley: list[dict[str, Any]]
    # F4: which of the unit's values the base target is, and why (a roll of no unit: None).
    value: ValueExplained | None


class Explanation(TypedDict):
    """Everything about one event (`tracker explain`)."""

    seq: int
    kind: str
    timestamp: str
    summary: str
    turn: int | None
    round: int | None
    phase: str | None
    rules: list[RuleCited]
    dice: DiceExplained | None
    choice: Choice | None
    changes: list[str]
    undone_by: int | None
    hash: str
    prev_hash: str
    data: dict[str, Any]


class PlayerListed(TypedDict):
    """A player of a served campaign (`tracker players list`); never their token."""

    name: str
    nations: list[str]
    referee: bool
    spectator: bool
    created_at: datetime | str | None
    revoked: bool
    revoked_at: datetime | str | None


class OverrideRequest(TypedDict):
    """An override asked for on a league server and, once approved, who approved it (RK3)."""

    id: int
    requested_by: str
    nations: list[str]
    agreed_by: list[str]
    reason: str
    command: dict[str, Any]
    seen: int | None
    requested_at: datetime | str | None
    approved_by: str | None
    approved_at: datetime | str | None
    recorded_at_event: int | None


class InputDescribed(TypedDict):
    """One input of an action as the API's action list describes it; `min` and `max` for a
    whole number only."""

    name: str
    kind: str
    required: bool
    default: Any
    min: NotRequired[int]
    max: NotRequired[int]
    help: str


class ActionDescribed(TypedDict):
    """An action that can be asked for, with its inputs (`GET /api/actions`)."""

    action: str
    doc: str
    inputs: list[InputDescribed]


class CommandAnswer(TypedDict):
    """A command run for a client (a league server's `/api/command`): its exit status and output."""

    exit: int
    stdout: str
    stderr: str


class StoredRequest(TypedDict):
    """A request recorded with an idempotency key: the events it recorded and its answer."""

    campaign_id: str
    first: int
    last: int
    # The answer as the request gave it (a route's own JSON object), read back from JSON.
    answer: dict[str, Any]
    # False while it holds the answer written with the events (not yet the rendered one).
    complete: bool


class OwedItem(TypedDict):
    """One thing a player owes in one campaign (`tracker inbox`, `tracker wait`)."""

    campaign: str
    round: int
    phase: str
    nation: str
    text: str
    waiting: list[str]
    rule: str
    command: str | None
    version: int
