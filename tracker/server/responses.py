"""How the API answers: JSON as `--json` prints it, and errors as {error, rule} with the HTTP
status a tracker error maps to."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from starlette.responses import JSONResponse

from domain.errors import RuleViolation, TrackerError
from tracker.cli.params import shorten_echoes
from tracker.server.served import NotFound
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
    database is 503."""
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
    status = 400 if e.exit_code == 2 else 409
    return ApiError(status, message, rule)
