"""How the API answers: JSON as `--json` prints it, and errors as {error, rule} with the HTTP
status a tracker error maps to."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

from domain.errors import RuleViolation, TrackerError
from tracker.cli.params import shorten_echoes
from tracker.server.served import NotFound
from tracker.service.idempotency import KeyReused
from tracker.service.players import Forbidden, Unauthenticated


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
    """A refused action (exit 1) is 409 with its rule; bad usage (exit 2) is 400; an idempotency
    key sent before with another request is 422, as the IETF draft on the header asks."""
    rule = e.rule if isinstance(e, RuleViolation) else None
    message = shorten_echoes(str(e))
    if isinstance(e, NotFound):
        return ApiError(404, message)
    if isinstance(e, KeyReused):
        return ApiError(422, message)
    if isinstance(e, Unauthenticated):
        return ApiError(401, message)
    if isinstance(e, Forbidden):
        return ApiError(403, message, rule)
    status = 400 if e.exit_code == 2 else 409
    return ApiError(status, message, rule)
