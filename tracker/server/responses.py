"""How the API answers: JSON as `--json` prints it, and errors as {error, rule} with the HTTP
status a tracker error maps to."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sqlite3
from typing import Any

import sqlalchemy.exc
from eventsourcing.persistence import OperationalError
from starlette.responses import JSONResponse

from domain.errors import RuleViolation, TrackerError
from tracker.cli.params import shorten_echoes
from tracker.server.served import READ_ONLY, NotFound
from tracker.service.idempotency import KeyReused
from tracker.service.players import Forbidden, Unauthenticated
from tracker.storage.datastore import DatabaseFull

log = logging.getLogger("tracker.server")


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


# A refusal's message opens with the rule it cites, as the CLI prints it: "D1: die value ...".
CITED_RULE = re.compile(r"([A-Z]{1,3}\d{1,2}): ")


def cited_rule(message: str) -> str | None:
    """The rule a refusal's message opens with, or None. Errors raised as no RuleViolation (dice
    entered wrong, D1 and D3) and a command line's refusal (known by its output only) name their
    rule there alone."""
    found = CITED_RULE.match(message)
    return found.group(1) if found else None


def tracker_error(e: TrackerError) -> ApiError:
    """A refused action (exit 1) is 409 with its rule; bad usage (exit 2) is 400; an idempotency
    key sent before with another request is 422, as the IETF draft on the header asks; a full
    or read-only database is 503."""
    message = shorten_echoes(str(e))
    rule = e.rule if isinstance(e, RuleViolation) else cited_rule(message) if e.exit_code == 1 else None
    if isinstance(e, NotFound):
        return ApiError(404, message)
    if isinstance(e, KeyReused):
        return ApiError(422, message)
    if isinstance(e, Unauthenticated):
        return ApiError(401, message)
    if isinstance(e, Forbidden):
        return ApiError(403, message, rule)
    if isinstance(e, DatabaseFull):
        # The server's trouble, not the request's: 503 (the request may be sent again once
        # there is space), and the operator reads why in the log.
        log.error("%s", message)
        return ApiError(503, message)
    if str(e) == READ_ONLY:
        # The server's state, not the client's fault (it was 400): 503, counted with the
        # server's errors where an operator watches them. No Retry-After: a file's mode does
        # not mend by itself, and a client told to retry in seconds would only ask again.
        return ApiError(503, message)
    status = 400 if e.exit_code == 2 else 409
    return ApiError(status, message, rule)


# What a client is told while the database does not answer, and how long it is asked to wait.
OUTAGE = "the database does not answer; try again shortly"
RETRY_SECONDS = 5
# A SQLite error that says a table or a column is missing or a statement is wrong: the schema's
# or the code's fault, not an outage, answered 500 with its traceback in the log.
_NOT_AN_OUTAGE = ("no such table", "no such column", "has no column", "syntax error")


def outage_errors() -> tuple[type[Exception], ...]:
    """The errors of a database that does not answer (PostgreSQL stopped or out of reach, a
    SQLite file that cannot be opened or stays locked), as each layer raises them."""
    found: list[type[Exception]] = [sqlalchemy.exc.OperationalError, OperationalError, sqlite3.OperationalError]
    with contextlib.suppress(ImportError):
        import psycopg

        found.append(psycopg.OperationalError)
    return tuple(found)


def outage(e: Exception) -> str | None:
    """Why the database does not answer, as its driver says it in a line (the server's log
    shows it, with any password hidden), when `e` is an outage; None for any other error."""
    if not isinstance(e, outage_errors()):
        return None
    cause: BaseException = e
    # eventsourcing's error holds SQLAlchemy's (or is raised from it), which wraps the driver's.
    for _ in range(5):
        held = cause.args[0] if cause.args else None
        inner = getattr(cause, "orig", None) or cause.__cause__ or held
        if not isinstance(inner, BaseException) or inner is cause:
            break
        cause = inner
    line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    if isinstance(cause, sqlite3.Error) and any(said in line for said in _NOT_AN_OUTAGE):
        return None
    return line[:200]
