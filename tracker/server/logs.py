"""The league server's log: one line per request (method, route template, status, duration,
campaign, player) and per delivery attempt, on stderr, as text or as JSON lines.

What a line may hold is chosen here: the route's template rather than the path a client sent,
and the query string only with every token hidden, so a viewer link (`/?token=...`), an
Authorization header, a webhook URL, an e-mail password or a dice seed never reaches the log.
Every message passes `hide_secrets` on the way out as well, in case one is quoted by an error;
it hides anything shaped as a seed, whatever its source.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
import time
from collections.abc import MutableMapping
from datetime import UTC, datetime
from typing import Any

from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tracker.server.access import hide_tokens

LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("text", "json")
# Where the request line's campaign and player are noted by the handlers (see `note`).
NOTE = "tracker.log"
requests = logging.getLogger("tracker.requests")

# The password of a URL (`scheme://user:password@host`), and a convertor in a route template.
_URL_PASSWORD = re.compile(r"(?<=://)([^:/@\s]*):[^@/\s]+@")
# Anything shaped as a dice seed (32 bytes in hex, D5), alone or inside a longer run of hex
# digits: a client may send one in a path (a seed pasted, a fuzzer's string), and the log
# cannot tell a secret seed from any other hex, so it keeps none.
_SEED_SHAPED = re.compile(r"[0-9a-fA-F]{64,}")
_CONVERTOR = re.compile(r"\{(\w+):\w+\}")
# A text line's value printed as it is; any other is quoted (JSON string syntax).
_BARE = re.compile(r"[\w./{}:@+-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Routes that monitoring asks often: their answers "up" and "ready" are logged at debug level.
PROBES = ("/health", "/ready", "/api/health")


def hide_secrets(text: str) -> str:
    """`text` with tokens (and `token=` values), URL passwords and anything shaped as a dice
    seed replaced by [hidden]."""
    return _SEED_SHAPED.sub("[hidden]", _URL_PASSWORD.sub(r"\1:[hidden]@", hide_tokens(text)))


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    return dict(fields) if isinstance(fields, dict) else {}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, and the record's
    `fields` (a request's method, route, status, ...); an exception as its text."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": hide_secrets(record.getMessage().rstrip()),
        }
        for key, value in _fields(record).items():
            line[key] = hide_secrets(value) if isinstance(value, str) else value
        if record.exc_info:
            line["error"] = hide_secrets(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """A line for people: time, level, message, then the record's fields as key=value (values
    that could hold spaces or line breaks quoted, so one record is always one line)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        # rstrip: uvicorn's messages may end in a line break, which would print as "\n".
        parts = [stamp, record.levelname, hide_secrets(record.getMessage().rstrip())]
        for key, value in _fields(record).items():
            if value is None or (record.name == requests.name and key in ("method", "path", "status", "ms")):
                continue  # a request's method, path, status and duration are its message
            text = hide_secrets(str(value))
            parts.append(f"{key}={text if _BARE.fullmatch(text) else json.dumps(text, ensure_ascii=False)}")
        # A path or a campaign's name may hold a line break or a terminal's escape sequence:
        # one record stays one line, and prints as written.
        line = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), " ".join(parts))
        if record.exc_info:
            line += "\n" + hide_secrets(self.formatException(record.exc_info))
        return line


def formatter(fmt: str) -> logging.Formatter:
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return JsonFormatter() if fmt == "json" else TextFormatter()


