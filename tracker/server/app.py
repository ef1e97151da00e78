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
import functools
import importlib.util
import json
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route

from domain.errors import TrackerError
from tracker.server import queries
from tracker.server.access import Denied, FailedChecks, Gate
from tracker.server.commands import COMMAND_FIELDS, check_args, check_terminal, refused_without_token, run_command
from tracker.server.delivery import delivering
from tracker.server.keyed import once, request_key
from tracker.server.limits import BodyLimit, TooLarge, answers_json, is_text
from tracker.server.logs import RequestLog, note
from tracker.server.noted import command_answer, command_name
from tracker.server.params import (
    MAX_INT,
    asked_action,
    campaign_name,
    given_once,
    int_param,
    log_filters,
    path_number,
    phase_param,
    read_json,
    shorten,
    str_param,
    unknown_fields,
)
from tracker.server.paths import CampaignName, EncodedSlashes, routing_path
from tracker.server.ready import READY_CHECKS, database_answers, keys_readable, readiness, schema_current
from tracker.server.recording import (
    action_answer,
    approve_override,
    command_response,
    override_command,
    perform_action,
    reached_at,
    reaching,
)
from tracker.server.responses import (
    OUTAGE,
    RETRY_SECONDS,
    ApiError,
    JsonResponse,
    error_response,
    outage,
    outage_errors,
    tracker_error,
)
from tracker.server.served import ServedTracker
from tracker.server.slots import READERS, WRITERS, Service, Slot, as_player
from tracker.server.watch import Watcher, channel_of, watcher_for, watching
from tracker.service.players import Player

T = TypeVar("T")

__all__ = [
    "KEEPALIVE_SECONDS",
    "MAX_INT",
    "READERS",
    "READY_CHECKS",
    "READY_SECONDS",
    "WRITERS",
    "Api",
    "ApiError",
    "CampaignName",
    "EncodedSlashes",
    "JsonResponse",
    "NotingGate",
    "Service",
    "Slot",
    "action_answer",
    "action_list",
    "api_routes",
    "approve_override",
    "as_player",
    "asked_action",
    "campaign_name",
    "close_streams",
    "command_response",
    "create_app",
    "database_answers",
    "error_response",
    "event_stream",
    "keys_readable",
    "log_filters",
    "openapi_json",
    "override_command",
    "perform_action",
    "read_json",
    "readiness",
    "ready_route",
    "routing_path",
    "schema_current",
    "tracker_error",
    "up",
    "viewer_routes",
]

# A comment line this often keeps proxies from closing a quiet stream.
KEEPALIVE_SECONDS = 15.0


async def up(request: Request) -> Response:
    """`/health` and `/api/health`: the process is up and answers (nothing else is looked at).
    "status" as `/ready` words it, and "ok", which `/api/health` answered alone before and a
    probe written for it may still read."""
    return JsonResponse({"status": "ok", "ok": True})


# How long `/ready` waits for its checks: a database that does not answer by then is not ready.
READY_SECONDS = 5.0


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
        """`/ready`: 200 when the database answers and may be written, the key store is readable
        and the schema is current; 503 naming the checks that failed or did not end within
        READY_SECONDS."""
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


def known_query(request: Request) -> None:
    """400 for a query parameter the route's OpenAPI entry does not list: `?trun=2` was ignored
    without a word, and the answer read as the board now instead of at turn 2."""
    route = request.scope.get("route")
    if route is None or not request.query_params:
        return
    path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
    takes = _query_names().get(path, ())
    unknown = sorted(k for k in request.query_params if k not in takes)
    if unknown:
        listed = f"it takes {', '.join(takes)}" if takes else "it takes none"
        raise ApiError(400, f"unknown query parameter {unknown[0][:40]!r} ({listed})")
    given_once(request)


