"""F8 on the viewer's pages: the national turns passed over while their nation was neutral
(which have no events, so no board or timeline of their own), and the nations that entered the
war after round 1, at their entry round or brought forward by an adjustment (AD1), each with
the event that says so."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.campaign.events import Adjusted, WarEntered
from projections.schema import event_index
from tracker.service import read_models
from tracker.service.application import Tracker
from tracker.service.passed_over import PassedOver, passed_over


def _last_neutral_turn(campaign: Any) -> int:
    """The last national turn that may have been passed over: the one before the last entry
    round. A long campaign's thousands of turns after it are never looked at."""
    scenario = campaign.scenario
    entries = [n.entry_round for n in scenario.nations.values()]
    return (max(entries, default=1) - 1) * len(scenario.turn_order)


def _brought_forward(t: Tracker, cid: UUID, campaign: Any) -> dict[str, int]:
    """AD1: each nation whose entry an adjustment brought forward, with the turn it was recorded
    in (`read_models.entries_brought_forward`); read only when the campaign has one."""
    if not campaign.entered:
        return {}
    with t.views(cid) as v:
        return read_models.entries_brought_forward(t, v)


def passed_over_turns(t: Tracker, cid: UUID, campaign: Any) -> set[int]:
    """F8: the national turns the campaign passed over, an entry an adjustment brought forward
    counted from the turn it was recorded in (AD1: that nation's later turns were played)."""
    forward = _brought_forward(t, cid, campaign)
    return {k for k in range(1, _last_neutral_turn(campaign) + 1) if passed_over(campaign, k, forward) is not None}


def turn_passed_over(t: Tracker, cid: UUID, campaign: Any, turn: int) -> PassedOver | None:
    """F8: national turn `turn` if it was passed over, with the turn played last before it
    (whose events hold its TurnPassedOver and whose board stands after it; 0 when none was, see
    `board_then`); None otherwise."""
    return passed_over(campaign, turn, _brought_forward(t, cid, campaign))


def board_then(t: Tracker, cid: UUID, said: PassedOver) -> tuple[str, str]:
    """F8: the board standing when turn `said.turn` was passed over, as the board page's query
    and its name: the turn played last before it, or, when none was (the first nations in turn
    order neutral in round 1), the board the campaign opened with, after the events of turn 1
    (the creation's), as `state --turn` names it."""
    if said.played:
        return f"turn={said.played}", f"turn {said.played}"
    with t.views(cid) as v:
        opened = read_models.opening_seq(v)
    return f"at={opened}", f"the one the campaign opened with (after event {opened})"


def opening_board(t: Tracker, cid: UUID, campaign: Any) -> str | None:
    """F8: the board page's query of the board the campaign opened with when its turn 1 was
    passed over (`board_then`), else None."""
    said = turn_passed_over(t, cid, campaign, 1)
    return None if said is None else board_then(t, cid, said)[0]


def war_entries(t: Tracker, cid: UUID, campaign: Any, seq: int) -> list[dict[str, Any]]:
    """F8, AD1: the nations that entered the war by event `seq`, in the order they did: each
    with its round, the event recording it and whether an adjustment brought it forward. Both
    kinds of event come before the last entry round, so only those rounds' events are read."""
    scenario = campaign.scenario
    last_turn = _last_neutral_turn(campaign) + len(scenario.turn_order)
    if last_turn <= len(scenario.turn_order):
        return []  # every nation is at war from round 1
    filters = [
        event_index.c.turn <= last_turn,
        event_index.c.seq <= seq,
        event_index.c.kind.in_(("WarEntered", "Adjusted")),
        (event_index.c.undone_by.is_(None)) | (event_index.c.undone_by > seq),
    ]
    entries: list[dict[str, Any]] = []
    with t.views(cid) as v:
        rows = v.index_rows(filters)
    for row in rows:
        for stored in t.app.recorder.select_events(cid, gt=row.seq - 1, lte=row.seq):
            event = t.decode(stored)
            # A WarEntered is recorded as the round before ends; it names the round it opens.
            if isinstance(event, WarEntered):
                entered, round_, forward = [event.nation], event.round, False
            elif isinstance(event, Adjusted):
                entered, round_, forward = list(event.enter), row.round, True
            else:
                continue
            entries += [{"nation": n, "round": round_, "seq": row.seq, "forward": forward} for n in entered]
    return entries