def configure(level: str = "info", fmt: str = "text") -> None:
    """Send the tracker's and the ASGI server's logs to stderr in `fmt`, from `level` up.

    uvicorn's own access log is switched off: it prints the path as sent, query and all, and
    the request line of `RequestLog` says everything it did. Called again (each worker process
    of `uvicorn --factory` calls it), it replaces what it set before."""
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, got {level!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt))
    handler.addFilter(LoggedOnce())
    for name in ("tracker", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [handler] if name != "uvicorn.error" else []
        logger.setLevel(level.upper())
        # uvicorn.error reaches the handler through its parent "uvicorn" only.
        logger.propagate = name == "uvicorn.error"
    # Under gunicorn's uvicorn workers too, the access lines are uvicorn's.
    access = logging.getLogger("uvicorn.access")
    access.handlers = []
    access.propagate = False
    access.disabled = True


# Set on an exception whose traceback a request line carries (see `RequestLog`).
_LOGGED = "_tracker_logged"


class LoggedOnce(logging.Filter):
    """Drops a record whose exception a request line printed already: uvicorn logs each failure
    again ("Exception in ASGI application"), on a line that names no request."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return record.name == requests.name or not getattr(error, _LOGGED, False)


def route_template(scope: Scope) -> str | None:
    """The template of the route that answered (`/api/campaigns/{name}/state`), with its
    mounts' prefixes; None when no route matched (a 404 for an unknown path)."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if not isinstance(path, str) or isinstance(route, Mount):
        # A mount none of whose routes matched (`/api/nothing`): its prefix is in root_path
        # already, and the line read `route=/api/api`.
        return None
    # A Mount adds what it matched to root_path; the application's own root_path comes first.
    mounted = str(scope.get("root_path", ""))[len(str(scope.get("app_root_path", ""))) :]
    return _CONVERTOR.sub(r"{\1}", mounted + path) or "/"


def note(scope: Scope, **fields: Any) -> None:
    """Add fields (campaign, player) to the request line of the request `scope` belongs to."""
    noted = scope.get(NOTE)
    if isinstance(noted, dict):
        noted.update({k: v for k, v in fields.items() if v is not None})


# The most characters of a path (with its query) and of a campaign's name a request line shows:
# a line per request stays a line, whatever a client sends.
SHOWN = 300


def bounded(text: str, most: int = SHOWN) -> str:
    return text if len(text) <= most else text[:most] + "..."


def shown_path(scope: Scope) -> str:
    """The path as asked, with its query string's tokens hidden, at most SHOWN characters (cut
    after hiding: a secret cut in half would no longer be recognised)."""
    path = str(scope.get("path", ""))
    query = scope.get("query_string", b"")
    if query:
        path += "?" + query.decode("latin-1")
    return bounded(hide_secrets(path))


def _shown_name(name: Any) -> str | None:
    # A name in a path that no campaign can have (over 200 characters) is refused; its line
    # still shows what was asked, bounded.
    return None if name is None else bounded(hide_secrets(str(name)), 200)


class RequestLog:
    """ASGI middleware: one line on `tracker.requests` per HTTP request, when its response ends
    (an event stream: when it closes), with the fields handlers `note`d (campaign, player, an
    action's or command's name, the rule that refused it, a command's exit status). Set
    outermost, so a 413 answered before routing and a 500 are logged too, a 500 with its
    traceback under the line of the request that failed; it must see the scope the router
    fills in (the route), so nothing between it and the router copies the scope."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        noted: MutableMapping[str, Any] = {}
        scope[NOTE] = noted
        status = 500

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        failure: Exception | None = None
        try:
            await self.app(scope, receive, sent)
        except Exception as e:
            failure = e
            raise
        finally:
            ms = round((time.perf_counter() - started) * 1000, 1)
            client = scope.get("client")
            path_params = scope.get("path_params") or {}
            fields = {
                "method": scope.get("method"),
                "route": route_template(scope),
                "path": shown_path(scope),
                "status": status,
                "ms": ms,
                "campaign": _shown_name(noted.get("campaign", path_params.get("name"))),
                "player": noted.get("player"),
                # What a handler noted of an action or a command line: its name (never its
                # inputs, which may hold a webhook URL), the rule that refused it, and a
                # command's exit status (a refused command line is answered 200).
                "action": noted.get("action"),
                "rule": noted.get("rule"),
                "exit": noted.get("exit"),
                # Why a 503 was answered: the database's error, in a line (see `outage`).
                "reason": noted.get("reason"),
                "client": client[0] if client else None,
            }
            level = logging.ERROR if status >= 500 else logging.INFO
            if fields["route"] in PROBES and status == 200:
                # A load balancer asks every few seconds: its answers would drown the log.
                level = logging.DEBUG
            if failure is not None:
                with contextlib.suppress(AttributeError):
                    setattr(failure, _LOGGED, True)
            requests.log(
                level, "%s %s %s %.1f ms", fields["method"], fields["path"], status, ms, extra={"fields": fields},
                exc_info=failure,
            )  # fmt: skip
