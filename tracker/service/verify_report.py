"""What `tracker verify` finds (`VerifyReport`), and how a check records the first problem of
a log: `fail` on the report, or `Broken` raised from inside the walk over it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from domain.chain import GENESIS
from domain.text import plural


class HeadAt(TypedDict):
    """The last event of the log: its sequence number and hash."""

    seq: int
    hash: str


class Verified(TypedDict):
    """What `tracker verify --json` prints and the server's /verify answers; switches,
    overrides and rerolls are each {seq, kind, text} (D4, RK3)."""

    ok: bool
    events: int
    head: HeadAt
    rolls_checked: int
    rolls_unchecked: int
    snapshots_checked: int
    actions_refereed: int
    actions_checked_by_hash_only: int
    projection_rows_checked: int | None
    problem: str | None
    bad_event: int | None
    dice_switches: list[dict[str, Any]]
    overrides: list[dict[str, Any]]
    rerolls: list[dict[str, Any]]
    dice_problems: list[str]
    notes: list[str]


@dataclass
class VerifyReport:
    events: int = 0
    rolls_checked: int = 0
    rolls_unchecked: int = 0
    # Typed rolls (manual dice, or typed under an override): checked for order and range, with
    # no seed to re-derive them from; and the dice source in force at the log's end (D4).
    rolls_typed: int = 0
    dice_mode: str = "auto"
    problem: str | None = None
    bad_version: int | None = None
    notes: list[str] = field(default_factory=list)
    # D4, RK3: what the group agreed to outside the normal course, each {seq, kind, text}.
    switches: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)
    rerolls: list[dict[str, Any]] = field(default_factory=list)
    # D4: rolls from a source the campaign did not use, with no override (older logs may hold some).
    dice_problems: list[str] = field(default_factory=list)
    # The head: the last event's sequence number and hash, for a group to post and check later.
    head_seq: int = 0
    head_hash: str = GENESIS
    commitments: list[str] = field(default_factory=list)
    seeds_revealed: int = 0
    snapshots_checked: int = 0
    projection_rows_checked: int | None = None
    # Actions run again by the referee with their recorded inputs and dice, and those recorded
    # before the log held what was asked (checked by their hashes only).
    actions_refereed: int = 0
    actions_unasked: int = 0
    # Events stamped before the event they follow, in another action (see `check_time` in tracker.service.verify).
    stamped_back: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The log is intact: chain, order, dice derivation (D4 problems are listed apart)."""
        return self.problem is None

    def dice_checked(self) -> str:
        """What the walk checked of the dice, for `tracker verify`'s first line: auto rolls
        re-derived from their seed, typed rolls (which no seed derives) checked for order and
        range, or both where the campaign switched its dice source (D4)."""
        parts = []
        if self.rolls_checked or self.rolls_unchecked or self.dice_mode == "auto":
            parts.append(f"{plural(self.rolls_checked, 'auto roll')} re-derived from the seed")
        if self.rolls_typed:
            parts.append(
                f"{plural(self.rolls_typed, 'typed roll')} checked for order and range "
                "(dice typed by players have no seed to re-derive)"
            )
        elif self.dice_mode == "manual":
            parts.append("no typed roll yet (manual dice have no seed to re-derive)")
        return " and ".join(parts)

    def as_json(self) -> Verified:
        """What `tracker verify --json` prints (and the server's /verify answers)."""
        return {
            "ok": self.ok and not self.dice_problems,
            "events": self.events,
            "head": {"seq": self.head_seq, "hash": self.head_hash},
            "rolls_checked": self.rolls_checked,
            "rolls_unchecked": self.rolls_unchecked,
            "snapshots_checked": self.snapshots_checked,
            "actions_refereed": self.actions_refereed,
            "actions_checked_by_hash_only": self.actions_unasked,
            "projection_rows_checked": self.projection_rows_checked,
            "problem": self.problem,
            "bad_event": self.bad_version,
            "dice_switches": self.switches,
            "overrides": self.overrides,
            "rerolls": self.rerolls,
            "dice_problems": self.dice_problems,
            "notes": self.notes,
        }


class Broken(Exception):
    """The walk found the first problem of a log: the event it names and what is wrong."""

    def __init__(self, version: int, problem: str) -> None:
        super().__init__(problem)
        self.version = version
        self.problem = problem


def fail(report: VerifyReport, version: int, problem: str) -> VerifyReport:
    report.problem = problem
    report.bad_version = version
    return report
