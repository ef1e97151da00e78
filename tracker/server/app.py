"""The league server's ASGI application: a JSON API under /api over the application service,
a stream telling pages that a campaign recorded something, and the browser viewer at /.

Reads need a token of the campaign's players, spectators or referee (the header, or the
viewer's cookie), unless the campaign is public; to anyone else a campaign does not exist
(see `tracker.server.served`). Whatever records needs the token in the header.

Each `Tracker` of a process serves one request at a time (its working copies and read models
are not shared between threads), and a process holds several: actions on campaigns of
different stripes run side by side (see `Service`). Nothing is kept that another process needs:
every request reads the database, a working copy is re-checked by its version when saved,
and the event streams' watcher reads the database (see `tracker.server.watch`), so several
processes on one PostgreSQL database each see every write.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import re
import threading
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar
from urllib.parse import quote, unquote, unquote_to_bytes
from uuid import UUID

import anyio.to_thread
from sqlalchemy import func, inspect, literal, select
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from domain.errors import InputError, RuleViolation, TrackerError
from tracker.server.access import Denied, FailedChecks, Gate
from tracker.server.commands import check_args, check_terminal, run_command
from tracker.server.delivery import delivering
from tracker.server.keyed import once, request_key
from tracker.server.keys import KeyedRegistry
from tracker.server.limits import MAX_BODY, BadBody, BodyLimit, TooLarge, is_text, parse_json_object
from tracker.server.logs import RequestLog, note
from tracker.server.served import NotFound, ServedTracker
from tracker.server.watch import Watcher, channel_of, watcher_for
from tracker.service.performing import Outcome
from tracker.service.players import Forbidden, Player, Unauthenticated
from tracker.storage.store import campaigns_table, seeds_table, served_table, sqlite_file

T = TypeVar("T")
log = logging.getLogger("tracker.server")

# A comment line this often keeps proxies from closing a quiet stream.
KEEPALIVE_SECONDS = 15.0
MAX_INT = 2**31 - 1


class CampaignName(Convertor[str]):
    """`{name:campaign}`: one path segment, percent-decoded here (a name may hold "/", "%", "?"
    or spaces: pages and clients send it quoted, as `quote(name, safe="")` does)."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return unquote(value)

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("campaign", CampaignName())

# An encoded "/" or "%" in a request's path, left encoded for routing.
_KEPT = re.compile(rb"(%2[fF]|%25)")


def routing_path(raw_path: bytes) -> str:
    """The path as sent, decoded except for %2F and %25: the server would otherwise see
    `north%2Fsea` as two segments, so a campaign named "north/sea" would match no route."""
    parts = _KEPT.split(raw_path.split(b"?", 1)[0])
    return "".join(
        part.upper().decode() if i % 2 else unquote_to_bytes(part).decode("utf-8", "replace")
        for i, part in enumerate(parts)
    )


class EncodedSlashes:
    """ASGI middleware routing on `routing_path` of the raw path (the decoded path is kept
    where the server gives no raw one)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") if scope["type"] in ("http", "websocket") else None
        if raw:
            # Changed in place, not copied: the request log reads the route the router notes here.
            scope["path"] = routing_path(raw)
        await self.app(scope, receive, send)


class ApiError(Exception):
    """An error answered as JSON {error, rule} with an HTTP status (and headers: Retry-After)."""

    def __init__(
        self, status: int, message: str, rule: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.rule = rule
        self.headers = headers or {}


class JsonResponse(JSONResponse):
    """JSON as `--json` prints it (timestamps as text)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, default=str).encode("utf-8")


