"""The JSON API described as an OpenAPI 3.1 document, served at /api/openapi.json: the read
routes with their query parameters, the registered actions (each a JSON Schema of its inputs,
told apart by "action", its rule IDs in its description), the command line, the Bearer token
and the one shape of every error: `{"error": MESSAGE, "rule": RULE_ID or null}`.

The action schemas come from the registry (`tracker.service.actions.ACTIONS`), so an action
added there is described here with nothing more to write; the response schemas are exact
where the answer has a fixed shape (errors, lists, the action list) and loose where it is the
open JSON of `--json` (a state, a report).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from tracker.server.commands import REMOTE
from tracker.server.keyed import HEADER
from tracker.service.actions import ACTIONS
from tracker.service.idempotency import MAX_KEY
from tracker.service.inputs import MAX_INT, MAX_ITEMS, MAX_TEXT, Action, Field

VERSION = "0.1.0"
REF = "#/components/schemas/"
# The statuses a route may answer with an Error body, and what each means here.
ERRORS = {
    "400": "Bad usage: a malformed body, parameter or input (exit status 2 of the command line).",
    "401": "No token where one is needed, or a token that is unknown, revoked or malformed.",
    "403": "The token's player may not do this (PL2).",
    "404": "No such campaign (or one the token may not read), event, override request or route.",
    "409": "Refused by a rule (the rule ID is given): nothing was recorded.",
    "413": "The request body is over 1 MiB.",
    "415": "The request body is not sent as JSON (Content-Type: application/json), or not in UTF-8.",
    "422": "The Idempotency-Key was sent before with a different request: nothing was recorded.",
    "429": "Too many failed token checks from this address: retry after Retry-After seconds.",
    "503": "The database does not answer (retry after Retry-After seconds), has no room left, or is read-only to "
    "the server (no Retry-After: its operator must make it writable): nothing was recorded.",
}
# The errors of a read of a campaign, of what records, and of what records from a JSON body
# with an idempotency key.
READ_ERRORS = ("400", "401", "404", "429", "503")
APPROVE_ERRORS = ("400", "401", "403", "404", "409", "413", "415", "429", "503")
BODY_ERRORS = ("400", "401", "403", "404", "409", "413", "415", "422", "429", "503")
RULE_ID = re.compile(r"\b[A-Z]{1,3}\d{1,2}\b")


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema`, or null (an input left out)."""
    return {"anyOf": [schema, {"type": "null"}]}


def text_list() -> dict[str, Any]:
    """A list of strings, or one string (units and zones: comma-separated)."""
    item = {"type": "string", "maxLength": MAX_TEXT}
    return {"anyOf": [item, {"type": "array", "items": item, "maxItems": MAX_ITEMS}]}


def field_schema(field: Field) -> dict[str, Any]:
    """The JSON Schema of one action input (see `Field.check`, which this mirrors)."""
    schema: dict[str, Any]
    if field.kind == "flag":
        schema = {"type": "boolean"}
    elif field.kind == "int":
        schema = {"type": "integer", "minimum": field.low, "maximum": field.high}
    elif field.kind == "text":
        schema = {"type": "string", "maxLength": MAX_TEXT}
    elif field.kind == "dice":
        # No die is below 1 (D1): a lower one is read (so the refusal can name it) but never
        # taken. The highest is the roll's number of faces, known only when it is rolled.
        die = {"type": "integer", "minimum": 1, "maximum": MAX_INT}
        dice = {"type": "array", "items": die, "maxItems": MAX_ITEMS}
        schema = {"anyOf": [dice, {"type": "string", "description": "dice as typed, e.g. '3,5,6'"}]}
    else:
        schema = text_list()
    if not field.required:
        schema = nullable(schema)
        if field.default is not None:
            schema["default"] = field.default
    if field.help:
        schema["description"] = field.help
    return schema


