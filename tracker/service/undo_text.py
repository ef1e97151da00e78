"""What an undo (RK3) takes back, in words: the listing `undo --to` shows before it asks and
`undo` prints after, its heading, and its --json form."""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.rules.record import UndoPlan
from domain.text import plural
from projections.summary import rule_of, spans, summary
from tracker.service.undo_log import stays_in_effect

if TYPE_CHECKING:
    from domain.campaign import Campaign

# `spans` is the summary's (`log` lists an undo's rolls as runs too), offered here with the rest.
__all__ = ["plan_heading", "plan_json", "plan_lines", "spans"]


def plan_lines(plan: UndoPlan, campaign: Campaign) -> list[str]:
    """What an undo takes back: each action with its events, and the dice among them (the
    sides of a battle named by the campaign's nations, its ruleset's words)."""
    scenario, ruleset = campaign.scenario, campaign.ruleset
    lines = []
    for action in plan.actions:
        lines.append(f"  action {action.start} by {action.nation}:")
        lines += [
            f"    {e.originator_version}  {summary(e, scenario, ruleset)}   [{rule_of(e)}]"
            for e in action.events
            if type(e).__name__ != "ActionAsked"
        ]
        # D5: an event the undo cannot unmake is said so, not left to read as taken back.
        for e in action.events:
            stays = stays_in_effect(type(e).__name__)
            if stays is not None:
                lines.append(f"  event {e.originator_version}: {stays[0]}: {stays[1]} ({stays[2]})")
    if plan.rolls:
        lines.append(f"  dice taken back: {'roll' if len(plan.rolls) == 1 else 'rolls'} {spans(plan.rolls)}")
    return lines


def plan_json(plan: UndoPlan) -> dict[str, object]:
    """What an undo took back, for --json: the span of events, each action with its events'
    seqs, and the dice rolls among them."""
    return {
        "first": plan.first,
        "last": plan.last,
        "actions": [
            {
                "start": a.start,
                "nation": a.nation,
                "events": [e.originator_version for e in a.events if type(e).__name__ != "ActionAsked"],
            }
            for a in plan.actions
        ],
        "rolls": plan.rolls,
    }


def plan_heading(plan: UndoPlan) -> str:
    count = len(plan.actions)
    events = sum(1 for a in plan.actions for e in a.events if type(e).__name__ != "ActionAsked")
    span = f"event {plan.first}" if plan.first == plan.last else f"events {plan.first}-{plan.last}"
    dice = f", {plural(len(plan.rolls), 'dice roll')}" if plan.rolls else ""
    return f"{plural(count, 'action')} in {span} ({plural(events, 'event')} in play{dice})"
