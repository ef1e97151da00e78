"""`tracker verify`: walk a campaign's stored log, check the hash chain, re-derive auto dice, and
list every dice switch, override and reroll (D4, RK3); a roll from the wrong source without a
recorded override is a D4 problem."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from domain.chain import GENESIS, event_content, event_hash
from domain.dice import commitment, derive_roll


@dataclass
class VerifyReport:
    events: int = 0
    rolls_checked: int = 0
    rolls_unchecked: int = 0
    problem: str | None = None
    bad_version: int | None = None
    notes: list[str] = field(default_factory=list)
    # D4, RK3: what the group agreed to outside the normal course, each {seq, kind, text}.
    switches: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)
    rerolls: list[dict[str, Any]] = field(default_factory=list)
    # D4: rolls from a source the campaign did not use, with no override (older logs may hold some).
    dice_problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The log is intact: chain, order, dice derivation (D4 problems are listed apart)."""
        return self.problem is None


def verify_events(
    events: Iterable[tuple[int, Callable[[], Any]]],
    local_seed: Callable[[int], str | None] = lambda epoch: None,
) -> VerifyReport:
    """Check a log given as (stored version, decode) pairs in stored order.

    `local_seed(epoch)` supplies seeds this database still keeps secret; revealed seeds
    come from the log itself. The first problem found stops the walk and names the event.
    """
    report = VerifyReport()
    prev_hash = GENESIS
    expected_version = 1
    commitments: list[str] = []
    revealed: dict[int, str] = {}
    rolls: list[Any] = []
    roll_numbers: list[int] = []
    mode = "auto"
    typed_allowed: set[int] = set()  # actions with a TypedDiceAccepted event
    redo_actions: set[int] = set()
    seen_rolls: dict[int, tuple[int, list[int]]] = {}
    for version, decode in events:
        if version != expected_version:
            if version > expected_version:
                missing = (
                    f"event {expected_version}"
                    if version == expected_version + 1
                    else f"events {expected_version}-{version - 1}"
                )
                return _fail(report, expected_version, f"{missing} missing: the log jumps to event {version}")
            return _fail(report, version, f"event {version} is out of order (expected event {expected_version})")
        try:
            event = decode()
        except Exception as e:  # noqa: BLE001 - any decoding failure means an edited row
            return _fail(
                report,
                version,
                f"event {version} cannot be read ({type(e).__name__}): the stored row was edited",
            )
        kind = type(event).__name__
        attrs = dict(vars(event))
        stored_hash = attrs.get("hash")
        if attrs.get("prev_hash") != prev_hash:
            return _fail(
                report,
                version,
                f"event {version} ({kind}) does not follow event {version - 1}: "
                "an event before it was edited, deleted or reordered",
            )
        digest = event_hash(prev_hash, kind, version, event.timestamp, event_content(attrs))
        if digest != stored_hash:
            return _fail(report, version, f"event {version} ({kind}) was edited: its content does not match its hash")
        if kind == "Created":
            commitments.append(event.seed_commitment)
            mode = event.dice_mode
        elif kind == "DiceSourceSwitched":
            mode = event.mode
            report.switches.append(
                {"seq": version, "kind": kind, "text": f"{event.previous} -> {event.mode}: {event.reason}"}
            )
        elif kind == "TypedDiceAccepted":
            typed_allowed.add(event.action)
            report.overrides.append(
                {
                    "seq": version,
                    "kind": kind,
                    "text": f"typed dice from roll {event.roll}, agreed by "
                    f"{', '.join(event.agreed_by)}: {event.reason}",
                }
            )
        elif kind == "ActionUndone":
            mode = event.restored.get("dice_mode", mode)
            if event.override:
                agreed = ", ".join(event.agreed_by) or "nobody recorded"
                taken = f", taking back roll(s) {', '.join(map(str, event.rolls))}" if event.rolls else ""
                report.overrides.append(
                    {
                        "seq": version,
                        "kind": kind,
                        "text": f"undo of events {event.undone_from}-{event.undone_to}"
                        f"{taken}, agreed by {agreed}: {event.reason}",
                    }
                )
        elif kind == "ActionRedone":
            redo_actions.add(event.action)
        elif kind == "DiceRerolled":
            report.rerolls.append(
                {
                    "seq": version,
                    "kind": kind,
                    "text": f"roll {event.roll} rerolls roll {event.rerolls} (taken back by event {event.undo})",
                }
            )
        elif kind == "SeedRevealed":
            if not 0 <= event.epoch < len(commitments) or event.epoch != len(revealed):
                return _fail(
                    report,
                    version,
                    f"event {version} (SeedRevealed) names dice epoch {event.epoch} out of order",
                )
            if commitment(event.seed) != commitments[event.epoch]:
                return _fail(report, version, f"event {version} (SeedRevealed): seed does not match its commitment")
            revealed[event.epoch] = event.seed
            commitments.append(event.next_commitment)
        elif kind == "DiceRolled":
            if not 0 <= event.epoch < len(commitments):
                return _fail(report, version, f"event {version} (DiceRolled) names unknown dice epoch {event.epoch}")
            if event.action in redo_actions and event.roll in seen_rolls:
                # RK4: a redo re-records a roll with its number; it must say what the roll said.
                if seen_rolls[event.roll] != (event.epoch, list(event.values)):
                    return _fail(
                        report, version, f"event {version} (DiceRolled) redoes roll {event.roll} with other values"
                    )
            elif event.roll != len(roll_numbers) + 1:
                return _fail(
                    report,
                    version,
                    f"event {version} (DiceRolled) is roll {event.roll}, expected roll {len(roll_numbers) + 1}",
                )
            else:
                roll_numbers.append(event.roll)
                seen_rolls[event.roll] = (event.epoch, list(event.values))
                if event.source == "auto":
                    rolls.append((version, event))
            if event.source != mode and not (event.source == "manual" and event.action in typed_allowed):
                report.dice_problems.append(
                    f"D4: event {version} (roll {event.roll}) has {event.source} dice in a campaign of {mode} dice, "
                    "with no recorded switch or override"
                )
            if event.values and not all(1 <= v <= event.faces for v in event.values):
                return _fail(report, version, f"event {version} (DiceRolled): a die is outside 1..{event.faces}")
        prev_hash = stored_hash
        expected_version += 1
        report.events += 1

    for version, roll in rolls:
        seed = revealed.get(roll.epoch)
        if seed is None:
            candidate = local_seed(roll.epoch)
            if candidate is not None and commitment(candidate) == commitments[roll.epoch]:
                seed = candidate
        if seed is None:
            report.rolls_unchecked += 1
            continue
        expected = derive_roll(seed, roll.roll, len(roll.values), roll.faces)
        if list(roll.values) != expected:
            return _fail(
                report,
                version,
                f"event {version} (DiceRolled, roll {roll.roll}): values {list(roll.values)} "
                f"are not what the seed gives ({expected})",
            )
        report.rolls_checked += 1
    if report.rolls_unchecked:
        report.notes.append(
            f"{report.rolls_unchecked} auto roll(s) not re-derived: their seed is neither revealed nor held here"
        )
    return report


def _fail(report: VerifyReport, version: int, problem: str) -> VerifyReport:
    report.problem = problem
    report.bad_version = version
    return report