def schema_name(action: Action) -> str:
    """The component name of an action's schema (action names hold spaces)."""
    return "Action_" + re.sub(r"[^A-Za-z0-9]+", "_", action.name)


def action_schema(action: Action) -> dict[str, Any]:
    """The body of POST /api/campaigns/{name}/actions asking for `action`."""
    required = [f.name for f in action.fields if f.required]
    inputs: dict[str, Any] = {
        "type": "object",
        "properties": {f.name: field_schema(f) for f in action.fields},
        "additionalProperties": False,
    }
    if required:
        inputs["required"] = required
    rules = sorted(set(RULE_ID.findall(action.doc)))
    description = action.doc + (f" Rules: {', '.join(rules)}." if rules else "")
    return {
        "type": "object",
        "description": description,
        "properties": {
            "action": {"const": action.name},
            "inputs": inputs,
            "seen": nullable({"type": "integer", "minimum": 1, "maximum": MAX_INT})
            | {"description": "The last event the asker saw: refused if the campaign moved on since."},
        },
        "required": ["action", "inputs"] if required else ["action"],
        "additionalProperties": False,
    }


def components() -> dict[str, Any]:
    """The shared schemas: the error, the action listing and answer, the command's outcome."""
    loose = {"type": "object"}
    schemas: dict[str, Any] = {
        "Error": {
            "type": "object",
            "description": "Every error under /api: the message and the rule ID that refused, if a rule did.",
            "properties": {"error": {"type": "string"}, "rule": {"type": ["string", "null"]}},
            "required": ["error", "rule"],
            "additionalProperties": False,
        },
        "CommandOutcome": {
            "type": "object",
            "description": "The command line's exit status and output; with error and rule when it failed.",
            "properties": {
                "exit": {"type": "integer"},
                "stdout": {"type": "string"},
                "stderr": {"type": "string"},
                "error": {"type": "string"},
                "rule": {"type": ["string", "null"]},
            },
        },
        "ActionOutcome": {
            "type": "object",
            "description": "What an action recorded (events as `log --json` lists them) and what the game waits for.",
            "properties": {
                "action": {"type": "string"},
                "asked": {"type": "integer"},
                "events": {"type": "array", "items": loose},
                "pending": {"type": "array", "items": loose},
            },
            "required": ["action", "asked", "events", "pending"],
        },
        "ActionDescription": {
            "type": "object",
            "properties": {
                "action": {"type": "string"},
                "doc": {"type": "string"},
                "inputs": {"type": "array", "items": {"$ref": REF + "InputDescription"}},
            },
            "required": ["action", "doc", "inputs"],
            "additionalProperties": False,
        },
        "InputDescription": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "kind": {"enum": sorted({f.kind for a in ACTIONS.values() for f in a.fields})},
                "required": {"type": "boolean"},
                "default": {},
                "min": {"type": "integer"},
                "max": {"type": "integer"},
                "help": {"type": "string"},
            },
            "required": ["name", "kind", "required", "default", "help"],
            "additionalProperties": False,
        },
    }
    for action in ACTIONS.values():
        schemas[schema_name(action)] = action_schema(action)
    schemas["ActionRequest"] = {
        "oneOf": [{"$ref": REF + schema_name(a)} for a in ACTIONS.values()],
        "discriminator": {
            "propertyName": "action",
            "mapping": {a.name: REF + schema_name(a) for a in ACTIONS.values()},
        },
    }
    return schemas


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def answers(ok: dict[str, Any], errors: tuple[str, ...], error_schema: str = "Error") -> dict[str, Any]:
    """The responses of an operation: 200 with `ok`, and its errors."""
    out: dict[str, Any] = {"200": {"description": "Done.", "content": json_content(ok)}}
    for status in errors:
        out[status] = {"description": ERRORS[status], "content": json_content({"$ref": REF + error_schema})}
        if status in ("429", "503"):
            out[status]["headers"] = {"Retry-After": {"schema": {"type": "string"}}}
    return out


