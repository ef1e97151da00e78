"""What a request asks, read and checked: query parameters, the JSON body, the campaign the
URL names and a POSTed action's shape (400/404/413/415 as `ApiError` or `TooLarge` otherwise)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from domain.schema import control_character
from tracker.server.limits import MAX_BODY, BadBody, TooLarge, parse_json_object
from tracker.server.responses import ApiError

MAX_INT = 2**31 - 1


def int_param(request: Request, key: str, low: int = 1) -> int | None:
    text = request.query_params.get(key)
    if text is None or text == "":
        return None
    value = signed_number(text)
    if value is None:
        raise ApiError(400, f"{key} must be a whole number, got {text[:40]!r}")
    if not low <= value <= MAX_INT:
        raise ApiError(400, f"{key} must be between {low} and {MAX_INT}, got {text[:40]}")
    return value


def given_once(request: Request) -> None:
    """400 for a query parameter given more than once: `?at=5&at=6` answered the board at
    event 6 without a word, and which one was meant is not for the server to guess."""
    given = [key for key, _ in request.query_params.multi_items()]
    twice = sorted({key for key in given if given.count(key) > 1})
    if twice:
        raise ApiError(400, f"query parameter {twice[0][:40]!r} is given more than once")


def signed_number(text: str) -> int | None:
    """`text` as a whole number written in ASCII digits (a sign and surrounding spaces allowed),
    else None: `int()` also takes other scripts' digits and `1_000`, which no URL means."""
    digits = text.strip().removeprefix("-").removeprefix("+") if text.isascii() else ""
    if not digits.isdigit() or len(digits) > 40:
        return None
    return int(text)


def path_number(request: Request, key: str, what: str) -> int:
    """A number in the URL's path (an event, an override request): 400 naming `what` for
    anything else, not the 404 of a route that does not match."""
    text = request.path_params[key]
    try:
        value = int(text) if text.isascii() and text.isdigit() else -1
    except ValueError:
        value = -1
    if not 1 <= value <= MAX_INT:
        raise ApiError(400, f"{what} must be a whole number from 1 to {MAX_INT}, got {shorten(text)!r}")
    return value


def str_param(request: Request, key: str) -> str | None:
    value = request.query_params.get(key)
    if value is not None and len(value) > 200:
        raise ApiError(400, f"{key} is too long ({len(value)} characters)")
    return value or None


def phase_param(request: Request) -> str | None:
    """The `phase` of the query in any case, as the command line takes it: NAVAL_COMBAT too."""
    phase = str_param(request, "phase")
    return None if phase is None else phase.lower()


async def read_json(request: Request, text_only: bool = True) -> dict[str, Any]:
    """The request body as a JSON object, bounded in size and depth, its strings UTF-8 text
    (unless not `text_only`); 400/413/415 otherwise."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BODY:
            raise TooLarge()
    body = b"".join(chunks)
    if body.strip():
        check_json_type(request.headers.get("content-type"))
    try:
        return parse_json_object(body, text_only)
    except BadBody as e:
        raise ApiError(400, str(e)) from None


def check_json_type(given: str | None) -> None:
    """415 for a body not sent as JSON (application/json, or a `+json` type). A form or plain
    text is what a page on another site can make a browser post without asking first; no
    client of this API sends one, so none is read as an action."""
    media, *params = (part.strip().lower() for part in (given or "").split(";"))
    if media == "application/json" or (media.startswith("application/") and media.endswith("+json")):
        # JSON is UTF-8 (RFC 8259): a body said to be another charset would be read otherwise
        # than its sender meant, so it is refused rather than read as UTF-8.
        charset = next((p.split("=", 1)[1].strip().strip('"') for p in params if p.startswith("charset=")), None)
        if charset is not None and charset not in ("utf-8", "utf8"):
            raise ApiError(415, f"the request body must be JSON in UTF-8 (got charset={shorten(charset)!r})")
        return
    shown = f"got {shorten(given)!r}" if given else "got none"
    raise ApiError(415, f"the request body must be JSON sent with Content-Type: application/json ({shown})")


def shorten(text: str, most: int = 60) -> str:
    """`text` as an error message echoes it: its first `most` characters, then "..."."""
    return text if len(text) <= most else text[:most] + "..."


def campaign_name(request: Request) -> str:
    """The campaign the URL names; 404 for a name no campaign can have."""
    name = request.path_params["name"]
    if len(name) > 200:
        raise ApiError(404, "no such campaign (name over 200 characters)")
    return str(name)


def log_filters(request: Request) -> dict[str, Any]:
    """The filters of `tracker log` from the query."""
    return {
        "turn": int_param(request, "turn"),
        "battle": int_param(request, "battle"),
        "tail": int_param(request, "tail"),
        # A page of a long log, keyed on the event number (with `tail`, a page back).
        "before": int_param(request, "before"),
        "after": int_param(request, "after"),
        "phase": phase_param(request),
        "nation": str_param(request, "nation"),
        "zone": str_param(request, "zone"),
        "kind": str_param(request, "kind"),
    }


# The fields of a POSTed action's body.
ACTION_FIELDS = ("action", "inputs", "seen")


def unknown_fields(body: dict[str, Any], known: tuple[str, ...]) -> None:
    """400 naming a field of the body the route does not take: a misspelt `seen` was let
    through silently, and the action recorded without the check it asked for."""
    unknown = sorted(key for key in body if key not in known)
    if unknown:
        takes = f"fields: {', '.join(known)}" if known else "this route takes none"
        raise ApiError(400, f"unknown field {shorten(unknown[0])!r} in the request body ({takes})")


def asked_action(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """What a POSTed action asks (action, inputs, seen, campaign), checked in shape; 400 otherwise."""
    unknown_fields(body, ACTION_FIELDS)
    action, inputs, seen = body.get("action"), body.get("inputs", {}), body.get("seen")
    if not isinstance(action, str) or len(action) > 100:
        raise ApiError(400, "action must be the name of an action (GET /api/actions lists them)")
    if not isinstance(inputs, dict):
        raise ApiError(400, "inputs must be an object of named values")
    check_lines(action, inputs)
    if seen is not None and (not isinstance(seen, int) or isinstance(seen, bool) or not 1 <= seen <= MAX_INT):
        raise ApiError(400, f"seen must be an event number from 1 to {MAX_INT}")
    return {"action": action, "inputs": inputs, "seen": seen, "campaign": name}


def check_lines(action: str, inputs: dict[str, Any]) -> None:
    """400 for an input's text holding a line break, tab, escape or other control character,
    as the command line refuses it (`tracker.cli.params.Line`): a dice reference or a reason
    holding a line break forged a line of every player's `tracker log`."""
    for key, value in inputs.items():
        for text in value if isinstance(value, list) else [value]:
            bad = control_character(text) if isinstance(text, str) else None
            if bad is not None:
                said = f"{shorten(action)}: input {shorten(str(key))!r}"
                raise ApiError(400, f"{said} may not contain control characters such as {bad!r}")
