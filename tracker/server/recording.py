"""What records over the API: a POSTed action, a command's answer, and the override requests
(`overrides`, `approve N`) that a player asks and another approves (RK3)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response

from domain.errors import InputError, RuleViolation, TrackerError
from tracker.cli.params import shorten_echoes
from tracker.server.commands import run_command
from tracker.server.responses import JsonResponse, cited_rule
from tracker.server.served import NEEDS_TOKEN, READ_ONLY, NotFound, ServedTracker
from tracker.service.performing import Outcome
from tracker.service.players import Forbidden, Player, Unauthenticated
from tracker.service.shapes import OverrideRequest

T = TypeVar("T")


def command_response(result: dict[str, Any]) -> Response:
    """A command's outcome: 200 done, 400 bad usage, 409 refused, 503 on a read-only database;
    401/403 for want of a token or a right, 409 for an override waiting for approval (each with
    its error and rule)."""
    refused = result.pop("refused", None)
    body = dict(result)
    if isinstance(refused, NotFound):
        # A campaign the command named that does not exist, or that the token may not read.
        status = 404 if result["exit"] != 0 else 200
        if status == 404:
            body.update(error=str(refused), rule=None)
    elif refused is not None:
        status = 401 if isinstance(refused, Unauthenticated) else 403 if isinstance(refused, Forbidden) else 409
        body.update(error=shorten_echoes(str(refused)), rule=getattr(refused, "rule", None))
    else:
        status = {0: 200, 2: 400}.get(result["exit"], 409)
        if status != 200:
            # The error in one short line; stdout and stderr stay the command line's own output.
            message = (result["stderr"] or "").strip().splitlines()
            error = message[-1].removeprefix("Error: ") if message else "refused"
            rule = cited_rule(error) if status == 409 else None
            if error == READ_ONLY:
                # The server's state, not the client's usage (`responses.tracker_error`).
                status, rule = 503, None
            elif rule == "PL2":
                # A right the command itself checks (`notify add --player` of another player):
                # 403, as every other PL2 refusal is answered.
                status = 403
            body.update(error=shorten_echoes(error), rule=rule)
    return JsonResponse(body, status_code=status)


def reached_at(request: Request) -> str:
    """The server's URL as its players reach it: its --public-url, else the request's own base
    URL (the address and port this client typed)."""
    delivery = getattr(request.app.state, "delivery", None)
    public = getattr(delivery, "public_url", None)
    return str(public or request.base_url).rstrip("/")


def reaching(t: ServedTracker, server: str | None, fn: Callable[[ServedTracker, Any], T], player: Any) -> T:
    """`fn(t, player)` with `t.reached_at` set to `server`: the commands its refusals name
    (RK3's `approve`) name the server as the player reached it."""
    before, t.reached_at = t.reached_at, server
    try:
        return fn(t, player)
    finally:
        t.reached_at = before


def perform_action(
    t: ServedTracker, player: Player | None, name: str, asked: dict[str, Any],
    approved: tuple[str, ...] = (), approving: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run one registered action as `player`: what it recorded and what the game waits for."""
    if player is None:
        # Said before the campaign is looked up: the same answer for every name.
        raise Unauthenticated(NEEDS_TOKEN)
    cid = t.campaign_id(name)
    done = t.acting_as(
        player,
        lambda: t.perform(cid, asked["action"], asked["inputs"], seen=asked.get("seen")),
        asked,
        approved,
        approving,
    )
    return action_answer(done)


def action_answer(done: Outcome) -> dict[str, Any]:
    """The answer to a POSTed action: what it recorded and what the game waits for, listed as
    `pending --json` and GET .../pending list it (with nothing open, whose phase it is)."""
    from projections.summary import as_record
    from tracker.cli.common import next_command

    return {
        "action": done.action,
        "asked": done.asked,
        "events": [
            as_record(e.originator_version, e, done.campaign.scenario, done.campaign.ruleset) for e in done.events
        ],
        "pending": [{**item, "command": next_command(item)} for item in done.campaign.pending(turn=True)],
    }


def _recorded_at(request: OverrideRequest) -> str:
    """Where an approved override was recorded: the event `log` and `explain` find it by."""
    event = request["recorded_at_event"]
    return f", recorded at event {event}" if event is not None else ""


def override_command(
    t: ServedTracker, player: Player | None, name: str | None, args: list[str], terminal: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`approve N [--json]` and `overrides [--json]` over --server, answered like a command and
    rendered for the terminal of the player who runs it (`terminal`, as `check_terminal` reads it)."""
    try:
        if args[0] == "overrides":
            if args[1:] not in ([], ["--json"]):
                raise InputError("usage: overrides [--json]")
            rows = t.players.override_requests(str(t.campaign_id(name)))
            if args[1:]:
                return {"exit": 0, "stdout": json.dumps(rows, indent=2, default=str) + "\n", "stderr": ""}
            lines = [
                f"{r['id']}: {r['requested_by']} asks: tracker {' '.join(r['command'].get('args', []))} "
                f"(agreement of {', '.join(r['agreed_by'])}; reason: {r['reason']}) - "
                + (f"approved by {r['approved_by']}{_recorded_at(r)}" if r["approved_by"] else "waiting")
                for r in rows
            ]
            text = "".join(line + "\n" for line in lines) or "No override requests.\n"
            return {"exit": 0, "stdout": text, "stderr": ""}
        as_json = "--json" in args[1:]
        numbers = [a for a in args[1:] if a != "--json"]
        number = numbers[0] if len(numbers) == 1 else ""
        if not (number.isascii() and number.isdigit()) or not 1 <= int(number) <= 2**31 - 1:
            raise InputError("usage: approve REQUEST [--json] (the number `overrides` lists)")
        if player is None:
            raise Unauthenticated("approving an override needs a player's token: set TRACKER_TOKEN")
        return approve_override(t, player, name, int(numbers[0]), terminal, as_json)
    except (Unauthenticated, Forbidden) as e:
        return {"exit": 1, "stdout": "", "stderr": f"Error: {e}\n", "refused": e}
    except TrackerError as e:
        refused = e if isinstance(e, NotFound) else None
        return {"exit": e.exit_code, "stdout": "", "stderr": f"Error: {e}\n", "refused": refused}


def approve_override(
    t: ServedTracker, approver: Player, name: str | None, number: int,
    terminal: dict[str, Any] | None = None, as_json: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """RK3: record the approval of override request `number` and run what it asked, as the
    player who asked, with the agreement of the nations the approver plays. What it prints is
    rendered for the approver's `terminal` (with `as_json`, as the command's `--json` prints)."""
    cid = str(t.campaign_id(name))
    if not approver.plays_in(cid):
        raise Forbidden(f"{approver.name}'s token is for another campaign")
    try:
        request = t.players.override_request(cid, number)
    except InputError as e:
        raise NotFound(str(e)) from None  # the URL names a request that is not there: 404
    t.players.check_approver(request, approver)
    asker = t.players.player(cid, request["requested_by"])
    if asker is None:
        raise InputError(f"override request {number} was made by {request['requested_by']}, whose token was revoked")
    version = t.recorder.last_version(UUID(cid))
    if version != request["seen"]:
        raise RuleViolation(
            "RK3",
            f"the campaign moved on since override request {number} (event {request['seen']} then, {version} now): "
            "nothing was recorded; ask again",
        )
    if not t.players.mark_approved(number, approver, None):
        raise RuleViolation("RK3", f"override request {number} was approved already")
    agreed = tuple(request["agreed_by"])
    asked = request["command"]
    if "action" in asked:
        try:
            done = perform_action(t, asker, str(asked.get("campaign") or name), asked, agreed, number)
        except TrackerError:
            t.players.unmark_approved(number)
            raise
        t.players.set_recorded(number, t.recorder.last_version(UUID(cid)))
        if as_json:
            shown = {"action": done["action"], "events": done["events"], "pending": done["pending"]}
            return {"exit": 0, "stdout": json.dumps(shown, indent=2, default=str) + "\n", "stderr": "", **done}
        lines = [f"{r['summary']}   [{r['rule']}]" for r in done["events"]]
        return {"exit": 0, "stdout": "".join(line + "\n" for line in lines), "stderr": "", **done}
    args = list(asked["args"])
    if as_json and "--json" not in args:
        args.append("--json")
    # The approver's terminal, not the one the request was asked from.
    columns = int((terminal or {}).get("columns") or asked.get("columns", 80))
    result = run_command(t, asker, asked.get("campaign"), args, columns, agreed, number, terminal=terminal)
    if result["exit"] == 0:
        t.players.set_recorded(number, t.recorder.last_version(UUID(cid)))
    else:
        t.players.unmark_approved(number)
    return result