@functools.cache
def _query_names() -> dict[str, tuple[str, ...]]:
    """Each route's query parameters, by its path as the OpenAPI document writes it."""
    from tracker.server.openapi import openapi_document

    names: dict[str, tuple[str, ...]] = {}
    for path, methods in openapi_document()["paths"].items():
        get = methods.get("get") or {}
        names[path] = tuple(p["name"] for p in get.get("parameters", ()) if p.get("in") == "query")
    return names


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
            Route("/health", up),
            Route("/openapi.json", openapi_json),
            Route("/campaigns", self.campaigns),
            Route("/campaigns/{name:campaign}/state", self.state),
            Route("/campaigns/{name:campaign}/pending", self.pending),
            Route("/campaigns/{name:campaign}/log", self.log),
            Route("/campaigns/{name:campaign}/explain/{seq}", self.explain),
            Route("/campaigns/{name:campaign}/report", self.report),
            Route("/campaigns/{name:campaign}/verify", self.verify),
            Route("/campaigns/{name:campaign}/events/stream", self.stream),
            Route("/campaigns/{name:campaign}/overrides", self.overrides),
            Route("/actions", action_list),
            Route("/campaigns/{name:campaign}/actions", self.act, methods=["POST"]),
            Route("/campaigns/{name:campaign}/overrides/{number}/approve", self.approve, methods=["POST"]),
            Route("/command", self.command, methods=["POST"]),
        ]

    # ----- reads -----

    async def campaigns(self, request: Request) -> Response:
        player = await self.reader(request)
        return JsonResponse(await self.service.run(lambda t: t.campaign_names(), player=player))

    async def state(self, request: Request) -> Response:
        name = campaign_name(request)
        turn, at = int_param(request, "turn"), int_param(request, "at")
        phase = phase_param(request)
        if phase and not turn:
            raise ApiError(400, "phase needs turn")
        if turn and at:
            raise ApiError(400, "give turn or at, not both")
        player = await self.reader(request)
        return JsonResponse(
            await self.service.run(lambda t: queries.state_data(t, name, turn, phase, at), name=name, player=player)
        )

    async def pending(self, request: Request) -> Response:
        name = campaign_name(request)
        player = await self.reader(request)
        return JsonResponse(await self.service.run(lambda t: queries.pending_data(t, name), name=name, player=player))

    async def log(self, request: Request) -> Response:
        name = campaign_name(request)
        filters = log_filters(request)
        player = await self.reader(request)
        return JsonResponse(
            await self.service.run(lambda t: queries.log_data(t, name, **filters), name=name, player=player)
        )

    async def explain(self, request: Request) -> Response:
        name = campaign_name(request)
        seq = path_number(request, "seq", "event number")
        player = await self.reader(request)
        return JsonResponse(
            await self.service.run(lambda t: queries.explain_data(t, name, seq), name=name, player=player)
        )

    async def report(self, request: Request) -> Response:
        name = campaign_name(request)
        turn = int_param(request, "turn")
        player = await self.reader(request)
        return JsonResponse(
            await self.service.run(lambda t: queries.report_data(t, name, turn), name=name, player=player)
        )

    async def verify(self, request: Request) -> Response:
        name = campaign_name(request)
        head = str_param(request, "head")
        player = await self.reader(request)
        return JsonResponse(
            await self.service.run(lambda t: queries.verify_data(t, name, head), name=name, player=player)
        )

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

        async def still_reads() -> bool:
            # A token revoked, or a campaign made private, ends the stream at its next event:
            # revoking ends a token at once (PL1), streams too.
            try:
                again = await self.reader(request)
                await self.service.run(lambda t: t.campaign_id(name), name=name, player=again)
            except ApiError:
                return False
            return True

        return StreamingResponse(
            event_stream(request, watcher, name, still_reads),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    # ----- what records -----

    async def act(self, request: Request) -> Response:
        token = self._token(request)
        name = campaign_name(request)
        asked = asked_action(name, await read_json(request))
        note(request.scope, action=asked["action"])
        try:
            key = request_key(request)
        except TrackerError as e:
            raise tracker_error(e) from None

        def perform(t: ServedTracker, player: Player | None) -> dict[str, Any]:
            # A repeat of the key is answered the first answer (stored with its events); the
            # key with another action or inputs is refused.
            act = lambda: perform_action(t, player, name, asked)  # noqa: E731
            return once(t, player, key, act, action_answer, name, {"route": "actions", **asked})

        return JsonResponse(await self._recorded_as(request, token, name, perform))

    async def _recorded_as(
        self, request: Request, token: str | None, name: str | None,
        fn: Callable[[ServedTracker, Player | None], T],
    ) -> T:  # fmt: skip
        """`fn(tracker, player)` on campaign `name`'s recording tracker, for the player holding
        the request's `token` (None: no token), checked in the worker thread that then runs
        `fn`: one hop to a thread, not two. 401 for an unknown token and 429 while its address
        waits, as `authenticate`; a user's error as its JSON answer."""
        # The server as this client reached it, for the commands a refusal names (RK3).
        server = reached_at(request)

        def run(player: Player | None) -> T:
            return self.service.act_now(lambda t: reaching(t, server, fn, player), name, player)

        try:
            if token is None:
                return await anyio.to_thread.run_sync(run, None)
            return await self.gate.run_as(request, token, run)
        except Denied as e:
            raise ApiError(e.status, e.message, headers=e.headers) from None
        except TrackerError as e:
            raise tracker_error(e) from None

    async def approve(self, request: Request) -> Response:
        player = await self.authenticate(request)
        name = campaign_name(request)
        number = path_number(request, "number", "override request number")
        if player is None:
            raise ApiError(401, "approving an override needs a player's token: Authorization: Bearer TOKEN")
        # The request names all it approves: a body may be left out, or be an empty JSON
        # object, and anything else is refused as every route refuses what it does not take.
        unknown_fields(await read_json(request), ())
        result = await self.service.run(
            lambda t: approve_override(t, player, name, number), write=True, name=name, player=player
        )
        return command_answer(request.scope, ["approve"], result)

    async def command(self, request: Request) -> Response:
        token = self._token(request)
        # Arguments that are not UTF-8 text are named by check_args, as the local CLI names them.
        body = await read_json(request, text_only=False)
        unknown_fields(body, COMMAND_FIELDS)
        name = body.get("campaign")
        if name is not None and (not isinstance(name, str) or len(name) > 200 or not is_text(name)):
            raise ApiError(400, "campaign must be a name (UTF-8 text)")
        note(request.scope, campaign=name)
        try:
            terminal, checked, key = check_terminal(body), check_args(body.get("args")), request_key(request)
        except TrackerError as e:
            raise tracker_error(e) from None
        # Its name only: an argument may be a webhook URL or a password.
        note(request.scope, action=command_name(checked))
        refusal = refused_without_token(checked) if token is None else None
        if refusal is not None:
            return command_answer(request.scope, checked, refusal)
        if checked[0] in ("approve", "overrides"):
            result = await self._recorded_as(
                request, token, name, lambda t, player: override_command(t, player, name, checked, terminal)
            )
        else:

            def command(t: ServedTracker, player: Player | None) -> dict[str, Any]:
                # With a key, a repeat is answered the first command's output and records nothing;
                # the key with another command line is refused (the terminal is not the request).
                run = lambda: run_command(t, player, name, checked, terminal["columns"], terminal=terminal)  # noqa: E731
                return once(t, player, key, run, asked={"route": "command", "args": checked, "campaign": name})

            result = await self._recorded_as(request, token, name, command)
        return command_answer(request.scope, checked, result)

    async def authenticate(self, request: Request) -> Player | None:
        """The player whose token the request's Authorization header carries (never a cookie:
        whatever records is asked with the header); None without one; 401 for a bad one, 429
        while its address has failed too often."""
        return await self._player(request, cookie=False)

    async def reader(self, request: Request) -> Player | None:
        """Who reads: the Authorization header's token, else the viewer's cookie (the page's
        event stream sends it); None for neither. A query parameter the route does not take
        is refused first."""
        known_query(request)
        return await self._player(request, cookie=True)

    def _token(self, request: Request) -> str | None:
        """The Authorization header's token, unchecked (never a cookie: whatever records is asked
        with the header); None without one; 401 for a header of another kind."""
        try:
            return self.gate.token(request, cookie=False)
        except Denied as e:
            raise ApiError(e.status, e.message, headers=e.headers) from None

    async def _player(self, request: Request, cookie: bool) -> Player | None:
        try:
            return await self.gate.player(request, cookie=cookie)
        except Denied as e:
            raise ApiError(e.status, e.message, headers=e.headers) from None


def api_routes(service: Service, gate: Gate) -> list[BaseRoute]:
    """Every route under /api."""
    return Api(service, gate).routes()


async def event_stream(
    request: Request, watcher: Watcher, name: str, still_reads: Callable[[], Awaitable[bool]]
) -> AsyncIterator[str]:
    """Server-sent events: `recorded` with the campaign's last version, first at once and then
    whenever it changes (as the process's `watcher` learns it, so a write through any process
    is seen), and a comment line when the stream has been quiet for KEEPALIVE_SECONDS. The
    stream ends when a new version comes and `still_reads()` says its reader may no longer read."""
    seen = -1
    async with watcher.follow(name) as watch:
        while not watcher.closed and not await request.is_disconnected():
            version = await watch.next_version(seen, KEEPALIVE_SECONDS)
            if watcher.closed:
                return  # the server is shutting down (`close_streams`); the page connects again
            if version is None:
                yield ": keep-alive\n\n"
            elif seen >= 0 and not await still_reads():
                return
            else:
                seen = version
                yield f"event: recorded\ndata: {json.dumps({'version': version})}\n\n"


def close_streams(app: Starlette) -> None:
    """End the application's open event streams (run in its event loop): the server shuts
    down, and waits for every response to end first."""
    watcher = watching(app.state.service)
    if watcher is not None:
        watcher.close()


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


def _page_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """An error on a viewer page's address: the viewer's error page (the message and the way
    back), where a browser showed the API's JSON or a bare line of text."""
    from tracker.server.viewer import error_page

    response = error_page(status, message)
    response.headers.update(headers or {})
    return response


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    # A 409's or 403's line says which rule refused it.
    note(request.scope, rule=exc.rule)
    if not answers_json(request.url.path):
        return _page_error(exc.status, exc.message, exc.headers)
    return error_response(exc.status, exc.message, exc.rule, exc.headers)


async def _too_large(request: Request, exc: Exception) -> Response:
    if answers_json(request.url.path):
        return error_response(413, str(exc))
    return _page_error(413, str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = str(exc.detail)
    api = answers_json(request.url.path)
    if exc.status_code == 404 and message == "Not Found":
        where = shorten(request.url.path)
        message = f"no API route at {where} (see /api/openapi.json)" if api else f"no page at {where}"
    elif exc.status_code == 405 and exc.headers and "Allow" in exc.headers:
        # "Method Not Allowed" named neither the method nor what the route takes.
        message = f"{shorten(request.url.path)} takes {exc.headers['Allow']}, not {shorten(request.method)}"
    # With its headers: a 405's Allow names the methods the route takes.
    if api:
        return error_response(exc.status_code, message, headers=dict(exc.headers or {}))
    return _page_error(exc.status_code, message, dict(exc.headers or {}))


async def _database_down(request: Request, exc: Exception) -> Response:
    """503 while the database does not answer (PostgreSQL stopped, a file that cannot be
    opened): its reason on the request's line, not a traceback per request, and the next request
    tries the database again."""
    if isinstance(exc, TrackerError):  # a full disk (DatabaseFull) that no route answered
        return await _api_error(request, tracker_error(exc))
    reason = outage(exc)
    if reason is None:
        raise exc  # the schema's or the code's fault: a 500, with its traceback
    note(request.scope, reason=reason)
    return await _api_error(request, ApiError(503, OUTAGE, headers={"Retry-After": str(RETRY_SECONDS)}))


async def _unexpected(request: Request, exc: Exception) -> Response:
    # Never a traceback to a client; the server's own log names the kind of failure.
    message = f"unexpected {type(exc).__name__} (see the server's log)"
    return error_response(500, message) if answers_json(request.url.path) else _page_error(500, message)


class NotingGate(Gate):
    """The gate, noting on the request's log line whose token it let through."""

    def let_through(self, request: Request, player: Player) -> None:
        note(request.scope, player=player.name)


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
            **dict.fromkeys(outage_errors(), _database_down),
            Exception: _unexpected,
        },
        middleware=[Middleware(RequestLog), Middleware(BodyLimit), Middleware(EncodedSlashes)],
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.gate = gate
    return app
