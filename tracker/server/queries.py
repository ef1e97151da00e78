"""The league server's JSON reads of a campaign (`/state`, `/pending`, `/log`, `/explain`,
`/report`, `/verify`): the CLI's queries as JSON-able data, for a campaign named in the URL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.errors import InputError
from domain.ruleset import KNOWN_PHASES
from tracker.server.served import NotFound, ServedTracker
from tracker.service.shapes import Explanation, LogRecord

if TYPE_CHECKING:
    from tracker.service.verify_report import Verified


def state_data(t: ServedTracker, name: str, turn: int | None, phase: str | None, at: int | None) -> dict[str, Any]:
    from tracker.reports.views import board_now
    from tracker.service.turn_played import in_progress

    if phase is not None and phase not in KNOWN_PHASES:
        raise InputError(f"unknown phase {phase!r} (phases: {', '.join(KNOWN_PHASES)})")
    cid = t.campaign_id(name)
    campaign = t.load(cid)
    if turn or at:
        try:
            data = t.board_at(cid, turn=turn, phase=phase, at=at)
        except InputError as e:
            # The number is well formed (the route checked it) and the phase known: what is
            # not there is the event, turn or phase, a 404 as `explain` and the board page answer.
            raise NotFound(str(e)) from None
    else:
        data = board_now(campaign)
    # T1: as `state --turn --json`, whether the turn (or phase) asked for is still being played.
    return {"campaign": t.name_of(campaign), **data, **in_progress(campaign, turn, phase)}


def pending_data(t: ServedTracker, name: str) -> list[dict[str, Any]]:
    from tracker.cli.common import next_command

    campaign = t.load(t.campaign_id(name))
    # As `pending --json` lists it: with nothing open, whom the game waits for (kind "turn").
    return [{**item, "command": next_command(item)} for item in campaign.pending(turn=True)]


def log_data(
    t: ServedTracker,
    name: str,
    *,
    turn: int | None = None,
    phase: str | None = None,
    nation: str | None = None,
    zone: str | None = None,
    kind: str | None = None,
    battle: int | None = None,
    tail: int | None = None,
    before: int | None = None,
    after: int | None = None,
) -> list[LogRecord]:
    """The events that match, as `log --json` lists them; `before` / `after` keep those numbered
    below / above an event (with `tail`, a page back from `before`: keyed on the event number,
    never counted through the log)."""
    from tracker.service.history import log_records
    from tracker.service.names import Names, event_kind

    if phase is not None and phase not in KNOWN_PHASES:
        raise InputError(f"unknown phase {phase!r} (phases: {', '.join(KNOWN_PHASES)})")
    cid = t.campaign_id(name)
    if nation is not None or zone is not None:
        n = Names(t.load(cid))
        nation, zone = n.optional_nation(nation), n.optional_zone(zone)
    kind = event_kind(kind) if kind is not None else None
    records = log_records(
        t, cid, turn=turn, phase=phase, nation=nation, zone=zone, kind=kind, battle=battle,
        with_data=True, tail=tail, before=before, after=after,
    )  # fmt: skip
    if not records:
        # 404 for the log of a turn not played yet, or of a battle the campaign never had (as
        # `log --json` refuses it and the timeline page answers), not an empty list.
        from tracker.service.history import unplayed

        why = unplayed(t, cid, turn, battle)
        if why is not None:
            raise NotFound(why)
    return records


def explain_data(t: ServedTracker, name: str, seq: int) -> Explanation:
    from tracker.service.history import explain

    cid = t.campaign_id(name)
    try:
        return explain(t, cid, seq)
    except InputError as e:
        raise NotFound(str(e)) from None


def report_data(t: ServedTracker, name: str, turn: int | None) -> dict[str, Any]:
    from tracker.reports.report import build_report

    cid = t.campaign_id(name)
    try:
        return build_report(t, cid, turn, "json")
    except InputError as e:
        if turn is None:
            raise
        # The number is well formed (the route checked it): what is not there is the turn (not
        # played yet, or passed over, F8), a 404 as `/state?turn=` and the board page answer.
        raise NotFound(str(e)) from None


def verify_data(t: ServedTracker, name: str, head_text: str | None) -> Verified:
    from tracker.service.verify import Head, verify_campaign

    head = Head.parse(head_text) if head_text is not None else None
    return verify_campaign(t, t.campaign_id(name), head).as_json()