def error_response(
    status: int, message: str, rule: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JsonResponse({"error": message, "rule": rule}, status_code=status, headers=headers)


def tracker_error(e: TrackerError) -> ApiError:
    """A refused action (exit 1) is 409 with its rule; bad usage (exit 2) is 400."""
    rule = e.rule if isinstance(e, RuleViolation) else None
    if isinstance(e, NotFound):
        return ApiError(404, str(e))
    if isinstance(e, Unauthenticated):
        return ApiError(401, str(e))
    if isinstance(e, Forbidden):
        return ApiError(403, str(e), rule)
    status = 400 if e.exit_code == 2 else 409
    return ApiError(status, str(e), rule)


# Trackers that record, per process, on PostgreSQL (which takes concurrent writers; on SQLite,
# one writer at a time is all the file allows); and trackers that answer reads.
WRITERS = 4
READERS = 4


class Slot:
    """One tracker, made on first use, and the lock that gives it to one request at a time.

    With `grouped` (the recording tracker on a SQLite file), its commits are made durable in
    groups (see `Datastore.commit_in_groups`): a request records and commits under the lock,
    then leaves the lock to the next one while it waits for the disk, and one flush answers
    for every commit made before it began. No request is answered before every commit it
    could have seen is durable, its own included."""

    def __init__(
        self, make: Callable[[], ServedTracker], tracker: ServedTracker | None = None, grouped: bool = False
    ) -> None:
        self.make = make
        self.grouped = grouped
        self.tracker = tracker
        if tracker is not None and grouped:
            tracker.commit_in_groups()
        self.lock = threading.Lock()

    def run(self, fn: Callable[[ServedTracker], T]) -> T:
        with self.lock:
            if self.tracker is None:
                self.tracker = self.make()
                if self.grouped:
                    self.tracker.commit_in_groups()
            tracker = self.tracker
            if not self.grouped:
                return fn(tracker)
            try:
                result = fn(tracker)
            except BaseException as e:
                # A refusal too is answered only once what it was refused on is durable.
                error: BaseException | None = e
            else:
                error = None
        tracker.durable()
        if error is not None:
            raise error
        return result

    def close(self) -> None:
        with self.lock:
            if self.tracker is not None:
                self.tracker.close()
                self.tracker = None


class Service:
    """The process's trackers, each given to one request at a time. A campaign's requests go
    to the trackers of its stripe (by name), so its actions take turns on one tracker, whose
    working copy stays warm, while actions on other stripes' campaigns run at the same time;
    two writers on one campaign (another process's) are settled by the recorder's version
    check and retry. Reads have trackers of their own, so a page never waits behind an action."""

    def __init__(self, make: Callable[[bool], ServedTracker], writers: int = WRITERS, readers: int = READERS) -> None:
        self.tracker = make(False)
        try:
            reader = make(True)
        except BaseException:
            self.tracker.close()
            raise
        grouped = self.tracker.url.startswith("sqlite")
        if grouped:
            writers = 1
        self.writers = [Slot(lambda: make(False), self.tracker, grouped)] + [
            Slot(lambda: make(False), grouped=grouped) for _ in range(writers - 1)
        ]
        self.readers = [Slot(lambda: make(True), reader)] + [Slot(lambda: make(True)) for _ in range(readers - 1)]

    def _stripe(self, slots: list[Slot], name: str | None) -> Slot:
        if name is None:
            # The campaign a command without --campaign acts on: the only one there is.
            known = self.tracker.registry.names()
            name = known[0][0] if len(known) == 1 else None
        return slots[zlib.crc32((name or "").encode()) % len(slots)]

    async def call(self, fn: Callable[[ServedTracker], T], name: str | None = None, player: Player | None = None) -> T:
        """`fn(tracker)` for a read about campaign `name` by `player` (None: no token), in a
        worker thread, alone on a reading tracker; errors as raised."""
        return await anyio.to_thread.run_sync(self._stripe(self.readers, name).run, as_player(player, fn))

    async def act(self, fn: Callable[[ServedTracker], T], name: str | None = None, player: Player | None = None) -> T:
        """`fn(tracker)` for anything that may record on campaign `name`, alone on its stripe's
        recording tracker."""
        return await anyio.to_thread.run_sync(self._stripe(self.writers, name).run, as_player(player, fn))

    async def run(
        self, fn: Callable[[ServedTracker], T], write: bool = False, name: str | None = None,
        player: Player | None = None,
    ) -> T:  # fmt: skip
        """As `call` (or `act`), with a user's error (TrackerError) turned into its JSON answer."""
        try:
            return await (self.act(fn, name, player) if write else self.call(fn, name, player))
        except TrackerError as e:
            raise tracker_error(e) from None

    def close(self) -> None:
        for slot in [*self.writers, *self.readers]:
            slot.close()

    def check_token(self, token: str) -> Player | None:
        """The player holding `token`, or None (unknown, malformed or revoked)."""
        return self.tracker.players.authenticate(token)

    def last_version(self, name: str) -> int:
        """The campaign's last event version, read straight from the database (no lock: the
        engine is shared safely between threads, and this is all a stream needs)."""
        t = self.tracker
        cid = t.registry.lookup(name)
        if cid is None:
            return 0
        table = t.recorder.table
        with t.engine.connect() as conn:
            value = conn.execute(
                select(func.max(table.c.originator_version)).where(table.c.originator_id == cid)
            ).scalar()
        return int(value or 0)


def as_player(player: Player | None, fn: Callable[[ServedTracker], T]) -> Callable[[ServedTracker], T]:
    """`fn` run with every campaign it reads checked against `player` (see `ServedTracker.acting_as`)."""
    return lambda t: t.acting_as(player, lambda: fn(t))


def _int_param(request: Request, key: str, low: int = 1) -> int | None:
    text = request.query_params.get(key)
    if text is None or text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ApiError(400, f"{key} must be a whole number, got {text[:40]!r}") from None
    if not low <= value <= MAX_INT:
        raise ApiError(400, f"{key} must be between {low} and {MAX_INT}, got {text[:40]}")
    return value


def _str_param(request: Request, key: str) -> str | None:
    value = request.query_params.get(key)
    if value is not None and len(value) > 200:
        raise ApiError(400, f"{key} is too long ({len(value)} characters)")
    return value or None


async def read_json(request: Request, text_only: bool = True) -> dict[str, Any]:
    """The request body as a JSON object, bounded in size and depth, its strings UTF-8 text
    (unless not `text_only`); 400/413 otherwise."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BODY:
            raise TooLarge()
    try:
        return parse_json_object(b"".join(chunks), text_only)
    except BadBody as e:
        raise ApiError(400, str(e)) from None


def campaign_name(request: Request) -> str:
    """The campaign the URL names; 404 for a name no campaign can have."""
    name = request.path_params["name"]
    if len(name) > 200:
        raise ApiError(404, "no such campaign (name over 200 characters)")
    return str(name)


def log_filters(request: Request) -> dict[str, Any]:
    """The filters of `tracker log` from the query."""
    return {
        "turn": _int_param(request, "turn"),
        "battle": _int_param(request, "battle"),
        "tail": _int_param(request, "tail"),
        "phase": _str_param(request, "phase"),
        "nation": _str_param(request, "nation"),
        "zone": _str_param(request, "zone"),
        "kind": _str_param(request, "kind"),
    }


def asked_action(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """What a POSTed action asks (action, inputs, seen, campaign), checked in shape; 400 otherwise."""
    action, inputs, seen = body.get("action"), body.get("inputs", {}), body.get("seen")
    if not isinstance(action, str) or len(action) > 100:
        raise ApiError(400, "action must be the name of an action (GET /api/actions lists them)")
    if not isinstance(inputs, dict):
        raise ApiError(400, "inputs must be an object of named values")
    if seen is not None and (not isinstance(seen, int) or isinstance(seen, bool) or not 1 <= seen <= MAX_INT):
        raise ApiError(400, f"seen must be an event number from 1 to {MAX_INT}")
    return {"action": action, "inputs": inputs, "seen": seen, "campaign": name}


async def health(request: Request) -> Response:
    return JsonResponse({"ok": True})


async def up(request: Request) -> Response:
    """`/health`: the process is up and answers (nothing else is looked at)."""
    return JsonResponse({"status": "ok"})


# How long `/ready` waits for its checks: a database that does not answer by then is not ready.
READY_SECONDS = 5.0


def database_answers(t: ServedTracker) -> bool:
    with t.engine.connect() as conn:
        conn.execute(select(literal(1))).scalar()
    return True


def keys_readable(t: ServedTracker) -> bool:
    """The key store is there and its seeds can be read (a SQLite file deleted under a running
    server is not made again, empty, by the check)."""
    registry = t.registry
    if not isinstance(registry, KeyedRegistry):
        return False
    path = sqlite_file(registry.keys.url.render_as_string(hide_password=False))
    if path is not None and not path.is_file():
        return False
    with registry.keys.connect() as conn:
        conn.execute(select(seeds_table.c.epoch).limit(1)).all()
    return True


def schema_current(t: ServedTracker) -> bool:
    """The log's and the side tables are there, the side tables at this tracker's head revision
    (`tracker db current`), and the read models of this tracker's schema."""
    from projections import schema as views
    from tracker.service.players import players_table, public_table, requests_table
    from tracker.storage.migrations import HEAD, recorded

    tables = [t.recorder.table, campaigns_table, served_table, players_table, requests_table, public_table]
    with t.engine.connect() as conn:
        inspector = inspect(conn)
        if not all(inspector.has_table(table.name, schema=table.schema) for table in [*tables, views.tracking]):
            return False
        found = conn.execute(select(views.tracking.c.schema).where(views.tracking.c.name == views.NAME)).scalar()
        revision = recorded(conn)
    if revision != HEAD:
        log.warning("ready check schema failed: schema not at head (side tables at %s, head %s)", revision, HEAD)
        return False
    return bool(found == views.SCHEMA)


READY_CHECKS: dict[str, Callable[[ServedTracker], bool]] = {
    "database": database_answers,
    "keys": keys_readable,
    "schema": schema_current,
}


def readiness(t: ServedTracker, outcome: dict[str, str]) -> None:
    """Each check's outcome into `outcome` as it ends, "ok" or "failed" (why is logged, not
    answered: it could name a path)."""
    for name, check in READY_CHECKS.items():
        try:
            outcome[name] = "ok" if check(t) else "failed"
        except Exception as e:  # noqa: BLE001 - a check that cannot run has failed
            log.warning("ready check %s failed: %s", name, type(e).__name__)
            outcome[name] = "failed"


def ready_route(service: Service) -> Route:
    # One round of checks at a time: a database that hangs holds one thread, not one a probe
    # (the probes behind it give up with it).
    running = threading.Lock()

    def checked(outcome: dict[str, str]) -> None:
        if running.acquire(timeout=READY_SECONDS):
            try:
                readiness(service.tracker, outcome)
            finally:
                running.release()

    async def ready(request: Request) -> Response:
        """`/ready`: 200 when the database answers, the key store is readable and the schema is
        current; 503 naming the checks that failed or did not end within READY_SECONDS."""
        outcome: dict[str, str] = {}
        with anyio.move_on_after(READY_SECONDS):
            await anyio.to_thread.run_sync(checked, outcome, abandon_on_cancel=True)
        checks = {name: outcome.get(name, "timed out") for name in READY_CHECKS}
        failed = [name for name, said in checks.items() if said != "ok"]
        body: dict[str, Any] = {"status": "unavailable" if failed else "ready", "checks": checks}
        if failed:
            body["failed"] = failed
        return JsonResponse(body, status_code=503 if failed else 200)

    return Route("/ready", ready)


async def action_list(request: Request) -> Response:
    from tracker.service.actions import ACTIONS

    return JsonResponse([ACTIONS[n].describe() for n in sorted(ACTIONS)])


async def openapi_json(request: Request) -> Response:
    """`/api/openapi.json`: the API described (no token needed: it names no campaign)."""
    from tracker.server.openapi import openapi_document

    return JsonResponse(openapi_document())


class Api:
    """The handlers of the routes under /api, each answering from the process's `Service`."""

    def __init__(self, service: Service, gate: Gate) -> None:
        self.service = service
        self.gate = gate

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/health", health),
            Route("/openapi.json", openapi_json),
            Route("/campaigns", self.campaigns),
            Route("/campaigns/{name:campaign}/state", self.state),
            Route("/campaigns/{name:campaign}/pending", self.pending),
            Route("/campaigns/{name:campaign}/log", self.log),
            Route("/campaigns/{name:campaign}/explain/{seq:int}", self.explain),
            Route("/campaigns/{name:campaign}/report", self.report),
            Route("/campaigns/{name:campaign}/verify", self.verify),
            Route("/campaigns/{name:campaign}/events/stream", self.stream),
            Route("/campaigns/{name:campaign}/overrides", self.overrides),
            Route("/actions", action_list),
            Route("/campaigns/{name:campaign}/actions", self.act, methods=["POST"]),
            Route("/campaigns/{name:campaign}/overrides/{number:int}/approve", self.approve, methods=["POST"]),
            Route("/command", self.command, methods=["POST"]),
        ]

    # ----- reads -----

    async def campaigns(self, request: Request) -> Response:
        player = await self.reader(request)
        return JsonResponse(await self.service.run(lambda t: t.campaign_names(), player=player))

    async def state(self, request: Request) -> Response:
        name = campaign_name(request)
        turn, at = _int_param(request, "turn"), _int_param(request, "at")
        phase = _str_param(request, "phase")
        if phase and not turn:
            raise ApiError(400, "phase needs turn")
        if turn and at:
            raise ApiError(400, "give turn or at, not both")
        player = await self.reader(request)
        return JsonResponse(
            await self.service.run(lambda t: t.state_data(name, turn, phase, at), name=name, player=player)
        )

    async def pending(self, request: Request) -> Response:
        name = campaign_name(request)
        player = await self.reader(request)
        return JsonResponse(await self.service.run(lambda t: t.pending_data(name), name=name, player=player))

    async def log(self, request: Request) -> Response:
        name = campaign_name(request)
        filters = log_filters(request)
        player = await self.reader(request)
        return JsonResponse(await self.service.run(lambda t: t.log_data(name, **filters), name=name, player=player))

    async def explain(self, request: Request) -> Response:
        name = campaign_name(request)
        seq = request.path_params["seq"]
        if not 1 <= seq <= MAX_INT:
            raise ApiError(400, f"event number must be between 1 and {MAX_INT}")
        player = await self.reader(request)
        return JsonResponse(await self.service.run(lambda t: t.explain_data(name, seq), name=name, player=player))

    async def report(self, request: Request) -> Response:
        name = campaign_name(request)
        turn = _int_param(request, "turn")
        player = await self.reader(request)
        return JsonResponse(await self.service.run(lambda t: t.report_data(name, turn), name=name, player=player))

    async def verify(self, request: Request) -> Response:
        name = campaign_name(request)
        head = _str_param(request, "head")
        player = await self.reader(request)
        return JsonResponse(await self.service.run(lambda t: t.verify_data(name, head), name=name, player=player))

    async def overrides(self, request: Request) -> Response:
        name = campaign_name(request)
        player = await self.reader(request)
        return JsonResponse(
            await self.service.run(
                lambda t: t.players.override_requests(str(t.campaign_id(name))), name=name, player=player
            )
        )

    async def stream(self, request: Request) -> Response:
        name = campaign_name(request)
        player = await self.reader(request)
        # Unknown (or unreadable) campaigns are refused up front, not streamed forever.
        await self.service.run(lambda t: t.campaign_id(name), name=name, player=player)
        service, recorder = self.service, self.service.tracker.recorder
        # One watcher per process: N pages on a campaign cost one read per interval, not N.
        watcher = watcher_for(
            service, lambda: Watcher(service.last_version, channel_of(service.tracker.url, recorder.channel_name))
        )
        return StreamingResponse(
            event_stream(request, watcher, name),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    # ----- what records -----

    async def act(self, request: Request) -> Response:
        player = await self.authenticate(request)
        name = campaign_name(request)
        asked = asked_action(name, await read_json(request))
        try:
            key = request_key(request)
        except TrackerError as e:
            raise tracker_error(e) from None

        def perform(t: ServedTracker) -> dict[str, Any]:
            # A repeat of the key is answered the first answer (stored with its events).
            run = lambda: perform_action(t, player, name, asked)  # noqa: E731
            return once(t, player, key, run, action_answer, name)

        return JsonResponse(await self.service.run(perform, write=True, name=name, player=player))

    async def approve(self, request: Request) -> Response:
        player = await self.authenticate(request)
        name = campaign_name(request)
        number = request.path_params["number"]
        if player is None:
            raise ApiError(401, "approving an override needs a player's token: Authorization: Bearer TOKEN")
        result = await self.service.run(
            lambda t: approve_override(t, player, name, number), write=True, name=name, player=player
        )
        return command_response(result)

    async def command(self, request: Request) -> Response:
        player = await self.authenticate(request)
        # Arguments that are not UTF-8 text are named by check_args, as the local CLI names them.
        body = await read_json(request, text_only=False)
        name = body.get("campaign")
        if name is not None and (not isinstance(name, str) or len(name) > 200 or not is_text(name)):
            raise ApiError(400, "campaign must be a name (UTF-8 text)")
        note(request.scope, campaign=name)
        try:
            terminal, checked, key = check_terminal(body), check_args(body.get("args")), request_key(request)
        except TrackerError as e:
            raise tracker_error(e) from None
        if checked[0] in ("approve", "overrides"):
            result = await self.service.act(
                lambda t: override_command(t, player, name, checked, terminal), name, player
            )
        else:

            def command(t: ServedTracker) -> dict[str, Any]:
                # With a key, a repeat is answered the first command's output and records nothing.
                run = lambda: run_command(t, player, name, checked, terminal["columns"], terminal=terminal)  # noqa: E731
                return once(t, player, key, run)

            result = await self.service.act(command, name, player)
        return command_response(result)

    async def authenticate(self, request: Request) -> Player | None:
        """The player whose token the request's Authorization header carries (never a cookie:
        whatever records is asked with the header); None without one; 401 for a bad one, 429
        while its address has failed too often."""
        return await self._player(request, cookie=False)

    async def reader(self, request: Request) -> Player | None:
        """Who reads: the Authorization header's token, else the viewer's cookie (the page's
        event stream sends it); None for neither."""
        return await self._player(request, cookie=True)

    async def _player(self, request: Request, cookie: bool) -> Player | None:
        try:
            return await self.gate.player(request, cookie=cookie)
        except Denied as e:
            raise ApiError(e.status, e.message, headers=e.headers) from None


def api_routes(service: Service, gate: Gate) -> list[BaseRoute]:
    """Every route under /api."""
    return Api(service, gate).routes()


def command_response(result: dict[str, Any]) -> Response:
    """A command's outcome: 200 done, 400 bad usage, 409 refused; 401/403 for want of a token
    or a right, 409 for an override waiting for approval (each with its error and rule)."""
    refused = result.pop("refused", None)
    body = dict(result)
    if isinstance(refused, NotFound):
        # A campaign the command named that does not exist, or that the token may not read.
        status = 404 if result["exit"] != 0 else 200
        if status == 404:
            body.update(error=str(refused), rule=None)
    elif refused is not None:
        status = 401 if isinstance(refused, Unauthenticated) else 403 if isinstance(refused, Forbidden) else 409
        body.update(error=str(refused), rule=getattr(refused, "rule", None))
    else:
        status = {0: 200, 2: 400}.get(result["exit"], 409)
        if status != 200:
            message = (result["stderr"] or "").strip().splitlines()
            body.update(error=message[-1].removeprefix("Error: ") if message else "refused", rule=None)
    return JsonResponse(body, status_code=status)


def perform_action(
    t: ServedTracker, player: Player | None, name: str, asked: dict[str, Any],
    approved: tuple[str, ...] = (), approving: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run one registered action as `player`: what it recorded and what the game waits for."""
    if player is None:
        # Said before the campaign is looked up: the same answer for every name.
        raise Unauthenticated("an action needs a player's token: Authorization: Bearer TOKEN (see tracker players add)")
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
    """The answer to a POSTed action: what it recorded and what the game waits for."""
    from projections.summary import as_record
    from tracker.cli.common import next_command

    return {
        "action": done.action,
        "asked": done.asked,
        "events": [as_record(e.originator_version, e) for e in done.events],
        "pending": [{**item, "command": next_command(item)} for item in done.campaign.pending()],
    }


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
                + (f"approved by {r['approved_by']}" if r["approved_by"] else "waiting")
                for r in rows
            ]
            text = "".join(line + "\n" for line in lines) or "No override requests.\n"
            return {"exit": 0, "stdout": text, "stderr": ""}
        as_json = "--json" in args[1:]
        numbers = [a for a in args[1:] if a != "--json"]
        if len(numbers) != 1 or not numbers[0].isdigit() or not 1 <= int(numbers[0]) <= 2**31 - 1:
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
    request = t.players.override_request(cid, number)
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
        raise InputError(f"override request {number} was approved already")
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


async def event_stream(request: Request, watcher: Watcher, name: str) -> AsyncIterator[str]:
    """Server-sent events: `recorded` with the campaign's last version, first at once and then
    whenever it changes (as the process's `watcher` learns it, so a write through any process
    is seen), and a comment line when the stream has been quiet for KEEPALIVE_SECONDS."""
    seen = -1
    async with watcher.follow(name) as watch:
        while not await request.is_disconnected():
            version = await watch.next_version(seen, KEEPALIVE_SECONDS)
            if version is None:
                yield ": keep-alive\n\n"
            else:
                seen = version
                yield f"event: recorded\ndata: {json.dumps({'version': version})}\n\n"


def viewer_routes(service: Service, gate: Gate) -> list[BaseRoute]:
    """The browser viewer's pages, mounted at /: `tracker.server.viewer.routes(service)` gives
    them, where present. A page reads through `await service.call(lambda t: ...)` (the
    process's `ServedTracker`, one request at a time) and follows the campaign's
    `/api/campaigns/{name:campaign}/events/stream` to update when something is recorded."""
    if importlib.util.find_spec("tracker.server.viewer") is None:
        return []
    from tracker.server import viewer  # type: ignore[attr-defined,unused-ignore]

    routes: list[BaseRoute] = viewer.routes(service, gate)
    return routes


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, exc.rule, exc.headers)


async def _too_large(request: Request, exc: Exception) -> Response:
    if request.url.path.startswith("/api"):
        return error_response(413, str(exc))
    return Response(str(exc), status_code=413, media_type="text/plain")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if request.url.path.startswith("/api"):
        # With its headers: a 405's Allow names the methods the route takes.
        return error_response(exc.status_code, str(exc.detail), headers=dict(exc.headers or {}))
    return Response(str(exc.detail), status_code=exc.status_code, media_type="text/plain")


async def _unexpected(request: Request, exc: Exception) -> Response:
    # Never a traceback to a client; the server's own log names the kind of failure.
    return error_response(500, f"unexpected {type(exc).__name__} (see the server's log)")


class NotingGate(Gate):
    """The gate, noting on the request's log line whose token it let through."""

    async def verify(self, request: Request, token: str) -> Player:
        player = await super().verify(request, token)
        note(request.scope, player=player.name)
        return player


def create_app(
    db_url: str | None, keys: str | None = None, reveal: str = "on-request", failures: FailedChecks | None = None
) -> Starlette:
    """The application over the campaigns in `db_url`; auto dice seeds in the key store `keys`
    (a file path or database URL, see `tracker.server.keys`); failed token checks counted in
    `failures` (default: 20 a minute per address). `tracker.server.create_app()` makes one
    configured from the environment, as `tracker serve` is from its options."""
    service = Service(lambda reads_only: ServedTracker(db_url, keys=keys, reveal=reveal, reads_only=reads_only))
    gate = NotingGate(service.check_token, failures)
    routes: list[BaseRoute] = [Mount("/api", routes=api_routes(service, gate))]
    # Before the viewer's pages, whose last route answers every other path.
    routes += [Route("/health", up), ready_route(service)]
    routes += viewer_routes(service, gate)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # `tracker serve` sets app.state.delivery: its worker sends the turn hand-offs.
        async with delivering(service.tracker.engine, getattr(app.state, "delivery", None)):
            yield
        service.close()

    app = Starlette(
        routes=routes,
        exception_handlers={
            ApiError: _api_error,
            TooLarge: _too_large,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
        middleware=[Middleware(RequestLog), Middleware(BodyLimit), Middleware(EncodedSlashes)],
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.gate = gate
    return app