def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


NAME = {
    "name": "name",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
    "description": "The campaign's name (percent-encoded: it may hold '/').",
}
COUNT = {"type": "integer", "minimum": 1, "maximum": MAX_INT}
TEXT = {"type": "string", "maxLength": 200}
HEALTHY = {
    "type": "object",
    "properties": {"status": {"const": "ok"}, "ok": {"const": True}},
    "required": ["status", "ok"],
}
LOOSE_LIST = {"type": "array", "items": {"type": "object"}}


def read(summary: str, ok: dict[str, Any], *params: dict[str, Any], not_found: str | None = None) -> dict[str, Any]:
    """A GET of one campaign's data; `not_found`, what its 404 means when more than ERRORS says."""
    responses = answers(ok, READ_ERRORS)
    if not_found is not None:
        responses["404"]["description"] = not_found
    return {"get": {"summary": summary, "parameters": [NAME, *params], "responses": responses}}


def read_paths() -> dict[str, Any]:
    """The routes that read (each as the command line's `--json` answers)."""
    turn = query("turn", COUNT, "A turn number.")
    phase = query("phase", TEXT, "A phase of the turn (with turn).")
    return {
        "/campaigns/{name}/state": read(
            "The board (`state --json`), now or at a turn, phase or event.",
            {
                "type": "object",
                "properties": {
                    "campaign": {"type": "string"},
                    # T1: as `state --turn --json` (docs/json.md), with turn only.
                    "in_progress": {
                        "type": "boolean",
                        "description": "With turn only: true when that turn (with phase: that phase) is still "
                        "being played, so the board is the board now; false when it shows its end.",
                    },
                },
                "required": ["campaign"],
            },
            turn,
            phase,
            query("at", COUNT, "An event number (not with turn)."),
            not_found="No such campaign (or one the token may not read), no such event, or a turn or phase "
            "not played yet.",
        ),
        "/campaigns/{name}/pending": read("What the game waits for (`pending --json`).", LOOSE_LIST),
        "/campaigns/{name}/log": read(
            "The events (`log --json`), filtered.",
            LOOSE_LIST,
            turn,
            query("battle", COUNT, "A battle number."),
            query("tail", COUNT, "Only the last N events."),
            query("before", COUNT, "Only events numbered below SEQ (with tail: a page back)."),
            query("after", COUNT, "Only events numbered above SEQ."),
            phase,
            query("nation", TEXT, "A nation."),
            query("zone", TEXT, "A zone."),
            query("kind", TEXT, "An event kind."),
            not_found="No such campaign (or one the token may not read), a turn not played yet, or a battle "
            "the campaign never had.",
        ),
        "/campaigns/{name}/explain/{seq}": {
            "get": {
                "summary": "One event explained, with its rule (`explain --json`).",
                "parameters": [
                    NAME,
                    {"name": "seq", "in": "path", "required": True, "schema": COUNT},
                ],
                "responses": answers({"type": "object"}, READ_ERRORS),
            }
        },
        "/campaigns/{name}/report": read("A turn's report (`report --format json`).", {"type": "object"}, turn),
        "/campaigns/{name}/verify": read(
            "Every action re-refereed (`verify --json`).",
            {"type": "object"},
            query("head", TEXT, "The head a group agreed on: VERSION:HASH."),
        ),
        "/campaigns/{name}/overrides": read("The override requests (RK3).", LOOSE_LIST),
        "/campaigns/{name}/events/stream": {
            "get": {
                "summary": "Server-sent events: `recorded` with the last event's number, whenever it changes.",
                "parameters": [NAME],
                "responses": {
                    "200": {"description": "An endless stream.", "content": {"text/event-stream": {"schema": TEXT}}},
                    **{s: r for s, r in answers({}, READ_ERRORS).items() if s != "200"},
                },
            }
        },
    }


