"""Idempotency keys on the routes that record: a request with an `Idempotency-Key` header that
recorded an action is answered its first answer when it comes again, and records nothing more;
the same key with another request is refused (422, see `tracker.service.idempotency`). A
request without the header runs as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request

from tracker.server.served import ServedTracker
from tracker.service.idempotency import KeyedRequest, answered_once, check_key, events_answer, fingerprint
from tracker.service.performing import Outcome
from tracker.service.players import Player

HEADER = "Idempotency-Key"


def request_key(request: Request) -> str | None:
    """The request's idempotency key, or None; InputError (400) for one no client makes."""
    value = request.headers.get(HEADER)
    return None if value is None else check_key(value)


def once(
    t: ServedTracker,
    player: Player | None,
    key: str | None,
    run: Callable[[], dict[str, Any]],
    answer: Callable[[Outcome], dict[str, Any]] | None = None,
    campaign: str | None = None,
    asked: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`run()`, the answer of a request that may record; with a key, a repeat of it by the same
    player gets the first answer, and another request with the same key is refused (KeyReused,
    told apart by what it `asked`: the route and what it names). `answer` gives that answer
    from the action recorded (stored with its events); without it, the answer is the command
    line's, written with the events as their summaries and replaced by the rendered output once
    `run` returns."""
    if key is None or player is None:
        # Without a token nothing is recorded: the request is refused as it always was.
        return run()
    player_key = f"{player.campaign_id}/{player.name}"
    asked_as = fingerprint(asked) if asked is not None else None
    request = KeyedRequest(t.request_keys, key, player_key, answer or events_answer, asked_as)
    cid = str(t.campaign_id(campaign)) if campaign is not None else None
    return answered_once(t, request, run, cid, full=answer is None)
