"""One page of a campaign's timeline: the latest events that match the filters, or those just
before or after an event number (`?before=SEQ`, `?after=SEQ`), with what the links to the
pages on either side carry.

A page is read from the event index by its primary key (campaign, event number) from where it
starts, as many rows as it shows and one more (a keyset): a page deep in a campaign of 200,000
events costs what the latest page costs. Nothing counts the events before a page (an OFFSET, or
a count of the matches, reads the whole log on every page), so a page says which event numbers
it spans and how many the campaign has, not its rank among the matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from tracker.server.viewer_params import PageError
from tracker.service.application import Tracker
from tracker.service.shapes import LogRecord


@dataclass(frozen=True)
class LogPage:
    """The events of one page, oldest first, and the `before` / `after` of the pages beside it
    (None: no event that matches is older, or newer, than those shown)."""

    records: list[LogRecord]
    older: int | None
    newer: int | None


def check_bounds(before: int | None, after: int | None, last: int) -> None:
    """404 for an event number beyond the campaign's `last` event, as the board's `?at=`
    answers it; `before` may be one past the last event (the page that ends with it)."""
    if before is not None and before > last + 1:
        raise PageError(404, f"no event {before} in this campaign (it has {last})")
    if after is not None and after > last:
        raise PageError(404, f"no event {after} in this campaign (it has {last})")


def log_page(
    t: Tracker, cid: UUID, filters: dict[str, Any], size: int, before: int | None = None, after: int | None = None
) -> LogPage:
    """The page of at most `size` events matching `filters` (the keywords of `log_records`):
    the latest ones, those before event `before`, or the first ones after event `after`."""
    from tracker.service.history import log_records

    with t.views(cid) as v:
        if after is not None:
            records = log_records(t, cid, **filters, after=after, head=size + 1, views=v)
            newer_exists, records = len(records) > size, records[:size]
            # Older: any match at or before `after` (the page came from there, or was typed).
            edge = records[0]["seq"] if records else after + 1
            older_exists = bool(log_records(t, cid, **filters, before=edge, tail=1, views=v))
        else:
            records = log_records(t, cid, **filters, before=before, tail=size + 1, views=v)
            older_exists, records = len(records) > size, records[-size:]
            newer_exists = False
            if before is not None:
                edge = records[-1]["seq"] if records else before - 1
                newer_exists = edge >= 1 and bool(log_records(t, cid, **filters, after=edge, head=1, views=v))
    older = records[0]["seq"] if records else (after + 1 if after is not None else None)
    newer = records[-1]["seq"] if records else (before - 1 if before is not None else None)
    return LogPage(
        records,
        older if older_exists else None,
        # `after` is at least 1: from an empty page before event 1, the latest page is the way on.
        newer if newer_exists and newer is not None and newer >= 1 else None,
    )


# The filters a link to another page of the timeline carries, as the page's URL names them.
LINKED = ("turn", "phase", "nation", "zone", "kind", "battle", "order")


def timeline_page(
    t: Tracker, cid: UUID, filters: dict[str, Any], last: int, size: int, before: int | None, after: int | None
) -> dict[str, Any]:
    """What the timeline page shows of its page: the events, the event numbers they span, and
    the queries of the older, newer and latest pages (None where there is none), each with
    every filter of this one."""
    check_bounds(before, after, last)
    wanted = {k: filters[k] for k in ("turn", "phase", "nation", "zone", "kind", "battle")}
    shown = log_page(t, cid, wanted, size, before, after)
    kept = {k: filters.get(k) for k in LINKED}

    def link(**bound: int) -> str:
        return urlencode({k: v for k, v in {**kept, **bound}.items() if v not in (None, "")})

    return {
        "records": shown.records,
        "before": before,
        "after": after,
        "older": link(before=shown.older) if shown.older is not None else None,
        "newer": link(after=shown.newer) if shown.newer is not None else None,
        # Any page but the latest links to it: from an empty page before event 1 the only way on.
        "latest": link() if before is not None or after is not None else None,
    }