def write_paths() -> dict[str, Any]:
    """The routes that may record."""
    body = {"required": True, "content": json_content({"$ref": REF + "ActionRequest"})}
    command = {
        "type": "object",
        "properties": {
            "args": {
                "type": "array",
                "description": "The command line after `tracker`: its first word one of the commands a server runs.",
                "prefixItems": [{"enum": sorted(REMOTE)}],
                "items": {"type": "string", "maxLength": 2000},
                "minItems": 1,
                "maxItems": 100,
            },
            "campaign": {
                "type": ["string", "null"],
                "maxLength": 200,
                "description": "The campaign the command line is about, as `--campaign NAME` names it; `odds` of a "
                "position given by hand weighs it by this campaign's ruleset (its unit types and values) unless "
                "`--ruleset` names a built-in one.",
            },
            "columns": {"type": "integer", "minimum": 20, "maximum": 1000},
            "color_system": {"enum": ["standard", "256", "truecolor", "windows", None]},
            "no_color": {"type": "boolean"},
            "tty": {"type": "boolean"},
        },
        "required": ["args"],
        "additionalProperties": False,
    }
    outcome = {"$ref": REF + "CommandOutcome"}
    key = {
        "name": HEADER,
        "in": "header",
        "required": False,
        "description": "A repeat of the request with the same key is answered the first answer and records "
        "nothing; the key sent with a different request is refused (422).",
        "schema": {"type": "string", "pattern": "^[!-~]+$", "minLength": 1, "maxLength": MAX_KEY},
    }
    return {
        "/campaigns/{name}/actions": {
            "post": {
                "summary": "Perform one registered action (GET /api/actions lists them).",
                "parameters": [NAME, key],
                "requestBody": body,
                "responses": answers({"$ref": REF + "ActionOutcome"}, BODY_ERRORS),
            }
        },
        "/campaigns/{name}/overrides/{number}/approve": {
            "post": {
                "summary": "Approve override request NUMBER and run what it asked (RK3).",
                "parameters": [NAME, {"name": "number", "in": "path", "required": True, "schema": COUNT}],
                # No body, or an empty JSON object: the path names all it approves.
                "requestBody": {
                    "required": False,
                    "content": json_content({"type": "object", "additionalProperties": False}),
                },
                "responses": answers(outcome, APPROVE_ERRORS, "CommandOutcome"),
            }
        },
        "/command": {
            "post": {
                "summary": "Run a command line as the token's player (`tracker --server URL ...`).",
                "parameters": [key],
                "requestBody": {"required": True, "content": json_content(command)},
                "responses": answers(outcome, BODY_ERRORS, "CommandOutcome"),
            }
        },
    }


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the routes under /api (built once: the registry is fixed
    once the actions module is imported)."""
    paths: dict[str, Any] = {
        "/health": {"get": {"summary": "The API answers.", "security": [], "responses": answers(HEALTHY, ())}},
        "/openapi.json": {"get": {"summary": "This document.", "security": [], "responses": answers({}, ())}},
        "/campaigns": {
            "get": {
                "summary": "The campaigns the token may read (and the public ones).",
                "responses": answers({"type": "array", "items": {"type": "string"}}, ("401", "429")),
            }
        },
        "/actions": {
            "get": {
                "summary": "The registered actions and their inputs.",
                "security": [],
                "responses": answers({"type": "array", "items": {"$ref": REF + "ActionDescription"}}, ()),
            }
        },
        **read_paths(),
        **write_paths(),
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "TWTEA naval tracker league server",
            "version": VERSION,
            "description": "Reads need a token of the campaign's players, spectators or referee unless "
            "the campaign is public; whatever records needs the token in the Authorization header. "
            'Every error is {"error": MESSAGE, "rule": RULE_ID or null}.',
        },
        "servers": [{"url": "/api"}],
        # A token is optional: a public campaign is read without one.
        "security": [{"bearer": []}, {}],
        "paths": paths,
        "components": {
            "schemas": components(),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
